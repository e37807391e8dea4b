"""`models import CONFIG.json`: real config.json files against their model cards and hand-computed KV sizes.

Every config in tests/fixtures/model_configs/ is a published Hugging Face config.json (sources in
tests/fixtures/README.md). Parameter counts are checked against the figure each model card prints;
KV bytes per token are worked out by hand below from the config's own numbers, per layer type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.catalog.datafile import DataFileError
from calculator.catalog.hf_config import import_hf_config
from calculator.catalog.models import DEFAULT_MODELS_DIR, from_hf_config
from calculator.cli.parser import main

CONFIGS = Path(__file__).parent / "fixtures" / "model_configs"
BF16 = 2

# (file, card total B, card active B, whether the card's active figure counts the input embedding
# table, where the card's figures were read). Publishers differ on the embedding: Meta's and Qwen's
# figures include it, OpenAI's, DeepSeek's and Z.ai's do not; the importer's active count leaves it
# out and ``params_active_with_embeddings_b`` puts it back.
CARDS: list[tuple[str, float, float, bool, str]] = [
    ("meta-llama--Meta-Llama-3.1-8B", 8.03, 8.03, True, "huggingface.co/meta-llama/Llama-3.1-8B: 8.03B params"),
    (
        "meta-llama--Llama-4-Maverick-17B-128E-Instruct",
        400,
        17,
        True,
        "Meta's Llama 4 card: 17B active, 400B total (quoted at hub.continue.dev and sg.langmart.ai)",
    ),
    ("meta-llama--Llama-4-Scout-17B-16E-Instruct", 109, 17, True, "Meta's Llama 4 card: 17B active, 109B total"),
    ("Qwen--Qwen3-235B-A22B", 235, 22, True, "huggingface.co/Qwen/Qwen3-235B-A22B: 235B in total, 22B activated"),
    (
        "Qwen--Qwen3-Coder-480B-A35B-Instruct",
        480,
        35,
        True,
        "huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct: 480B total, 35B activated",
    ),
    ("deepseek-ai--DeepSeek-V3", 671, 37, False, "DeepSeek-V3 report (arXiv 2412.19437): 671B total, 37B activated"),
    ("deepseek-ai--DeepSeek-V3.2", 671, 37, False, "DeepSeek-V3.2: V3's 671B/37B plus the indexer (MTP excluded)"),
    ("zai-org--GLM-5", 744, 40, False, "GLM-5 technical report table (glennklockwood.com/garden/GLM-5): 744B, 40B"),
    ("moonshotai--Kimi-K2-Instruct", 1000, 32, False, "huggingface.co/moonshotai/Kimi-K2-Instruct: 1T total, 32B"),
    ("nvidia--Nemotron-H-56B-Base-8K", 56, 56, True, "huggingface.co/nvidia/Nemotron-H-56B-Base-8K: 56B parameters"),
    ("openai--gpt-oss-120b", 116.83, 5.13, False, "OpenAI gpt-oss model card: 116.83B total, 5.13B active"),
    ("XiaomiMiMo--MiMo-V2-Flash", 309, 15, False, "MiMo-V2-Flash report (arXiv 2601.02780): 309B total, 15B active"),
    (
        "google--gemma-4-26B-A4B",
        25.2,
        3.8,
        True,
        "Gemma 4 26B A4B card (via OpenExplorer/gemma-4-26B-A4B-it): 25.2B, 3.8B",
    ),
]


def imported(name: str, **kwargs: Any) -> Any:
    return import_hf_config(CONFIGS / f"{name}.json", **kwargs)


def config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONFIGS / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize(("name", "total", "active", "with_embeddings", "where"), CARDS, ids=[c[0] for c in CARDS])
def test_parameter_counts_are_within_3_percent_of_the_model_card(
    name: str, total: float, active: float, with_embeddings: bool, where: str
) -> None:
    result = imported(name)
    assert result.spec.params_total_b == pytest.approx(total, rel=0.03), where
    counted = result.spec.params_active_b + (result.embedding_params_b if with_embeddings else 0.0)
    assert counted == pytest.approx(active, rel=0.03), where
    assert result.warnings == (), "every key of a real config is read or known to leave sizes alone"


def test_qwen3_next_total_matches_its_card_and_its_active_count_is_in_the_a3b_class() -> None:
    # The card (huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct; NVIDIA's NeMo docs quote it) says
    # "80B total, 3B activated": the 3B is the name's rounded class. Counted: 10 routed + 1 shared
    # expert of 3 x 2048 x 512 in 48 layers (1.66B), 36 delta-net and 12 gated-attention mixers (1.6B),
    # the output head (0.31B): 3.56B, 19% above the rounded figure.
    result = imported("Qwen--Qwen3-Next-80B-A3B-Thinking")
    assert result.spec.params_total_b == pytest.approx(80, rel=0.03)
    assert 3.0 <= result.spec.params_active_b < 4.0


# --- KV bytes per token, by hand -------------------------------------------------------------------


def test_llama_31_8b_dense_gqa_caches_2_x_32_layers_x_8_heads_x_128() -> None:
    spec = imported("meta-llama--Meta-Llama-3.1-8B").spec
    assert spec.kv_bytes_per_token(BF16, 8192) == 2 * 32 * 8 * 128 * BF16 == 131_072


def test_llama_4_chunked_layers_hold_one_chunk_and_every_fourth_layer_the_whole_context() -> None:
    spec = imported("meta-llama--Llama-4-Maverick-17B-128E-Instruct").spec
    per_layer = 2 * 8 * 128 * BF16  # 8 KV heads of 128
    # 48 layers: 12 global (NoPE, every 4th), 36 chunked at 8,192 tokens
    assert spec.kv_bytes_per_token(BF16, 131_072) == 12 * per_layer + 36 * per_layer * 8192 / 131_072 == 58_368
    # within one chunk every layer holds every token
    assert spec.kv_bytes_per_token(BF16, 8192) == 48 * per_layer
    assert spec.experts is not None and (spec.experts.total, spec.experts.active, spec.experts.shared) == (128, 1, 1)


def test_qwen3_235b_caches_94_layers_of_4_heads() -> None:
    spec = imported("Qwen--Qwen3-235B-A22B").spec
    assert spec.kv_bytes_per_token(BF16, 32_768) == 2 * 94 * 4 * 128 * BF16 == 192_512


def test_deepseek_v32_caches_the_latent_and_an_fp8_indexer_key() -> None:
    spec = imported("deepseek-ai--DeepSeek-V3.2").spec
    latent = (512 + 64) * BF16
    indexer = 128 + 4  # FP8 key of 128 and one FP32 scale
    assert spec.kv_bytes_per_token(BF16, 65_536) == 61 * (latent + indexer) == 78_324
    assert spec.sparse_attention is not None and spec.sparse_attention.top_k == 2048
    # V3 has no indexer: the latent only
    assert imported("deepseek-ai--DeepSeek-V3").spec.kv_bytes_per_token(BF16, 65_536) == 61 * latent


def test_glm5_caches_78_latents_and_indexer_keys() -> None:
    spec = imported("zai-org--GLM-5").spec
    assert spec.kv_bytes_per_token(BF16, 65_536) == 78 * ((512 + 64) * BF16 + 132) == 100_152


def test_qwen3_next_linear_layers_keep_a_fixed_state_and_full_layers_every_token() -> None:
    spec = imported("Qwen--Qwen3-Next-80B-A3B-Thinking").spec
    full = 12 * 2 * 2 * 256 * BF16  # every 4th of 48 layers: 2 KV heads of 256
    keys, values = 16 * 128, 32 * 128
    state = (3 * (2 * keys + values) + 32 * 128 * 128) * BF16  # conv state (kernel 4 - 1) + delta-net state
    context = 131_072
    assert spec.kv_bytes_per_token(BF16, context) == pytest.approx(full + 36 * state / context, rel=1e-12)
    assert state == 548_864 * BF16


def test_nemotron_h_mamba_layers_keep_a_fixed_state_and_mlp_layers_nothing() -> None:
    spec = imported("nvidia--Nemotron-H-56B-Base-8K").spec
    # pattern: 54 Mamba-2 (M), 10 attention (*), 54 MLP-only (-) layers
    inner, groups, state_size = 256 * 64, 8, 256
    state = 3 * (inner + 2 * groups * state_size) + 256 * 64 * state_size
    attention = 10 * 2 * 8 * 128 * BF16
    assert spec.kv_bytes_per_token(BF16, 8192) == attention + 54 * state * BF16 / 8192
    assert sum(g.layers for g in spec.cache_groups) == 64


def test_gpt_oss_sliding_layers_hold_128_tokens() -> None:
    spec = imported("openai--gpt-oss-120b").spec
    per_layer = 2 * 8 * 64 * BF16
    assert spec.kv_bytes_per_token(BF16, 131_072) == 18 * per_layer + 18 * per_layer * 128 / 131_072 == 36_900


def test_mimo_sliding_layers_have_their_own_heads_and_values_narrower_than_keys() -> None:
    spec = imported("XiaomiMiMo--MiMo-V2-Flash").spec
    full = 9 * 4 * (192 + 128) * BF16  # hybrid_layer_pattern 0: 9 global layers, 4 KV heads
    sliding = 39 * 8 * (192 + 128) * BF16  # 39 window layers, 8 KV heads, window 128
    assert spec.kv_bytes_per_token(BF16, 131_072) == full + sliding * 128 / 131_072


def test_gemma4_reads_top_k_experts_and_its_global_layers_own_head_shape() -> None:
    spec = imported("google--gemma-4-26B-A4B").spec
    assert spec.experts is not None and spec.experts.active == 8
    full = 5 * 2 * 2 * 512 * BF16  # num_global_key_value_heads 2, global_head_dim 512
    sliding = 25 * 2 * 8 * 256 * BF16
    assert spec.kv_bytes_per_token(BF16, 262_144) == full + sliding * 1024 / 262_144


def test_a_zero_size_shared_expert_is_no_shared_expert() -> None:
    base = config("Qwen--Qwen3-Coder-480B-A35B-Instruct")
    assert base["shared_expert_intermediate_size"] == 0
    without = from_hf_config(base)
    with_one = from_hf_config({**base, "shared_expert_intermediate_size": 2048})
    assert without.experts is not None and without.experts.shared == 0
    added = 62 * 3 * 6144 * 2048 / 1e9  # one shared expert of 2048 in each of the 62 MoE layers
    assert with_one.params_total_b - without.params_total_b == pytest.approx(added, abs=0.002)
    assert with_one.params_active_b - without.params_active_b == pytest.approx(added, abs=0.002)


def test_interleaved_moe_layers_alternate_with_dense_ones() -> None:
    maverick = config("meta-llama--Llama-4-Maverick-17B-128E-Instruct")
    every = from_hf_config({**maverick, "text_config": {**maverick["text_config"], "interleave_moe_layer_step": 1}})
    alternate = from_hf_config(maverick)
    assert every.experts is not None and alternate.experts is not None
    every_b, alternate_b = every.experts.expert_params_b, alternate.experts.expert_params_b
    assert every_b is not None and alternate_b is not None
    assert alternate_b == pytest.approx(every_b / 2, rel=1e-3)  # 24 of 48 layers hold experts


# --- warnings and bad input --------------------------------------------------------------------------


def test_a_key_the_importer_does_not_know_is_named_in_a_warning() -> None:
    result = import_hf_config({**config("meta-llama--Meta-Llama-3.1-8B"), "latent_memory_slots": 64})
    assert len(result.warnings) == 1 and "latent_memory_slots" in result.warnings[0]


def test_a_known_key_away_from_its_plain_value_is_warned() -> None:
    gemma = config("google--gemma-4-26B-A4B")
    text = {**gemma["text_config"], "num_kv_shared_layers": 10}
    result = import_hf_config({**gemma, "text_config": text})
    assert any("num_kv_shared_layers" in w for w in result.warnings)


def test_an_unknown_layer_letter_in_a_hybrid_pattern_names_the_key() -> None:
    nemotron = config("nvidia--Nemotron-H-56B-Base-8K")
    pattern = "X" + nemotron["hybrid_override_pattern"][1:]
    with pytest.raises(DataFileError, match="hybrid_override_pattern"):
        import_hf_config({**nemotron, "hybrid_override_pattern": pattern})


def test_a_pattern_of_the_wrong_length_names_the_key_and_both_lengths() -> None:
    with pytest.raises(DataFileError, match=r"hybrid_layer_pattern: lists 3 layers, num_hidden_layers is 48"):
        import_hf_config({**config("XiaomiMiMo--MiMo-V2-Flash"), "hybrid_layer_pattern": [0, 1, 1]})


def test_absurd_sizes_are_refused_naming_a_key() -> None:
    with pytest.raises(DataFileError, match="hidden_size"):
        import_hf_config({**config("meta-llama--Meta-Llama-3.1-8B"), "hidden_size": 10**9, "head_dim": 128})


# --- the command --------------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_models_import_json_gives_parameters_and_kv_per_token(capsys: pytest.CaptureFixture[str]) -> None:
    path = CONFIGS / "meta-llama--Llama-4-Maverick-17B-128E-Instruct.json"
    code, out, _ = run(capsys, "models", "import", str(path), "--context", "131072", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["params_total_b"] == pytest.approx(400, rel=0.03)
    assert data["params_active_with_embeddings_b"] == pytest.approx(17, rel=0.03)
    assert data["kv_bytes_per_token"] == 58_368 and data["context"] == 131_072
    assert data["warnings"] == []


def test_a_context_above_the_maximum_warns_and_still_answers(capsys: pytest.CaptureFixture[str]) -> None:
    path = CONFIGS / "nvidia--Nemotron-H-56B-Base-8K.json"
    code, out, _ = run(capsys, "models", "import", str(path), "--context", "16384")
    assert code == 0
    assert "warning: context: 16,384 tokens is beyond the model's maximum of 8,192" in out
    assert "KV per token (BF16)" in out


def test_models_import_text_names_each_layer_type_and_the_indexer(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "models", "import", str(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json"), "--context", "4096"
    )
    assert code == 0
    assert "full attention     61 layers, 576 KV elements per token" in out
    assert "indexer keys of 128 (FP8) in 61 layers, top 2,048" in out
    assert "78,324.0 bytes" in out


def test_models_import_refuses_a_models_folder_it_would_not_read(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(CONFIGS / "openai--gpt-oss-120b.json")
    code, _, err = run(capsys, "models", "import", path, "--models", str(DEFAULT_MODELS_DIR))
    assert code == 2 and "--models is read only when listing" in err


def test_models_without_an_action_still_lists_the_bundled_specs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "models", "--json")
    assert code == 0 and "deepseek-v3" in {m["id"] for m in json.loads(out)}


def test_a_missing_key_is_one_line_naming_file_and_key_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({k: v for k, v in config("Qwen--Qwen3-235B-A22B").items() if k != "num_experts_per_tok"})
    )
    code, out, err = run(capsys, "models", "import", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err and "num_experts_per_tok" in err


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
BASES = ["meta-llama--Llama-4-Maverick-17B-128E-Instruct", "nvidia--Nemotron-H-56B-Base-8K", "zai-org--GLM-5"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from(BASES), data=st.data(), value=JSON_VALUES)
def test_hostile_values_give_a_spec_or_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base: str, data: st.DataObject, value: Any
) -> None:
    cfg = config(base)
    target = cfg.get("text_config", cfg)
    key = data.draw(st.sampled_from(sorted(target)))
    target[key] = value
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(cfg))
    code, out, err = run(capsys, "models", "import", str(path), "--json")
    if code == 0:
        assert json.loads(out)["params_total_b"] > 0
    else:
        assert code == 2 and err.startswith(f"error: {path}") and err.count("\n") == 1


def test_attention_compute_counts_only_layers_that_attend_over_what_they_keep() -> None:
    from calculator.capacity.roofline import attention_flops_per_token

    dense = imported("meta-llama--Meta-Llama-3.1-8B").spec
    assert attention_flops_per_token(dense, 8192) == 4 * 32 * 4096 * 8192  # every layer, the whole context
    nemotron = imported("nvidia--Nemotron-H-56B-Base-8K").spec
    assert attention_flops_per_token(nemotron, 8192) == 4 * 10 * 8192 * 8192  # 10 attention layers of 118
    gpt_oss = imported("openai--gpt-oss-120b").spec
    # over its 64 query heads of 64 (4,096 wide, wider than its 2,880 hidden)
    assert attention_flops_per_token(gpt_oss, 65_536) == 4 * 64 * 64 * (18 * 65_536 + 18 * 128)


def test_a_sparse_attention_decode_step_reads_every_indexer_key_but_only_the_top_k_latents() -> None:
    glm5 = imported("zai-org--GLM-5").spec
    latent, indexer = 78 * (512 + 64) * BF16, 78 * 132
    assert glm5.kv_bytes_read_per_step(BF16, 65_536) == 65_536 * indexer + 2048 * latent
    # below the top 2,048 every token is read, as a dense model reads
    assert glm5.kv_bytes_read_per_step(BF16, 1024) == 1024 * (latent + indexer)
    dense = imported("meta-llama--Meta-Llama-3.1-8B").spec
    assert dense.kv_bytes_read_per_step(BF16, 65_536) == dense.kv_bytes_per_sequence(65_536, BF16)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not json at all", "not valid JSON"),
        ("[1, 2, 3]", "a config.json holds one JSON object, got list"),
        (json.dumps({**config("Qwen--Qwen3-235B-A22B"), "num_hidden_layers": "94"}), "num_hidden_layers: expected"),
        (json.dumps({**config("Qwen--Qwen3-235B-A22B"), "num_experts": 10**12}), "num_experts: expected"),
    ],
    ids=["not-json", "an-array", "a-quoted-number", "a-trillion-experts"],
)
def test_bad_input_is_one_line_naming_the_file_and_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    code, out, err = run(capsys, "models", "import", str(path))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {path}") and expected in err and err.count("\n") == 1


def test_an_unknown_layer_type_is_warned_and_counted_as_full_attention() -> None:
    gpt_oss = config("openai--gpt-oss-120b")
    types = ["memory_attention", *gpt_oss["layer_types"][1:]]
    result = import_hf_config({**gpt_oss, "layer_types": types})
    assert any("memory_attention" in w and "full attention" in w for w in result.warnings)
    per_layer = 2 * 8 * 64 * BF16  # the first layer was sliding: it now holds every token
    assert result.spec.kv_bytes_per_token(BF16, 131_072) == 19 * per_layer + 17 * per_layer * 128 / 131_072


def test_llama4_moe_layers_and_an_empty_no_rope_list_read_as_transformers_reads_them() -> None:
    maverick = config("meta-llama--Llama-4-Maverick-17B-128E-Instruct")
    text = maverick["text_config"]
    explicit = {**text, "moe_layers": list(range(1, 48, 2)), "no_rope_layers": [], "interleave_moe_layer_step": 1}
    result = import_hf_config({**maverick, "text_config": explicit})
    assert result.warnings == ()
    assert result.spec.params_total_b == from_hf_config(maverick).params_total_b
    assert result.spec.kv_bytes_per_token(BF16, 131_072) == 58_368


def test_an_fp32_recurrent_state_takes_4_bytes_and_its_convolution_state_2() -> None:
    nemotron = config("nvidia--Nemotron-H-56B-Base-8K")
    spec = from_hf_config({**nemotron, "mamba_ssm_cache_dtype": "float32"})
    conv, ssm = 3 * (256 * 64 + 2 * 8 * 256), 256 * 64 * 256
    mamba = next(g for g in spec.cache_groups if g.kind == "mamba")
    assert mamba.state_bytes == conv * 2 + ssm * 4
    with pytest.raises(DataFileError, match="mamba_ssm_cache_dtype: unknown dtype 'float8'"):
        from_hf_config({**nemotron, "mamba_ssm_cache_dtype": "float8"})
