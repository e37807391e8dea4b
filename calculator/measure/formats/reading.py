"""Reading a result file's values: positions for every problem, numbers as the tools write them, and
what every reader produces before it becomes a record."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from calculator.catalog.measurements import Latency


@dataclass
class Doc:
    """One JSON object of the file: a whole-file document or one line of JSON Lines."""

    data: Any
    line: int
    """Line the object starts on."""
    key_lines: dict[str, int] = field(default_factory=dict)
    items: dict[str, list[int]] = field(default_factory=dict)
    index: int | None = None
    """Position in the file's top-level list (a summary of several runs), if it came from one."""

    def line_of(self, key: str | None) -> int:
        """Line of a top-level member (``a.b`` finds ``a``), else of the object itself."""
        if key is None:
            return self.line
        return self.key_lines.get(key, self.key_lines.get(key.split(".")[0], self.line))

    def item_lines(self, key: str) -> list[int]:
        """Lines on which the items of the array member ``key`` start."""
        return self.items.get(key, [])


def kind_of(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "null"
    return "an object"


class Bad(ValueError):
    pass


def read_number(value: Any) -> float | None:
    """A number from the file; strings such as ``"1000"`` count (old vLLM wrappers wrote those)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise Bad(f"expected a number, got {json.dumps(value)}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(",", "")
        if text.lower() in ("", "null", "none", "n/a", "-"):
            return None
        try:
            number = float(text)
        except ValueError:
            raise Bad(f"expected a number, got {value!r}") from None
    else:
        raise Bad(f"expected a number, got {kind_of(value)}")
    return None if math.isnan(number) else number


@dataclass
class Run:
    """Reading one run of a file, collecting problems with their lines."""

    name: str
    doc: Doc
    problems: list[str]
    where: str = ""
    """Prefix naming the run inside a file that holds several in one object (``benchmarks[2]: ``)."""
    line: int | None = None
    """Line of this run when it is not the document's own line (an item of a list)."""

    def problem(self, key: str | None, message: str) -> None:
        line = self.line if self.line is not None else self.doc.line_of(key)
        label = f"{key}: " if key else ""
        self.problems.append(f"{self.name}:{line}: {self.where}{label}{message}")

    def num(self, data: Any, key: str, label: str | None = None) -> float | None:
        if not isinstance(data, Mapping):
            return None
        try:
            return read_number(data.get(key))
        except Bad as exc:
            self.problem(label or key, str(exc))
            return None

    def count(self, data: Any, key: str, label: str | None = None) -> int | None:
        value = self.num(data, key, label)
        if value is None:
            return None
        if value < 0 or not value.is_integer():
            self.problem(label or key, f"expected a whole number of requests, got {value:g}")
            return None
        return int(value)


def finite_positive(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


def fmt_number(value: float) -> str:
    """4.0 -> '4', 2.5 -> '2.5' (for ids and notes)."""
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"


def dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def first_given(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def a_string(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str) and value[0].strip():
        return value[0].strip()
    return None


@dataclass
class Fields:
    """A run as read from the file, before the user's overrides and validation."""

    index: int
    line: int
    requests_per_s: float | None = None
    input_tokens: float | None = None
    output_tokens: float | None = None
    output_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    concurrency: float | None = None
    request_rate: float | None = None
    rate_infinite: bool = False
    ttft: dict[str, float | None] = field(default_factory=dict)
    itl: dict[str, float | None] = field(default_factory=dict)
    e2e: dict[str, float | None] = field(default_factory=dict)
    failed: int | None = None
    completed: float | None = None
    duration_s: float | None = None
    """Requests completed and the run's length, as the file states them (for the consistency check)."""
    model: str | None = None
    model_path: str | None = None
    engine: str | None = None
    engine_version: str | None = None
    measured: dt.date | None = None
    prefix_share: float | None = None
    """Read from the run's own settings (its dataset, shared-prefix settings, a trace's messages); None when the
    file does not say."""
    precision: str | None = None
    gpu: str | None = None
    gpu_count: int | None = None
    """The setup, for the few formats whose files state it (InferenceMAX results); the user's values win."""
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unread_latency: list[str] = field(default_factory=list)
    """Latency-like keys of the run this reader does not understand (the record is then incomplete)."""

    def set_model(self, value: Any) -> None:
        """The model from the file: a path or provider route reduced to the model's name, kept whole in
        ``model_path``."""
        text = a_string(value)
        if text is None:
            return
        self.model, self.model_path = model_name(text)

    @property
    def load_label(self) -> str:
        parts = []
        if self.concurrency is not None:
            parts.append(f"c{fmt_number(self.concurrency)}")
        if self.request_rate is not None:
            parts.append(f"rate{fmt_number(self.request_rate)}")
        elif self.rate_infinite and self.concurrency is None:
            parts.append("rate-inf")
        return "-".join(parts)


# Engines named by a benchmark client's backend; generic clients (openai, openai-chat ...) name none.
_ENGINE_BY_BACKEND = {
    "vllm": "vllm",
    "vllm-chat": "vllm",
    "sglang": "sglang",
    "sglang-native": "sglang",
    "sglang-oai": "sglang",
    "sglang-oai-chat": "sglang",
    "lmdeploy": "lmdeploy",
    "lmdeploy-chat": "lmdeploy",
    "tgi": "tgi",
    "trt": "tensorrt-llm",
    "tensorrt-llm": "tensorrt-llm",
    "tensorrtllm": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "deepspeed-mii": "deepspeed-mii",
    "scalellm": "scalellm",
    "llama.cpp": "llama.cpp",
}


_CLIENT_BACKENDS = frozenset({"openai", "openai-chat", "openai-audio", "openai-embeddings", "gserver", "truss"})


def engine_from_backend(backend: Any, notes: list[str]) -> str | None:
    if not isinstance(backend, str) or not backend.strip():
        return None
    key = backend.strip().lower()
    if key in _ENGINE_BY_BACKEND:
        return _ENGINE_BY_BACKEND[key]
    if key in _CLIENT_BACKENDS or key.startswith("openai"):
        notes.append(f"client backend {backend!r} does not name the engine")
        return None
    return key


_HF_CACHE = re.compile(r"^models--(?P<org>[^/]+?)--(?P<name>[^/]+)$")
_SNAPSHOT = re.compile(r"^[0-9a-f]{40}$")


def model_name(text: str) -> tuple[str, str | None]:
    """``(name, path)``: the model's name, and the text it came from when that was a path, not a name.

    A Hugging Face id (``org/name``) is a name and stays whole. A local path ends in the model's folder
    (``/workspace/DeepSeek-V2-Lite``), or in a Hugging Face cache folder ``models--org--name/snapshots/<sha>``,
    which gives ``org/name``; a provider's route with more parts (``accounts/fireworks/models/llama-v2-7b-chat``,
    ``together_ai/togethercomputer/llama-2-70b-chat``) ends in the model's name.
    """
    text = text.strip()
    parts = [p for p in re.split(r"[\\/]+", text) if p and p != "."]
    is_path = text.startswith(("/", "./", "../", "~")) or "\\" in text or re.match(r"^[A-Za-z]:", text) is not None
    if not parts or (not is_path and len(parts) <= 2):
        return text, None
    for part in parts:
        cache = _HF_CACHE.match(part)
        if cache:
            return f"{cache['org']}/{cache['name']}", text
    kept = [p for p in parts if not _SNAPSHOT.match(p) and p != "snapshots"]
    return (kept[-1] if kept else parts[-1]), text


LATENCY_WORDS = re.compile(
    r"(ttft|tpot|itl|e2e|ttlt|tbt|latency|time_to_|inter_token|time_per_output|queue_time)", re.IGNORECASE
)
"""Words that make a key a latency figure: a key with one that a reader does not understand is named."""


def unread_latency_keys(data: Mapping[str, Any], understood: Callable[[str], bool]) -> list[str]:
    """The numeric keys of ``data`` that look like latency figures and that ``understood`` does not know."""
    return sorted(
        k
        for k, v in data.items()
        if LATENCY_WORDS.search(k)
        and not understood(k)
        and (isinstance(v, int | float) and not isinstance(v, bool) or isinstance(v, Mapping))
    )


def warn_unread(fields: Fields, keys: list[str], tool: str) -> None:
    """Name latency keys the reader does not understand, in a warning that says what it means for the record."""
    if not keys:
        return
    fields.unread_latency.extend(keys)
    fields.warnings.append(
        f"latency figures not read ({', '.join(keys)}): not a {tool} key this calculator knows, so the record's "
        "latencies may be incomplete; the record is incomplete until they are read"
    )


_TIME_UNITS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 1e-3, "ns": 1e-6}


def ms_factor(unit: str) -> float:
    """Milliseconds per ``unit`` (``ms``, ``s`` ...)."""
    return _TIME_UNITS[unit]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, interpolated linearly between ranks (numpy's and pandas'
    default), which is how the benchmark tools report theirs."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def to_latency(values: Mapping[str, float | None], run: Run, key: str) -> Latency:
    try:
        return Latency(**{k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            run.problem(key, f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}")
        return Latency()


def parse_rate(value: Any, run: Run, fields: Fields, label: str = "request_rate") -> None:
    """``request_rate``: a number, ``inf`` (vLLM writes the string), ``Infinity``, or SGLang's ``"trace"``.

    ``label`` names the field in a problem (where the file keeps it, when not at the top level)."""
    if value is None:
        return
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity", "+inf"):
        fields.rate_infinite = True
        return
    if isinstance(value, str) and value.strip().lower() == "trace":
        fields.notes.append("requests replayed at the trace's timestamps (no fixed rate)")
        return
    try:
        rate = read_number(value)
    except Bad as exc:
        run.problem(label, str(exc))
        return
    if rate is None:
        return
    if math.isinf(rate):
        fields.rate_infinite = True
    elif rate <= 0:
        run.problem(label, f"must be positive or inf, got {fmt_number(rate)}")
    else:
        fields.request_rate = rate


def iso_date(value: Any) -> dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00")).date()
    except ValueError:
        return None
