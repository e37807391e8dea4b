"""The Measurements page with uploaded files: asked per file, read once per content, YAML records taken."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from calculator.measure.bench import write_records
from calculator.measure.importers import import_file
from calculator.present import capacity_charts as cc

from .apptest import open_page, text_of

BENCH = Path(__file__).resolve().parent / "fixtures" / "bench"
ONLINE_70B = BENCH / "sglang" / "h200_llama_3_3_70b_online_output.jsonl"
ONLINE_405B = BENCH / "sglang" / "h200_llama_405b_online_output.jsonl"
AIPERF = BENCH / "aiperf" / "aiperf-0.13.0_c4_profile_export_aiperf.json"


def _upload(at: AppTest, *files: tuple[str, bytes, str]) -> AppTest:
    at.file_uploader(key="m_files").set_value(list(files)).run()
    assert not at.exception
    return at


def _records(at: AppTest) -> pd.DataFrame:
    [frame] = [df.value for df in at.dataframe if "Record" in df.value.columns]
    return frame


def test_each_file_is_asked_what_it_does_not_say_and_the_answers_stay_with_that_file() -> None:
    at = open_page("measurements")
    a, b = ONLINE_70B.read_bytes(), ONLINE_405B.read_bytes()
    _upload(at, (ONLINE_70B.name, a, "application/json"), (ONLINE_405B.name, b, "application/json"))
    key_a, key_b = cc.upload_key(a), cc.upload_key(b)
    at.selectbox(key=f"m_f_{key_a}_gpu").set_value("h200-sxm")
    at.number_input(key=f"m_f_{key_a}_n").set_value(4)
    at.selectbox(key=f"m_f_{key_b}_gpu").set_value("l40s")
    at.number_input(key=f"m_f_{key_b}_n").set_value(8).run()
    assert not at.exception
    frame = _records(at)
    by_file = {
        name: frame[frame["Record"].str.startswith(name)][["GPU", "GPUs"]].drop_duplicates().values.tolist()
        for name in ("h200_llama_3_3_70b", "h200_llama_405b")
    }
    assert by_file == {"h200_llama_3_3_70b": [["h200-sxm", "4"]], "h200_llama_405b": [["l40s", "8"]]}


def test_the_same_file_uploaded_twice_is_read_once() -> None:
    at = open_page("measurements")
    data = ONLINE_405B.read_bytes()
    _upload(at, (ONLINE_405B.name, data, "application/json"), ("copy.jsonl", data, "application/json"))
    assert len(_records(at)) == len(import_file(ONLINE_405B)) == 6
    assert f"`copy.jsonl` is the same file as `{ONLINE_405B.name}`: read once." in text_of(at.caption)


def test_the_yaml_records_bench_and_replay_write_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "replay-test-model.yaml"
    write_records(path, import_file(AIPERF, gpu="h100-sxm", gpu_count=1, precision="bf16"))
    at = open_page("measurements")
    _upload(at, (path.name, path.read_bytes(), "application/x-yaml"))
    assert not at.error, [e.value for e in at.error]
    frame = _records(at)
    assert frame["Record"].tolist() == ["aiperf-0.13.0_c4_profile_export_aiperf-1-c4"]
    assert frame["Status"].tolist() == ["complete"]


def test_a_file_whose_figures_disagree_says_so_on_the_page() -> None:
    path = BENCH / "guidellm" / "guidellm-0.5.0_concurrent_benchmarks.json"
    [doubtful] = [r for r in import_file(path) if r.mismatches]
    at = _upload(open_page("measurements"), (path.name, path.read_bytes(), "application/json"))
    warnings = text_of(at.warning)
    assert "The file's own figures disagree" in warnings
    assert doubtful.mismatches is not None and doubtful.mismatches[0] in warnings
    frame = _records(at)
    assert frame.loc[frame["Record"] == doubtful.id, "File's figures"].tolist() == [doubtful.mismatches[0]]


def test_a_prefix_share_the_file_does_not_state_shows_unknown_until_given_for_that_file() -> None:
    # the 405B file's last run is ShareGPT (its prompts do not say what they share); its random runs share nothing
    data = ONLINE_405B.read_bytes()
    at = _upload(open_page("measurements"), (ONLINE_405B.name, data, "application/json"))
    frame = _records(at)
    shares = dict(zip(frame["Record"], frame["Prefix share"], strict=True))
    assert set(shares.values()) == {"0%", "unknown"}
    unknown = [rid for rid, share in shares.items() if share == "unknown"]
    at.number_input(key=f"m_f_{cc.upload_key(data)}_share").set_value(0.3).run()
    assert not at.exception
    frame = _records(at)
    given = dict(zip(frame["Record"], frame["Prefix share"], strict=True))
    assert {given[rid] for rid in unknown} == {"30%"}
    assert set(given.values()) == {"0%", "30%"}  # what a run states itself stands


def test_inferencemax_results_arrive_complete_and_unread_latency_is_warned() -> None:
    path = BENCH / "inferencemax" / "agg_kimik2.5_collected.json"
    at = _upload(open_page("measurements"), (path.name, path.read_bytes(), "application/json"))
    frame = _records(at)
    assert frame["Status"].tolist() == ["complete"] * 3
    assert set(frame["GPU"]) == {"mi355x"} and set(frame["Precision"]) == {"INT4"}


def test_the_published_library_is_listed_and_filtered_by_model_and_gpu() -> None:
    at = open_page("measurements")
    at.toggle(key="m_pub").set_value(True).run()
    assert not at.exception
    at.multiselect(key="m_pub_model").set_value(["deepseek-ai/DeepSeek-R1-0528"]).run()
    at.multiselect(key="m_pub_gpu").set_value(["mi300x", "mi325x"]).run()
    assert not at.exception
    frame = _records(at)
    assert len(frame) == 30  # 15 levels each: three shapes at five concurrencies
    assert set(frame["GPU"]) == {"mi300x", "mi325x"} and set(frame["Model"]) == {"deepseek-ai/DeepSeek-R1-0528"}
    assert set(frame["Published by"]) == {"InferenceMAX / InferenceX (SemiAnalysis)"}
