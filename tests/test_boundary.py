"""Input is checked where it enters, against limits the domain sets; output is always true and readable.

Issue 15, parts 1 and 6. Each command the issue found ending in a traceback now ends with exit 2 and
one line naming the flag and what is allowed; a scenario file with the same value is refused with the
same range; the flag converters and the models agree on every value (a property); what passes gives
finite figures and valid JSON; a closed pipe ends the command quietly.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from calculator.catalog import limits
from calculator.catalog.datafile import DataFileError
from calculator.catalog.limits import Limit
from calculator.cli import console, flags, main
from calculator.errors import InputError
from calculator.scenario.inputs import EstimateSetup, Fx, SelfHosting, Traffic, TurnShape
from calculator.scenario.load import LoadProfile
from calculator.scenario.model import dump_scenario, load_preset, load_scenario_text

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "tests" / "fixtures" / "traces" / "mooncake" / "conversation_trace.jsonl"
TTL = ["ttl", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--prefix-tokens", "5000"]
TURN = [
    "turn",
    "--provider",
    "lyceum",
    "--model",
    "GLM-5.3",
    "--as-of",
    "2026-10-30",
    "--input-tokens",
    "20000",
    "--prefix-share",
    "0.9",
    "--output-tokens",
    "500",
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def strict_json(text: str) -> Any:
    """JSON as the standard defines it: Infinity and NaN are not JSON."""

    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


# --- part 1: the issue's command lines end in one line, exit 2 ---------------------------------------------

DIGITS_321 = "9" * 321
PREFIX_AWARE = ["prefix", str(LOG), "--routing", "prefix_aware", "--replicas", "4"]
ISSUE_EXAMPLES = [
    ([*TURN, "--turns", "10000000000000000000000000000"], "--turns", limits.TURNS.allowed),
    (["compare", "--preset", "coding-agent", "--peak-to-average", "1e308"], "--peak-to-average", "2,628,000"),
    (["compare", "--preset", "coding-agent", "--active-hours-per-day", "1e-320"], "--active-hours-per-day", "1/60"),
    (["compare", "--preset", "coding-agent", "--target-utilisation", "1e-320"], "--target-utilisation", "0.01 to 1"),
    (["hybrid", "--preset", "coding-agent", "--burst", "inf"], "--burst", "finite"),
    (["fit", "--model", "llama-3.3-70b", "--gpu", "h100-sxm", "--context", DIGITS_321], "--context", "321-digit"),
    (["prefix", str(LOG), "--routing", "prefix_aware", "--replicas", "4", "--balance", "inf"], "--balance", "finite"),
    (
        ["prefix", str(LOG), "--routing", "prefix_aware", "--replicas", "4", "--balance", "1e308"],
        "--balance",
        "100,000",
    ),
    (["compare", "--preset", "a" * 300], "--preset", "not a preset name"),
    (["compare", "--preset", "../../x"], "--preset", "not a preset name"),
    (["compare", "--preset", "../scenarios/coding-agent"], "--preset", "not a preset name"),
    ([*TTL, "--gap-median-seconds", "60", "--turns-per-session", "1e308"], "--turns-per-session", "1,000,000"),
    (
        ["profile", "--preset", "coding-agent", "--turns-per-month", "9999999999999"],
        "--turns-per-month",
        "1,000,000,000,000",
    ),
]


@pytest.mark.parametrize(("argv", "flag", "allowed"), ISSUE_EXAMPLES)
def test_the_issues_overflowing_numbers_end_in_one_line_naming_the_flag_and_the_limit(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str, allowed: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{flag}:" in err and allowed in err, err
    assert len(err) < 700  # a 300-character name or 321 digits are not echoed whole


def test_a_preset_name_never_names_a_path_outside_the_presets() -> None:
    for name in ("../../x", "../scenarios/coding-agent", "/etc/passwd", "coding-agent/../coding-agent", ".hidden", ""):
        with pytest.raises(InputError, match="not a preset name"):
            load_preset(name)
    assert load_preset("coding-agent").name.startswith("Coding agent")


# --- part 1: the same limits in scenario files ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "key", "value", "flag", "limit"),
    [
        ("traffic", "turns_per_month", 10**13, "--turns-per-month", limits.TURNS_PER_MONTH),
        ("traffic", "peak_to_average", 1e308, "--peak-to-average", limits.PEAK_TO_AVERAGE),
        ("traffic", "active_hours_per_day", 1e-320, "--active-hours-per-day", limits.ACTIVE_HOURS),
        ("workload", "input_tokens", 10**8, "--input-tokens", limits.TOKENS),
        ("self_hosting", "target_utilisation", 0.001, "--target-utilisation", limits.UTILISATION),
        ("self_hosting", "spare_replicas", 10**6, "--spare-replicas", limits.REPLICAS),
        ("fx", "usd_per_eur", 1000, "--usd-per-eur", limits.USD_PER_EUR),
    ],
)
def test_a_scenario_file_and_the_flag_refuse_the_same_value_with_the_same_range(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    section: str,
    key: str,
    value: float,
    flag: str,
    limit: Limit,
) -> None:
    data = load_preset("coding-agent").model_dump(mode="json")
    data[section][key] = value
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML; a float stays a float, 1e-320 included
    code, _, file_err = run(capsys, "compare", "--scenario", str(path))
    assert code == 2 and f"{section}.{key}:" in file_err and f"(allowed: {limit.allowed})" in file_err, file_err
    code, _, flag_err = run(capsys, "compare", "--preset", "coding-agent", flag, repr(value))
    assert code == 2 and f"{flag}:" in flag_err and f"(allowed: {limit.allowed})" in flag_err, flag_err


def test_a_scenario_whose_peak_holds_more_than_the_month_is_refused_on_both_paths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 2,000,000 is within the field's range, but within 10 active hours a day it is 4.8 million times the
    # month's mean: more than a month's turns in one second
    scenario = load_preset("coding-agent")
    assert scenario.traffic.active_hours_per_day == 10
    text = dump_scenario(scenario).replace("peak_to_average: 2.0", "peak_to_average: 2000000.0")
    with pytest.raises(DataFileError, match="4.8e\\+06 times the month's mean rate"):
        load_scenario_text(text)
    code, _, err = run(capsys, "compare", "--preset", "coding-agent", "--peak-to-average", "2000000")
    assert code == 2 and "4.8e+06 times the month's mean rate" in err and err.count("\n") == 1


def test_a_turn_longer_than_any_context_is_refused() -> None:
    TurnShape(input_tokens=9_000_000, prefix_share=Decimal(0), output_tokens=1_000_000)
    with pytest.raises(ValidationError, match="one sequence of 10,000,001"):
        TurnShape(input_tokens=9_000_001, prefix_share=Decimal(0), output_tokens=1_000_000)


def test_a_record_with_an_infinite_rate_is_refused_where_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "records"
    records.mkdir()
    published = (ROOT / "calculator" / "data" / "measurements" / "published.yaml").read_text()
    (records / "mine.yaml").write_text(published.replace("requests_per_s: 4.042", "requests_per_s: .inf", 1))
    for command in (["records"], ["compare", "--preset", "coding-agent"]):
        code, _, err = run(capsys, *command, "--records", str(records))
        assert code == 2 and "requests_per_s: Input should be a finite number" in err and err.count("\n") == 1


def test_a_load_profile_cannot_put_more_than_a_month_into_one_second() -> None:
    flat = LoadProfile(name="flat", weights=(1.0,) * 24, burst=2_000_000)
    with pytest.raises(InputError, match="times the month's mean rate") as raised:
        LoadProfile(name="office", weights=(1.0,) * 8 + (0.0,) * 16, days_per_week=5).with_burst(2_000_000)
    assert raised.value.field == "load_profile.burst"
    assert flat.peak_to_average == 2_000_000
    with pytest.raises(ValidationError, match="less than 0.23"):
        LoadProfile(name="rare", weights=(1.0,) * 24, days_per_week=1e-320)


def test_growth_that_would_pass_a_months_limit_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys,
        "growth",
        "--preset",
        "coding-agent",
        "--start-turns-per-month",
        "1000000000000",
        "--growth-per-month",
        "0.01",
    )
    assert code == 2 and err.startswith("error: --growth-per-month:") and "by month 2" in err


def test_the_core_functions_apply_the_same_limits_as_the_flags() -> None:
    """The app calls these directly: a page gets the limit even where it has no pydantic model."""
    from calculator.capacity.memory import fit
    from calculator.catalog.gpus import load_gpu_specs
    from calculator.catalog.models import load_model_specs

    model = load_model_specs().get("llama-3.3-70b")
    gpu = load_gpu_specs().get("h100-sxm")
    with pytest.raises(InputError, match="more than 10,000,000 tokens") as raised:
        fit(model, gpu, "bf16", context=10**321)
    assert raised.value.field == "context"
    with pytest.raises(InputError, match="less than 1"):
        fit(model, gpu, "bf16", context=0)  # not the model's default: 0 is not a context
    with pytest.raises(InputError, match="more than 1,024 GPUs"):
        fit(model, gpu, "bf16", gpus=10**6)


# --- part 1: flags and models agree on every value (a property) -----------------------------------------------


def _model_accepts(build: Callable[[Any], BaseModel], value: Any) -> bool:
    try:
        build(value)
    except ValidationError:
        return False
    return True


_FLAT = (1.0,) * 24
PAIRS: list[tuple[Callable[[str], Any], Callable[[Any], BaseModel], bool]] = [
    (flags.tokens, lambda v: TurnShape(input_tokens=v, prefix_share=Decimal(0), output_tokens=0), True),
    (flags.turns_per_month, lambda v: Traffic(turns_per_month=v), True),
    (flags.peak_to_average, lambda v: Traffic(turns_per_month=1, peak_to_average=v, active_hours_per_day=24), False),
    (flags.peak_to_average, lambda v: LoadProfile(name="p", weights=_FLAT, burst=v), False),
    (flags.active_hours, lambda v: Traffic(turns_per_month=1, peak_to_average=1, active_hours_per_day=v), False),
    (flags.utilisation, lambda v: SelfHosting(target_utilisation=v), False),
    (flags.replicas, lambda v: SelfHosting(spare_replicas=v), True),
    (flags.minutes, lambda v: SelfHosting(build_minutes_per_change=v), False),
    (flags.engineer_share, lambda v: SelfHosting(engineer_share=v), False),
    (flags.usd_per_eur, lambda v: Fx(usd_per_eur=v), False),
    (flags.gpus, lambda v: EstimateSetup(model="m", gpus_per_replica=v), True),
]
EDGES = [0, 1, 1e-320, 1e-6, 0.01, 1 / 60, 0.23, 1024, 1440, 100_000, 2_628_000, 10**7, 10**12, 1e308]
floats = st.one_of(
    st.sampled_from(EDGES).flatmap(lambda e: st.sampled_from([e, -e, e * (1 + 1e-9), e * (1 - 1e-9)])),
    st.floats(allow_nan=True, allow_infinity=True),
)
wholes = st.one_of(
    st.sampled_from([int(e) for e in EDGES if e >= 1 and e < 1e20]).flatmap(
        lambda e: st.sampled_from([e - 1, e, e + 1])
    ),
    st.integers(min_value=-(10**40), max_value=10**40),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=st.sampled_from(PAIRS), data=st.data())
def test_a_flag_accepts_exactly_what_the_model_behind_it_accepts(
    pair: tuple[Callable[[str], Any], Callable[[Any], BaseModel], bool], data: st.DataObject
) -> None:
    convert, build, whole = pair
    value = data.draw(wholes if whole else floats)
    text = str(value) if whole else repr(value)
    try:
        convert(text)
        flag_accepts = True
    except argparse.ArgumentTypeError as exc:
        flag_accepts = False
        assert "\n" not in str(exc)
    assert flag_accepts == _model_accepts(build, value), (convert.__name__, text)


# --- part 6: what passes gives finite figures and valid JSON ----------------------------------------------------


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    turns=st.sampled_from(["0", "1", "1000000000000"]),
    peak=st.sampled_from(["1", "2190", "2628000"]),
    hours=st.sampled_from(["0.02", "1", "24"]),
    utilisation=st.sampled_from(["0.01", "1"]),
    tokens=st.sampled_from([("0", "0"), ("1", "1"), ("200000", "100000")]),
    autoscale=st.booleans(),
)
def test_every_accepted_extreme_prices_to_finite_numbers_and_valid_json(
    capsys: pytest.CaptureFixture[str],
    turns: str,
    peak: str,
    hours: str,
    utilisation: str,
    tokens: tuple[str, str],
    autoscale: bool,
) -> None:
    argv = [
        "compare",
        "--preset",
        "coding-agent",
        "--turns-per-month",
        turns,
        "--peak-to-average",
        peak,
        "--active-hours-per-day",
        hours,
        "--target-utilisation",
        utilisation,
        "--input-tokens",
        tokens[0],
        "--output-tokens",
        tokens[1],
        "--spare-replicas",
        "100000",
        "--json",
        *(["--autoscale"] if autoscale else []),
    ]
    code, out, err = run(capsys, *argv)
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:  # only the month's peak bound or a model that cannot hold the turn may refuse it
        assert err.count("\n") == 1 and ("month's mean rate" in err or "cannot hold one sequence" in err), err
        return
    data = strict_json(out)
    for option in data["options"]:
        assert math.isfinite(option["monthly"]) and option["monthly"] >= 0


def test_the_issues_infinite_ttl_figures_are_refused_and_json_output_is_always_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, *TTL, "--gap-median-seconds", "60", "--turns-per-session", "1e308", "--json")
    assert code == 2 and out == "" and "--turns-per-session:" in err
    code, out, _ = run(capsys, *TTL, "--gap-median-seconds", "60", "--turns-per-session", "1000000", "--json")
    data = strict_json(out)
    assert code == 0 and data["ttls"][0]["cost_per_month"] > 0


def test_a_figure_with_no_finite_value_is_null_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    console.emit(
        {"a": math.inf, "b": [math.nan, 1.5], "c": Decimal("Infinity"), "d": np.float64("nan"), "e": np.int64(3)}
    )
    assert strict_json(capsys.readouterr().out) == {"a": None, "b": [None, 1.5], "c": None, "d": None, "e": 3}


def test_prefix_balance_is_printed_as_the_finite_share_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "prefix", str(LOG), "--routing", "prefix_aware", "--replicas", "4", "--balance", "100000"
    )
    assert code == 0 and "balance 10000000%" in out and "inf" not in out


# --- part 6: a closed pipe ends the command quietly -------------------------------------------------------------


class _ClosedPipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_stops_early_ends_the_command_quietly_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["sheets", "--history"]) == 0
    assert main(["sheets", "--history", "--json"]) == 0


def test_sheets_history_into_a_closed_pipe_exits_0_with_nothing_on_stderr() -> None:
    """``sheets --history | head -1`` as a shell runs it: the reader is gone before the command writes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "calculator", "sheets", "--history"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader leaves before the first line is written
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and err == ""
