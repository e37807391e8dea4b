"""Readers that cannot be crashed by their input, and work bounded by the size of the question (issue 15,
parts 2 and 3).

Every log reader (``prefix``, ``ttl --log``, ``profile --profile``) reads the same hostile lines the same
way: skipped, counted and named by line; every broken file (truncated or corrupt gzip, a device, a line
without end) is one error naming it; YAML data files refuse what PyYAML would crash on; a benchmark
result, a session log and a replica count cost memory for what is used, not for their size.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import random
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculator.catalog.textfile as textfile
from calculator.catalog.datafile import DataFileError, load_model, load_model_text, parse_yaml
from calculator.cli import main
from calculator.errors import InputError
from calculator.measure.importers import import_file
from calculator.planning.load_profile import trace_shape
from calculator.pricing.ttl import read_session_log
from calculator.scenario.model import Scenario
from calculator.traffic.prefix import CacheConfig, LogReader, Request, analyse_log, simulate

FIXTURES = Path(__file__).resolve().parent / "fixtures"
VLLM_RUN = FIXTURES / "bench" / "vllm" / "results_l40s_llama32_3b.jsonl"


# --- one log, three readers -------------------------------------------------------------------------


def _line(i: int) -> str:
    """A request every reader accepts: a prompt (prefix), a session and a time in seconds (ttl, profile)."""
    return json.dumps({"session_id": f"s{i % 3}", "timestamp": 1_000 + 30 * i, "prompt": "shared start " * 8})


HOSTILE = {
    "not UTF-8": b'{"session_id": "s1", "timestamp": 5, "prompt": "caf\xe9"}',
    "nested 200,000 deep": b'{"session_id": "s1", "timestamp": 5, "prompt": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "a 5,000-digit integer": b'{"session_id": "s1", "timestamp": ' + b"7" * 5_000 + b', "prompt": "x"}',
    "not JSON": b'{"session_id": "s1", "timest',
    "a NUL": b"\x00\x00\x00",
}
MESSAGES = {
    "not UTF-8": "not UTF-8 text",
    "nested 200,000 deep": "nested deeper than 100 levels",
    "a 5,000-digit integer": "a number with more than 20 digits",
    "not JSON": "not valid JSON",
    "a NUL": "not valid JSON",
}


def _hostile_log(tmp_path: Path, name: str = "log.jsonl", newline: bytes = b"\n", last_newline: bool = True) -> Path:
    lines = [_line(i).encode() for i in range(40)]
    for at, bad in zip((3, 9, 17, 25, 33), HOSTILE.values(), strict=True):
        lines.insert(at, bad)
    data = newline.join(lines) + (newline if last_newline else b"")
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def _prefix_problems(path: Path) -> tuple[int, list[str]]:
    report = analyse_log(path)
    return report.requests, list(report.malformed.lines)


def _ttl_problems(path: Path) -> tuple[int, list[str]]:
    log = read_session_log(path)
    return log.turns, list(log.problems)


def _profile_problems(path: Path) -> tuple[int, list[str]]:
    shape = trace_shape(path, unit="s")
    note = next((n for n in shape.notes if "skipped" in n), "")
    return shape.requests, [note]


READERS: dict[str, Callable[[Path], tuple[int, list[str]]]] = {
    "prefix": _prefix_problems,
    "ttl --log": _ttl_problems,
    "profile --profile": _profile_problems,
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("name", ["log.jsonl", "log.jsonl.gz"])
def test_every_log_reader_skips_and_names_the_same_hostile_lines(tmp_path: Path, reader: str, name: str) -> None:
    path = _hostile_log(tmp_path, name)
    requests, problems = READERS[reader](path)
    assert requests == 40  # every good line read, whatever sits between them
    if reader == "profile --profile":
        assert problems[0].startswith("5 line(s) of the log skipped, the first: ")
        assert f"{path}:4: not UTF-8 text" in problems[0]
        return
    expected = [f"{path}:{at + 1}: {MESSAGES[kind]}" for at, kind in zip((3, 9, 17, 25, 33), HOSTILE, strict=True)]
    assert [p[: len(e)] for p, e in zip(problems, expected, strict=True)] == expected


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(("newline", "last"), [(b"\n", False), (b"\r\n", True), (b"\r", True), (b"\r", False)])
def test_line_endings_and_a_last_line_without_newline_read_alike(
    tmp_path: Path, reader: str, newline: bytes, last: bool
) -> None:
    plain = READERS[reader](_hostile_log(tmp_path, "plain.jsonl"))
    other = READERS[reader](_hostile_log(tmp_path, "other.jsonl", newline, last))
    assert other[0] == plain[0] == 40
    assert [p.replace("other.jsonl", "plain.jsonl") for p in other[1]] == plain[1]


def _gzip_variants(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    packed = gzip.compress(b"".join(_line(i).encode() + b"\n" for i in range(2_000)))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    corrupt = tmp_path / "corrupt.jsonl.gz"
    corrupt.write_bytes(packed[:20] + b"\x00" * 60 + packed[80:])
    return {
        "truncated": (cut, "the compressed file is cut short"),
        "corrupt": (corrupt, "the compressed data is corrupt"),
        "a device": (Path("/dev/zero"), "not a regular file"),
        "a folder": (tmp_path, "is a folder, not a file"),
    }


@pytest.mark.parametrize("reader", [*READERS, "measurements import"])
@pytest.mark.parametrize("kind", ["truncated", "corrupt", "a device", "a folder"])
def test_a_broken_file_is_one_error_naming_it_in_every_reader(tmp_path: Path, reader: str, kind: str) -> None:
    path, message = _gzip_variants(tmp_path)[kind]
    if kind == "a device" and not path.exists():
        pytest.skip("no /dev/zero here")
    if kind == "a folder" and reader == "prefix":  # prefix reads a folder's logs (tests/test_log_inputs.py)
        path = tmp_path / "empty"
        path.mkdir()
        message = "a folder with no log in it"
    read: Callable[[Path], object] = import_file if reader == "measurements import" else READERS[reader]
    with pytest.raises((DataFileError, InputError)) as info:
        read(path)
    error = info.value
    text = (
        error.lines[0] if isinstance(error, DataFileError) else error.message if isinstance(error, InputError) else ""
    )
    assert text.startswith(f"{path}: ") and message in text


@pytest.mark.parametrize(
    "argv",
    [
        ["prefix", "/dev/zero"],
        [
            "ttl",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--prefix-tokens",
            "5000",
            "--log",
            "/dev/zero",
        ],
        ["profile", "--preset", "coding-agent", "--profile", "/dev/zero"],
        ["measurements", "import", "/dev/zero"],
        ["compare", "--scenario", "/dev/zero"],
    ],
)
@pytest.mark.timeout(60)  # a reader that waits on /dev/zero hangs here
def test_dev_zero_ends_at_once_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "/dev/zero" in err and "not a regular file" in err


def test_a_line_without_end_stops_the_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfile, "MAX_LINE_CHARS", 1_000)
    path = tmp_path / "endless.jsonl"
    path.write_text(_line(0) + "\n" + "x" * 5_000)
    for read in READERS.values():
        with pytest.raises((DataFileError, InputError), match=r"endless.jsonl:2: a line longer than 1,000 characters"):
            read(path)


def test_the_app_stops_reading_an_upload_at_its_limit() -> None:
    from calculator.present import prefix_charts

    bomb = gzip.compress(b"\n".join(_line(i).encode() for i in range(10_000)))  # 1 MB unpacked from 30 kB

    @contextlib.contextmanager
    def opener() -> Iterator[tuple[IO[bytes], int]]:
        yield io.BytesIO(bomb), len(bomb)

    with pytest.raises(DataFileError, match="more than 50,000 characters unpacked"):
        prefix_charts.read_log(opener, "bomb.jsonl.gz", max_chars=50_000)
    with pytest.raises(DataFileError, match="more than 50,000 characters unpacked"):
        list(LogReader(gzip.decompress(bomb).splitlines(keepends=True), max_chars=50_000))


# --- JSON as a stream ------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**18), 10**18)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6), min_size=1, max_size=4))
def test_the_streaming_reader_reads_what_the_standard_library_reads(values: list[dict[str, Any]]) -> None:
    pretty = json.dumps(values[0], indent=2)
    lines = "\n".join(json.dumps(v) for v in values)
    for direct in (textfile._DIRECT, 8):  # decoded in one call, and walked member by member
        saved, textfile._DIRECT = textfile._DIRECT, direct
        try:
            one, problems, _ = textfile.json_documents("x", "f", text=pretty)
            many, problems_many, _ = textfile.json_documents("x", "f", text=lines)
        finally:
            textfile._DIRECT = saved
        assert [d.value for d in one] == [values[0]] and problems == []
        assert [d.value for d in many] == values and problems_many == []
        assert [d.line for d in many] == list(range(1, len(values) + 1))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet='{}[]",:0123456789.eE-+ \n\r\tabcnrtuflsI\\\x00\udce9', max_size=80))
def test_any_text_is_values_or_problems_never_a_crash(text: str) -> None:
    for direct in (textfile._DIRECT, 4):
        saved, textfile._DIRECT = textfile._DIRECT, direct
        try:
            textfile.json_documents("x", "f", text=text)
        except DataFileError as exc:
            assert all(line.startswith("f") for line in exc.lines)
        finally:
            textfile._DIRECT = saved
        with contextlib.suppress(textfile.LineError):
            textfile.parse_json(text)


def _detailed_vllm(path: Path, requests: int) -> Path:
    """A vLLM ``--save-detailed`` result: the summary of the bundled run plus per-request arrays."""
    run = json.loads(VLLM_RUN.read_text().splitlines()[0])
    rng = random.Random(1)
    with path.open("w") as fh:
        fh.write(json.dumps(run)[:-1])
        fh.write(', "ttfts": ' + json.dumps([rng.random() for _ in range(requests)]))
        fh.write(', "itls": ' + json.dumps([[rng.random() / 20 for _ in range(100)] for _ in range(requests)]))
        fh.write(', "generated_texts": ' + json.dumps(["lorem ipsum " * 20] * requests) + "}\n")
    return path


def test_a_large_benchmark_result_is_read_in_bounded_memory(tmp_path: Path) -> None:
    big = _detailed_vllm(tmp_path / "detailed.json", 8_000)  # about 20 MB, nearly all per-request detail
    assert big.stat().st_size > 15_000_000
    tracemalloc.start()
    try:
        records = import_file(big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12_000_000  # decoding it whole took over 100 MB
    summary = tmp_path / "summary.json"
    summary.write_text(VLLM_RUN.read_text().splitlines()[0])
    [plain] = import_file(summary)
    assert [r.model_dump(exclude={"id", "source"}) for r in records] == [plain.model_dump(exclude={"id", "source"})]


def test_a_benchmark_file_beyond_the_limits_is_one_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"completed": ' + "[" * 200_000 + "]" * 200_000 + "}")
    huge = tmp_path / "huge.json"
    huge.write_text('{"completed": ' + "1" * 5_000 + ', "duration": 10}')
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{\n  "completed": 10,\n  "model_id": "caf\xe9"\n}\n')
    assert str(_import_error(deep)).startswith(f"{deep}:1: nested deeper than 100 levels")
    assert str(_import_error(huge)).startswith(f"{huge}:1: a number with more than 20 digits")
    assert str(_import_error(latin)).startswith(f"{latin}:3: not UTF-8 text")


def _import_error(path: Path) -> DataFileError:
    with pytest.raises(DataFileError) as info:
        import_file(path)
    return info.value


# --- YAML ------------------------------------------------------------------------------------------

SCENARIO = (FIXTURES.parent.parent / "calculator" / "data" / "scenarios" / "coding-agent.yaml").read_text()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace("name: Coding", "name: Co\x00ding"), ":6: YAML syntax error: control character #x00"),
        (lambda t: t.replace("name: Coding", "name: Co\x07ding"), ":6: YAML syntax error: control character #x07"),
        (lambda t: t + "? [a, b]\n: 1\n", "a key must be a plain value, not a list or mapping"),
        (lambda t: t + "when: 2026-02-30\n", "'2026-02-30' is not a date that exists (day is out of range"),
        (lambda t: t.replace("turns_per_month: 1000000", "turns_per_month: " + "1" * 5_000), "not a usable integer"),
        (lambda t: t + "extra: " + "[" * 20_000 + "]" * 20_000 + "\n", "nested deeper than 64 levels"),
        (lambda t: t + "extra: &c [1, *c]\n", "an alias refers to a node that contains it"),
    ],
)
def test_yaml_pyyaml_would_crash_on_is_one_line_naming_the_file(
    tmp_path: Path, change: Callable[[str], str], message: str
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(change(SCENARIO))
    with pytest.raises(DataFileError) as info:
        load_model(path, Scenario)
    assert info.value.lines[0].startswith(str(path) + ":") and message in info.value.lines[0]


@pytest.mark.timeout(60)
def test_yaml_aliases_that_expand_past_a_million_values_are_refused() -> None:
    laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
    )
    with pytest.raises(DataFileError, match="aliases expand to more than 1,000,000 values"):
        parse_yaml(laughs, "laughs.yaml")
    assert parse_yaml("a: &a [1, 2]\nb: *a\n", "ok.yaml") == {"a": [1, 2], "b": [1, 2]}  # aliases still work


def test_a_non_utf8_or_oversized_data_file_names_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(SCENARIO.encode().replace(b"Coding", b"C\xe9ding"))
    with pytest.raises(DataFileError, match=r"latin.yaml:6: not UTF-8 text"):
        load_model(latin, Scenario)
    import calculator.catalog.datafile as datafile

    monkeypatch.setattr(datafile, "MAX_YAML_CHARS", 100)
    with pytest.raises(DataFileError, match="latin.yaml: larger than 100 characters"):
        load_model(latin, Scenario)
    with pytest.raises(DataFileError, match="upload.yaml: larger than 100 characters"):  # an upload: the same rule
        load_model_text(SCENARIO, "upload.yaml", Scenario)


# --- bounded work -----------------------------------------------------------------------------------


def _requests(n: int, seed: int = 0) -> list[Request]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        shared = rng.randrange(4)
        blocks = (shared,) + tuple(rng.randrange(10) for _ in range(rng.randrange(6)))
        chain, parent = [], 0
        for b in blocks:
            parent = hash((parent, b))
            chain.append(parent)
        out.append(Request(tuple(chain), 16 * len(chain) + rng.randrange(16), None, float(i), i + 1))
    return out


@pytest.mark.parametrize("routing", ["round_robin", "random", "prefix_aware"])
@pytest.mark.timeout(60)
def test_memory_and_time_follow_the_replicas_used_not_the_replicas_asked(routing: str) -> None:
    requests = _requests(60)
    tracemalloc.start()
    try:
        [result] = simulate(requests, [CacheConfig.model_validate({"replicas": 100_000, "routing": routing})], 16)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000  # a cache for each of 100,000 replicas took over 40 MB
    assert result.requests == 60 and sum(r.requests for r in result.replicas) == 60
    assert result.idle_replicas == 100_000 - len(result.replicas)
    assert all(r.requests > 0 for r in result.replicas)


def _reference_prefix_aware(requests: list[Request], config: CacheConfig) -> list[tuple[int, int]]:
    """The routing rule as first written: ask every replica for its match, then pick (the slow way)."""
    caches: list[dict[int, None]] = [{} for _ in range(config.replicas)]
    loads = [0] * config.replicas
    out = []
    for request in requests:
        matches = []
        for cache in caches:
            n = 0
            for h in request.blocks:
                if h not in cache:
                    break
                n += 1
            matches.append(n)
        limit = min(loads) + config.balance * sum(loads) / config.replicas + 1
        allowed = [i for i in range(config.replicas) if loads[i] <= limit]
        r = max(allowed, key=lambda i: (matches[i], -loads[i], -i))
        out.append((r, matches[r]))
        for h in request.blocks:
            caches[r][h] = None
        loads[r] += 1
    return out


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    replicas=st.integers(2, 12),
    balance=st.sampled_from([0.0, 0.2, 1.0, 50.0]),
    n=st.integers(1, 80),
)
def test_prefix_aware_routing_by_index_picks_what_asking_every_replica_picks(
    seed: int, replicas: int, balance: float, n: int
) -> None:
    from calculator.traffic.prefix import _Run

    requests = _requests(n, seed)
    config = CacheConfig(replicas=replicas, routing="prefix_aware", balance=balance)
    run = _Run(config, 16)
    picked = []
    for request in requests:
        picked.append(run._route(request.blocks))
        run.feed(request)  # routes again, the same way: the state moves on
    assert picked == _reference_prefix_aware(requests, config)


def _session_log(path: Path, lines: int, shuffle: bool = False) -> Path:
    rng = random.Random(5)
    rows = [(f"user-{rng.randrange(lines // 10)}", 1_700_000_000 + i * 0.25) for i in range(lines)]
    if shuffle:
        rng.shuffle(rows)
    path.write_text("".join(f'{{"session_id": "{s}", "timestamp": {t}}}\n' for s, t in rows))
    return path


def test_a_session_log_is_read_in_memory_that_grows_by_bytes_a_line(tmp_path: Path) -> None:
    path = _session_log(tmp_path / "sessions.jsonl", 100_000)
    tracemalloc.start()
    try:
        log = read_session_log(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert log.turns == 100_000
    assert peak < 8_000_000  # holding (session, time) pairs as Python objects took about 25 MB


def test_session_gaps_are_exact_in_any_line_order(tmp_path: Path) -> None:
    ordered = read_session_log(_session_log(tmp_path / "ordered.jsonl", 5_000))
    shuffled = read_session_log(_session_log(tmp_path / "shuffled.jsonl", 5_000, shuffle=True))
    by_session: dict[str, list[float]] = {}
    for line in (tmp_path / "shuffled.jsonl").read_text().splitlines():
        row = json.loads(line)
        by_session.setdefault(row["session_id"], []).append(row["timestamp"])
    expected = sorted(b - a for t in by_session.values() for a, b in zip(sorted(t), sorted(t)[1:], strict=False))
    assert list(shuffled.gaps) == pytest.approx(expected) and list(ordered.gaps) == pytest.approx(expected)
    assert (shuffled.sessions, shuffled.turns, shuffled.span_seconds) == (
        ordered.sessions,
        ordered.turns,
        ordered.span_seconds,
    )
    assert ordered.distribution().cdf(60) == pytest.approx(sum(g <= 60 for g in expected) / len(expected))


@pytest.mark.timeout(60)
def test_a_trace_over_centuries_is_refused_not_counted_hour_by_hour(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps({"timestamp": t}) + "\n" for t in (0, 60_000, 10**15)))  # ms
    with pytest.raises(InputError, match="the timestamps span 31,688 years"):
        trace_shape(path)


def test_impossible_dates_in_a_trace_are_skipped_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    rows = [f"2026-03-02 10:{m:02d}:00" for m in range(30)] + ["2026-02-30 10:00:00", "10000-01-01 00:00:00"]
    path.write_text("TIMESTAMP,tokens\n" + "".join(f"{r},5\n" for r in rows))
    shape = trace_shape(path)
    assert shape.requests == 30
    assert any(n.startswith("2 line(s) of the log skipped") and ":32: '2026-02-30 10:00:00'" in n for n in shape.notes)


def test_a_timestamp_beyond_any_float_is_a_malformed_line_not_an_overflow(tmp_path: Path) -> None:
    from calculator.traffic.prefix import parse_timestamp

    with pytest.raises(ValueError, match="not a finite number"):
        parse_timestamp(10**400, "timestamp")
    assert math.isfinite(parse_timestamp(10**18, "timestamp") or 0)


def test_a_first_timestamp_beyond_any_float_is_skipped_and_the_numbers_after_it_read(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_text("timestamp\n" + "9" * 400 + "\n" + "".join(f"{60 * i}\n" for i in range(10)))
    shape = trace_shape(path)
    assert shape.requests == 10 and not shape.clock_times
    assert any(":2: '99999" in n and "is not a finite number" in n for n in shape.notes)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"prompt": "a"}\n{"prompt": "b\x92"}\n', "mine.jsonl:2: not UTF-8 text"),
        (b"[" * 5000 + b"\n", "mine.jsonl:1: nested deeper than"),
        (b'{"prompt": "a"}\r{"prompt": "b"}', None),
    ],
)
def test_the_replay_prompt_log_is_read_like_every_other_log_and_named_by_its_upload(
    tmp_path: Path, content: bytes, expected: str | None
) -> None:
    # Replay reads the log it sends through the shared reader: a non-UTF-8 byte or a bomb is one line
    # naming the upload's own name (not the server's temporary copy), and \r line ends count.
    from calculator.measure.bench import read_prompt_log

    path = tmp_path / "upload-copy-1234.jsonl"
    path.write_bytes(content)
    if expected is None:
        assert len(read_prompt_log(path, name="mine.jsonl")) == 2
        return
    with pytest.raises(InputError) as info:
        read_prompt_log(path, name="mine.jsonl")
    assert info.value.field == "replay.prompts" and expected in info.value.message
    assert str(tmp_path) not in info.value.message
