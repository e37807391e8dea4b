"""The bundled library of published measurements: InferenceMAX / InferenceX sweeps (and the pages bundled before)
as sizing records with their publisher and source, read as curves, listed apart from the user's own, and sizing a
deployment where model, GPU, count and precision match, the user's own records first."""

from __future__ import annotations

import collections
from dataclasses import replace
from pathlib import Path

from calculator.capacity.saturation import series_of
from calculator.catalog.catalogs import load_catalogs
from calculator.catalog.datafile import DATA_DIR
from calculator.catalog.measurements import RecordCatalog, load_records
from calculator.planning.deployments import find_deployments
from calculator.scenario.model import load_preset

from .named import named_preset

IMX = "InferenceMAX / InferenceX (SemiAnalysis)"
NVIDIA, AMD = {"b200", "h100-sxm", "h200-sxm"}, {"mi300x", "mi325x"}


def test_every_bundled_record_names_who_published_it_and_where() -> None:
    records = load_records().records
    assert records and all(r.publisher for r in records)
    assert all(r.source.url and r.source.url.startswith("https://") for r in records)
    gpus = {g.id for g in load_catalogs().gpus.gpus}
    assert {r.gpu for r in records} <= gpus  # every bundled GPU sizes (no record on a GPU the catalogue lacks)


def test_the_inferencemax_library_spans_nvidia_and_amd_with_several_levels_each() -> None:
    imx = [r for r in load_records().records if r.publisher == IMX]
    levels = collections.Counter((r.model, r.gpu, r.precision, r.engine) for r in imx)
    assert {g for _, g, _, _ in levels} & NVIDIA and {g for _, g, _, _ in levels} & AMD
    assert len({g for _, g, _, _ in levels}) >= 4
    # the MI300X and MI325X sweeps of DeepSeek-R1: three shapes at five concurrencies each
    for gpu in AMD:
        setups = [r for r in imx if r.gpu == gpu]
        assert len(setups) == 15 and sorted({r.concurrency or 0 for r in setups}) == [4, 8, 16, 32, 64]


def test_the_library_holds_the_common_open_models() -> None:
    models = {r.model for r in load_records().records}
    # DeepSeek-R1-0528 (its FP8 and NVIDIA's FP4 checkpoint), gpt-oss-120b, Kimi-K2.5, Qwen3.5-397B-A17B and
    # MiniMax-M2.5 from InferenceMAX; Llama 3.3 70B, 3.1 8B, 3.2 3B and GLM-5 (with GLM-5.1 under its spec) before
    assert {
        "deepseek-ai/DeepSeek-R1-0528",
        "openai/gpt-oss-120b",
        "Kimi-K2.5-NVFP4",
        "Qwen/Qwen3.5-397B-A17B",
        "MiniMaxAI/MiniMax-M2.5",
        "llama-3.3-70b",
        "llama-3.1-8b",
        "llama-3.2-3b",
        "glm-5",
    } <= models


def test_a_published_sweep_reads_as_one_curve_per_shape() -> None:
    imx = [r for r in load_records().records if r.publisher == IMX and r.gpu == "mi325x"]
    short = next(r for r in imx if r.concurrency == 4 and r.input_tokens < 1500 and r.output_tokens < 1500)
    curve = series_of(short, imx)
    assert [r.concurrency for r in curve] == [4, 8, 16, 32, 64]
    assert curve[-1].requests_per_s > curve[0].requests_per_s  # busier levels serve more


def test_a_sweep_in_the_roofline_fit_says_so_and_the_others_say_they_are_sizing_only() -> None:
    cases = (DATA_DIR / "roofline_cases.yaml").read_text()
    for record in load_records().records:
        if record.publisher != IMX:
            continue
        assert record.source.url is not None
        if record.source.url in cases:
            assert "fitted" in (record.notes or "") and "also" in (record.notes or "")
        else:
            assert "a sizing record only" in (record.notes or "")


def test_deploy_sizes_gpt_oss_on_b200_from_the_published_sweep_and_names_it() -> None:
    found = find_deployments(load_preset("rag-chatbot"), load_catalogs(), "gpt-oss-120b", precisions=("fp4",))
    measured = [d for d in found.deployments if d.evidence_kind == "measurement"]
    # B200 from InferenceMAX's sweep; H100 from GPUStack's performance lab (gpustack.yaml)
    assert measured and {(d.gpu, d.precision) for d in measured} == {("b200", "fp4"), ("h100-sxm", "fp4")}
    assert all(
        d.evidence.startswith(f"measured (published by {IMX}: https://github.com/SemiAnalysisAI/")
        for d in measured
        if d.gpu == "b200"
    )


def test_the_users_own_record_of_the_same_setup_comes_before_the_published(tmp_path: Path) -> None:
    cat = load_catalogs()
    published = next(r for r in cat.records.records if r.id.startswith("imx-gptoss-fp4-4xb200"))
    own = published.model_copy(update={"id": "my-gptoss-b200", "publisher": None, "requests_per_s": 10.0})
    mine = replace(cat, records=RecordCatalog(records=(own, *cat.records.records)))
    found = find_deployments(load_preset("rag-chatbot"), mine, "gpt-oss-120b", precisions=("fp4",))
    measured = [d for d in found.deployments if d.evidence_kind == "measurement" and d.gpu == "b200"]
    assert measured and all("my-gptoss-b200 (your record" in d.evidence for d in measured)


def test_compare_names_the_publisher_of_the_record_it_sizes_from() -> None:
    from calculator.pricing.compare import compare

    option = compare(named_preset("rag-chatbot"), load_catalogs()).option("self_hosted")  # sized from the record
    assert option is not None and option.capacity is not None
    assert any(
        "Measured (published by DataCrunch (h200-benchmarks): https://github.com/datacrunch-research/" in note
        for note in option.notes
    )
