"""Uploads are read in a child process within a time and memory limit, cancellable from the page
(:mod:`calculator.present.work`, :mod:`app_pages._work`): a limit met is one sentence naming it, an error the
reader raises on purpose comes back as it was, and the server's process keeps its memory.

Every limit here is made small (a time limit of 0 s, an address space the interpreter alone passes), so
each test meets it at once instead of waiting for it; the children are killed within the test.
"""

from __future__ import annotations

import gzip
import io
import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from app_pages import _work as page_work
from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import APP_MAX_CHARS, TooLarge
from calculator.errors import InputError
from calculator.present import work
from calculator.present.work import Work, WorkStopped, run_limited
from calculator.pricing.ttl import read_session_log
from tests.apptest import open_page, text_of
from tests.test_app_ttl import SONNET

SESSIONS = b"".join(json.dumps({"session_id": f"s{i % 3}", "timestamp": 60 * i}).encode() + b"\n" for i in range(30))


def test_the_value_comes_back_as_read_in_the_child() -> None:
    log = run_limited("Reading sessions.jsonl", read_session_log, io.BytesIO(SESSIONS), name="sessions.jsonl")
    assert log == read_session_log(io.BytesIO(SESSIONS), name="sessions.jsonl")
    assert (log.sessions, log.turns) == (3, 30)


def test_an_error_raised_on_purpose_comes_back_as_it_was() -> None:
    with pytest.raises(DataFileError) as caught:
        run_limited("Reading empty.jsonl", read_session_log, io.BytesIO(b"\n\n"), name="empty.jsonl")
    assert caught.value.lines == ["empty.jsonl: no requests in the log"]
    with pytest.raises(TooLarge) as large:  # its __init__ takes other arguments than its args: rebuilt, not unpickled
        run_limited("Reading", read_session_log, io.BytesIO(SESSIONS), name="big.jsonl", max_chars=100)
    assert large.value.limit == 2 and "big.jsonl: more than 2 lines (blank ones count)" in str(large.value)
    with pytest.raises(InputError) as bad:
        run_limited("Checking", _refuse)
    assert bad.value.field == "load_profile" and bad.value.message == "no TIMESTAMP column"


def _refuse() -> None:
    raise InputError("load_profile", "no TIMESTAMP column")


def test_work_past_its_time_limit_is_stopped_naming_the_limit() -> None:
    started = time.monotonic()
    running = Work("Reading slow.jsonl", time.sleep, 120, seconds=1)
    with pytest.raises(WorkStopped, match="Reading slow.jsonl was stopped after 1 s, the time an upload may take"):
        running.result()
    assert running.elapsed < 60  # a guard: the sleep of 120 s was cut short, not waited for
    assert time.monotonic() - started < 60


def test_work_past_its_memory_limit_is_stopped_naming_the_limit() -> None:
    running = Work("Reading bomb.jsonl", bytearray, 2 * 1024**3, memory=1024**3)
    with pytest.raises(WorkStopped, match="Reading bomb.jsonl needed more than 1 GiB of memory, the limit here"):
        running.result()


def test_progress_is_handed_on_and_stop_ends_the_child() -> None:
    running = Work("Reading", _reports, progress=True)
    said: list[tuple[float, str]] = []
    while not said and running.elapsed < 30:
        said += running.poll(0.5)
    running.stop()
    assert said and said[0] == (0.5, "half way")
    with pytest.raises(WorkStopped, match="Reading was cancelled"):
        running.result()


def _reports(progress: object) -> None:
    assert callable(progress)
    progress(0.5, "half way")
    time.sleep(120)


# --- the pages --------------------------------------------------------------------------------------


def _prefix_upload(name: str, data: bytes) -> AppTest:
    at = open_page("prefix_analysis")
    at.selectbox(key="p_src").set_value("upload a log").run()
    at.file_uploader(key="p_log").set_value((name, data, "application/jsonl")).run()
    assert not at.exception
    return at


CHATS = b"".join(
    json.dumps(
        {"messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": f"q{i}"}]}
    ).encode()
    + b"\n"
    for i in range(40)
)


def test_an_upload_past_the_time_limit_says_so_on_the_prefix_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(work, "TIME_LIMIT", 0.0)  # met at the first look
    at = _prefix_upload("chats.jsonl.gz", gzip.compress(CHATS))
    said = text_of(at.error)
    assert "Reading chats.jsonl.gz was stopped after 0 s, the time an upload may take here" in said
    assert [c.value for c in at.code][0].startswith("python -m calculator prefix chats.jsonl.gz")
    assert not at.metric


def test_a_cancelled_upload_is_not_analysed_until_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _prefix_upload("chats.jsonl", CHATS)
    assert at.metric and not at.error
    # A click on Cancel while the log is read reruns the page with the button pressed: the same as this state.
    at.file_uploader(key="p_log").set_value(("other.jsonl", CHATS + CHATS, "application/jsonl"))
    monkeypatch.setattr(page_work, "cancelled", lambda key, token: True)
    at.run()
    assert "Reading other.jsonl was cancelled; nothing was analysed." in text_of(at.info)
    assert not at.metric
    monkeypatch.undo()
    at.button(key="p_again").click().run()
    assert not at.exception and at.metric
    assert at.metric[0].label


def test_an_upload_past_the_time_limit_says_so_on_the_cache_ttl_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(work, "TIME_LIMIT", 0.0)
    at = open_page("cache_ttl", 120, t_offer=SONNET, t_src="session log")
    at.file_uploader(key="t_log").set_value(("sessions.jsonl", SESSIONS, "application/jsonl")).run()
    assert not at.exception
    assert "Reading sessions.jsonl was stopped after 0 s, the time an upload may take here" in text_of(at.error)


def test_the_app_reads_at_most_what_it_always_did() -> None:
    assert APP_MAX_CHARS == 1_000_000_000 and work.MEMORY_LIMIT == 3 * 1024**3 and work.TIME_LIMIT == 600
