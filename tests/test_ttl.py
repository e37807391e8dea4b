"""Cache-TTL advisor: hand-computed sessions on Anthropic's real prices, logs, and the command line.

Claude Sonnet 4.5 (anthropic.yaml, in force on 2026-11-29): input 3.00, cache read 0.30, cache write
3.75 (5m) and 6.00 (1h) per million tokens. A 10,000-token prefix is 0.01 million tokens.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import math
import random
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import pytest

from calculator.catalog.prices import PriceCatalog
from calculator.cli import main
from calculator.errors import InputError
from calculator.pricing.ttl import (
    DEFAULT_SESSIONS_PER_MONTH,
    EmpiricalGaps,
    ExponentialGaps,
    LognormalGaps,
    TtlAdvice,
    advise_ttl,
    break_even_reads_per_write,
    break_even_reads_vs_no_cache,
    expected_uses,
    read_session_log,
)

AS_OF = dt.date(2026, 11, 29)
P = 10_000


def _advise(
    catalog: PriceCatalog,
    gaps: Sequence[float],
    turns: float | None = None,
    sessions_per_month: float = DEFAULT_SESSIONS_PER_MONTH,
) -> TtlAdvice:
    sheet, offer = catalog.serverless("anthropic", "claude-sonnet-4-5")
    return advise_ttl(
        sheet,
        offer,
        offer.version_at(AS_OF),
        prefix_tokens=P,
        gaps=EmpiricalGaps(tuple(gaps)),
        turns_per_session=turns if turns is not None else len(gaps) + 1,
        sessions_per_month=sessions_per_month,
    )


def _by_ttl(advice: TtlAdvice) -> dict[str, object]:
    return {o.ttl: o for o in advice.outcomes}


def test_gaps_of_two_minutes_hit_both_lifetimes_and_5m_is_cheaper(catalog: PriceCatalog) -> None:
    advice = _advise(catalog, [120] * 9, sessions_per_month=1000)  # 10 turns
    five, hour = advice.outcomes
    assert (five.ttl, hour.ttl) == ("5m", "1h")
    for o in (five, hour):
        assert o.hit_probability == 1
        assert (o.writes_per_session, o.reads_per_session) == (1, 9)
        assert o.written_tokens_per_session == 10_000 and o.read_tokens_per_session == 90_000
    # 0.01 * (1 * 3.75 + 9 * 0.30) = 0.0645 ; 0.01 * (1 * 6.00 + 9 * 0.30) = 0.087
    assert five.cost_per_session == pytest.approx(0.0645)
    assert hour.cost_per_session == pytest.approx(0.087)
    assert five.cost_per_month == pytest.approx(64.5)
    assert advice.no_cache_cost_per_session == pytest.approx(0.30)  # 10 turns * 0.01 * 3.00
    assert advice.cheapest.ttl == "5m" and advice.caching_pays
    assert advice.saving_per_month == pytest.approx(22.5)


def test_gaps_of_thirty_minutes_rewrite_every_turn_under_5m_and_hit_under_1h(catalog: PriceCatalog) -> None:
    five, hour = _advise(catalog, [1800] * 9).outcomes
    assert five.hit_probability == 0
    assert (five.writes_per_session, five.reads_per_session) == (10, 0)
    assert five.cost_per_session == pytest.approx(0.375)  # 10 writes * 0.01 * 3.75
    assert (hour.writes_per_session, hour.reads_per_session) == (1, 9)
    assert hour.cost_per_session == pytest.approx(0.087)
    assert _advise(catalog, [1800] * 9).cheapest.ttl == "1h"


def test_mixed_gaps_by_hand(catalog: PriceCatalog) -> None:
    # Gaps 60 s, 600 s, 4000 s: 4 turns. 5m reads after 60 s only: W = 3, R = 1
    #   -> 0.01 * (3 * 3.75 + 1 * 0.30) = 0.1155.  1h also reads after 600 s: W = 2, R = 2
    #   -> 0.01 * (2 * 6.00 + 2 * 0.30) = 0.126. The single 600 s gap is 1 read per 2 hour-writes
    #   (0.5) < break-even 0.652, so 5m stays cheaper.
    advice = _advise(catalog, [60, 600, 4000])
    five, hour = advice.outcomes
    assert advice.turns_per_session == 4
    assert five.hit_probability == pytest.approx(1 / 3) and hour.hit_probability == pytest.approx(2 / 3)
    assert (five.writes_per_session, five.reads_per_session) == pytest.approx((3, 1))
    assert (hour.writes_per_session, hour.reads_per_session) == pytest.approx((2, 2))
    assert five.cost_per_session == pytest.approx(0.1155)
    assert hour.cost_per_session == pytest.approx(0.126)
    assert advice.cheapest.ttl == "5m"
    (crossing,) = advice.break_even
    assert crossing.observed_reads_per_write == pytest.approx(0.5)
    # One more 10-minute gap (5 turns): 5m W = 4, R = 1 -> 0.153; 1h W = 2, R = 3 -> 0.129; 1h wins,
    # with 2 such reads per 2 hour-writes = 1.0 > 0.652.
    advice = _advise(catalog, [60, 600, 600, 4000])
    five, hour = advice.outcomes
    assert five.cost_per_session == pytest.approx(0.153)
    assert hour.cost_per_session == pytest.approx(0.129)
    assert advice.cheapest.ttl == "1h"
    assert advice.break_even[0].observed_reads_per_write == pytest.approx(1.0)


def test_break_even_formula_by_hand(catalog: PriceCatalog) -> None:
    # Longer lifetime: (6.00 - 3.75) / (3.75 - 0.30) = 2.25 / 3.45; in multiples of input,
    # (2 - 1.25) / (1.25 - 0.1) = 0.75 / 1.15 = 0.652...: one read per 1h write already pays.
    value = break_even_reads_per_write(Decimal("3.75"), Decimal("6.00"), Decimal("0.30"))
    assert value == Decimal("2.25") / Decimal("3.45")
    assert value is not None and float(value) == pytest.approx(0.75 / 1.15) == pytest.approx(0.652174, abs=1e-6)
    # Against not caching: 5m (3.75 - 3) / (3 - 0.3) = 0.278; 1h (6 - 3) / (3 - 0.3) = 1.111.
    assert break_even_reads_vs_no_cache(Decimal("3.75"), Decimal(3), Decimal("0.3")) == Decimal("0.75") / Decimal("2.7")
    assert break_even_reads_vs_no_cache(Decimal(6), Decimal(3), Decimal("0.3")) == Decimal(3) / Decimal("2.7")
    assert break_even_reads_per_write(Decimal("0.3"), Decimal(6), Decimal("0.3")) is None
    advice = _advise(catalog, [120])
    assert advice.break_even[0].reads_per_write == value
    five, hour = advice.outcomes
    assert float(five.break_even_reads_vs_no_cache or 0) == pytest.approx(0.75 / 2.7)
    assert float(hour.break_even_reads_vs_no_cache or 0) == pytest.approx(3 / 2.7)


def test_break_even_decides_like_the_costs(catalog: PriceCatalog) -> None:
    """1h is cheaper exactly when the observed reads per hour-write pass the break-even."""
    rng = random.Random(7)
    for _ in range(200):
        gaps = [rng.choice([30, 200, 400, 900, 2000, 3500, 5000]) for _ in range(rng.randint(1, 12))]
        advice = _advise(catalog, gaps)
        five, hour = advice.outcomes
        crossing = advice.break_even[0]
        if math.isclose(crossing.observed_reads_per_write, float(crossing.reads_per_write or 0)):
            continue
        assert (hour.cost_per_session < five.cost_per_session) == (
            crossing.observed_reads_per_write > float(crossing.reads_per_write or 0)
        )


def _simulate(gaps: list[float], ttl: float) -> tuple[int, int]:
    """Turn by turn: the cache expires ``ttl`` after its last use; every use refreshes it."""
    writes, reads, now, expires = 1, 0, 0.0, ttl
    for gap in gaps:
        now += gap
        if now <= expires:
            reads += 1
        else:
            writes += 1
        expires = now + ttl
    return writes, reads


def test_expected_uses_match_a_turn_by_turn_simulation() -> None:
    rng = random.Random(3)
    for _ in range(100):
        gaps = [rng.uniform(0, 5000) for _ in range(rng.randint(1, 20))]
        for ttl in (300, 3600):
            hit = EmpiricalGaps(tuple(gaps)).cdf(ttl)
            assert expected_uses(len(gaps) + 1, hit) == pytest.approx(_simulate(gaps, ttl))


def test_distributions_by_their_median() -> None:
    assert LognormalGaps(300).cdf(300) == pytest.approx(0.5)
    assert LognormalGaps(300, sigma=1).cdf(300 * math.e) == pytest.approx(0.841345, abs=1e-6)  # one sigma
    assert ExponentialGaps(300).cdf(300) == pytest.approx(0.5)
    assert ExponentialGaps(300).cdf(3600) == pytest.approx(1 - 2**-12)
    assert ExponentialGaps(300).cdf(0) == 0
    with pytest.raises(InputError, match="ttl.gap_median_seconds"):
        ExponentialGaps(0)


def test_turns_per_session_scale_the_list(catalog: PriceCatalog) -> None:
    # The list as a distribution: 21 turns, half the gaps within 5 minutes.
    five, hour = _advise(catalog, [120, 1800], turns=21).outcomes
    assert (five.writes_per_session, five.reads_per_session) == pytest.approx((11, 10))
    assert (hour.writes_per_session, hour.reads_per_session) == pytest.approx((1, 20))


def test_offers_without_paid_writes_and_short_prefixes_are_refused(catalog: PriceCatalog) -> None:
    sheet, offer = catalog.serverless("openai", "gpt-4.1")
    with pytest.raises(InputError, match="no write fee"):
        advise_ttl(
            sheet, offer, offer.version_at(AS_OF), prefix_tokens=P, gaps=EmpiricalGaps((60,)), turns_per_session=2
        )
    sheet, offer = catalog.serverless("anthropic", "claude-haiku-4-5")  # minimum 4,096 tokens
    with pytest.raises(InputError, match="minimum cacheable"):
        advise_ttl(
            sheet, offer, offer.version_at(AS_OF), prefix_tokens=2000, gaps=EmpiricalGaps((60,)), turns_per_session=2
        )


def test_jsonl_log_sessions(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    lines = [
        {"session_id": "a", "timestamp": 1000},
        {"session_id": "b", "timestamp": "2026-01-01T00:00:00Z"},
        {"session_id": "a", "timestamp": 1120},
        {"session_id": "b", "timestamp": "2026-01-01T00:30:00Z"},
        {"session_id": "a", "timestamp": 1060},  # out of order: sorted within the session
        {"session_id": "c", "timestamp": 5},
    ]
    log.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n{}\n")
    measured = read_session_log(log)
    assert measured.format == "jsonl"
    assert (measured.sessions, measured.turns) == (3, 6)
    assert sorted(measured.gaps) == [60, 60, 1800]
    assert measured.malformed == 2
    assert measured.turns_per_session == 2


def test_mooncake_trace_sessions_by_first_hash(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl.gz"
    rows = [
        {"timestamp": 0, "input_length": 1024, "output_length": 10, "hash_ids": [7, 8]},
        {"timestamp": 1000, "input_length": 512, "output_length": 10, "hash_ids": [9]},
        {"timestamp": 120000, "input_length": 1536, "output_length": 10, "hash_ids": [7, 8, 10]},
        {"timestamp": 1920000, "input_length": 1536, "output_length": 10, "hash_ids": [7, 8, 11]},
    ]
    with gzip.open(trace, "wt") as handle:
        handle.write("\n".join(json.dumps(r) for r in rows) + "\n")
    measured = read_session_log(trace)
    assert measured.format == "mooncake"
    assert (measured.sessions, measured.turns) == (2, 4)
    assert sorted(measured.gaps) == [120, 1800]  # milliseconds read as seconds
    assert measured.span_seconds == 1920


# --- command line ----------------------------------------------------------------------------------


def _main(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """Run the real command line."""
    return main(argv)


BASE = ["ttl", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--prefix-tokens", "10000"]


def test_cli_json_numbers(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code = _main([*BASE, "--gaps-seconds", "1800,1800,1800", "--as-of", "2026-11-29", "--json"], monkeypatch)
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cheapest_ttl"] == "1h"
    assert data["turns_per_session"] == 4
    five, hour = data["ttls"]
    assert five["writes_per_session"] == 4 and five["reads_per_session"] == 0
    assert five["cost_per_session"] == pytest.approx(0.15)  # 4 * 0.01 * 3.75
    assert hour["cost_per_session"] == pytest.approx(0.069)  # 0.01 * (6 + 3 * 0.3)
    assert hour["cost_per_month"] == pytest.approx(69.0)  # 1,000 sessions assumed
    assert data["break_even"][0]["reads_per_write"] == pytest.approx(0.652174, abs=1e-6)
    assert isinstance(five["write_price"], float) and five["write_price"] == 3.75


def test_cli_text_and_distributions(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*BASE, "--gap-median-seconds", "600", "--gap-distribution", "exponential", "--turns-per-session", "8"]
    assert _main([*argv, "--sessions-per-month", "5000"], monkeypatch) == 0
    out = capsys.readouterr().out
    assert "5m" in out and "1h" in out and "pays off" in out


def test_cli_log(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"session_id": s, "timestamp": t}) + "\n" for s, t in [("a", 0), ("a", 60)]))
    assert _main([*BASE, "--log", str(log), "--json"], monkeypatch) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["log"]["sessions"] == 1 and data["turns_per_session"] == 2
    assert data["sessions_per_month"] == pytest.approx(1 / 60 * 86400 * 365 / 12)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "one of the arguments"),
        (["--gap-median-seconds", "300"], "--turns-per-session"),
        (["--gaps-seconds", "30,abc"], "--gaps-seconds"),
        (["--gaps-seconds", "30", "--model", "gpt-4.1", "--provider", "openai"], "no write fee"),
        (["--gaps-seconds", "30", "--prefix-tokens", "0"], "--prefix-tokens"),
        (["--log", "/nonexistent.jsonl"], "cannot read"),
    ],
)
def test_cli_errors_are_one_line(
    extra: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main([*BASE, *extra], monkeypatch) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
