"""``compare ... --pdf FILE`` (issue 25, part 3): the Compare page's one-page summary from the command line,
written whole or not at all, like ``--save``."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pdfplumber
import pytest

from calculator.cli import main
from calculator.present.report import summary_pdf
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import Catalogs, compare
from calculator.scenario.model import load_preset

from .clock import TODAY

AS_OF = dt.date(2026, 10, 30)
SEED = ["compare", "--preset", "coding-agent", "--as-of", AS_OF.isoformat()]


def _text(data: bytes) -> str:
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        assert len(pdf.pages) == 1
        return str(pdf.pages[0].extract_text())


def test_compare_pdf_writes_the_pages_one_page_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], catalogs: Catalogs
) -> None:
    path = tmp_path / "summary.pdf"
    assert main([*SEED, "--pdf", str(path)]) == 0
    assert f"One-page summary (PDF): {path}" in capsys.readouterr().out
    written = path.read_bytes()
    assert written.startswith(b"%PDF")
    text = _text(written)
    # the seed's coding agent at 1,000,000 turns a month: $9,680 with the prefix reused, $30,200 without
    assert "LLM inference cost: Coding agent (the seed's turn)" in text
    assert "$9,680.00 a month" in text and "$30,200.00 a month" in text
    # the same summary the Compare page's download writes for the same scenario
    seed, _ = with_cheapest_offers(load_preset("coding-agent").model_copy(update={"as_of": AS_OF}), catalogs)
    assert _text(summary_pdf(compare(seed, catalogs), catalogs, generated=TODAY)) == text


def test_compare_pdf_is_named_after_what_changed(tmp_path: Path) -> None:
    path = tmp_path / "changed.pdf"
    assert main([*SEED, "--input-tokens", "3000", "--pdf", str(path)]) == 0
    text = _text(path.read_bytes())
    assert "LLM inference cost: Started from Coding agent (the seed's turn)" in text
    assert "200 developers" not in text


def test_a_failed_pdf_write_leaves_the_old_file_and_no_temporary_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "summary.pdf"
    path.write_bytes(b"the summary from yesterday")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("calculator.catalog.datafile.os.fsync", disk_full)
    assert main([*SEED, "--pdf", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "--pdf" in err and "No space left on device" in err and len(err.splitlines()) == 1
    assert path.read_bytes() == b"the summary from yesterday"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.pdf"]


def test_an_empty_pdf_name_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SEED, "--pdf", ""]) == 2
    assert "--pdf" in capsys.readouterr().err
