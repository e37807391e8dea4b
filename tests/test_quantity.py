"""Numbers typed the way people type them (issue 12, part 4): one reader for the app's volume and token
fields, their links and the command line's flags."""

from __future__ import annotations

import argparse
import time
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog import limits
from calculator.catalog.quantity import MAX_LENGTH, QuantityError, plain, read, read_quantity
from calculator.cli import flags


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("3M", 3_000_000),
        ("3m", 3_000_000),
        ("3e6", 3_000_000),
        ("3E+6", 3_000_000),
        ("2.5k", 2_500),
        ("1,000,000", 1_000_000),
        ("3 000 000", 3_000_000),
        ("3\u202f000\u202f000", 3_000_000),  # narrow no-break spaces, as a French locale writes them
        ("1_000", 1_000),
        ("1.1M", 1_100_000),
        ("3 million", 3_000_000),
        ("2bn", 2_000_000_000),
        (" 20000 ", 20_000),
        (".5k", 500),
    ],
)
def test_a_volume_typed_short_is_the_number_it_says(typed: str, value: int) -> None:
    assert read_quantity(typed, limits.TURNS_PER_MONTH) == value


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("1.5", "not a whole number"),
        ("2.5001k", "not a whole number"),
        ("1,5", "decimals with a point"),  # one and a half, or fifteen: refused, not guessed
        ("1.000.000", "not a number"),
        ("1,0000", "not a number"),  # a comma that does not separate thousands
        ("nan", "not a finite number"),
        ("-inf", "not a finite number"),
        ("3X", "not k, M, B or T"),
        ("", "nothing given"),
        ("-5", "negative"),
        ("2T", "more than 1,000,000,000,000"),
        ("1e999", "1,000-digit number"),
        ("9" * 321, "321-digit number"),
        ("<script>alert(1)</script>", "not a number"),
    ],
)
def test_text_that_is_no_count_in_range_is_refused_naming_what_is_allowed(typed: str, says: str) -> None:
    with pytest.raises(QuantityError) as caught:
        read_quantity(typed, limits.TURNS_PER_MONTH)
    message = str(caught.value)
    assert says in message and limits.TURNS_PER_MONTH.allowed in message
    assert len(message) < 300


def test_a_fraction_is_read_exactly_where_one_is_allowed() -> None:
    assert read("2.5k") == Decimal(2500)
    assert read("0.1") == Decimal("0.1")  # not 0.1000000000000000055511151231257827
    assert read_quantity("1.25k", limits.SESSIONS_PER_MONTH, whole=False) == 1250.0


@given(st.integers(min_value=0, max_value=10**12))
@settings(max_examples=60, deadline=None)
def test_every_way_of_writing_a_whole_number_reads_back_as_it(n: int) -> None:
    written = {plain(n), f"{n:,}", f"{n:_}", f"{n:,}".replace(",", " "), f"{Decimal(n):E}"}
    if n % 1000 == 0:
        written.add(f"{n // 1000}k")
    if n % 1_000_000 == 0:
        written |= {f"{n // 1_000_000}M", f"{Decimal(n) / 1_000_000}M"}
    for text in written:
        assert read_quantity(text, limits.TURNS_PER_MONTH) == n, text


@given(st.decimals(min_value=0, max_value=10**9, places=3, allow_nan=False, allow_infinity=False))
@settings(max_examples=40, deadline=None)
def test_a_plain_number_is_what_reads_back_as_the_same_number(value: Decimal) -> None:
    assert read(plain(value)) == value


@given(st.text(max_size=2 * MAX_LENGTH))
@settings(max_examples=200, deadline=None)
def test_any_text_is_a_number_or_one_sentence_and_never_slow(text: str) -> None:
    started = time.process_time()  # CPU time: a shared machine's stalls (0.55 s once in CI) are not the reader's
    try:
        value = read_quantity(text, limits.TOKENS)
    except QuantityError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 300
    else:
        assert isinstance(value, int) and limits.TOKENS.low <= value <= limits.TOKENS.high
    # bounded: length and exponent are capped before any work; an uncapped 10**10**6 takes seconds
    assert time.process_time() - started < 0.5


@given(st.from_regex(r"[+-]?[0-9,._' ]{0,12}([eE][+-]?[0-9]{1,6})?\s?[kKmMbBtT]?n?", fullmatch=True))
@settings(max_examples=200, deadline=None)
def test_number_shaped_garbage_is_read_or_refused_never_raised_otherwise(text: str) -> None:
    try:
        value = read(text)
    except QuantityError:
        return
    assert value.is_finite() and value.adjusted() <= 30


def test_the_command_lines_volume_and_token_flags_take_the_same_forms() -> None:
    assert flags.turns_per_month("3M") == 3_000_000
    assert flags.tokens("2.5k") == 2_500
    assert flags.context("1,000,000") == 1_000_000
    assert flags.sessions_per_month("3 000 000") == 3_000_000
    for convert, typed in ((flags.turns_per_month, "1.5"), (flags.tokens, "30M"), (flags.sessions_per_month, "0,5")):
        with pytest.raises(argparse.ArgumentTypeError):
            convert(typed)


@pytest.mark.parametrize("text", ["0E31", "-0e999", "0.000e5k", "0M"])
def test_zero_with_any_exponent_is_plain_zero(text: str) -> None:
    value = read(text)
    assert value == 0 and value.adjusted() == 0
