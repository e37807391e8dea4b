"""Whether the models read their fields' docstrings as descriptions.

pydantic reads and parses a model's source when the class is made (``use_attribute_docstrings``): about
90 ms of every command's start, for descriptions only the JSON Schemas carry. So the docstrings are read
only in the interpreter the ``schemas`` command starts to write those files (``CALCULATOR_FIELD_DOCS=1``).
"""

from __future__ import annotations

import os

__all__ = ["ENV", "FIELD_DOCS"]

ENV = "CALCULATOR_FIELD_DOCS"
FIELD_DOCS: bool = os.environ.get(ENV) == "1"
