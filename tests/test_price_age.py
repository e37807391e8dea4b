"""``sheets --older-than DAYS``: the offers whose newest price version was read more than DAYS days before the
as-of date, in the table and in JSON, so a maintainer sees what to re-read.

Known dates: Lyceum's GLM-5.3 price (lyceum.yaml, pinned to Lyceum's article) was read on 2026-10-30, 33 days
before 2026-12-02; the test sheet's offer has two versions, the newer read on 2026-01-10 (326 days), the older
on 2025-01-10, so the newest version is the one that counts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from calculator.catalog.prices import DEFAULT_SHEETS_DIR
from calculator.cli import main

AS_OF = "2026-12-02"
OLD_SHEET = """\
schema_version: 1
provider: acme
name: Acme
currency: USD
offers:
  - kind: serverless
    model: acme-model
    open_weights: false
    versions:
      - effective: 2025-01-01
        source: {url: "https://acme.example/pricing", read: 2025-01-10}
        prices: {input: 1.00, output: 2.00}
      - effective: 2026-01-01
        source: {url: "https://acme.example/pricing", read: 2026-01-10}
        prices: {input: 0.90, output: 1.80}
"""


@pytest.fixture
def sheets(tmp_path: Path) -> Path:
    folder = tmp_path / "sheets"
    folder.mkdir()
    shutil.copyfile(DEFAULT_SHEETS_DIR / "lyceum.yaml", folder / "lyceum.yaml")
    (folder / "acme.yaml").write_text(OLD_SHEET)
    return folder


def _ids(capsys: pytest.CaptureFixture[str], sheets: Path, *argv: str) -> dict[str, dict[str, object]]:
    assert main(["sheets", "--sheets", str(sheets), "--as-of", AS_OF, "--json", *argv]) == 0
    return {f"{r['provider']}/{r['id']}": r for r in json.loads(capsys.readouterr().out)}


def test_older_than_lists_the_offers_whose_newest_version_was_read_longer_ago(
    capsys: pytest.CaptureFixture[str], sheets: Path
) -> None:
    assert set(_ids(capsys, sheets, "--older-than", "32")) == {"lyceum/glm-5.3", "acme/acme-model"}
    assert set(_ids(capsys, sheets, "--older-than", "33")) == {"acme/acme-model"}
    rows = _ids(capsys, sheets, "--older-than", "325")
    assert rows["acme/acme-model"]["newest_read"] == "2026-01-10"
    assert rows["acme/acme-model"]["newest_age_days"] == 326
    assert _ids(capsys, sheets, "--older-than", "326") == {}


def test_older_than_in_the_table_says_what_it_kept(capsys: pytest.CaptureFixture[str], sheets: Path) -> None:
    assert main(["sheets", "--sheets", str(sheets), "--as-of", AS_OF, "--older-than", "100"]) == 0
    out = capsys.readouterr().out
    assert "acme-model" in out and "GLM-5.3" not in out
    assert "1 offers, prices in force on 2026-12-02 whose newest version was read more than 100 days before then" in out


def test_every_row_says_when_its_newest_version_was_read(capsys: pytest.CaptureFixture[str], sheets: Path) -> None:
    rows = _ids(capsys, sheets)
    assert rows["lyceum/glm-5.3"]["newest_read"] == "2026-10-30" and rows["lyceum/glm-5.3"]["newest_age_days"] == 33


@pytest.mark.parametrize("bad", ["-1", "ten", "1.5"])
def test_older_than_needs_a_whole_number_of_days(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    assert main(["sheets", "--older-than", bad]) == 2
    assert "--older-than" in capsys.readouterr().err
