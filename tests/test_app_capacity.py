"""The Capacity and Measurements pages through AppTest, and their logic in calculator.present.capacity_charts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from calculator.capacity.memory import fit
from calculator.present import capacity_charts as cc
from calculator.pricing.compare import Catalogs
from calculator.scenario.inputs import LatencyTarget

from .apptest import open_page, table_with, text_of

SGLANG = Path(__file__).resolve().parent / "fixtures" / "bench" / "sglang"
ONLINE = SGLANG / "h200_llama_3_3_70b_online_output.jsonl"
LLAMA_LIKE = {
    "_name_or_path": "acme/Tiny-Llama-8B",
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
}


def _page(page: str, **params: str) -> AppTest:
    return open_page(page, 60, **params)


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


# --- Capacity -------------------------------------------------------------------------------------


def test_70b_fp8_does_not_fit_one_h100_at_32k_and_fits_two(catalogs: Catalogs) -> None:
    at = _page("capacity", c_model="llama-3.3-70b", c_gpu="h100-sxm", c_prec="fp8", c_ctx="32768", c_n="1")
    assert not at.error, [e.value for e in at.error]
    assert _metrics(at)["Fits?"] == "Does not fit"
    answer = text_of(at.warning)
    assert "Does not fit" in answer and "GB per GPU short" in answer and "2 GPUs" in answer

    at.number_input(key="c_n").set_value(2).run()
    assert not at.exception
    expected = fit(catalogs.models.get("llama-3.3-70b"), catalogs.gpus.get("h100-sxm"), "fp8", 32768, 2)
    assert expected.fits and expected.max_sequences > 0
    metrics = _metrics(at)
    assert metrics["Fits?"] == "Yes"
    assert metrics["Max sequences"] == f"{expected.max_sequences:,}"
    assert f"{expected.max_sequences:,} sequences" in text_of(at.success)
    assert len(at.get("vega_lite_chart")) == 3  # memory bar, decode per user, decode in total
    side = table_with(at, "Record")
    assert set(side["Record"]) == {"vllm-llama-3.3-70b-fp8-1xh100-c50", "trtllm-llama-3.3-70b-fp8-1xh100-c50"}
    assert "sglang-70b-4xh200-rate1" in set(table_with(at, "Case")["Case"])


def test_one_setup_at_one_load_is_the_estimate_commands_answer(catalogs: Catalogs) -> None:
    """The page's setup section and `python -m calculator estimate` give one answer: same estimator, same figure."""
    from calculator.capacity.estimate import estimate_setup

    at = _page("capacity", c_model="llama-3.3-70b", c_gpu="h100-sxm", c_prec="fp8", c_ctx="2000", c_n="2",
               c_out="1000", c_conc="16", c_eng="vllm")  # fmt: skip
    assert not at.exception and not at.error, [e.value for e in at.error]
    expected = estimate_setup(catalogs.models.get("llama-3.3-70b"), catalogs.gpus.get("h100-sxm"), 2, "fp8", 1000,
                              1000, concurrency=16)  # fmt: skip
    assert _metrics(at)["Output tokens/s"] == f"{expected.output_tokens_per_s:,.0f}"
    latencies = table_with(at, "Percentile", "TTFT (ms)", "TPOT (ms)")
    assert list(latencies["Percentile"]) == ["p50", "p90", "p95", "p99"]
    assert latencies["TPOT (ms)"].iloc[-1] == round(expected.tpot_ms.p99, 1)
    said = " ".join(c.value for c in at.caption)
    assert f"Estimator: {expected.estimator}" in said and "leave one source out" in said


def test_bad_url_parameters_are_named_and_the_page_still_answers() -> None:
    at = _page("capacity", c_n="0", c_gpu="h999", c_ctx="lots")
    errors = text_of(at.error)
    assert "`c_n`" in errors and "outside 1 to 1,024" in errors
    assert "`c_gpu`" in errors and "'h999'" in errors
    assert "`c_ctx`" in errors and "not a number" in errors
    assert "Fits?" not in _metrics(at)  # the context field shows 'lots': no answer for another context
    at = _page("capacity", c_n="0", c_gpu="h999")
    assert _metrics(at)["Fits?"] in ("Yes", "Does not fit")  # a refused number input keeps its valid value


def test_an_uploaded_config_becomes_a_model() -> None:
    at = _page("capacity", c_gpu="h100-sxm", c_prec="bf16", c_n="1")
    text = json.dumps(LLAMA_LIKE).encode()
    at.file_uploader(key="c_cfg").set_value(("config.json", text, "application/json")).run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    chosen = at.selectbox(key="c_model").value
    assert isinstance(chosen, str) and "tiny-llama" in chosen
    assert _metrics(at)["Fits?"] == "Yes"


def test_an_uploaded_hybrid_config_names_its_layer_types_and_the_keys_it_left_out() -> None:
    at = _page("capacity", c_gpu="h100-sxm", c_prec="fp8", c_n="1")
    nemotron = Path(__file__).parent / "fixtures" / "model_configs" / "nvidia--Nemotron-H-56B-Base-8K.json"
    config = {**json.loads(nemotron.read_text()), "latent_memory_slots": 64}
    at.file_uploader(key="c_cfg").set_value(("config.json", json.dumps(config).encode(), "application/json")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "54 mamba layers" in text_of(at.caption)
    assert "latent_memory_slots" in text_of(at.warning)


def test_a_broken_config_names_its_line() -> None:
    at = _page("capacity")
    text = json.dumps({**LLAMA_LIKE, "num_key_value_heads": "eight"}, indent=2)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "num_key_value_heads" in s)
    at.file_uploader(key="c_cfg").set_value(("config.json", text.encode(), "application/json")).run()
    assert not at.exception
    assert f"config.json:{line}: num_key_value_heads" in text_of(at.error)


def test_memory_frame_adds_up_and_shows_the_shortfall(catalogs: Catalogs) -> None:
    model, gpu = catalogs.models.get("llama-3.3-70b"), catalogs.gpus.get("h100-sxm")
    fits = fit(model, gpu, "fp8", 32768, 2)
    df = cc.memory_frame(fits)
    assert df["gb"].sum() == pytest.approx(fits.memory_per_gpu_gb)  # 80 GiB = 85.9 GB
    short = fit(model, gpu, "fp8", 32768, 1)
    df = cc.memory_frame(short)
    assert df["gb"].sum() - short.memory_per_gpu_gb == pytest.approx(short.shortfall_gb)
    assert "KV for one sequence (missing)" in set(df["part"])
    spec = cc.memory_chart(short, gpu.id).to_dict()
    colour = spec["layer"][0]["encoding"]["color"]["scale"]["domain"]
    assert colour == ["Weights", "KV for one sequence (missing)", "Reserve", "Held back"]


def test_decode_frame_marks_batches_beyond_the_kv_cache(catalogs: Catalogs) -> None:
    model, gpu = catalogs.models.get("llama-3.3-70b"), catalogs.gpus.get("h100-sxm")
    f = fit(model, gpu, "fp8", 8192, 2)
    df = cc.decode_frame(model, gpu, "fp8", 8192, 2, f.kv_dtype, f.max_sequences)
    assert f.max_sequences in set(df["batch"])
    beyond = df[df["batch"] > f.max_sequences]
    assert not beyond.empty and set(beyond["in_cache"]) == {"beyond the KV cache"}
    assert df["total"].is_monotonic_increasing and df["per_user"].is_monotonic_decreasing
    cc.decode_chart(df, "total", f.max_sequences).to_dict()


# --- Measurements ---------------------------------------------------------------------------------


def test_measurements_page_imports_sglang_and_needs_the_setup() -> None:
    at = _page("measurements")
    at.file_uploader(key="m_files").set_value((ONLINE.name, ONLINE.read_bytes(), "application/jsonl")).run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    records = table_with(at, "Status")
    assert len(records) == 7
    assert all(s == "missing: model, precision, GPU, GPU count" for s in records["Status"])
    assert "7 of 7 records are incomplete" in text_of(at.warning)

    at.selectbox(key="m_gpu").set_value("h200-sxm").run()
    at.number_input(key="m_n").set_value(4).run()
    at.selectbox(key="m_prec").set_value("bf16").run()
    records = table_with(at, "Status")
    assert set(records["Status"]) == {"missing: model"}  # this file does not name its model either

    at.selectbox(key="m_model").set_value("llama-3.3-70b").run()
    assert not at.exception
    records = table_with(at, "Status")
    assert set(records["Status"]) == {"complete"}
    assert len(at.get("vega_lite_chart")) == 2  # throughput and TTFT
    # the file holds two traffic shapes: one chart per shape, and the other runs are named as left out
    picked = at.selectbox(key="m_grp")
    assert len(picked.options) == 2 and str(picked.value).startswith("1. ")
    left_out = text_of(at.markdown)
    assert "online_output-6-rate4" in left_out and "input tokens differs" in left_out


def test_latency_target_picks_the_busiest_level() -> None:
    at = _page("measurements", m_gpu="h200-sxm", m_n="4", m_prec="bf16", m_model="llama-3.3-70b")
    at.file_uploader(key="m_files").set_value((ONLINE.name, ONLINE.read_bytes(), "application/jsonl")).run()
    assert "not p95" in text_of(at.info)  # the file holds medians only
    at.selectbox(key="m_pct").set_value("p50").run()
    at.number_input(key="m_ttft").set_value(200.0).run()
    at.number_input(key="m_tps").set_value(50.0).run()
    assert not at.exception
    answer = text_of(at.success)
    assert "online_output-3-rate4" in answer and "sglang" in answer
    # rate 4 served 4.042 of 4 req/s offered (>= 95%): it kept up, so its figure is a lower bound
    assert "a lower bound" in answer


def test_a_broken_upload_names_the_line() -> None:
    at = _page("measurements")
    bad = b'{"backend": "sglang", "completed": 10, "duration": 5}\n{"backend": sglang}\n'
    at.file_uploader(key="m_files").set_value(("broken.jsonl", bad, "application/jsonl")).run()
    assert not at.exception
    errors = text_of(at.error)
    assert "broken.jsonl:2" in errors and "not valid JSON" in errors


def test_bad_measurement_url_parameters_are_named() -> None:
    at = _page("measurements", m_n="2.5", m_pct="p42")
    errors = text_of(at.error)
    assert "`m_n`" in errors and "whole number" in errors
    assert "`m_pct`" in errors


def test_groups_charts_and_target_from_the_fixture(catalogs: Catalogs) -> None:
    found = cc.import_uploads(
        [(ONLINE.name, ONLINE.read_bytes())], model="llama-3.3-70b", gpu="h200-sxm", gpu_count=4, precision="bf16"
    )
    assert not found.problems and len(found.records) == 7
    groups = cc.comparable_groups([*found.records, *catalogs.records.records])
    big = next(g for g in groups if found.records[0] in g.records)  # the upload's group, not the library's
    assert len(big.records) == 7  # five random-shape runs plus the two bundled SGLang records
    left = dict(big.left_out)
    assert any("input tokens differs" in why for why in left[found.records[5].id])
    assert cc.ttft_percentile(big.records) == "p50"
    frame, axis, unplaced = cc.run_chart_frame(big.records, "p50")
    assert axis.startswith("Request rate") and not unplaced and len(frame) == 7
    cc.throughput_chart(frame, axis).to_dict()
    cc.ttft_chart(frame, axis, "p50").to_dict()
    target = LatencyTarget(percentile="p50", ttft_ms=200, tokens_per_s_per_user=50)
    best = {engine: rec for engine, rec, _ in cc.busiest_by_engine(big.records, target)}
    assert best["sglang"] is not None and best["sglang"].request_rate == 4.0


def test_incomplete_records_join_no_chart() -> None:
    found = cc.import_uploads([(ONLINE.name, ONLINE.read_bytes())])
    assert all(not r.complete for r in found.records)
    assert cc.comparable_groups(found.records) == []
    assert cc.import_uploads([("x.json", b"\xff\xfe")]).problems == ["x.json: not a UTF-8 text file"]
