"""The ``inference-calc`` command line: one module per command group.

``calculator.cli.main`` is the entry point (``python -m calculator``, the ``inference-calc`` script).
"""

import os

# numpy's BLAS starts a thread per core when it is imported, spinning about 100 ms of CPU before any work;
# the command line's arrays are element-wise and small, so it runs single-threaded unless the user's
# environment says otherwise. Here, before the commands import numpy (a process that imported it already,
# such as a test, keeps its threads).
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

from calculator.cli.parser import main  # noqa: E402 - after the thread settings above

__all__ = ["main"]
