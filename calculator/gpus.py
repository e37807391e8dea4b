"""Kept so ``import calculator.gpus`` still works: the module moved to :mod:`calculator.catalog.gpus`."""

import sys

from calculator.catalog import gpus as _moved

sys.modules[__name__] = _moved
