"""Replay: a small benchmark of an OpenAI-compatible endpoint with your own prompt log, one record per level.

The form starts :func:`calculator.measure.bench.run_benchmark` in a background thread; the page polls it (a
fragment that reruns every two seconds) for a progress bar and a Cancel button. The core has no
cancel hook, so the page stops a run itself: the thread's progress stream and ``on_level`` callback
raise once the stop flag is set, which ends the run at the next finished request (the level then
running is dropped; finished levels are kept). The API key goes from the password field into the
thread's configuration and is cleared from the session as the run starts: it is never in the URL,
a record, a message or the page. The run makes this server send requests: once others can reach the
app, only to the origins the user allowed (see :mod:`app_pages._network`), checked before anything is sent.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import streamlit as st

from app_pages import _network, _scenario_ui, _uploads, _words
from app_pages._chart import altair_chart
from app_pages._data import catalogs
from app_pages._params import NumberParam, check_params
from app_pages._uploads import MAX_MB, upload_copy
from app_pages._widgets import bound_number
from calculator.capacity.memory import WEIGHT_BYTES
from calculator.catalog import limits
from calculator.catalog.textfile import APP_MAX_CHARS
from calculator.errors import InputError
from calculator.measure.bench import (
    BenchConfig,
    Level,
    LevelResult,
    Prompt,
    chat_url,
    public_url,
    read_prompt_log,
    run_benchmark,
    write_records,
)
from calculator.present import capacity_charts as cc
from calculator.present.work import WorkStopped, run_limited
from calculator.pricing.compare import Catalogs

LOG_TYPES = ("jsonl", "json")  # what the prompt-log uploader takes (plain, .gz or .zst)

BIND: Literal["query-params"] = "query-params"
MAX_REQUESTS = 200
MAX_LEVELS = 6
MAX_CONCURRENCY = 64
WARMUP = 4
# Seconds between progress updates (a comment: a page's bare string is shown on the page). Each update reruns a
# fragment in this process, and polling every 0.5 s put 80 ms of event-loop lag into the client thread (TTFT tails
# inflated, levels marked client-limited).
POLL_S = 2.0
NOT_STATED = "not stated"
NUMBERS = {
    "r_n": NumberParam("Requests per level", int, 1, MAX_REQUESTS),
    "r_max": NumberParam("Max output tokens (0: as the log says)", int, limits.TOKENS.low, limits.TOKENS.high),
    "r_to": NumberParam("Timeout per request (s)", float, 1.0, 600.0),
    "r_gn": NumberParam("GPUs (0: not stated)", int, 0, limits.GPUS_PER_REPLICA.high),
}

cat: Catalogs = catalogs()
ss = st.session_state


class _Cancelled(Exception):
    """Raised inside the run's thread once Cancel was pressed."""


@dataclass
class Run:
    """One run, shared between the page (reads) and its thread (writes). Holds no API key."""

    prompts_name: str
    endpoint: str
    model: str
    levels: tuple[Level, ...]
    requests_per_level: int
    stop: threading.Event = field(default_factory=threading.Event)
    label: str = "starting"
    done: int = 0
    total: int = 0
    results: list[LevelResult] = field(default_factory=list)
    error: str | None = None
    cancelled: bool = False
    finished: bool = False
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    yaml_text: str | None = None

    @property
    def records(self) -> list[Any]:
        return [r.record for r in self.results if r.record is not None]


class _ProgressStream:
    """Stands in for a terminal: reads the core's progress line (``label [###...] done/total``) into the run,
    and stops the run from inside once the stop flag is set."""

    LINE = re.compile(r"\r?(?P<label>.*?)\s+\[[#.]*\] (?P<done>\d+)/(?P<total>\d+)")

    def __init__(self, run: Run) -> None:
        self.run = run

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        found = self.LINE.match(text)
        if found:
            self.run.label = found["label"].strip()
            self.run.done, self.run.total = int(found["done"]), int(found["total"])
            if self.run.stop.is_set():
                raise _Cancelled
        return len(text)

    def flush(self) -> None:
        return None


def _scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def _yaml(run: Run) -> str | None:
    records = run.records
    if not records:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "replay.yaml"
        write_records(path, records, header=f"replayed {run.prompts_name} against {run.endpoint} ({run.model})")
        return path.read_text(encoding="utf-8")


def _work(run: Run, cfg: BenchConfig, prompts: list[Prompt]) -> None:
    """The thread: run every level, keep the finished ones, never raise (the page shows what happened)."""

    def on_level(done: list[LevelResult]) -> None:
        run.results = list(done)
        if run.stop.is_set():
            raise _Cancelled

    try:
        run_benchmark(cfg, prompts, on_level=on_level, progress_stream=_ProgressStream(run))
    except _Cancelled:
        run.cancelled = True
    except InputError as exc:
        run.error = _scrub(_words.say(exc), cfg.api_key)
    except Exception as exc:  # the page reports any failure; a thread's traceback would reach no one
        run.error = f"The run stopped: {_scrub(_words.unexpected(exc), cfg.api_key)}"
    try:
        run.yaml_text = _yaml(run)
    except Exception as exc:
        run.error = (
            run.error or ""
        ) + f" The records could not be written: {_scrub(_words.unexpected(exc), cfg.api_key)}"
    run.ended = time.monotonic()
    run.finished = True


def parse_levels(text: str) -> list[int]:
    """``1, 4, 16`` -> [1, 4, 16]; an InputError naming the field when a value is not allowed."""
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    if not parts:
        raise InputError("replay.concurrency", "give at least one concurrency, e.g. 1, 4, 16")
    values: list[int] = []
    for p in parts:
        # ASCII digits, few enough to read: '²' is a digit to isdigit() but not to int(), 5,000 digits not at all
        if not (p.isascii() and p.isdigit() and len(p) <= 9) or not 1 <= int(p) <= MAX_CONCURRENCY:
            shown = repr(p) if len(p) <= 20 else f"{p[:12]!r}... ({len(p):,} characters)"
            raise InputError("replay.concurrency", f"{shown} is not a whole number from 1 to {MAX_CONCURRENCY}")
        if int(p) not in values:
            values.append(int(p))
    if len(values) > MAX_LEVELS:
        raise InputError("replay.concurrency", f"{len(values)} levels; this page runs at most {MAX_LEVELS}")
    return values


def targets() -> _network.ReplayTargets:
    """Where this app may make its server send requests (read on every use: the variable can change)."""
    return _network.replay_targets(st.get_option("server.address"), os.environ.get(_network.ALLOW_ENV))


def _start() -> None:
    """The form's submit callback: check the inputs, clear the key from the session, start the thread."""
    secret = (ss.get("r_key") or "").strip() or None
    ss["r_key"] = ""  # the key lives on only in the run's thread
    ss.pop("r_problems", None)
    run_now: Run | None = ss.get("r_run")
    if run_now is not None and not run_now.finished:
        return
    problems: list[str] = []
    base_url = (ss.get("r_url") or "").strip()
    model = (ss.get("r_model") or "").strip()
    blocked = targets().problem(base_url)  # before anything reads the URL further, and before any request
    if blocked:
        problems.append(f"**Base URL**: {blocked}")
    else:
        try:
            chat_url(base_url)
        except InputError as exc:
            problems.append(f"**Base URL**: {exc.message}")
    if not model:
        problems.append("**Model**: give the model name the endpoint serves, e.g. `meta-llama/Llama-3.3-70B-Instruct`")
    levels: list[int] = []
    try:
        levels = parse_levels(ss.get("r_conc") or "")
    except InputError as exc:
        problems.append(f"**Concurrency levels**: {exc.message}")
    upload = _uploads.uploaded(ss, "r_log", LOG_TYPES)
    prompts: list[Prompt] = []
    if upload is None:
        refused = _uploads.refusal(ss, "r_log", "Prompt log", LOG_TYPES)
        problems.append(f"**Prompt log**: {refused or 'upload a JSON Lines file (one request per line)'}")
    else:
        with upload_copy(upload.getvalue(), upload.name, (".jsonl", ".json")) as path:
            try:
                # in a child process: within a time and memory limit, the server answering other sessions
                prompts = run_limited(
                    f"Reading {upload.name}", read_prompt_log, path, name=upload.name, max_chars=APP_MAX_CHARS
                )
            except InputError as exc:
                problems.append(f"**Prompt log**: {exc.message}")
            except WorkStopped as exc:
                problems.append(f"**Prompt log**: {exc}")
    if problems or upload is None or blocked:  # a missing upload or a refused target is among the problems
        ss["r_problems"] = problems
        return
    gpu = ss.get("r_gpu") or NOT_STATED
    precision = ss.get("r_prec") or NOT_STATED
    cfg = BenchConfig(
        base_url=base_url,
        model=model,
        levels=tuple(Level(c) for c in levels),
        requests_per_level=int(ss.get("r_n") or 32),
        warmup=WARMUP,
        max_tokens=int(ss.get("r_max") or 0) or None,
        timeout_s=float(ss.get("r_to") or 60.0),
        api_key=secret,
        gpu=None if gpu == NOT_STATED else gpu,
        gpu_count=int(ss.get("r_gn") or 0) or None,
        precision=None if precision == NOT_STATED else precision,
        engine=(ss.get("r_eng") or "").strip() or "unknown",
        prompts_name=upload.name,
    )
    run = Run(
        prompts_name=upload.name,
        endpoint=public_url(base_url),
        model=model,
        levels=cfg.levels,
        requests_per_level=cfg.requests_per_level or 0,
        total=WARMUP,
    )
    threading.Thread(target=_work, args=(run, cfg, prompts), name="replay-run", daemon=True).start()
    ss["r_run"] = run


def number(key: str, default: float, step: float, help: str, fmt: str | None = None) -> float:
    return bound_number(key, NUMBERS[key], default, step, help, fmt)


gpu_ids = [NOT_STATED, *cat.gpus.ids]
precisions = [NOT_STATED, *WEIGHT_BYTES]
url_params = {k: st.query_params[k] for k in st.query_params}
url_problems = check_params(url_params, NUMBERS, {"r_gpu": gpu_ids, "r_prec": precisions})
if "r_conc" in url_params:
    try:
        parse_levels(url_params["r_conc"])
    except InputError as exc:
        url_problems.append(f"URL parameter `r_conc` (Concurrency levels): {exc.message}")
run: Run | None = ss.get("r_run")
running = run is not None and not run.finished

# --- the form (sidebar) -----------------------------------------------------------------------------
with st.sidebar, st.form("r_form", border=False):
    st.text_input(
        "Base URL",
        key="r_url",
        placeholder="http://127.0.0.1:8000/v1",
        help="The OpenAI-compatible server's base URL; /chat/completions is added. Not kept in the address bar.",
    )
    st.text_input(
        "API key",
        key="r_key",
        type="password",
        autocomplete="off",
        help="Sent as a bearer token to the endpoint and nowhere else; cleared when the run starts. Leave empty "
        "for a local server without one.",
    )
    st.text_input(
        "Model",
        key="r_model",
        bind=BIND,
        help="The model name the endpoint serves (the 'model' field of each request).",
    )
    _uploads.uploader(
        "Prompt log (JSON Lines)",
        LOG_TYPES,
        key="r_log",
        max_upload_size=MAX_MB,
        help="One request per line: an OpenAI chat request body ('messages'), a batch line ({'body': ...}), or "
        "{'prompt': '...'}. Shuffled and walked in order across the levels.",
    )
    st.text_input(
        "Concurrency levels",
        value="1, 4",
        key="r_conc",
        bind=BIND,
        help=f"Requests in flight at each level, comma-separated; at most {MAX_LEVELS} levels of "
        f"1 to {MAX_CONCURRENCY}.",
    )
    c1, c2 = st.columns(2)
    with c1:
        number("r_n", 32, 8, f"Measured requests at each level, at most {MAX_REQUESTS}.", "%d")
    with c2:
        number("r_max", 256, 64, "Caps each answer (max_tokens); 0 keeps what each log line says.", "%d")
    number("r_to", 60.0, 10.0, "A request taking longer counts as failed (timeout).", "%g")
    with st.expander("What served it (optional, written into the records)"):
        st.text_input("Engine", key="r_eng", bind=BIND, placeholder="e.g. vllm 0.11", help="Engine and version.")
        st.selectbox("GPU", gpu_ids, key="r_gpu", bind=BIND, help="The GPU type behind the endpoint.")
        c1, c2 = st.columns(2)
        with c1:
            number("r_gn", 0, 1, "GPUs in one replica.", "%d")
        with c2:
            st.selectbox("Weights", precisions, key="r_prec", bind=BIND, help="Precision of the weights.")
    st.form_submit_button(
        "Run",
        type="primary",
        icon=":material/play_arrow:",
        on_click=_start,
        disabled=running,
        key="r_run_btn",
    )

# --- answers first ----------------------------------------------------------------------------------
st.title("Replay your prompts against an endpoint")
st.caption(
    f"A quick measurement, not a full benchmark: at most {MAX_LEVELS} levels of {MAX_REQUESTS} requests, "
    f"concurrency up to {MAX_CONCURRENCY}, one client process, after {WARMUP} warm-up requests. Each level becomes "
    "one measurement record the calculator sizes GPUs from. For longer runs use `python -m calculator bench`."
)
allowed_now = targets()
if allowed_now.allowed is not None:
    listed = ", ".join(f"`{o}`" for o in allowed_now.allowed)
    st.info(f"Replay may send requests {f'only to {listed}' if listed else 'to no endpoint'}: {allowed_now.why}.")
for problem in allowed_now.problems:
    st.warning(problem)
for problem in url_problems:
    st.error(problem)
for problem in ss.get("r_problems", []):
    st.error(problem)


@st.fragment(run_every=POLL_S)
def live() -> None:
    """Progress while the thread runs; a full rerun once it has finished."""
    current: Run | None = ss.get("r_run")
    if current is None:
        return
    if current.finished:
        st.rerun()
    share = current.done / current.total if current.total else 0.0
    finished = len(current.results)
    st.progress(
        min(share, 1.0),
        text=f"{current.label}: {current.done} of {current.total} requests "
        f"({finished} of {len(current.levels)} levels done, {time.monotonic() - current.started:.0f} s)",
    )
    st.button(
        "Cancel",
        key="r_cancel",
        icon=":material/stop:",
        on_click=current.stop.set,
        disabled=current.stop.is_set(),
        help="Stops at the next finished request; the level running then is dropped, finished levels are kept.",
    )
    if current.stop.is_set():
        st.caption("Stopping...")


def levels_frame(results: list[LevelResult]) -> pd.DataFrame:
    rows = []
    for res in results:
        r = res.record
        flags = [f for f, on in (("unreliable", res.unreliable), ("client-limited", res.client_limited)) if on]
        rows.append(
            {
                "Level": res.level.label,
                "Concurrency": res.level.concurrency,
                "Completed": f"{res.completed} of {res.sent}",
                "Failed": ", ".join(f"{k} x{v}" for k, v in res.errors.items()) or "0",
                "Requests/s": None if r is None else r.requests_per_s,
                "Output tok/s": None if r is None else cc.output_tokens_per_s(r),
                "TTFT p50 (ms)": None if r is None else r.ttft_ms.p50,
                "TTFT p95 (ms)": None if r is None else r.ttft_ms.p95,
                "ITL p50 (ms)": None if r is None else r.itl_ms.p50,
                "E2E p95 (ms)": None if r is None else r.e2e_ms.p95,
                "In / out tokens": None if r is None else f"{r.input_tokens:,.0f} / {r.output_tokens:,.0f}",
                "Flags": ", ".join(flags),
                "Record": None if r is None else r.id,
            }
        )
    return pd.DataFrame(rows)


if run is None:
    st.info("Fill in the form in the sidebar and press **Run**.")
    st.stop()
if not run.finished:
    live()
    if run.results:
        st.dataframe(levels_frame(run.results), hide_index=True, width="stretch")
    st.stop()

took = (run.ended or run.started) - run.started
if run.error:
    st.error(run.error)
if run.cancelled:
    st.warning(
        f"Cancelled after {len(run.results)} of {len(run.levels)} levels; the finished levels are below "
        "(the level running then was dropped)."
    )
if not run.results:
    if not run.error and not run.cancelled:
        st.warning("The run finished without a measured level.")
    st.stop()

records = run.records
with st.container(horizontal=True):
    if records:
        top = max(records, key=cc.output_tokens_per_s)
        st.metric(
            "Most output tokens/s",
            f"{cc.output_tokens_per_s(top):,.0f}",
            help=f"At concurrency {top.concurrency or 0:g}.",
            border=True,
        )
        first = records[0]
        st.metric(
            f"TTFT p95 at concurrency {first.concurrency or 0:g}",
            "-" if first.ttft_ms.p95 is None else f"{first.ttft_ms.p95:,.0f} ms",
            border=True,
        )
    st.metric("Levels measured", f"{len(records)} of {len(run.levels)}", border=True)
    st.metric("Failed requests", f"{sum(r.failed for r in run.results):,}", border=True)
st.success(
    f"Replayed **{run.prompts_name}** against **{run.endpoint}** ({run.model}): {len(run.results)} level(s) of "
    f"{run.requests_per_level} requests in {took:.1f} s."
)
st.dataframe(
    levels_frame(run.results),
    hide_index=True,
    width="stretch",
    column_config={
        "Requests/s": st.column_config.NumberColumn(format="%.2f"),
        "Output tok/s": st.column_config.NumberColumn(format="%.1f"),
        "TTFT p50 (ms)": st.column_config.NumberColumn(format="%.1f"),
        "TTFT p95 (ms)": st.column_config.NumberColumn(format="%.1f"),
        "ITL p50 (ms)": st.column_config.NumberColumn(format="%.2f"),
        "E2E p95 (ms)": st.column_config.NumberColumn(format="%.0f"),
    },
)
if run.yaml_text:
    st.download_button(
        "Download the records (YAML)",
        run.yaml_text,
        file_name=f"replay-{re.sub(r'[^a-z0-9]+', '-', run.model.lower()).strip('-') or 'model'}.yaml",
        mime="application/x-yaml",
        key="r_dl",
        on_click="ignore",
        icon=":material/download:",
        help="A measurement file (schema_version 1): put it in measurements/ or import it on the Measurements page.",
    )
if records:
    _scenario_ui.use_records(records, "r")
    frame, x_title, _ = cc.run_chart_frame(records, "p95")
    left, right = st.columns(2)
    altair_chart(cc.throughput_chart(frame, x_title), width="stretch", where=left)
    altair_chart(cc.ttft_chart(frame, x_title, "p95"), width="stretch", where=right)
notes = {n for res in run.results for n in res.notes}
with st.expander("Notes from the run", expanded=any(res.unreliable or res.client_limited for res in run.results)):
    for res in run.results:
        st.markdown(f"**{res.level.label}**: " + " ".join(res.notes))
    if not notes:
        st.caption("None.")
