"""The day every test runs on.

Prices start and retire on dates and every price shows its age, so a test that read the machine's clock would
change its answer on the day a price retires. The whole run (and every command or server it starts) sees this
day instead: ``tests/conftest.py`` freezes the clock at it before collection, and ``_frozen_clock/`` carries
the same travel into child processes. Time still passes from there (``tick``), so timeouts and servers work.
"""

from __future__ import annotations

import datetime as dt

TODAY = dt.date(2026, 12, 2)
"""The frozen day: the first day after Gemini 2.5 retired (2026-12-01), as the bundled sheets stood."""

NOW = dt.datetime(TODAY.year, TODAY.month, TODAY.day, 12, 0, tzinfo=dt.UTC)
"""Noon UTC on that day, so no time zone moves the date."""

ENV = "INFERENCE_CALC_TEST_NOW"
"""Set for child processes: the ISO instant their ``sitecustomize`` travels to."""
