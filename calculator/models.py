"""Kept so ``import calculator.models`` still works: the module moved to :mod:`calculator.catalog.models`."""

import sys

from calculator.catalog import models as _moved

sys.modules[__name__] = _moved
