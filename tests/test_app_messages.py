"""Every message the app shows is written for its user (issue 12, part 7): no server-side temporary path,
no Python exception text, no command-line flag, no internal field name, no literal None or nan; an upload
is named as the user named it.

Each page is opened as a user would: broken uploads (not UTF-8, the wrong format, empty, a corrupt gzip, a
number too long to be one) under a name the server would never give its copy, bad URL values, a scenario
whose GPU estimate cannot fit, and Plan's hybrid. Every error, warning, info, success, caption, markdown,
title, metric and table cell is then read.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_pages import _words
from calculator.cli import words as cli_words
from calculator.errors import InputError
from calculator.planning.growth import grow
from calculator.planning.hybrid import hybrid_plan
from calculator.planning.load_profile import profile_from_traffic
from calculator.pricing.compare import Catalogs
from calculator.pricing.resolve import Owned
from calculator.scenario.model import load_preset

from .apptest import APP, open_page, table_with, text_of

ROOT = Path(__file__).resolve().parents[1]
NAME = "Team März log"
"""An upload's name as a user gives it: a space and a non-ASCII letter, which the server's copy never has."""

# --- what a user must never read --------------------------------------------------------------------------

FILE_SUFFIX = r"(?:jsonl|json|csv|gz|yaml|yml|txt|pdf)"
URL = re.compile(r"https?://\S+")
URL_PARAMETER = re.compile(r"URL parameter `[a-z_]+`")  # the address bar's names are the public interface
QUOTED = re.compile(r"'[^'\n]{0,80}'(?= is| \()")  # a value the user gave, quoted back to them
FORBIDDEN: dict[str, re.Pattern[str]] = {
    "a temporary path": re.compile(
        "|".join(re.escape(p) for p in {"/tmp/", tempfile.gettempdir().rstrip("/") + "/", "calculator-upload-"})
    ),
    "Python's exception text": re.compile(
        r"Traceback|\bcodec\b|'utf-8'|can't (?:de|en)code|\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\(char \d+\)"
        r"|Expecting (?:value|property|',')|Input should be a valid dictionary|instance of [A-Z]"
        r"|untagged enum|expected struct|EOF while|did not contain valid UTF-8|invalid type:"  # the Rust tokenizer's
        r"|cast to integer|Port out of range|Invalid IPv6"  # urllib's
    ),
    "a command-line flag": re.compile(r"(?<![\w-])--[a-z][a-z-]+"),
    "a dotted field name": re.compile(
        rf"\b[a-z]+_[a-z_]+\.(?!{FILE_SUFFIX}\b)[a-z_]+\b|\b[a-z]+\.[a-z]+_[a-z_]+\b|\b[a-z_]+:\s+offer\b"
    ),
    "a literal None or nan": re.compile(r"(?<=[a-z:=(,] )None\b|\bnan\b|\bNaN\b|<NA>|\bp0\b"),
}
INTERNAL = sorted(
    {name for name in [*_words.FIELDS, *cli_words.FLAGS] if "_" in name or "." in name}
    | {"gpu_vm", "self_hosting", "token_factors", "load_profile", "prices_used"}
)
"""Internal names of the core's fields: the app shows the label beside the input instead."""
INTERNAL_NAME = re.compile(r"(?<![\w.`-])(?:" + "|".join(re.escape(n) for n in INTERNAL) + r")(?![\w-])")


def shown(at: AppTest) -> list[str]:
    """Every text on the page a user reads: messages, captions, markdown, titles, metrics and table cells."""
    texts: list[str] = []
    for kind in ("error", "warning", "info", "success", "caption", "markdown", "title", "header", "subheader"):
        texts += [str(e.value) for e in getattr(at, kind)]
    texts += [f"{m.label}: {m.value}" for m in at.metric]
    for table in [*at.dataframe, *at.table]:
        frame: pd.DataFrame = table.value
        texts += [str(c) for c in frame.columns]
        for cell in frame.to_numpy().ravel():
            texts.append("<NA>" if cell is None or (not isinstance(cell, str) and pd.isna(cell)) else str(cell))
    return texts


def unwritten(at: AppTest) -> list[str]:
    """What on the page is not written for its user, one line per find."""
    assert not at.exception, [e.value for e in at.exception]
    finds = []
    for text in shown(at):
        plain = QUOTED.sub("'...'", URL_PARAMETER.sub("", URL.sub("", text)))
        finds += [f"{why}: {text[:300]!r}" for why, pattern in FORBIDDEN.items() if pattern.search(plain)]
        if (match := INTERNAL_NAME.search(plain)) is not None:
            finds.append(f"an internal name ({match.group()}): {text[:300]!r}")
    return finds


# --- uploads: broken files under the user's own name -------------------------------------------------------

BROKEN: dict[str, bytes] = {
    "not UTF-8": b'{"prompt": "caf\x92 au lait", "timestamp": 1}\n',
    "not this format": b"<html><body>Sign in</body></html>\n",
    "empty": b"",
    "a number too long": b'{"timestamp": 1' + b"9" * 5000 + b"}\n",
}
CORRUPT_GZIP = b"\x1f\x8b\x08\x00" + b"garbage" * 10

Prepare = Callable[[AppTest], None]


def _choose(key: str, value: str) -> Prepare:
    def prepare(at: AppTest) -> None:
        at.selectbox(key=key).set_value(value).run()

    return prepare


def _segment(key: str, value: str) -> Prepare:
    def prepare(at: AppTest) -> None:
        at.segmented_control(key=key).set_value(value).run()

    return prepare


UPLOADERS: dict[str, tuple[str, str, Prepare | None, bool]] = {
    # page: (uploader key, suffix, what to choose first, takes .gz)
    "compare": ("upload", ".yaml", None, False),
    "capacity": ("c_cfg", ".json", None, False),
    "measurements": ("m_files", ".jsonl", None, False),
    "prefix_analysis": ("p_log", ".jsonl", _choose("p_src", "upload a log"), True),
    "cache_ttl": ("t_log", ".jsonl", _segment("t_src", "session log"), True),
    "plan": ("pl_trace", ".csv", _choose("pl_prof", "from a request log"), True),
}


@pytest.mark.parametrize("page", list(UPLOADERS))
def test_a_broken_upload_is_named_as_the_user_named_it_in_plain_words(page: str) -> None:
    key, suffix, prepare, gz = UPLOADERS[page]
    at = open_page(page)
    if prepare is not None:
        prepare(at)
    cases = {what: (NAME + suffix, data) for what, data in BROKEN.items()}
    if gz:
        cases["a corrupt gzip"] = (NAME + suffix + ".gz", CORRUPT_GZIP)
    for what, (name, data) in cases.items():
        at.file_uploader(key=key).set_value((name, data, "application/octet-stream")).run()
        assert not unwritten(at), (what, unwritten(at))
        errors = text_of([*at.error, *at.warning])
        if what != "a number too long" or page in ("measurements", "prefix_analysis", "cache_ttl"):
            assert name in errors, (what, errors)


def test_result_files_that_do_not_state_their_setup_are_said_in_plain_words() -> None:
    online = next((ROOT / "tests" / "fixtures").rglob("h200_llama_3_3_70b_online_output.jsonl"))
    at = open_page("measurements")
    at.file_uploader(key="m_files").set_value((online.name, online.read_bytes(), "application/jsonl")).run()
    assert "does not state the model, the precision, the GPU and the GPU count" in text_of(at.markdown)
    assert not unwritten(at)
    table = table_with(at, "Status")
    assert set(table["GPU"]) == {"not stated"}


def test_a_broken_tokenizer_is_named_and_said_in_plain_words() -> None:
    at = open_page("prefix_analysis")
    not_a_tokenizer = {"a list": b"[1, 2]", "an unknown model": b'{"model": {"type": "Nope"}}'}
    for what, data in {**BROKEN, **not_a_tokenizer}.items():
        at.file_uploader(key="p_tok_file").set_value((NAME + ".json", data, "application/json")).run()
        assert not unwritten(at), (what, unwritten(at))
        assert f"{NAME}.json: not a usable Hugging Face tokenizer.json" in text_of(at.error), what


def test_a_broken_prompt_log_is_named_on_replay() -> None:
    at = open_page("replay")
    at.text_input(key="r_url").set_value("http://127.0.0.1:9/v1")
    at.text_input(key="r_model").set_value("m")
    for what, data in BROKEN.items():
        at.file_uploader(key="r_log").set_value((NAME + ".jsonl", data, "application/jsonl"))
        at.button(key="r_run_btn").click().run()
        assert not unwritten(at), (what, unwritten(at))
        assert NAME + ".jsonl" in text_of(at.error), (what, text_of(at.error))


def test_a_config_json_upload_is_never_read_as_a_path_on_the_server() -> None:
    at = open_page("capacity")
    at.file_uploader(key="c_cfg").set_value((NAME + ".json", str(ROOT / "pyproject.toml").encode(), "text/json"))
    at.run()
    errors = text_of(at.error)
    assert f"{NAME}.json: not a config.json" in errors and "No such file" not in errors
    assert not unwritten(at)


# --- bad links, empty inputs and edge settings --------------------------------------------------------------

BAD_LINKS: dict[str, dict[str, str]] = {
    "compare": {"vol": "nan", "in": "abc", "pfx": "2", "hit": "inf"},
    "capacity": {"c_ctx": "nan", "c_n": "-3", "c_model": "nope"},
    "cache_ttl": {"t_med": "inf", "t_src": "nope"},
    "price_sheets": {"ps_kind": "nope"},
    "measurements": {"m_pct": "p7", "m_ttft": "-1"},
    "prefix_analysis": {"p_src": "nope", "p_bs": "nan"},
    "plan": {"pl_burst": "nan", "pl_m": "9999", "pl_prof": "nope"},
    "replay": {"r_conc": "1,999", "r_n": "nan"},
}


@pytest.mark.parametrize("page", list(BAD_LINKS))
def test_bad_link_values_are_said_in_plain_words(page: str) -> None:
    at = open_page(page, 60, **BAD_LINKS[page])
    assert not unwritten(at)


def _pack(data: bytes) -> str:
    """A link value as the app writes one: zlib, then URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(zlib.compress(data)).decode().rstrip("=")


BAD_PACKED = {
    "not UTF-8": _pack(b"\xff\xfe"),
    "not JSON": _pack(b"nope"),
    "a number too long": _pack(b'{"x": ' + b"9" * 5000 + b"}"),
    "a list": _pack(b"[1, 2]"),
    "a field out of range": _pack(
        json.dumps(
            {
                "schema_version": 1,
                "name": "x",
                "workload": {"input_tokens": -5, "prefix_share": 0.5, "output_tokens": 5},
                "traffic": {"turns_per_month": 5},
            }
        ).encode()
    ),
}


@pytest.mark.parametrize("param", ["sc", "ev"])
def test_a_broken_scenario_or_evidence_link_is_said_in_plain_words(param: str) -> None:
    for what, raw in BAD_PACKED.items():
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params[param] = raw
        at.run()
        assert f"URL parameter `{param}`" in text_of(at.error), what
        assert not unwritten(at), (what, unwritten(at))


def test_empty_and_refused_inputs_are_said_in_plain_words() -> None:
    at = open_page("replay")
    at.text_input(key="r_url").set_value("ftp://x")
    at.text_input(key="r_conc").set_value("")
    at.button(key="r_run_btn").click().run()
    assert len(at.error) >= 3 and not unwritten(at)
    for url in ("http://[::1", "http://host:99999/v1", "http://host:abc/v1"):
        at.text_input(key="r_url").set_value(url)
        at.button(key="r_run_btn").click().run()
        assert "is not a usable URL (" in text_of(at.error) and not unwritten(at), url
    at = open_page("cache_ttl")
    at.segmented_control(key="t_src").set_value("gap list").run()
    at.text_input(key="t_gaps").set_value("").run()
    assert at.error and not unwritten(at)
    at = open_page("capacity")
    at.number_input(key="c_util").set_value(0.05).run()
    assert not unwritten(at)


ESTIMATE = b"""schema_version: 1
name: Estimate on one GPU
workload: {input_tokens: 20000, prefix_share: 0.9, hit_rate: 1, output_tokens: 500}
traffic: {turns_per_month: 1000000}
serverless: {provider: lyceum, model: GLM-5.3}
gpu_vm: {provider: nebius, offer: h200-sxm-1x}
self_hosting:
  estimate: {model: llama-3.3-70b, precision: bf16, gpus_per_replica: 1}
"""
"""A roofline estimate that cannot fit: BF16 Llama 3.3 70B needs more than one H200."""


def test_an_estimate_that_does_not_fit_is_said_with_the_pages_words() -> None:
    at = open_page("compare")
    at.file_uploader(key="upload").set_value(("Estimate.yaml", ESTIMATE, "text/yaml")).run()
    left_out = text_of(at.warning)
    assert "GPU virtual machine (self-hosted) option is left out" in left_out and "does not fit" in left_out
    assert not unwritten(at)
    for page in ("plan", "prefix_analysis"):
        at.switch_page(f"app_pages/{page}.py").run()
        assert "does not fit" in text_of(at.warning)
        assert not unwritten(at), page
    at.switch_page("app_pages/plan.py").run()
    assert "needs a GPU virtual machine" in text_of(at.warning)


@pytest.mark.parametrize(
    "params",
    [{}, {"pl_sc": "coding-agent", "pl_vol": "30000000", "pl_prof": "consumer evenings"}],
    ids=["owning nothing", "owning some"],
)
def test_plans_hybrid_is_said_in_words(params: dict[str, str]) -> None:
    at = open_page("plan", 60, **params)
    assert not unwritten(at)
    hybrid = next(m.value for m in at.metric if m.label == "Cheapest hybrid")
    assert re.fullmatch(r"Nothing owned|\d+ replicas? owned", hybrid), hybrid


# --- the pins beneath: no bare string on a page, a label for every core field -------------------------------


def _bare_strings(body: list[ast.stmt], parent: type) -> list[int]:
    """Lines of string expressions Streamlit's magic would write on the page (docstrings aside), walked as
    magic walks a page: into blocks, handlers, cases and methods."""
    found = []
    for i, node in enumerate(body):
        docstring = i == 0 and parent in (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)
        value = node.value if isinstance(node, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str) and not docstring:
            found.append(node.lineno)
        if isinstance(node, ast.ClassDef):
            methods = [m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
            for method in methods:
                found += _bare_strings(method.body, type(method))
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found += _bare_strings(block, type(node))
        for inner in [*getattr(node, "handlers", []), *getattr(node, "cases", [])]:
            found += _bare_strings(inner.body, type(inner))
    return found


def test_no_page_holds_a_bare_string_and_magic_is_off() -> None:
    pages = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("[a-z]*.py"))]
    bare = {
        page.name: lines for page in pages if (lines := _bare_strings(ast.parse(page.read_text()).body, ast.Module))
    }
    assert not bare, f"a bare string is shown on the page by Streamlit's magic: {bare}"
    assert "magicEnabled = false" in (ROOT / ".streamlit" / "config.toml").read_text()


def _core_fields() -> set[str]:
    """Every field name the core (not the command line) puts in an InputError or a Problem, as written."""
    fields = set()
    for path in (ROOT / "calculator").rglob("*.py"):
        if "cli" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "InputError",
                "Problem",
            ):
                first = node.args[0] if node.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    fields.add(first.value)
    return fields


def test_every_core_field_has_a_label_on_the_app() -> None:
    fields = _core_fields()
    assert {"self_hosting.estimate", "load_profile.burst", "hybrid.percentile"} <= fields  # the scan finds them
    missing = sorted(f for f in fields | set(cli_words.FLAGS) if f not in _words.FIELDS)
    assert not missing, f"fields the app would show by their internal name: {missing}"
    assert all(not INTERNAL_NAME.search(label) for label in _words.FIELDS.values())


@pytest.mark.parametrize(
    ("drop", "owned", "code"),
    [
        ("gpu_vm", "self_hosted", "hybrid_needs_self_hosted"),
        ("dedicated", "dedicated", "hybrid_needs_dedicated"),
        ("serverless", "self_hosted", "hybrid_needs_serverless"),
    ],
)
def test_a_hybrid_plan_the_scenario_cannot_make_is_said_in_the_apps_words(
    catalogs: Catalogs, drop: str, owned: Owned, code: str
) -> None:
    scenario = load_preset("coding-agent").model_copy(update={drop: None})
    with pytest.raises(InputError) as exc:
        hybrid_plan(scenario, catalogs, profile_from_traffic(scenario.traffic), owned=owned)
    assert exc.value.problem.code == code
    assert _words.message(exc.value) == _words.MESSAGES[code]
    assert "Compare page" in _words.message(exc.value) and not INTERNAL_NAME.search(_words.message(exc.value))
    none = scenario.model_copy(update={"serverless": None, "dedicated": None, "gpu_vm": None})
    with pytest.raises(InputError) as exc:
        grow(none, catalogs)
    assert "Compare page" in _words.message(exc.value)
