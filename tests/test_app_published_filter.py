"""The Measurements page lists the bundled published records and narrows them by model and GPU (found by label)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import pandas as pd
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Multiselect, Toggle

from .apptest import open_page

GPUSTACK = "GPUStack (performance lab)"


W = TypeVar("W", Toggle, Multiselect[Any])


def _by_label(widgets: Iterable[W], label: str) -> W:
    return next(w for w in widgets if w.label == label)


def _records(at: AppTest) -> pd.DataFrame:
    [frame] = [df.value for df in at.dataframe if "Record" in df.value.columns]
    return frame


def test_the_published_records_are_narrowed_to_one_model_on_two_gpus() -> None:
    at = open_page("measurements")
    _by_label(at.toggle, "Add the bundled published records").set_value(True).run()
    assert not at.exception
    models = _by_label(at.multiselect, "Published records: models")
    assert {"gpt-oss-20b", "qwen3-32b", "glm-4.6", "deepseek-v3.2", "deepseek-ai/DeepSeek-R1-0528"} <= set(
        models.options
    )
    models.set_value(["gpt-oss-20b"]).run()
    _by_label(at.multiselect, "Published records: GPUs").set_value(["h100-sxm", "a100-80gb-sxm"]).run()
    assert not at.exception
    frame = _records(at)
    # GPUStack's gpt-oss-20b pages: on H100 vLLM, SGLang and TensorRT-LLM on ShareGPT and vLLM on three random
    # shapes; on A100 the same without TensorRT-LLM (its page has none)
    assert len(frame) == 11
    assert set(frame["Model"]) == {"gpt-oss-20b"} and set(frame["GPU"]) == {"h100-sxm", "a100-80gb-sxm"}
    assert set(frame["Published by"]) == {GPUSTACK}
    vllm = frame[frame["Record"] == "gpustack-gpt-oss-20b-fp4-1xh100-sxm-vllm-sharegpt-in215-out194"]
    assert vllm["Requests/s"].tolist() == [40.30]  # the page's "Request throughput (req/s): 40.30"
    assert vllm["Source"].str.contains("gpustack/gpustack/blob/47277d79", regex=False).all()


def test_a_gpu_alone_narrows_every_model_to_that_gpu() -> None:
    at = open_page("measurements")
    _by_label(at.toggle, "Add the bundled published records").set_value(True).run()
    _by_label(at.multiselect, "Published records: GPUs").set_value(["a100-80gb-sxm"]).run()
    assert not at.exception
    frame = _records(at)
    assert set(frame["GPU"]) == {"a100-80gb-sxm"}
    assert set(frame["Model"]) == {
        "gpt-oss-20b",
        "gpt-oss-120b",
        "qwen3-32b",
        "Qwen/Qwen3-14B",
        "Qwen/Qwen3-235B-A22B-Instruct-2507",
        "glm-4.6",
    }
