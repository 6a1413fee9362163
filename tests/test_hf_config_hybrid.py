"""Hybrid and newer config.json shapes read against the model cards' totals (issue: configs the
project had not seen).

Each config is a minimal one written here with the real field names and values of the named
model's ``config.json`` as transcribed in ai-dynamo/aiconfigurator @
095f58a51c4ca8e61b66ec108d86f223f8d559ce (aic-core/src/aiconfigurator_core/model_configs/
<org>--<model>_config.json) or mlc-ai/mlc-llm @ 79d603f085f50500e9509fa01785ffa7ecfaaa93
(python/mlc_llm/model/model_preset.py, MODEL_PRESETS["aya-23"]); only the fields the count reads.
Before the fixes these read: Qwen3.5-27B 24.4B (Gated DeltaNet blocks counted as attention,
no output gate), Nemotron-3-Nano 68.9B (Mamba and MoE blocks each counted as attention + MoE),
Nemotron-3-Super / Nemotron-H-56B refused ("Infinity is not a JSON number"), Nemotron-3-Ultra
refused ("no layer count"), Aya-23-8B 9.1B (Cohere's tied head counted twice), Gemma 4 26B-A4B
one expert per token (``top_k_experts`` unread).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuprice.errors import BadInput
from gpuprice.models.hf_config import arch_from_config, arch_from_config_file

_KIND = {"M": "mamba", "*": "attention", "E": "moe", "-": "mlp"}


def _qwen35_27b() -> dict[str, Any]:
    """Qwen/Qwen3.5-27B (Qwen--Qwen3.5-27B_config.json): text_config of a VL wrapper."""
    kinds = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(64)]
    return {
        "model_type": "qwen3_5",
        "tie_word_embeddings": False,
        "text_config": {
            "model_type": "qwen3_5_text",
            "attn_output_gate": True,
            "full_attention_interval": 4,
            "head_dim": 256,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 17408,
            "layer_types": kinds,
            "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 128,
            "linear_num_key_heads": 16,
            "linear_num_value_heads": 48,
            "linear_value_head_dim": 128,
            "num_attention_heads": 24,
            "num_hidden_layers": 64,
            "num_key_value_heads": 4,
            "vocab_size": 248320,
        },
    }


def _qwen3_next_80b() -> dict[str, Any]:
    """Qwen/Qwen3-Next-80B-A3B-Instruct: no layer_types, full_attention_interval 4, no
    attn_output_gate key (the gate is always on)."""
    return {
        "model_type": "qwen3_next",
        "decoder_sparse_step": 1,
        "full_attention_interval": 4,
        "head_dim": 256,
        "hidden_act": "silu",
        "hidden_size": 2048,
        "intermediate_size": 5120,
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "linear_value_head_dim": 128,
        "mlp_only_layers": [],
        "moe_intermediate_size": 512,
        "num_attention_heads": 16,
        "num_experts": 512,
        "num_experts_per_tok": 10,
        "num_hidden_layers": 48,
        "num_key_value_heads": 2,
        "shared_expert_intermediate_size": 512,
        "tie_word_embeddings": False,
        "vocab_size": 151936,
    }


def _nemotron_h(pattern: str, **fields: Any) -> dict[str, Any]:
    base = {
        "model_type": "nemotron_h",
        "conv_kernel": 4,
        "head_dim": 128,
        "mamba_head_dim": 64,
        "mlp_hidden_act": "relu2",
        "n_groups": 8,
        "n_shared_experts": 1,
        "ssm_state_size": 128,
        "tie_word_embeddings": False,
        "use_bias": False,
        "use_conv_bias": True,
        "vocab_size": 131072,
        "num_key_value_heads": 2,
        "hybrid_override_pattern": pattern,
        "num_hidden_layers": len(pattern),
    }
    return {**base, **fields}


NANO_PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
SUPER_PATTERN = "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME"
ULTRA_PATTERN = "MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"


def _nano() -> dict[str, Any]:
    """nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16."""
    return _nemotron_h(
        NANO_PATTERN,
        hidden_size=2688,
        intermediate_size=1856,
        mamba_num_heads=64,
        moe_intermediate_size=1856,
        moe_shared_expert_intermediate_size=3712,
        n_routed_experts=128,
        num_attention_heads=32,
        num_experts_per_tok=6,
    )


def _super() -> dict[str, Any]:
    """nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8: a latent MoE (moe_latent_size 1024)."""
    return _nemotron_h(
        SUPER_PATTERN,
        hidden_size=4096,
        intermediate_size=2688,
        mamba_num_heads=128,
        moe_intermediate_size=2688,
        moe_latent_size=1024,
        moe_shared_expert_intermediate_size=5376,
        n_routed_experts=512,
        num_attention_heads=32,
        num_experts_per_tok=22,
    )


def _ultra() -> dict[str, Any]:
    """nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16: layers_block_type words, no
    num_hidden_layers and no hybrid_override_pattern."""
    config = _nemotron_h(
        ULTRA_PATTERN,
        hidden_size=8192,
        intermediate_size=5120,
        mamba_num_heads=256,
        moe_intermediate_size=5120,
        moe_latent_size=2048,
        moe_shared_expert_intermediate_size=10240,
        n_routed_experts=512,
        num_attention_heads=64,
        num_experts_per_tok=22,
    )
    del config["hybrid_override_pattern"], config["num_hidden_layers"]
    config["layers_block_type"] = [_KIND[c] for c in ULTRA_PATTERN]
    return config


def _aya_23_8b() -> dict[str, Any]:
    """CohereForAI/aya-23-8B (mlc-llm's aya-23 preset): tie_word_embeddings left implicit."""
    return {
        "model_type": "cohere",
        "hidden_act": "silu",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "vocab_size": 256000,
    }


# (name, config, total B, active B or None, what the card says)
CASES = [
    ("Qwen/Qwen3.5-27B", _qwen35_27b, 27.0, None, "model card: 27B (language model; vision encoder apart)"),
    ("Qwen/Qwen3-Next-80B-A3B", _qwen3_next_80b, 80.0, None, "model card: 80B total, 3B activated"),
    (
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B",
        _nano,
        31.6,
        3.6,
        "model card: 31.6B total, about 3.6B active with embeddings",
    ),
    (
        "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B",
        _super,
        120.0,
        12.0,
        "model card / name: 120B total, 12B active",
    ),
    (
        "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B",
        _ultra,
        550.0,
        55.0,
        "model card / name: 550B total, 55B active",
    ),
    ("CohereForAI/aya-23-8B", _aya_23_8b, 8.0, None, "model card: 8B"),
]


@pytest.mark.parametrize(("repo", "config", "total_b", "active_b", "card"), CASES, ids=[c[0] for c in CASES])
def test_total_and_active_parameters(
    repo: str, config: Any, total_b: float, active_b: float | None, card: str
) -> None:
    arch = arch_from_config(config(), f"{repo}/config.json")
    assert arch.n_params / 1e9 == pytest.approx(total_b, rel=0.03), card
    if active_b is not None:
        assert arch.n_active_params / 1e9 == pytest.approx(active_b, rel=0.07), card


def test_gated_deltanet_blocks_and_output_gate() -> None:
    """Qwen3.5-27B: 48 Gated DeltaNet blocks of 115.9M weights; the 16 attention blocks' q_proj
    is 2 x 24 x 256 wide (query + gate). layer_types and full_attention_interval agree."""
    arch = arch_from_config(_qwen35_27b())
    assert (arch.linear_attention_layers, arch.attention_output_gate) == (48, True)
    h, nk, nv, d = 5120, 16, 48, 128
    mixer = h * (2 * nk * d + 2 * nv * d) + h * 2 * nv + (2 * nk * d + nv * d) * 4 + 2 * nv + d + nv * d * h
    assert arch.linear_attention_params == mixer
    assert arch.attention_params() == h * (2 * 24 * 256 + 2 * 4 * 256) + 24 * 256 * h
    without_list = _qwen35_27b()
    del without_list["text_config"]["layer_types"]
    assert arch_from_config(without_list).n_params == arch.n_params


def test_nemotron_h_blocks_are_counted_by_kind() -> None:
    """Nano: 23 Mamba-2, 23 MoE and 6 attention blocks, one norm each; no block holds both a
    mixer and an MLP. The Mamba-2 mixer of Nano: in_proj 2688 x 10304, conv 6144 x 4 + bias,
    3 x 64 head vectors, norm 4096, out_proj 4096 x 2688."""
    arch = arch_from_config(_nano())
    assert (arch.linear_attention_layers, arch.mixer_free_layers, arch.mlp_free_layers) == (23, 23, 29)
    assert (arch.dense_layers, arch.norms_per_layer, arch.gated_mlp) == (0, 1, False)
    assert arch.linear_attention_params == 2688 * 10304 + 6144 * 4 + 6144 + 3 * 64 + 4096 + 4096 * 2688
    ultra = arch_from_config(_ultra())
    assert ultra.num_layers == len(ULTRA_PATTERN) and ultra.moe_latent_size == 2048


def test_a_bad_block_pattern_is_one_line(tmp_path: Path) -> None:
    config = _nano()
    config["hybrid_override_pattern"] = NANO_PATTERN[:-1] + "X"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(BadInput) as err:
        arch_from_config_file(path)
    assert "hybrid_override_pattern" in str(err.value) and "\n" not in str(err.value)
    config["hybrid_override_pattern"] = NANO_PATTERN + "M"
    path.write_text(json.dumps(config))
    with pytest.raises(BadInput, match="53 blocks"):
        arch_from_config_file(path)


def test_infinity_in_an_unread_field_loads(tmp_path: Path) -> None:
    """Nemotron-3-Super's and Nemotron-H-56B's config.json hold ``"time_step_limit": [0.0,
    Infinity]`` (json.dumps of float("inf")); a string holding the word is left alone."""
    text = json.dumps({**_super(), "note": "Infinity, NaN"})[:-1] + ', "time_step_limit": [0.0, Infinity]}'
    path = tmp_path / "config.json"
    path.write_text(text)
    assert arch_from_config_file(path).n_params == arch_from_config(_super()).n_params
    path.write_text(text.replace('"hidden_size": 4096', '"hidden_size": -Infinity'))
    with pytest.raises(BadInput, match="no hidden size field"):
        arch_from_config_file(path)


def test_gemma4_top_k_experts_is_the_experts_per_token() -> None:
    """google/gemma-4-26B-A4B's text_config names its routing width top_k_experts (8 of 128)."""
    config = {
        "model_type": "gemma4",
        "text_config": {
            "model_type": "gemma4_text",
            "head_dim": 256,
            "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size": 2816,
            "intermediate_size": 2112,
            "moe_intermediate_size": 704,
            "num_attention_heads": 16,
            "num_experts": 128,
            "num_hidden_layers": 30,
            "num_key_value_heads": 8,
            "tie_word_embeddings": True,
            "top_k_experts": 8,
            "vocab_size": 262144,
        },
    }
    assert arch_from_config(config).experts_per_token == 8
