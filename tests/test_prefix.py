"""Prefix matching and the cache simulator, against hand-counted logs and the published Mooncake ratios."""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pytest

from calculator.catalog.datafile import DataFileError
from calculator.cli.prefix import add_prefix_parser
from calculator.errors import InputError
from calculator.traffic.batches import BATCH_REQUESTS
from calculator.traffic.prefix import (
    CacheConfig,
    LogReader,
    Request,
    analyse,
    analyse_log,
    match_per_request,
    request_from_tokens,
    simulate,
)
from calculator.traffic.tokens import ApproxTokenizer, chat_tokens

MOONCAKE = Path(__file__).resolve().parent / "fixtures" / "traces" / "mooncake"


def tokens(start: int, n: int) -> list[int]:
    return list(range(start, start + n))


def req(toks: list[int], ts: float | None = None, bs: int = 16) -> Request:
    return request_from_tokens(toks, bs, timestamp=ts)


def test_shared_system_prompt_matches_exactly_its_blocks() -> None:
    system = tokens(0, 64)
    requests = [req(system + tokens(1000 + 100 * i, 32)) for i in range(10)]
    assert list(match_per_request(requests)) == [0] + [64] * 9
    report = analyse(requests)
    assert report.input_tokens == 960
    assert report.prefix_share == pytest.approx(9 * 64 / 960)
    assert report.hit_rate == 1.0


def test_partial_blocks_never_match() -> None:
    same = tokens(0, 40)  # two full blocks of 16 and a partial one of 8
    assert list(match_per_request([req(same), req(same)])) == [0, 32]
    short = tokens(0, 15)
    assert list(match_per_request([req(short), req(short)])) == [0, 0]


def test_same_block_after_a_different_prefix_does_not_match() -> None:
    a, b, c = tokens(0, 16), tokens(100, 16), tokens(200, 16)
    assert list(match_per_request([req(a + c), req(b + c), req(a + c)])) == [0, 0, 32]


def test_lru_evicts_the_least_recently_used_block() -> None:
    x, y, z = (req(tokens(s, 16)) for s in (0, 100, 200))
    two_blocks = CacheConfig(capacity_tokens=32)
    # x, y, x (x now most recent), z evicts y (not x, as FIFO would), y misses and evicts x, z hits.
    assert list(match_per_request([x, y, x, z, y, z], two_blocks)) == [0, 0, 16, 0, 0, 16]


def test_long_prompt_keeps_its_start_when_its_tail_does_not_fit() -> None:
    long = req(tokens(0, 64))
    assert list(match_per_request([long, long], CacheConfig(capacity_tokens=32))) == [0, 32]


def test_ttl_drops_blocks_idle_longer_than_it() -> None:
    x = tokens(0, 32)
    stream = [req(x, 0), req(x, 5), req(x, 14), req(x, 30)]  # idle 5, 9, then 16 seconds
    assert list(match_per_request(stream, CacheConfig(ttl_seconds=10))) == [0, 32, 32, 0]


def test_ttl_without_timestamps_names_the_flag() -> None:
    with pytest.raises(InputError) as exc:
        list(match_per_request([req(tokens(0, 16))], CacheConfig(ttl_seconds=10)))
    assert exc.value.field == "cache.ttl_seconds"


def _two_conversations() -> list[Request]:
    """Conversations A and B (no shared start) in pairs of turns: A1 A2 B1 B2 A3 A4 B3 B4.
    Turn k of a conversation is its first 32k tokens."""
    conv = {"A": tokens(0, 128), "B": tokens(10_000, 128)}
    order = [("A", 1), ("A", 2), ("B", 1), ("B", 2), ("A", 3), ("A", 4), ("B", 3), ("B", 4)]
    return [req(conv[c][: 32 * k]) for c, k in order]


def test_round_robin_splits_conversations_and_loses_half_the_hits() -> None:
    requests = _two_conversations()
    # Unlimited, one replica: each turn matches the previous turn of its conversation.
    assert list(match_per_request(requests)) == [0, 32, 0, 32, 64, 96, 64, 96]
    rr = CacheConfig(replicas=2, routing="round_robin")
    # Replica 0 gets A1 B1 A3 B3, replica 1 A2 B2 A4 B4: each turn finds only its conversation's turn-before-last.
    assert list(match_per_request(requests, rr)) == [0, 0, 0, 0, 32, 64, 32, 64]
    report = analyse(requests, rr)
    assert report.prefix_share == pytest.approx(384 / 640)
    assert report.scenario.token_hit_share == pytest.approx(192 / 640)
    assert report.scenario.hit_rate == pytest.approx(0.5)


def test_prefix_aware_routing_keeps_each_conversation_on_one_replica() -> None:
    requests = _two_conversations()
    aware = CacheConfig(replicas=2, routing="prefix_aware")
    assert list(match_per_request(requests, aware)) == [0, 32, 0, 32, 64, 96, 64, 96]
    [result] = simulate(requests, [aware])
    assert [r.requests for r in result.replicas] == [4, 4]
    assert [r.hit_tokens for r in result.replicas] == [192, 192]


def test_prefix_aware_routing_gives_way_to_load() -> None:
    same = [req(tokens(0, 32)) for _ in range(20)]
    [result] = simulate(same, [CacheConfig(replicas=4, routing="prefix_aware", balance=0.0)])
    loads = [r.requests for r in result.replicas]
    assert sum(loads) == 20 and max(loads) - min(loads) <= 1


def test_random_routing_is_reproducible_with_a_seed() -> None:
    requests = _two_conversations() * 5
    cfg = CacheConfig(replicas=3, routing="random", seed=7)
    first, second = simulate(requests, [cfg, cfg])
    assert first == second
    assert sum(r.requests for r in first.replicas) == 40


def test_curve_rises_with_capacity_up_to_the_prefix_share() -> None:
    requests = _two_conversations()
    report = analyse(requests, capacities=[0, 32, 64, 10_000])
    shares = [p.token_hit_share for p in report.curve]
    assert shares == sorted(shares)
    assert shares[0] == 0.0
    assert shares[-1] == pytest.approx(report.prefix_share)
    assert report.curve[-1].hit_rate == pytest.approx(1.0)


def test_histogram_counts_requests_by_matched_length() -> None:
    report = analyse(_two_conversations())
    bins = {(b.low_tokens, b.high_tokens): b.requests for b in report.unlimited.matched_histogram}
    assert bins == {(0, 1): 2, (16, 32): 0, (32, 64): 2, (64, 128): 4}


def _jsonl(tmp_path: Path, rows: list[object], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_malformed_lines_are_reported_with_their_numbers(tmp_path: Path) -> None:
    good = {"prompt": tokens(0, 48)}
    path = _jsonl(tmp_path, [good, "{not json", [1, 2], good, {"prompt": 5}, "", good])
    report = analyse_log(path)
    assert report.requests == 3
    assert report.malformed.count == 3
    assert [line.split(": ")[0] for line in report.malformed.lines] == [f"{path}:2", f"{path}:3", f"{path}:5"]
    assert report.prefix_share == pytest.approx(2 / 3)


def test_a_log_with_nothing_valid_fails_listing_its_lines(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, ["nope", {"hello": 1}])
    with pytest.raises(DataFileError) as exc:
        analyse_log(path)
    assert exc.value.lines[0].startswith(f"{path}:1: not valid JSON")
    assert exc.value.lines[1].startswith(f"{path}:2: not a request")


def test_reader_is_a_stream_read_a_batch_ahead(tmp_path: Path) -> None:
    lines = iter([json.dumps({"prompt": tokens(0, 16)})] * (BATCH_REQUESTS + 3))
    reader = LogReader(lines, name="upload")
    stream = iter(reader)
    next(stream)
    assert reader.valid == BATCH_REQUESTS  # one batch is hashed together; the rest is not read yet
    assert len(list(stream)) == BATCH_REQUESTS + 2


def test_openai_chat_log_shares_the_rendered_conversation_start(tmp_path: Path) -> None:
    system = {"role": "system", "content": "You are a careful assistant. " * 20}
    first = [system, {"role": "user", "content": "What is the capital of France?"}]
    second = [*first, {"role": "assistant", "content": "Paris."}, {"role": "user", "content": "And of Spain?"}]
    path = _jsonl(
        tmp_path,
        [
            {"model": "m", "messages": first, "timestamp": "2026-01-01T00:00:00Z"},
            {"custom_id": "2", "body": {"model": "m", "messages": second}, "timestamp": 60},
        ],
        "chat.jsonl.gz",
    )
    path.write_bytes(gzip.compress(path.read_bytes()))
    report = analyse_log(path)
    assert report.format == "openai" and report.requests == 2
    tok = ApproxTokenizer()
    a, b = chat_tokens(tok, first), chat_tokens(tok, second)
    common = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y) if a != b[: len(a)] else len(a)
    assert report.unlimited.hit_tokens == common // 16 * 16
    assert report.input_tokens == len(a) + len(b)


def test_mooncake_hash_ids_use_512_token_blocks_and_check_their_count(tmp_path: Path) -> None:
    rows: list[object] = [
        {"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [1, 2, 3]},
        {"timestamp": 1000, "input_length": 1100, "output_length": 5, "hash_ids": [1, 2, 3]},
        {"timestamp": 2000, "input_length": 1100, "output_length": 5, "hash_ids": [1, 2]},
    ]
    report = analyse_log(_jsonl(tmp_path, rows))
    assert report.block_size == 512 and report.requests == 2
    assert report.unlimited.hit_tokens == 1024  # the partial third block does not count
    assert report.malformed.count == 1 and "needs ceil(1100/512) = 3" in report.malformed.lines[0]
    assert report.mean_output_tokens == 5


# The Mooncake paper (FAST'25, Table 2) reports prefix-cache ratios of "about 40%" (conversation) and
# "about 66%" (synthetic). We count full 512-token blocks only, with an unlimited cache on one replica:
# 37.3% and 65.0%. The tolerance of 4 points covers the paper's rounding and its partial-block counting.
@pytest.mark.parametrize(("name", "published"), [("conversation_trace.jsonl", 0.40), ("synthetic_trace.jsonl", 0.66)])
def test_mooncake_traces_match_the_published_prefix_cache_ratios(name: str, published: float) -> None:
    report = analyse_log(MOONCAKE / name)
    assert report.malformed.count == 0
    assert report.requests == {"conversation_trace.jsonl": 12_031, "synthetic_trace.jsonl": 3_993}[name]
    assert report.prefix_share == pytest.approx(published, abs=0.04)


def test_finite_cache_and_routing_on_the_conversation_trace_stay_below_the_unlimited_share() -> None:
    report = analyse_log(
        MOONCAKE / "conversation_trace.jsonl",
        scenario=CacheConfig(capacity_tokens=2_000_000, replicas=4, routing="round_robin"),
        capacities=[2_000_000],
    )
    aware = analyse_log(
        MOONCAKE / "conversation_trace.jsonl",
        scenario=CacheConfig(capacity_tokens=2_000_000, replicas=4, routing="prefix_aware"),
    )
    assert 0 < report.scenario.token_hit_share < aware.scenario.token_hit_share < report.prefix_share
    assert report.curve[0].token_hit_share == report.scenario.token_hit_share


# --- the command line ----------------------------------------------------------------------------


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    parser = argparse.ArgumentParser(prog="calc")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    add_prefix_parser(sub, common)
    args = parser.parse_args(argv)
    assert args.func(args) == 0
    return capsys.readouterr().out


def test_cli_prints_share_curve_replicas_and_scenario_values(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(
        [
            "prefix",
            str(MOONCAKE / "synthetic_trace.jsonl"),
            "--capacity-tokens",
            "1000000",
            "4000000",
            "--replicas",
            "2",
            "--routing",
            "prefix_aware",
        ],
        capsys,
    )
    assert "Prefix share s (unlimited cache, one replica): 65.0%" in out
    assert "replica 1:" in out and "Hit-rate curve" in out
    assert "For a scenario: prefix_share 0.65" in out


def test_cli_json_carries_scenario_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    system = tokens(0, 64)
    path = _jsonl(tmp_path, [{"prompt": system + tokens(1000 + 100 * i, 32)} for i in range(10)])
    data = json.loads(_run(["prefix", str(path), "--json"], capsys))
    assert data["requests"] == 10 and data["block_size"] == 16
    assert data["scenario_values"] == {"prefix_share": 0.6, "hit_rate": 1.0}


def test_cli_bad_tokenizer_path_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _jsonl(tmp_path, [{"prompt": "hello"}])
    with pytest.raises(InputError) as exc:
        _run(["prefix", str(path), "--tokenizer", str(tmp_path / "missing.json")], capsys)
    assert exc.value.field == "tokenizer" and "missing.json" in str(exc.value)


def test_cli_takes_the_capacity_from_a_gpu_and_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from calculator.capacity.memory import fit
    from calculator.catalog.gpus import load_gpu_specs
    from calculator.catalog.models import load_model_specs

    expected = fit(load_model_specs(None).get("llama-3.1-8b"), load_gpu_specs(None).get("h100-sxm")).max_cached_tokens
    path = _jsonl(tmp_path, [{"prompt": tokens(0, 64)}] * 3)
    data = json.loads(_run(["prefix", str(path), "--gpu", "h100-sxm", "--model", "llama-3.1-8b", "--json"], capsys))
    assert data["scenario"]["config"]["capacity_tokens"] == expected > 0
