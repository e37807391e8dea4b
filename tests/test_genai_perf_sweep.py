"""A genai-perf run at several load levels read as one curve (issue 11 part 2), as the AIPerf sweep is.

genai-perf writes one ``profile_export_genai_perf.json`` per level, each in a folder named after the model,
endpoint and load (``artifacts/test-model-openai-chat-concurrency4/``). The files under
``fixtures/bench/genai-perf/genai-perf-0.0.16_sweep_*`` are such runs, written by genai-perf 0.0.16 itself
(see fixtures/README.md). Every expected figure below is read off those files by hand, and the comments show
the arithmetic against the rule in calculator/capacity/saturation.py: a rate level kept up when it served
>= 95% of its offered rate; a concurrency level is saturated when no busier level served >= 10% more (or,
the busiest, it served < 10% more than the one before); with a latency target, the busiest level meeting it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from calculator.capacity.saturation import read_series, series_of
from calculator.catalog.datafile import DataFileError
from calculator.catalog.measurements import ThroughputRecord
from calculator.cli import main
from calculator.errors import InputError
from calculator.measure.importers import detect_format, import_file
from calculator.scenario.inputs import LatencyTarget
from calculator.scenario.model import Scenario, dump_scenario, load_preset, with_evidence_records

GENAI = Path(__file__).resolve().parent / "fixtures" / "bench" / "genai-perf"
CONCURRENCY_RUN = GENAI / "genai-perf-0.0.16_sweep_concurrency"
RATE_RUN = GENAI / "genai-perf-0.0.16_sweep_rate"
K8S_DEV = GENAI / "k8s-dev_gpt-oss-20b_c1_profile_export_genai_perf.json"
EXPORT = "profile_export_genai_perf.json"
# The toy server's files do not say the model's size, GPU or precision: the user gives them, as on a real run.
SETUP: dict[str, Any] = {"model": "llama-3.3-70b", "gpu": "h200-sxm", "gpu_count": 4, "precision": "bf16"}
IN_FLIGHT = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _levels(run: Path) -> list[ThroughputRecord]:
    """Every level of a run, imported one file at a time as a user would, in no particular order."""
    folders = sorted(run.iterdir())
    random.Random(11).shuffle(folders)
    return [r for folder in folders for r in import_file(folder / EXPORT, **SETUP)]


def _first_and_all(levels: list[ThroughputRecord]) -> tuple[ThroughputRecord, list[ThroughputRecord]]:
    """``series_of``'s arguments: a level standing for its run, and every record to look among."""
    return levels[0], levels


def _in_flight(n: int) -> str:
    return f"test-model-openai-chat-concurrency{n}-profile_export_genai_perf-1-c{n}"


# --- the concurrency run: 1 to 256 requests in flight ------------------------------------------------------


def test_each_levels_folder_names_its_record_and_the_levels_are_one_run() -> None:
    levels = _levels(CONCURRENCY_RUN)
    series = series_of(levels[0], levels)
    # the files share one name, so each record is named after its folder (and its load)
    assert [r.id for r in series] == [_in_flight(n) for n in IN_FLIGHT]
    assert [r.concurrency for r in series] == list(IN_FLIGHT)
    assert {(r.tool, r.model, r.input_tokens, r.output_tokens) for r in series} == {
        ("genai-perf", "llama-3.3-70b", 120.0, 61.0)
    }
    # the rate run of the same setup offered another kind of load: a different run, not more levels of this one
    assert series_of(levels[0], levels + _levels(RATE_RUN)) == series


def test_a_concurrency_run_still_rising_at_its_busiest_level_is_at_least_that_much() -> None:
    found = read_series(series_of(*_first_and_all(_levels(CONCURRENCY_RUN))))
    # served (request_throughput.avg): 9.964, 19.883, 39.788, 79.532, 158.937, 313.402, 614.040, 1032.774,
    # 1346.267 req/s. Every level served >= 10% more than the one before, the last 1346.267 >= 1.10 x 1032.774
    # = 1136.05: no level saturated, so the capacity is at least the busiest level's
    assert (found.record.id, found.bound) == (_in_flight(256), "at_least")
    assert found.requests_per_s == pytest.approx(1346.267, abs=0.001)
    assert found.output_tokens_per_s == pytest.approx(82122.3, abs=0.1)  # output_token_throughput.avg
    assert found.sentence.startswith("At least 1,346 req/s (82,122 output tokens/s), a lower bound")
    assert "the most tried" in found.sentence and "e+0" not in found.sentence


def test_a_latency_target_sizes_from_the_busiest_level_meeting_it() -> None:
    series = series_of(*_first_and_all(_levels(CONCURRENCY_RUN)))
    # TTFT p50 by level: 30.99, 31.25, 31.23, 31.24, 31.17, 31.84, 32.26, 38.35, 59.20 ms. At most 40 ms leaves
    # 1 to 128 in flight; 128 served 1032.774 and 256 served 1346.267 >= 1.10 x 1032.774: at least, not saturated
    capped = read_series(series, LatencyTarget(percentile="p50", ttft_ms=40))
    assert (capped.record.concurrency, capped.bound) == (128, "at_least")
    assert capped.requests_per_s == pytest.approx(1032.774, abs=0.001)
    assert "meeting the p50 TTFT at most 40 ms target" in capped.sentence
    # at most 35 ms leaves 1 to 64 (32.26 ms): 614.040 req/s
    tighter = read_series(series, LatencyTarget(percentile="p50", ttft_ms=35))
    assert (tighter.record.concurrency, round(tighter.requests_per_s, 3)) == (64, 614.040)
    # 700 tokens/s per user is an inter-token latency of at most 1000 / 700 = 1.43 ms: p50 1.295 ms at 128 in
    # flight meets it, 1.752 ms at 256 does not
    per_user = read_series(series, LatencyTarget(percentile="p50", tokens_per_s_per_user=700))
    assert (per_user.record.concurrency, per_user.bound) == (128, "at_least")
    with pytest.raises(InputError, match="no load level of .* meets it"):
        read_series(series, LatencyTarget(percentile="p50", ttft_ms=20))  # the fastest TTFT p50 is 30.99 ms


# --- the rate run: 100 to 3,200 requests a second offered -------------------------------------------------


def _at_rate(rate: float) -> str:
    return f"test-model-openai-chat-request_rate{rate:.1f}-profile_export_genai_perf-1-rate{rate:g}"


def test_a_rate_run_saturates_at_the_first_level_it_fell_behind() -> None:
    series = series_of(*_first_and_all(_levels(RATE_RUN)))
    assert [r.request_rate for r in series] == [100, 200, 400, 800, 1600, 3200]
    # served: 99.781 (>= 0.95 x 100 = 95), 199.075 (>= 190), 396.206 (>= 380), 784.509 (>= 760): each kept up.
    # 1600 offered, 950.781 served (< 1520), and 3200 served 608.001 (less, not >= 1.05 x 950.781): saturated
    found = read_series(series)
    assert (found.record.id, found.bound) == (_at_rate(1600), "saturated")
    assert found.requests_per_s == pytest.approx(950.781, abs=0.001)
    assert "the saturation point of 6 load levels" in found.sentence
    assert "offered 1,600 req/s and served 951" in found.sentence


def test_a_rate_level_that_served_what_it_was_offered_is_at_least_that_much() -> None:
    series = series_of(*_first_and_all(_levels(RATE_RUN)))
    # TTFT p50: 30.78, 31.10, 31.36, 34.12, 318.29, 1116.33 ms. At most 100 ms leaves rates 100 to 800; rate 800
    # served 784.509 of 800 (98%, >= 95%): it kept up, so the capacity is at least that, a lower bound
    found = read_series(series, LatencyTarget(percentile="p50", ttft_ms=100))
    assert (found.record.id, found.bound) == (_at_rate(800), "at_least")
    assert found.requests_per_s == pytest.approx(784.509, abs=0.001)
    assert "lower bound" in found.sentence and "served what it was offered (785 of 800 req/s)" in found.sentence
    # the rate-100 level alone says only that much
    alone = read_series((series[0],))
    assert alone.bound == "at_least" and alone.sentence.startswith("At least 99.8 req/s")


# --- the command line users import with -------------------------------------------------------------------


def test_measurements_import_reads_one_levels_file_with_its_load_and_plain_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = CONCURRENCY_RUN / "test-model-openai-chat-concurrency256" / EXPORT
    flags = ["--gpu", "h200-sxm", "--gpu-count", "4", "--precision", "bf16", "--model", "llama-3.3-70b"]
    assert main(["measurements", "import", str(path), *flags]) == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if _in_flight(256) in line]
    # 256 in flight, 1,346 req/s (not 1.35e+03), 82,122 output tokens/s, TTFT p50 59.20 ms shown as 59; the
    # synthetic prompts do not say what they share: prefix share unknown
    assert row.split() == [_in_flight(256), "unknown", "256", "1,346", "82,122", "59", "unknown", "complete"]
    assert main(["measurements", "import", str(path), *flags, "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)
    assert (record["concurrency"], record["request_rate"], record["complete"]) == (256, None, True)
    assert record["requests_per_s"] == pytest.approx(1346.267, abs=0.001)


def test_compare_sizes_from_the_imported_run_and_says_it_is_a_lower_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the user's own levels as a scenario's evidence, sizing from the 64-in-flight level: its run is read as
    # one curve, and without a target the capacity is the busiest level (256 in flight, at least 1,346 req/s)
    levels = tuple(_levels(CONCURRENCY_RUN))
    scenario = with_evidence_records(load_preset("rag-chatbot"), levels, size_from=_in_flight(64))
    path = tmp_path / "scenario.yaml"
    path.write_text(_dump(scenario))
    assert main(["compare", "--scenario", str(path), "--json"]) == 0
    options = {o["option"]: o for o in json.loads(capsys.readouterr().out)["options"]}
    for kind in ("dedicated", "self_hosted"):
        assert options[kind]["capacity_bound"] == "at_least"
        assert options[kind]["notes"][0].startswith("At least 1,346 req/s")


def _dump(scenario: Scenario) -> str:
    text = dump_scenario(scenario)
    assert yaml.safe_load(text)["evidence"]["records"]  # the levels travel with the scenario file
    return text


# --- a real genai-perf 25.x export (nested input_config) from a GPU run --------------------------------------


def test_a_real_nested_genai_perf_export_reads_its_load_model_and_disagreeing_output_rate() -> None:
    assert detect_format(K8S_DEV.read_text()) == "genai-perf"  # not AIPerf, whose config also nests an endpoint
    [record] = import_file(K8S_DEV, gpu="h100-sxm", gpu_count=1, precision="fp4")
    assert record.tool == "genai-perf"
    # input_config.model_names and input_config.perf_analyzer.stimulus.concurrency (the 25.x layout)
    assert (record.model, record.concurrency, record.request_rate) == ("openai/gpt-oss-20b", 1, None)
    assert record.requests_per_s == pytest.approx(0.4701030011153585)
    assert (round(record.input_tokens, 2), round(record.output_tokens, 2)) == (152.66, 73.51)
    assert (round(record.ttft_ms.p50 or 0, 1), round(record.itl_ms.p50 or 0, 2)) == (1416.9, 7.67)
    # service_kind openai (nested under input_config.endpoint): the file names no engine
    assert record.engine == "unknown"
    # the file's output rate, 12.10 tokens/s, is not its 0.4701 req/s x 73.51 tokens = 34.56: said, not fixed
    assert record.output_tokens_per_s == pytest.approx(12.095750218698175)
    assert record.mismatches and "0.4701 x 73.51 = 34.56" in record.mismatches[0]
    # a single fixed-concurrency level: a lower bound
    assert read_series((record,)).bound == "at_least"


def test_a_nested_triton_export_names_its_engine_from_the_endpoint_backend(tmp_path: Path) -> None:
    export = json.loads(K8S_DEV.read_text())
    export["input_config"]["endpoint"] |= {"service_kind": "triton", "backend": "vllm"}
    path = tmp_path / EXPORT
    path.write_text(json.dumps(export))
    assert import_file(path)[0].engine == "vllm"


def test_a_bad_nested_load_names_the_file_and_the_path_it_was_read_from(tmp_path: Path) -> None:
    export = json.loads(K8S_DEV.read_text())
    export["input_config"]["perf_analyzer"]["stimulus"] = {"request_rate": "fast"}
    path = tmp_path / EXPORT
    path.write_text(json.dumps(export))
    with pytest.raises(DataFileError) as caught:
        import_file(path)
    assert caught.value.lines == [
        f"{path}:1: input_config.perf_analyzer.stimulus.request_rate: expected a number, got 'fast'"
    ]
