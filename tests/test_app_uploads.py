"""The pages take the compressed files the command line reads (.gz, .zst) and refuse other kinds with a
sentence, never with Streamlit's "Invalid file extension" exception. Widgets are found by their keys."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import zstandard
from streamlit.testing.v1 import AppTest

from .apptest import open_page, text_of

BENCH = Path(__file__).resolve().parent / "fixtures" / "bench"
ONLINE_70B = BENCH / "sglang" / "h200_llama_3_3_70b_online_output.jsonl"
CONFIGS = Path(__file__).resolve().parent / "fixtures" / "model_configs"
PACK: dict[str, Callable[[bytes], bytes]] = {"gz": gzip.compress, "zst": zstandard.ZstdCompressor().compress}


def _records(at: AppTest) -> pd.DataFrame:
    [frame] = [df.value for df in at.dataframe if "Record" in df.value.columns]
    return frame


@pytest.mark.parametrize("suffix", sorted(PACK))
def test_the_measurements_page_reads_a_compressed_result_file_as_the_command_line_does(suffix: str) -> None:
    plain = open_page("measurements")
    plain.file_uploader(key="m_files").set_value([(ONLINE_70B.name, ONLINE_70B.read_bytes(), "application/jsonl")])
    plain.run()
    packed = open_page("measurements")
    data = PACK[suffix](ONLINE_70B.read_bytes())
    packed.file_uploader(key="m_files").set_value([(f"{ONLINE_70B.name}.{suffix}", data, "application/octet-stream")])
    packed.run()
    assert not packed.exception and not packed.error, text_of(packed.error)
    assert list(_records(packed)["Requests/s"]) == list(_records(plain)["Requests/s"])
    assert len(_records(packed)) > 0


def test_the_capacity_page_imports_a_compressed_config() -> None:
    at = open_page("capacity")
    data = gzip.compress((CONFIGS / "deepseek-ai--DeepSeek-V3.json").read_bytes())
    at.file_uploader(key="c_cfg").set_value(("config.json.gz", data, "application/gzip")).run()
    assert not at.exception and not at.error, text_of(at.error)


def test_a_broken_compressed_upload_is_one_sentence() -> None:
    at = open_page("measurements")
    cut = gzip.compress(ONLINE_70B.read_bytes())[:200]
    at.file_uploader(key="m_files").set_value([("results.jsonl.gz", cut, "application/gzip")]).run()
    assert not at.exception
    assert "results.jsonl.gz: the compressed file is cut short" in text_of(at.error) + text_of(at.warning)


PAGES = {
    "measurements": ("m_files", {}, True),
    "capacity": ("c_cfg", {}, False),
    "compare": ("upload", {}, False),
    "prefix_analysis": ("p_log", {"p_src": "upload a log"}, False),
    "plan": ("pl_trace", {"pl_prof": "from a request log"}, False),
    "cache_ttl": ("t_log", {"t_src": "session log"}, False),
    "replay": ("r_log", {}, False),
}
SUBMIT = {"replay": "r_run_btn"}
"""Pages whose uploader sits in a form: the file reaches the page when the form is sent."""


@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_file_of_another_kind_is_refused_with_a_sentence(page: str) -> None:
    key, params, many = PAGES[page]
    at = open_page(page, 60, **params)
    upload = ("notes.txt", b"hello\n", "text/plain")
    at.file_uploader(key=key).set_value([upload] if many else upload)
    if page in SUBMIT:
        at.button(key=SUBMIT[page]).click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "files are read here, plain or compressed (.gz, .zst); pick another file" in text_of(at.error)
