"""The ``inference-calc`` command line: one module per command group.

``calculator.cli.main`` is the entry point (``python -m calculator``, the ``inference-calc`` script).
"""

from calculator.cli.parser import main

__all__ = ["main"]
