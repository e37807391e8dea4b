"""The assumptions table, as the Compare page imports it after its first costs: the frame lives in
:mod:`calculator.present.assumptions`, where ``compare --pdf`` reads it too."""

from __future__ import annotations

from calculator.present.assumptions import COLUMNS, assumptions_frame, record_link, record_origin, record_source

__all__ = ["COLUMNS", "assumptions_frame", "record_link", "record_origin", "record_source"]
