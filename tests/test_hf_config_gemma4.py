"""Gemma 4 (``gemma4`` wrapper, ``gemma4_text`` decoder) read against the modelling code's shapes.

Shapes confirmed in transformers' src/transformers/models/gemma4/modeling_gemma4.py
(huggingface/transformers @ 0246b4f3335464614ef1de66531f9131a44ec801, Gemma4TextDecoderLayer,
Gemma4TextAttention) and the same layout in other implementations found: every block has
input / post_attention / pre_feedforward / post_feedforward RMSNorms and the dense Gemma4TextMLP
(``intermediate_size``, gated); with ``enable_moe_block`` it also has a router, the routed
experts (``moe_intermediate_size``, ``top_k_experts`` per token) and three more norms
(pre_feedforward_layernorm_2, post_feedforward_layernorm_1/_2), the dense MLP's and the experts'
outputs summed. Sliding-window blocks use ``head_dim`` and ``num_key_value_heads``; full-attention
blocks use ``global_head_dim`` and ``num_global_key_value_heads`` and, with ``attention_k_eq_v``,
no v_proj (V is read from K).

Configs written here with the real values of google/gemma-4-26B-A4B and nvidia/Gemma-4-31B-IT-NVFP4
(Google's 31B shape) as in ai-dynamo/aiconfigurator @ 095f58a51c4ca8e61b66ec108d86f223f8d559ce
(aic-core/src/aiconfigurator_core/model_configs/<org>--<model>_config.json, text_config).
Summed block by block with those shapes: 26B-A4B 25.23B total / 3.82B active, 31B 30.70B (the
cards' 25.2B / 3.8B / 30.7B). Before: 26B-A4B 24.63B / 3.21B (the dense MLP beside the experts
left out), 31B 30.15B.

Left open: ModelArch has one attention shape, so the full-attention blocks (one in six) are
counted with the sliding blocks' heads: 26B-A4B -72M, 31B -550M (-1.8 %). Fixing it needs an
attention field of its own in ModelArch; the bounds below pin the gap so a fix shows up.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuprice.models.hf_config import arch_from_config


def _gemma4(**text: Any) -> dict[str, Any]:
    layers = text["num_hidden_layers"]
    kinds = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(layers)]
    return {
        "model_type": "gemma4",
        "text_config": {
            "model_type": "gemma4_text",
            "attention_bias": False,
            "attention_k_eq_v": True,
            "final_logit_softcapping": 30.0,
            "global_head_dim": 512,
            "head_dim": 256,
            "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size_per_layer_input": 0,
            "layer_types": kinds,
            "num_kv_shared_layers": 0,
            "tie_word_embeddings": True,
            "use_double_wide_mlp": False,
            "vocab_size": 262144,
            **text,
        },
    }


def _a4b() -> dict[str, Any]:
    return _gemma4(
        enable_moe_block=True,
        hidden_size=2816,
        intermediate_size=2112,
        moe_intermediate_size=704,
        num_attention_heads=16,
        num_experts=128,
        num_global_key_value_heads=2,
        num_hidden_layers=30,
        num_key_value_heads=8,
        top_k_experts=8,
    )


def _dense_31b() -> dict[str, Any]:
    return _gemma4(
        enable_moe_block=False,
        expert_intermediate_size=None,
        hidden_size=5376,
        intermediate_size=21504,
        num_attention_heads=32,
        num_experts=None,
        num_global_key_value_heads=4,
        num_hidden_layers=60,
        num_key_value_heads=16,
        top_k_experts=None,
    )


def _shape_sum(config: dict[str, Any]) -> tuple[int, int]:
    """(total, active) block by block with the modelling code's shapes (q/k norm vectors left
    out: ModelArch has no per-head norms; 30 x 1,024 weights)."""
    t = config["text_config"]
    h, heads = t["hidden_size"], t["num_attention_heads"]
    total = active = t["vocab_size"] * h + h
    for kind in t["layer_types"]:
        if kind == "sliding_attention":
            d, kv, kv_mats = t["head_dim"], t["num_key_value_heads"], 2
        else:
            d, kv, kv_mats = t["global_head_dim"], t["num_global_key_value_heads"], 1
        block = 2 * h * heads * d + kv_mats * h * kv * d + 3 * h * t["intermediate_size"] + 4 * h
        total, active = total + block, active + block
        if t["enable_moe_block"]:
            experts, width = t["num_experts"], t["moe_intermediate_size"]
            router = h * experts + 3 * h  # router proj; the three extra norms
            total += experts * 3 * h * width + router
            active += t["top_k_experts"] * 3 * h * width + router
    return total, active


def test_the_dense_mlp_beside_the_experts_is_counted() -> None:
    arch = arch_from_config(_a4b())
    assert (arch.num_experts, arch.experts_per_token, arch.num_shared_experts) == (128, 8, 3)
    assert (arch.norms_per_layer, arch.expert_width) == (7, 704)
    total, active = _shape_sum(_a4b())
    assert total / 1e9 == pytest.approx(25.23, abs=0.005) and active / 1e9 == pytest.approx(3.82, abs=0.005)
    assert arch.n_params / 1e9 == pytest.approx(25.2, rel=0.01)  # card: 25.2B total
    # active: only the full-attention blocks' wider heads are missing (5 blocks, 72M)
    assert -0.02 < arch.n_active_params / active - 1 < -0.015
    assert -0.004 < arch.n_params / total - 1 < -0.002


def test_dense_31b_gap_is_the_full_attention_blocks() -> None:
    """31B: 10 full-attention blocks with 32 x 512 query heads and 4 shared K=V heads against the
    sliding blocks' 32 x 256 and 16 + 16: 10 x 10,240 x 5,376 = 550M weights unread."""
    arch = arch_from_config(_dense_31b())
    assert (arch.is_moe, arch.norms_per_layer) == (False, 4)
    total, _ = _shape_sum(_dense_31b())
    assert total / 1e9 == pytest.approx(30.70, abs=0.005)
    assert total - arch.n_params == 10 * 10240 * 5376
