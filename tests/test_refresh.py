"""``sheets refresh --from FILE|URL``: recorded copies of genai-prices' data.json and LiteLLM's cost map
(tests/fixtures/price_lists/, sources in the README there), read from a file and from a local HTTP server,
against copies of our sheets in tmp_path.

Known figures: OpenAI lists gpt-4.1 at $2.00 input / $0.50 cached input / $8.00 output per 1M tokens, and
both lists agree (LiteLLM per token: 2e-06, 5e-07, 8e-06); our copy of the sheet is altered to $2.50 input
so that a refresh has something to propose.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("genai_prices")

from genai_prices.types import TieredPrices

from calculator.catalog import genai_prices as genai_import
from calculator.catalog.datafile import DataFileError
from calculator.catalog.price_lists import parse_list, read_list, refresh
from calculator.catalog.prices import DEFAULT_SHEETS_DIR, load_price_sheets
from calculator.cli import main
from calculator.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "price_lists"
GENAI = FIXTURES / "genai_prices_data.json"
LITELLM = FIXTURES / "litellm_model_prices.json"
OPENAI_SHEET = Path(__file__).parent / "fixtures" / "price_sheets" / "openai.yaml"
READ = dt.date(2026, 11, 30)
LAUNCH = "        prices:\n          input: 2.00\n          cached_input: 0.50\n          output: 8.00\n"


def _copy_sheets(folder: Path, only: tuple[str, ...] = ()) -> Path:
    """The bundled sheets, with OpenAI's as recorded in tests/fixtures/price_sheets (its figures fixed)."""
    shutil.copytree(DEFAULT_SHEETS_DIR, folder, ignore=None if not only else _keep(only))
    path = folder / "openai.yaml"
    shutil.copyfile(OPENAI_SHEET, path)
    text = path.read_text()
    assert text.count(LAUNCH) == 1
    path.write_text(text.replace(LAUNCH, LAUNCH.replace("input: 2.00", "input: 2.50")))
    return folder


def _keep(names: tuple[str, ...]) -> Callable[[str, list[str]], list[str]]:
    return lambda _dir, files: [f for f in files if f.endswith(".yaml") and f not in names]


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def sheets(tmp_path: Path) -> Path:
    return _copy_sheets(tmp_path / "sheets")


def _list_copy(tmp_path: Path, source: Path, day: dt.date = READ) -> Path:
    """The fixture with its modification time set to noon UTC on ``day``: a file's timestamp is never the
    list's date, so every test that reads it gives the date (``--read-on``)."""
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    noon = dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC).timestamp()
    os.utime(path, (noon, noon))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["sheets", "refresh", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- reading both formats ------------------------------------------------------------------------------


def test_litellm_prices_per_token_become_prices_per_million() -> None:
    price_list = parse_list(read_list(str(LITELLM), READ))
    assert price_list.format == "litellm" and price_list.name == "LiteLLM model cost map"
    openai = price_list.data.provider("openai")
    assert openai is not None
    gpt41 = next(m for m in openai.models if m.id == "gpt-4.1")
    prices = gpt41.get_prices(dt.datetime(2026, 11, 30, tzinfo=dt.UTC))
    assert (prices.input_mtok, prices.cache_read_mtok, prices.output_mtok) == (Decimal(2), Decimal("0.5"), Decimal(8))
    batch = gpt41.get_prices(dt.datetime(2026, 11, 30, tzinfo=dt.UTC), {"processing": "batch"})
    assert (batch.input_mtok, batch.output_mtok) == (Decimal(1), Decimal(4))
    # the embedding and the image model are not priced per token; mistral and bedrock have no sheet here
    assert price_list.not_token_priced >= 2
    assert set(price_list.other_providers) >= {"mistral", "bedrock"}


def test_litellm_long_context_prices_become_a_tier() -> None:
    google = parse_list(read_list(str(LITELLM), READ)).data.provider("google")
    assert google is not None
    pro = next(m for m in google.models if m.id == "gemini-2.5-pro")  # "gemini/gemini-2.5-pro" in the map
    tiered = pro.get_prices(dt.datetime(2026, 11, 30, tzinfo=dt.UTC)).input_mtok
    assert isinstance(tiered, TieredPrices)
    assert tiered.base == Decimal("1.25")
    assert [(t.start, t.price) for t in tiered.tiers] == [(200_000, Decimal("2.5"))]


def test_genai_data_json_is_told_from_litellm_by_its_content(tmp_path: Path) -> None:
    renamed = tmp_path / "model_prices_and_context_window.json"  # a misleading name changes nothing
    shutil.copyfile(GENAI, renamed)
    price_list = parse_list(read_list(str(renamed), READ))
    assert price_list.format == "genai-prices"
    assert {p.id for p in price_list.data.providers} >= {"openai", "anthropic", "mistral"}


# --- proposals -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "document"),
    [
        (LITELLM, "LiteLLM model cost map (file litellm_model_prices.json)"),
        (GENAI, "genai-prices data.json (file genai_prices_data.json)"),
    ],
)
def test_a_changed_price_is_proposed_as_a_dated_version_citing_the_list(
    sheets: Path, tmp_path: Path, fixture: Path, document: str
) -> None:
    price_list = parse_list(read_list(str(_list_copy(tmp_path, fixture)), READ))
    assert (price_list.text.read, price_list.text.read_basis) == (READ, "given")
    result = refresh(load_price_sheets(sheets), price_list, providers=["openai"])
    (entry,) = [e for e in result.proposals if e.offer_id == "gpt-4.1"]
    assert [(c.field, c.old, c.new) for c in entry.changes] == [("input", Decimal("2.50"), Decimal(2))]
    assert entry.writable and entry.write_effective == READ
    assert entry.proposal is not None
    source = entry.proposal.version.source
    assert (source.document, source.url, source.read) == (document, None, READ)
    assert "gpt-4.1" not in {e.offer_id for e in result.same}


def test_a_batch_price_litellm_leaves_out_keeps_ours(sheets: Path) -> None:
    """LiteLLM gives Anthropic's 5-minute cache write a batch price (half) but not the 1-hour one: the
    missing price is unknown, not full price, so cache writes stay batch-discounted as our sheet says.
    For gpt-5 it gives a batch cached-input price, half of 1.25e-07, which our sheet already applies
    (OpenAI's Batch table halves cached input too): nothing to propose."""
    result = refresh(load_price_sheets(sheets), parse_list(read_list(str(LITELLM), READ)))
    assert {"claude-haiku-4-5", "claude-opus-4-6", "claude-sonnet-4-6", "gpt-5"} <= {e.offer_id for e in result.same}
    assert not [e for e in result.proposals if e.offer_id == "gpt-5"]


def test_a_batch_price_the_sheet_lacks_is_proposed(sheets: Path) -> None:
    """The same list against a sheet whose gpt-5 batch discount leaves cached input out: the list's batch
    cached-input price (half the cached price) is proposed, for review."""
    sheet = sheets / "openai.yaml"
    text = sheet.read_text()
    before = "batch_applies_to: [input, cached_input, output]"  # gpt-5's version is the sheet's first
    assert before in text
    sheet.write_text(text.replace(before, "batch_applies_to: [input, output]", 1))
    result = refresh(load_price_sheets(sheets), parse_list(read_list(str(LITELLM), READ)))
    (gpt5,) = [e for e in result.proposals if e.offer_id == "gpt-5"]
    assert [(c.field, c.old, c.new) for c in gpt5.changes] == [
        ("batch_applies_to", "input,output", "input,cached_input,output")
    ]


def test_one_cache_write_price_stands_for_the_shortest_lifetime_only(sheets: Path) -> None:
    """genai-prices' data.json gives Claude Sonnet 4.6 one cache-write price ($3.75, Anthropic's 5-minute
    write, 1.25x $3 input); Anthropic's 1-hour write is $6 (2x input). The one price must not replace it."""
    result = refresh(load_price_sheets(sheets), parse_list(read_list(str(GENAI), READ)), providers=["anthropic"])
    (sonnet,) = [e for e in result.report.entries if e.offer_id == "claude-sonnet-4-6"]
    assert sonnet.status == "same" and sonnet.proposal is not None
    assert sonnet.proposal.version.prices.cache_write == {"5m": Decimal("3.75"), "1h": Decimal(6)}
    assert "cache_write.1h" in sonnet.proposal.kept


def test_read_on_wins_over_the_file_modification_time(tmp_path: Path) -> None:
    text = read_list(str(_list_copy(tmp_path, LITELLM)), dt.date(2026, 12, 2))
    assert (text.read, text.read_basis) == (dt.date(2026, 12, 2), "given")


def test_list_models_no_offer_matches_are_summarised_not_proposed(
    sheets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(
        capsys,
        "--from",
        str(_list_copy(tmp_path, LITELLM)),
        "--sheets",
        str(sheets),
        "--json",
        "--read-on",
        "2026-11-30",
    )
    assert code == 0
    data = json.loads(out)
    assert data["unmatched"]["our_providers"]["openai"] == 1  # gpt-4.1-mini (embeddings and images are not chat)
    assert data["unmatched"]["providers_without_sheet"]["mistral"] == 1
    assert all(p["offer_id"] for p in data["proposals"])  # never a new offer
    missing = {(m["provider"], m["offer_id"]) for m in data["missing"]}
    assert ("groq", "llama-3.3-70b-versatile") in missing  # LiteLLM's map has no such groq entry


def test_json_keys_are_stable(sheets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "--from", str(_list_copy(tmp_path, GENAI)), "--sheets", str(sheets), "--json", "--read-on", "2026-11-30"
    )
    assert code == 0
    data = json.loads(out)
    assert set(data) == {
        "list",
        "sheets",
        "as_of",
        "counts",
        "proposals",
        "same",
        "missing",
        "unmatched",
        "written",
        "retired",
        "older",
        "tiers_kept",
    }
    assert set(data["list"]) == {"format", "name", "location", "url", "read", "read_basis", "last_modified"}
    assert set(data["counts"]) == {"changed", "same", "missing", "unmatched", "retired", "older"}
    assert data["list"]["read"] == data["as_of"] == READ.isoformat()
    assert data["unmatched"]["providers_without_sheet"] == {"mistral": 2}  # the two models the fixture keeps
    assert data["written"] is None
    (gpt41,) = [p for p in data["proposals"] if p["offer_id"] == "gpt-4.1"]
    assert set(gpt41) == {
        "provider",
        "offer_id",
        "model",
        "list_model",
        "effective",
        "changes",
        "old",
        "new",
        "kept_from_ours",
        "list_deprecated",
        "source",
        "old_source",
        "note",
        "writable",
        "reason",
    }
    assert gpt41["changes"] == [{"field": "input", "old": 2.5, "new": 2.0}]
    assert gpt41["source"]["read"] == "2026-11-30"


def test_the_text_diff_shows_old_and_new_per_field_and_the_source(
    sheets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _list_copy(tmp_path, LITELLM)
    code, out, _ = _run(
        capsys, "--from", str(path), "--sheets", str(sheets), "--provider", "openai", "--read-on", "2026-11-30"
    )
    assert code == 0
    block = out[out.index("openai gpt-4.1 ") :]
    assert "new version effective 2026-11-30" in block.splitlines()[0]
    assert block.splitlines()[1].split() == ["input", "2.50", "->", "2.00"]
    assert "source: LiteLLM model cost map (file litellm_model_prices.json), read 2026-11-30" in block
    assert "ours:   https://developers.openai.com/api/docs/pricing, read 2025-07-04" in block
    assert "dated 2026-11-30 (given with --read-on)" in out
    assert "Nothing written. --write would add" in out


# --- writing -------------------------------------------------------------------------------------------


def test_write_appends_the_versions_and_keeps_every_line(
    sheets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p.name: p.read_text() for p in sheets.glob("*.yaml")}
    path = _list_copy(tmp_path, LITELLM)
    code, out, _ = _run(
        capsys, "--from", str(path), "--sheets", str(sheets), "--model", "gpt-4.1", "--write", "--read-on", "2026-11-30"
    )
    assert code == 0 and "Wrote" in out
    after = {p.name: p.read_text() for p in sheets.glob("*.yaml")}
    assert {n for n in after if after[n] != before[n]} == {"openai.yaml"}
    old_lines, new_lines = before["openai.yaml"].splitlines(), after["openai.yaml"].splitlines()
    it = iter(new_lines)
    assert all(line in it for line in old_lines)  # every old line, comments included, in order
    latest = load_price_sheets(sheets).serverless("openai", "gpt-4.1")[1].versions[-1]
    assert (latest.effective, latest.prices.input, latest.prices.cached_input, latest.prices.output) == (
        READ,
        Decimal(2),
        Decimal("0.5"),
        Decimal(8),
    )
    assert latest.source.document == "LiteLLM model cost map (file litellm_model_prices.json)"
    assert latest.source.read == READ
    # refreshed once, the same list proposes nothing more for gpt-4.1
    code, out, _ = _run(
        capsys, "--from", str(path), "--sheets", str(sheets), "--model", "gpt-4.1", "--json", "--read-on", "2026-11-30"
    )
    assert json.loads(out)["counts"]["changed"] == 0 and json.loads(out)["counts"]["same"] == 1


def test_a_list_read_before_our_latest_version_is_not_written(
    sheets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A list dated gpt-4.1's launch day (2025-04-14) is older than our reading of OpenAI's page (2025-07-04):
    nothing proposed, nothing written."""
    before = _digest(sheets)
    path = _list_copy(tmp_path, LITELLM)
    code, out, _ = _run(
        capsys,
        "--from",
        str(path),
        "--sheets",
        str(sheets),
        "--model",
        "gpt-4.1",
        "--write",
        "--json",
        "--read-on",
        "2025-04-14",
    )
    assert code == 0
    data = json.loads(out)
    assert data["proposals"] == []
    (older,) = data["older"]
    assert older["offer_id"] == "gpt-4.1" and "not after our newest reading (2025-07-04)" in older["reason"]
    assert _digest(sheets) == before


def test_a_sheet_failing_its_check_leaves_every_sheet_unwritten(
    sheets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Proposals for several sheets: the last one's check fails, so none is written (not even the first)."""
    real = genai_import._check_sheet

    def fails_for_together(old: Any, new: Any, path: Path) -> None:
        if path.name == "together.yaml":
            raise DataFileError([f"{path}: refused by the test"])
        real(old, new, path)

    monkeypatch.setattr(genai_import, "_check_sheet", fails_for_together)
    before = _digest(sheets)
    code, out, err = _run(
        capsys,
        "--from",
        str(_list_copy(tmp_path, LITELLM)),
        "--sheets",
        str(sheets),
        "--write",
        "--read-on",
        "2026-11-30",
    )
    assert code == 2 and "together.yaml: refused by the test" in err
    assert _digest(sheets) == before
    dry = refresh(load_price_sheets(sheets), parse_list(read_list(str(LITELLM), READ)))
    assert {"openai", "together"} <= {e.provider for e in dry.writable_report.entries}  # both had versions to add


# --- the URL form ----------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, bytes, dict[str, str]]] = {}

    def do_GET(self) -> None:
        status, body, headers = self.routes.get(self.path, (404, b"not here", {}))
        self.send_response_only(status)  # no automatic Date header: each route says its own
        for key, value in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, dict[str, tuple[int, bytes, dict[str, str]]]]]:
    routes: dict[str, tuple[int, bytes, dict[str, str]]] = {}
    handler = type("Handler", (_Handler,), {"routes": routes})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", routes
    finally:
        httpd.shutdown()
        httpd.server_close()


SERVED = "Mon, 30 Nov 2026 09:15:00 GMT"
MODIFIED = "Fri, 27 Nov 2026 18:00:00 GMT"


def test_a_url_is_read_with_the_date_the_server_sent(
    server: tuple[str, dict[str, tuple[int, bytes, dict[str, str]]]],
    sheets: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, routes = server
    routes["/data.json"] = (200, GENAI.read_bytes(), {"Date": SERVED, "Last-Modified": MODIFIED})
    code, out, _ = _run(capsys, "--from", f"{base}/data.json", "--sheets", str(sheets), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["list"]["read"] == "2026-11-30" and data["list"]["read_basis"] == "HTTP Date header"
    assert data["list"]["last_modified"] == "2026-11-27"
    (gpt41,) = [p for p in data["proposals"] if p["offer_id"] == "gpt-4.1"]
    assert gpt41["source"]["url"] == f"{base}/data.json"
    assert gpt41["source"]["document"] == "genai-prices data.json"


def test_without_a_date_header_the_last_modified_date_is_used(
    server: tuple[str, dict[str, tuple[int, bytes, dict[str, str]]]],
) -> None:
    base, routes = server
    routes["/map.json"] = (200, LITELLM.read_bytes(), {"Last-Modified": MODIFIED})
    text = read_list(f"{base}/map.json")
    assert (text.read, text.read_basis) == (dt.date(2026, 11, 27), "HTTP Last-Modified header")


def test_a_url_without_any_date_needs_read_on(
    server: tuple[str, dict[str, tuple[int, bytes, dict[str, str]]]], capsys: pytest.CaptureFixture[str]
) -> None:
    base, routes = server
    routes["/map.json"] = (200, LITELLM.read_bytes(), {})
    code, _, err = _run(capsys, "--from", f"{base}/map.json")
    assert code == 2 and "--read-on" in err and "neither a Date nor a Last-Modified" in err
    assert read_list(f"{base}/map.json", READ).read_basis == "given"


def test_url_errors_name_the_url(
    server: tuple[str, dict[str, tuple[int, bytes, dict[str, str]]]], capsys: pytest.CaptureFixture[str]
) -> None:
    base, routes = server
    code, _, err = _run(capsys, "--from", f"{base}/gone.json")
    assert code == 2 and f"{base}/gone.json: the server answered 404" in err
    routes["/big.json"] = (200, LITELLM.read_bytes(), {"Date": SERVED})
    with pytest.raises(InputError, match="larger than 1,000 bytes"):
        read_list(f"{base}/big.json", max_bytes=1000)
    routes["/bomb.json"] = (200, gzip.compress(b" " * 5000), {"Date": SERVED, "Content-Encoding": "gzip"})
    with pytest.raises(InputError, match="larger than 1,000 bytes"):  # counted unpacked, not as sent
        read_list(f"{base}/bomb.json", max_bytes=1000)
    with pytest.raises(InputError, match="only http"):
        read_list("ftp://example.invalid/data.json")


# --- hostile lists: a clear error naming the file and field, exit 2, nothing written ---------------------

HOSTILE_PRICES = st.one_of(
    st.decimals(max_value=Decimal("-0.000001"), allow_nan=False, allow_infinity=False, places=6).map(float),
    st.floats(min_value=1e9, max_value=1e300),
    st.integers(min_value=10**9, max_value=10**40),
    st.text(max_size=8),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
"""Values no price may take: negative, larger than any sheet can hold (per token for LiteLLM: 1e9 is
$1e15 per million), or not a number."""


def _hostile_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str
) -> tuple[int, str, dict[str, str], Path]:
    folder = tmp_path / "hostile_sheets"
    if not folder.exists():
        _copy_sheets(folder, only=("openai.yaml",))
    before = _digest(folder)
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code = main(
        ["sheets", "refresh", "--from", str(path), "--sheets", str(folder), "--write", "--read-on", "2026-11-30"]
    )
    err = capsys.readouterr().err
    assert _digest(folder) == before, "a hostile list changed a sheet"
    return code, err, before, path


HOSTILE = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@HOSTILE
@given(
    entry=st.sampled_from(["gpt-4.1", "claude-opus-4-6", "gemini/gemini-2.5-pro", "text-embedding-3-small"]),
    key=st.sampled_from(["input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost"]),
    value=HOSTILE_PRICES,
)
def test_a_bad_litellm_price_names_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, key: str, value: Any
) -> None:
    data = json.loads(LITELLM.read_text())
    data[entry][key] = value
    code, err, _, _ = _hostile_case(tmp_path, capsys, "costs.json", json.dumps(data))
    assert code == 2
    assert f'costs.json: "{entry}".{key}: ' in err
    assert "negative" in err or "not a price" in err or "expected a number" in err


@HOSTILE
@given(
    model=st.sampled_from(["gpt-4.1", "gpt-5"]),
    key=st.sampled_from(["input_mtok", "output_mtok", "cache_read_mtok"]),
    value=HOSTILE_PRICES,
)
def test_a_bad_genai_price_names_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str, key: str, value: Any
) -> None:
    data = json.loads(GENAI.read_text())
    openai = next(p for p in data if p["id"] == "openai")
    found = next(m for m in openai["models"] if m["id"] == model)
    prices = found["prices"] if isinstance(found["prices"], dict) else found["prices"][-1]["prices"]
    prices[key] = value
    code, err, _, _ = _hostile_case(tmp_path, capsys, "data.json", json.dumps(data))
    assert code == 2
    assert "data.json: openai." + model in err and key in err


@HOSTILE
@given(cut=st.integers(min_value=0, max_value=36000))
def test_a_truncated_list_is_not_valid_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], cut: int) -> None:
    text = LITELLM.read_text()
    code, err, _, _ = _hostile_case(tmp_path, capsys, "cut.json", text[: min(cut, len(text.rstrip()) - 1)])
    assert code == 2 and "cut.json: not valid JSON (line " in err


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@HOSTILE
@given(value=JSON_VALUES)
def test_an_unknown_format_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: Any) -> None:
    code, err, _, _ = _hostile_case(tmp_path, capsys, "other.json", json.dumps(value))
    assert code == 2 and "other.json: not a price list this calculator reads" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"gpt-4.1": {"litellm_provider": "openai", "input_cost_per_token": NaN}}', "NaN is not a number"),
        ('{"gpt-4.1": {"litellm_provider": "openai", "input_cost_per_token": -Infinity}}', "JSON: -Infinity is not"),
        ('{"gpt-4.1": {"litellm_provider": 7, "input_cost_per_token": 1e-06}}', '"gpt-4.1".litellm_provider'),
        ('{"gpt-4.1": "cheap", "x": {"input_cost_per_token": 1e-06}}', '"gpt-4.1": expected an object'),
        ('[{"id": "openai", "models": 5}]', "openai.models: expected a list"),
        ('[{"id": "openai", "models": [{"id": "m", "prices": {"input_mtok": {"base": 1, "tiers": 3}}}]}]', "tiers"),
        ("prices: {input: 2}", "not valid JSON"),
    ],
)
def test_broken_structures_name_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    code, err, _, path = _hostile_case(tmp_path, capsys, "list.json", content)
    assert code == 2 and str(path) in err and message in err


def test_bytes_that_are_not_utf8_are_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"caf\xe9": {}}')
    with pytest.raises(DataFileError, match=r"latin1.json: not UTF-8 text \(byte 5\)"):
        parse_list(read_list(str(path), READ))
