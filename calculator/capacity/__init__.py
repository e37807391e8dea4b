"""How many GPUs: memory fit, the roofline estimate, sizing from measured records, calibration.

``calculator.capacity`` was one module before the package was layered; its public names are
re-exported here so ``from calculator.capacity import LatencyTarget`` keeps working.
"""

from calculator.capacity.sizing import *  # noqa: F403
from calculator.capacity.sizing import __all__ as __all__
