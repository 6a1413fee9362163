"""Op-level selective activation checkpointing: which of a block's matmuls it keeps.

torchtitan's policy (``torchtitan/distributed/activation_checkpoint.py``, ``_get_custom_policy``;
``parallelize_llama.py`` @4d88a8a4 before the move) counts the ``aten.mm`` calls of each block and
saves an output unless its count is even; SDPA's output is saved too, and everything else in the
block (norms, activations, RoPE) is recomputed in backward. A dense block runs q, k, v, o, then
gate, up, down (or fc1, fc2): q, v, gate and down (fc1) are kept, k, o and up (fc2) recomputed.

One rule, two readers: the memory model keeps the saved outputs (``memory_features``), the
throughput model pays the recomputed matmuls' forward FLOPs (``throughput.ModelShape``). Blocks
that do not follow the dense layout (MoE experts, latent attention, hybrid mixers, encoder-decoder
blocks) are counted as half of their matmuls either way.
"""

from __future__ import annotations

from typing import Any


def block_matmuls(arch: Any) -> tuple[tuple[int, int], ...] | None:
    """(input, output) widths of a dense block's matmuls in the order they run, None for a block
    that does not follow the dense layout (or anything without an architecture's attributes)."""
    if not hasattr(arch, "gated_mlp"):
        return None
    if (
        arch.is_moe
        or arch.kv_lora_rank is not None
        or arch.linear_attention_layers
        or arch.mixer_free_layers
        or arch.mlp_free_layers
        or arch.cross_attention_layers
    ):
        return None
    h, width = int(arch.hidden_size), int(arch.intermediate_size)
    attention = ((h, arch.q_width), (h, arch.kv_width), (h, arch.kv_width), (arch.attn_out_width, h))
    mlp = ((h, width), (h, width), (width, h)) if arch.gated_mlp else ((h, width), (width, h))
    return attention + mlp


def saved_matmul_outputs(arch: Any) -> float | None:
    """Elements per token per layer the policy keeps of a dense block's matmul outputs (the 1st,
    3rd, ... matmul), None when the layout is not the dense one."""
    matmuls = block_matmuls(arch)
    if matmuls is None:
        return None
    return float(sum(out for _, out in matmuls[0::2]))


def recomputed_matmul_flops(arch: Any) -> float | None:
    """Forward FLOPs per token of the matmuls the policy recomputes (the 2nd, 4th, ... of every
    block); without the dense layout half of the blocks' matmuls (blocks' weights x 2 / 2); None
    without an architecture."""
    if not hasattr(arch, "gated_mlp"):
        return None
    matmuls = block_matmuls(arch)
    if matmuls is None:
        return float(arch.n_active_params - arch.embedding_params - arch.head_params)
    return float(sum(2 * fan_in * out for fan_in, out in matmuls[1::2]) * int(arch.num_layers))
