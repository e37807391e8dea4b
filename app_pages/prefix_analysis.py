"""Prefix analysis: how much of the prompt repeats (a request log in), and what a real cache keeps of it.

The share ``s`` comes from an unlimited cache; ``s*h`` and ``h`` from the cache chosen in the sidebar
(capacity per replica, TTL, replicas, routing). The measured values price a scenario beside the
assumed ones and can be applied to the Compare page. Every scalar input has a short stable key bound
to the URL, checked on the way in. All numbers come from ``calculator``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import time
from pathlib import Path
from typing import Any, Literal

import streamlit as st
from pydantic import ValidationError

from app_pages import _link, _state, _uploads, _words, _work
from app_pages._chart import altair_chart
from app_pages._data import catalogs, cheapest_picked, presets
from app_pages._params import NumberParam, check_params
from app_pages._uploads import LOG_MAX_MB, upload_copy
from app_pages._widgets import bound_number, bound_quantity, stop_if_unread
from calculator.capacity.memory import WEIGHT_BYTES, fit
from calculator.catalog import limits, textfile
from calculator.catalog.datafile import DATA_DIR, DataFileError
from calculator.catalog.textfile import TooLarge
from calculator.errors import InputError
from calculator.present import prefix_charts as pc
from calculator.present import work
from calculator.present.work import WorkStopped
from calculator.pricing.compare import Catalogs, Comparison, compare, without_unpriceable
from calculator.scenario.evidence import prefix_evidence
from calculator.scenario.model import Scenario, with_prefix_evidence
from calculator.traffic.prefix import FORMATS, CacheConfig, RequestLog, capacity_from_fit
from calculator.traffic.tokens import HuggingFaceTokenizer, Tokenizer

BIND: Literal["query-params"] = "query-params"
# Two public Mooncake traces ship with the package (Apache-2.0, see calculator/data/samples/README.md).
TRACES = DATA_DIR / "samples" / "mooncake"
# Options of URL-bound selects are what they show (the URL stores the shown text), so they read well.
EXAMPLES = {
    "example: synthetic trace": "synthetic_trace.jsonl",
    "example: conversation trace": "conversation_trace.jsonl",
}
UPLOAD = "upload a log"
CAPACITY_MODES = ["tokens", "GPU and model"]
ROUTING = {"round robin": "round_robin", "random": "random", "prefix-aware": "prefix_aware"}
COMPARE_PAGE = _state.COMPARE_PAGE
# The same limits as the prefix command's flags (0 is the page's "automatic" or "none"). A TTL has no limit of
# its own (the flag takes any number of seconds); three years is longer than any cache keeps a block.
NUMBERS = {
    "p_bs": NumberParam("Block size (tokens, 0: automatic)", int, 0, limits.CONTEXT.high),
    "p_cap": NumberParam(
        "Cache capacity per replica (tokens)", int, limits.CACHE_TOKENS.low, limits.CACHE_TOKENS.high, typed=True
    ),
    "p_n": NumberParam("GPUs per replica", int, limits.GPUS_PER_REPLICA.low, limits.GPUS_PER_REPLICA.high),
    "p_ttl": NumberParam("TTL (s, 0: none)", float, 0, 100_000_000),
    "p_rep": NumberParam("Replicas", int, limits.SIMULATED_REPLICAS.low, limits.SIMULATED_REPLICAS.high),
}
LOGS_KEPT = 3  # logs held in memory, read and hashed, for the next cache settings
TOKENIZER_MB = 64  # the largest tokenizer.json taken (Gemma 3's is 33 MB; most are 2 to 15 MB)

cat: Catalogs = catalogs()
preset_map: dict[str, Scenario] = presets()
ss = st.session_state
today = dt.date.today()
have_examples = TRACES.is_dir() and all((TRACES / f).is_file() for f in EXAMPLES.values())
sources = [*EXAMPLES, UPLOAD] if have_examples else [UPLOAD]
bases = [COMPARE_PAGE, *preset_map]
choices = {
    "p_src": sources,
    "p_fmt": ["auto", *FORMATS],
    "p_capm": CAPACITY_MODES,
    "p_model": cat.models.ids,
    "p_gpu": cat.gpus.ids,
    "p_prec": list(WEIGHT_BYTES),
    "p_route": list(ROUTING),
    "p_base": bases,
}
url_problems = _state.read_links(ss, st.query_params, cat, preset_map, today)  # a link's scenario first
url_problems += check_params({k: st.query_params[k] for k in st.query_params}, NUMBERS, choices)


def number(key: str, default: float, step: float, help: str, fmt: str, container: Any = None) -> float:
    if NUMBERS[key].typed:  # a token count, typed as people type it (10M)
        return bound_quantity(key, NUMBERS[key], default, help, limits.CACHE_TOKENS, container)
    return bound_number(key, NUMBERS[key], default, step, help, fmt, container)


def select(label: str, key: str, default: str, help: str) -> str:
    options = choices[key]
    chosen: str = st.selectbox(
        label,
        options,
        index=options.index(default) if default in options else 0,
        key=key,
        bind=BIND,
        help=help,
    )
    return chosen


def field_error(exc: InputError) -> None:
    st.error(_words.say(exc))


@st.cache_resource(show_spinner="Loading the tokenizer...", max_entries=4)
def _tokenizer(data: bytes, name: str) -> Tokenizer:
    """The exact tokenizer in an uploaded tokenizer.json (read from a temporary copy, named by the upload)."""
    with upload_copy(data, name, (".json",)) as path:
        return HuggingFaceTokenizer(path, field="tokenizer", name=name)


@st.cache_resource(show_spinner=False)
def _logs() -> dict[tuple[Any, ...], RequestLog]:
    """Logs read, by content, format, block size and tokenizer, shared by the sessions (the last few): a new
    cache setting reuses the requests and their kept stack distances instead of reading the log again."""
    return {}


# --- inputs (sidebar) -----------------------------------------------------------------------------
with st.sidebar:
    source = select(
        "Request log",
        "p_src",
        sources[0],
        "One of the two Mooncake example traces (Kimi's serving traces, block hashes only), or your own log "
        "(JSON Lines, a JSON array or Parquet; up to 1 GB unpacked).",
    )
    upload = None
    if source == UPLOAD:
        upload = _uploads.uploader(
            "Request log",
            ["jsonl", "ndjson", "json", "parquet"],
            key="p_log",
            max_upload_size=LOG_MAX_MB,
            help="OpenAI chat-completions request bodies (or Batch API lines), plain prompts, a Mooncake trace, a "
            "genai-perf input file or ShareGPT conversations: JSON Lines, a JSON array or Parquet, plain, gzip or "
            "zstd. Read here as a stream, up to 1 GB unpacked; a larger log gets the command that reads any size.",
        )
    if not have_examples:
        st.caption(f"The example traces are not on this machine (looked in `{TRACES}`); upload a log instead.")
    with st.expander("Reading the log", expanded=False):
        fmt = select(
            "Format",
            "p_fmt",
            "auto",
            "auto: detected from the first request. openai: chat-completions request bodies; prompt: plain "
            "prompts (text or token ids); mooncake: a Mooncake trace (block hash ids); sharegpt: conversations "
            "(one request per user turn, with the conversation so far); genai-perf: its input files ('text').",
        )
        block_size = int(
            number(
                "p_bs",
                0,
                16,
                "Tokens per KV cache block; only whole blocks match. 0: 16 (vLLM's default), or 512 for a "
                "Mooncake trace, whose hash ids stand for 512 tokens.",
                "%d",
            )
        )
        tokenizer_file = st.file_uploader(
            "Tokenizer (a tokenizer.json)",
            type=["json"],
            key="p_tok_file",
            max_upload_size=TOKENIZER_MB,
            help="A model's Hugging Face tokenizer.json, for exact token counts (read here, never from a path on "
            "the server). None: the built-in approximation (within about 10% on most text). Mooncake traces "
            "need none.",
        )
    st.subheader("The cache")
    capacity_mode = st.segmented_control(
        "Capacity per replica",
        CAPACITY_MODES,
        default="tokens",
        required=True,
        key="p_capm",
        bind=BIND,
        help="Give the cache size in tokens, or take the KV cache a model leaves free on a GPU.",
    )
    if capacity_mode == "GPU and model":
        model_id = select("Model", "p_model", "llama-3.3-70b", "Whose KV cache fills the memory.")
        c1, c2 = st.columns(2)
        with c1:
            gpu_id = select("GPU", "p_gpu", "h200-sxm", "The GPU type of one replica.")
        with c2:
            precision = select("Weights", "p_prec", "fp8", "Precision the weights are stored in.")
        gpu_count = int(number("p_n", 1, 1, "GPUs in one replica (tensor parallel).", "%d"))
    else:
        capacity_tokens = int(
            number(
                "p_cap",
                1_000_000,
                100_000,
                "Tokens the prefix cache of one replica holds; least recently used blocks are evicted.",
                "%d",
            )
        )
    c1, c2 = st.columns(2)
    with c1:
        ttl = number("p_ttl", 0.0, 60.0, "Drop a cached block not used for this long (needs timestamps).", "%g")
    with c2:
        replicas = int(number("p_rep", 4, 1, "Engine replicas, each with its own cache.", "%d"))
    routing = select(
        "Routing",
        "p_route",
        "round robin",
        "How requests are spread over the replicas. Prefix-aware sends a request where its start is cached, "
        "within a load limit. All three are run and shown side by side.",
    )

# --- the run ---------------------------------------------------------------------------------------
st.title("How much of the prompt repeats?")
st.caption(
    "The prefix share s of a request log (an unlimited cache), then what a real cache keeps of it: the token "
    "hit share s\u00d7h and the hit rate h for the cache in the sidebar. The address bar is a link to these inputs."
)
for problem in url_problems:
    st.error(problem)
stop_if_unread()

run_id: tuple[Any, ...]
if source == UPLOAD:
    if upload is None:
        st.info(
            "Upload a request log in the sidebar (.jsonl, .json, .parquet, or .gz and .zst compressed), or pick one "
            "of the example traces."
        )
        st.stop()
    # by content: the same log uploaded again (in any session) is not read again; hashed in place (a 1 GB
    # upload is not copied for it)
    name, run_id = upload.name, ("upload", hashlib.sha256(upload.getbuffer()).hexdigest(), upload.name)

    held = upload

    def log_file() -> contextlib.AbstractContextManager[Path]:
        """The upload as a private file, for the child process that reads it (removed after)."""
        return upload_copy(held.getbuffer(), held.name, (".jsonl", ".json", ".parquet"))

else:
    path = TRACES / EXAMPLES[source]
    name, run_id = path.name, ("file", str(path), path.stat().st_mtime_ns)

    def log_file() -> contextlib.AbstractContextManager[Path]:
        return contextlib.nullcontext(path)


tokenizer: Tokenizer | None = None
tokenizer_id: tuple[Any, ...] | None = None
if tokenizer_file is not None:
    tokenizer_id = (tokenizer_file.file_id, tokenizer_file.name, tokenizer_file.size)
    try:
        tokenizer = _tokenizer(tokenizer_file.getvalue(), tokenizer_file.name)
    except InputError as exc:
        field_error(exc)
        st.stop()

capacity_note = ""
try:
    if capacity_mode == "GPU and model":
        model, gpu = cat.models.get(model_id), cat.gpus.get(gpu_id)
        fitted = fit(model, gpu, precision, gpus=gpu_count)
        capacity_tokens = capacity_from_fit(fitted.max_cached_tokens, field="cache.gpu")
        capacity_note = (
            f"Capacity: the KV cache {model.id} at {precision.upper()} leaves on {gpu_count}x {gpu.id}, "
            f"{capacity_tokens:,} tokens per replica (an upper bound: running requests share it)."
        )
    config = CacheConfig(
        capacity_tokens=capacity_tokens, ttl_seconds=ttl or None, replicas=replicas, routing=ROUTING[routing]
    )
except InputError as exc:
    field_error(exc)
    st.stop()
except ValidationError as exc:
    st.error("These cache settings are not allowed:\n\n" + "\n".join(f"- {x}" for x in _words.invalid(exc, "cache")))
    st.stop()

log_key = (*run_id, fmt, block_size, tokenizer_id)
key = (log_key, config.model_dump_json())
runs: dict[tuple[Any, ...], pc.Analysis] = ss.setdefault("p_runs", {})
if key not in runs:
    with st.status(f"Analysing {name}", expanded=True) as status:
        bar = st.progress(0.0, text="Reading the log")
        started = time.monotonic()

        def show(share: float, what: str) -> None:
            bar.progress(min(share, 1.0), text=what)

        failure: DataFileError | InputError | WorkStopped | None = None
        try:
            logs = _logs()
            log = logs.get(log_key)
            if log is None:  # read in a child process: within limits, cancellable, the server answering others
                with log_file() as path:
                    log = _work.in_child(
                        f"Reading {name}",
                        "p_work",
                        log_key,
                        work.prefix_log,
                        str(path),
                        name,
                        format=fmt,
                        block_size=block_size or None,
                        tokenizer=tokenizer,
                        progress=True,
                        max_chars=textfile.APP_MAX_CHARS,
                        show=show,
                    )
                logs[log_key] = log
                while len(logs) > LOGS_KEPT:
                    logs.pop(next(iter(logs)), None)
            runs[key] = pc.analysis_of(log, config)
        except WorkStopped as exc:
            failure = exc
            status.update(label=f"{name} was not analysed", state="error", expanded=False)
        except TooLarge as exc:
            failure = exc
            status.update(label=f"{name} is larger than the app analyses", state="error", expanded=False)
        except (DataFileError, InputError) as exc:
            failure = exc
            status.update(label=f"{name} could not be analysed", state="error", expanded=False)
        else:
            took = time.monotonic() - started
            status.update(label=f"Analysed {name} in {took:.1f} s", state="complete", expanded=False)
    if isinstance(failure, WorkStopped):
        if failure.reason == "cancelled":
            st.info(f"Reading {name} was cancelled; nothing was analysed.")
            if st.button("Analyse again", key="p_again"):
                _work.forget_cancel("p_work")
                st.rerun()
        else:
            st.error(
                f"{failure}. The command line reads a log of any size within its own limits; with the settings in "
                "the sidebar:"
            )
            st.code(
                pc.cli_command(
                    name,
                    config,
                    format=fmt,
                    block_size=block_size or None,
                    tokenizer=None if tokenizer_file is None else tokenizer_file.name,
                ),
                language="bash",
            )
        st.stop()
    if isinstance(failure, TooLarge):  # the one rule for size: the app up to 1 GB unpacked, the command line any size
        st.error(
            f"{name} unpacks to more than {failure.limit:,} characters of text, more than this page analyses. The "
            "command line streams a log of any size (a folder, a glob, Parquet or compressed files, s3:// or gs:// "
            "as well); with the settings in the sidebar:"
        )
        st.code(
            pc.cli_command(
                name,
                config,
                format=fmt,
                block_size=block_size or None,
                tokenizer=None if tokenizer_file is None else tokenizer_file.name,
            ),
            language="bash",
        )
        st.stop()
    if isinstance(failure, DataFileError):  # shown outside the collapsed status box
        st.error(
            f"{name} could not be used (no request in it could be read):\n\n"
            + "\n".join(f"- `{x}`" for x in failure.lines)
        )
        st.stop()
    if isinstance(failure, InputError):
        field_error(failure)
        st.stop()
    while len(runs) > 3:  # keep the last few runs of this session, not every one
        runs.pop(next(iter(runs)))
analysis = runs[key]
report = analysis.report
scen = report.scenario

# --- answers first ----------------------------------------------------------------------------------
with st.container(horizontal=True):
    st.metric(
        "Prefix share s",
        f"{report.prefix_share:.1%}",
        help="Share of all input tokens that repeat the start of an earlier prompt: what an unlimited cache "
        "on one replica serves.",
        border=True,
    )
    st.metric(
        "Token hit share s\u00d7h",
        f"{scen.token_hit_share:.1%}",
        help=f"Share of all input tokens your cache serves ({scen.config.describe()}).",
        border=True,
    )
    st.metric(
        "Hit rate h",
        "-" if scen.hit_rate is None else f"{scen.hit_rate:.1%}",
        help="Share of the repeated start that is still cached when it is needed: s\u00d7h / s.",
        border=True,
    )
    st.metric("Requests", f"{report.requests:,}", help=f"{report.input_tokens:,} input tokens in all.", border=True)

if scen.hit_rate is None:
    st.info("Nothing in this log repeats the start of an earlier prompt, so a prefix cache saves nothing here.")
else:
    st.success(
        f"Of every 100 input tokens, **{report.prefix_share * 100:.0f}** repeat the start of an earlier prompt; "
        f"your cache ({scen.config.describe()}) serves **{scen.token_hit_share * 100:.0f}** of them, "
        f"a hit rate of **{scen.hit_rate:.0%}**."
    )
tok_text = (
    "block hashes from the trace (nothing tokenized)"
    if report.tokenizer is None
    else f"tokens by {report.tokenizer}" + ("" if report.tokenizer_exact else " (approximate)")
)
out_text = "" if report.mean_output_tokens is None else f", {report.mean_output_tokens:,.0f} output"
st.caption(
    f"{report.source}: {report.format} format, {report.requests:,} requests, {report.mean_input_tokens:,.0f} input "
    f"tokens per request{out_text}; blocks of {report.block_size:,} tokens; {tok_text}. {capacity_note}"
)
if report.malformed.count:
    more = report.malformed.count - len(report.malformed.lines)
    st.warning(
        f"{report.malformed.count:,} malformed line(s) were skipped (the rest of the log was used):\n\n"
        + "\n".join(f"- `{line}`" for line in report.malformed.lines)
        + (f"\n- ... and {more:,} more" if more > 0 else "")
    )

# --- why ----------------------------------------------------------------------------------------------
left, right = st.columns(2)
with left:
    curve = pc.curve_frame(report)
    altair_chart(pc.curve_chart(curve, report.prefix_share), width="stretch")
    st.caption(
        "The same TTL, replicas and routing at every size. A cache larger than the last point holds everything "
        "this log reuses."
    )
with right:
    if config.replicas > 1:
        altair_chart(pc.replica_chart(pc.replica_frame(analysis)), width="stretch")
        st.dataframe(pc.policy_frame(analysis), hide_index=True, width="stretch")
    else:
        st.info("With one replica routing does not matter; set 2 or more replicas to compare routing policies.")
altair_chart(pc.histogram_chart(pc.histogram_frame(report), report.block_size), width="stretch")

# --- what it does to the bill -------------------------------------------------------------------------
st.subheader("What the measured reuse does to the bill")


def compare_page_state() -> tuple[Scenario, Catalogs, dict[str, Any]]:
    """The scenario the Compare page shows now (its inputs live in the session), as it prices it, and
    its inputs (for the link back)."""
    scenario, work = _state.current_compare_scenario(ss, cat, preset_map, today)
    preset, values = _state.compare_values(ss, cat, preset_map, today)
    return scenario, work, {"preset": preset, **values}


def as_param(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    return None if value is None or isinstance(value, list) else str(value)


if not preset_map:
    st.info("No scenario presets could be read (scenarios/), so there is nothing to price.")
    st.stop()
base_name = select(
    "Price this scenario",
    "p_base",
    COMPARE_PAGE,
    "The Compare page's current inputs, or a preset; priced with its assumed prefix share and hit rate, then "
    "with the measured ones.",
)
keep_tokens = st.toggle(
    "Keep the scenario's own token counts",
    value=False,
    key="p_keep",
    bind=BIND,
    help="Off: the measured turn is this log's mean input and output tokens per request as well as its shares. "
    "On: only the prefix share and hit rate are measured; the scenario's tokens per turn stay.",
)
try:
    if base_name == COMPARE_PAGE:
        base, work_cat, params = compare_page_state()
        link = _state.write_link(ss, st.query_params, _state.SC, _state.shareable(base, work_cat))
        _state.write_link(ss, st.query_params, _state.EV, None)  # the scenario carries its evidence
        if link:
            st.warning(link)
    else:
        base, work_cat = preset_map[base_name], cat
        params = {"preset": base_name, **_state.scenario_to_state(base, cat)}
        _state.write_link(ss, st.query_params, _state.SC, None)
    params.update(name=base.name, desc=base.description or "")
    base, dropped = without_unpriceable(base, work_cat)  # left out and said so, as on the Compare page
    for option, why in dropped:
        st.warning(_words.left_out(option, why))
    if not (base.serverless or base.dedicated or base.gpu_vm):
        st.info("No option of this scenario can be priced; choose another one, or change it on the Compare page.")
        st.stop()
    evidence = prefix_evidence(report, today)
    # checked whole: the log's mean input and output, each within a context, may not fit one together
    measured = _state.validated(with_prefix_evidence(base, evidence, tokens=not keep_tokens))
    # 'cheapest' is picked for each turn: the measured one may be served best by another configuration
    before: Comparison = compare(cheapest_picked(base, work_cat, today)[0], work_cat)
    after: Comparison = compare(cheapest_picked(measured, work_cat, today)[0], work_cat)
except InputError as exc:
    st.error(_words.say(exc))
    st.stop()
except ValidationError as exc:
    st.error(
        "The Compare page's inputs are not allowed:\n\n" + "\n".join(f"- {x}" for x in _words.invalid(exc, "scenario"))
    )
    st.stop()

w, m = base.workload, measured.workload
st.dataframe(pc.cost_frame(before, after, base.currency), hide_index=True, width="stretch")
st.caption(
    f"Monthly cost of '{base.name}' at {base.traffic.turns_per_month:,} turns a month. Assumed: "
    f"{w.input_tokens:,} input and {w.output_tokens:,} output tokens per turn, prefix share "
    f"{float(w.prefix_share):.1%}, hit rate {float(w.hit_rate):.1%}. Measured: "
    + ("" if keep_tokens else f"{m.input_tokens:,} input and {m.output_tokens:,} output tokens per turn, ")
    + f"prefix share {float(m.prefix_share):.1%}, hit rate {float(m.hit_rate):.1%}"
    + (" (the scenario's token counts kept)." if keep_tokens else ".")
    + (
        " Token factors: " + ", ".join(f"{name} x{float(f):g}" for name, f in base.token_factors.items()) + "."
        if base.token_factors
        else ""
    )
)
params.update({"in": m.input_tokens, "out": m.output_tokens, "pfx": float(m.prefix_share), "hit": float(m.hit_rate)})
if st.button(
    "Apply to the Compare page",
    key="p_apply",
    type="primary",
    icon=":material/arrow_forward:",
    help="Open the Compare page with this scenario and the measured values; the analysis (log, requests, date) "
    "is kept in the scenario as its evidence.",
):
    held = _state.session_evidence(ss, ss.get("uploaded"))
    if base_name != COMPARE_PAGE:  # a preset replaces a scenario file opened on the Compare page
        ss.pop("uploaded", None)
        ss.pop("upload_error", None)
        params.update(own=False, asof=params["asof"] or today)
        held = _state.preset_evidence(held)
    ss[_state.EVIDENCE] = _state.validated(held, prefix=evidence)
    if not params.get("own"):
        params.pop("own_rps", None)
        params.pop("own_gpus", None)
    # The Compare page's inputs outlive a page switch in the session, and a URL value equal to a widget's
    # default does not override them: set them here too, and in the link so that it carries them.
    for k, v in params.items():
        if v is not None and not isinstance(v, list):
            ss[k] = v
    query = {k: v for k, v in ((k, as_param(v)) for k, v in params.items()) if v is not None}
    packed = _link.encode(ss[_state.EVIDENCE])
    if _link.fits(packed):
        query[_state.EV] = packed
    st.switch_page("app_pages/compare.py", query_params=query)
