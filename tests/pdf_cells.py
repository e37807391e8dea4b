"""What the one-page PDF writes, read back in tests: the text each cell is given and the axis titles of each
chart drawn into it, recorded as the PDF is made (tests/test_pdf_layout.py reads the PDF itself with pdfplumber,
for where each word landed)."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

import pytest

from calculator.present import report


@dataclass
class PdfCells:
    written: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(self.written)


def record_pdf(monkeypatch: pytest.MonkeyPatch, charts: bool = True) -> PdfCells:
    """Record every cell's text; with ``charts``, also the charts' axis titles, each chart drawn as a blank
    picture (its picture is not under test, and rendering it takes seconds)."""
    cells = PdfCells()
    cell, multi_cell = report._Pdf.cell, report._Pdf.multi_cell

    def record_cell(self: Any, *args: Any, **kwargs: Any) -> Any:
        cells.written.append(str(kwargs.get("text", args[2] if len(args) > 2 else "")))
        return cell(self, *args, **kwargs)

    def record_multi_cell(self: Any, *args: Any, **kwargs: Any) -> Any:
        cells.written.append(str(kwargs.get("text", args[2] if len(args) > 2 else "")))
        return multi_cell(self, *args, **kwargs)

    def record_png(chart: Any, scale: float = 2.0) -> io.BytesIO:
        from PIL import Image

        spec = chart.to_dict()
        for layer in [spec, *spec.get("layer", [])]:
            for axis in ("x", "y"):
                title = layer.get("encoding", {}).get(axis, {}).get("title")
                if isinstance(title, str):
                    cells.titles.append(title)
        out = io.BytesIO()
        Image.new("RGB", (2, 2), "white").save(out, format="PNG")
        out.seek(0)
        return out

    monkeypatch.setattr(report._Pdf, "cell", record_cell)
    monkeypatch.setattr(report._Pdf, "multi_cell", record_multi_cell)
    if charts:
        monkeypatch.setattr(report, "_png", record_png)
    return cells
