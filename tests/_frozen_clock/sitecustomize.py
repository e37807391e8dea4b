"""Started by every Python child process of the test run (``tests/conftest.py`` puts this folder on
PYTHONPATH): it travels to the frozen instant the run itself sees, so a command or server started by a test
dates its prices as the test does."""

from __future__ import annotations

import datetime as _dt
import os as _os

_now = _os.environ.get("INFERENCE_CALC_TEST_NOW")
if _now:
    import time_machine as _time_machine

    _time_machine.travel(_dt.datetime.fromisoformat(_now), tick=True).start()
