"""Gated DeltaNet blocks (Qwen3-Next / Qwen3.5): the memory model counts what the mixer's kernels
save, from the linear heads' widths the config reader now keeps on ModelArch.

Before, a linear mixer's saved tensors were counted by its projections (norm input and output,
the input projections' outputs, out_proj's input: 2 h + weights / h), exact for Mamba-2's fused
kernel but about half of a Gated DeltaNet's. The fixture below is a small config with the field
names and block structure of transformers' Qwen3-Next (huggingface/transformers @
7515843b617551b008901620ca58f1208bbc330d, src/transformers/models/qwen3_next/
modeling_qwen3_next.py: Qwen3NextDecoderLayer picks ``linear_attn`` / ``self_attn`` from
``layer_types``; Qwen3NextGatedDeltaNet's shapes come from ``linear_num_key_heads``,
``linear_key_head_dim``, ``linear_num_value_heads``, ``linear_value_head_dim``,
``linear_conv_kernel_dim``); its sizes are small ones chosen here, not a released model's. What
each kernel saves is read from fla-org/flash-linear-attention @
92396f250f2c8f0ad841cecfe29069c8a71a83eb (fla/ops/gated_delta_rule/chunk.py
``ChunkGatedDeltaRuleFunction``, fla/modules/fused_norm_gate.py ``LayerNormGatedFunction``) and
Dao-AILab/causal-conv1d @ dedc05ff2c440225ac30b3fd4f150ff42c852243
(causal_conv1d/causal_conv1d_interface.py ``CausalConv1dFn``); see
``memory_features.gated_deltanet_elements``.

Ordinary models and Nemotron-H do not carry the fields (0), so nothing else moves: the commit
compared setup_features and per_gpu_gb for every catalog model and the Nemotron-H / Nemotron-NAS
fixtures x method x LoRA targets x framework x recomputation x precision (36,855 cases) against
main, 0 differences.
"""

from __future__ import annotations

from typing import Any

from test_hf_config_hybrid import _nano, _qwen3_next_80b, _qwen35_27b

from gpuprice.models.architectures import ModelArch, catalog
from gpuprice.models.block_parts import block_parts, mixer_width
from gpuprice.models.hf_config import arch_from_config
from gpuprice.models.memory_features import gated_deltanet_elements, setup_features
from gpuprice.models.memory_setup import TrainingSetup

H, NK, DK, NV, DV, KERNEL = 256, 2, 32, 4, 32, 4


def _small_qwen3_next() -> dict[str, Any]:
    """Qwen3-Next-style: three Gated DeltaNet blocks then one gated full-attention block, every
    block an MoE (decoder_sparse_step 1) with a shared expert; two value heads per key head, so
    q and k are repeated to the value heads as in the 80B model."""
    return {
        "model_type": "qwen3_next",
        "attn_output_gate": True,
        "decoder_sparse_step": 1,
        "full_attention_interval": 4,
        "head_dim": 64,
        "hidden_act": "silu",
        "hidden_size": H,
        "intermediate_size": 512,
        "layer_types": ["linear_attention"] * 3 + ["full_attention"],
        "linear_conv_kernel_dim": KERNEL,
        "linear_key_head_dim": DK,
        "linear_num_key_heads": NK,
        "linear_num_value_heads": NV,
        "linear_value_head_dim": DV,
        "mlp_only_layers": [],
        "moe_intermediate_size": 64,
        "num_attention_heads": 4,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 4,
        "num_key_value_heads": 2,
        "shared_expert_intermediate_size": 64,
        "tie_word_embeddings": False,
        "vocab_size": 1024,
    }


def _setup(arch: ModelArch, **fields: Any) -> TrainingSetup:
    base: dict[str, Any] = {"arch": arch, "method": "lora", "lora_targets": "all", "seq_len": 1}
    return TrainingSetup(**{**base, **fields})


def test_the_reader_keeps_the_linear_heads() -> None:
    arch = arch_from_config(_small_qwen3_next())
    assert (arch.linear_num_key_heads, arch.linear_key_head_dim) == (NK, DK)
    assert (arch.linear_num_value_heads, arch.linear_value_head_dim) == (NV, DV)
    assert arch.linear_conv_kernel_dim == KERNEL
    assert block_parts(arch).linear == 3
    big = arch_from_config(_qwen35_27b())
    assert (big.linear_num_key_heads, big.linear_num_value_heads, big.linear_conv_kernel_dim) == (16, 48, 4)


def test_saved_elements_of_one_mixer() -> None:
    """Per token, bf16 (an fp32 tensor counts two): conv input q,k,v (2 nk dk + nv dv); the rule's
    normalised q, k at the value heads (2 nv dk), v (nv dv), chunk matrix A (64 nv), beta (nv),
    fp32 q/k rstd and cumulated g (3 nv); softplus' fp32 input (nv; its output too under full
    fine-tuning, for A_log's gradient); the gated norm's input and z (2 nv dv) and fp32 rstd (nv);
    out_proj's input (nv dv) when out_proj is trained or adapted."""
    arch = arch_from_config(_small_qwen3_next())
    conv = 2 * NK * DK + NV * DV
    rule = 2 * NV * DK + NV * DV + 64 * NV + NV + 2 * 3 * NV
    norm = 2 * NV * DV + 2 * NV
    lora_all = conv + rule + 2 * NV + norm + NV * DV
    assert gated_deltanet_elements(_setup(arch), arch, True) == lora_all == 1324
    lora_qv = conv + rule + 2 * NV + norm
    assert gated_deltanet_elements(_setup(arch, lora_targets="qv"), arch, False) == lora_qv
    full = conv + rule + 2 * 2 * NV + norm + NV * DV
    assert gated_deltanet_elements(_setup(arch, method="full"), arch, True) == full
    fp32 = conv + 2 * NV * DK + NV * DV + 64 * NV + NV + 3 * NV + NV + 2 * NV * DV + NV + NV * DV
    assert gated_deltanet_elements(_setup(arch, precision="fp32"), arch, True) == fp32


def test_the_mixer_term_replaces_the_projection_count() -> None:
    """act_layer moves by exactly the linear blocks' share of (kernels' saved elements - the
    projection count), bf16 bytes; the rebuilt block's mixer is the larger of the gated attention
    (2 h + 3 q_width + attn_out + x @ A) and the Gated DeltaNet (h or 2 h + its saved elements +
    x @ A), the MLP and norms unchanged."""
    arch = arch_from_config(_small_qwen3_next())
    old = arch.model_copy(update={"linear_num_value_heads": 0})
    rank = 16
    for targets, saved, norm_out, adapters in (
        ("all", True, H, (4 * rank, 3 * rank)),
        ("qv", False, 0, (2 * rank, 0)),
    ):
        new_f = setup_features(_setup(arch, lora_targets=targets))
        old_f = setup_features(_setup(old, lora_targets=targets))
        gdn = gated_deltanet_elements(_setup(arch, lora_targets=targets), arch, saved)
        moved = 3 / 4 * (gdn - mixer_width(arch)) * 2.0
        assert abs(new_f["act_layer"] - old_f["act_layer"] - moved) < 1e-6
        attention = 2 * H + 3 * arch.q_width + arch.attn_out_width + adapters[0]
        new_mixer = H + norm_out + gdn + adapters[1]
        old_mixer = H + norm_out + mixer_width(arch) + adapters[1]
        rebuilt_moved = 2.0 * (max(attention, new_mixer) - max(attention, old_mixer))
        assert abs(new_f["act_rebuilt"] - old_f["act_rebuilt"] - rebuilt_moved) < 1e-6


def test_real_shapes_about_twice_the_projections() -> None:
    """Qwen3-Next-80B-A3B (h 2048, 16 x 128 key heads, 32 x 128 value heads) keeps 35,168
    elements a token in a Gated DeltaNet mixer under LoRA on all linears (plus the norm's 2 h),
    2.14 x its projections' 16,464; Qwen3.5-27B (h 5120, 48 value heads of 128) 50,704, 2.24 x.
    Under recomputation the rebuilt block is now a Gated DeltaNet + MoE block (the mixer
    2 h + 35,168 outweighs the gated attention's 2 h + 16,384)."""
    next80 = arch_from_config(_qwen3_next_80b())
    gdn = gated_deltanet_elements(_setup(next80), next80, True)
    assert gdn == 35168
    assert round(mixer_width(next80)) == 16464
    assert round(gdn / mixer_width(next80), 2) == 2.14
    q35 = arch_from_config(_qwen35_27b())
    assert gated_deltanet_elements(_setup(q35), q35, True) == 50704
    assert round(50704 / mixer_width(q35), 2) == 2.24
    old = next80.model_copy(update={"linear_num_value_heads": 0})
    new_f, old_f = setup_features(_setup(next80)), setup_features(_setup(old))
    assert new_f["act_rebuilt"] - old_f["act_rebuilt"] == (gdn - mixer_width(next80)) * 2.0


def test_other_models_carry_no_linear_heads() -> None:
    """The new term applies only where the config named the linear heads: only the Qwen3.5 catalog
    rows (tests/test_catalog_multimodal_hybrid.py, read from their configs' Gated DeltaNet fields)
    and no Nemotron-H (Mamba-2) config carry them, so the others' features are the projection count's."""
    carriers = {m for m, entry in catalog().items() if entry.arch.linear_num_value_heads}
    assert carriers and all(catalog()[m].arch.model_type.startswith("qwen3_5") for m in carriers)
    assert arch_from_config(_nano()).linear_num_value_heads == 0
