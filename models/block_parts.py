"""How a decoder's blocks divide into parts: softmax attention, a linear/SSM mixer, an MLP (dense or
MoE), or none (hybrid decoders: Qwen3-Next / Qwen3.5's Gated DeltaNet, Nemotron-H's Mamba-2,
Nemotron-NAS' skipped or linearised parts). One home for the block anatomy both models read: the
memory model's saved tensors and adapters (``memory_features``) and the throughput model's adapter
and fp32-stream traffic (``throughput_adapters``, ``throughput_fp32_stream``). Ordinary models have
every block attention + MLP.
"""

from __future__ import annotations

from typing import NamedTuple

from gpuprice.models.architectures import ModelArch


class BlockParts(NamedTuple):
    """How many blocks hold each part, from the hybrid fields of :class:`ModelArch` (the same
    split its parameter count uses, ``ModelArch._hybrid_blocks_params``). A block may hold a
    softmax attention, a linear/SSM mixer or no mixer, and an MLP (dense or MoE) or none; counting
    by part needs no block-by-block list (Nemotron-NAS blocks with neither part are in both
    ``mixer_free_layers`` and ``mlp_free_layers``). An ordinary model: every block is attention +
    MLP."""

    attention: int  # blocks with softmax attention
    linear: int  # blocks with a linear/SSM mixer (Gated DeltaNet, Mamba-2, NAS h x h linear)
    mlp: int  # blocks with an MLP or MoE
    moe: int  # of those, MoE blocks
    both: int = 0  # blocks with a mixer (softmax or linear) and an MLP/MoE
    empty: int = 0  # blocks with neither (Nemotron-NAS: an identity)


def block_parts(arch: ModelArch) -> BlockParts:
    attention = arch.num_layers - arch.linear_attention_layers - arch.mixer_free_layers
    mlp = arch.num_layers - arch.mlp_free_layers
    moe = mlp - arch.dense_layers if arch.is_moe else 0
    # a block is mixer-free, MLP-free, empty (both) or holds both parts: Nemotron-H's one-part
    # blocks give none with both, Qwen3-Next's every one, Nemotron-NAS' those not listed as free
    both = arch.num_layers - arch.mixer_free_layers - arch.mlp_free_layers + arch.empty_layers
    return BlockParts(attention, arch.linear_attention_layers, mlp, moe, both, arch.empty_layers)


def attention_share(arch: ModelArch) -> float:
    """Share of the blocks that run softmax attention: 1 for an ordinary model, 0 for a Mamba
    stack, 1/4 for Qwen3-Next (three Gated DeltaNet blocks to one attention block). Attention's
    s x s work (its FLOPs, eager scores, the explicit-mask traffic) happens in those blocks only;
    a per-layer figure times ``num_layers`` times this share counts just them."""
    return block_parts(arch).attention / max(arch.num_layers, 1)


def decoder_layers(arch: ModelArch) -> int:
    """Decoder layers as the modelling code runs them: the blocks, a parallel mixer block
    (Falcon-H1's Mamba-2 beside its attention) counted with the layer it runs in. Fixed per-layer
    costs (kernel launches, the layer's Python) and the throughput's attention share go by these."""
    return arch.num_layers - arch.parallel_mixer_blocks


def attention_per_decoder_layer(arch: ModelArch) -> float:
    """Softmax-attention blocks per decoder layer (1 for Falcon-H1, whose every layer attends)."""
    return block_parts(arch).attention / max(decoder_layers(arch), 1)


def input_blocks(arch: ModelArch) -> int:
    """Blocks whose input is a tensor of its own: every block but the empty ones (at least one).

    Recomputation checkpoints per decoder layer, empty ones too: Nemotron-NAS' modelling code
    (NVIDIA's DeciLM ``modeling_decilm.py``, ``DeciLMModel.forward``) passes every layer to
    ``self._gradient_checkpointing_func(decoder_layer.__call__, hidden_states, ...)``, and an
    empty ``DeciLMDecoderLayer`` (no-op attention and FFN) returns ``hidden_states`` itself. The
    wrapper of an empty block therefore saves the very tensor the next block's wrapper saves
    (torch's reentrant ``CheckpointFunction`` keeps its inputs, and an input returned as-is comes
    back as a view of the same storage; the non-reentrant one keeps references): no bytes of its
    own. Likewise an empty block runs no norm, so it keeps no fp32 stream input (QLoRA) and
    dequantizes nothing. Counting the non-empty blocks is exact to one tensor (the embeddings'
    output is the first block's input; a non-empty block's output is kept only if a block that
    computes something follows it)."""
    # A parallel mixer block reads its layer's input: no tensor of its own (Falcon-H1).
    return max(arch.num_layers - arch.empty_layers - arch.parallel_mixer_blocks, 1)


def is_hybrid(arch: ModelArch) -> bool:
    """Do the blocks differ by part (a linear mixer, a mixer-free or an MLP-free block)?"""
    return bool(arch.linear_attention_layers or arch.mixer_free_layers or arch.mlp_free_layers)


def mixer_linears(arch: ModelArch) -> int:
    """Linear layers of one linear/SSM mixer (PEFT's ``all-linear`` adapts each): Nemotron-NAS'
    ``replace_with_linear`` is one h x h linear; Qwen3-Next's Qwen3NextGatedDeltaNet has
    in_proj_qkvz, in_proj_ba and out_proj, Qwen3.5's Qwen3_5GatedDeltaNet in_proj_qkv, in_proj_z,
    in_proj_b, in_proj_a and out_proj (transformers modeling_qwen3_next.py / modeling_qwen3_5.py);
    Nemotron-H's Mamba-2 mixer in_proj and out_proj."""
    if arch.linear_attention_params == arch.hidden_size * arch.hidden_size:
        return 1
    if arch.model_type.startswith("qwen3_5"):
        return 5
    return 3 if arch.model_type.startswith("qwen3_next") else 2


def mixer_width(arch: ModelArch) -> float:
    """One linear/SSM mixer's weights over the hidden size: the width its input projections emit
    plus the width its output projection reads (exact for its matrices; the conv and per-head
    vectors add a few hundred elements of ~16,000 on Qwen3-Next). The mixer's tensors are counted
    like attention's by these projections: the layouts differ by family and ModelArch keeps only
    the weight count."""
    return arch.linear_attention_params / arch.hidden_size


def mixer_output_input(arch: ModelArch) -> float:
    """The width a linear mixer's output projection reads (the rest of :func:`mixer_width` is
    what its input projections emit): h for Nemotron-NAS' one h x h linear; Mamba-2's out_proj
    reads d_inner of the ~3 d_inner its in_proj emits plus it (2 d_inner + 2 groups x state +
    heads), so a third; a Gated DeltaNet's out_proj reads its value heads, nv x dv (when the
    config gave them; else the same third)."""
    if mixer_linears(arch) == 1:
        return float(arch.hidden_size)
    if arch.linear_num_value_heads and arch.linear_value_head_dim:
        return float(arch.linear_num_value_heads * arch.linear_value_head_dim)
    return mixer_width(arch) / 3.0
