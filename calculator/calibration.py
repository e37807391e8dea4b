"""Kept so ``import calculator.calibration`` still works: the module moved to :mod:`calculator.capacity.calibration`."""

import sys

from calculator.capacity import calibration as _moved

sys.modules[__name__] = _moved
