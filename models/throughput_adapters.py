"""PEFT LoRA adapters kept in fp32 beside a bf16 base without autocast: their HBM traffic per token.

PEFT (>= 0.12, ``LoraConfig(autocast_adapter_dtype=True)``, the default) upcasts adapter weights
that would be bf16/fp16 to fp32. Under ``--precision bf16-true`` (the model loaded or cast to bf16,
no autocast) every targeted linear then runs, per token (``peft/tuners/lora/layer.py``,
``Linear.forward``: ``x = self._cast_input_dtype(x, lora_A.weight.dtype)``, ``result = result +
lora_B(lora_A(dropout(x))) * scaling``, ``result = result.to(torch_result_dtype)``), as separate
memory-bound kernels beside the base matmul:

forward, per input element (d_in): the bf16 -> fp32 cast (read 2, write 4) and lora_A's read of
the fp32 copy (4): 10 B; per output element (d_out): lora_B's fp32 output (write 4), ``* scaling``
(read 4, write 4), the bf16 + fp32 sum promoted to fp32 (read 2 + 4, write 4) and the cast back
(read 4, write 2): 28 B.
backward: per output element the cast's and the sum's gradients (read 2 write 4, read 4 write 2),
``* scaling`` (read 4, write 4) and lora_B's two gradient matmuls reading the fp32 gradient (4 + 4):
28 B; per input element lora_A's input gradient (write 4) and weight gradient (read the saved fp32
input, 4), the cast's gradient (read 4, write 2) and its sum into the base layer's input gradient
(read 2 + 2, write 2): 20 B.
With activation checkpointing the forward runs twice. LoRA's dropout is PEFT's default 0.0 (an
identity); the adapter matmuls' FLOPs (rank x width) are bounded by these reads.

Under ``bf16-mixed`` the base is fp32 and autocast runs the adapters' matmuls in bf16 (no fp32
round trip per projection beyond what the calibrated ``lora_efficiency`` carries); the other
frameworks (torchtune, litgpt, Unsloth) build their own LoRA modules in the model's dtype.
"""

from __future__ import annotations

from typing import Any

from gpuprice.models.architectures import ModelArch
from gpuprice.models.block_parts import block_parts, mixer_linears, mixer_output_input, mixer_width

FORWARD_IN_BYTES, FORWARD_OUT_BYTES = 10.0, 28.0
BACKWARD_IN_BYTES, BACKWARD_OUT_BYTES = 20.0, 28.0


def fp32_adapters(framework: str, method: str, precision: str) -> bool:
    """Do PEFT's fp32 adapters sit on a bf16 base without autocast (transformers + PEFT under
    bf16-true)?"""
    return framework == "hf" and method in ("lora", "qlora") and precision == "bf16-true"


def adapter_widths(arch: ModelArch, targets: str) -> tuple[float, float]:
    """(sum of input widths, sum of output widths) of the linears one token passes through that
    carry an adapter, over the blocks that hold them (``memory_features.block_parts``, the rule
    ``lora_params`` counts adapters by): ``qv`` the query and value projections, ``qkvo`` the four
    attention projections, both only in softmax-attention blocks; ``all`` every linear of the
    blocks (q, k, v, o; the MLP, or a MoE token's active and shared experts, in blocks with one;
    a linear mixer's projections, ``mixer_linears``: its input projections read h, its output
    projection reads ``mixer_output_input`` and writes h). A latent MoE's routed experts read and
    write the latent, entered and left through two h x latent projections."""
    h = float(arch.hidden_size)
    q, kv, out = float(arch.q_width), float(arch.kv_width), float(arch.attn_out_width)
    parts = block_parts(arch)
    attn_layers = float(parts.attention + arch.cross_attention_layers)
    if targets == "qv":
        return attn_layers * 2 * h, attn_layers * (q + kv)
    ins, outs = attn_layers * (3 * h + out), attn_layers * (q + 2 * kv + h)
    if targets == "qkvo":
        return ins, outs
    mats_in = 2 if arch.gated_mlp else 1  # gate and up read h; down reads the MLP width
    moe_layers = float(parts.moe)
    dense_layers = float(parts.mlp) - moe_layers
    routed, shared = float(arch.experts_per_token), float(arch.num_shared_experts)
    experts = routed + shared
    latent = float(arch.moe_latent_size or 0)
    if latent:  # routed experts at the latent width (their h x latent way in and out below)
        experts = shared
    for layers, width, copies in (
        (dense_layers, float(arch.intermediate_size), 1.0),
        (moe_layers, float(arch.expert_width), experts),
    ):
        ins += layers * copies * (mats_in * h + width)
        outs += layers * copies * (mats_in * width + h)
    if latent:
        width = float(arch.expert_width)
        ins += moe_layers * (routed * (mats_in * latent + width) + h + latent)
        outs += moe_layers * (routed * (mats_in * width + latent) + latent + h)
    if parts.linear:
        reads = mixer_output_input(arch)
        ins += parts.linear * ((mixer_linears(arch) - 1) * h + reads)
        outs += parts.linear * (mixer_width(arch) - reads + h)
    return ins, outs


def adapter_bytes_per_token(arch: Any, targets: str, checkpointing: bool) -> float:
    """HBM bytes per token of the fp32 adapter path (see the module docstring)."""
    ins, outs = adapter_widths(arch, targets)
    passes = 2.0 if checkpointing else 1.0
    forward = FORWARD_IN_BYTES * ins + FORWARD_OUT_BYTES * outs
    return passes * forward + BACKWARD_IN_BYTES * ins + BACKWARD_OUT_BYTES * outs
