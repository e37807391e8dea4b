"""Kept so ``import calculator.prices`` still works: the module moved to :mod:`calculator.catalog.prices`."""

import sys

from calculator.catalog import prices as _moved

sys.modules[__name__] = _moved
