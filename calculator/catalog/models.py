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

import re
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from calculator.catalog.datafile import DATA_DIR, DataFileError, ItemPlace, ItemPlaces, key_line, load_model
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.limits import PARAMETERS_B, SPEC_COUNT
from calculator.catalog.prices import Source, canonical_model
from calculator.errors import InputError

__all__ = [
    "DEFAULT_MODELS_DIR",
    "CACHE_ELEMENTS_MAX",
    "CacheLayers",
    "Checkpoint",
    "Experts",
    "MlaSpec",
    "ModelCatalog",
    "ModelFile",
    "ModelSpec",
    "SlidingWindow",
    "SparseAttention",
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


CACHE_ELEMENTS_MAX = 10**15
"""Most elements one layer may cache per token or per sequence: a thousand times a petabyte-sized
state is beyond any GPU cluster, so a larger figure is a broken config, not a model."""

CacheKind = Literal[
    "full_attention", "sliding_attention", "chunked_attention", "compressed_attention", "linear_attention", "mamba"
]


class CacheLayers(_Frozen):
    """Layers that keep the same cache: per-token keys and values, capped at a window, or a fixed state."""

    kind: CacheKind
    """``full_attention`` keeps every token; ``sliding_attention`` the last ``window``; ``chunked_attention``
    (Llama 4) at most one chunk of ``window``; ``compressed_attention`` (DeepSeek-V4) the last ``window``
    tokens plus one compressed entry per ``compress_ratio`` tokens of the whole context, and its compressor's
    fixed ``state_bytes``; ``linear_attention`` (Qwen3-Next gated delta net) and ``mamba`` (Nemotron-H) keep
    only a fixed ``state_bytes``."""
    layers: Count
    """How many layers keep this cache."""
    kv_elements: int = Field(default=0, ge=0, le=CACHE_ELEMENTS_MAX, strict=True)
    """Elements one layer caches per token kept: kv_heads x (key width + value width), or for MLA
    kv_lora_rank + qk_rope_head_dim; 0 for a recurrent layer."""
    window: Count | None = None
    """Most tokens one layer holds at once (the window, or the chunk); absent, the whole context. For
    ``compressed_attention``, the recent tokens kept uncompressed beside the compressed entries."""
    compress_ratio: Count | None = None
    """``compressed_attention`` only: tokens folded into one cached entry (``compress_ratios``; 4 or 128 in
    DeepSeek-V4), each entry ``kv_elements`` wide."""
    state_bytes: int = Field(default=0, ge=0, le=CACHE_ELEMENTS_MAX, strict=True)
    """Bytes one layer holds per sequence whatever its length: the convolution state in the model's
    BF16 and the recurrent state in its own dtype (FP32 where the config says ``mamba_ssm_dtype``),
    whatever the KV cache's dtype, as the engines keep them."""

    @model_validator(mode="after")
    def _shape_fits_kind(self) -> CacheLayers:
        recurrent = self.kind in ("linear_attention", "mamba")
        compressed = self.kind == "compressed_attention"
        if recurrent and (self.kv_elements or self.window is not None or not self.state_bytes):
            raise ValueError(f"{self.kind} layers keep state_bytes only (no kv_elements or window)")
        if not recurrent and not self.kv_elements:
            raise ValueError(f"{self.kind} layers need kv_elements above zero")
        windowed = ("sliding_attention", "chunked_attention", "compressed_attention")
        if (self.kind in windowed) != (self.window is not None):
            raise ValueError("sliding, chunked and compressed attention layers, and only they, have a window")
        if compressed != (self.compress_ratio is not None):
            raise ValueError("compressed_attention layers, and only they, have a compress_ratio")
        if self.state_bytes and not (recurrent or compressed):
            raise ValueError(f"{self.kind} layers keep no fixed state_bytes")
        return self

    def kept_tokens(self, context: int) -> int:
        """Entries one layer holds for ``context`` tokens: all, the window's, or the window's plus one per
        ``compress_ratio`` tokens (only whole groups are compressed)."""
        kept = context if self.window is None else min(self.window, context)
        if self.compress_ratio is not None:
            kept += context // self.compress_ratio
        return kept

    def bytes_per_sequence(self, context: int, kv_dtype_bytes: float) -> float:
        """Bytes these layers hold for one sequence of ``context`` tokens."""
        per_layer = self.kv_elements * self.kept_tokens(context) * kv_dtype_bytes + self.state_bytes
        return self.layers * per_layer


class SparseAttention(_Frozen):
    """DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): an indexer picks ``top_k`` tokens each query
    attends to, and caches one small key per token and layer to pick them with."""

    top_k: Count
    """Tokens each query attends to (``index_topk``; 2,048)."""
    indexer_head_dim: Count
    """Width of the indexer's cached key (``index_head_dim``; 128)."""
    layers: Count
    """Layers with an indexer of their own (every attention layer, but GLM-5.2's layers that reuse the
    previous layer's picks and DeepSeek-V4's uncompressed ones)."""
    tokens_per_key: Count = 1
    """Tokens one cached indexer key stands for: 1, or DeepSeek-V4's 4 (its indexer scores the 4x-compressed
    entries)."""

    @property
    def bytes_per_layer_token(self) -> float:
        """The indexer key is kept in FP8 with one FP32 scale per 128 elements, whatever the KV cache's
        dtype (DeepSeek's reference code, vLLM and SGLang): 128 + 4 = 132 bytes for DeepSeek-V3.2; one key per
        ``tokens_per_key`` tokens."""
        return (self.indexer_head_dim + 4 * -(-self.indexer_head_dim // 128)) / self.tokens_per_key


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


CHECKPOINT_BITS = {"mxfp4": 4, "fp8": 8, "int4": 4}
"""Bits one quantised weight takes, before its scales."""
CHECKPOINT_PRECISION = {"mxfp4": "fp4", "fp8": "fp8", "int4": "int4"}
"""The precision name (``fit --precision``) that runs a checkpoint format natively."""


class Checkpoint(_Frozen):
    """How the published weights are stored, when not plain BF16: which weights are quantised, to
    what, with what scales, and which stay in BF16. Memory at the native precision is what the files
    hold; at any other precision the calculator keeps parameters x bytes."""

    format: Literal["mxfp4", "fp8", "int4"]
    """``mxfp4``: 4-bit E2M1 values with one 8-bit E8M0 scale per 32 (gpt-oss experts); ``fp8``: E4M3
    values, block or channel scales (DeepSeek-V3: 128 x 128 blocks, FP32 scales); ``int4``: 4-bit
    integers in groups (GPTQ/AWQ, usually 128 per FP16 scale)."""
    group_size: Count
    """Weights sharing one scale: 32 for MXFP4, 128 x 128 = 16384 for DeepSeek's FP8 blocks, the group
    size of an INT4 checkpoint (128)."""
    scale_bytes: float = Field(ge=0, le=8, allow_inf_nan=False)
    """Bytes of each scale (and zero point, for INT4 with zeros): 1 for E8M0, 4 for FP32, 2 for FP16."""
    high_precision_params_b: float = Field(ge=0, allow_inf_nan=False, strict=True)
    """Parameters, in billions, the checkpoint keeps in BF16 (embeddings, lm_head, norms, router, and
    for gpt-oss the attention): every other parameter is in ``format``."""
    source: Source
    notes: str | None = None

    @property
    def precision(self) -> str:
        """The ``--precision`` that runs this checkpoint as published (``fp4`` for MXFP4)."""
        return CHECKPOINT_PRECISION[self.format]

    def weight_bytes(self, params_total_b: float) -> float:
        """Bytes the checkpoint's weights take: the quantised share at its bits plus one scale per
        group, the rest at 2 bytes."""
        quantised = max(params_total_b - self.high_precision_params_b, 0.0) * 1e9
        per_weight = CHECKPOINT_BITS[self.format] / 8 + self.scale_bytes / self.group_size
        return quantised * per_weight + self.high_precision_params_b * 1e9 * 2


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
    cache_layers: tuple[CacheLayers, ...] | None = None
    """The cache layer by layer type, for models the fields above cannot describe (chunked attention,
    linear-attention or Mamba hybrids, sliding layers shaped unlike the full ones); absent, every
    layer caches ``kv_heads`` x ``head_dim`` keys and values (or the ``mla`` latent), ``sliding_window``
    layers capped at the window. Layers not listed keep no cache (Nemotron-H's MLP-only layers)."""
    sparse_attention: SparseAttention | None = None
    """DeepSeek Sparse Attention; its indexer keys are cached beside the attention's."""
    default_context: Count
    """The context length the publisher advertises for ordinary use (Qwen3: 32,768 native)."""
    max_context: Count
    """The longest context the model supports, with the publisher's documented RoPE scaling (Qwen3 with
    YaRN: 131,072); ``max_position_embeddings`` in most configs."""
    attention_params_b: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    """Parameters of the attention layers in billions (projections, a sparse-attention indexer): each GPU
    keeps all of them under data-parallel attention; absent, the fit splits them like the rest and says so."""
    vocab_size: Count | None = None
    """Tokens in the vocabulary (``vocab_size``): vLLM's start-up warms the sampler over a full batch of
    logits, so its memory overhead grows with it; absent, the fit assumes Llama 3's 128,256 and says so."""
    vision_params_b: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    """Parameters of the vision tower (encoder, adapter and projector into the language model) in billions,
    beside ``params_total_b``: resident on the GPUs with the language model, so counted in the weights, but
    not read per generated token. Absent for a text-only model. Kept in BF16 whatever the language model's
    precision, as the published FP8 and INT4 checkpoints of multimodal models keep it."""
    audio_params_b: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    """Parameters of the audio tower (encoder and projector) in billions, beside ``params_total_b``; as
    ``vision_params_b``."""
    checkpoint: Checkpoint | None = None
    """How the published weights are stored when not BF16 (MXFP4 experts, FP8 with BF16 embeddings and
    head, INT4 groups); absent, the weights ship in BF16."""
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
        if self.cache_layers is not None:
            if self.sliding_window is not None:
                raise ValueError("give sliding-window layers in cache_layers or sliding_window, not both")
            listed = sum(group.layers for group in self.cache_layers)
            if not self.cache_layers or listed > self.layers:
                raise ValueError(f"cache_layers list {listed} layers; the model has {self.layers}")
        if self.sparse_attention is not None and self.sparse_attention.layers > self.layers:
            raise ValueError(f"sparse_attention.layers exceeds the model's layers ({self.layers})")
        if self.default_context > self.max_context:
            raise ValueError(f"default_context ({self.default_context}) exceeds max_context ({self.max_context})")
        if self.attention_params_b is not None and self.attention_params_b >= self.params_total_b:
            raise ValueError("attention_params_b must be below params_total_b")
        if self.checkpoint is not None and self.checkpoint.high_precision_params_b >= self.params_total_b:
            raise ValueError("checkpoint.high_precision_params_b must be below params_total_b")
        expert_params_b = self.experts.expert_params_b if self.experts is not None else None
        if expert_params_b is not None and expert_params_b >= self.params_total_b:
            raise ValueError(
                f"experts.expert_params_b ({expert_params_b}) must be below "
                f"params_total_b ({self.params_total_b}): attention and embeddings are not experts"
            )
        return self

    @property
    def tower_params_b(self) -> float:
        """Vision and audio tower parameters in billions (0 for a text-only model): resident, not read per token."""
        return (self.vision_params_b or 0.0) + (self.audio_params_b or 0.0)

    # --- KV cache ---------------------------------------------------------------------------

    def kv_bytes_per_layer_token(self, kv_dtype_bytes: float = 2.0) -> float:
        """Bytes one layer caches for one token: 2 x kv_heads x head_dim (keys and values), or for
        MLA the latent plus the rotary key, kv_lora_rank + qk_rope_head_dim; times the element size."""
        _check_dtype_bytes(kv_dtype_bytes)
        if self.mla is not None:
            return (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim) * kv_dtype_bytes
        return 2 * self.kv_heads * self.head_dim * kv_dtype_bytes

    @property
    def cache_groups(self) -> tuple[CacheLayers, ...]:
        """The cache layer type by layer type: ``cache_layers`` when given, else read from the
        attention fields (every layer alike, ``sliding_window`` layers capped at the window)."""
        if self.cache_layers is not None:
            return self.cache_layers
        if self.mla is not None:
            elements = self.mla.kv_lora_rank + self.mla.qk_rope_head_dim
        else:
            elements = 2 * self.kv_heads * self.head_dim
        window = self.sliding_window
        full = self.layers - (window.layers if window else 0)
        groups = [CacheLayers(kind="full_attention", layers=full, kv_elements=elements)] if full else []
        if window is not None:
            groups.append(
                CacheLayers(kind="sliding_attention", layers=window.layers, kv_elements=elements, window=window.window)
            )
        return tuple(groups)

    def kv_bytes_per_token(self, kv_dtype_bytes: float = 2.0, context: int | None = None) -> float:
        """KV-cache bytes per token of context: BF16/FP16 2, FP8 1.

        Grouped-query or multi-head attention: 2 x layers x kv_heads x head_dim x bytes. Latent
        attention (DeepSeek): layers x (kv_lora_rank + qk_rope_head_dim) x bytes. Layers that keep
        fewer tokens (sliding window, chunk) or a fixed state (linear attention, Mamba) count what
        they keep, so for a sequence of ``context`` tokens this is :meth:`kv_bytes_per_sequence` /
        ``context``; with ``context`` None every attention layer counts as full (the most a token can
        cost) and states are left out. A sparse-attention indexer's keys are added.
        """
        if context is None:
            _check_dtype_bytes(kv_dtype_bytes)
            per_token = sum(g.layers * g.kv_elements for g in self.cache_groups) * kv_dtype_bytes
            return per_token + self._indexer_bytes_per_token
        _check_context(context)
        return self.kv_bytes_per_sequence(context, kv_dtype_bytes) / context

    def kv_bytes_per_sequence(self, context: int, kv_dtype_bytes: float = 2.0) -> float:
        """KV-cache bytes one sequence of ``context`` tokens holds: each layer type what it keeps."""
        _check_context(context)
        _check_dtype_bytes(kv_dtype_bytes)
        held = sum(g.bytes_per_sequence(context, kv_dtype_bytes) for g in self.cache_groups)
        return held + self._indexer_bytes_per_token * context

    def kv_bytes_read_per_step(self, kv_dtype_bytes: float, context: float) -> float:
        """Cache bytes one decode step reads for one sequence at a mean context of ``context`` tokens:
        all it holds, except under sparse attention, whose indexer reads every key but whose attention
        reads the cache of only the ``top_k`` tokens it picked (2,048 of a long context)."""
        whole = int(context)
        per_token = self.kv_bytes_per_token(kv_dtype_bytes, whole or None)
        sparse = self.sparse_attention
        if sparse is None or context <= sparse.top_k:
            return context * per_token
        indexer = self._indexer_bytes_per_token
        return context * indexer + sparse.top_k * (per_token - indexer)

    def attended_tokens(self, context: float) -> float:
        """Token-layers one new token attends to at a context of ``context`` tokens: every attention
        layer's context, a window or chunk at most; recurrent layers (linear attention, Mamba) none.
        Sparse attention counts the whole context (its indexer scores every token)."""
        return sum(
            g.layers
            * (
                (context if g.window is None else min(g.window, context))
                + (context / g.compress_ratio if g.compress_ratio else 0)
            )
            for g in self.cache_groups
            if g.kv_elements
        )

    @property
    def _indexer_bytes_per_token(self) -> float:
        sparse = self.sparse_attention
        return sparse.layers * sparse.bytes_per_layer_token if sparse is not None else 0.0

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

    def nearest(self, name: str) -> tuple[ModelSpec, bool] | None:
        """The spec for ``name`` and whether it is the model itself: :meth:`find`, else the spec of the same
        model one point release back (``GLM-5.3`` -> ``glm-5``, ``kimi-k2.5`` -> ``kimi-k2``), whose
        architecture a point release keeps as a rule; the caller names the substitution. Only a trailing
        point version is dropped: ``GLM-5.3-Flash`` (a smaller model) finds nothing. None when nothing matches."""
        found = self.find(name)
        if found is not None:
            return found, True
        base = canonical_model(name)
        major = re.sub(r"(\d+)[.p]\d+$", r"\1", base)
        if major == base:
            return None
        spec = self._by_canonical.get(major)
        return (spec, False) if spec is not None else None

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
    first_seen: dict[str, tuple[str, ItemPlace]] = {}
    problems: list[str] = []
    for path in paths:
        try:
            model_file = load_model_file(path)
        except DataFileError as exc:
            problems.extend(exc.lines)
            continue
        places = ItemPlaces(path, "models")
        for index, model in enumerate(model_file.models):
            where = places[index]
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
    biases the estimate leaves out); ``notes`` says which. The reader lives in
    :mod:`calculator.catalog.hf_config`, whose :func:`~calculator.catalog.hf_config.import_hf_config`
    also returns the warnings (keys it does not understand).
    """
    from calculator.catalog.hf_config import import_hf_config  # it builds on this module's spec

    return import_hf_config(
        config,
        id,
        name,
        params_total_b=params_total_b,
        params_active_b=params_active_b,
        source_name=source_name,
    ).spec
