"""The calculator's own records (Replay's download, ``bench --out``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from calculator.catalog.datafile import DataFileError
from calculator.catalog.measurements import MeasurementFile, ThroughputRecord
from calculator.measure.formats.reading import Doc


def own_records(doc: Doc, name: str, overrides: Mapping[str, Any]) -> list[ThroughputRecord]:
    try:
        document = MeasurementFile.model_validate(doc.data)
    except ValidationError as exc:
        raise DataFileError(
            [f"{name}: {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)]
        ) from None
    given = {k: v for k, v in overrides.items() if v is not None}
    if not given:
        return list(document.records)
    try:
        return [ThroughputRecord.model_validate({**r.model_dump(), **given}) for r in document.records]
    except ValidationError as exc:
        raise DataFileError(
            [f"{name}: {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)]
        ) from None
