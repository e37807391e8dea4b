"""The sizing steps a sweep repeats are worked out once per catalogue object (calculator/capacity/memo.py)."""

from __future__ import annotations

import pytest

from calculator.capacity.memo import by_identity
from calculator.capacity.sizing import record_speed
from calculator.pricing.compare import Catalogs


def test_a_frozen_record_gives_the_kept_answer_and_an_equal_copy_the_same_figures(catalogs: Catalogs) -> None:
    record = next(r for r in catalogs.records.records if r.gpu and r.params_active_b and r.params_total_b)
    gpu = catalogs.gpus.get(record.gpu or "")
    first = record_speed(record, gpu, None, None)
    assert record_speed(record, gpu, None, None) is first
    copy = record.model_copy()
    again = record_speed(copy, gpu, None, None)
    assert again is not first and again == first


def test_an_error_is_raised_again_not_kept() -> None:
    calls: list[int] = []

    @by_identity(maxsize=4)
    def fails(x: int) -> int:
        calls.append(x)
        raise ValueError("no")

    for _ in range(2):
        with pytest.raises(ValueError):
            fails(1)
    assert calls == [1, 1]


def test_only_the_latest_answers_are_kept() -> None:
    calls: list[int] = []

    @by_identity(maxsize=2)
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    assert [square(x) for x in (1, 2, 1, 3, 2, 1)] == [1, 4, 1, 9, 4, 1]
    assert calls == [1, 2, 3, 2, 1]  # 2 was dropped for 3, then 1 for 2 (1 was used before 3 came)
