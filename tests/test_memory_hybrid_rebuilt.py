"""Hybrid decoders under recomputation: the one block rebuilt in backward is the largest kind of
block present (memory_features ``act_rebuilt``), not the per-layer mean.

With activation checkpointing the memory kernel holds every block's checkpointed input plus one
block being recomputed. For an ordinary model that block is any block (``act_rebuilt`` equals
``act_layer``: the catalog guard in the commit compared every model). A hybrid's blocks differ:
Nemotron-NAS mixes attention + MLP blocks with MLP-only and empty ones (the mean understates the
attention + MLP block the backward of such a block rebuilds), Nemotron-H's blocks each hold one
part (Mamba-2, attention or an MLP: the largest of those, never a sum). Small configs from
tests/test_memory_hybrid_blocks.py's helpers.
"""

from __future__ import annotations

from test_hf_config_nas import _block
from test_memory_hybrid_blocks import RANK, H, _nas, _nemotron_h

from gpuprice.models.architectures import ModelArch, find_model
from gpuprice.models.block_parts import block_parts, mixer_width
from gpuprice.models.memory import GB, estimate_memory
from gpuprice.models.memory_features import setup_features
from gpuprice.models.memory_setup import DEFAULT_CONSTANTS, TrainingSetup


def _features(arch: ModelArch, targets: str = "all", **fields: object) -> dict[str, float]:
    """LoRA, one token, fused kernels (no norm copies; a gated MLP's activation recomputed), bf16 (2 B)."""
    setup = TrainingSetup(arch=arch, method="lora", lora_targets=targets, seq_len=1, compile=True, **fields)
    return {k: v / 2.0 for k, v in setup_features(setup).items()}


def test_nas_rebuilds_an_attention_and_mlp_block() -> None:
    """Two attention + MLP blocks, an empty one and an MLP-only one: the rebuilt block is the
    attention + MLP block (norm input and output, q, K/V at query width, output; the MLP's norm
    input and output, gate, up, product; seven x @ A), above the mean over the four."""
    arch = _nas([_block(2, 2.0), _block(2, 2.0), _block(None, None), _block(None, 2.0)])
    parts = block_parts(arch)
    assert (parts.both, parts.empty) == (2, 1)
    width = arch.intermediate_size
    block = 2 * H + 3 * arch.q_width + arch.attn_out_width + 4 * RANK + 2 * H + 3 * width + 3 * RANK
    f = _features(arch)
    assert f["act_rebuilt"] == block
    assert f["act_layer"] < block


def test_nemotron_h_rebuilds_its_largest_one_part_block() -> None:
    """Nemotron-H: Mamba-2, attention and squared-ReLU MLP blocks, one part each: the rebuilt
    block is the largest of the three, not a mixer + MLP sum."""
    arch = _nemotron_h("M*-")
    assert block_parts(arch).both == 0
    attention = 2 * H + 3 * arch.q_width + arch.attn_out_width + 4 * RANK
    mamba = 2 * H + mixer_width(arch) + 2 * RANK
    # fc1's output and its squared ReLU: a non-gated MLP's activation is fc2's input, which the
    # adapter on fc2 reads in backward, so even fused kernels keep it (memory_features)
    mlp = 2 * H + 2 * arch.intermediate_size + 2 * RANK
    f = _features(arch)
    assert f["act_rebuilt"] == max(attention, mamba, mlp)
    assert f["act_rebuilt"] < attention + mlp


def test_the_kernel_rebuilds_the_largest_block() -> None:
    """Full recomputation, no logits (fused loss): the activations are every block's input plus
    the rebuilt block, times the calibrated factor."""
    arch = _nas([_block(2, 2.0), _block(None, None), _block(None, 2.0)])
    setup = TrainingSetup(
        arch=arch, method="lora", seq_len=512, activation_checkpointing="full", loss="fused"
    )
    f = setup_features(setup)
    estimate = estimate_memory(setup)
    expected = DEFAULT_CONSTANTS.activation_factor * (f["layers"] * f["act_ckpt"] + f["act_rebuilt"])
    assert abs(estimate.breakdown.activations - expected / GB) < 1e-12
    assert f["act_rebuilt"] > f["act_layer"]


def test_ordinary_models_rebuild_their_layer() -> None:
    for name in ("meta-llama/Llama-3.1-8B", "deepseek-ai/DeepSeek-V2-Lite"):
        arch = find_model(name)
        assert arch is not None
        for targets in ("qv", "all"):
            f = _features(arch, targets)
            assert f["act_rebuilt"] == f["act_layer"]
