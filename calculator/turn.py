"""Kept so ``import calculator.turn`` still works: the module moved to :mod:`calculator.pricing.turn`."""

import sys

from calculator.pricing import turn as _moved

sys.modules[__name__] = _moved
