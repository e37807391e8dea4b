"""A model spec from a Hugging Face ``config.json``: the architecture layer by layer, counted.

Each layer has a mixer (full, sliding-window or chunked attention, linear attention, Mamba, or none)
and an MLP (dense, mixture of experts, both, or none). The pattern comes from whichever key the
family uses: ``hybrid_override_pattern`` (Nemotron-H), ``layer_types`` (gpt-oss, Gemma),
``full_attention_interval`` (Qwen3-Next), ``hybrid_layer_pattern`` (MiMo-V2-Flash),
``attention_chunk_size`` with ``no_rope_layers`` (Llama 4), ``compress_ratios`` (DeepSeek-V4: sliding-window
layers and layers that also keep one compressed entry per 4 or 128 tokens), ``block_configs`` (Nemotron's
architecture-searched layers), ``linear_attn_config`` (Kimi's hybrid linear attention), or the older
sliding-window settings;
the MoE layers from ``first_k_dense_replace``, ``moe_layer_freq``, ``decoder_sparse_step``,
``mlp_only_layers`` or ``interleave_moe_layer_step``. Parameters are counted per layer; the cache
per layer type (:class:`~calculator.catalog.models.CacheLayers`).

A key this module neither reads nor knows to leave sizes alone is named in a warning: a new
architecture shows up as a named key, never as a silently wrong figure. Nothing is downloaded.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from calculator.catalog.datafile import DataFileError, validation_lines
from calculator.catalog.limits import PARAMETERS_B, SPEC_COUNT
from calculator.catalog.models import (
    CACHE_ELEMENTS_MAX,
    CacheLayers,
    Experts,
    MlaSpec,
    ModelSpec,
    SlidingWindow,
    SparseAttention,
)
from calculator.catalog.prices import Source
from calculator.catalog.textfile import json_words

__all__ = ["UPLOADED", "ImportedModel", "import_hf_config"]

UPLOADED = "uploaded config.json"
"""How an error names a config that did not come from a file."""

_SLIDING_TYPES = ("sliding_attention", "sliding", "local", "local_attention")
_LAYER_TYPES = {
    **dict.fromkeys(_SLIDING_TYPES, "sliding"),
    "full_attention": "full",
    "attention": "full",
    "deepseek_sparse_attention": "full",  # GLM-5.2: latent attention with the indexer
    "global": "full",
    "chunked_attention": "chunked",
    "linear_attention": "linear",
    "mamba": "mamba",
}
"""``layer_types`` entries and the mixer each means."""

_NO_SIZE = frozenset(
    [
        "architectures",
        "auto_map",
        "model_type",
        "transformers_version",
        "torch_dtype",
        "dtype",
        "_name_or_path",
        "use_cache",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "initializer_range",
        "attention_dropout",
        "hidden_dropout",
        "rms_norm_eps",
        "layer_norm_epsilon",
        "layernorm_epsilon",
        "rope_theta",
        "rope_scaling",
        "rope_parameters",
        "partial_rotary_factor",
        "rope_interleave",
        "indexer_rope_interleave",
        "swa_rope_theta",
        "hidden_act",
        "hidden_activation",
        "mamba_hidden_act",
        "output_router_logits",
        "router_aux_loss_coef",
        "aux_loss_alpha",
        "seq_aux",
        "norm_topk_prob",
        "scoring_func",
        "n_group",
        "topk_group",
        "topk_method",
        "routed_scaling_factor",
        "ep_size",
        "pretraining_tp",
        "num_logits_to_keep",
        "use_qk_norm",
        "final_logit_softcapping",
        "attn_logit_softcapping",
        "query_pre_attn_scalar",
        "attention_value_scale",
        "swiglu_limit",
        "initial_context_length",
        "rescale_prenorm_residual",
        "residual_in_fp32",
        "time_step_floor",
        "time_step_limit",
        "time_step_max",
        "time_step_min",
        "chunk_size",
        "use_mamba_kernels",
        "use_bidirectional_attention",
        "add_swa_attention_sink_bias",
        "add_full_attention_sink_bias",
        "qk_head_dim",
        "sliding_window_size",
        "index_n_heads",
        "quantization_config",
        "num_nextn_predict_layers",
        "vision_config",
        "audio_config",
        "text_config",
        "image_token_id",
        "video_token_id",
        "audio_token_id",
        "boi_token_id",
        "eoi_token_id",
        "boa_token_id",
        "eoa_token_id",
        "eoa_token_index",
        "vision_soft_tokens_per_image",
        "max_window_layers",
        "use_sliding_window",
        "mlp_bias",
        "use_bias",
        "mamba_proj_bias",
        "time_step_rank",
        "tie_word_embeddings",
        "is_encoder_decoder",
        "id2label",
        "label2id",
        "problem_type",
        "return_dict",
        "output_attentions",
        "output_hidden_states",
        "torchscript",
        "tie_encoder_decoder",
        "norm_eps",
        "vision_start_token_id",
        "vision_end_token_id",
        "image_token_index",
        "video_token_index",
        "media_placeholder_token_id",
        "video_placeholder",
        "use_unified_vision_chunk",
        "ignore_index",
        "mtp_hybrid_override_pattern",
        "mtp_num_hidden_layers",
        "mtp_use_dedicated_embeddings",
        "mtp_layers_block_type",
        "mtp_transformer_layers",
        "num_mtp_modules",
        "use_mtp",
        "add_cross_attention",
        "bad_words_ids",
        "begin_suppress_tokens",
        "chunk_size_feed_forward",
        "cross_attention_hidden_size",
        "decoder_start_token_id",
        "diversity_penalty",
        "do_sample",
        "early_stopping",
        "encoder_no_repeat_ngram_size",
        "exponential_decay_length_penalty",
        "finetuning_task",
        "forced_bos_token_id",
        "forced_eos_token_id",
        "is_decoder",
        "length_penalty",
        "max_length",
        "min_length",
        "no_repeat_ngram_size",
        "num_beam_groups",
        "num_beams",
        "num_return_sequences",
        "output_scores",
        "prefix",
        "pruned_heads",
        "remove_invalid_values",
        "repetition_penalty",
        "return_dict_in_generate",
        "sep_token_id",
        "suppress_tokens",
        "task_specific_params",
        "temperature",
        "tf_legacy_loss",
        "tokenizer_class",
        "top_k",
        "top_p",
        "typical_p",
        "use_bfloat16",
        "moe_router_scaling_factor",
        "use_moe_router_bias",
        "moe_router_dtype",
        "router_jitter_noise",
        "use_routing_bias",
        "qk_norm_type",
        "rotary_dim",
        "swiglu_alpha",
        "use_gemma_norm",
        "compress_rope_theta",
        "hc_eps",
        "hc_sinkhorn_iters",
        "index_skip_topk_offset",
        "index_topk_freq",
        "index_topk_pattern",
        "index_share_for_mtp_iteration",
        "activation_situ_beta",
        "activation_situ_linear_beta",
        "moe_renormalize",
        "moe_router_activation_func",
        "num_expert_group",
        "use_grouped_topk",
        "mla_use_nope",
        "image_placeholder",
    ]
)
"""Keys that do not change a parameter count or the cache (or that the notes speak for)."""

_NEUTRAL = {
    "num_kv_shared_layers": 0,
    "hidden_size_per_layer_input": 0,
    "use_double_wide_mlp": False,
    "qkv_bias": False,
}
"""Keys understood only at the value that leaves the architecture plain; any other value is warned."""
_NEUTRAL_EFFECT = {
    "num_kv_shared_layers": "layers reusing another layer's keys and values cache nothing: the KV figure is too high",
    "hidden_size_per_layer_input": "the per-layer input embeddings are not counted, so the parameter count is too low",
    "use_double_wide_mlp": "the wider MLPs are counted at the plain width, so the parameter count is too low",
    "qkv_bias": "the query, key and value biases are not counted, so the parameter count is slightly too low",
}
"""Which way each of those keys moves the figures when it is away from its plain value."""


@dataclasses.dataclass(frozen=True)
class ImportedModel:
    spec: ModelSpec
    warnings: tuple[str, ...]
    """Keys the importer did not understand, one sentence each."""
    embedding_params_b: float = 0.0
    """The input embedding table a mixture of experts' active count leaves out (Meta's and Mistral's
    cards count it in; OpenAI's and Z.ai's do not): add it to compare with a card that does. 0 for a
    dense model or tied embeddings (the table is the output head, counted)."""


class _Config:
    """A parsed config.json and where it came from, so that every problem names the file and key."""

    def __init__(self, data: Mapping[str, Any], name: str, text: str | None) -> None:
        self.name = name
        self.text = text
        text_config = data.get("text_config")
        # Multimodal configs (Llama 4, Gemma, Qwen-VL) keep the language model under text_config.
        if "num_hidden_layers" not in data and isinstance(text_config, Mapping):
            data = {**data, **text_config}
        self.data = data
        self.read: set[str] = set()
        self.warnings: list[str] = []
        """What the reader had to assume, besides the keys it did not read."""

    def error(self, key: str, message: str) -> DataFileError:
        line = ""
        if self.text is not None:
            match = re.search(rf'"{re.escape(key)}"\s*:', self.text)
            if match is not None:
                line = f":{self.text.count(chr(10), 0, match.start()) + 1}"
        return DataFileError([f"{self.name}{line}: {key}: {message}"])

    def get(self, key: str) -> Any:
        self.read.add(key)
        return self.data.get(key)

    def has(self, key: str) -> bool:
        return self.get(key) is not None

    def count(self, key: str, default: int | None = None, minimum: int = 1) -> int:
        """A whole-number value within the spec limits; missing or null is an error unless a default is given."""
        value = self.get(key)
        if value is None:
            if default is not None:
                return default
            raise self.error(key, "required key is missing (is this a Hugging Face config.json of a text model?)")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= SPEC_COUNT.high:
            raise self.error(key, f"expected a whole number from {minimum} to {SPEC_COUNT.high:,}, got {value!r}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def text_value(self, key: str) -> str | None:
        value = self.get(key)
        if value is not None and not isinstance(value, str):
            raise self.error(key, f"expected a string, got {value!r}")
        return value

    def layer_list(self, key: str, layers: int) -> list[Any]:
        value = self.get(key)
        if not isinstance(value, list | str):
            raise self.error(key, f"expected a list with one entry per layer, got {value!r}"[:300])
        if len(value) != layers:
            raise self.error(key, f"lists {len(value)} layers, num_hidden_layers is {layers}")
        return list(value)


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


@dataclasses.dataclass(frozen=True)
class _Attention:
    """One attention layer type's shape: query heads, KV heads, key and value widths."""

    heads: int
    kv_heads: int
    k_dim: int
    v_dim: int


class _Shape:
    """The architecture read from a config, layer by layer: everything a ModelSpec needs but parameter counts."""

    def __init__(self, cfg: _Config) -> None:
        self.layers = cfg.count("num_hidden_layers")
        self.hidden = cfg.count("hidden_size")
        self.heads = cfg.count("num_attention_heads")
        self.max_context = cfg.count("max_position_embeddings")
        self.mla: MlaSpec | None = None
        if cfg.has("kv_lora_rank"):
            self.mla = MlaSpec(kv_lora_rank=cfg.count("kv_lora_rank"), qk_rope_head_dim=cfg.count("qk_rope_head_dim"))
            self.kv_heads = self.heads
            self.head_dim = cfg.count("qk_nope_head_dim", default=0, minimum=0) + self.mla.qk_rope_head_dim
            cfg.get("num_key_value_heads")
            cfg.get("head_dim")  # GLM-5 repeats the rotary width here; MLA reads qk_rope_head_dim
        else:
            self.kv_heads = cfg.count("num_key_value_heads", default=self.heads)
            _check_groups(cfg, "num_key_value_heads", self.heads, self.kv_heads)
            head_key = "head_dim" if cfg.has("head_dim") else "attention_head_dim"
            if cfg.has(head_key):
                self.head_dim = cfg.count(head_key)
            elif self.hidden % self.heads:
                raise cfg.error("head_dim", f"missing, and hidden_size ({self.hidden}) is not a multiple of the heads")
            else:
                self.head_dim = self.hidden // self.heads
        self.full = _Attention(self.heads, self.kv_heads, self.head_dim, cfg.count("v_head_dim", self.head_dim))
        if cfg.has("global_head_dim") or cfg.has("num_global_key_value_heads"):  # Gemma 4's global layers
            global_kv = cfg.count("num_global_key_value_heads", self.kv_heads)
            _check_groups(cfg, "num_global_key_value_heads", self.heads, global_kv)
            width = cfg.count("global_head_dim", self.head_dim)
            self.full = _Attention(self.heads, global_kv, width, width)
        self.k_eq_v = cfg.flag("attention_k_eq_v", default=False)
        self.v4 = cfg.has("compress_ratios")
        """DeepSeek-V4: one entry per token serves as key and value, low-rank query and grouped low-rank output."""
        self.sliding = _Attention(
            cfg.count("swa_num_attention_heads", self.heads),
            cfg.count("swa_num_key_value_heads", self.kv_heads),
            cfg.count("swa_head_dim", self.head_dim),
            cfg.count("swa_v_head_dim", cfg.count("v_head_dim", self.head_dim)),
        )
        _check_groups(cfg, "swa_num_key_value_heads", self.sliding.heads, self.sliding.kv_heads)
        self.window = 0
        self.dense_widths: list[int] | None = None
        """Each layer's dense MLP width, where layers differ (Nemotron's ``block_configs``)."""
        self.extra: list[int] = [0] * self.layers
        """Parameters of a layer beyond its mixer and MLP: a block replaced by one linear map."""
        self.mixers, pattern_mlps = _mixers(cfg, self)
        self.experts: Experts | None = None
        total = next(
            (cfg.count(k, minimum=0) for k in ("num_local_experts", "n_routed_experts", "num_experts") if cfg.has(k)),
            0,
        )
        self.moe = total > 1
        if self.moe:
            active_key = next(
                (k for k in ("num_experts_per_tok", "num_experts_per_token", "top_k_experts") if cfg.has(k)),
                "num_experts_per_tok",
            )
            active = cfg.count(active_key)
            if active > total:
                raise cfg.error(active_key, f"{active} exceeds the {total} routed experts")
            cfg.get("experts_per_token")  # gpt-oss repeats num_experts_per_tok
            self.shared_width = _shared_width(cfg)
            self.experts = Experts(total=total, active=active, shared=1 if self.shared_width else 0)
        elif cfg.get("enable_moe_block") is False:  # Gemma 4 31B: the expert keys describe no layer
            cfg.get("top_k_experts")
            cfg.get("expert_intermediate_size")
        self.mlps = pattern_mlps if pattern_mlps is not None else _mlps(cfg, self.layers, self.moe)
        if self.moe and not any("moe" in m for m in self.mlps):
            raise cfg.error("num_hidden_layers", "the config names experts but no layer uses them")
        self.sparse: SparseAttention | None = None
        self.indexed = [m is not None and (m in ("sliding", "chunked") or m.startswith("full")) for m in self.mixers]
        """Which layers have an indexer of their own (its weights and its cached keys)."""
        tokens_per_key = 1
        if self.v4:  # the indexer scores the 4x-compressed entries, in those layers only
            self.indexed = [m == "compressed4" for m in self.mixers]
            tokens_per_key = 4
        elif cfg.has("indexer_types"):  # GLM-5.2's IndexShare: "shared" layers reuse the last full layer's picks
            kinds = cfg.layer_list("indexer_types", self.layers)
            unknown = sorted({str(k) for k in kinds if k not in ("full", "shared")})
            if unknown:
                raise cfg.error("indexer_types", f"unknown entries {unknown}; known: full, shared")
            self.indexed = [k == "full" and on for k, on in zip(kinds, self.indexed, strict=True)]
        if cfg.has("index_topk") and any(self.indexed):
            self.sparse = SparseAttention(
                top_k=cfg.count("index_topk"),
                indexer_head_dim=cfg.count("index_head_dim"),
                layers=sum(self.indexed),
                tokens_per_key=tokens_per_key,
            )

    def attention(self, mixer: str) -> _Attention:
        if mixer.startswith("full") and mixer != "full":  # full<N>: an architecture-searched layer's KV heads
            return dataclasses.replace(self.full, kv_heads=int(mixer.removeprefix("full")))
        return self.sliding if mixer == "sliding" else self.full

    def kv_elements(self, mixer: str) -> int:
        if self.v4:
            return self.kv_heads * self.head_dim
        if self.mla is not None:
            return self.mla.kv_lora_rank + self.mla.qk_rope_head_dim
        shape = self.attention(mixer)
        return shape.kv_heads * (shape.k_dim + shape.v_dim)


def _check_groups(cfg: _Config, key: str, heads: int, kv_heads: int) -> None:
    if kv_heads > heads or heads % kv_heads:
        raise cfg.error(key, f"{kv_heads} does not divide the {heads} attention heads")


def _mixers(cfg: _Config, shape: _Shape) -> tuple[list[str | None], list[tuple[str, ...]] | None]:
    """Each layer's mixer, and (for Nemotron-H, whose pattern also says it) each layer's MLP."""
    layers = shape.layers
    for key, kind in (("block_configs", list), ("linear_attn_config", Mapping)):
        value = cfg.get(key)
        if value is not None and not isinstance(value, kind):
            what = "a list with one block per layer" if kind is list else "an object naming each layer's attention"
            raise cfg.error(key, f"expected {what}, got {value!r}"[:300])
    if isinstance(cfg.get("block_configs"), list):
        return _searched_blocks(cfg, shape)
    if cfg.has("hybrid_override_pattern"):
        pattern = cfg.layer_list("hybrid_override_pattern", layers)
        meaning = {"M": ("mamba", ()), "*": ("full", ()), "-": (None, ("dense",)), "E": (None, ("moe",))}
        unknown = sorted({c for c in pattern if c not in meaning})
        if unknown:
            raise cfg.error("hybrid_override_pattern", f"unknown layer letters {unknown}; known: M * - E")
        cfg.get("sliding_window")  # Nemotron-H sets it null: no attention layer slides
        return [meaning[c][0] for c in pattern], [meaning[c][1] for c in pattern]
    mixers: list[str | None]
    if isinstance(cfg.get("linear_attn_config"), Mapping):
        mixers = _kimi_linear(cfg, layers)
    elif cfg.has("compress_ratios"):
        mixers = _compressed(cfg, layers)
    elif isinstance(cfg.get("layer_types"), list):
        types = cfg.layer_list("layer_types", layers)
        unknown = sorted({str(t) for t in types if t not in _LAYER_TYPES})
        if unknown:  # the most such a layer could keep: every token
            cfg.warnings.append(
                f"layer_types: {', '.join(unknown)} not understood; counted as full attention, the most a layer can "
                f"cache, so the KV figure may be too high (known: {', '.join(_LAYER_TYPES)})"
            )
        mixers = [_LAYER_TYPES.get(t, "full") if isinstance(t, str) else "full" for t in types]
        cfg.get("full_attention_interval")  # Qwen3.5 states both; layer_types names every layer
    elif cfg.has("full_attention_interval"):
        every = cfg.count("full_attention_interval")
        mixers = ["full" if (i + 1) % every == 0 else "linear" for i in range(layers)]
    elif cfg.has("hybrid_layer_pattern"):
        pattern = cfg.layer_list("hybrid_layer_pattern", layers)
        if any(p not in (0, 1) for p in pattern):
            raise cfg.error("hybrid_layer_pattern", "expected 0 (full attention) or 1 (sliding window) per layer")
        mixers = ["sliding" if p else "full" for p in pattern]
        cfg.get("attention_chunk_size")  # MiMo repeats the window here
    elif cfg.has("attention_chunk_size"):
        mixers = _chunked(cfg, layers)
    else:
        mixers = _legacy_sliding(cfg, layers)
    if "sliding" in mixers or any(m and m.startswith("compressed") for m in mixers):
        shape.window = cfg.count("sliding_window")
        if shape.window >= shape.max_context and shape.sliding == shape.full and not shape.v4:
            mixers = [
                "full" if m == "sliding" else m for m in mixers
            ]  # a window as long as the context changes nothing
    elif "chunked" in mixers:
        shape.window = cfg.count("attention_chunk_size")
    else:
        cfg.get("sliding_window")  # Qwen2/Qwen3 carry a value that is switched off
    return mixers, None


_BLOCK_NEUTRAL: dict[str, dict[str, Any]] = {
    "attention": {"num_sink_tokens": None, "sparsify": None, "unshifted_sink": False, "window_length": None},
    "ffn": {"sparsify": None},
}
"""``block_configs`` settings understood only at the value that leaves a layer plain."""


def _searched_blocks(cfg: _Config, shape: _Shape) -> tuple[list[str | None], list[tuple[str, ...]]]:
    """Nemotron's architecture-searched layers (``block_configs``, DeciLM): each layer's attention is kept with
    ``num_attention_heads / n_heads_in_group`` KV heads, dropped (``no_op``) or replaced by one hidden x hidden
    linear map; its MLP is dropped, replaced likewise, or ``ffn_mult`` wide (2/3 x ffn_mult x hidden, rounded up
    to a multiple of 256, as DeciLM's modelling code computes it)."""
    blocks = cfg.layer_list("block_configs", shape.layers)
    h = shape.hidden
    mixers: list[str | None] = []
    mlps: list[tuple[str, ...]] = []
    widths: list[int] = []
    odd: set[str] = set()
    for index, block in enumerate(blocks):
        attention = block.get("attention") if isinstance(block, Mapping) else None
        ffn = block.get("ffn") if isinstance(block, Mapping) else None
        if not isinstance(attention, Mapping) or not isinstance(ffn, Mapping):
            raise cfg.error("block_configs", f"layer {index}: expected an object with attention and ffn")
        for part, settings in (("attention", attention), ("ffn", ffn)):
            for key, plain in _BLOCK_NEUTRAL[part].items():
                if settings.get(key) not in (plain, None):
                    odd.add(f"{part}.{key}")
        if attention.get("no_op") is True:
            mixers.append(None)
        elif attention.get("replace_with_linear") is True:
            mixers.append(None)
            shape.extra[index] += h * h
        else:
            group = attention.get("n_heads_in_group")
            if isinstance(group, bool) or not isinstance(group, int) or group < 1 or shape.heads % group:
                raise cfg.error("block_configs", f"layer {index}: n_heads_in_group {group!r} does not divide the heads")
            mixers.append(f"full{shape.heads // group}")
        if ffn.get("no_op") is True:
            mlps.append(())
            widths.append(0)
        elif ffn.get("replace_with_linear") is True:
            mlps.append(())
            widths.append(0)
            shape.extra[index] += h * h
        else:
            mult = ffn.get("ffn_mult")
            if isinstance(mult, bool) or not isinstance(mult, int | float) or not 0 < mult <= 1000:
                raise cfg.error("block_configs", f"layer {index}: ffn_mult {mult!r} is not a positive number")
            width = int(2 * mult * h / 3)
            widths.append(width + (-width % 256))
            mlps.append(("dense",))
    if odd:
        cfg.warnings.append(
            f"block_configs: {', '.join(sorted(odd))} not modelled: counted as plain attention and MLP, so the "
            "cache and the parameter count may be too high"
        )
    attending = [int(m.removeprefix("full")) for m in mixers if m]
    if attending:
        shape.kv_heads = Counter(attending).most_common(1)[0][0]
        if len(set(attending)) == 1:
            mixers = ["full" if m else None for m in mixers]
            shape.full = dataclasses.replace(shape.full, kv_heads=shape.kv_heads)
    shape.dense_widths = widths
    cfg.get("num_key_value_heads")  # null: each block says its own
    cfg.get("intermediate_size")  # null: each block says its own
    return mixers, mlps


def _kimi_linear(cfg: _Config, layers: int) -> list[str | None]:
    """Kimi's hybrid (``linear_attn_config``): Kimi Delta Attention in ``kda_layers``, latent attention in
    ``full_attn_layers``, both numbered from 1."""
    settings = cfg.get("linear_attn_config")
    assert isinstance(settings, Mapping)
    kinds: dict[int, str] = {}
    for key, mixer in (("kda_layers", "kda"), ("full_attn_layers", "full")):
        listed = settings.get(key)
        if not isinstance(listed, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= layers for i in listed
        ):
            raise cfg.error("linear_attn_config", f"{key}: expected layer numbers from 1 to {layers}")
        for i in listed:
            if i in kinds:
                raise cfg.error("linear_attn_config", f"layer {i} is in both kda_layers and full_attn_layers")
            kinds[i] = mixer
    missing = [i for i in range(1, layers + 1) if i not in kinds]
    if missing:
        raise cfg.error("linear_attn_config", f"layers {missing[:5]} are in neither kda_layers nor full_attn_layers")
    return [kinds[i + 1] for i in range(layers)]


def _kda_params(cfg: _Config, h: int) -> tuple[int, int]:
    """A Kimi Delta Attention layer: parameters, and the bytes of state one layer keeps per sequence.

    Query, key and value projections with a short convolution each, the output gate (full rank with
    ``use_full_rank_gate``, else through the head width), the per-channel forget gate through the head width,
    a per-head beta, the gated output norm and projection; the state is one head_dim x head_dim matrix per head
    in FP32 and the convolutions' last kernel - 1 inputs in BF16 (as vLLM and SGLang keep them)."""
    settings = cfg.get("linear_attn_config")
    assert isinstance(settings, Mapping)

    def whole(key: str, default: int | None = None) -> int:
        value = settings.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= SPEC_COUNT.high:
            raise cfg.error("linear_attn_config", f"{key}: expected a whole number, got {value!r}")
        return value

    heads, width, kernel = whole("num_heads"), whole("head_dim"), whole("short_conv_kernel_size", 4)
    inner = heads * width
    gate = h * inner if settings.get("use_full_rank_gate") is True else h * width + width * inner
    params = 3 * h * inner + 3 * inner * kernel  # q, k, v and their convolutions
    params += gate + h * width + width * inner + h * heads  # output gate, forget gate (low rank), beta
    params += heads + inner + width + inner * h  # A_log, dt_bias, output norm, output projection
    state = heads * width * width * 4 + (kernel - 1) * 3 * inner * _MODEL_BYTES
    return params, state


def _compressed(cfg: _Config, layers: int) -> list[str | None]:
    """DeepSeek-V4: ratio 0 is a sliding-window layer; a ratio r also keeps one compressed entry per r tokens.
    The list may run past the layers: the entries after them belong to the multi-token-prediction layers."""
    ratios = cfg.get("compress_ratios")
    if not isinstance(ratios, list) or len(ratios) < layers:
        raise cfg.error("compress_ratios", f"expected at least one ratio per layer ({layers}), got {ratios!r}"[:300])
    if not all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= SPEC_COUNT.high for r in ratios):
        raise cfg.error("compress_ratios", "expected whole numbers: 0 (no compression) or tokens per entry")
    cfg.get("sliding_window")
    return ["sliding" if r == 0 else f"compressed{r}" for r in ratios[:layers]]


def _chunked(cfg: _Config, layers: int) -> list[str | None]:
    """Llama 4: layers with rotary positions attend within a chunk; every ``no_rope_layer_interval``-th
    (``no_rope_layers`` 0) attends to the whole context."""
    if cfg.get("no_rope_layers"):  # transformers reads an empty list as the default interval
        flags = cfg.layer_list("no_rope_layers", layers)
        return ["chunked" if f else "full" for f in flags]
    every = cfg.count("no_rope_layer_interval", default=4)
    return ["chunked" if (i + 1) % every else "full" for i in range(layers)]


def _legacy_sliding(cfg: _Config, layers: int) -> list[str | None]:
    """Sliding-window layers from the settings older families use."""
    if cfg.get("use_sliding_window") is False or not cfg.has("sliding_window"):
        count = 0
    elif cfg.get("use_sliding_window") is True:
        # Qwen2: layers from max_window_layers on use the window.
        count = layers - min(cfg.count("max_window_layers", default=0, minimum=0), layers)
    elif cfg.has("sliding_window_pattern"):
        count = layers - layers // cfg.count("sliding_window_pattern")  # Gemma 3: every Nth layer is global
    elif cfg.text_value("model_type") == "gemma2":
        count = (layers + 1) // 2  # Gemma 2 alternates, starting with a sliding layer
    else:
        count = layers  # Mistral 7B v0.1: every layer
    return ["sliding" if i < count else "full" for i in range(layers)]


def _shared_width(cfg: _Config) -> int:
    """Width of the shared expert every token uses; 0 when there is none (Qwen3-Coder-480B sets 0)."""
    widths = ("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size", "share_expert_dim")
    for key in (*widths, "shared_intermediate_size"):  # the last is MiniMax's
        if cfg.has(key):
            cfg.get("n_shared_experts")  # Nemotron 3 states 1 beside the width
            return cfg.count(key, minimum=0)
    key = "num_shared_experts" if cfg.has("num_shared_experts") else "n_shared_experts"  # Kimi-K3 spells it out
    shared = cfg.count(key, default=0, minimum=0)
    if cfg.text_value("model_type") in ("llama4", "llama4_text"):
        shared = 1  # Llama 4's MoE layers always add one shared expert of the experts' width
    return shared * _expert_width(cfg)


def _expert_width(cfg: _Config) -> int:
    return cfg.count("moe_intermediate_size", default=0, minimum=0) or cfg.count("intermediate_size")


def _mlps(cfg: _Config, layers: int, moe: bool) -> list[tuple[str, ...]]:
    """Each layer's MLP: dense, mixture of experts, or both (Gemma 4's ``enable_moe_block``)."""
    if not moe:
        cfg.get("mlp_only_layers")  # without experts every layer is an MLP layer
        return [("dense",)] * layers
    if isinstance(cfg.get("mlp_layer_types"), list):  # GLM-5.2 names each layer's MLP
        kinds = cfg.layer_list("mlp_layer_types", layers)
        unknown = sorted({str(k) for k in kinds if k not in ("dense", "sparse")})
        if unknown:
            raise cfg.error("mlp_layer_types", f"unknown entries {unknown}; known: dense, sparse")
        for key in ("first_k_dense_replace", "moe_layer_freq"):
            cfg.get(key)  # the list says it layer by layer
        return [("moe",) if k == "sparse" else ("dense",) for k in kinds]
    first_dense = cfg.count("first_k_dense_replace", default=0, minimum=0)
    mlp_only = cfg.get("mlp_only_layers") or []
    if not isinstance(mlp_only, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in mlp_only):
        raise cfg.error("mlp_only_layers", "expected a list of layer numbers")
    freq = cfg.get("moe_layer_freq")
    listed = cfg.get("moe_layers")  # Llama 4 may list its MoE layers by number
    if isinstance(listed, list):
        if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in listed):
            raise cfg.error("moe_layers", f"expected layer numbers from 0 to {layers - 1}")
        on = [i in listed for i in range(layers)]
        cfg.get("interleave_moe_layer_step")  # the list overrides it, as in transformers
    elif isinstance(freq, list):
        flags = cfg.layer_list("moe_layer_freq", layers)
        on = [bool(f) and i >= first_dense and i not in mlp_only for i, f in enumerate(flags)]
    else:
        every = cfg.count("moe_layer_freq", default=1)
        step = cfg.count("decoder_sparse_step", default=1)  # Qwen-MoE: layers where (i + 1) % step == 0
        interleave = cfg.count("interleave_moe_layer_step", default=1)  # Llama 4: every 2nd layer in Maverick
        on = [
            i >= first_dense and i % every == 0 and (i + 1) % step == 0 and (i + 1) % interleave == 0
            for i in range(layers)
        ]
        on = [flag and i not in mlp_only for i, flag in enumerate(on)]
    both = cfg.flag("enable_moe_block", default=False)  # Gemma 4: experts beside the dense MLP
    return [(("dense", "moe") if both else ("moe",)) if flag else ("dense",) for flag in on]


# --- parameter counts -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Counts:
    total_b: float
    active_b: float
    experts_b: float | None
    left_out_b: float = 0.0


def _compressor_params(h: int, ratio: int, width: int) -> tuple[int, int]:
    """DeepSeek-V4's compressor of ``width``-wide entries (overlapping windows at ratio 4): its parameters, and the
    bytes of its FP32 running state per sequence (kv_state and score_state, DeepSeek's reference code)."""
    overlap = 2 if ratio == 4 else 1
    params = ratio * overlap * width + 2 * h * overlap * width + width
    return params, 2 * (overlap * ratio) * (overlap * width) * 4


def _v4_attention(cfg: _Config, shape: _Shape, mixer: str) -> tuple[int, int]:
    """A DeepSeek-V4 attention layer: low-rank query (``q_lora_rank``), one entry per token as key and value,
    the output through ``o_groups`` low-rank groups (``o_lora_rank``), per-head sinks; a compressed layer adds its
    compressor, a 4x one the indexer. Parameters, and the compressors' state per sequence in bytes."""
    h, heads, width = shape.hidden, shape.heads, shape.head_dim
    if cfg.flag("attention_bias", default=False):
        cfg.warnings.append("attention_bias: true is not modelled: the parameter count is a few thousand too low")
    q_lora, o_lora = cfg.count("q_lora_rank"), cfg.count("o_lora_rank")
    groups = cfg.count("o_groups")
    if (heads * width) % groups:
        raise cfg.error("o_groups", f"{groups} does not divide the {heads} x {width} attention output")
    cfg.count("qk_rope_head_dim")  # the rotary part is inside head_dim
    params = h * q_lora + q_lora + q_lora * heads * width  # query: down, norm, up
    params += h * shape.kv_heads * width + width  # the key-value entry and its norm
    params += heads * width * o_lora + groups * o_lora * h + heads  # grouped low-rank output, sinks
    ratio = int(mixer.removeprefix("compressed")) if mixer.startswith("compressed") else 0
    state = 0
    if ratio:
        extra, state = _compressor_params(h, ratio, width)
        params += extra
    if ratio == 4 and cfg.has("index_topk"):
        index_heads, index_width = cfg.count("index_n_heads"), cfg.count("index_head_dim")
        extra, index_state = _compressor_params(h, 4, index_width)
        params += q_lora * index_heads * index_width + h * index_heads + extra
        state += index_state
    return params, state


def _attention_params(cfg: _Config, shape: _Shape, mixer: str, indexed: bool = True) -> int:
    h = shape.hidden
    if shape.v4:
        return _v4_attention(cfg, shape, mixer)[0]
    if shape.mla is not None:
        nope = cfg.count("qk_nope_head_dim", minimum=0)
        rope = shape.mla.qk_rope_head_dim
        v_dim = cfg.count("v_head_dim")
        q_lora = cfg.count("q_lora_rank", default=0, minimum=0)
        kv_lora = shape.mla.kv_lora_rank
        q = (h * q_lora + q_lora + q_lora * shape.heads * (nope + rope)) if q_lora else h * shape.heads * (nope + rope)
        kv = h * (kv_lora + rope) + kv_lora + kv_lora * shape.heads * (nope + v_dim)
        params = q + kv + shape.heads * v_dim * h
        if cfg.flag("mla_use_output_gate", default=False):  # Kimi-K3: a sigmoid gate on the attention output
            params += h * shape.heads * v_dim
        cfg.flag("attention_bias", default=False)  # DeepSeek's MLA has none; the flag stays false in its configs
        if shape.sparse is not None and indexed:  # the indexer: its queries from the query latent, one key, weights
            width = shape.sparse.indexer_head_dim
            heads = cfg.count("index_n_heads")
            params += (q_lora or h) * heads * width + h * width + h * heads
        return params
    a = shape.attention(mixer)
    q_width, k_width = a.heads * a.k_dim, a.kv_heads * a.k_dim
    v_width = 0 if shape.k_eq_v and mixer == "full" else a.kv_heads * a.v_dim
    # Qwen3-Next and Qwen3.5 gate the attention output from a second query-sized projection
    gated = cfg.flag("attn_output_gate", default=cfg.text_value("model_type") == "qwen3_next")
    params = h * (q_width * (2 if gated else 1) + k_width + v_width) + a.heads * a.v_dim * h
    if cfg.flag("attention_bias", default=False):
        params += q_width + k_width + v_width + h
    return params


def _linear_attention_params(cfg: _Config, h: int) -> tuple[int, int]:
    """Qwen3-Next's gated delta net: parameters, and the bytes of state one layer keeps per sequence."""
    key_heads, value_heads = cfg.count("linear_num_key_heads"), cfg.count("linear_num_value_heads")
    k_dim, v_dim = cfg.count("linear_key_head_dim"), cfg.count("linear_value_head_dim")
    kernel = cfg.count("linear_conv_kernel_dim", default=4)
    keys, values = key_heads * k_dim, value_heads * v_dim
    conv = 2 * keys + values
    params = h * (2 * keys + 2 * values) + h * 2 * value_heads + conv * kernel + 2 * value_heads + v_dim + values * h
    return params, (kernel - 1) * conv * _MODEL_BYTES + value_heads * k_dim * v_dim * _ssm_bytes(cfg)


def _mamba_params(cfg: _Config, h: int) -> tuple[int, int]:
    """A Mamba-2 mixer (Nemotron-H): parameters, and the bytes of convolution and SSM state per sequence."""
    heads, head_dim = cfg.count("mamba_num_heads"), cfg.count("mamba_head_dim")
    groups, state_size = cfg.count("n_groups", default=1), cfg.count("ssm_state_size")
    kernel = cfg.count("conv_kernel", default=4)
    cfg.get("expand")  # mamba_num_heads x mamba_head_dim give the inner width directly
    inner = heads * head_dim
    conv = inner + 2 * groups * state_size
    params = h * (2 * inner + 2 * groups * state_size + heads) + conv * kernel + 3 * heads + inner + inner * h
    if cfg.flag("use_conv_bias", default=True):
        params += conv
    return params, (kernel - 1) * conv * _MODEL_BYTES + heads * head_dim * state_size * _ssm_bytes(cfg)


_MODEL_BYTES = 2
"""Bytes per element of a convolution state: the model's BF16."""
_DTYPE_BYTES = {"float32": 4, "fp32": 4, "bfloat16": 2, "float16": 2, "bf16": 2, "fp16": 2}


def _ssm_bytes(cfg: _Config) -> int:
    """Bytes per element of a recurrent state: the model's BF16 unless the config names another dtype
    (Qwen3.5's ``mamba_ssm_dtype``, Nemotron 3's ``mamba_ssm_cache_dtype``: float32)."""
    for key in ("mamba_ssm_cache_dtype", "mamba_ssm_dtype"):
        name = cfg.text_value(key)
        if name is not None and name != "auto":
            if name not in _DTYPE_BYTES:
                raise cfg.error(key, f"unknown dtype {name!r}; known: {', '.join(_DTYPE_BYTES)}")
            return _DTYPE_BYTES[name]
    return _MODEL_BYTES


def _mlp_matrices(cfg: _Config) -> int:
    """Three matrices for a gated MLP (SwiGLU, GeGLU); two for Nemotron's squared ReLU."""
    act = cfg.text_value("mlp_hidden_act") or cfg.text_value("hidden_act") or cfg.text_value("hidden_activation")
    return 2 if act == "relu2" else 3


def _count(cfg: _Config, shape: _Shape) -> tuple[_Counts, dict[str, int]]:
    """Parameter counts layer by layer, and each recurrent mixer's state per sequence.

    The active count of a mixture of experts leaves out the input embedding table (a lookup, no
    arithmetic), as OpenAI, Meta and DeepSeek count; a dense model's active count is its total.
    """
    h = shape.hidden
    vocab = cfg.count("vocab_size")
    tied = cfg.flag("tie_word_embeddings", default=False)
    table = vocab * h
    matrices = _mlp_matrices(cfg)
    states: dict[str, int] = {}
    mixer_params: dict[str | None, int] = {None: 0}
    for mixer in set(shape.mixers):
        if shape.v4 and mixer is not None:
            mixer_params[mixer], state = _v4_attention(cfg, shape, mixer)
            if state:
                states[mixer] = state
        elif mixer is not None and (mixer in ("sliding", "chunked") or mixer.startswith("full")):
            mixer_params[mixer] = _attention_params(cfg, shape, mixer)
        elif mixer == "kda":
            mixer_params[mixer], states[mixer] = _kda_params(cfg, h)
        elif mixer == "linear":
            mixer_params[mixer], states[mixer] = _linear_attention_params(cfg, h)
        elif mixer == "mamba":
            mixer_params[mixer], states[mixer] = _mamba_params(cfg, h)
    dense_width = cfg.count("intermediate_size_mlp", default=0) or cfg.count("intermediate_size", default=0)
    total = active = table * (1 if tied else 2) + h
    routed = 0
    unindexed = 0
    if shape.sparse is not None and shape.mla is not None and not all(shape.indexed):
        unindexed = _attention_params(cfg, shape, "full") - _attention_params(cfg, shape, "full", indexed=False)
    hyper = 0
    if cfg.has("hc_mult"):  # DeepSeek-V4's hyper-connections: FP32 mixing weights before attention and the MLP
        copies = cfg.count("hc_mult")
        mix = (2 + copies) * copies
        hyper = 2 * (mix * copies * h + mix + 3)
    hashed = cfg.count("num_hash_layers", default=0, minimum=0)  # routed by token id: a vocab x top-k table
    # Kimi-K3's LatentMoE: the routed experts work in a narrower latent, reached through one projection down
    # and one back up (and a norm), which every token passes through; the router and shared experts stay wide
    latent = cfg.count("routed_expert_hidden_size", default=h)
    into_latent = 0 if latent == h else 2 * h * latent + (latent if cfg.flag("latent_moe_use_norm", False) else 0)
    for index, (mixer, mlp) in enumerate(zip(shape.mixers, shape.mlps, strict=True)):
        layer = mixer_params[mixer] + 2 * h + hyper + shape.extra[index]
        if not shape.indexed[index]:
            layer -= unindexed
        if shape.dense_widths is not None:
            dense_width = shape.dense_widths[index]
        if index < hashed and shape.experts is not None:
            layer += vocab * shape.experts.active
        if "dense" in mlp:
            if not dense_width:
                raise cfg.error("intermediate_size", "required key is missing (a layer has a dense MLP)")
            layer += matrices * h * dense_width
        total += layer
        active += layer
        if "moe" in mlp and shape.experts is not None:
            expert = matrices * latent * _expert_width(cfg)
            shared = matrices * h * shape.shared_width + h * shape.experts.total + into_latent
            total += shape.experts.total * expert + shared
            active += shape.experts.active * expert + shared
            routed += shape.experts.total * expert
    if shape.experts is None:
        return _Counts(total / 1e9, total / 1e9, None), states
    if not tied:
        active -= table
    return _Counts(total / 1e9, active / 1e9, routed / 1e9, 0.0 if tied else table / 1e9), states


# --- the spec ---------------------------------------------------------------------------------------


def _cache(
    cfg: _Config, shape: _Shape, states: dict[str, int]
) -> tuple[tuple[CacheLayers, ...] | None, SlidingWindow | None]:
    """The cache by layer type, as the plain fields when they can say it (every layer attends, alike)."""
    kinds = {"full": "full_attention", "sliding": "sliding_attention", "chunked": "chunked_attention"}
    kinds.update({m: "full_attention" for m in shape.mixers if m and m.startswith("full")})
    tally = Counter(m for m in shape.mixers if m is not None)
    for mixer in tally:
        if mixer.startswith("compressed"):
            continue
        elements = states[mixer] if mixer in states else shape.kv_elements(mixer)  # state in bytes: stricter
        if elements > CACHE_ELEMENTS_MAX:
            key = {"linear": "linear_num_value_heads", "kda": "linear_attn_config", "mamba": "mamba_num_heads"}.get(
                mixer, "num_key_value_heads"
            )
            raise cfg.error(
                key,
                f"with the head widths, one {mixer} layer would cache {elements:.3g} elements, "
                f"over the {CACHE_ELEMENTS_MAX:.0e} any GPU could hold",
            )
    groups: list[CacheLayers] = []
    for mixer, layers in sorted(tally.items()):
        if mixer.startswith("compressed"):
            groups.append(
                CacheLayers(
                    kind="compressed_attention",
                    layers=layers,
                    kv_elements=shape.kv_elements(mixer),
                    window=shape.window,
                    compress_ratio=int(mixer.removeprefix("compressed")),
                    state_bytes=states.get(mixer, 0),
                )
            )
        elif mixer in kinds:
            window = shape.window if mixer in ("sliding", "chunked") else None
            groups.append(
                CacheLayers(kind=kinds[mixer], layers=layers, kv_elements=shape.kv_elements(mixer), window=window)
            )
        else:
            kind = "linear_attention" if mixer in ("linear", "kda") else "mamba"
            groups.append(CacheLayers(kind=kind, layers=layers, state_bytes=states[mixer]))
    plain = 2 * shape.kv_heads * shape.head_dim if shape.mla is None else shape.kv_elements("full")
    simple = (
        not shape.v4
        and set(tally) <= {"full", "sliding"}
        and sum(tally.values()) == shape.layers
        and all(g.kv_elements == plain for g in groups)
    )
    if not simple:
        return tuple(groups), None
    sliding = tally.get("sliding", 0)
    return None, SlidingWindow(window=shape.window, layers=sliding) if sliding else None


def _unknown_keys(cfg: _Config) -> list[str]:
    warnings = []
    for key in sorted(cfg.data):
        if key in cfg.read or key in _NO_SIZE:
            continue
        if key in _NEUTRAL:
            if cfg.data[key] in (_NEUTRAL[key], None):
                continue
            warnings.append(
                f"{key} = {cfg.data[key]!r} is not modelled: parameters and cache assume {_NEUTRAL[key]!r}; "
                f"{_NEUTRAL_EFFECT[key]}"
            )
        else:
            warnings.append(f"{key}: not understood by the importer and not modelled; {_direction(key)}")
    return warnings


_SHRINKING = re.compile(r"lora|rank|compress|shar|sparse|prun|window|ratio|group|skip|no_op|freq|reuse|latent")
"""Words of keys that make a layer cheaper than a plain one (low-rank, compressed, shared, skipped parts)."""


def _direction(key: str) -> str:
    """Which way leaving a key out moves the figures, as far as its name says."""
    if _SHRINKING.search(key.lower()):
        return (
            "it reads like a saving (low rank, compression, sharing or skipping), so the parameter count and "
            "KV figure are likely too high"
        )
    return "if it adds weights or cache the figures are too low, if it removes some they are too high"


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.strip().lower().split("/")[-1])
    slug = re.sub(r"^[^a-z0-9]+", "", slug)[:80].rstrip("-")
    return slug or "imported-model"


def _default_name(cfg: _Config, config: Mapping[str, Any] | str | Path, source_name: str | None) -> str:
    named = cfg.data.get("_name_or_path")
    if isinstance(named, str) and named.strip() and not named.startswith(("/", ".")):
        return named.strip().rstrip("/").split("/")[-1]
    uploaded = Path(source_name).stem if source_name else ""
    if uploaded and uploaded != "config":  # an upload named after its model (Llama-4-Maverick.json)
        return uploaded
    if isinstance(config, Path | str) and not (isinstance(config, str) and config.lstrip().startswith("{")):
        path = Path(config)
        if path.is_dir():
            return path.name
        if path.name == "config.json" and path.parent.name:
            return path.parent.name
        return path.stem
    model_type = cfg.data.get("model_type")
    return str(model_type) if isinstance(model_type, str) and model_type else "imported-model"


def import_hf_config(
    config: Mapping[str, Any] | str | Path,
    id: str | None = None,
    name: str | None = None,
    *,
    params_total_b: float | None = None,
    params_active_b: float | None = None,
    source_name: str | None = None,
) -> ImportedModel:
    """A :class:`ModelSpec` from a Hugging Face ``config.json``, with warnings naming what it could not read.

    ``config`` is a path (to the file, or to a model directory holding it), the file's text (an
    upload; text starting with ``{``), or the parsed mapping. Errors name the file, or
    ``uploaded config.json`` (``source_name`` overrides the name), and the key.

    Parameter counts are computed from the architecture unless ``params_total_b`` and
    ``params_active_b`` are given (the publisher's figures); ``notes`` says which.
    """
    cfg, source = _read_config(config, source_name)
    shape = _Shape(cfg)
    notes: list[str] = [f"Imported from {cfg.name}."]
    warnings: list[str] = []
    if not cfg.get("hidden_size_per_layer_input"):
        cfg.get("vocab_size_per_layer_input")  # Gemma's per-layer inputs are off, so their table is absent
    counts, states = _count(cfg, shape)
    if counts.total_b > PARAMETERS_B.high:
        raise cfg.error(
            "hidden_size",
            f"with vocab_size, intermediate_size, the experts and num_hidden_layers this gives {counts.total_b:,.0f} "
            f"billion parameters, over the {PARAMETERS_B.high:,} billion any model could have",
        )
    if params_total_b is None or params_active_b is None:
        computed = [what for what, given in (("total", params_total_b), ("active", params_active_b)) if given is None]
        notes.append(
            f"Parameter counts ({' and '.join(computed)}) computed from the config layer by layer: embeddings, "
            "attention or recurrent mixers, MLP or experts, norms; small biases and multi-token-prediction "
            "layers are not counted, so published figures may differ by a few percent. For a mixture of "
            "experts the active count leaves out the input embedding table (a lookup)."
        )
    else:
        notes.append("Parameter counts given by the user.")
    total_b = params_total_b if params_total_b is not None else counts.total_b
    active_b = params_active_b if params_active_b is not None else min(counts.active_b, total_b)
    experts = shape.experts
    if experts is not None and counts.experts_b is not None and counts.experts_b < total_b:
        experts = experts.model_copy(update={"expert_params_b": round(counts.experts_b, 3)})
    if cfg.has("num_nextn_predict_layers") and cfg.count("num_nextn_predict_layers", minimum=0):
        notes.append("The multi-token-prediction layers (num_nextn_predict_layers) are not counted.")
    if cfg.has("quantization_config"):
        notes.append("The checkpoint is quantised (quantization_config); parameter counts are counts, not bytes.")
    if cfg.has("attn_res_block_size") and cfg.count("attn_res_block_size", minimum=0):
        warnings.append(
            f"attn_res_block_size = {cfg.count('attn_res_block_size', minimum=0)}: attention residuals across blocks "
            "of layers are not modelled; any weights they carry are not counted, so the parameter count may be "
            "slightly too low (the cache is unchanged)"
        )
    if cfg.text_value("expert_dtype"):
        notes.append(f"The routed experts are stored in {cfg.text_value('expert_dtype')} (expert_dtype).")
    if shape.v4:
        notes.append(
            "Compressed attention (compress_ratios): every layer keeps its last sliding_window tokens, and a layer "
            "of ratio r one entry per r tokens besides, plus its compressor's FP32 running state; the 4x layers' "
            "indexer keeps one key per compressed entry. Hyper-connections (hc_mult) and hash routing "
            "(num_hash_layers) are counted."
        )
    if isinstance(cfg.data.get("vision_config"), Mapping):
        notes.append("The vision encoder (vision_config) is not counted: these are the language model's figures.")
    if shape.k_eq_v:
        notes.append("Full-attention layers share keys and values (attention_k_eq_v); the cache counts both.")
    warnings.extend([*cfg.warnings, *_unknown_keys(cfg)])
    cache_layers, sliding = _cache(cfg, shape, states)
    raw_name = _default_name(cfg, config, source_name)
    fields: dict[str, Any] = {
        "id": id if id is not None else _slug(raw_name),
        "name": name if name is not None else raw_name,
        "params_total_b": params_total_b if params_total_b is not None else round(total_b, 3),
        "params_active_b": params_active_b if params_active_b is not None else round(active_b, 3),
        "layers": shape.layers,
        "hidden_size": shape.hidden,
        "attention_heads": shape.heads,
        "kv_heads": shape.kv_heads,
        "head_dim": shape.head_dim,
        "mla": shape.mla,
        "sliding_window": sliding,
        "cache_layers": cache_layers,
        "sparse_attention": shape.sparse,
        "experts": experts,
        "default_context": shape.max_context,
        "max_context": shape.max_context,
        "source": source,
        "notes": " ".join(notes),
    }
    try:
        spec = ModelSpec.model_validate(fields)
    except ValidationError as exc:
        raise DataFileError(validation_lines(exc, cfg.name)) from exc
    left_out = counts.left_out_b if params_active_b is None else 0.0
    return ImportedModel(spec, tuple(warnings), round(left_out, 3))
