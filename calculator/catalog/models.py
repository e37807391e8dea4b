"""Model architectures: what a capacity estimate needs to know about a model, one YAML file per family.

A file in ``models/`` holds one family (``llama.yaml``: llama-3.1-8b, llama-3.2-3b, llama-3.3-70b).
A spec carries the parameter counts (total and per token), the attention shape that sets the size
of the KV cache (grouped-query heads, a DeepSeek-style latent, sliding-window layers) and, for a
mixture of experts, how many experts there are and how much of the weights they hold.

A model that is not bundled can be imported from its Hugging Face ``config.json``, given as a
local path or as uploaded text (:func:`from_hf_config`); nothing is ever downloaded. Parameter
counts are then computed from the architecture and the spec's ``notes`` say so.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from calculator.catalog.datafile import DATA_DIR, DataFileError, item_id_lines, key_line, load_model, validation_lines
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.limits import PARAMETERS_B, SPEC_COUNT
from calculator.catalog.prices import Source, canonical_model
from calculator.catalog.textfile import json_words
from calculator.errors import InputError

__all__ = [
    "DEFAULT_MODELS_DIR",
    "Experts",
    "MlaSpec",
    "ModelCatalog",
    "ModelFile",
    "ModelSpec",
    "SlidingWindow",
    "from_hf_config",
    "load_model_file",
    "load_model_specs",
]

DEFAULT_MODELS_DIR = DATA_DIR / "models"

Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)]
Count = Annotated[int, Field(gt=0, strict=True), SPEC_COUNT]
"""A whole number above zero (a quoted string, a boolean or 2.5 is refused)."""
Billions = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True), PARAMETERS_B]
"""A parameter count in billions: a YAML number above zero."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class MlaSpec(_Frozen):
    """Multi-head latent attention (DeepSeek-V2/V3, GLM-5): one compressed latent per layer in the cache."""

    kv_lora_rank: Count
    """Width of the compressed key-value latent (``kv_lora_rank``; 512 in DeepSeek-V3)."""
    qk_rope_head_dim: Count
    """Width of the decoupled rotary key, cached beside the latent (``qk_rope_head_dim``; 64)."""


class SlidingWindow(_Frozen):
    """Layers that attend only to the last ``window`` tokens, so hold at most that many in the cache."""

    window: Count
    """Tokens each sliding-window layer attends to (``sliding_window``; 128 in gpt-oss)."""
    layers: Count
    """How many of the model's layers use the window; the others attend to the full context."""


class Experts(_Frozen):
    """A mixture of experts: each token is routed to ``active`` of ``total`` expert MLPs."""

    total: Count
    """Routed experts per MoE layer (``num_local_experts``, ``n_routed_experts`` or ``num_experts``)."""
    active: Count
    """Routed experts each token uses (``num_experts_per_tok``)."""
    shared: int = Field(default=0, ge=0, le=SPEC_COUNT.high, strict=True)
    """Experts every token uses besides the routed ones (``n_shared_experts``; 1 in DeepSeek-V3)."""
    expert_params_b: Billions | None = None
    """Parameters in ALL routed experts of all layers together, in billions (shared experts not
    included). A batch of tokens reads the experts it touches plus everything else; absent, it is
    worked out from the total and active counts (see :attr:`ModelSpec.routed_expert_params_b`)."""

    @model_validator(mode="after")
    def _active_within_total(self) -> Experts:
        if self.active > self.total:
            raise ValueError(f"active ({self.active}) exceeds total ({self.total}) routed experts")
        return self


class ModelSpec(_Frozen):
    """One model's architecture: parameter counts, attention shape and, for a mixture of experts, its experts."""

    id: Slug
    """Unique across all files; scenarios and measurements name models by it (``llama-3.3-70b``)."""
    name: str = Field(min_length=1)
    """The name as the publisher prints it (``Llama 3.3 70B Instruct``)."""
    aliases: tuple[Annotated[str, Field(min_length=1)], ...] = ()
    """Other names providers use for the same weights (``meta-llama/Llama-3.3-70B-Instruct``)."""
    open_weights: bool = True
    """Whether the weights are published, so the model can be run on rented GPUs."""
    params_total_b: Billions
    """All parameters in billions, every expert included: what has to fit in GPU memory."""
    params_active_b: Billions
    """Parameters used per token in billions (equal to the total for a dense model): what a token costs
    in compute. Publishers differ on whether the embedding table counts; ``notes`` says where it matters."""
    layers: Count
    """Transformer layers (``num_hidden_layers``), not counting extra multi-token-prediction layers."""
    hidden_size: Count
    """Width of the residual stream (``hidden_size``)."""
    attention_heads: Count
    """Query heads per layer (``num_attention_heads``)."""
    kv_heads: Count
    """Key-value heads per layer (``num_key_value_heads``); for an MLA model, equal to ``attention_heads``
    (the cache holds a latent instead, see ``mla``)."""
    head_dim: Count
    """Width of one query/key head (``head_dim``, else hidden_size / attention_heads); for MLA the
    query-key width ``qk_nope_head_dim + qk_rope_head_dim``."""
    mla: MlaSpec | None = None
    """Multi-head latent attention; when given, the KV cache holds one latent per layer."""
    sliding_window: SlidingWindow | None = None
    """Sliding-window layers, whose cache is capped at the window; absent when every layer attends to all."""
    experts: Experts | None = None
    """The mixture of experts; absent for a dense model."""
    default_context: Count
    """The context length the publisher advertises for ordinary use (Qwen3: 32,768 native)."""
    max_context: Count
    """The longest context the model supports, with the publisher's documented RoPE scaling (Qwen3 with
    YaRN: 131,072); ``max_position_embeddings`` in most configs."""
    source: Source
    notes: str | None = None
    """Caveats: figures from secondary sources, conventions (embeddings in the active count), what the
    KV formula leaves out (DeepSeek sparse-attention indexer keys)."""

    @field_validator("source")
    @classmethod
    def _source_points_somewhere(cls, v: Source) -> Source:
        # Source's own check runs only when ``document`` is given; a figure must say where it is from.
        if v.url is None and v.document is None:
            raise ValueError("a source needs a url or a document")
        return v

    @field_validator("aliases")
    @classmethod
    def _unique_aliases(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        lowered = [a.strip().lower() for a in v]
        if len(set(lowered)) != len(lowered):
            raise ValueError("an alias is listed twice")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ModelSpec:
        if self.params_active_b > self.params_total_b:
            raise ValueError(f"params_active_b ({self.params_active_b}) exceeds params_total_b ({self.params_total_b})")
        if self.kv_heads > self.attention_heads or self.attention_heads % self.kv_heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) must divide attention_heads ({self.attention_heads}) evenly")
        if self.mla is not None and self.kv_heads != self.attention_heads:
            raise ValueError("an MLA model sets kv_heads equal to attention_heads (the cache holds the latent)")
        if self.sliding_window is not None and self.sliding_window.layers > self.layers:
            raise ValueError(
                f"sliding_window.layers ({self.sliding_window.layers}) exceeds the model's layers ({self.layers})"
            )
        if self.default_context > self.max_context:
            raise ValueError(f"default_context ({self.default_context}) exceeds max_context ({self.max_context})")
        expert_params_b = self.experts.expert_params_b if self.experts is not None else None
        if expert_params_b is not None and expert_params_b >= self.params_total_b:
            raise ValueError(
                f"experts.expert_params_b ({expert_params_b}) must be below "
                f"params_total_b ({self.params_total_b}): attention and embeddings are not experts"
            )
        return self

    # --- KV cache ---------------------------------------------------------------------------

    def kv_bytes_per_layer_token(self, kv_dtype_bytes: float = 2.0) -> float:
        """Bytes one layer caches for one token: 2 x kv_heads x head_dim (keys and values), or for
        MLA the latent plus the rotary key, kv_lora_rank + qk_rope_head_dim; times the element size."""
        _check_dtype_bytes(kv_dtype_bytes)
        if self.mla is not None:
            return (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim) * kv_dtype_bytes
        return 2 * self.kv_heads * self.head_dim * kv_dtype_bytes

    def kv_bytes_per_token(self, kv_dtype_bytes: float = 2.0, context: int | None = None) -> float:
        """KV-cache bytes per token of context: BF16/FP16 2, FP8 1.

        Grouped-query or multi-head attention: 2 x layers x kv_heads x head_dim x bytes. Latent
        attention (DeepSeek): layers x (kv_lora_rank + qk_rope_head_dim) x bytes. Sliding-window
        layers hold at most ``window`` tokens, so for a sequence of ``context`` tokens this is the
        average (full layers x context + window layers x min(window, context)) x per layer / context;
        with ``context`` None the sliding layers count as full (the most a token can cost).
        """
        if context is None:
            return self.layers * self.kv_bytes_per_layer_token(kv_dtype_bytes)
        _check_context(context)
        return self.kv_bytes_per_sequence(context, kv_dtype_bytes) / context

    def kv_bytes_per_sequence(self, context: int, kv_dtype_bytes: float = 2.0) -> float:
        """KV-cache bytes one sequence of ``context`` tokens holds (sliding-window layers capped at the window)."""
        _check_context(context)
        per_layer = self.kv_bytes_per_layer_token(kv_dtype_bytes)
        window_layers = self.sliding_window.layers if self.sliding_window else 0
        window = min(self.sliding_window.window, context) if self.sliding_window else 0
        return (self.layers - window_layers) * per_layer * context + window_layers * per_layer * window

    # --- weights ----------------------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return self.experts is not None

    @property
    def routed_expert_params_b(self) -> float:
        """Parameters in all routed experts, in billions; 0 for a dense model.

        ``experts.expert_params_b`` when the file gives it; otherwise worked out from the counts: with
        ``E`` routed experts of which ``k`` are used per token, total = S + X and active = S + X k / E,
        so X = (total - active) / (1 - k / E).
        """
        if self.experts is None:
            return 0.0
        if self.experts.expert_params_b is not None:
            return self.experts.expert_params_b
        unused_share = 1 - self.experts.active / self.experts.total
        if unused_share <= 0:
            return 0.0
        return min((self.params_total_b - self.params_active_b) / unused_share, self.params_total_b)

    @property
    def shared_params_b(self) -> float:
        """Parameters every token reads, in billions: all of them for a dense model, everything but
        the routed experts (attention, embeddings, shared experts, dense layers) for a mixture of experts."""
        return self.params_total_b - self.routed_expert_params_b

    @property
    def label(self) -> str:
        return f"{self.name} ({self.id})"


def _check_dtype_bytes(kv_dtype_bytes: float) -> None:
    if not kv_dtype_bytes > 0:
        raise InputError("kv_dtype_bytes", f"bytes per KV element must be above zero, got {kv_dtype_bytes}")


def _check_context(context: int) -> None:
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise InputError("context", f"a context length is a whole number of tokens above zero, got {context!r}")


class ModelFile(_Frozen):
    """One YAML file: one model family."""

    schema_version: Literal[1]
    family: Slug
    """Must equal the file name without ``.yaml``."""
    notes: str | None = None
    models: tuple[ModelSpec, ...] = Field(min_length=1)

    @field_validator("models")
    @classmethod
    def _unique_ids(cls, v: tuple[ModelSpec, ...]) -> tuple[ModelSpec, ...]:
        seen: dict[str, int] = {}
        for index, model in enumerate(v):
            if model.id in seen:
                raise ValueError(f"models {seen[model.id]} and {index} share the id {model.id!r}; ids must be unique")
            seen[model.id] = index
        return v


class ModelCatalog(BaseModel):
    """All loaded models, with a lookup by id or by any name a provider uses."""

    model_config = ConfigDict(frozen=True)
    models: tuple[ModelSpec, ...]

    @model_validator(mode="after")
    def _unique_names(self) -> ModelCatalog:
        owner: dict[str, str] = {}
        clashes: list[str] = []
        for model in self.models:
            for name in {model.id.lower(), *(a.strip().lower() for a in model.aliases)}:
                if name in owner and owner[name] != model.id:
                    clashes.append(f"{name!r} names both {owner[name]} and {model.id}")
                owner.setdefault(name, model.id)
        if clashes:
            raise ValueError("model ids and aliases must be unique: " + "; ".join(clashes))
        return self

    @cached_property
    def _by_name(self) -> dict[str, ModelSpec]:
        index: dict[str, ModelSpec] = {}
        for model in self.models:
            for name in (model.id, *model.aliases):
                index.setdefault(name.strip().lower(), model)
        return index

    @cached_property
    def _by_canonical(self) -> dict[str, ModelSpec]:
        index: dict[str, ModelSpec] = {}
        for model in self.models:
            for name in (model.id, *model.aliases):
                index.setdefault(canonical_model(name), model)
        return index

    @property
    def ids(self) -> list[str]:
        """Every model id, sorted."""
        return sorted(m.id for m in self.models)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def find(self, name: str) -> ModelSpec | None:
        """The model with this id or alias (case-insensitive), else the one whose id or an alias reduces
        to the same :func:`~calculator.catalog.prices.canonical_model` (``meta-llama/Llama-3.3-70B-Instruct-Turbo``
        finds ``llama-3.3-70b``); None when no model matches."""
        key = name.strip().lower()
        if not key:
            return None
        return self._by_name.get(key) or self._by_canonical.get(canonical_model(name))

    def get(self, name: str) -> ModelSpec:
        """Like :meth:`find`, but an unknown name is an :class:`InputError` on ``model`` naming the known ids."""
        model = self.find(name)
        if model is None:
            raise InputError(
                "model",
                f"unknown model {name!r}; known: {', '.join(self.ids)} "
                "(or import the model's config.json from Hugging Face)",
            )
        return model


def load_model_file(path: Path) -> ModelFile:
    """Load and validate one family file; every failure is a DataFileError naming file and line."""
    model_file = load_model(path, ModelFile)
    if model_file.family != path.stem:
        line = key_line(path, "family")
        raise DataFileError([f"{path}:{line}: family: {model_file.family!r} must match the file name {path.stem!r}"])
    return model_file


def load_model_specs(directory: Path | None = None) -> ModelCatalog:
    """Load every ``*.yaml`` in ``directory`` (default ``models/``).

    All broken files are reported together in one DataFileError; an id (or alias) defined in two
    places is an error that names both files and lines.
    """
    directory = directory or DEFAULT_MODELS_DIR
    paths = sorted(directory.glob("*.yaml"))
    if not paths:
        raise DataFileError([f"{directory}: no model spec files (*.yaml) found"])
    models: list[ModelSpec] = []
    first_seen: dict[str, tuple[str, str]] = {}
    problems: list[str] = []
    for path in paths:
        try:
            model_file = load_model_file(path)
        except DataFileError as exc:
            problems.extend(exc.lines)
            continue
        id_lines = item_id_lines(path, "models")
        for index, model in enumerate(model_file.models):
            where = f"{path}:{id_lines.get(index, 1)}"
            label = f"models.{index}[{model.id}]"
            clash = next(
                (
                    (name, first_seen[name.strip().lower()])
                    for name in (model.id, *model.aliases)
                    if name.strip().lower() in first_seen
                ),
                None,
            )
            if clash is not None:
                name, (other_id, other_where) = clash
                what = f"duplicate model id {model.id!r}" if name == model.id else f"the name {name!r}"
                problems.append(f"{where}: {label}.id: {what} already defined in {other_where} ({other_id})")
                continue
            for name in (model.id, *model.aliases):
                first_seen[name.strip().lower()] = (model.id, where)
            models.append(model)
    if problems:
        raise DataFileError(problems)
    return ModelCatalog(models=tuple(models))


# --- import from a Hugging Face config.json -----------------------------------------------------

UPLOADED = "uploaded config.json"
"""How an error names a config that did not come from a file."""

_SLIDING_TYPES = ("sliding_attention", "sliding", "local", "local_attention")
"""``layer_types`` entries that mean a sliding-window layer."""


class _Config:
    """A parsed config.json and where it came from, so that every problem names the file and key."""

    def __init__(self, data: Mapping[str, Any], name: str, text: str | None) -> None:
        self.name = name
        self.text = text
        text_config = data.get("text_config")
        # Multimodal configs (Llama 4, Gemma 3, Qwen-VL) keep the language model under text_config.
        if "num_hidden_layers" not in data and isinstance(text_config, Mapping):
            data = {**data, **text_config}
        self.data = data

    def error(self, key: str, message: str) -> DataFileError:
        line = ""
        if self.text is not None:
            match = re.search(rf'"{re.escape(key)}"\s*:', self.text)
            if match is not None:
                line = f":{self.text.count(chr(10), 0, match.start()) + 1}"
        return DataFileError([f"{self.name}{line}: {key}: {message}"])

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def count(self, key: str, default: int | None = None, minimum: int = 1) -> int:
        """A whole-number value; missing (or null) is an error unless a default is given."""
        value = self.data.get(key)
        if value is None:
            if default is not None:
                return default
            raise self.error(key, "required key is missing (is this a Hugging Face config.json of a text model?)")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(key, f"expected a whole number of at least {minimum}, got {value!r}")
        return value

    def optional_count(self, key: str, minimum: int = 1) -> int | None:
        return self.count(key, minimum=minimum) if self.has(key) else None

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value


def _read_config(config: Mapping[str, Any] | str | Path, source_name: str | None) -> tuple[_Config, Source]:
    today = dt.date.today()
    if isinstance(config, Mapping):
        name = source_name or UPLOADED
        return _Config(config, name, None), Source(document=name, read=today)
    text: str
    if isinstance(config, str) and config.lstrip().startswith("{"):
        name = source_name or UPLOADED
        text = config
    else:
        path = Path(config)
        if path.is_dir():
            path = path / "config.json"
        name = source_name or str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise DataFileError([f"{name}: cannot read file: {exc.strerror or exc}"]) from exc
        except UnicodeDecodeError as exc:
            raise DataFileError([f"{name}: not a UTF-8 text file"]) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError([f"{name}:{exc.lineno}: not valid JSON: {json_words(exc.msg)}"]) from exc
    except (ValueError, RecursionError) as exc:  # Python's limit on digits in a number, or nesting past its stack
        raise DataFileError([f"{name}: not a config.json: a number too long or nesting too deep"]) from exc
    if not isinstance(data, dict):
        raise DataFileError([f"{name}: a config.json holds one JSON object, got {type(data).__name__}"])
    return _Config(data, name, text), Source(document=name, read=today)


class _Shape:
    """The architecture read from a config: everything :class:`ModelSpec` needs except parameter counts."""

    def __init__(self, cfg: _Config) -> None:
        self.layers = cfg.count("num_hidden_layers")
        self.hidden = cfg.count("hidden_size")
        self.heads = cfg.count("num_attention_heads")
        self.max_context = cfg.count("max_position_embeddings")
        self.mla: MlaSpec | None = None
        if cfg.has("kv_lora_rank"):
            self.mla = MlaSpec(kv_lora_rank=cfg.count("kv_lora_rank"), qk_rope_head_dim=cfg.count("qk_rope_head_dim"))
            self.kv_heads = self.heads
            nope = cfg.count("qk_nope_head_dim", default=0, minimum=0)
            self.head_dim = nope + self.mla.qk_rope_head_dim
        else:
            self.kv_heads = cfg.count("num_key_value_heads", default=self.heads)
            if self.kv_heads > self.heads or self.heads % self.kv_heads:
                raise cfg.error(
                    "num_key_value_heads", f"{self.kv_heads} does not divide num_attention_heads ({self.heads})"
                )
            if cfg.has("head_dim"):
                self.head_dim = cfg.count("head_dim")
            elif self.hidden % self.heads:
                raise cfg.error("head_dim", f"missing, and hidden_size ({self.hidden}) is not a multiple of the heads")
            else:
                self.head_dim = self.hidden // self.heads
        self.sliding_window = _sliding_window(cfg, self.layers, self.max_context)
        self.experts: Experts | None = None
        self.moe_layers: list[int] = []
        total = next(
            (cfg.count(k, minimum=0) for k in ("num_local_experts", "n_routed_experts", "num_experts") if cfg.has(k)),
            0,
        )
        if total > 1:
            shared = cfg.count("n_shared_experts", default=0, minimum=0)
            if not shared and cfg.count("shared_expert_intermediate_size", default=0, minimum=0):
                shared = 1
            active = cfg.count("num_experts_per_tok")
            if active > total:
                raise cfg.error("num_experts_per_tok", f"{active} exceeds the {total} routed experts")
            self.experts = Experts(total=total, active=active, shared=shared)
            self.moe_layers = _moe_layers(cfg, self.layers)


def _sliding_window(cfg: _Config, layers: int, max_context: int) -> SlidingWindow | None:
    """Which layers use a sliding window, from ``layer_types`` or the older per-family settings."""
    layer_types = cfg.data.get("layer_types")
    if isinstance(layer_types, list):
        if len(layer_types) != layers:
            raise cfg.error("layer_types", f"lists {len(layer_types)} layers, num_hidden_layers is {layers}")
        count = sum(1 for t in layer_types if t in _SLIDING_TYPES)
    elif cfg.data.get("use_sliding_window") is False or not cfg.has("sliding_window"):
        count = 0  # Qwen2/Qwen3 carry a sliding_window value that is switched off
    elif cfg.data.get("use_sliding_window") is True:
        # Qwen2: layers from max_window_layers on use the window.
        count = layers - min(cfg.count("max_window_layers", default=0, minimum=0), layers)
    elif cfg.has("sliding_window_pattern"):
        count = layers - layers // cfg.count("sliding_window_pattern")  # Gemma 3: every Nth layer is global
    elif cfg.data.get("model_type") == "gemma2":
        count = (layers + 1) // 2  # Gemma 2 alternates, starting with a sliding layer
    else:
        count = layers  # Mistral 7B v0.1: every layer
    if count == 0:
        return None
    window = cfg.count("sliding_window")
    if window >= max_context:
        return None  # a window as long as the context changes nothing
    return SlidingWindow(window=window, layers=count)


def _moe_layers(cfg: _Config, layers: int) -> list[int]:
    """Indices of the layers whose MLP is a mixture of experts (the first few are dense in DeepSeek and GLM)."""
    first_dense = cfg.count("first_k_dense_replace", default=0, minimum=0)
    mlp_only = cfg.data.get("mlp_only_layers") or []
    freq = cfg.data.get("moe_layer_freq")
    if isinstance(freq, list):
        if len(freq) != layers:
            raise cfg.error("moe_layer_freq", f"lists {len(freq)} layers, num_hidden_layers is {layers}")
        return [i for i, on in enumerate(freq) if on and i >= first_dense and i not in mlp_only]
    every = cfg.count("moe_layer_freq", default=1)
    step = cfg.count("decoder_sparse_step", default=1)  # Qwen-MoE: layers where (i + 1) % step == 0
    return [
        i for i in range(layers) if i >= first_dense and i % every == 0 and (i + 1) % step == 0 and i not in mlp_only
    ]


class _Counts:
    def __init__(self, total: float, active: float, experts: float | None) -> None:
        self.total_b = total / 1e9
        self.active_b = active / 1e9
        self.experts_b = experts / 1e9 if experts is not None else None


def _estimate_params(cfg: _Config, shape: _Shape) -> _Counts:
    """Parameter counts from the architecture: embeddings, attention, MLP or experts, norms.

    Gated MLPs (SwiGLU, three matrices) are assumed, as in every current open model. Biases, the
    DeepSeek sparse-attention indexer and multi-token-prediction layers are not counted. The active
    count includes the embedding table (the Mixtral convention; OpenAI's gpt-oss figure leaves it out).
    """
    h = shape.hidden
    vocab = cfg.count("vocab_size")
    embeddings = vocab * h * (1 if cfg.flag("tie_word_embeddings", default=False) else 2)

    if shape.mla is not None:
        nope = cfg.count("qk_nope_head_dim", minimum=0)
        rope = shape.mla.qk_rope_head_dim
        v_dim = cfg.count("v_head_dim")
        q_lora = cfg.count("q_lora_rank", default=0, minimum=0)
        kv_lora = shape.mla.kv_lora_rank
        q = (h * q_lora + q_lora + q_lora * shape.heads * (nope + rope)) if q_lora else h * shape.heads * (nope + rope)
        kv = h * (kv_lora + rope) + kv_lora + kv_lora * shape.heads * (nope + v_dim)
        attention = q + kv + shape.heads * v_dim * h
    else:
        q_width = shape.heads * shape.head_dim
        kv_width = shape.kv_heads * shape.head_dim
        attention = 2 * h * q_width + 2 * h * kv_width
        if cfg.flag("attention_bias", default=False):
            attention += q_width + 2 * kv_width
    norms = 2 * h

    moe_layers = len(shape.moe_layers)
    dense_layers = shape.layers - moe_layers
    dense_mlp = 3 * h * cfg.count("intermediate_size") if dense_layers else 0

    routed = shared = router = expert = 0
    if shape.experts is not None:
        expert_width = cfg.count("moe_intermediate_size", default=0) or cfg.count("intermediate_size")
        expert = 3 * h * expert_width
        routed = shape.experts.total * expert
        if cfg.has("shared_expert_intermediate_size"):
            shared = 3 * h * cfg.count("shared_expert_intermediate_size")
        else:
            shared = shape.experts.shared * expert
        router = h * shape.experts.total

    total = (
        embeddings
        + shape.layers * (attention + norms)
        + h
        + dense_layers * dense_mlp
        + moe_layers * (routed + shared + router)
    )
    if shape.experts is None:
        return _Counts(total, total, None)
    unused = (shape.experts.total - shape.experts.active) * expert * moe_layers
    return _Counts(total, total - unused, routed * moe_layers)


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.strip().lower().split("/")[-1])
    slug = re.sub(r"^[^a-z0-9]+", "", slug)[:80].rstrip("-")
    return slug or "imported-model"


def _default_name(cfg: _Config, config: Mapping[str, Any] | str | Path) -> str:
    named = cfg.data.get("_name_or_path")
    if isinstance(named, str) and named.strip() and not named.startswith(("/", ".")):
        return named.strip().rstrip("/").split("/")[-1]
    if isinstance(config, Path | str) and not (isinstance(config, str) and config.lstrip().startswith("{")):
        path = Path(config)
        if path.is_dir():
            return path.name
        if path.name == "config.json" and path.parent.name:
            return path.parent.name
        return path.stem
    model_type = cfg.data.get("model_type")
    return str(model_type) if isinstance(model_type, str) and model_type else "imported-model"


def from_hf_config(
    config: Mapping[str, Any] | str | Path,
    id: str | None = None,
    name: str | None = None,
    *,
    params_total_b: float | None = None,
    params_active_b: float | None = None,
    source_name: str | None = None,
) -> ModelSpec:
    """A :class:`ModelSpec` from a Hugging Face ``config.json``; nothing is downloaded.

    ``config`` is a path (to the file, or to a model directory holding it), the file's text (an
    upload; text starting with ``{``), or the parsed mapping. Errors name the file, or
    ``uploaded config.json`` (``source_name`` overrides the name), and the key.

    Reads ``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``, ``num_key_value_heads``
    (default: the attention heads), ``head_dim`` (default hidden / heads), ``kv_lora_rank`` with
    ``qk_rope_head_dim`` (latent attention), ``sliding_window`` with ``layer_types`` (gpt-oss),
    ``use_sliding_window``/``max_window_layers`` (Qwen2), ``sliding_window_pattern`` (Gemma 3) or
    alone (Mistral 7B v0.1: every layer), the experts (``num_local_experts``, ``n_routed_experts`` or
    ``num_experts``; ``num_experts_per_tok``, ``n_shared_experts``, ``first_k_dense_replace``,
    ``moe_layer_freq``, ``moe_intermediate_size``), ``vocab_size``, ``tie_word_embeddings`` and
    ``max_position_embeddings`` (both the default and the maximum context).

    Parameter counts are computed from the architecture unless ``params_total_b`` and
    ``params_active_b`` are given (the publisher's figures are better: they include the layers and
    biases the estimate leaves out); ``notes`` says which.
    """
    cfg, source = _read_config(config, source_name)
    shape = _Shape(cfg)
    notes: list[str] = [f"Imported from {cfg.name}."]
    try:
        counts: _Counts | None = _estimate_params(cfg, shape)
    except DataFileError:
        if params_total_b is None or params_active_b is None:
            raise
        counts = None  # the caller's figures stand; only the experts' share is unknown
    if params_total_b is None or params_active_b is None:
        assert counts is not None
        computed = [what for what, given in (("total", params_total_b), ("active", params_active_b)) if given is None]
        notes.append(
            f"Parameter counts ({' and '.join(computed)}) computed from the config: embeddings, attention, "
            "gated MLP or experts, norms; biases, sparse-attention indexers and multi-token-prediction "
            "layers are not counted, so published figures may differ by a few percent. The active count "
            "includes the embedding table."
        )
    else:
        notes.append("Parameter counts given by the user.")
    total_b = params_total_b if params_total_b is not None else counts.total_b if counts else 0.0
    active_b = params_active_b if params_active_b is not None else counts.active_b if counts else 0.0
    experts = shape.experts
    if experts is not None and counts is not None and counts.experts_b is not None and counts.experts_b < total_b:
        experts = experts.model_copy(update={"expert_params_b": round(counts.experts_b, 3)})
    if cfg.has("index_head_dim"):
        notes.append(
            "The model has a sparse-attention indexer (index_head_dim); its cached keys are not in the KV "
            "figure, which counts the attention latent only."
        )
    if cfg.has("quantization_config"):
        notes.append("The checkpoint is quantised (quantization_config); parameter counts are counts, not bytes.")
    if isinstance(cfg.data.get("layer_types"), list) and any(
        t not in (*_SLIDING_TYPES, "full_attention", "attention") for t in cfg.data["layer_types"]
    ):
        notes.append("Layer types other than full and sliding attention are counted as full attention.")
    raw_name = _default_name(cfg, config)
    fields: dict[str, Any] = {
        "id": id if id is not None else _slug(raw_name),
        "name": name if name is not None else raw_name,
        "params_total_b": params_total_b if params_total_b is not None else round(total_b, 3),
        "params_active_b": params_active_b if params_active_b is not None else round(min(active_b, total_b), 3),
        "layers": shape.layers,
        "hidden_size": shape.hidden,
        "attention_heads": shape.heads,
        "kv_heads": shape.kv_heads,
        "head_dim": shape.head_dim,
        "mla": shape.mla,
        "sliding_window": shape.sliding_window,
        "experts": experts,
        "default_context": shape.max_context,
        "max_context": shape.max_context,
        "source": source,
        "notes": " ".join(notes),
    }
    try:
        return ModelSpec.model_validate(fields)
    except ValidationError as exc:
        raise DataFileError(validation_lines(exc, cfg.name)) from exc
