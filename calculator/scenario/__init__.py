"""The scenario: the one object every page and command reads and writes.

``calculator.scenario`` was one module before the package was layered; its public names are
re-exported here so ``from calculator.scenario import Scenario`` keeps working.
"""

from calculator.scenario.inputs import *  # noqa: F403
from calculator.scenario.inputs import __all__ as _inputs_all
from calculator.scenario.model import *  # noqa: F403
from calculator.scenario.model import __all__ as _model_all

__all__ = [*_inputs_all, *_model_all]
