"""Old import path: the deployment search lives in :mod:`calculator.pricing.deployments` (it prices every
configuration as Compare does, and ``offer: cheapest`` is resolved with it)."""

from calculator.pricing.deployments import *  # noqa: F403
from calculator.pricing.deployments import __all__ as __all__
