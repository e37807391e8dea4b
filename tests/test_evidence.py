"""A scenario carries the user's own evidence, and every answer uses it: records, prefix analysis, load profile."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from calculator.catalog.catalogs import Catalogs
from calculator.cli import main
from calculator.planning.load_profile import profile_costs
from calculator.pricing.compare import compare, curves
from calculator.scenario.evidence import prefix_evidence
from calculator.scenario.load import preset_profile
from calculator.scenario.model import (
    GpuVmChoice,
    Scenario,
    dump_scenario,
    load_preset,
    load_scenario_text,
    with_evidence_records,
    with_load_profile,
    with_prefix_evidence,
)
from calculator.traffic.prefix import analyse_log

from .conftest import SEED_DATE

MOONCAKE = Path(__file__).resolve().parent / "fixtures" / "traces" / "mooncake" / "synthetic_trace.jsonl"
BUNDLED = "sglang-llama-3.3-70b-bf16-4xh200-rate4"


def _agent() -> Scenario:
    # sized from the bundled record by name on one-GPU VMs, as these tests were written (the preset itself
    # now runs GLM-5 by estimate, record: auto, on an 8x B200 node)
    preset = load_preset("coding-agent")
    hosting = preset.self_hosting.model_copy(update={"record": BUNDLED})
    gpu_vm = GpuVmChoice(provider="nebius", offer="h200-sxm-1x")
    return preset.model_copy(update={"as_of": SEED_DATE, "self_hosting": hosting, "gpu_vm": gpu_vm})


def test_gpus_are_sized_from_the_users_own_record_when_the_scenario_holds_one(catalogs: Catalogs) -> None:
    # The bundled record served 4.042 req/s; the user's own run of the same setup served four times that
    # (enough for one replica fewer at the coding agent's peak whatever the roofline's fitted efficiencies).
    bundled = catalogs.records.get(BUNDLED)
    mine = bundled.model_copy(update={"id": "my-replay", "requests_per_s": 16.168, "notes": "our replay"})
    scenario = with_evidence_records(_agent(), (mine,), size_from="my-replay")
    before = compare(_agent(), catalogs).option("self_hosted")
    after = compare(scenario, catalogs).option("self_hosted")
    assert before is not None and after is not None and after.capacity is not None and before.capacity is not None
    assert after.capacity.record_id == "my-replay"
    assert after.capacity.requests_per_s > before.capacity.requests_per_s
    assert after.monthly < before.monthly


def test_the_scenario_file_keeps_its_evidence_and_prices_the_same(catalogs: Catalogs) -> None:
    mine = catalogs.records.get(BUNDLED).model_copy(update={"id": "my-replay", "requests_per_s": 6.0})
    scenario = with_load_profile(
        with_evidence_records(_agent(), (mine,), size_from="my-replay"), preset_profile("business_hours")
    )
    again = load_scenario_text(dump_scenario(scenario))
    assert again.evidence == scenario.evidence
    assert [o.monthly for o in compare(again, catalogs).options] == [
        o.monthly for o in compare(scenario, catalogs).options
    ]


def test_an_own_record_with_a_bundled_id_replaces_it(catalogs: Catalogs) -> None:
    mine = catalogs.records.get(BUNDLED).model_copy(update={"requests_per_s": 2.021})
    scenario = with_evidence_records(_agent(), (mine,), size_from=None)
    option = compare(scenario, catalogs).option("self_hosted")
    assert option is not None and option.capacity is not None and option.capacity.record_id == BUNDLED
    default = compare(_agent(), catalogs).option("self_hosted")
    assert default is not None and default.capacity is not None
    assert option.capacity.requests_per_s < default.capacity.requests_per_s


def test_two_own_records_with_one_id_are_refused_by_name() -> None:
    text = dump_scenario(_agent()) + (
        "evidence:\n  records:\n"
        + "".join(
            f"  - {{id: twin, model: m, gpu: h100-sxm, gpu_count: 1, precision: bf16, requests_per_s: {r},"
            " source: {document: ours, read: 2026-11-01}}\n"
            for r in (1, 2)
        )
    )
    with pytest.raises(ValueError, match="twin"):
        load_scenario_text(text)


def test_a_prefix_analysis_carries_its_shares_and_tokens_per_turn_into_the_scenario(catalogs: Catalogs) -> None:
    report = analyse_log(MOONCAKE)
    evidence = prefix_evidence(report)
    scenario = with_prefix_evidence(_agent(), evidence)
    w = scenario.workload
    assert w.input_tokens == round(report.mean_input_tokens) and w.input_tokens != 20_000
    assert report.mean_output_tokens is not None and w.output_tokens == round(report.mean_output_tokens)
    assert float(w.prefix_share) == pytest.approx(report.prefix_share, abs=5e-4)
    assert scenario.evidence.prefix == evidence and evidence.source.endswith("synthetic_trace.jsonl")
    # The Mooncake paper reports about 66% prefix reuse for this synthetic workload (FAST'25, Table 2).
    assert float(evidence.prefix_share) == pytest.approx(0.65, abs=0.02)


def test_the_seed_turn_measured_in_a_log_prices_as_the_seed_says(catalogs: Catalogs) -> None:
    # A measurement of exactly the seed's turn: 20,000 in (18,000 repeated, always cached), 500 out.
    evidence = prefix_evidence(analyse_log(MOONCAKE)).model_copy(
        update={
            "prefix_share": Decimal("0.9"),
            "hit_rate": Decimal(1),
            "mean_input_tokens": 20_000,
            "mean_output_tokens": 500,
        }
    )
    base = load_preset("coding-agent").model_copy(update={"as_of": SEED_DATE})
    base = base.model_copy(
        update={"workload": base.workload.model_copy(update={"input_tokens": 1, "output_tokens": 1})}
    )
    result = compare(with_prefix_evidence(base, evidence), catalogs)
    assert result.turn is not None
    assert result.turn.reused.cost_per_turn == Decimal("0.00968")
    assert result.turn.no_reuse.cost_per_turn == Decimal("0.0302")


def test_prefix_save_writes_a_scenario_that_compare_prices_with_the_measurement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], catalogs: Catalogs
) -> None:
    out = tmp_path / "measured.yaml"
    assert main(["prefix", str(MOONCAKE), "--preset", "coding-agent", "--save", str(out), "--json"]) == 0
    bill = json.loads(capsys.readouterr().out)["monthly_cost"]
    saved = load_scenario_text(out.read_text())
    assert saved.evidence.prefix is not None and saved.evidence.prefix.source.endswith("synthetic_trace.jsonl")
    assert saved.workload.input_tokens == bill["measured"]["input_tokens"]
    assert main(["compare", "--scenario", str(out), "--json"]) == 0
    priced = {o["option"]: o["monthly"] for o in json.loads(capsys.readouterr().out)["options"]}
    assert priced == {row["option"]: row["measured"] for row in bill["options"]}


def test_prefix_save_without_a_scenario_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prefix", str(MOONCAKE), "--save", str(tmp_path / "x.yaml")]) == 2
    assert "--save" in capsys.readouterr().err and not (tmp_path / "x.yaml").exists()


def test_planning_uses_the_load_profile_the_scenario_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], catalogs: Catalogs
) -> None:
    office = preset_profile("business_hours", 1.2)
    scenario = with_load_profile(_agent(), office)
    assert scenario.load_profile == office and _agent().load_profile.name == "scenario"
    path = tmp_path / "office.yaml"
    path.write_text(dump_scenario(scenario))
    assert main(["profile", "--scenario", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"]["name"] == "business_hours"
    expected = profile_costs(scenario, catalogs, office)
    assert data["serverless"]["monthly"] == float(expected.options()["serverless"].monthly)
    assert data["self_hosted_autoscaled"]["monthly"] == float(expected.self_hosted_autoscaled.monthly)  # type: ignore[union-attr]


@pytest.mark.parametrize("autoscale", [False, True])
def test_compare_prices_owned_gpus_under_the_load_profile_the_scenario_holds(
    catalogs: Catalogs, autoscale: bool
) -> None:
    # Plan and Compare answer for the same scenario: with a kept profile, Compare's GPU options are
    # billed hour by hour under it, exactly as Plan prices them.
    office = preset_profile("business_hours", 1.2)
    base = _agent()
    hosting = base.self_hosting.model_copy(update={"autoscale": autoscale})
    scenario = with_load_profile(base.model_copy(update={"self_hosting": hosting}), office)
    result = compare(scenario, catalogs)
    planned = profile_costs(scenario, catalogs, office).options()
    for option in ("dedicated", "self_hosted"):
        exact = result.option(option)
        assert exact is not None
        assert (exact.monthly, exact.replicas, exact.gpus) == (
            planned[option].monthly,
            planned[option].replicas,
            planned[option].gpus,
        )
    # the break-even sweep bills the same counts
    sweep = curves(result.resolution)
    turns = float(scenario.traffic.turns_per_month)
    for option in ("dedicated", "self_hosted"):
        swept = Decimal(repr(float(sweep[option](np.array([turns]))[0])))
        assert abs(swept - planned[option].monthly) <= Decimal("0.01")
    # and it is not the traffic model's answer: office hours on weekdays only. With fixed replicas for the
    # peak the two bills differ only if the two peaks need different replica counts, which moves with the
    # roofline's fitted efficiencies, so the difference is asserted where autoscaling follows the hours.
    without = compare(base.model_copy(update={"self_hosting": hosting}), catalogs).option("self_hosted")
    assert without is not None
    if autoscale:
        assert result.option("self_hosted") != without


def test_an_imported_benchmark_file_sizes_gpus_with_the_model_specs_parameter_counts(catalogs: Catalogs) -> None:
    # SGLang's bench_serving lines say neither the model nor its size; the user names the model, and its
    # spec (models/llama.yaml: 70.6B) supplies the parameter counts sizing needs.
    from calculator.measure.importers import import_file

    online = (
        Path(__file__).resolve().parent / "fixtures" / "bench" / "sglang" / "h200_llama_3_3_70b_online_output.jsonl"
    )
    records = import_file(online, model="llama-3.3-70b", gpu="h200-sxm", gpu_count=4, precision="bf16")
    mine = records[3].model_copy(update={"id": "our-sglang-run"})
    assert mine.params_total_b is None
    result = compare(with_evidence_records(_agent(), (mine,), size_from="our-sglang-run"), catalogs)
    option = result.option("self_hosted")
    assert option is not None and option.capacity is not None and option.capacity.record_id == "our-sglang-run"
    assert result.resolution.self_hosted is not None
    assert result.resolution.self_hosted.record.params_total_b == catalogs.models.get("llama-3.3-70b").params_total_b
