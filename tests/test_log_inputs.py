"""Prompt logs as users have them (issue 13 part 2, issue 14 part 5): genai-perf input files and ShareGPT
conversations; gzip and zstd; a folder, a glob, Parquet; s3:// (a local moto server) and fsspec's memory
file system. One log read any of these ways gives the same answer as the same log as plain JSON Lines, and
every broken input is one error naming the file and what is allowed.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import MIN_LINE_CHARS, Malformed, unpacked_length
from calculator.cli import main
from calculator.traffic.logsource import Columns, LogPart, open_log, part_records
from calculator.traffic.prefix import CacheConfig, LogReader, PrefixReport, analyse_log, match_per_request
from calculator.traffic.tokens import ApproxTokenizer, chat_tokens

LOGS = Path(__file__).resolve().parent / "fixtures" / "logs"
SHAREGPT = LOGS / "fastchat_dummy_conversation.json"
GENAI_QUERIES = LOGS / "genai_perf_queries.jsonl"
GENAI_PAYLOAD = LOGS / "genai_perf_payload.jsonl"
SCENARIO = CacheConfig(capacity_tokens=2_000, replicas=2, routing="prefix_aware")
CURVE = (500, 2_000, 8_000)


def _requests(n: int = 120) -> list[dict[str, Any]]:
    """A chat log with a shared system prompt and growing conversations: reuse at several depths."""
    system = {"role": "system", "content": "You are a careful assistant for the billing team. " * 6}
    rows = []
    for i in range(n):
        turns = [
            {"role": "user", "content": f"question {k} of conversation {i % 7}: " + "why? " * 9} for k in range(i % 4)
        ]
        rows.append(
            {
                "messages": [system, *turns, {"role": "user", "content": f"request {i} " + "details " * (i % 5)}],
                "timestamp": 1_000 + 2 * i,
                "usage": {"completion_tokens": 10 + i % 3},
            }
        )
    return rows


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _same(report: PrefixReport, plain: PrefixReport) -> None:
    """Everything but the name of the input."""
    got, want = report.model_dump(), plain.model_dump()
    got.pop("source"), want.pop("source")
    assert got == want


def _analyse(source: Any, **kw: Any) -> PrefixReport:
    return analyse_log(source, scenario=SCENARIO, capacities=CURVE, **kw)


# --- formats other tools write ------------------------------------------------------------------------


def test_sharegpt_array_is_one_request_per_user_turn_with_its_history() -> None:
    conversations = json.loads(SHAREGPT.read_text())
    user_turns = sum(1 for c in conversations for m in c["conversations"] if m["from"] == "human")
    requests = list(LogReader(SHAREGPT, block_size=4))
    assert len(requests) == user_turns == 1_000
    # the first conversation: "Who are you?" answered, then "Have a nice day!" sent with that history
    first = conversations[0]["conversations"]
    tok = ApproxTokenizer()
    one = chat_tokens(tok, [{"role": "user", "content": first[0]["value"]}])
    two = chat_tokens(
        tok,
        [
            {"role": "user", "content": first[0]["value"]},
            {"role": "assistant", "content": first[1]["value"]},
            {"role": "user", "content": first[2]["value"]},
        ],
    )
    assert [requests[0].input_tokens, requests[1].input_tokens] == [len(one), len(two)]
    assert requests[0].output_tokens == len(tok.encode(first[1]["value"]))
    assert requests[1].output_tokens == len(tok.encode(first[3]["value"]))
    # the second request repeats the whole first turn: every full block of it is a hit
    matched = list(match_per_request(requests[:2], block_size=4))
    assert matched[1] >= len(one) // 4 * 4 > 0


def test_sharegpt_as_json_lines_reads_as_the_array(tmp_path: Path) -> None:
    lines = tmp_path / "sharegpt.jsonl"
    lines.write_bytes(_jsonl(json.loads(SHAREGPT.read_text())))
    plain = _analyse(lines)
    assert plain.format == "sharegpt" and plain.requests == 1_000 and plain.prefix_share > 0.3
    _same(_analyse(SHAREGPT), plain)


def test_genai_perf_text_lines_read_as_the_same_prompts(tmp_path: Path) -> None:
    texts = [json.loads(line)["text"] for line in GENAI_QUERIES.read_text().splitlines()]
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_bytes(_jsonl([{"prompt": t} for t in texts]))
    report = _analyse(GENAI_QUERIES)
    assert report.format == "genai-perf" and report.requests == 4
    want = _analyse(prompts).model_dump()
    got = report.model_dump()
    for data in (got, want):
        data.pop("source"), data.pop("format")
    assert got == want


def test_genai_perf_payload_times_are_milliseconds_and_a_line_without_text_is_named() -> None:
    reader = LogReader(GENAI_PAYLOAD)
    requests = list(reader)
    assert [r.timestamp for r in requests] == [0.123, 0.0, 0.456]
    assert reader.problems == [
        f"{GENAI_PAYLOAD}:4: no 'text': genai-perf makes up a synthetic prompt for this "
        "line, so there is nothing to measure"
    ]


def test_a_json_object_that_is_not_json_lines_says_what_a_log_is(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"data": [{"payloads": []}]}, indent=2))
    with pytest.raises(DataFileError) as info:
        analyse_log(path)
    assert info.value.lines[0].startswith(f"{path}:1: not valid JSON")
    assert (
        "a log is JSON Lines (one JSON object per line) or a JSON array of requests or conversations"
        in (info.value.lines[0])
    )


# --- one log, every way in: the same answer -----------------------------------------------------------


def _parquet(
    rows: list[dict[str, Any]], path: Path, *, names: tuple[str, str] = ("messages", "timestamp"), row_group: int = 25
) -> None:
    table = pa.table(
        {
            names[0]: [r["messages"] for r in rows],
            names[1]: [r["timestamp"] for r in rows],
            "usage": [r["usage"] for r in rows],
        }
    )
    pq.write_table(table, path, row_group_size=row_group)


@pytest.fixture(scope="module")
def plain_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PrefixReport]:
    path = tmp_path_factory.mktemp("plain") / "log.jsonl"
    path.write_bytes(_jsonl(_requests()))
    return path, _analyse(path)


@pytest.mark.parametrize("way", ["gzip", "zstd", "zstd frames", "json array", "parquet", "folder", "glob", "memory"])
def test_a_log_read_any_way_gives_the_answer_of_plain_json_lines(
    tmp_path: Path, plain_log: tuple[Path, PrefixReport], way: str
) -> None:
    rows = _requests()
    data = _jsonl(rows)
    source: Any
    if way == "gzip":
        source = tmp_path / "log.jsonl.gz"
        source.write_bytes(gzip.compress(data))
    elif way == "zstd":
        source = tmp_path / "log.jsonl.zst"
        source.write_bytes(zstandard.ZstdCompressor().compress(data))
    elif way == "zstd frames":  # one frame per part, as zstd writes appended files
        source = tmp_path / "log.jsonl.zst"
        packer = zstandard.ZstdCompressor()
        source.write_bytes(packer.compress(_jsonl(rows[:50])) + packer.compress(_jsonl(rows[50:])))
    elif way == "json array":
        source = tmp_path / "log.json"
        source.write_text(json.dumps(rows, indent=1))
    elif way == "parquet":
        source = tmp_path / "log.parquet"
        _parquet(rows, source)
    elif way in ("folder", "glob"):
        folder = tmp_path / "logs"
        (folder / "2026-11").mkdir(parents=True)
        for k, start in enumerate(range(0, len(rows), 30)):  # part-2 before part-10: by number, not text
            name = folder / "2026-11" / f"part-{k * 4}.jsonl.gz"
            name.write_bytes(gzip.compress(_jsonl(rows[start : start + 30])))
        (folder / "README.md").write_text("not a log")
        source = folder if way == "folder" else str(folder / "**" / "part-*.jsonl.gz")
    else:
        fs = fsspec.filesystem("memory")
        for k, start in enumerate(range(0, len(rows), 40)):
            with fs.open(f"/same-answer/day-{k + 1}.jsonl", "wb") as handle:
                handle.write(_jsonl(rows[start : start + 40]))
        source = "memory:///same-answer"
    _same(_analyse(source), plain_log[1])


def test_parquet_columns_are_named_by_flags_and_a_wrong_one_lists_the_columns(
    tmp_path: Path, plain_log: tuple[Path, PrefixReport], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.parquet"
    _parquet(_requests(), path, names=("body_messages", "sent_at"))
    report = _analyse(path, columns=Columns(messages="body_messages", timestamp="sent_at"))
    _same(report, plain_log[1])
    assert main(["prefix", str(path), "--messages-column", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert f"{path}: no column 'nope' (--messages-column); its columns are: body_messages, sent_at, usage" in err
    assert main(["prefix", str(path)]) == 2
    assert "no prompt column; name it with --messages-column" in capsys.readouterr().err


def test_the_command_line_reads_a_glob_of_compressed_parts(
    tmp_path: Path, plain_log: tuple[Path, PrefixReport], capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _requests()
    for k in range(3):
        (tmp_path / f"day{k + 1}.jsonl.zst").write_bytes(
            zstandard.ZstdCompressor().compress(_jsonl(rows[k * 40 : (k + 1) * 40]))
        )
    assert main(["prefix", str(tmp_path / "day*.jsonl.zst"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["requests"] == 120 and data["prefix_share"] == plain_log[1].prefix_share


# --- object stores --------------------------------------------------------------------------------------

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """A local S3 server (moto) on a free port; the client finds it the standard way (AWS_ENDPOINT_URL)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = {
        k: os.environ.get(k)
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_DEFAULT_REGION")
    }
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY=SECRET,
        AWS_ENDPOINT_URL=f"http://{host}:{port}",
        AWS_DEFAULT_REGION="us-east-1",
    )
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        import s3fs

        s3fs.S3FileSystem.clear_instance_cache()


def _put(endpoint: str, key: str, body: bytes, bucket: str = "prompt-logs") -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=bucket)
    client.put_object(Bucket=bucket, Key=key, Body=body)


def test_an_s3_folder_of_gzip_and_parquet_parts_gives_the_plain_answer(
    s3: str, tmp_path: Path, plain_log: tuple[Path, PrefixReport]
) -> None:
    rows = _requests()
    _put(s3, "2026/11/01.jsonl.gz", gzip.compress(_jsonl(rows[:60])))
    local = tmp_path / "p.parquet"
    _parquet(rows[60:], local)
    _put(s3, "2026/11/02.parquet", local.read_bytes())
    log = open_log("s3://prompt-logs/2026/11")
    assert [p.location for p in log.parts] == [
        "s3://prompt-logs/2026/11/01.jsonl.gz",
        "s3://prompt-logs/2026/11/02.parquet",
    ]
    _same(_analyse(log), plain_log[1])
    _same(_analyse("s3://prompt-logs/2026/*/0*"), plain_log[1])


def test_store_errors_never_show_a_secret(s3: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prefix", f"s3://AKIAEXAMPLE:{SECRET}@prompt-logs/2026/11"]) == 2
    err = capsys.readouterr().err
    assert SECRET not in err and "credentials are not taken in a URL" in err
    assert main(["prefix", "s3://no-such-bucket/logs/x.jsonl?X-Amz-Signature=" + SECRET]) == 2
    err = capsys.readouterr().err
    assert SECRET not in err and "s3://no-such-bucket/logs/x.jsonl?X-Amz-Signature=***: no such file or folder" in err


# --- hostile input: one clear error naming the file, and what is allowed ------------------------------

PACKED = _jsonl(_requests(40))
PACKERS = {"gzip": gzip.compress, "zstd": zstandard.ZstdCompressor().compress}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(PACKERS)), cut=st.floats(0.05, 0.95))
def test_a_truncated_compressed_log_is_one_error_naming_it(tmp_path: Path, kind: str, cut: float) -> None:
    packed = PACKERS[kind](PACKED)
    path = tmp_path / f"cut.jsonl.{kind}"
    path.write_bytes(packed[: max(5, int(len(packed) * cut))])
    with pytest.raises(DataFileError) as info:
        analyse_log(path)
    assert info.value.lines[0].startswith(f"{path}: the compressed ")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(PACKERS)), at=st.integers(12, 200), junk=st.binary(min_size=4, max_size=40))
def test_corrupt_compressed_data_is_an_error_or_bad_lines_never_a_crash(
    tmp_path: Path, kind: str, at: int, junk: bytes
) -> None:
    packed = PACKERS[kind](PACKED)
    path = tmp_path / f"bad.jsonl.{kind}"
    path.write_bytes(packed[:at] + junk + packed[at + len(junk) :])
    try:
        report = analyse_log(path)
    except DataFileError as exc:
        assert exc.lines[0].startswith(f"{path}")
    else:  # the damage hit bytes the decoder accepts: what it gave was read line by line
        assert report.requests + report.malformed.count >= 1


BOMBS = {kind: pack(b"\n" * 20_000_000) for kind, pack in PACKERS.items()}  # 20 MB of blank lines from a few kB


@settings(max_examples=10, deadline=None)
@given(kind=st.sampled_from(sorted(PACKERS)), limit=st.integers(1_000, 200_000))
def test_a_bomb_stops_at_the_limit(kind: str, limit: int) -> None:
    bomb = BOMBS[kind]  # blank lines: the line limit that comes with the size limit is met first
    with pytest.raises(DataFileError, match=f"bomb: more than {limit // MIN_LINE_CHARS:,} lines .blank ones count"):
        list(LogReader(io.BytesIO(bomb), name="bomb", max_chars=limit))


def test_what_an_archive_unpacks_to_is_counted_up_to_the_limit_only() -> None:
    data = b'{"prompt": "x"}\n' * 50_000
    for packed in (data, gzip.compress(data), zstandard.ZstdCompressor().compress(data)):
        handle = io.BytesIO(packed)
        assert unpacked_length(handle, "log", 10**9) == len(data)
        assert unpacked_length(handle, "log", 1_000) <= 1_000 + 2**20  # stops within a chunk of the limit
        assert handle.tell() == 0 and not handle.closed
    with pytest.raises(DataFileError, match="cut.gz: the compressed file is cut short"):
        unpacked_length(io.BytesIO(gzip.compress(data)[:-9]), "cut.gz", 10**9)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 3_000))
def test_a_broken_parquet_file_is_one_error_naming_it(tmp_path: Path, cut: int) -> None:
    whole = tmp_path / "whole.parquet"
    _parquet(_requests(40), whole)
    data = whole.read_bytes()
    path = tmp_path / "broken.parquet"
    path.write_bytes(
        data[: min(cut, len(data) - 1)] if cut % 2 else data[:4] + bytes(cut % 97) + data[4 + cut % 97 :][:cut]
    )
    with pytest.raises(DataFileError) as info:
        analyse_log(path)
    assert info.value.lines[0].startswith(str(path))


@settings(max_examples=30, deadline=None)
@given(scheme=st.from_regex(r"[a-z][a-z0-9+.-]{0,9}", fullmatch=True))
def test_an_unknown_url_scheme_names_the_ones_allowed(scheme: str) -> None:
    if scheme in ("s3", "s3a", "gs", "gcs", "memory", "file"):
        return
    with pytest.raises(DataFileError) as info:
        open_log(f"{scheme}://bucket/logs/*.jsonl")
    assert info.value.lines == [
        f"{scheme}://bucket/logs/*.jsonl: {scheme}:// is not a place logs are read from; give a path, or "
        "s3://, s3a://, gs://, gcs://"
    ]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("nothing-*.jsonl", "no file matches the pattern"),
        ("[unclosed", "no file matches the pattern"),
        ("", "no path given"),
        ("empty-folder", "a folder with no log in it; it may hold .jsonl, .ndjson, .json, .parquet, .pq files"),
    ],
)
def test_bad_globs_and_empty_folders_say_what_is_allowed(tmp_path: Path, pattern: str, message: str) -> None:
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "empty-folder" / "notes.txt").write_text("x")
    spec = str(tmp_path / pattern) if pattern else ""
    with pytest.raises(DataFileError, match=message.replace("[", r"\[").replace(".", r"\.")):
        open_log(spec)


def test_a_zip_archive_is_refused_by_name(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "logs.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("log.jsonl", PACKED)
    with pytest.raises(DataFileError, match="logs.zip: a zip archive, not a log; unpack it"):
        analyse_log(path)


def test_a_part_is_read_alone_for_sharding(tmp_path: Path) -> None:
    """Each part of a log reads by itself (a worker opens its own parts), numbered within the part."""
    for k in range(2):
        (tmp_path / f"p{k}.jsonl").write_bytes(_jsonl(_requests(10)))
    log = open_log(tmp_path)
    counts = [len(list(part_records(part, Malformed(part.name)))) for part in log.parts]
    assert counts == [10, 10]
    assert [n for n, _ in part_records(LogPart(log.parts[1].location, "p1"), Malformed("p1"))][:3] == [1, 2, 3]


def test_a_parquet_text_column_with_a_time_type_gives_unix_seconds(tmp_path: Path) -> None:
    import datetime as dt

    times = [dt.datetime(2026, 11, 1, 9, 0, s, tzinfo=dt.UTC) for s in (0, 5, 30)]
    path = tmp_path / "prompts.parquet"
    pq.write_table(
        pa.table({"text": ["hello there", "hello again", "bye"], "timestamp": pa.array(times, pa.timestamp("ms"))}),
        path,
    )
    reader = LogReader(path)
    assert [r.timestamp for r in reader] == [t.timestamp() for t in times]
    assert reader.format == "prompt"


@pytest.fixture(scope="module")
def small_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pq") / "log.parquet"
    _parquet(_requests(10), path)
    return path


@settings(max_examples=25, deadline=None)
@given(column=st.text(min_size=1, max_size=30).filter(lambda c: c not in ("messages", "timestamp", "usage")))
def test_a_wrong_parquet_column_names_the_file_and_its_columns(small_parquet: Path, column: str) -> None:
    with pytest.raises(DataFileError) as info:
        analyse_log(small_parquet, columns=Columns(timestamp=column))
    assert info.value.lines == [
        f"{small_parquet}: no column {column!r} (--timestamp-column); its columns are: messages, timestamp, usage"
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.from_regex(r"[a-z*?\[\]!-]{1,12}", fullmatch=True).filter(lambda p: any(c in p for c in "*?[")))
def test_a_glob_matching_nothing_says_how_globs_are_written(tmp_path: Path, pattern: str) -> None:
    folder = tmp_path / "none-here"
    folder.mkdir(exist_ok=True)
    with pytest.raises(DataFileError) as info:
        open_log(str(folder / pattern))
    assert info.value.lines == [
        f"{folder / pattern}: no file matches the pattern (* any name, ? one character, [ab] a set, ** any folders)"
    ]
