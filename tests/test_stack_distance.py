"""The one-pass LRU curve (stack distances) against the per-capacity simulation it replaces: equal hit
counts, request by request, on generated block streams and on the bundled Mooncake traces."""

from __future__ import annotations

from collections.abc import Sequence
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog.datafile import DATA_DIR
from calculator.errors import InputError
from calculator.traffic import prefix
from calculator.traffic.prefix import (
    CacheConfig,
    CacheResult,
    LogReader,
    LruProfile,
    Request,
    analyse,
    simulate,
    stack_distances_apply,
)

TRACES = DATA_DIR / "samples" / "mooncake"
BS = 4

# Few distinct block ids and short requests, so blocks repeat, collide within a request and get evicted.
_blocks = st.lists(st.integers(0, 12), max_size=8).map(tuple)
_requests = st.lists(
    st.builds(
        Request,
        blocks=_blocks,
        input_tokens=st.integers(0, 40),  # sometimes fewer tokens than the blocks hold: the match is clipped
        timestamp=st.floats(0, 100, allow_nan=False),
    ),
    max_size=40,
)
_configs = st.builds(
    CacheConfig,
    ttl_seconds=st.none() | st.floats(0.5, 30),
    replicas=st.integers(1, 4),
    routing=st.sampled_from(["round_robin", "random"]),
    seed=st.integers(0, 3),
)
_capacities = st.lists(st.integers(0, 60), min_size=1, max_size=6)


def _simulated(requests: Sequence[Request], config: CacheConfig, capacities: Sequence[int | None]) -> list[CacheResult]:
    configs = [config.model_copy(update={"capacity_tokens": c}) for c in capacities]
    return simulate(requests, configs, BS)


@settings(max_examples=150, deadline=None)
@given(_requests, _configs, _capacities)
def test_profile_equals_simulation_at_every_capacity(
    requests: list[Request], config: CacheConfig, capacities: list[int]
) -> None:
    profile = LruProfile.of(requests, config, BS, keep=True)
    every = [*capacities, None]
    for cap, simulated in zip(every, _simulated(requests, config, every), strict=True):
        assert profile.hit_tokens(cap) == simulated.hit_tokens
        assert profile.result(cap) == simulated


@pytest.mark.parametrize("name", ["synthetic_trace.jsonl", "conversation_trace.jsonl"])
@pytest.mark.parametrize(
    "config",
    [CacheConfig(), CacheConfig(replicas=4), CacheConfig(replicas=3, routing="random", seed=7)],
    ids=["one replica", "round robin", "random"],
)
def test_mooncake_curve_equals_simulation(name: str, config: CacheConfig) -> None:
    requests = list(LogReader(TRACES / name))
    bs = 512
    capacities = [0, 10_000, 100_000, 300_000, 1_000_000, 3_000_000, 30_000_000]
    profile = LruProfile.of(requests, config, bs, keep=True)
    configs = [config.model_copy(update={"capacity_tokens": c}) for c in capacities]
    simulated = simulate(requests, configs, bs)
    hits = [s.hit_tokens for s in simulated]
    assert [profile.hit_tokens(c) for c in capacities] == hits
    assert hits[1] < hits[3] < hits[-1]  # the capacities matter: a real curve, not a flat line
    assert profile.result(1_000_000) == simulated[4]


def test_analyse_curve_is_the_same_with_and_without_stack_distances() -> None:
    requests = list(LogReader(TRACES / "synthetic_trace.jsonl"))
    scenario = CacheConfig(capacity_tokens=1_000_000, replicas=2)
    capacities = [10_000, 100_000, 1_000_000, 10_000_000]
    report = analyse(requests, scenario, capacities, 512)
    simulated = simulate(requests, [scenario.model_copy(update={"capacity_tokens": c}) for c in capacities], 512)
    assert [p.token_hit_share for p in report.curve] == [s.token_hit_share for s in simulated]


def test_prefix_aware_routing_is_simulated_per_capacity() -> None:
    aware = CacheConfig(replicas=2, routing="prefix_aware")
    assert not stack_distances_apply(aware)
    assert stack_distances_apply(aware.model_copy(update={"replicas": 1}))
    with pytest.raises(ValueError, match="routing"):
        LruProfile(aware)


def test_ttl_without_timestamps_names_the_field() -> None:
    with pytest.raises(InputError, match="timestamps"):
        LruProfile.of([Request((1, 2), 8, line=3)], CacheConfig(ttl_seconds=5), BS)


@settings(max_examples=100, deadline=None)
@given(
    _requests,
    st.builds(
        CacheConfig,
        capacity_tokens=st.none() | st.integers(0, 60),
        ttl_seconds=st.none() | st.floats(0.5, 30),
        replicas=st.integers(2, 5),
        routing=st.just("prefix_aware"),
        balance=st.sampled_from([0.0, 0.2, 1.0]),
    ),
)
def test_prefix_aware_routing_asking_each_cache_equals_the_holders_index(
    requests: list[Request], config: CacheConfig
) -> None:
    [asked] = simulate(requests, [config], BS)
    with mock.patch.object(prefix, "_ASK_EACH_CACHE", 0):  # the index that many replicas use
        [indexed] = simulate(requests, [config], BS)
    assert asked == indexed


def test_profile_grows_past_its_first_tick_table_within_one_request() -> None:
    long = Request(tuple(range(70_000)), 70_000 * BS)  # more blocks than the first table of ticks holds
    again = Request(tuple(range(1_000)), 1_000 * BS)
    requests = [long, again, long]
    profile = LruProfile.of(requests, CacheConfig(), BS)
    for cap in (500 * BS, 69_000 * BS, 70_000 * BS, None):
        [simulated] = _simulated(requests, CacheConfig(), [cap])
        assert profile.hit_tokens(cap) == simulated.hit_tokens
    assert profile.hit_tokens(None) == (1_000 + 70_000) * BS
