"""The Replay page through AppTest, against the local test server (tests/bench_server.py) on 127.0.0.1."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from calculator.catalog.measurements import MeasurementFile

from .apptest import open_page, table_with, text_of
from .bench_server import running
from .clock import TODAY

SERVER = Path(__file__).resolve().parent / "bench_server.py"
SECRET = "sk-test-DO-NOT-LEAK-77c1e0"
PROMPTS = "\n".join(
    [
        json.dumps({"messages": [{"role": "system", "content": "be terse"}, {"role": "user", "content": "one two"}]}),
        json.dumps({"prompt": "alpha beta gamma delta"}),
        *(json.dumps({"prompt": f"question number {i} about words"}) for i in range(8)),
    ]
).encode()


def _page() -> AppTest:
    return open_page("replay")


def _fill(at: AppTest, url: str, *, key: str = "", levels: str = "1, 4", requests: int = 16) -> AppTest:
    at.text_input(key="r_url").set_value(url)
    at.text_input(key="r_key").set_value(key)
    at.text_input(key="r_model").set_value("test-model")
    at.text_input(key="r_conc").set_value(levels)
    at.number_input(key="r_n").set_value(requests)
    at.number_input(key="r_max").set_value(16)
    at.number_input(key="r_to").set_value(10.0)
    at.file_uploader(key="r_log").set_value(("prompts.jsonl", PROMPTS, "application/jsonl"))
    return at


def _wait(at: AppTest, timeout: float = 60) -> AppTest:
    """Rerun the page (as its polling fragment would in a browser) until the run has finished."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = at.session_state.get("r_run")
        if run is None or run.finished:
            return at.run()
        time.sleep(0.2)
        at.run()
        assert not at.exception
    raise TimeoutError("the replay did not finish")


def _everything(at: AppTest) -> str:
    """Every element's proto and value on the page, the session state and the query parameters, as text."""
    parts = [str(getattr(node, "proto", "")) + str(getattr(node, "value", "")) for node in at._tree]
    parts += [repr(at.session_state[k]) for k in at.session_state]
    parts.append(repr(dict(at.query_params)))
    return "\n".join(parts)


def test_a_run_shows_each_level_with_the_servers_ttft_and_a_download() -> None:
    with running("--ttft-ms", "60", "--itl-ms", "2", "--tokens", "16") as url:
        at = _fill(_page(), url)
        at.button(key="r_run_btn").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        at = _wait(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = table_with(at, "Level")
    assert list(table["Level"]) == ["concurrency 1", "concurrency 4"]
    assert list(table["Completed"]) == ["16 of 16", "16 of 16"]
    for ttft in table["TTFT p50 (ms)"]:
        assert 55 <= ttft <= 150  # the server waits 60 ms before the first token
    assert (table["Output tok/s"] > 0).all()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Levels measured"] == "2 of 2" and metrics["Failed requests"] == "0"
    assert at.download_button[0].label == "Download the records (YAML)"
    text = at.session_state["r_run"].yaml_text
    records = MeasurementFile.model_validate(yaml.safe_load(text)).records
    assert [r.concurrency for r in records] == [1, 4]
    assert all(r.output_tokens == 16 for r in records)
    assert len(at.get("vega_lite_chart")) == 2  # output tokens/s and TTFT p95 against concurrency
    assert at.button(key="r_run_btn").disabled is False


def test_the_api_key_reaches_the_server_and_never_the_page() -> None:
    env = {"BENCH_KEY": SECRET}
    with running("--ttft-ms", "10", "--expect-key-env", "BENCH_KEY", env=env) as url:
        at = _fill(_page(), url, key=SECRET, levels="2", requests=8)
        at.button(key="r_run_btn").click().run()
        assert at.text_input(key="r_key").value == ""  # cleared as the run starts
        at = _wait(at)
    assert not at.error, [e.value for e in at.error]
    assert list(table_with(at, "Level")["Completed"]) == ["8 of 8"]  # the server accepted the key
    assert SECRET not in _everything(at)
    assert SECRET not in at.session_state["r_run"].yaml_text


def test_a_wrong_key_is_a_clear_error_without_the_key() -> None:
    env = {"BENCH_KEY": "the-right-one"}
    with running("--expect-key-env", "BENCH_KEY", env=env) as url:
        at = _fill(_page(), url, key=SECRET, levels="1", requests=4)
        at.button(key="r_run_btn").click().run()
        at = _wait(at)
    errors = text_of(at.error)
    assert "Base URL" in errors and "HTTP 401" in errors
    assert SECRET not in _everything(at)


def test_a_malformed_base_url_is_named_before_anything_runs() -> None:
    at = _fill(_page(), "localhost:8000")
    at.button(key="r_run_btn").click().run()
    assert not at.exception
    assert "**Base URL**" in [e.proto.body for e in at.error][0]
    assert "not an http(s) URL" in text_of(at.error)
    assert "r_run" not in at.session_state


def test_an_unreachable_base_url_is_a_clear_error() -> None:
    at = _fill(_page(), "http://127.0.0.1:9/v1", levels="1", requests=4)
    at.button(key="r_run_btn").click().run()
    at = _wait(at)
    assert not at.exception
    errors = text_of(at.error)
    assert "Base URL" in errors and "warm-up requests failed" in errors and "connect error" in errors


def test_bad_inputs_are_each_named() -> None:
    at = _page()
    at.text_input(key="r_url").set_value("http://127.0.0.1:8000/v1")
    at.text_input(key="r_conc").set_value("1, 500")
    at.button(key="r_run_btn").click().run()
    errors = text_of(at.error)
    assert "Model" in errors and "Concurrency levels" in errors and "'500'" in errors and "Prompt log" in errors
    at.text_input(key="r_model").set_value("m")
    at.text_input(key="r_conc").set_value("1")
    at.file_uploader(key="r_log").set_value(("p.jsonl", b'{"prompt": "ok"}\n{"nope": 1}\n', "application/jsonl"))
    at.button(key="r_run_btn").click().run()
    errors = text_of(at.error)
    assert "Prompt log" in errors and "p.jsonl:2" in errors


@pytest.mark.timeout(120)  # a cancel that never stops the run hangs here
def test_cancel_stops_the_run_and_keeps_finished_levels() -> None:
    with running("--ttft-ms", "50", "--itl-ms", "10", "--tokens", "16") as url:
        at = _fill(_page(), url, levels="1, 2, 4", requests=20)
        at.button(key="r_run_btn").click().run()
        deadline = time.monotonic() + 60
        while not at.session_state["r_run"].results and time.monotonic() < deadline:
            time.sleep(0.2)
            at.run()
        assert at.get("progress")
        at.button(key="r_cancel").click().run()
        at = _wait(at)
    assert "Cancelled after 1 of 3 levels" in text_of(at.warning)
    assert list(table_with(at, "Level")["Level"]) == ["concurrency 1"]
    assert at.download_button


def test_replayed_levels_added_to_the_scenario_size_the_compare_pages_gpu_options() -> None:
    """A run that says what served it (model, GPU, count, weights) gives records the Compare page can size
    its GPU options from; one that does not is told what is missing."""

    from calculator.pricing.compare import compare, load_catalogs
    from calculator.scenario.model import load_preset, with_evidence_records

    with running("--ttft-ms", "20", "--itl-ms", "2", "--tokens", "16") as url:
        at = _fill(_page(), url, levels="1, 2", requests=8)
        at.text_input(key="r_model").set_value("llama-3.3-70b")
        at.selectbox(key="r_gpu").set_value("h100-sxm")
        at.number_input(key="r_gn").set_value(2)  # 70B in FP8 leaves one H100 no room for a 20,500-token turn
        at.selectbox(key="r_prec").set_value("fp8")
        at.button(key="r_run_btn").click().run()
        at = _wait(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    levels = at.selectbox(key="r_size").options
    assert len(levels) == 2
    at.selectbox(key="r_size").set_value(levels[1]).run()
    at.button(key="r_add").click().run()
    assert f"sized from `{levels[1]}`" in text_of(at.success)

    kept = at.session_state["evidence"].records
    assert [r.id for r in kept] == list(levels)
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    caption = next(c.value for c in at.caption if c.value.startswith("GPU options sized from"))
    assert f"your measurement record (kept in the scenario) `{levels[1]}`" in caption
    assert "prompts.jsonl" in caption  # its source: the run and its prompt log
    scenario = load_preset("coding-agent")
    scenario = scenario.model_copy(update={"as_of": scenario.as_of or TODAY})
    expected = compare(with_evidence_records(scenario, tuple(kept), str(levels[1])), load_catalogs())
    hosted = expected.option("self_hosted")
    assert hosted is not None
    shown = {m.label.removesuffix(" (cheapest)"): m.value for m in at.metric}
    assert shown["Self-hosted GPUs"] == f"${hosted.monthly:,.2f}"


def test_replayed_levels_that_do_not_say_their_gpu_cannot_size() -> None:
    with running("--ttft-ms", "10", "--tokens", "8") as url:
        at = _fill(_page(), url, levels="1", requests=4)
        at.button(key="r_run_btn").click().run()
        at = _wait(at)
    assert not at.error, [e.value for e in at.error]
    assert "None of these records can size GPUs yet" in text_of(at.caption)
    why = text_of(at.markdown)
    assert "does not state" in why and "the GPU" in why  # the page's words, not the record's field
