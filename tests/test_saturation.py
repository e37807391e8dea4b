"""Capacity is a saturation point: a run's load levels read as one curve (bundled records and real tool files).

Every expected figure below is read off the files by hand (the served rate each level states, and its
median latencies); the comments show the arithmetic against the rule in calculator/capacity/saturation.py:
a rate level kept up when it served >= 95% of its offered rate; one that did not is saturated unless a busier
level served >= 5% more at latencies within 2x of its own; a concurrency level is saturated when no busier
level served >= 10% more (or, the busiest, it served < 10% more than the one before).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calculator.capacity.saturation import read_series, series_of
from calculator.catalog.catalogs import Catalogs
from calculator.catalog.measurements import ThroughputRecord
from calculator.cli import main
from calculator.errors import InputError
from calculator.measure.importers import import_file
from calculator.pricing.compare import compare
from calculator.pricing.resolve import resolve, sizing_capacity, sizing_record
from calculator.scenario.inputs import LatencyTarget
from calculator.scenario.model import load_preset, with_evidence_records

from .named import named_preset

BENCH = Path(__file__).resolve().parent / "fixtures" / "bench"
RATE4 = "sglang-llama-3.3-70b-bf16-4xh200-rate4"
RATE8 = "sglang-llama-3.3-70b-bf16-4xh200-rate8"
# What the files do not say (the model, GPU and precision are the user's to give): the toy-server files of
# AIPerf and GuideLLM ran on one CPU, so their "setup" here only makes the records complete.
SETUP = {"model": "llama-3.3-70b", "gpu": "h200-sxm", "gpu_count": 4, "precision": "bf16"}


def _imported(path: Path) -> list[ThroughputRecord]:
    return import_file(path, **SETUP)  # type: ignore[arg-type]


def _read(records: list[ThroughputRecord], target: LatencyTarget | None = None) -> tuple[str, str, float]:
    found = read_series(series_of(records[0], records), target)
    return found.record.id, found.bound, found.requests_per_s


# --- the bundled series ---------------------------------------------------------------------------------


def test_the_bundled_70b_run_saturates_at_rate_8_not_at_the_presets_rate_4(catalogs: Catalogs) -> None:
    # rate 4: 4.042 served >= 0.95 x 4 = 3.8, kept up; rate 8: 6.921 < 0.95 x 8 = 7.6 and no busier level
    # bundled: the saturation point, 6.921 req/s and 3,515.0 output tokens/s (published.yaml)
    series = series_of(catalogs.records.get(RATE4), catalogs.records.records)
    assert [r.id for r in series] == [RATE4, RATE8]
    found = read_series(series)
    assert (found.record.id, found.bound) == (RATE8, "saturated")
    assert found.requests_per_s == pytest.approx(6.921)
    assert found.output_tokens_per_s == pytest.approx(3515.0)
    assert "saturation point" in found.sentence and "offered 8 req/s and served 6.92" in found.sentence


def test_the_rate_4_level_alone_is_a_lower_bound(catalogs: Catalogs) -> None:
    rate4 = catalogs.records.get(RATE4)
    found = read_series((rate4,))
    assert (found.record.id, found.bound) == (RATE4, "at_least")
    assert found.sentence.startswith("At least 4.04 req/s") and "lower bound" in found.sentence
    assert "served what it was offered (4.04 of 4 req/s)" in found.sentence


def test_a_latency_target_picks_the_busiest_level_meeting_it_and_says_whether_it_saturated(
    catalogs: Catalogs,
) -> None:
    series = series_of(catalogs.records.get(RATE8), catalogs.records.records)
    # TTFT p50 106.1 ms at rate 4 and 191.4 ms at rate 8: at most 150 ms leaves rate 4, which kept up
    strict = read_series(series, LatencyTarget(percentile="p50", ttft_ms=150))
    assert (strict.record.id, strict.bound) == (RATE4, "at_least")
    assert "meeting the p50 TTFT at most 150 ms target" in strict.sentence and "lower bound" in strict.sentence
    # inter-token 19.4 and 70.8 ms: 10 tokens/s per user (at most 100 ms) both meet; the busier one saturated
    loose = read_series(series, LatencyTarget(percentile="p50", tokens_per_s_per_user=10))
    assert (loose.record.id, loose.bound) == (RATE8, "saturated")
    with pytest.raises(InputError, match="no load level of .* meets it"):
        read_series(series, LatencyTarget(percentile="p50", ttft_ms=50))


def test_a_record_that_does_not_say_its_offered_load_is_taken_as_stated(catalogs: Catalogs) -> None:
    # typed-in figures (no tool, no rate, no concurrency): not a curve, and neither saturated nor a lower bound
    typed = catalogs.records.get(RATE4).model_copy(update={"id": "typed", "request_rate": None})
    found = read_series(series_of(typed, [typed, *catalogs.records.records]))
    assert (found.levels, found.bound) == (("typed",), "unknown")
    assert found.sentence.startswith("Capacity 4.04 req/s (2,048 output tokens/s) as the record states it")


# --- the presets size from the saturation point ------------------------------------------------------------


def test_the_presets_size_gpus_from_the_runs_saturation_point(catalogs: Catalogs) -> None:
    # the RAG preset with its GPU options named and sized from the published SGLang run
    preset = named_preset("rag-chatbot")
    assert preset.self_hosting.record == RATE4
    assert sizing_record(preset, catalogs).id == RATE8
    assert sizing_capacity(preset, catalogs).bound == "saturated"
    result = compare(preset, catalogs)
    for kind in ("dedicated", "self_hosted"):
        option = result.option(kind)
        assert option is not None and option.capacity is not None and option.capacity.record_id == RATE8
        assert option.notes[0].startswith("Capacity 6.92 req/s") and option.capacity.bound == "saturated"


def test_a_measured_shape_sizes_from_the_saturated_rate_not_the_offered_load(catalogs: Catalogs) -> None:
    # At the record's own shape (510 in / 508 out, no prefix) the record applies directly: a replica sustains
    # 6.921 req/s, not the 4.042 the rate-4 level was offered; 1.71x the capacity, so fewer replicas.
    preset = named_preset("rag-chatbot")
    scenario = preset.model_copy(
        update={
            "workload": preset.workload.model_copy(
                update={"input_tokens": 510, "output_tokens": 508, "prefix_share": 0}
            )
        }
    )
    side = resolve(scenario, catalogs).self_hosted
    assert side is not None and side.series is not None
    assert side.capacity.method == "direct"
    assert side.capacity.requests_per_s == pytest.approx(6.921)


def test_a_target_only_the_kept_up_level_meets_says_lower_bound_and_double_derating(catalogs: Catalogs) -> None:
    preset = named_preset("rag-chatbot")
    hosting = preset.self_hosting.model_copy(update={"latency_target": LatencyTarget(percentile="p50", ttft_ms=150)})
    result = compare(preset.model_copy(update={"self_hosting": hosting}), catalogs)
    option = result.option("self_hosted")
    assert option is not None and option.capacity is not None and option.capacity.record_id == RATE4
    note = option.notes[0]
    assert note.startswith("At least 4.04 req/s") and "lower bound" in note and option.capacity.bound == "at_least"
    assert "target utilisation derates this lower bound again" in note


def test_a_users_own_run_is_read_without_the_published_levels_of_the_same_setup(catalogs: Catalogs) -> None:
    # A copy of the published rate-4 level as the user's own: alone in its run, so a lower bound, even though
    # the published rate-8 level is the same setup.
    mine = catalogs.records.get(RATE4).model_copy(update={"id": "my-rate4"})
    scenario = with_evidence_records(load_preset("coding-agent"), (mine,), size_from="my-rate4")
    found = sizing_capacity(scenario, resolve(scenario, catalogs).catalogs)
    assert (found.record.id, found.bound, found.levels) == ("my-rate4", "at_least", ("my-rate4",))


# --- real files of each tool --------------------------------------------------------------------------------


def test_sglang_rate_sweep_saturates_at_rate_8_where_latency_then_climbs() -> None:
    records = _imported(BENCH / "sglang" / "h200_llama_3_3_70b_online_output.jsonl")
    # rows 1-5 (random 1024/1024, about 510 in / 510 out) and rows 6-7 (ShareGPT, about 225 in / 190 out) are
    # two runs: the shapes differ by more than 25%
    assert [r.id.split("-", 1)[1] for r in series_of(records[0], records)] == [
        "1-rate1",
        "2-rate2",
        "3-rate4",
        "4-rate8",
        "5-rate16",
    ]
    # served 1.005, 1.919 (>= 1.9), 4.042 kept up; rate 8 served 6.921 < 7.6, and rate 16 served 8.353 (>= 1.05 x
    # 6.921) but at a median inter-token latency of 179.1 ms > 2 x 70.8: saturated at rate 8
    rid, bound, rps = _read(records[:5])
    assert (rid.endswith("-4-rate8"), bound) == (True, "saturated")
    assert rps == pytest.approx(2400 / 346.7753648299258)  # completed / duration of the rate-8 row
    found = read_series(series_of(records[0], records[:5]))
    assert "Busier levels served up to 8.35 req/s" in found.sentence and "set a latency target" in found.sentence
    # a target that tolerates rate 16's latency (TTFT p50 614 ms) sizes from it: 3,200 / 383.07 s = 8.353 req/s
    rid, bound, rps = _read(records[:5], LatencyTarget(percentile="p50", ttft_ms=1000))
    assert (rid.endswith("-5-rate16"), bound, round(rps, 3)) == (True, "saturated", 8.353)
    # 50 tokens/s per user is an inter-token latency of at most 20 ms: 13.6, 14.8, 19.4 ms meet it, 70.8 does not
    rid, bound, rps = _read(records[:5], LatencyTarget(percentile="p50", tokens_per_s_per_user=50))
    assert (rid.endswith("-3-rate4"), bound) == (True, "at_least")
    # the ShareGPT run kept up at both rates (3.946 >= 3.8, 7.644 >= 7.6): at least its busiest
    rid, bound, _ = _read(records[5:])
    assert (rid.endswith("-7-rate8"), bound) == (True, "at_least")


def test_vllm_rate_sweep_a_short_runs_shortfall_with_flat_latency_is_not_saturation() -> None:
    path = BENCH / "vllm" / "results_l40s_llama32_3b.jsonl"
    deployment = [json.loads(line)["deployment"] for line in path.read_text().splitlines() if line.strip()]
    base = [r for r, d in zip(_imported(path), deployment, strict=True) if d == "base"]
    assert [r.request_rate for r in base] == [10.0, 30.0, None]
    # rate 10: 300 prompts served at 8.288 req/s (83%: the run's last requests drain after the last arrival),
    # but rate 30 served 22.074 with TTFT 72.6 vs 52.8 ms and inter-token 21.3 vs 13.0 ms (within 2x): kept up.
    # rate 30: 22.074 < 28.5, and the as-fast-as-possible level's TTFT is 937.9 ms (> 2 x 72.6): saturated.
    rid, bound, rps = _read(base)
    assert (rid.endswith("-5-rate30"), bound) == (True, "saturated")
    assert rps == pytest.approx(22.073508580215805)
    # the as-fast-as-possible level alone is saturated by construction
    assert read_series((base[2],)).bound == "saturated"


def test_guidellm_concurrency_sweeps_flat_and_still_rising() -> None:
    # 0.5.0: 2 streams 17.52 req/s, 4 streams 17.15 (< 1.10 x 17.52): saturated at 2 streams
    rid, bound, rps = _read(_imported(BENCH / "guidellm" / "guidellm-0.5.0_concurrent_benchmarks.json"))
    assert (rid.endswith("-1-c2"), bound) == (True, "saturated")
    assert rps == pytest.approx(17.52, abs=0.01)
    # 0.8.1: 8.12 then 15.90 (>= 1.10 x 8.12): still rising at the most streams tried, a lower bound
    rid, bound, rps = _read(_imported(BENCH / "guidellm" / "guidellm-0.8.1_concurrent_benchmarks.json"))
    assert (rid.endswith("-2-c4"), bound) == (True, "at_least")
    assert rps == pytest.approx(15.90, abs=0.01)


def test_guidellm_constant_rate_sweep_saturates_where_it_falls_behind() -> None:
    # 0.3.0: rate 6 served 6.135 (kept up), rate 12 served 7.451 (< 11.4), no busier level: saturated at 7.45
    rid, bound, rps = _read(_imported(BENCH / "guidellm" / "guidellm-0.3.0_constant_benchmarks.json"))
    assert (rid.endswith("-2-rate12"), bound) == (True, "saturated")
    assert rps == pytest.approx(7.45, abs=0.01)


def test_single_aiperf_and_genai_perf_levels_are_labelled_by_what_they_served() -> None:
    # AIPerf 0.10.0 at 20 req/s served 21.03 (kept up): a lower bound; 0.8.0 at 20 req/s served 15.44 (< 19):
    # saturated. genai-perf at concurrency 100 is a single fixed-concurrency level: a lower bound.
    assert _read(_imported(BENCH / "aiperf" / "aiperf-0.10.0_rate20_profile_export_aiperf.json"))[1] == "at_least"
    assert _read(_imported(BENCH / "aiperf" / "aiperf-0.8.0_rate20_profile_export_aiperf.json"))[1] == "saturated"
    genai = _imported(BENCH / "genai-perf" / "perf_analyzer_issue_298_streaming_profile_export_genai_perf.json")
    found = read_series(series_of(genai[0], genai))
    assert found.bound == "at_least" and "lower bound, not the capacity" in found.sentence


def test_aiperf_concurrency_sweep_saturates_where_more_in_flight_stops_buying_throughput() -> None:
    # one file per level, as AIPerf writes them: 1 to 32 in flight served 9.10, 17.73, 34.78, 62.00, 100.48, 84.31
    # req/s. 16 in flight: the busier level served less (84.31 < 1.10 x 100.48): saturated there. 8 in flight is
    # not (100.48 >= 1.10 x 62.00).
    levels = [
        _imported(BENCH / "aiperf" / f"aiperf-0.13.0_sweep_c{c}_profile_export_aiperf.json")[0]
        for c in (32, 4, 1, 16, 2, 8)
    ]
    series = series_of(levels[0], levels)
    assert [r.concurrency for r in series] == [1, 2, 4, 8, 16, 32]
    found = read_series(series)
    assert (found.record.concurrency, found.bound) == (16, "saturated")
    assert found.requests_per_s == pytest.approx(100.48, abs=0.01)
    # TTFT p50 at most 40 ms: 34.4, 33.4, 33.8, 36.4 ms meet it, 49.1 (16 in flight) does not; 8 in flight
    # is then the busiest meeting it, and 16 in flight served more: at least 62.0
    capped = read_series(series, LatencyTarget(percentile="p50", ttft_ms=40))
    assert (capped.record.concurrency, capped.bound) == (8, "at_least")
    assert capped.requests_per_s == pytest.approx(62.0, abs=0.01)


def test_aiperf_levels_offering_different_kinds_of_load_are_different_runs() -> None:
    # AIPerf 0.10.0 at 4 in flight (31.2 req/s) and at 20 req/s are different kinds of load: two runs
    c4 = _imported(BENCH / "aiperf" / "aiperf-0.10.0_c4_profile_export_aiperf.json")
    rate = _imported(BENCH / "aiperf" / "aiperf-0.10.0_rate20_profile_export_aiperf.json")
    assert [r.id for r in series_of(c4[0], c4 + rate)] == [c4[0].id]


def test_compare_json_says_how_the_sizing_level_stands_in_its_run(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "compare",
        "--preset",
        "rag-chatbot",
        "--dedicated",
        "together:h200-141gb",
        "--gpu-vm",
        "nebius:h200-sxm-1x",
    ]
    assert main([*argv, "--record", "sglang-llama-3.3-70b-bf16-4xh200-rate4", "--json"]) == 0
    options = {o["option"]: o for o in json.loads(capsys.readouterr().out)["options"]}
    assert options["serverless"]["capacity_bound"] is None
    for kind in ("dedicated", "self_hosted"):
        assert options[kind]["capacity_bound"] == "saturated"
        assert options[kind]["notes"][0].startswith("Capacity 6.92 req/s")
