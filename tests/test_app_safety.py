"""A locally started app is not a door into its machine (issue 15, part 7), and a page's inputs hold the
domain's limits: each bad value is one message, never a traceback or a silently different answer.

The app listens on 127.0.0.1 as ``make run``, the README and .streamlit/config.toml start it; once it is
exposed, the Replay page sends only to the origins the user allowed; the Prefix analysis page takes a
tokenizer only as an upload; uploads are read from a private temporary copy that is removed after.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import socket
import string
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from app_pages import _network, _state, _uploads
from calculator.catalog import limits
from calculator.cli import flags
from calculator.scenario.model import dump_scenario, load_preset
from calculator.traffic.prefix import CacheConfig, analyse_log
from calculator.traffic.tokens import HuggingFaceTokenizer

from .apptest import APP, open_page, table_with, text_of
from .bench_server import running

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"


# --- where the app listens ------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> list[str]:
    """The local addresses (hex, as /proc/net/tcp* write them) of sockets listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as fh:
            for line in fh.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, _, hex_port = local.partition(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.append(address)
    return found


def _run_command() -> list[str]:
    """What ``make run`` runs (its install step taken as done)."""
    out = subprocess.run(
        ["make", "-n", "-o", ".venv/bin/.installed", "run"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    lines = [line for line in out.splitlines() if "streamlit run" in line]
    assert len(lines) == 1, out
    return shlex.split(lines[0])


def test_make_run_starts_the_app_on_127_0_0_1() -> None:
    command = _run_command()
    assert command[command.index("--server.address") + 1] == LOOPBACK


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the listening sockets from /proc/net")
def test_the_app_make_run_starts_listens_on_the_loopback_address_only() -> None:
    port = _free_port()
    command = _run_command()
    argv = [sys.executable, *command[1:], "--server.port", str(port), "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://{LOOPBACK}:{port}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the app did not start"
            time.sleep(0.25)
        assert _listening(port) == ["0100007F"]  # 127.0.0.1, and no other interface (0.0.0.0 or ::)
    finally:
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert "Network URL" not in out and f"{LOOPBACK}:{port}" in out


def test_the_readme_starts_the_app_on_127_0_0_1_and_says_how_to_expose_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"streamlit run app\.py[^`\n]*", readme)
    assert commands and all(f"--server.address {LOOPBACK}" in c for c in commands), commands
    exposing = readme[readme.index("**Exposing the app.**") :].split("\n\n")[0]
    for needed in ("authentication", "Replay", _network.ALLOW_ENV, "ADDRESS="):
        assert needed in exposing


def test_a_bare_streamlit_run_in_the_project_folder_listens_on_127_0_0_1() -> None:
    """.streamlit/config.toml is tracked (git ls-files), so a fresh clone has it too."""
    tracked = subprocess.run(
        ["git", "ls-files", "--error-unmatch", ".streamlit/config.toml"], cwd=ROOT, capture_output=True
    )
    assert tracked.returncode == 0
    with open(ROOT / ".streamlit" / "config.toml", "rb") as fh:
        assert tomllib.load(fh)["server"]["address"] == LOOPBACK


# --- who may be sent requests ---------------------------------------------------------------------


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "localhost", "LOCALHOST", "::1", "[::1]"])
def test_a_loopback_address_is_local(address: str) -> None:
    assert _network.is_local(address)


@pytest.mark.parametrize("address", [None, "", "0.0.0.0", "::", "192.168.1.20", "10.0.0.5", "myhost", "unix://x"])
def test_every_interface_or_another_address_is_exposed(address: str | None) -> None:
    assert not _network.is_local(address)


def test_a_local_app_may_replay_against_any_endpoint() -> None:
    targets = _network.replay_targets(LOOPBACK, None)
    assert targets.allowed is None
    assert targets.problem("http://169.254.169.254/latest/meta-data") is None


ALLOW = "https://llm.internal:8000, http://10.0.0.5:8000"


@pytest.mark.parametrize(
    "url",
    [
        "https://llm.internal:8000/v1",
        "https://LLM.Internal.:8000/v1/",
        "https://key@llm.internal:8000",
        "http://10.0.0.5:8000",
    ],
)
def test_an_exposed_app_replays_against_an_allowed_origin(url: str) -> None:
    assert _network.replay_targets("0.0.0.0", ALLOW).problem(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://llm.internal:8000/v1",  # another scheme
        "https://llm.internal/v1",  # another port (443)
        "https://llm.internal:8000@169.254.169.254/v1",  # the allowed origin as credentials of another host
        "http://169.254.169.254/latest/meta-data",
        "http://127.0.0.1:8501/",
        "http://10.0.0.5:8001",
    ],
)
def test_an_exposed_app_refuses_any_other_origin(url: str) -> None:
    problem = _network.replay_targets("0.0.0.0", ALLOW).problem(url)
    assert problem is not None and "not an allowed target" in problem and _network.ALLOW_ENV in problem


def test_an_exposed_app_with_no_list_replays_against_nothing() -> None:
    targets = _network.replay_targets(None, None)
    assert targets.allowed == ()
    problem = targets.problem("http://127.0.0.1:8000/v1")
    assert problem is not None and "every interface" in problem and "(allowed: none)" in problem


def test_the_list_applies_to_a_local_app_when_it_is_set() -> None:
    """An app behind a proxy listens on 127.0.0.1 and is still reached by others."""
    targets = _network.replay_targets(LOOPBACK, "http://10.0.0.5:8000")
    assert targets.problem("http://10.0.0.5:8000/v1") is None
    assert targets.problem("http://10.0.0.6:8000/v1") is not None


def test_an_entry_that_is_not_an_origin_is_named_and_the_rest_applies() -> None:
    targets = _network.replay_targets("0.0.0.0", "llm.internal:8000, http://10.0.0.5:8000")
    assert len(targets.problems) == 1 and "'llm.internal:8000'" in targets.problems[0]
    assert targets.problem("http://10.0.0.5:8000/v1") is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.printable + "[]@:/\u0000\u00e9", max_size=60), st.sampled_from([None, "0.0.0.0"]))
def test_any_base_url_is_allowed_or_refused_in_a_sentence(url: str, address: str | None) -> None:
    problem = _network.replay_targets(address, ALLOW).problem(url)
    assert problem is None or (isinstance(problem, str) and "\n" not in problem)


# --- the Replay page --------------------------------------------------------------------------------

PROMPTS = b'{"prompt": "alpha beta"}\n{"prompt": "gamma delta"}\n'


@pytest.fixture
def exposed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The app as ``make run ADDRESS=0.0.0.0`` starts it, with no allow list set."""
    monkeypatch.delenv(_network.ALLOW_ENV, raising=False)
    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    try:
        yield
    finally:
        st_config.set_option("server.address", before)


def _replay(url: str) -> AppTest:
    at = open_page("replay")
    at.text_input(key="r_url").set_value(url)
    at.text_input(key="r_model").set_value("test-model")
    at.text_input(key="r_conc").set_value("1")
    at.number_input(key="r_n").set_value(4)
    at.number_input(key="r_max").set_value(8)
    at.file_uploader(key="r_log").set_value(("prompts.jsonl", PROMPTS, "application/jsonl"))
    at.button(key="r_run_btn").click().run()
    assert not at.exception
    return at


def _requests_seen(url: str) -> int:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=5) as r:
        return int(json.load(r)["requests"])


@pytest.mark.usefixtures("exposed")
def test_an_exposed_app_refuses_a_target_not_allowed_and_sends_nothing() -> None:
    with running() as url:
        at = _replay(url)
        assert _requests_seen(url) == 0
    assert len(at.error) == 1
    error = at.error[0].value
    assert error.startswith("**Base URL**") and "not an allowed target" in error and _network.ALLOW_ENV in error
    assert "r_run" not in at.session_state
    assert "Replay may send requests to no endpoint" in text_of(at.info)


@pytest.mark.usefixtures("exposed")
def test_an_exposed_app_replays_against_an_allowed_target(monkeypatch: pytest.MonkeyPatch) -> None:
    with running("--ttft-ms", "5", "--tokens", "4") as url:
        monkeypatch.setenv(_network.ALLOW_ENV, url)
        at = _replay(url)
        assert not at.error, [e.value for e in at.error]
        deadline = time.monotonic() + 60
        while not at.session_state["r_run"].finished:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        at.run()
        assert _requests_seen(url) > 0
    assert not at.error, [e.value for e in at.error]
    assert list(table_with(at, "Level")["Completed"]) == ["4 of 4"]
    assert str(_network.origin(url)) in text_of(at.info)


@pytest.mark.parametrize("url", ["http://[::1/v1", "http://127.0.0.1:99999/v1", "http://127.0.0.1:port/v1"])
def test_a_base_url_that_cannot_be_read_is_one_message(url: str) -> None:
    at = _replay(url)
    assert len(at.error) == 1 and at.error[0].value.startswith("**Base URL**")
    assert "r_run" not in at.session_state


# --- the Prefix analysis page: a tokenizer is an upload ----------------------------------------------

SYSTEM = "You are a careful assistant for a tax office. Answer in short sentences and cite the rule. " * 6


def _chat_log(n: int = 8) -> bytes:
    lines = [
        json.dumps({"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"question {i}"}]})
        for i in range(n)
    ]
    return ("\n".join(lines) + "\n").encode()


def _tokenizer_json() -> bytes:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    words = sorted(set(re.findall(r"\w+|[^\w\s]", SYSTEM + " question 0 1 2 3 4 5 6 7")))
    hf = tokenizers.Tokenizer(WordLevel({w: i for i, w in enumerate([*words, "[UNK]"])}, unk_token="[UNK]"))
    hf.pre_tokenizer = Whitespace()
    text: str = hf.to_str()
    return text.encode()


def _prefix_with_log(**params: str) -> AppTest:
    at = open_page("prefix_analysis", 120, **params)
    at.selectbox(key="p_src").set_value("upload a log").run()
    at.file_uploader(key="p_log").set_value(("chats.jsonl", _chat_log(), "application/jsonl")).run()
    assert not at.exception
    return at


def test_the_prefix_page_has_no_server_path_input() -> None:
    at = open_page("prefix_analysis", 120, p_tok="/etc/passwd")
    assert not at.exception and not at.error
    assert all("path" not in t.label.lower() and t.key != "p_tok" for t in at.text_input)
    assert "tokenizer.json" in at.file_uploader(key="p_tok_file").proto.label
    assert "/etc/passwd" not in " ".join(str(node.proto) for node in at._tree if hasattr(node, "proto"))


def test_an_uploaded_tokenizer_counts_the_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the page's temporary copies go here
    data = _tokenizer_json()
    at = _prefix_with_log()
    at.file_uploader(key="p_tok_file").set_value(("llama-tokenizer.json", data, "application/json")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (tmp_path / "tokenizer.json").write_bytes(data)
    expected = analyse_log(
        io.BytesIO(_chat_log()),
        scenario=CacheConfig(capacity_tokens=1_000_000, replicas=4),
        tokenizer=HuggingFaceTokenizer(tmp_path / "tokenizer.json"),
    )
    caption = text_of(at.caption)
    assert "tokens by llama-tokenizer.json (uploaded)" in caption and "(approximate)" not in caption
    assert f"{expected.mean_input_tokens:,.0f} input tokens per request" in caption
    assert not list(tmp_path.glob("calculator-upload-*"))  # each copy removed after reading


def test_a_broken_tokenizer_upload_names_the_upload_and_no_server_path() -> None:
    at = _prefix_with_log()
    at.file_uploader(key="p_tok_file").set_value(("tok.json", b'{"not": "a tokenizer"}', "application/json")).run()
    assert not at.exception
    assert len(at.error) == 1
    error = at.error[0].value
    assert error.startswith("**Tokenizer**") and "tok.json" in error
    assert "calculator-upload-" not in error and tempfile.gettempdir() not in error


# --- uploads: a private copy, named by the app --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../../etc/cron.d/evil.csv", "evil.csv"),
        ("..\\..\\evil.jsonl.gz", "evil.jsonl.gz"),
        ("..", "upload.csv"),
        ("", "upload.csv"),
        (".csv", "upload.csv"),
        ("my trace (1).CSV", "my-trace-1.csv"),
        ("no-suffix", "no-suffix.csv"),
    ],
)
def test_an_upload_is_copied_under_a_name_the_app_makes(name: str, expected: str) -> None:
    assert _uploads.safe_name(name, (".csv", ".jsonl.gz", ".jsonl")) == expected  # the first when none fits


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_upload_name_stays_in_its_private_folder_and_is_removed(name: str) -> None:
    with _uploads.upload_copy(b"data", name, (".jsonl", ".gz")) as path:
        folder = path.parent
        assert folder.name.startswith("calculator-upload-") and (folder.stat().st_mode & 0o777) == 0o700
        assert list(folder.iterdir()) == [path] and path.read_bytes() == b"data"
        assert len(path.name) <= _uploads.STEM_CHARS + len(".jsonl") and not path.name.startswith(".")
    assert not folder.exists()


def test_a_plan_log_with_a_hostile_name_is_read_and_nothing_is_left_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stamps = "\n".join(str(1_700_000_000 + i * 7) for i in range(400))
    at = open_page("plan")
    at.selectbox(key="pl_prof").set_value("from a request log").run()
    name = "../" * 40 + "x" * 300 + ".csv"  # a path, and a name longer than a file system takes
    at.file_uploader(key="pl_trace").set_value((name, f"timestamp\n{stamps}\n".encode(), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = "trace ..." + "x" * (_uploads.SHOWN_CHARS - len("....csv")) + ".csv"  # its name, its end kept
    assert "400 requests" in text_of(at.caption) and shown in text_of(at.caption)
    assert not list(tmp_path.iterdir())


def test_a_session_log_is_read_from_memory_under_its_own_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    lines = [json.dumps({"session_id": f"s{i % 5}", "timestamp": 1_700_000_000 + i * 40}) for i in range(50)]
    lines.insert(3, "{not json")
    at = open_page("cache_ttl", t_src="session log")
    data = ("\n".join(lines) + "\n").encode()
    at.file_uploader(key="t_log").set_value(("../../my sessions.jsonl", data, "application/jsonl")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "5 sessions, 50 requests" in text_of(at.caption)
    assert "../../my sessions.jsonl:4" in text_of(at.warning)  # the bad line, named by the upload
    assert not list(tmp_path.iterdir())


# --- the pages' numbers hold the domain's limits ------------------------------------------------------


def test_turns_per_day_take_at_most_a_month_of_the_scenarios_limit() -> None:
    over = limits.TURNS_PER_DAY.high + 1
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(per="day", vol=str(over))
    at.run()
    assert not at.exception
    assert len(at.error) == 1
    assert "`vol`" in at.error[0].value and f"0 to {limits.TURNS_PER_DAY.high:,}" in at.error[0].value
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(per="day", vol=str(limits.TURNS_PER_DAY.high))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.text_input(key="vol").value == str(limits.TURNS_PER_DAY.high)


def test_switching_to_per_day_keeps_the_largest_month_within_the_day_limit() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(vol=str(limits.TURNS_PER_MONTH.high))
    at.run()
    at.segmented_control(key="per").set_value("day").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.text_input(key="vol").value == str(limits.TURNS_PER_DAY.high)


def _open_scenario(text: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.file_uploader(key="upload").set_value(("mine.yaml", text.encode(), "application/x-yaml")).run()
    assert not at.exception
    return at


def test_a_scenario_within_the_limits_opens_unchanged() -> None:
    """The inputs used to stop at 100 x peak-to-average and 100 spare replicas, and clamped a file's values."""
    text = dump_scenario(load_preset("coding-agent"))
    text = re.sub(r"peak_to_average: .*", "peak_to_average: 500.0", text)
    text = re.sub(r"spare_replicas: .*", "spare_replicas: 250", text)
    at = _open_scenario(text)
    assert not at.error, [e.value for e in at.error]
    assert at.number_input(key="p2a").value == 500.0
    assert at.number_input(key="spare").value == 250


def test_a_scenario_value_the_inputs_cannot_take_is_refused_in_one_message() -> None:
    text = dump_scenario(load_preset("coding-agent"))
    text = text.replace(
        "  autoscale: false\n", "  autoscale: false\n  latency_target: {percentile: p95, ttft_ms: 700000}\n"
    )
    assert "ttft_ms: 700000" in text  # a scenario allows any TTFT target; the page's input ten minutes
    at = _open_scenario(text)
    assert len(at.error) == 1
    assert "Time to first token" in at.error[0].value and "600,000" in at.error[0].value
    assert at.number_input(key="ttft").value == 0.0  # nothing of the file was taken


def test_a_changed_scenario_is_checked_against_the_limits() -> None:
    s = load_preset("coding-agent")
    wild = s.traffic.model_copy(update={"peak_to_average": 1e9})  # model_copy checks nothing
    with pytest.raises(ValidationError, match="peak"):
        _state.validated(s, traffic=wild)
    kept = _state.validated(s, name="Acme")
    assert kept.name == "Acme" and kept.traffic == s.traffic


def test_a_plan_volume_over_the_months_limit_is_one_message() -> None:
    at = open_page("plan", pl_vol=str(limits.TURNS_PER_MONTH.high + 1))
    assert len(at.error) == 1 and "`pl_vol`" in at.error[0].value


# the Prefix page's cache inputs and the prefix command's flags: the same largest value
PREFIX_FLAGS = {
    "p_bs": (flags.context, limits.CONTEXT.high),
    "p_cap": (flags.cache_tokens, limits.CACHE_TOKENS.high),
    "p_n": (flags.gpus, limits.GPUS_PER_REPLICA.high),
    "p_rep": (flags.simulated_replicas, limits.SIMULATED_REPLICAS.high),
}


def test_the_prefix_pages_cache_inputs_take_what_the_prefix_command_takes() -> None:
    import argparse

    for convert, high in PREFIX_FLAGS.values():
        assert convert(str(high)) == high
        with pytest.raises(argparse.ArgumentTypeError):
            convert(str(high + 1))
    at = open_page("prefix_analysis", 120, p_capm="GPU and model", **{k: str(h) for k, (_, h) in PREFIX_FLAGS.items()})
    assert not [e.value for e in at.error if "URL parameter" in e.value]
    at = open_page("prefix_analysis", 120, **{k: str(h + 1) for k, (_, h) in PREFIX_FLAGS.items()})
    errors = [e.value for e in at.error if "URL parameter" in e.value]
    assert len(errors) == len(PREFIX_FLAGS)
    for key, (_, high) in PREFIX_FLAGS.items():
        assert any(f"`{key}`" in e and f"to {high:,}" in e for e in errors), (key, errors)


def _view(page: str, **params: str) -> AppTest:
    """The page's first view of a link (the Compare page is the app's first page)."""
    if page != "compare":
        return open_page(page, 120, **params)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(params)
    return at.run()


@pytest.mark.parametrize(
    ("page", "key", "raw"),
    [
        ("compare", "vol", "inf"),
        ("cache_ttl", "t_pfx", "inf"),
        ("capacity", "c_ctx", "inf"),
        ("measurements", "m_n", "inf"),
        ("prefix_analysis", "p_rep", "inf"),
        ("plan", "pl_vol", "inf"),
        ("replay", "r_n", "inf"),
        ("replay", "r_n", "-inf"),
        ("replay", "r_n", "1e999"),
        ("replay", "r_n", "nan"),
        ("replay", "r_to", "inf"),
    ],
)
def test_a_number_that_is_not_finite_in_the_url_is_one_message(page: str, key: str, raw: str) -> None:
    """Streamlit itself raised OverflowError seeding a whole-number input from ``inf``."""
    at = _view(page, **{key: raw})
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and f"`{key}`" in errors[0], errors


def test_no_page_shows_a_stray_string() -> None:
    """Streamlit writes a page's bare module-level string onto the page (Replay showed a constant's docstring)."""
    import ast

    for page in ROOT.glob("app_pages/[!_]*.py"):
        body = ast.parse(page.read_text(encoding="utf-8")).body[1:]  # after the module docstring
        strays = [n.lineno for n in body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)]
        assert not strays, (page.name, strays)
