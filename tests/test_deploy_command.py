"""``python -m calculator deploy``: every GPU offer x setup sized for the scenario's peak, ranked by monthly cost.

(``tests/test_deploy.py`` is about something else: the app's deployment.)
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.catalog.catalogs import load_catalogs
from calculator.cli import main
from calculator.present.deploy_charts import pareto_chart, pareto_frame
from calculator.pricing.deployments import find_deployments, pareto_front
from calculator.scenario.inputs import LatencyTarget
from calculator.scenario.model import load_preset, load_scenario

REQUIRED_KEYS = {
    "provider",
    "offer",
    "gpu",
    "gpus_per_replica",
    "precision",
    "replicas",
    "monthly",
    "tokens_per_s_per_user",
    "ttft_ms",
    "meets_target",
    "evidence",
}

# A turn of exactly the shape of the bundled vLLM record of Llama-3.1-8B BF16 on one H100 SXM (7,500 in,
# 2,000 out, nothing cached, 1.5705 req/s: 3,141 output tokens/s / 2,000), so the record applies directly.
# 2,628,000 turns a month round the clock is 2,628,000 / (365/12 x 86,400 s) = 1 req/s on average, 2 at
# the peak (peak-to-average 2).
SMALL = """\
schema_version: 1
name: Small model at the record's shape
as_of: 2026-11-30
workload: {input_tokens: 7500, prefix_share: 0, output_tokens: 2000}
traffic: {turns_per_month: 2628000, peak_to_average: 2, active_hours_per_day: 24}
self_hosting: {record: vllm-llama-3.1-8b-bf16-1xh100-c50-long}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return path


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    code, out, err = run(capsys, "deploy", *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert isinstance(data, list)
    return data


def test_small_model_on_one_offer_is_sized_and_billed_by_hand(capsys: pytest.CaptureFixture[str], small: Path) -> None:
    found = _json(capsys, "--scenario", str(small))
    row = next(
        d for d in found if (d["provider"], d["offer"], d["precision"], d["gpus_per_replica"]) == (
            "lambda", "h100-sxm-1x", "bf16", 1)
    )  # fmt: skip
    # capacity 1.5705 req/s (the record, direct); replicas = ceil(2 / (1.5705 x 0.7)) = ceil(1.819) = 2, plus
    # 1 spare = 3 one-GPU VMs all month: 3 x 730 h x $4.29 = $9,395.10, plus a quarter of a $12,500 engineer
    # ($3,125.00) = $12,520.10
    assert row["evidence_kind"] == "measurement"
    assert "vllm-llama-3.1-8b-bf16-1xh100-c50-long" in str(row["evidence"])
    assert row["requests_per_s_per_replica"] == pytest.approx(1.5705)
    assert row["replicas"] == 3
    assert row["monthly"] == pytest.approx(12520.10, abs=0.005)
    assert row["gpu"] == "h100-sxm" and row["meets_target"] is True


def test_the_list_is_sorted_by_monthly_cost_and_keys_are_the_issues(
    capsys: pytest.CaptureFixture[str], small: Path
) -> None:
    found = _json(capsys, "--scenario", str(small))
    assert len(found) >= 10
    monthly = [float(str(d["monthly"])) for d in found]
    assert monthly == sorted(monthly)
    for item in found:
        assert set(item) >= REQUIRED_KEYS
        assert item["attention"] == "tp"  # Llama-3.1-8B has no MLA latent: data-parallel attention is not tried


def test_spot_offers_appear_only_with_spot(capsys: pytest.CaptureFixture[str]) -> None:
    without = _json(capsys, "--preset", "rag-chatbot")
    with_spot = _json(capsys, "--preset", "rag-chatbot", "--spot")
    assert not any(d["price_kind"] == "spot" for d in without)
    spot = [d for d in with_spot if d["price_kind"] == "spot"]
    assert spot and all(str(d["offer"]).endswith("-spot") for d in spot)  # every spot offer in the sheets is so named
    assert len(with_spot) == len(without) + len(spot)


def test_a_70b_model_in_bf16_does_not_list_one_l4(capsys: pytest.CaptureFixture[str]) -> None:
    # 70.6B x 2 bytes = 141 GB of weights against 24 GiB on an L4; an 8B model (16 GB) fits one
    big = _json(capsys, "--preset", "rag-chatbot", "--model", "llama-3.3-70b", "--precision", "bf16")
    assert not any(d["gpu"] == "l4" and d["gpus_per_replica"] == 1 for d in big)
    assert all(d["precision"] == "bf16" for d in big)
    small = _json(capsys, "--preset", "rag-chatbot", "--model", "llama-3.1-8b", "--precision", "bf16")
    assert any(d["gpu"] == "l4" and d["gpus_per_replica"] == 1 for d in small)


def test_the_table_ranks_those_meeting_the_target(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "deploy", "--preset", "rag-chatbot", "--ttft-ms", "2000", "--tokens-per-s-per-user", "20"
    )
    assert code == 0
    assert "Cheapest meeting it:" in out
    lines = [line for line in out.splitlines() if line[:3].strip().isdigit() and "$" in line]
    assert len(lines) == 10 and all(" yes " in line for line in lines)
    assert "--all lists every one" in out


def test_an_unmeetable_target_names_the_best_achievable_and_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "deploy", "--preset", "rag-chatbot", "--tokens-per-s-per-user", "100000")
    assert code == 0, err
    assert "No configuration meets the target." in out
    assert "Best achievable per-user speed:" in out and "Best achievable TTFT:" in out
    assert "Closest to the target:" in out


def test_latency_target_decides_meets_and_the_cheapest_meeting_is_first_of_those() -> None:
    cat = load_catalogs()
    scenario = load_preset("rag-chatbot")
    target = LatencyTarget(tokens_per_s_per_user=30)
    result = find_deployments(scenario, cat, target=target)
    assert result.meeting and len(result.meeting) < len(result.deployments)
    for d in result.deployments:
        if d.evidence_kind == "estimate":
            assert d.meets_target == (d.tokens_per_s_per_user is not None and d.tokens_per_s_per_user >= 30)
    cheapest = result.cheapest
    assert cheapest is not None
    assert cheapest.monthly == min(d.monthly for d in result.meeting)


def test_pareto_front_has_no_configuration_beaten_on_both_cost_and_speed() -> None:
    result = find_deployments(load_preset("multi-turn-chat"), load_catalogs())
    front = pareto_front(result.deployments)
    assert front
    for f in front:
        assert not any(
            d.monthly < f.monthly and (d.tokens_per_s_per_user or 0) > (f.tokens_per_s_per_user or 0)
            for d in result.deployments
        )


def test_speculative_decoding_is_a_labelled_what_if_of_estimates_only(capsys: pytest.CaptureFixture[str]) -> None:
    plain = _json(capsys, "--preset", "rag-chatbot")
    found = _json(capsys, "--preset", "rag-chatbot", "--speculative-speedup", "1.5")
    what_ifs = [d for d in found if d["what_if"]]
    assert what_ifs and len(found) == len(plain) + len(what_ifs)
    assert all(d["evidence_kind"] == "estimate" and "what-if" in str(d["evidence"]) for d in what_ifs)
    key = ("together", "b200-180gb", "fp8", 1)
    base = next(d for d in plain if (d["provider"], d["offer"], d["precision"], d["gpus_per_replica"]) == key)
    fast = next(d for d in what_ifs if (d["provider"], d["offer"], d["precision"], d["gpus_per_replica"]) == key)
    assert float(str(fast["tokens_per_s_per_user"])) > float(str(base["tokens_per_s_per_user"]))


def _sheet(tmp_path: Path, offers: str) -> Path:
    folder = tmp_path / "sheets"
    folder.mkdir()
    (folder / "tiny.yaml").write_text(
        "schema_version: 1\nprovider: tiny\nname: Tiny\ncurrency: USD\noffers:\n" + offers
    )
    return folder


L4_OFFER = """\
  - kind: dedicated
    id: l4-x1
    gpu: l4
    gpus_per_replica: 1
    versions:
      - effective: 2026-01-01
        source: {document: a test sheet, read: 2026-11-30}
        per_replica_hour: 0.80
"""
NO_SPEC_OFFER = """\
  - kind: gpu_vm
    id: tpu-1x
    gpu: tpu-v9
    billing: hour
    versions:
      - effective: 2026-01-01
        source: {document: a test sheet, read: 2026-11-30}
        per_gpu_hour: 1.00
"""


def test_an_offer_without_a_gpu_spec_is_skipped_and_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sheets = _sheet(tmp_path, L4_OFFER + NO_SPEC_OFFER)
    code, out, err = run(
        capsys, "deploy", "--preset", "rag-chatbot", "--model", "llama-3.1-8b", "--sheets", str(sheets), "--json"
    )
    assert code == 0
    assert "skipped tiny/tpu-1x: no GPU spec for 'tpu-v9'" in err
    assert {d["offer"] for d in json.loads(out)} == {"l4-x1"}


def test_a_model_that_fits_nowhere_says_what_would(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sheets = _sheet(tmp_path, L4_OFFER)
    code, out, err = run(
        capsys, "deploy", "--preset", "rag-chatbot", "--model", "llama-3.3-70b", "--precision", "bf16",
        "--sheets", str(sheets),
    )  # fmt: skip
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "fits no GPU offer" in err and "would fit" in err


def test_a_scenario_file_names_its_model_by_its_sizing_record(small: Path) -> None:
    result = find_deployments(load_scenario(small), load_catalogs())
    assert result.model == "llama-3.1-8b"
    assert all(d.monthly > Decimal(0) for d in result.deployments)


def test_needs_a_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "deploy")
    assert code == 2 and "--preset" in err


BAD_FLAGS = ("--ttft-ms", "--tokens-per-s-per-user", "--latency-percentile", "--speculative-speedup", "--precision")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    flag=st.sampled_from(BAD_FLAGS),
    value=st.one_of(
        st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e-320", "1e308", "", "p100", "fp2", "1", "6", "x"]),
        st.text(max_size=12),
    ),
)
def test_bad_flag_values_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], flag: str, value: str) -> None:
    code, out, err = run(capsys, "deploy", "--preset", "rag-chatbot", f"{flag}={value}", "--json")
    if code == 0:  # a value that happens to be allowed (a tiny TTFT, a percentile): a list, no NaN in it
        data = json.loads(out)
        assert isinstance(data, list)
        assert all(d["monthly"] is None or math.isfinite(float(str(d["monthly"]))) for d in data)
        return
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error:") and "Traceback" not in err


def test_a_model_no_node_holds_runs_over_two_whole_nodes_and_says_so() -> None:
    cat = load_catalogs()
    scenario = load_preset("coding-agent")
    # GLM-5 in BF16: 744B x 2 bytes = 1,488 GB, 186 GB per GPU on 8, more than an H200 (141 GiB = 151 GB) or a
    # B200 (180 GiB = 193 GB, 174 GB at 90%) holds; on 16 GPUs 93 GB each fits.
    bf16 = find_deployments(scenario, cat, "glm-5", precisions=("bf16",)).deployments
    assert bf16 and {d.gpus_per_replica for d in bf16} == {16}
    assert all(d.kind == "gpu_vm" and "2 nodes of 8" in d.evidence for d in bf16)
    # in FP8 (93 GB a GPU on 8) one node of H200s or B200s holds it, so none of theirs spans two; an H100 node
    # does not (80 GiB = 85.9 GB, 77.3 GB at 90%), so H100s do
    fp8 = find_deployments(scenario, cat, "glm-5", precisions=("fp8",)).deployments
    assert max(d.gpus_per_replica for d in fp8 if d.gpu in ("h200-sxm", "b200")) == 8
    assert {d.gpus_per_replica for d in fp8 if d.gpu == "h100-sxm"} == {16}


def test_an_mla_model_is_also_tried_with_data_parallel_attention_which_holds_more_sequences() -> None:
    found = find_deployments(load_preset("coding-agent"), load_catalogs(), "deepseek-v3", precisions=("fp8",))
    pairs = {
        (d.provider, d.offer, d.gpus_per_replica, d.attention): d
        for d in found.deployments
        if not d.what_if and d.evidence_kind == "estimate"
    }
    both = [k[:3] for k in pairs if k[3] == "dp" and (*k[:3], "tp") in pairs]
    assert both, "every 8-GPU offer holding DeepSeek-V3 in FP8 lists both layouts"
    for key in both:
        tp, dp = pairs[(*key, "tp")], pairs[(*key, "dp")]
        # with tensor-parallel attention the 576-wide latent (512 + 64 rope) is copied on all 8 GPUs, so the
        # KV cache holds an eighth of the tokens data-parallel attention holds (memory's fit: 19 vs 120
        # sequences of 32k on 8x H200): a replica serves more, and never needs more replicas
        assert dp.requests_per_s_per_replica > tp.requests_per_s_per_replica
        assert dp.replicas <= tp.replicas
        assert "DP attention" in dp.label and "DP attention" not in tp.label


def test_the_model_deployed_is_named_with_why_and_a_substitute_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    # rag-chatbot buys Llama 3.3 70B from Together (open weights, a spec here): the same model self-hosted
    code, out, _ = run(capsys, "deploy", "--preset", "rag-chatbot")
    assert code == 0 and "Model: llama-3.3-70b, the scenario's serverless model" in out
    # multi-turn-chat buys Claude Haiku (closed): the GPUs run another model, and the answer says so
    code, out, _ = run(capsys, "deploy", "--preset", "multi-turn-chat")
    assert code == 0 and "NOT the serverless model: claude-haiku-4-5 (anthropic) has closed weights" in out
    code, out, _ = run(capsys, "deploy", "--preset", "multi-turn-chat", "--model", "qwen3-32b")
    assert code == 0 and "Model: qwen3-32b, the model asked for" in out


def test_fp8_only_on_gpus_with_fp8_and_int4_weights_anywhere() -> None:
    cat = load_catalogs()
    found = find_deployments(load_preset("rag-chatbot"), cat, "llama-3.1-8b", precisions=("fp8", "int4")).deployments
    fp8_gpus = {d.gpu for d in found if d.precision == "fp8"}
    # the A100 and A10(G) data sheets give no FP8 rate; the H100, H200, B200, L4 and L40S do
    assert fp8_gpus and not fp8_gpus & {"a100-80gb-sxm", "a100-40gb", "a100-80gb-pcie", "a10", "a10g"}
    assert {"h100-sxm", "l40s"} <= fp8_gpus
    assert {"a100-80gb-sxm", "a10g"} <= {d.gpu for d in found if d.precision == "int4"}


def test_the_chart_is_valid_vega_lite_with_the_front_drawn_through_its_points() -> None:
    result = find_deployments(load_preset("multi-turn-chat"), load_catalogs(), target=LatencyTarget(ttft_ms=300))
    points = pareto_frame(result.deployments)
    front = pareto_front(result.deployments)
    assert points["pareto"].sum() == len(front)
    spec = pareto_chart(points, "USD").to_dict()  # validated against the Vega-Lite schema Altair ships
    json.loads(json.dumps(spec, allow_nan=False))  # strict JSON: no NaN reaches the browser
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["circle", "line"]
    line = spec["layer"][1]
    rows = spec["datasets"][line["data"]["name"]]
    assert sorted(r["configuration"] for r in rows) == sorted(d.label for d in front)


def test_a_date_before_the_sheets_is_one_line_naming_the_date(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "deploy", "--preset", "rag-chatbot", "--as-of", "2020-01-01")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: --as-of: no GPU VM or dedicated (spot left out) offer in the price sheets can be "
                          "priced on 2020-01-01")  # fmt: skip


def test_offers_without_a_price_on_the_date_are_counted_not_listed(capsys: pytest.CaptureFixture[str]) -> None:
    # Hugging Face's endpoints are priced from 2025-07-09, most GPU VMs only from 2026: on 2025-08-01 the
    # others are left out, in one line
    code, out, err = run(capsys, "deploy", "--preset", "rag-chatbot", "--as-of", "2025-08-01", "--json")
    assert code == 0
    assert err.count("\n") == 1 and "offer(s) with no price on 2025-08-01" in err
    assert "huggingface" in {d["provider"] for d in json.loads(out)}
