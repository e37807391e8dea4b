"""Prefix analysis over shards, on this machine's cores and on a Dask cluster, gives exactly the report of
one process: the same requests in the same order, the same malformed lines, the same errors."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import text_lines
from calculator.cli import main
from calculator.errors import InputError
from calculator.traffic import shards
from calculator.traffic.prefix import CacheConfig, analyse_log

MOONCAKE = Path(__file__).resolve().parent / "fixtures" / "traces" / "mooncake"
SCENARIO = CacheConfig(capacity_tokens=4_000, ttl_seconds=600, replicas=2)
CURVE = [4_000, 1_000, 20_000]


@pytest.fixture(autouse=True)
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "SHARD_CHARS", 3_000)  # a few requests a shard: many shards from a small log


def _chat_log(path: Path, conversations: int = 12, junk_first: int = 0) -> Path:
    """Conversations that resend their history, interleaved in time, with malformed lines among them."""
    lines = [json.dumps({"note": f"not a request {i}"}) for i in range(junk_first)]
    system = {"role": "system", "content": "You answer questions about invoices. Keep it short. " * 8}
    history: dict[int, list[dict[str, str]]] = {c: [system] for c in range(conversations)}
    t = 1_700_000_000.0
    for turn in range(5):
        for c in range(conversations):
            history[c].append({"role": "user", "content": f"Conversation {c}, question {turn}: total of invoice {c}?"})
            t += 7.5
            lines.append(
                json.dumps({"timestamp": t, "messages": history[c], "usage": {"completion_tokens": 20 + c + turn}})
            )
            history[c].append({"role": "assistant", "content": f"Invoice {c} totals {100 * c + turn} euros."})
            if (turn * conversations + c) % 9 == 4:
                lines.append("{not json")
            if (turn * conversations + c) % 13 == 6:
                lines.extend(["[1, 2]", json.dumps({"messages": "not a list"}), ""])
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_chat_log_on_two_processes_gives_the_report_of_one(tmp_path: Path) -> None:
    log = _chat_log(tmp_path / "chat.jsonl")
    one = analyse_log(log, scenario=SCENARIO, capacities=CURVE)
    two = analyse_log(log, scenario=SCENARIO, capacities=CURVE, workers=2)
    assert one.requests == 60 and one.malformed.count > 5  # the log is what the test means it to be
    assert two == one


def test_a_compressed_log_read_here_and_hashed_on_two_processes_gives_the_report_of_one(tmp_path: Path) -> None:
    log = _chat_log(tmp_path / "chat.jsonl")
    packed = tmp_path / "chat.jsonl.gz"
    packed.write_bytes(gzip.compress(log.read_bytes()))  # no byte ranges in gzip: the lines are sent instead
    assert analyse_log(packed, scenario=SCENARIO, workers=2) == analyse_log(packed, scenario=SCENARIO)


def test_the_format_is_found_on_the_first_request_even_after_shards_of_other_lines(tmp_path: Path) -> None:
    log = _chat_log(tmp_path / "late.jsonl", conversations=4, junk_first=200)  # junk over several shards
    one = analyse_log(log)
    assert one.malformed.count >= 200 and one.malformed.lines[0].endswith(
        "not a request: no 'messages', 'prompt', 'hash_ids', 'conversations' or 'text'"
    )
    assert analyse_log(log, workers=2) == one


def test_a_mooncake_trace_and_a_prompt_log_on_two_processes_give_the_reports_of_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shards, "SHARD_CHARS", 300_000)  # the 3 MB trace in ten shards
    trace = MOONCAKE / "conversation_trace.jsonl"
    assert analyse_log(trace, workers=2, capacities=[51_200]) == analyse_log(trace, capacities=[51_200])
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(
        "".join(json.dumps({"prompt": "Translate to French: " * 20 + f"sentence {i}"}) + "\n" for i in range(80))
        + json.dumps({"prompt": list(range(40))})
        + "\n"
    )
    assert analyse_log(prompts, "prompt", workers=2) == analyse_log(prompts, "prompt")


def test_a_log_with_no_request_fails_alike_on_two_processes(tmp_path: Path) -> None:
    log = tmp_path / "none.jsonl"
    log.write_text("".join(json.dumps({"x": i, "pad": "p" * 400}) + "\n" for i in range(40)))
    with pytest.raises(DataFileError) as one:
        analyse_log(log)
    with pytest.raises(DataFileError) as two:
        analyse_log(log, workers=2)
    assert str(two.value) == str(one.value)


def test_a_ttl_without_timestamps_fails_alike_on_two_processes(tmp_path: Path) -> None:
    log = tmp_path / "untimed.jsonl"
    log.write_text("".join(json.dumps({"prompt": f"question {i} " * 100}) + "\n" for i in range(30)))
    for workers in (1, 2):
        with pytest.raises(InputError, match="line 1 has none"):
            analyse_log(log, scenario=CacheConfig(ttl_seconds=60), workers=workers)


def test_prefix_command_gives_the_same_json_on_one_and_on_two_workers(tmp_path: Path) -> None:
    log = _chat_log(tmp_path / "chat.jsonl")

    def run(*flags: str) -> str:
        args = [sys.executable, "-m", "calculator", "prefix", str(log), "--json", "--capacity-tokens", "4000"]
        done = subprocess.run([*args, *flags], capture_output=True, text=True, check=True)
        return done.stdout

    assert run("--workers", "2") == run("--workers", "1")


# --- Dask ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_address() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


def test_a_chat_log_hashed_on_a_dask_cluster_gives_the_report_of_one_process(
    tmp_path: Path, dask_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _chat_log(tmp_path / "chat.jsonl")
    local = analyse_log(log, scenario=SCENARIO, capacities=CURVE)
    assert analyse_log(log, scenario=SCENARIO, capacities=CURVE, cluster=dask_address) == local
    monkeypatch.setattr(shards, "SHARD_CHARS", 300_000)  # the 3 MB trace in ten shards
    trace = MOONCAKE / "conversation_trace.jsonl"
    assert analyse_log(trace, cluster=dask_address) == analyse_log(trace)


def test_cluster_workers_send_back_block_hashes_and_counts_never_prompt_text(
    tmp_path: Path, dask_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[object] = []
    in_order = shards.in_order

    def recorded(*args: Any) -> Iterator[object]:
        for result in in_order(*args):
            sent.append(result)  # what came back from the cluster's workers
            yield result

    monkeypatch.setattr("calculator.traffic.prefix.in_order", recorded)
    secret = "the launch code is 4711"
    log = tmp_path / "secret.jsonl"
    log.write_text("".join(json.dumps({"prompt": f"{secret} {i} " * 40}) + "\n" for i in range(30)))
    analyse_log(log, cluster=dask_address)
    assert sent and all("launch code" not in repr(r) for r in sent)
    assert all(str(b.blocks.dtype) == "int64" for r in sent for b in r.batches)  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
def test_an_unreachable_cluster_is_named_within_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setattr(shards, "CONNECT_TIMEOUT_S", 1)
    log = _chat_log(tmp_path / "chat.jsonl", conversations=2)
    with pytest.raises(InputError, match=r"--cluster.*no Dask scheduler answered at 'tcp://127.0.0.1:9' within 1 s"):
        analyse_log(log, cluster="tcp://127.0.0.1:9")


def test_without_dask_the_cluster_flag_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails
    log = _chat_log(tmp_path / "chat.jsonl", conversations=2)
    with pytest.raises(
        InputError, match=r"needs Dask distributed \(pip install 'inference-cost-calculator\[cluster\]'"
    ):
        analyse_log(log, cluster="tcp://127.0.0.1:8786")


line_bytes = st.lists(
    st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", b"\xff", "é".encode(), b"\xef\xbb\xbf", b"{}", b"xyz" * 9]),
    max_size=60,
).map(b"".join)


@settings(max_examples=80, deadline=None)
@given(line_bytes, st.sampled_from([1, 2, 5, 17, 1000]))
def test_byte_ranges_read_where_they_are_give_the_lines_of_the_whole_file(data: bytes, size: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_bytes(data)
        whole = list(text_lines(path, "log"))
        parts = [
            line
            for s, e, first in shards.byte_ranges(path, size)
            for line in shards.range_lines(path, "log", s, e, first)
        ]
    assert parts == whole


@pytest.mark.parametrize(("given_workers", "said"), [("0", "0 must be 1 or more"), ("2000", "give 1 to 1,024")])
def test_a_worker_count_out_of_range_is_named(
    capsys: pytest.CaptureFixture[str], given_workers: str, said: str
) -> None:
    assert main(["prefix", str(MOONCAKE / "conversation_trace.jsonl"), "--workers", given_workers]) == 2
    err = capsys.readouterr().err
    assert "--workers" in err and said in err and "Traceback" not in err


# --- taking results in order, this process working while it waits ---------------------------------------


class _LazyFuture:
    """A pool's task that finishes only when its result is asked for (a worker far slower than this process)."""

    def __init__(self, fn: Any, args: tuple[Any, ...], ready: bool) -> None:
        self.fn, self.args, self.ready = fn, args, ready

    def done(self) -> bool:
        return self.ready

    def result(self) -> Any:
        return self.fn(*self.args)


class _FakePool:
    workers = 1

    def __init__(self, ready: bool) -> None:
        self.ready = ready
        self.sent: list[int] = []

    def submit(self, fn: Any, *args: Any) -> _LazyFuture:
        self.sent.append(args[1])
        return _LazyFuture(fn, args, self.ready)

    def share(self, value: Any) -> Any:
        return value


def _square(shared: Any, task: int) -> int:
    return task * task


def test_this_process_takes_tasks_while_the_next_result_is_not_ready_and_results_keep_their_order() -> None:
    pool = _FakePool(ready=False)
    ran_here: list[int] = []
    held: list[int] = []

    def here(task: int) -> int:
        ran_here.append(task)
        return task * task

    results = []
    for result in shards.in_order(pool, _square, None, range(40), here):
        results.append(result)
        held.append(len(pool.sent) + len(ran_here) - len(results))
    assert results == [t * t for t in range(40)]
    assert sorted(pool.sent + ran_here) == list(range(40))  # each task ran once, here or on the pool
    assert ran_here and pool.sent  # both worked
    assert max(held) <= 2 * pool.workers + 2  # results waiting to be taken stay bounded


def test_no_task_runs_here_when_the_pool_keeps_up() -> None:
    pool = _FakePool(ready=True)

    def here(task: int) -> int:
        raise AssertionError(f"task {task} ran here although the pool's results were ready")

    results = list(shards.in_order(pool, _square, None, range(25), here))
    assert results == [t * t for t in range(25)]
    assert pool.sent == list(range(25))
