"""Kept so ``import calculator.compare`` still works: the module moved to :mod:`calculator.pricing.compare`."""

import sys

from calculator.pricing import compare as _moved

sys.modules[__name__] = _moved
