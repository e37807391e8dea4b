"""The Prefix analysis page through AppTest, and its tables and charts in calculator.present.prefix_charts."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from streamlit.testing.v1 import AppTest

from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import TooLarge
from calculator.present import prefix_charts as pc
from calculator.pricing.compare import Comparison, compare
from calculator.scenario.evidence import prefix_evidence
from calculator.scenario.model import load_preset, with_prefix_evidence
from calculator.traffic.prefix import CacheConfig, analyse_log

from .apptest import APP, open_page, table_with, text_of
from .clock import TODAY

MOONCAKE = Path(__file__).resolve().parent / "fixtures" / "traces" / "mooncake"
SYNTHETIC = MOONCAKE / "synthetic_trace.jsonl"
SYSTEM = "You are a careful assistant for a tax office. Answer in short sentences and cite the rule. " * 12


def _page(**params: str) -> AppTest:
    return open_page("prefix_analysis", 120, **params)


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _serverless_monthly(result: Comparison) -> str:
    """The serverless option's monthly cost as the page's tables show it."""
    option = result.option("serverless")
    assert option is not None
    return f"${option.monthly:,.2f}"


def _percent(value: str) -> float:
    return float(value.rstrip("%")) / 100


def _chat_log(n: int = 12, bad: dict[int, str] | None = None) -> bytes:
    """OpenAI chat request bodies sharing a long system prompt; ``bad`` replaces lines (1-based)."""
    lines = [
        json.dumps(
            {
                "model": "m",
                "messages": [
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"Question {i}: may I deduct item {i * 7} of my expenses?"},
                ],
            }
        )
        for i in range(n)
    ]
    for number, text in (bad or {}).items():
        lines[number - 1] = text
    return ("\n".join(lines) + "\n").encode()


@contextlib.contextmanager
def _opened(raw: bytes) -> Iterator[tuple[IO[bytes], int]]:
    yield io.BytesIO(raw), len(raw)


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.selectbox(key="p_src").set_value("upload a log").run()
    at.file_uploader(key="p_log").set_value((name, data, "application/jsonl")).run()
    assert not at.exception
    return at


# --- the page -------------------------------------------------------------------------------------


def test_synthetic_trace_shows_the_share_hit_rate_and_why() -> None:
    at = _page()
    assert not at.error, [e.value for e in at.error]
    metrics = _metrics(at)
    assert abs(_percent(metrics["Prefix share s"]) - 0.65) <= 0.04
    assert metrics["Requests"] == "3,993"
    expected = analyse_log(SYNTHETIC, scenario=CacheConfig(capacity_tokens=1_000_000, replicas=4))
    assert metrics["Token hit share s\u00d7h"] == f"{expected.scenario.token_hit_share:.1%}"
    assert metrics["Hit rate h"] == f"{expected.hit_rate:.1%}"
    assert len(at.get("vega_lite_chart")) == 3  # curve, per replica, matched lengths
    policies = table_with(at, "Routing")
    assert list(policies["Routing"]) == ["Round robin (chosen)", "Random", "Prefix-aware"]
    assert at.status[0].label.startswith("Analysed synthetic_trace.jsonl") and at.status[0].state == "complete"


def test_routing_and_replicas_come_from_the_url() -> None:
    at = _page(p_rep="2", p_route="prefix-aware", p_cap="4000000")
    assert not at.error, [e.value for e in at.error]
    expected = analyse_log(
        SYNTHETIC, scenario=CacheConfig(capacity_tokens=4_000_000, replicas=2, routing="prefix_aware")
    )
    assert _metrics(at)["Hit rate h"] == f"{expected.hit_rate:.1%}"
    assert "Prefix-aware (chosen)" in set(table_with(at, "Routing")["Routing"])


def test_malformed_upload_reports_the_bad_line_numbers() -> None:
    at = _page()
    bad = {3: '{"model": "m", "messages": [', 5: '["not", "an", "object"]', 8: '{"model": "m"}'}
    _upload(at, "chats.jsonl", _chat_log(12, bad))
    assert not at.error, [e.value for e in at.error]
    warning = text_of(at.warning)
    assert "3 malformed line(s)" in warning
    assert "chats.jsonl:3: not valid JSON" in warning
    assert "chats.jsonl:5: expected a JSON object" in warning
    assert "chats.jsonl:8: 'messages' is missing" in warning
    assert _metrics(at)["Requests"] == "9"


def test_an_upload_with_no_usable_line_is_an_error_naming_the_lines() -> None:
    at = _page()
    _upload(at, "broken.jsonl", b'{"prompt": \n\nnot json\n')
    errors = text_of(at.error)
    assert "broken.jsonl:1: not valid JSON" in errors and "broken.jsonl:3: not valid JSON" in errors
    assert not at.metric


def test_a_corrupt_gzip_upload_is_an_error() -> None:
    at = _page()
    _upload(at, "cut.jsonl.gz", gzip.compress(_chat_log(50))[:-60])
    errors = text_of(at.error)
    assert "cut.jsonl.gz: the compressed file is cut short" in errors  # the same words as every log reader
    assert at.status[0].state == "error"


def test_an_upload_past_the_limit_stops_with_the_command_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from calculator.catalog import textfile

    monkeypatch.setattr(textfile, "APP_MAX_CHARS", 100_000)
    at = _page()
    _upload(at, "chats.jsonl.gz", gzip.compress(_chat_log(400)))  # about 300 kB unpacked from a few kB
    assert "chats.jsonl.gz unpacks to more than 100,000 characters of text" in text_of(at.error)
    assert [c.value for c in at.code] == [
        "python -m calculator prefix chats.jsonl.gz --capacity-tokens 1000000 --replicas 4 --routing round_robin"
    ]
    assert at.status[0].state == "error" and not at.metric


def test_a_gzip_upload_is_read_and_measured() -> None:
    at = _page()
    raw = _chat_log(20)
    _upload(at, "chats.jsonl.gz", gzip.compress(raw))
    assert not at.error, [e.value for e in at.error]
    expected = analyse_log(io.BytesIO(raw), scenario=CacheConfig(capacity_tokens=1_000_000, replicas=4))
    assert expected.prefix_share > 0.5
    assert _metrics(at)["Prefix share s"] == f"{expected.prefix_share:.1%}"
    assert "openai format" in text_of(at.caption) and "(approximate)" in text_of(at.caption)


def test_a_ttl_without_timestamps_names_the_ttl() -> None:
    at = _page(p_ttl="60")
    _upload(at, "chats.jsonl", _chat_log(4))
    errors = text_of(at.error)
    assert "**TTL**" in errors and "timestamps" in errors


def test_bad_url_parameters_are_named() -> None:
    at = _page(p_rep="0", p_route="fastest", p_cap="lots")
    errors = text_of(at.error)
    assert "`p_rep`" in errors and "outside 1 to 100,000" in errors
    assert "`p_route`" in errors and "'fastest'" in errors
    assert "`p_cap`" in errors and "not a number" in errors


def test_capacity_from_a_gpu_and_model() -> None:
    from calculator.capacity.memory import fit
    from calculator.pricing.compare import load_catalogs

    cat = load_catalogs()
    tokens = fit(cat.models.get("llama-3.3-70b"), cat.gpus.get("h200-sxm"), "fp8").max_cached_tokens
    at = _page(p_capm="GPU and model", p_model="llama-3.3-70b", p_gpu="h200-sxm", p_prec="fp8")
    assert not at.error, [e.value for e in at.error]
    assert f"{tokens:,} tokens per replica" in text_of(at.caption)
    at.selectbox(key="p_gpu").set_value("h100-sxm")
    at.selectbox(key="p_prec").set_value("bf16").run()  # 141 GB of BF16 weights leave no KV cache on one H100
    assert not at.exception
    errors = text_of(at.error)
    assert "**GPU and model**" in errors and "no memory for a KV cache" in errors


def test_cost_table_shows_assumed_and_measured_cost() -> None:
    at = _page(p_base="coding-agent")
    assert not at.error, [e.value for e in at.error]
    table = table_with(at, "Option", "Assumed")
    assert list(table.columns) == ["Option", "Offer", "Assumed", "Measured", "Change"]
    preset = load_preset("coding-agent")
    report = analyse_log(SYNTHETIC, scenario=CacheConfig(capacity_tokens=1_000_000, replicas=4))
    from calculator.pricing.compare import load_catalogs

    cat = load_catalogs()
    before = compare(preset, cat)
    after = compare(with_prefix_evidence(preset, prefix_evidence(report)), cat)  # the log's tokens per turn too
    assert len(table) == len(before.options)
    serverless = table[table["Option"] == "Serverless API"].iloc[0]
    assert serverless["Assumed"] == _serverless_monthly(before)
    assert serverless["Measured"] == _serverless_monthly(after)
    assert serverless["Assumed"] != serverless["Measured"]


def test_apply_lands_on_compare_with_the_measured_values() -> None:
    at = _page(p_base="coding-agent")
    measured = table_with(at, "Option", "Assumed")
    at.button(key="p_apply").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="preset").value == "coding-agent"
    values = analyse_log(SYNTHETIC, scenario=CacheConfig(capacity_tokens=1_000_000, replicas=4)).scenario_values()
    assert at.number_input(key="pfx").value == pytest.approx(values["prefix_share"])
    assert at.number_input(key="hit").value == pytest.approx(values["hit_rate"])
    assert at.session_state["pfx"] == pytest.approx(values["prefix_share"])
    serverless = next(m.value for m in at.metric if m.label.startswith("Serverless API"))
    assert serverless == measured[measured["Option"] == "Serverless API"].iloc[0]["Measured"]


def test_apply_uses_the_compare_pages_own_inputs_and_replaces_stale_ones() -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["preset"] = "coding-agent"
    at.run()
    at.text_input(key="in").input("12345").run()
    at.switch_page("app_pages/prefix_analysis.py").run()
    # the Compare page's scenario, with its 12,345 input tokens: changed from the preset, and named so
    assert "'Started from Coding agent (the seed's turn)" in text_of(at.caption)
    at.toggle(key="p_keep").set_value(True).run()  # measured shares only: the scenario's tokens per turn stay
    at.button(key="p_apply").click().run()
    assert not at.exception
    assert at.text_input(key="in").value == str(12345)
    assert at.number_input(key="pfx").value == pytest.approx(0.65, abs=0.001)

    other = next(p for p in at.selectbox(key="preset").options if p != "coding-agent")
    at.selectbox(key="preset").set_value(other).run()
    at.switch_page("app_pages/prefix_analysis.py").run()
    at.selectbox(key="p_base").set_value("coding-agent").run()
    at.button(key="p_apply").click().run()
    assert not at.exception
    assert at.selectbox(key="preset").value == "coding-agent"  # the stale preset and its inputs are replaced
    assert at.text_input(key="in").value == str(load_preset("coding-agent").workload.input_tokens)
    assert at.number_input(key="hit").value == pytest.approx(0.179, abs=0.001)


def test_apply_carries_the_logs_tokens_per_turn_and_compare_names_the_analysis() -> None:
    """Applying a prefix analysis prices the log's tokens per turn as well as its shares, and the Compare page's
    assumptions say which log, how many requests and when."""

    from calculator.pricing.compare import load_catalogs

    at = _page(p_base="coding-agent")
    at.button(key="p_apply").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    report = analyse_log(SYNTHETIC, scenario=CacheConfig(capacity_tokens=1_000_000, replicas=4))
    evidence = prefix_evidence(report, TODAY)
    assert evidence.mean_input_tokens
    assert evidence.mean_input_tokens != load_preset("coding-agent").workload.input_tokens
    assert at.text_input(key="in").value == str(evidence.mean_input_tokens)
    if evidence.mean_output_tokens is not None:
        assert at.text_input(key="out").value == str(evidence.mean_output_tokens)
    expected = compare(with_prefix_evidence(load_preset("coding-agent"), evidence), load_catalogs())
    serverless = next(m.value for m in at.metric if m.label.startswith("Serverless API"))
    assert serverless == _serverless_monthly(expected)
    rows = {str(r["Assumption"]): r for _, r in table_with(at, "Assumption").iterrows()}
    assert rows["Prefix analysis"]["Value"] == f"{SYNTHETIC.name}: {report.requests:,} requests"
    assert rows["Prefix analysis"]["Read"] == TODAY.isoformat()
    assert f"{evidence.mean_input_tokens:,} input tokens per turn" in rows["Prefix analysis measured"]["Value"]
    assert "ev" in at.query_params  # the analysis travels in the link


# --- prefix_charts --------------------------------------------------------------------------------


def test_read_log_reads_plain_gzip_and_zstd_alike_and_reports_progress() -> None:
    import zstandard

    raw = _chat_log(4_000)  # about 3 MB: progress every MB read
    counts = []
    for data in (raw, gzip.compress(raw), zstandard.ZstdCompressor().compress(raw)):
        seen: list[float] = []

        def opener(data: bytes = data) -> contextlib.AbstractContextManager[tuple[IO[bytes], int]]:
            return _opened(data)

        def progress(share: float, _: str, seen: list[float] = seen) -> None:
            seen.append(share)

        log = pc.read_log(opener, "log", progress=progress)
        counts.append(len(log.requests))
        assert seen[-1] == 1.0 and seen == sorted(seen)
        if data is raw:
            assert len(seen) >= 3
    assert counts == [4_000] * 3


def test_read_log_names_a_corrupt_gzip_file() -> None:
    data = gzip.compress(b'{"prompt": "x"}\n' * 1000)[:-40]
    with pytest.raises(DataFileError) as exc:
        pc.read_log(lambda: _opened(data), "cut.jsonl.gz")
    assert exc.value.lines[0].startswith("cut.jsonl.gz: the compressed file is cut short")


def test_an_archive_that_unpacks_past_the_limit_is_refused_before_reading() -> None:
    """A 1 MB archive of 1 GB took 110 s with no word; the gzip trailer says its size, so it is refused at once."""
    data = gzip.compress(_chat_log(1_000))
    calls: list[float] = []
    with pytest.raises(TooLarge, match="bomb.jsonl.gz: more than 100,000 characters unpacked"):
        pc.read_log(
            lambda: _opened(data),
            "bomb.jsonl.gz",
            progress=lambda s, _: calls.append(s),
            max_chars=100_000,
        )
    assert calls == []  # not a byte of it analysed


def test_read_log_reads_a_parquet_or_sharegpt_upload_from_memory(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in _chat_log(30).splitlines()]
    pq.write_table(pa.table({"messages": [r["messages"] for r in rows]}), tmp_path / "log.parquet", row_group_size=7)
    sharegpt = json.dumps(
        [{"conversations": [{"from": "human", "value": m["messages"][1]["content"]}]} for m in rows]
    ).encode()
    for name, data in (("log.parquet", (tmp_path / "log.parquet").read_bytes()), ("log.json", sharegpt)):

        def opener(data: bytes = data) -> contextlib.AbstractContextManager[tuple[IO[bytes], int]]:
            return _opened(data)

        assert len(pc.read_log(opener, name).requests) == 30, name


def test_the_command_for_a_large_log_carries_the_page_settings() -> None:
    config = CacheConfig(capacity_tokens=4_000_000, ttl_seconds=300, replicas=4, routing="prefix_aware", balance=0.5)
    command = pc.cli_command("my logs.jsonl.gz", config, format="openai", block_size=32, tokenizer="tokenizer.json")
    assert command == (
        "python -m calculator prefix 'my logs.jsonl.gz' --format openai --block-size 32 --tokenizer tokenizer.json "
        "--capacity-tokens 4000000 --ttl-seconds 300 --replicas 4 --routing prefix_aware --balance 0.5"
    )
    assert pc.cli_command("log.jsonl", CacheConfig()) == "python -m calculator prefix log.jsonl"


def test_curve_capacities_include_the_chosen_one() -> None:
    caps = pc.curve_capacities(1_234_567)
    assert caps[0] == 10_000 and caps[-1] == 1_000_000_000 and 1_234_567 in caps
    assert caps == sorted(set(caps))


def test_frames_and_charts_build() -> None:
    raw = _chat_log(30)
    config = CacheConfig(capacity_tokens=2_000, replicas=3)
    analysis = pc.run_analysis(lambda: _opened(raw), "chats.jsonl", config)
    assert set(analysis.policies) == set(pc.ROUTINGS)
    curve = pc.curve_frame(analysis.report)
    assert curve["chosen"].sum() == 1 and curve["capacity"].is_monotonic_increasing
    assert curve["token_hit_share"].iloc[-1] == curve["token_hit_share"].max()
    replicas = pc.replica_frame(analysis)
    assert len(replicas) == 9 and set(replicas["replica"]) == {1, 2, 3}
    hist = pc.histogram_frame(analysis.report)
    assert hist.groupby("cache")["requests"].sum().to_dict() == {"Unlimited cache": 30, "Your cache": 30}
    for chart in (
        pc.curve_chart(curve, analysis.report.prefix_share),
        pc.replica_chart(replicas),
        pc.histogram_chart(hist, analysis.report.block_size),
    ):
        assert chart.to_dict()  # checked against the Vega-Lite schema
    # what is drawn is the frames' rows: the chosen 2,000-token cache marked, every request in a bar
    curve_spec = pc.curve_chart(curve, analysis.report.prefix_share).spec
    marked = curve_spec["layer"][2]["data"]["values"]
    assert [row["capacity"] for row in marked] == [2_000]
    assert curve_spec["layer"][3]["encoding"]["text"] == {"value": "your cache"}
    bars = pc.histogram_chart(hist, analysis.report.block_size).spec["data"]["values"]
    for cache in ("Unlimited cache", "Your cache"):
        assert sum(row["requests"] for row in bars if row["cache"] == cache) == 30
    per_replica = pc.replica_chart(replicas).spec["data"]["values"]
    assert len(per_replica) == 9 and {row["replica"] for row in per_replica} == {1, 2, 3}


def test_the_compare_pages_scenario_is_the_one_priced() -> None:
    """'As on the Compare page' prices the Compare page's scenario, its Advanced inputs included."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["preset"] = "coding-agent"
    at.query_params["asof"] = "2026-10-30"
    at.run()
    at.text_input(key="in").input("12345").run()
    at.number_input(key="tf_sl").set_value(1.2).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = {m.label.removesuffix(" (cheapest)"): m.value for m in at.metric}
    at.switch_page("app_pages/prefix_analysis.py").run()
    _upload(at, "chats.jsonl", _chat_log(12))
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="p_base").value == "as on the Compare page"
    table = table_with(at, "Option", "Assumed")
    assumed = dict(zip(table["Option"], table["Assumed"], strict=True))
    assert assumed and assumed == {k: v for k, v in shown.items() if k in assumed}
    caption = text_of(at.caption)
    assert "12,345 input and" in caption and "Token factors: GLM-5.3 x1.2" in caption

    # the shared rule builds the same scenario the Compare page priced, factor included
    import datetime as dt

    from app_pages import _state
    from calculator.pricing.compare import load_catalogs
    from calculator.scenario.model import list_presets

    cat = load_catalogs()
    presets = {name: load_preset(name) for name in list_presets()}
    scenario, _ = _state.current_compare_scenario(at.session_state.to_dict(), cat, presets, dt.date(2026, 10, 30))
    assert scenario.workload.input_tokens == 12345
    assert float(scenario.token_factor("GLM-5.3")) == 1.2
    without = scenario.model_copy(update={"token_factors": {}})
    serverless = assumed["Serverless API"]
    assert _serverless_monthly(compare(without, cat)) != serverless
