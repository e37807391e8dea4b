"""Model specs: bundled files load, KV sizes match hand-computed figures, configs import, broken files fail clearly."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculator.catalog.datafile import DataFileError
from calculator.catalog.models import (
    DEFAULT_MODELS_DIR,
    ModelCatalog,
    ModelSpec,
    from_hf_config,
    load_model_file,
    load_model_specs,
)
from calculator.catalog.prices import Source
from calculator.errors import InputError

from .clock import TODAY

# Model ids that scenarios, measurements and benchmarks name; renaming one breaks them.
REQUIRED_IDS = {
    "llama-3.1-8b",
    "llama-3.2-3b",
    "llama-3.3-70b",
    "qwen3-32b",
    "mixtral-8x7b",
    "deepseek-v3",
    "glm-4.6",
    "glm-5",
    "gpt-oss-120b",
}

# --- configs as Hugging Face publishes them (the keys that matter) ------------------------------

LLAMA_31_8B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "rope_scaling": {"factor": 8.0, "rope_type": "llama3", "original_max_position_embeddings": 8192},
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}

MIXTRAL_8X7B: dict[str, Any] = {
    "architectures": ["MixtralForCausalLM"],
    "model_type": "mixtral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
    "sliding_window": None,
    "tie_word_embeddings": False,
}

DEEPSEEK_V3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "moe_layer_freq": 1,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "vocab_size": 129280,
    "max_position_embeddings": 163840,
    "tie_word_embeddings": False,
}

GPT_OSS_120B: dict[str, Any] = {
    "architectures": ["GptOssForCausalLM"],
    "model_type": "gpt_oss",
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "num_hidden_layers": 36,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "num_local_experts": 128,
    "num_experts_per_tok": 4,
    "sliding_window": 128,
    "layer_types": ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(36)],
    "attention_bias": True,
    "vocab_size": 201088,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "quantization_config": {"quant_method": "mxfp4"},
}

MISTRAL_7B_V01: dict[str, Any] = {
    "model_type": "mistral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "sliding_window": 4096,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
}

QWEN3_32B: dict[str, Any] = {
    "model_type": "qwen3",
    "hidden_size": 5120,
    "intermediate_size": 25600,
    "num_hidden_layers": 64,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "sliding_window": None,
    "use_sliding_window": False,
    "max_window_layers": 64,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": False,
}

VALID = """\
# yaml-language-server: $schema=.schema.json
schema_version: 1
family: {family}
models:
  - id: {model_id}
    name: Test Model
    params_total_b: 8.03
    params_active_b: 8.03
    layers: 32
    hidden_size: 4096
    attention_heads: 32
    kv_heads: 8
    head_dim: 128
    default_context: 131072
    max_context: 131072
    source:
      url: https://example.com/config.json
      read: 2026-11-29
"""


def valid_text(family: str = "testfamily", model_id: str = "test-model") -> str:
    return VALID.format(family=family, model_id=model_id)


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, marker: str) -> int:
    """1-based number of the first line containing ``marker``."""
    return next(i for i, line in enumerate(text.splitlines(), start=1) if marker in line)


def load_error(directory: Path) -> str:
    with pytest.raises(DataFileError) as info:
        load_model_specs(directory)
    return str(info.value)


def import_error(config: Any) -> str:
    with pytest.raises(DataFileError) as info:
        from_hf_config(config)
    return str(info.value)


@pytest.fixture(scope="module")
def catalog() -> ModelCatalog:
    return load_model_specs()


def spec(**changes: object) -> ModelSpec:
    fields: dict[str, object] = {
        "id": "x",
        "name": "X",
        "params_total_b": 8.0,
        "params_active_b": 8.0,
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "default_context": 8192,
        "max_context": 131072,
        "source": Source(url="https://example.com", read=dt.date(2026, 11, 29)),
    }
    fields.update(changes)
    return ModelSpec.model_validate(fields)


# --- the bundled files ------------------------------------------------------------------------


def test_every_bundled_file_loads_and_declares_the_schema() -> None:
    paths = sorted(DEFAULT_MODELS_DIR.glob("*.yaml"))
    assert paths, "no model spec files bundled"
    for path in paths:
        model_file = load_model_file(path)
        assert model_file.family == path.stem
        assert path.read_text(encoding="utf-8").splitlines()[0] == "# yaml-language-server: $schema=.schema.json"


def test_catalog_holds_every_model_the_project_names(catalog: ModelCatalog) -> None:
    assert set(catalog.ids) >= REQUIRED_IDS


def test_every_bundled_model_cites_a_dated_config_source(catalog: ModelCatalog) -> None:
    for model in catalog.models:
        assert model.source.url is not None and model.source.url.startswith("https://huggingface.co/"), model.id
        assert model.source.url.endswith("config.json"), model.id
        assert model.source.read <= dt.date(2026, 11, 30), model.id  # not after the day the specs were last read


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("llama-3.1-8b", 131_072),  # 2 x 32 layers x 8 KV heads x 128 x 2 bytes
        ("llama-3.2-3b", 114_688),  # 2 x 28 x 8 x 128 x 2
        ("llama-3.3-70b", 327_680),  # 2 x 80 x 8 x 128 x 2
        ("qwen3-32b", 262_144),  # 2 x 64 x 8 x 128 x 2
        ("mixtral-8x7b", 131_072),  # 2 x 32 x 8 x 128 x 2
        ("deepseek-v3", 70_272),  # MLA: 61 x (512 + 64) x 2
        ("glm-4.6", 376_832),  # 2 x 92 x 8 x 128 x 2
        ("glm-5", 100_152),  # MLA: 78 x (512 + 64) x 2 = 89,856, plus the FP8 indexer key 78 x (128 + 4) = 10,296
    ],
)
def test_kv_bytes_per_token_in_bf16_match_the_hand_computed_figures(
    catalog: ModelCatalog, model_id: str, expected: int
) -> None:
    model = catalog.get(model_id)
    assert model.kv_bytes_per_token() == expected
    assert model.kv_bytes_per_token(context=100_000) == expected  # no sliding window: context does not matter


def test_fp8_kv_cache_is_half_of_bf16(catalog: ModelCatalog) -> None:
    model = catalog.get("llama-3.3-70b")
    assert model.kv_bytes_per_token(kv_dtype_bytes=1.0) == 163_840


def test_gpt_oss_long_context_costs_the_full_layers_plus_a_capped_sliding_share(catalog: ModelCatalog) -> None:
    model = catalog.get("gpt-oss-120b")
    full_layers = 18 * 2 * 8 * 64 * 2  # 36,864 bytes per token
    sliding_per_sequence = 18 * 2 * 8 * 64 * 2 * 128  # 18 layers holding at most 128 tokens
    context = 131_072
    assert model.kv_bytes_per_token(context=context) == pytest.approx(full_layers + sliding_per_sequence / context)
    assert model.kv_bytes_per_token(context=context) == pytest.approx(36_864, rel=0.002)
    assert model.kv_bytes_per_sequence(context) == pytest.approx(full_layers * context + sliding_per_sequence)
    # Without a context, or within the window, every layer counts in full.
    assert model.kv_bytes_per_token() == 73_728
    assert model.kv_bytes_per_token(context=100) == 73_728


def test_bundled_parameter_counts_match_the_published_figures(catalog: ModelCatalog) -> None:
    published = {
        "llama-3.1-8b": (8.03, 8.03),
        "llama-3.3-70b": (70.6, 70.6),
        "qwen3-32b": (32.8, 32.8),
        "mixtral-8x7b": (46.7, 12.9),
        "deepseek-v3": (671, 37),
        "gpt-oss-120b": (116.8, 5.1),
    }
    for model_id, (total, active) in published.items():
        model = catalog.get(model_id)
        assert (model.params_total_b, model.params_active_b) == (total, active), model_id


def test_a_mixture_of_experts_reads_its_shared_part_for_every_token(catalog: ModelCatalog) -> None:
    deepseek = catalog.get("deepseek-v3")
    assert deepseek.is_moe
    assert deepseek.shared_params_b == pytest.approx(671 - 653.9)
    dense = catalog.get("llama-3.3-70b")
    assert not dense.is_moe
    assert dense.shared_params_b == dense.params_total_b
    assert dense.routed_expert_params_b == 0


def test_the_experts_share_is_worked_out_when_the_file_does_not_give_it() -> None:
    # Mixtral: 46.7 total, 12.9 active, 2 of 8 experts: X = (46.7 - 12.9) / (1 - 2/8) = 45.07
    model = spec(params_total_b=46.7, params_active_b=12.9, experts={"total": 8, "active": 2})
    assert model.routed_expert_params_b == pytest.approx(45.07, abs=0.01)
    assert model.shared_params_b == pytest.approx(1.63, abs=0.01)


# --- lookup -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        ("llama-3.3-70b", "llama-3.3-70b"),
        ("LLAMA-3.3-70B", "llama-3.3-70b"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"),
        ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "llama-3.3-70b"),
        ("llama-3.3-70b-versatile", "llama-3.3-70b"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("accounts/fireworks/models/gpt-oss-120b", "gpt-oss-120b"),
        ("zai-org/GLM-4.6", "glm-4.6"),
        ("qwen/qwen3-32b", "qwen3-32b"),
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
    ],
)
def test_models_are_found_by_id_alias_or_provider_name(catalog: ModelCatalog, name: str, model_id: str) -> None:
    assert catalog.get(name).id == model_id
    assert catalog.find(name) is catalog.get(name)
    assert name in catalog


def test_an_unknown_model_names_the_known_ids(catalog: ModelCatalog) -> None:
    assert catalog.find("no-such-model") is None
    assert catalog.find("  ") is None
    with pytest.raises(InputError) as info:
        catalog.get("no-such-model")
    assert info.value.field == "model"
    assert "llama-3.3-70b" in str(info.value) and "no-such-model" in str(info.value)


def test_two_models_may_not_claim_the_same_alias() -> None:
    a = spec(id="a", aliases=("shared-name",))
    b = spec(id="b", aliases=("Shared-Name",))
    with pytest.raises(ValueError, match="shared-name"):
        ModelCatalog(models=(a, b))


# --- from a Hugging Face config.json ------------------------------------------------------------


def test_llama_config_gives_8_billion_parameters_and_its_kv_size() -> None:
    model = from_hf_config(LLAMA_31_8B, id="llama-3.1-8b", name="Llama 3.1 8B")
    assert model.params_total_b == pytest.approx(8.03, rel=0.02)
    assert model.params_active_b == model.params_total_b
    assert (model.layers, model.kv_heads, model.head_dim) == (32, 8, 128)  # head_dim = 4096 / 32
    assert model.kv_bytes_per_token() == 131_072
    assert model.experts is None and model.sliding_window is None
    assert model.max_context == 131_072
    assert model.notes is not None and "computed from the config" in model.notes
    assert model.source.document == "uploaded config.json"


def test_mixtral_config_gives_total_and_active_parameters() -> None:
    model = from_hf_config(MIXTRAL_8X7B)
    assert model.params_total_b == pytest.approx(46.7, rel=0.03)
    assert model.params_active_b == pytest.approx(12.9, rel=0.03)
    assert model.experts is not None
    assert (model.experts.total, model.experts.active, model.experts.shared) == (8, 2, 0)
    assert model.experts.expert_params_b == pytest.approx(45.1, rel=0.01)
    assert model.sliding_window is None


def test_deepseek_config_reads_the_latent_attention_and_shared_expert() -> None:
    model = from_hf_config(DEEPSEEK_V3)
    assert model.mla is not None and (model.mla.kv_lora_rank, model.mla.qk_rope_head_dim) == (512, 64)
    assert model.kv_heads == model.attention_heads == 128
    assert model.kv_bytes_per_token() == 70_272
    assert model.experts is not None and model.experts.shared == 1
    assert model.params_total_b == pytest.approx(671, rel=0.02)
    assert model.params_active_b == pytest.approx(37, rel=0.03)


def test_gpt_oss_config_reads_the_alternating_sliding_layers() -> None:
    model = from_hf_config(GPT_OSS_120B)
    assert model.sliding_window is not None
    assert (model.sliding_window.window, model.sliding_window.layers) == (128, 18)
    assert model.params_total_b == pytest.approx(116.8, rel=0.02)
    assert model.kv_bytes_per_token(context=131_072) == pytest.approx(36_900, rel=0.001)
    assert model.notes is not None and "quantization_config" in model.notes


def test_mistral_v01_window_applies_to_every_layer() -> None:
    model = from_hf_config(MISTRAL_7B_V01)
    assert model.sliding_window is not None
    assert (model.sliding_window.window, model.sliding_window.layers) == (4096, 32)
    # Beyond the window, a sequence holds 4,096 tokens however long it is.
    assert model.kv_bytes_per_sequence(32_768) == model.kv_bytes_per_sequence(4096)


def test_a_sliding_window_that_is_switched_off_is_ignored() -> None:
    model = from_hf_config({**QWEN3_32B, "sliding_window": 131072})
    assert model.sliding_window is None
    assert model.kv_bytes_per_token() == 262_144
    assert model.params_total_b == pytest.approx(32.8, rel=0.02)


def test_caller_given_parameter_counts_win_over_the_estimate() -> None:
    model = from_hf_config(MIXTRAL_8X7B, params_total_b=46.7, params_active_b=12.9)
    assert (model.params_total_b, model.params_active_b) == (46.7, 12.9)
    assert model.notes is not None and "given by the user" in model.notes


def test_config_is_read_from_a_path_or_a_model_directory(tmp_path: Path) -> None:
    directory = tmp_path / "Llama-3.1-8B-Instruct"
    directory.mkdir()
    path = directory / "config.json"
    path.write_text(json.dumps(LLAMA_31_8B, indent=2), encoding="utf-8")
    from_file = from_hf_config(path)
    assert from_file.id == "llama-3.1-8b-instruct"
    assert from_file.name == "Llama-3.1-8B-Instruct"
    assert from_file.source.document == str(path)
    assert from_file.source.read == TODAY
    assert from_hf_config(directory).kv_bytes_per_token() == 131_072
    assert from_hf_config(str(path)).layers == 32


def test_uploaded_text_is_accepted_and_named_as_an_upload() -> None:
    text = json.dumps({**LLAMA_31_8B, "_name_or_path": "meta-llama/Llama-3.1-8B"})
    model = from_hf_config(text)
    assert model.id == "llama-3.1-8b"
    assert model.source.document == "uploaded config.json"


def test_multimodal_config_uses_its_text_config() -> None:
    model = from_hf_config({"model_type": "llava", "text_config": LLAMA_31_8B, "vision_config": {"hidden_size": 1024}})
    assert model.layers == 32 and model.kv_bytes_per_token() == 131_072


@pytest.mark.parametrize("key", ["num_hidden_layers", "hidden_size", "num_attention_heads", "max_position_embeddings"])
def test_an_incomplete_config_names_the_missing_key(key: str) -> None:
    config = {k: v for k, v in LLAMA_31_8B.items() if k != key}
    message = import_error(config)
    assert message.startswith("uploaded config.json")
    assert key in message and "missing" in message


def test_a_missing_key_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in LLAMA_31_8B.items() if k != "vocab_size"}), encoding="utf-8")
    message = import_error(path)
    assert str(path) in message and "vocab_size" in message


def test_an_expert_model_without_its_top_k_names_the_key() -> None:
    message = import_error({k: v for k, v in MIXTRAL_8X7B.items() if k != "num_experts_per_tok"})
    assert "num_experts_per_tok" in message


def test_a_wrong_value_names_the_key_and_its_line(tmp_path: Path) -> None:
    text = json.dumps({**LLAMA_31_8B, "num_key_value_heads": "eight"}, indent=2)
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    message = import_error(path)
    assert f"{path}:{line_of(text, 'num_key_value_heads')}: num_key_value_heads:" in message
    assert "'eight'" in message


def test_layer_types_must_cover_every_layer() -> None:
    message = import_error({**GPT_OSS_120B, "layer_types": ["full_attention"] * 35})
    assert "layer_types" in message and "36" in message


def test_sliding_layers_without_a_window_name_the_key() -> None:
    message = import_error({**GPT_OSS_120B, "sliding_window": None})
    assert "sliding_window" in message


def test_broken_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{\n  "hidden_size": 4096,\n  "num_hidden_layers": \n}\n', encoding="utf-8")
    message = import_error(path)
    assert message.startswith(f"{path}:4: not valid JSON")
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    assert "one JSON object" in import_error(listed)


def test_an_unreadable_path_is_named(tmp_path: Path) -> None:
    message = import_error(tmp_path / "absent" / "config.json")
    assert "absent" in message and "cannot read file" in message


# --- the spec's own checks --------------------------------------------------------------------


def test_active_parameters_cannot_exceed_the_total() -> None:
    with pytest.raises(ValueError, match="params_active_b"):
        spec(params_active_b=9.0)


def test_kv_heads_must_divide_the_attention_heads() -> None:
    with pytest.raises(ValueError, match="kv_heads"):
        spec(kv_heads=12)


def test_a_latent_attention_model_sets_kv_heads_to_the_attention_heads() -> None:
    with pytest.raises(ValueError, match="MLA"):
        spec(mla={"kv_lora_rank": 512, "qk_rope_head_dim": 64})


def test_more_sliding_layers_than_layers_is_refused() -> None:
    with pytest.raises(ValueError, match="sliding_window.layers"):
        spec(sliding_window={"window": 128, "layers": 33})


def test_context_and_element_size_must_be_positive() -> None:
    model = spec()
    with pytest.raises(InputError) as info:
        model.kv_bytes_per_sequence(0)
    assert info.value.field == "context"
    with pytest.raises(InputError) as info:
        model.kv_bytes_per_token(kv_dtype_bytes=0)
    assert info.value.field == "kv_dtype_bytes"


@given(
    context=st.integers(min_value=1, max_value=2_000_000),
    window=st.integers(min_value=1, max_value=200_000),
    sliding=st.integers(min_value=0, max_value=32),
)
def test_a_sequence_never_holds_more_than_every_layer_in_full(context: int, window: int, sliding: int) -> None:
    model = spec(sliding_window={"window": window, "layers": sliding} if sliding else None)
    per_sequence = model.kv_bytes_per_sequence(context)
    assert per_sequence <= model.kv_bytes_per_token() * context
    assert per_sequence == pytest.approx(model.kv_bytes_per_token(context=context) * context)
    assert per_sequence >= (32 - sliding) * model.kv_bytes_per_token() / 32 * context
    if context <= window:
        assert per_sequence == model.kv_bytes_per_token() * context


# --- broken files -----------------------------------------------------------------------------


def test_a_missing_field_names_file_line_and_field(tmp_path: Path) -> None:
    text = valid_text().replace("    kv_heads: 8\n", "")
    path = write(tmp_path, "testfamily", text)
    message = load_error(tmp_path)
    assert f"{path}:{line_of(text, '- id: test-model')}: models.0[test-model].kv_heads: required field is missing" in (
        message
    )


def test_an_unknown_field_names_file_line_and_field(tmp_path: Path) -> None:
    text = valid_text().replace("    kv_heads: 8\n", "    kv_heads: 8\n    kv_head: 8\n")
    path = write(tmp_path, "testfamily", text)
    message = load_error(tmp_path)
    assert f"{path}:{line_of(text, 'kv_head: 8')}: models.0[test-model].kv_head: unknown field" in message


def test_a_quoted_number_is_refused(tmp_path: Path) -> None:
    text = valid_text().replace("layers: 32", 'layers: "32"')
    path = write(tmp_path, "testfamily", text)
    assert f"{path}:{line_of(text, 'layers:')}: models.0[test-model].layers:" in load_error(tmp_path)


def test_an_id_in_two_files_names_both(tmp_path: Path) -> None:
    first = write(tmp_path, "alpha", valid_text(family="alpha", model_id="same-model"))
    text = valid_text(family="beta", model_id="same-model")
    second = write(tmp_path, "beta", text)
    message = load_error(tmp_path)
    assert f"{second}:{line_of(text, '- id:')}: models.0[same-model].id: duplicate model id 'same-model'" in message
    assert f"{first}:{line_of(text, '- id:')}" in message


def test_an_id_twice_in_one_file_is_refused(tmp_path: Path) -> None:
    text = valid_text()
    entry = text[text.index("  - id:") :]
    path = write(tmp_path, "testfamily", text + entry)
    message = load_error(tmp_path)
    assert str(path) in message and "share the id 'test-model'" in message


def test_family_must_match_the_file_name(tmp_path: Path) -> None:
    text = valid_text(family="other")
    path = write(tmp_path, "testfamily", text)
    assert f"{path}:{line_of(text, 'family:')}: family: 'other' must match" in load_error(tmp_path)


def test_every_broken_file_is_reported_at_once(tmp_path: Path) -> None:
    write(tmp_path, "alpha", valid_text(family="alpha", model_id="a").replace("    head_dim: 128\n", ""))
    write(tmp_path, "beta", valid_text(family="beta", model_id="b").replace("layers: 32", "layers: 0"))
    message = load_error(tmp_path)
    assert "alpha.yaml" in message and "beta.yaml" in message


def test_an_empty_directory_is_an_error(tmp_path: Path) -> None:
    assert "no model spec files" in load_error(tmp_path)
