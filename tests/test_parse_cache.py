"""The per-user cache of the bundled catalogues' parsed YAML (calculator/catalog/parse_cache.py, issue 12 part 1).

It may only save time: an edited file is read afresh, the data it gives back is the data a parse gives
(type for type), a folder or entry someone else could have written is never read, and any failure is a
silent parse.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from calculator.catalog import datafile, parse_cache
from calculator.catalog.datafile import DATA_DIR, parse_yaml
from calculator.catalog.prices import ServerlessOffer, load_price_sheet, load_price_sheets
from tests.typed import typed

pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="the cache holds what libyaml reads")

SEED_INPUT = "input: 1.40"
"""Lyceum's GLM-5.3 input price since 2026-10-05 (the seed article: $1.40 per million input tokens)."""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(parse_cache.CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled Lyceum sheet, in a folder the loader takes for the package's data."""
    data = tmp_path / "data"
    (data / "price_sheets").mkdir(parents=True)
    shutil.copy(DATA_DIR / "price_sheets" / "lyceum.yaml", data / "price_sheets")
    monkeypatch.setattr(datafile, "DATA_DIR", data.resolve())
    return data / "price_sheets" / "lyceum.yaml"


def _glm_input(path: Path) -> Decimal:
    sheet = load_price_sheet(path)
    (offer,) = [o for o in sheet.offers if isinstance(o, ServerlessOffer) and o.model == "GLM-5.3"]
    return Decimal(str(offer.version_at(dt.date(2026, 10, 30)).prices.input))


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Records each libyaml parse of a bundled file (a cache miss)."""
    seen: list[Path] = []
    parse = datafile._libyaml

    def counting(text: str, path: Path, compose: bool = False) -> Any:
        if not compose:
            seen.append(Path(path))
        return parse(text, path, compose)

    monkeypatch.setattr(datafile, "_libyaml", counting)
    return seen


def test_an_unchanged_file_is_read_from_the_cache_and_an_edited_one_afresh(
    cache: Path, bundled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = _parses(monkeypatch)
    assert _glm_input(bundled) == Decimal("1.40")
    assert len(parses) == 1 and len(list(cache.glob("*.json"))) == 1
    assert _glm_input(bundled) == Decimal("1.40")
    assert len(parses) == 1  # the second read came from the cache
    text = bundled.read_text(encoding="utf-8")
    assert text.count(SEED_INPUT) == 1
    # same length, so size alone could not tell the files apart; the modification time may not move either
    stat = bundled.stat()
    bundled.write_text(text.replace(SEED_INPUT, "input: 1.55"), encoding="utf-8")
    os.utime(bundled, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _glm_input(bundled) == Decimal("1.55")
    assert len(parses) == 2
    assert _glm_input(bundled) == Decimal("1.55")
    assert len(parses) == 2  # the edited file's data replaced the old entry
    assert len(list(cache.glob("*.json"))) == 1


def test_an_edit_that_breaks_a_cached_file_is_reported_as_before(cache: Path, bundled: Path) -> None:
    _glm_input(bundled)
    text = bundled.read_text(encoding="utf-8")
    bundled.write_text(text.replace(SEED_INPUT, "input: -1.40"), encoding="utf-8")
    with pytest.raises(datafile.DataFileError, match=r"lyceum\.yaml:\d+: offers\.\d+\[GLM-5\.3\].*input"):
        load_price_sheet(bundled)


BUNDLED = sorted(p for p in DATA_DIR.rglob("*.yaml") if p.stat().st_size <= datafile.MAX_YAML_CHARS)


def test_every_bundled_file_comes_back_from_the_cache_exactly_as_parsed(cache: Path) -> None:
    assert len(BUNDLED) > 20
    for path in BUNDLED:
        text = path.read_text(encoding="utf-8")
        parsed = datafile._libyaml(text, path)
        assert parsed is not None, path
        parse_cache.store(path, text, parsed)
        hit, data = parse_cache.cached(path, text)
        assert hit, path
        assert typed(data) == typed(parsed) == typed(parse_yaml(text, str(path))), path


def test_dates_and_timestamps_keep_their_type(cache: Path) -> None:
    data = {
        "effective": dt.date(2026, 10, 5),
        "at": dt.datetime(2026, 10, 5, 9, 30, tzinfo=dt.UTC),
        "n": [1, 1.0, True],
    }
    parse_cache.store(Path("/x.yaml"), "t", data)
    assert typed(parse_cache.cached(Path("/x.yaml"), "t")[1]) == typed(data)


@pytest.mark.parametrize(
    "data",
    [{1: "a"}, {"k": {b"binary"}}, {"k": b"\x00"}, {"\x00date": "2026-10-05"}],
    ids=["number key", "set", "binary", "key like a date marker"],
)
def test_data_json_cannot_carry_exactly_is_not_cached(cache: Path, data: Any) -> None:
    parse_cache.store(Path("/x.yaml"), "t", data)
    assert parse_cache.cached(Path("/x.yaml"), "t") == (False, None)


def test_an_entry_for_other_text_is_not_used(cache: Path) -> None:
    parse_cache.store(Path("/x.yaml"), "a: 1\n", {"a": 1})
    assert parse_cache.cached(Path("/x.yaml"), "a: 2\n") == (False, None)
    assert parse_cache.cached(Path("/y.yaml"), "a: 1\n") == (False, None)
    assert parse_cache.cached(Path("/x.yaml"), "a: 1\n") == (True, {"a": 1})


def test_a_folder_or_entry_others_could_write_is_never_read(cache: Path) -> None:
    parse_cache.store(Path("/x.yaml"), "t", {"a": 1})
    (entry,) = cache.glob("*.json")
    assert entry.stat().st_mode & 0o077 == 0  # written for this user only
    entry.chmod(0o622)
    assert parse_cache.cached(Path("/x.yaml"), "t") == (False, None)
    entry.chmod(0o600)
    cache.chmod(0o777)
    assert parse_cache.cached(Path("/x.yaml"), "t") == (False, None)
    parse_cache.store(Path("/x.yaml"), "t", {"a": 2})  # nor written to
    cache.chmod(0o700)
    assert parse_cache.cached(Path("/x.yaml"), "t") == (True, {"a": 1})


def test_a_link_in_place_of_an_entry_or_the_folder_is_not_followed(tmp_path: Path, cache: Path) -> None:
    parse_cache.store(Path("/x.yaml"), "t", {"a": 1})
    (entry,) = cache.glob("*.json")
    elsewhere = tmp_path / "elsewhere.json"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    assert parse_cache.cached(Path("/x.yaml"), "t") == (False, None)
    entry.unlink()
    elsewhere.rename(entry)
    moved = tmp_path / "real-cache"
    cache.rename(moved)
    cache.symlink_to(moved)
    assert parse_cache.cached(Path("/x.yaml"), "t") == (False, None)


def test_a_broken_entry_is_a_miss_and_loading_still_works(cache: Path, bundled: Path) -> None:
    _glm_input(bundled)
    (entry,) = cache.glob("*.json")
    for broken in (b"", b"{not json", b'{"stamp": 1}', b"\xff\xfe"):
        entry.write_bytes(broken)
        assert parse_cache.cached(bundled.resolve(), bundled.read_text(encoding="utf-8")) == (False, None)
        assert _glm_input(bundled) == Decimal("1.40")


def test_an_unusable_cache_location_or_none_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(parse_cache.CACHE_ENV, "")
    assert parse_cache.cache_dir() is None
    uncached = load_price_sheets()
    monkeypatch.setenv(parse_cache.CACHE_ENV, str(blocker / "cache"))  # its parent is a file: cannot be made
    assert load_price_sheets() == uncached
    monkeypatch.setenv(parse_cache.CACHE_ENV, "")
    parse_cache.store(Path("/x.yaml"), "t", {"a": 1})
    assert parse_cache.cached(Path("/x.yaml"), "t") == (False, None)


def test_the_default_folder_is_the_users_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(parse_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert parse_cache.cache_dir() == str(tmp_path / "inference-calc")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as the XDG spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert parse_cache.cache_dir() == str(tmp_path / "home" / ".cache" / "inference-calc")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # no home folder can be found
    assert parse_cache.cache_dir() is None
