"""The bundled library of published sweeps (measurements/: InferenceMAX / InferenceX, GPUStack's performance lab
and the pages bundled before) covers the common open models on NVIDIA and AMD GPUs, and `compare` and `deploy`
size from it where model, GPU, count and precision match: evidence "measured (published by ...)" naming the
source, the user's own record of the same setup first.

The independently known number: GPUStack's page docs/performance-lab/gpt-oss-20b/h100.md (gpustack/gpustack at
47277d79, read 2026-12-02), section "1. Choosing the Inference Engine", `vllm serve openai/gpt-oss-20b` on one H100
SXM, ShareGPT with 1,000 prompts sent at once: "Request throughput (req/s): 40.30", "Output token throughput
(tok/s): 7817.03", 215,312 input and 193,979 generated tokens (215.3 in / 194.0 out a request).
"""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal

import pytest

from calculator.catalog.catalogs import Catalogs, load_catalogs
from calculator.catalog.measurements import RecordCatalog, ThroughputRecord
from calculator.planning.deployments import find_deployments
from calculator.pricing.compare import compare
from calculator.scenario.inputs import TurnShape
from calculator.scenario.model import GpuVmChoice, Scenario, ServerlessChoice, load_preset

GPUSTACK = "GPUStack (performance lab)"
PAGE = "https://github.com/gpustack/gpustack/blob/47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d/docs/performance-lab/"
RECORD = "gpustack-gpt-oss-20b-fp4-1xh100-sxm-vllm-sharegpt-in215-out194"
AMD = {"mi300x", "mi325x"}


@pytest.fixture(scope="module")
def cat() -> Catalogs:
    return load_catalogs()


def _open_model(r: ThroughputRecord, cat: Catalogs) -> str:
    """One name per open model: its id in models/, else the published name without organisation or a
    quantisation suffix (NVIDIA's DeepSeek-R1-0528-FP4 is DeepSeek-R1-0528)."""
    assert r.model is not None
    spec = cat.models.find(r.model)
    if spec is not None:
        return spec.id
    return re.sub(r"-(nvfp4|fp4|fp8)$", "", r.model.split("/")[-1].lower())


def test_the_published_library_covers_fifteen_open_models_on_seven_gpu_types_amd_among_them(cat: Catalogs) -> None:
    published = [r for r in cat.records.records if r.publisher]
    assert {_open_model(r, cat) for r in published} == {
        # InferenceMAX / InferenceX
        "deepseek-r1-0528", "gpt-oss-120b", "kimi-k2.5", "qwen3.5-397b-a17b", "minimax-m2.5",
        # GPUStack's performance lab
        "gpt-oss-20b", "qwen3-32b", "qwen3-14b", "qwen3-235b-a22b-instruct-2507", "glm-4.6", "deepseek-v3.2",
        # the pages bundled before (DataCrunch, Spheron, Lambda, Vultr and others)
        "glm-5", "llama-3.3-70b", "llama-3.1-8b", "llama-3.2-3b",
    }  # fmt: skip
    gpus = {r.gpu for r in published}
    assert gpus == {"b200", "h100-sxm", "h200-sxm", "a100-80gb-sxm", "l40s", "mi300x", "mi325x"}
    assert gpus & AMD == AMD
    # nine of them are models of models/, so they size deployments (the others are listed, with their sources)
    sizing = {_open_model(r, cat) for r in published if r.model and cat.models.find(r.model)}
    assert len(sizing) == 9 and {"gpt-oss-20b", "qwen3-32b", "glm-4.6", "deepseek-v3.2"} <= sizing


def test_every_gpustack_record_states_its_setup_run_and_source(cat: Catalogs) -> None:
    records = [r for r in cat.records.records if r.publisher == GPUSTACK]
    assert len(records) == 99
    for r in records:
        assert r.complete and r.engine in {"vllm", "sglang", "tensorrt-llm"} and r.engine_version
        assert r.tool == "vllm bench serve" and r.model_path and r.prefix_share == 0
        assert r.source.url is not None and r.source.url.startswith(PAGE)
        assert r.output_tokens >= 10  # the 4-token runs time request overhead: left out
        assert r.notes and ("roofline_cases.yaml" in r.notes)


def test_a_gpustack_run_that_is_also_a_roofline_case_names_the_case() -> None:
    from calculator.catalog.datafile import DATA_DIR

    cases = (DATA_DIR / "roofline_cases.yaml").read_text()
    for r in load_catalogs().records.records:
        if r.publisher != GPUSTACK:
            continue
        named = re.search(r"(gpustack-[a-z0-9.-]+-L\d+) in roofline_cases.yaml \(split (fit|holdout)\)", r.notes or "")
        if named:
            case, split = named.groups()
            block = cases.split(f"- id: {case}\n", 1)[1].split("  - id:", 1)[0]
            assert f"split: {split}" in block  # the split the note names is the case's own
        else:
            assert "a sizing record only" in (r.notes or "")


def _sharegpt_shape(scenario: Scenario) -> Scenario:
    """``scenario`` with the run's own traffic shape: 215 in / 194 out, nothing shared, no latency target."""
    shape = TurnShape(input_tokens=215, prefix_share=Decimal(0), output_tokens=194)
    hosting = scenario.self_hosting.model_copy(update={"latency_target": None})
    return scenario.model_copy(update={"workload": shape, "self_hosting": hosting})


def test_deploy_sizes_gpt_oss_20b_on_one_h100_from_gpustacks_run_at_its_40_3_requests_per_second(
    cat: Catalogs,
) -> None:
    # no precision asked: the search tries gpt-oss's own MXFP4 checkpoint (fp4) beside BF16 and FP8
    found = find_deployments(_sharegpt_shape(load_preset("rag-chatbot")), cat, "gpt-oss-20b")
    one = [d for d in found.deployments if d.gpu == "h100-sxm" and d.gpus_per_replica == 1 and d.precision == "fp4"]
    assert one and all(d.evidence_kind == "measurement" for d in one)
    assert all(d.evidence.startswith(f"measured (published by {GPUSTACK}: {PAGE}gpt-oss-20b/h100.md) ") for d in one)
    assert all(f"{RECORD} (vllm at 40.3 req/s; direct)" in d.evidence for d in one)  # the run's own shape
    assert all(d.requests_per_s_per_replica == pytest.approx(40.30) for d in one)  # GPUStack's "40.30"


def test_compare_sizes_a_gpt_oss_20b_vm_on_h100_from_the_published_run_and_names_it(cat: Catalogs) -> None:
    scenario = _sharegpt_shape(load_preset("rag-chatbot")).model_copy(
        update={
            "serverless": ServerlessChoice(provider="fireworks", model="accounts/fireworks/models/gpt-oss-20b"),
            "gpu_vm": GpuVmChoice(provider="aws", offer="h100-sxm-1x"),
        }
    )
    option = compare(scenario, cat).option("self_hosted")
    assert option is not None and option.capacity is not None
    assert option.capacity.record_id == RECORD and option.capacity.requests_per_s == pytest.approx(40.30)
    assert any(f"Measured (published by {GPUSTACK}: {PAGE}gpt-oss-20b/h100.md)" in note for note in option.notes)


def test_the_users_own_run_of_the_same_setup_is_sized_from_before_the_published_one(cat: Catalogs) -> None:
    published = cat.records.get(RECORD)
    own = published.model_copy(update={"id": "my-gpt-oss-20b-h100", "publisher": None, "requests_per_s": 30.0})
    mine = replace(cat, records=RecordCatalog(records=(*cat.records.records, own)))
    found = find_deployments(_sharegpt_shape(load_preset("rag-chatbot")), mine, "gpt-oss-20b")
    one = [d for d in found.deployments if d.gpu == "h100-sxm" and d.gpus_per_replica == 1 and d.precision == "fp4"]
    assert one and all("my-gpt-oss-20b-h100 (your record" in d.evidence for d in one)
    assert all(d.requests_per_s_per_replica == pytest.approx(30.0) for d in one)
    assert not any(GPUSTACK in d.evidence for d in one)
