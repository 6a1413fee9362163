"""hf QLoRA's fp32 residual stream on one GPU (or DDP): the extra HBM traffic per token it costs.

The memory model's rule (``memory_setup.qlora_fp32_activations``, read from the code): PEFT's
``prepare_model_for_kbit_training`` casts every non-``Params4bit`` parameter to fp32 (peft
``utils/other.py``); trl's SFTTrainer then puts the embedding and head back to bf16 and leaves the
norms fp32 (trl ``trainer/utils.py`` ``peft_module_casting_to_bf16``). A norm's output is then fp32,
bitsandbytes' ``Linear4bit.forward`` casts its input to the compute dtype and returns
``out.to(inp_dtype)`` (``bitsandbytes/nn/modules.py``), so q, k, v, the MLP's linears and every
residual add run on fp32 tensors. Under ZeRO-3/FSDP trl skips the cast (``is_sharded_qlora``) and
nothing here applies. The matmuls stay bf16; what grows is the memory-bound elementwise work around
them, counted here against the all-bf16 path the calibrated constants describe (per layer and
token, B = bytes read + written; widths h hidden, q/kv attention, I the MLP's):

forward
  * each 4-bit linear fed by the stream (q, k, v, gate, up, down): the input cast to bf16 (read 4,
    write 2: 6 x its input width) and the output cast back (read 2, write 4: 6 x its output width);
  * an adapter on such a linear: autocast's cast of its fp32 input (6 x input) and the fp32 + bf16
    sum of the two branches (read 4 + 2, write 4 instead of 2 + 2 + 2: 4 x output);
  * RoPE on fp32 q and k (``apply_rotary_pos_emb``: two products, the half rotation's negation and
    concatenation, the sum: 10 passes, 2 B more each: 20 x (q + kv)) and the cast of q, k, v to bf16
    for the attention kernel (6 x (q + 2 kv));
  * the residual adds: fp32 + bf16 after attention (+4 h), fp32 + fp32 after the MLP (+6 h);
  * the two RMSNorms need no casts on an fp32 input (-8 h each);
  * the gated MLP's activation and product in fp32 (+4 I, +6 I).
backward (gradients keep their tensor's dtype)
  * every cast above is cast back (6 x the same widths), an adapter's sum sends its bf16 branch a
    cast gradient (6 x output);
  * the gradients several consumers send to one fp32 tensor are summed in fp32 (read 4 + 4, write 4
    instead of 2 + 2 + 2: +6 per extra consumer: the first norm's output feeds q, k, v and their
    adapters, the second's gate and up and theirs, the stream feeds a norm and a residual add);
  * RoPE's and the attention cast's gradients (as forward), the fp32 + bf16 residual's gradient
    cast to bf16 (+6 h), the norms (-8 h each), the activation's and product's gradients (+6 I, +12 I).
With activation checkpointing the forward runs twice. The dropout of PEFT's default config is an
identity (``lora_dropout=0.0``), so no mask traffic is counted.
"""

from __future__ import annotations

from typing import Any

from gpuprice.models.block_parts import block_parts, mixer_linears, mixer_output_input, mixer_width

CAST = 6.0  # one dtype cast: read 4 + write 2 (fp32 -> bf16) or read 2 + write 4
FP32_SUM_EXTRA = 4.0  # fp32 + bf16 -> fp32 (4 + 2 + 4) against bf16 + bf16 -> bf16 (2 + 2 + 2)
FP32_GRAD_SUM_EXTRA = 6.0  # fp32 gradient accumulation (4 + 4 + 4) against bf16 (2 + 2 + 2)
ROPE_EXTRA = 20.0  # 10 elementwise passes over q and k, 2 B more per element
NORM_SAVING = 8.0  # per norm, no to(float32) / to(input_dtype) round trip on an fp32 input
RESIDUAL_FORWARD_EXTRA = 4.0 + 6.0  # fp32 + bf16 after attention, fp32 + fp32 after the MLP
RESIDUAL_BACKWARD_EXTRA = 6.0 + 2 * FP32_GRAD_SUM_EXTRA  # bf16 branch's cast, two stream sums
ACT_FORWARD_EXTRA, ACT_BACKWARD_EXTRA = 4.0 + 6.0, 6.0 + 12.0  # SiLU/GELU and the gate product

_ATTENTION = ("q", "k", "v")


def fp32_stream_bytes_per_token(arch: Any, targets: str, checkpointing: bool) -> float:
    """Extra HBM bytes per token of the fp32 residual stream (see the module docstring), summed over
    the layers; ``targets`` the adapters' linears (``qv``, ``qkvo`` or ``all``; o's input comes
    from the attention kernel in bf16, so its adapter adds nothing here)."""
    h = float(arch.hidden_size)
    q, kv = float(arch.q_width), float(arch.kv_width)
    attn_in = {"q": h, "k": h, "v": h}
    attn_out = {"q": q, "k": kv, "v": kv}
    adapted = ("q", "v") if targets == "qv" else _ATTENTION
    attention = _linears(attn_in, attn_out, adapted)
    attention_sums = FP32_GRAD_SUM_EXTRA * h * (len(_ATTENTION) + len(adapted) - 1)
    rope_and_kernel = ROPE_EXTRA * (q + kv) + CAST * (q + 2 * kv)
    common_forward = attention[0] + rope_and_kernel + (RESIDUAL_FORWARD_EXTRA - 2 * NORM_SAVING) * h
    common_backward = (
        attention[1] + attention_sums + rope_and_kernel + (RESIDUAL_BACKWARD_EXTRA - 2 * NORM_SAVING) * h
    )

    # Blocks by part (memory_features.block_parts, the rule the memory model counts by): the
    # attention terms above (with both sub-blocks' norms and residual adds) per attention block;
    # an MLP per block with one. A linear mixer's block (Gated DeltaNet, Mamba-2, NAS' h x h
    # linear) is counted like attention by its projections: the input projections fed by the
    # stream (cast in and out, their adapters under ``all``), the output projection reading the
    # mixer kernel's 16-bit output like o. A block with only an MLP brings just that sub-block's
    # norm and fp32 + fp32 add, a block with only a mixer loses them, an empty block has neither.
    # An ordinary model: every block attention + MLP, the extra terms all zero.
    parts = block_parts(arch)
    attn_layers = float(parts.attention)
    moe_layers = float(parts.moe)
    experts = float(arch.experts_per_token + arch.num_shared_experts)
    mlp_forward = mlp_backward = 0.0
    for layers, width, copies in (
        (float(parts.mlp) - moe_layers, float(arch.intermediate_size), 1.0),
        (moe_layers, float(arch.expert_width), experts),
    ):
        forward, backward = _mlp(h, width, bool(arch.gated_mlp), targets == "all")
        mlp_forward += layers * copies * forward
        mlp_backward += layers * copies * backward
    if parts.linear:
        if mixer_linears(arch) == 1:  # Nemotron-NAS' h x h linear, fed by the stream
            mixer_in, mixer_out = {"linear": h}, {"linear": h}
        else:
            names = [f"in_proj{i}" for i in range(mixer_linears(arch) - 1)]
            emitted = (mixer_width(arch) - mixer_output_input(arch)) / len(names)
            mixer_in, mixer_out = dict.fromkeys(names, h), dict.fromkeys(names, emitted)
        forward, backward = _linears(mixer_in, mixer_out, tuple(mixer_in) if targets == "all" else ())
        consumers = len(mixer_in) * (2 if targets == "all" else 1)  # of its norm's output
        backward += FP32_GRAD_SUM_EXTRA * h * (consumers - 1)
        mlp_forward += parts.linear * (forward + (RESIDUAL_FORWARD_EXTRA - 2 * NORM_SAVING) * h)
        mlp_backward += parts.linear * (backward + (RESIDUAL_BACKWARD_EXTRA - 2 * NORM_SAVING) * h)
    # The MLP sub-block's norm and fp32 + fp32 residual add (the mixer's is the rest of the
    # block's figure): added for a block with only an MLP, taken off a block with only a mixer.
    mlp_sub_forward, mlp_sub_backward = (6.0 - NORM_SAVING) * h, (FP32_GRAD_SUM_EXTRA - NORM_SAVING) * h
    mlp_only = float(arch.mixer_free_layers - parts.empty) - float(arch.mlp_free_layers - parts.empty)
    if mlp_only:
        mlp_forward += mlp_only * mlp_sub_forward
        mlp_backward += mlp_only * mlp_sub_backward
    passes = 2.0 if checkpointing else 1.0
    return (
        passes * (attn_layers * common_forward + mlp_forward) + attn_layers * common_backward + mlp_backward
    )


def _linears(
    inputs: dict[str, float], outputs: dict[str, float], adapted: tuple[str, ...]
) -> tuple[float, float]:
    """(forward, backward) extra bytes of 4-bit linears fed by the fp32 stream and their adapters."""
    forward = backward = 0.0
    for name, width_in in inputs.items():
        width_out = outputs[name]
        forward += CAST * (width_in + width_out)
        backward += CAST * (width_in + width_out)
        if name in adapted:
            forward += CAST * width_in + FP32_SUM_EXTRA * width_out
            backward += CAST * width_in + CAST * width_out
    return forward, backward


def _mlp(h: float, width: float, gated: bool, adapted: bool) -> tuple[float, float]:
    """(forward, backward) extra bytes of one MLP (one expert) on the fp32 stream."""
    up_names = ("gate", "up") if gated else ("up",)
    inputs = {name: h for name in up_names} | {"down": width}
    outputs = {name: width for name in up_names} | {"down": h}
    forward, backward = _linears(inputs, outputs, tuple(inputs) if adapted else ())
    consumers = len(up_names) * (2 if adapted else 1)  # of the second norm's output
    backward += FP32_GRAD_SUM_EXTRA * h * (consumers - 1)
    if adapted:  # the product feeds down and its adapter
        backward += FP32_GRAD_SUM_EXTRA * width
    act_forward = ACT_FORWARD_EXTRA if gated else 4.0
    act_backward = ACT_BACKWARD_EXTRA if gated else 6.0
    return forward + act_forward * width, backward + act_backward * width
