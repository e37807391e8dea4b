"""`models import` on the newest designs: low-rank and grouped projections with compressed attention
(DeepSeek-V4-Flash), an indexer shared across layers (GLM-5.2), Kimi's hybrid linear attention with a
latent mixture of experts (Kimi-K3), and architecture-searched layers (Nemotron-Super-49B).

Each config.json is the real one (tests/fixtures/README.md names its copy and commit); parameter counts
are held to the figure each card prints, and the cache to a hand count layer type by layer type from the
config's own numbers and the reference code's cache layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog.datafile import DataFileError
from calculator.catalog.hf_config import import_hf_config

CONFIGS = Path(__file__).parent / "fixtures" / "model_configs"
BF16 = 2
V4_FLASH = CONFIGS / "deepseek-ai--DeepSeek-V4-Flash.json"
GLM52 = CONFIGS / "zai-org--GLM-5.2.json"
GLM5 = CONFIGS / "zai-org--GLM-5.json"
KIMI_K3 = CONFIGS / "moonshotai--Kimi-K3.json"
NEMOTRON_SUPER = CONFIGS / "nvidia--Llama-3_3-Nemotron-Super-49B-v1.json"


def _config(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


# --- parameters against the cards -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "total", "active", "where"),
    [
        # DeepSeek's V4 card (huggingface.co/deepseek-ai/DeepSeek-V4-Flash, quoted by featherless.ai and the V4
        # report summaries): 284B total, 13B activated; the input embedding left out as DeepSeek counts
        (V4_FLASH, 284, 13, "DeepSeek-V4-Flash card: 284B total, 13B activated"),
        # GLM-5.2 keeps GLM-5's 744B / 40B backbone (ai.app.kael.build/articles/glm-5-2, from the GLM-5 report)
        (GLM52, 744, 40, "GLM-5.2: 744B total, 40B active"),
        # huggingface.co safetensors metadata of the checkpoint: 49.9B (the card rounds to 49B); dense
        (NEMOTRON_SUPER, 49.9, 49.9, "Llama-3.3-Nemotron-Super-49B-v1: 49.9B parameters"),
    ],
)
def test_new_designs_count_within_3_percent_of_the_card(path: Path, total: float, active: float, where: str) -> None:
    result = import_hf_config(path)
    assert result.spec.params_total_b == pytest.approx(total, rel=0.03), where
    assert result.spec.params_active_b == pytest.approx(active, rel=0.03), where
    assert result.warnings == (), "every key of these configs is read or known to leave sizes alone"


def test_deepseek_v4_low_rank_query_and_grouped_output_are_what_brings_the_active_count_down() -> None:
    # Ignoring q_lora_rank, o_lora_rank and o_groups (full 4,096 x 32,768 query and output projections)
    # counted 19.9B active, 53% above the card: the low-rank forms are 4,096 x 1,024 + 1,024 x 32,768 for
    # the query and 32,768 x 1,024 + 8 x 1,024 x 4,096 for the output
    spec = import_hf_config(V4_FLASH).spec
    full_rank = 2 * 4096 * 32768
    low_rank = 4096 * 1024 + 1024 * 32768 + 32768 * 1024 + 8 * 1024 * 4096
    assert (full_rank - low_rank) * 43 / 1e9 == pytest.approx(7.03, abs=0.01)
    assert spec.params_active_b < 13 * 1.03


def test_kimi_k3_total_is_within_3_percent_of_its_published_size() -> None:
    # aiconfigurator's Kimi-K3 model (ai-dynamo/aiconfigurator sdk/models/kimi_k3.py): "2.8T, 93 layers = 69 KDA
    # + 24 MLA"; Moonshot's card prints no active figure to hold the active count to
    result = import_hf_config(KIMI_K3)
    assert result.spec.params_total_b == pytest.approx(2800, rel=0.03)
    # 16 of 896 latent experts of 3 x 3,584 x 3,072, 2 wide shared experts, the latent projections, in 92 layers
    routed = 16 * 3 * 3584 * 3072 + 2 * 3 * 7168 * 3072 + 2 * 7168 * 3584
    assert routed * 92 / 1e9 < result.spec.params_active_b < result.spec.params_total_b / 20
    (warning,) = result.warnings
    assert "attn_res_block_size" in warning and "too low" in warning


# --- the cache, layer type by layer type ----------------------------------------------------------------------


def test_deepseek_v4_flash_keeps_the_window_plus_one_entry_per_ratio_and_its_compressor_state() -> None:
    spec = import_hf_config(V4_FLASH).spec
    ratios = _config(V4_FLASH)["compress_ratios"][:43]
    assert (ratios.count(0), ratios.count(4), ratios.count(128)) == (2, 21, 20)
    context = 1_048_576
    entry = 512 * BF16  # one 512-wide entry per token is both key and value (num_key_value_heads 1)
    sliding = 2 * 128 * entry
    # FP32 running state per sequence: kv_state and score_state of (overlap x ratio) x (overlap x width)
    hca = 20 * ((128 + context // 128) * entry + 2 * 128 * 512 * 4)
    csa = 21 * ((128 + context // 4) * entry + 2 * 8 * 1024 * 4 + 2 * 8 * 256 * 4)
    indexer = 21 * (context // 4) * (128 + 4)  # one FP8 key of 128 and its scale per compressed entry
    assert spec.kv_bytes_per_sequence(context, BF16) == sliding + hca + csa + indexer
    assert spec.kv_bytes_per_token(BF16, context) == pytest.approx(6246.0, abs=0.05)
    # at 4K tokens the 128-token windows and the compressors' state weigh far more per token
    assert spec.kv_bytes_per_token(BF16, 4096) == pytest.approx(
        (2 * 128 * entry + 20 * ((128 + 32) * entry + 524_288) + 21 * ((128 + 1024) * entry + 81_920)) / 4096
        + 21 * 132 / 4,
        rel=1e-9,
    )


def test_glm52_indexes_in_one_layer_of_four_and_caches_its_keys_there_only() -> None:
    spec = import_hf_config(GLM52).spec
    types = _config(GLM52)["indexer_types"]
    assert (types.count("full"), types.count("shared")) == (21, 57)
    assert spec.sparse_attention is not None and spec.sparse_attention.layers == 21
    assert spec.kv_bytes_per_token(BF16, 65_536) == 78 * (512 + 64) * BF16 + 21 * 132 == 92_628
    # GLM-5 (an indexer in every layer) caches 100,152: counting every layer's indexer for GLM-5.2 was 8% high
    glm5 = import_hf_config(GLM5).spec.kv_bytes_per_token(BF16, 65_536)
    assert glm5 == 100_152 and glm5 / 92_628 == pytest.approx(1.081, abs=0.001)
    # the 57 sharing layers carry no indexer weights either
    assert import_hf_config(GLM5).spec.params_total_b - spec.params_total_b == pytest.approx(0.534, abs=0.01)


def test_kimi_k3_caches_latents_in_24_layers_and_a_fixed_delta_state_in_69() -> None:
    spec = import_hf_config(KIMI_K3).spec
    groups = {g.kind: g for g in spec.cache_groups}
    assert groups["full_attention"].layers == 24 and groups["full_attention"].kv_elements == 512 + 64
    linear = groups["linear_attention"]
    # 96 heads of a 128 x 128 FP32 state, and 3 of the 4 convolution inputs of q, k and v in BF16
    assert linear.layers == 69 and linear.state_bytes == 96 * 128 * 128 * 4 + 3 * 3 * 96 * 128 * 2
    context = 131_072
    assert spec.kv_bytes_per_sequence(context, BF16) == 24 * 576 * BF16 * context + 69 * linear.state_bytes


def test_nemotron_super_caches_only_its_49_attention_layers() -> None:
    blocks = _config(NEMOTRON_SUPER)["block_configs"]
    attending = [b for b in blocks if not b["attention"]["no_op"]]
    assert len(attending) == 49 and {b["attention"]["n_heads_in_group"] for b in attending} == {8}
    spec = import_hf_config(NEMOTRON_SUPER).spec
    assert spec.kv_heads == 64 // 8
    assert spec.kv_bytes_per_token(BF16, 4096) == 49 * 2 * 8 * 128 * BF16 == 200_704


def test_nemotron_ffn_widths_follow_decilms_rule() -> None:
    # DeciLM (vLLM's nemotron_nas.py, transformers' modeling_decilm.py): int(2 x ffn_mult x hidden / 3), rounded
    # up to a multiple of 256: the first block's ffn_mult 2.625 on 8,192 is 14,336 (5.25 would be Llama-3.3-70B's
    # 28,672)
    data = _config(NEMOTRON_SUPER)
    assert data["block_configs"][0]["ffn"]["ffn_mult"] == 2.625
    one_layer = {**data, "num_hidden_layers": 1, "block_configs": data["block_configs"][:1]}
    result = import_hf_config(one_layer)
    embeddings = 2 * 128256 * 8192 + 8192
    attention = 8192 * (8192 + 2 * 1024) + 8192 * 8192
    mlp = 3 * 8192 * 14336
    # the spec keeps billions to three decimals
    assert result.spec.params_total_b * 1e9 == pytest.approx(embeddings + attention + mlp + 2 * 8192, abs=5e5)


# --- what is not modelled says which way it moves the figure --------------------------------------------------


def test_a_block_setting_not_modelled_says_the_figure_may_be_too_high() -> None:
    data = _config(NEMOTRON_SUPER)
    blocks = [dict(b) for b in data["block_configs"]]
    blocks[0] = {**blocks[0], "attention": {**blocks[0]["attention"], "window_length": 4096}}
    result = import_hf_config({**data, "block_configs": blocks})
    (warning,) = result.warnings
    assert "attention.window_length" in warning and "too high" in warning


def test_an_unknown_saving_key_says_the_figures_are_likely_too_high() -> None:
    result = import_hf_config({**_config(GLM52), "kv_share_group_size": 2})
    (warning,) = result.warnings
    assert "kv_share_group_size" in warning and "likely too high" in warning
    other = import_hf_config({**_config(GLM52), "extra_memory_slots": 64})
    assert "too low" in other.warnings[0] and "too high" in other.warnings[0]


def test_a_compress_ratio_list_shorter_than_the_layers_is_refused_naming_the_key() -> None:
    data = _config(V4_FLASH)
    with pytest.raises(DataFileError, match="compress_ratios"):
        import_hf_config({**data, "compress_ratios": data["compress_ratios"][:10]})


# --- hostile values ----------------------------------------------------------------------------------------------

_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 10**7), st.floats(allow_nan=False), st.text(max_size=6)),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(
        [
            (V4_FLASH, "compress_ratios"),
            (V4_FLASH, "o_groups"),
            (V4_FLASH, "hc_mult"),
            (GLM52, "indexer_types"),
            (GLM52, "mlp_layer_types"),
            (NEMOTRON_SUPER, "block_configs"),
        ]
    ),
    _JSON,
)
def test_hostile_values_of_the_new_keys_give_a_spec_or_one_line_naming_the_file(
    where: tuple[Path, str], value: Any
) -> None:
    path, key = where
    try:
        import_hf_config({**_config(path), key: value}, source_name=path.name)
    except DataFileError as exc:
        assert len(exc.lines) >= 1 and all(line.startswith(path.name) for line in exc.lines)


@settings(max_examples=30, deadline=None)
@given(_JSON)
def test_hostile_kimi_linear_settings_give_a_spec_or_one_line_naming_the_file(value: Any) -> None:
    data = _config(KIMI_K3)
    text = {**data["text_config"], "linear_attn_config": value}
    try:
        import_hf_config({**data, "text_config": text}, source_name=KIMI_K3.name)
    except DataFileError as exc:
        assert all(line.startswith(KIMI_K3.name) for line in exc.lines)
