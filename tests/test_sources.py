"""Every source a user is shown can be opened: a URL, or a named public document with the date it was read.

The command line, the CSV and the PDF print a price version's ``source.url`` or else its ``document``; a
document that names a file only this project has (the seed article's file name) cannot be opened. The seed's
GLM-5.3 price names the article instead: Lyceum's "Why engine benchmarks disagree", which dates its prices
("prices read 30 October 2026").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from calculator.catalog.datafile import DATA_DIR, parse_yaml
from calculator.cli import main

LOCAL_FILE = re.compile(r"\b[0-9a-f]{3}_[0-9a-f]{16}\.txt\b|\bseed article\b", re.IGNORECASE)


def _sources(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        source = node.get("source")
        if isinstance(source, dict) and "read" in source:
            yield where, source
        for key, value in node.items():
            yield from _sources(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _sources(value, f"{where}[{i}]")


def _all_sources() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(DATA_DIR.rglob("*.yaml")):
        found += list(_sources(parse_yaml(path.read_text(encoding="utf-8"), str(path)), path.name))
    return found


def test_every_bundled_source_is_a_url_or_a_named_public_document() -> None:
    sources = _all_sources()
    assert len(sources) > 300  # price versions, retirements, GPU and model specs, measurements
    for where, source in sources:
        url, document = source.get("url"), source.get("document")
        assert url is None or re.match(r"https?://\S+$", url), f"{where}: {url!r} is not a URL a user can open"
        assert url or document, f"{where}: no URL and no document"
        assert not LOCAL_FILE.search(str(document or "")), f"{where}: {document!r} names a file only we have"
        assert source["read"], f"{where}: no read date"


def test_the_seed_price_names_lyceums_article(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "--preset", "coding-agent", "--as-of", "2026-12-02"])
    out = capsys.readouterr().out
    assert code == 0
    (line,) = [line for line in out.splitlines() if "serverless: lyceum/glm-5.3" in line]
    assert 'Lyceum, "Why engine benchmarks disagree"' in line and "on 2026-10-30" in line
    assert not LOCAL_FILE.search(out)


def test_the_seed_price_source_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "--preset", "coding-agent", "--as-of", "2026-12-02", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    serverless = next(o for o in data["options"] if o["option"] == "serverless")
    (version,) = serverless["price_versions"]
    assert version["source"].startswith('Lyceum, "Why engine benchmarks disagree" (article by Lyceum Technology')
    assert version["read"] == "2026-10-30"


def test_no_shipped_text_names_the_seed_file() -> None:
    root = Path(__file__).parents[1]
    shipped = [*root.joinpath("calculator").rglob("*.py"), *root.joinpath("calculator").rglob("*.yaml")]
    assert not [p for p in shipped if "000_6560d0b8d7eae066" in p.read_text(encoding="utf-8")]
