"""What a training recipe moves per parameter: communication, optimizer-step and precision factors.

The throughput model (:mod:`gpuprice.models.throughput_core`) turns these byte counts into time;
this module only says, for a method x sharding x precision x optimizer, how many bytes each GPU
exchanges or streams through HBM per parameter, and rejects unknown names with a one-line error.
"""

from __future__ import annotations

from typing import Literal

from gpuprice.errors import BadInput
from gpuprice.models.choices import METHODS, SHARDINGS
from gpuprice.models.frameworks import DEFAULTS

# "model_parallel" (Megatron TP/PP) only occurs in benchmark rows; the product shards with ZeRO/FSDP.
Sharding = Literal["none", "zero2", "zero3", "fsdp", "model_parallel"]

# Bytes moved per parameter per GPU (before the (n-1)/n ring factor), BF16 comms, split into what
# happens every micro-batch and what happens once per optimizer step (gradient accumulation):
#   full + zero3/fsdp: all-gather for forward and backward + reduce-scatter of gradients, every
#     micro-batch (DeepSpeed ZeRO-3 and FSDP reduce each micro-batch's gradients) = 2+2+2
#   full + zero2: reduce-scatter of gradients every micro-batch (DeepSpeed reduces into the fp32
#     partition each micro-step) + all-gather of the updated parameters once per step = 2 | 2
#   full + none (DDP): ring all-reduce (the gradients twice) once per step: HF Trainer/accelerate
#     and torchrun loops skip the sync on accumulation micro-batches (DDP.no_sync) = 0 | 2+2
#   adapters + zero3/fsdp: the frozen base is gathered for forward and backward (2 x weight bytes)
#   adapters otherwise: only the adapters' gradients (negligible)
FULL_COMM_BYTES = {"zero3": 6.0, "fsdp": 6.0, "zero2": 2.0, "none": 0.0, "model_parallel": 0.0}
FULL_STEP_COMM_BYTES = {"zero3": 0.0, "fsdp": 0.0, "zero2": 2.0, "none": 4.0, "model_parallel": 0.0}
# Optimizer-state sharding: the step updates 1/n of the parameters on each GPU.
SHARDED_STATES = frozenset({"zero2", "zero3", "fsdp", "model_parallel"})

# HBM bytes per trainable parameter in one optimizer step (fp32 states; half for bf16-true),
# counted from the kernels each implementation launches (torch 2.x torch/optim/adam.py):
#   foreach AdamW (_multi_tensor_adam, torch.optim.AdamW's default on CUDA): weight decay
#     mul_ (r4 w4), lerp_ of exp_avg (r8 w4), mul_ + addcmul_ of exp_avg_sq (r4 w4, r8 w4),
#     sqrt / div_ / add_ eps on a temporary list (r4 w4 each), addcdiv_ into the parameter
#     (r12 w4): 80 B
#   fused AdamW (one kernel): read param, grad, exp_avg, exp_avg_sq, write three: 28 B
#   8-bit AdamW (bitsandbytes, one kernel, 1-byte states): 4+4+1+1 read, 4+1+1 written: 16 B
#   SGD with momentum (foreach): mul_ + add_ of the buffer, add_ into the parameter: 28 B
# plus the gradient-norm clip where the framework's default loop runs one (clip_grad_bytes).
OPTIMIZER_STEP_BYTES = {
    ("adamw", "foreach"): 80.0,
    ("adamw", "fused"): 28.0,
    ("adamw8bit", "foreach"): 16.0,
    ("adamw8bit", "fused"): 16.0,
    ("paged_adamw8bit", "foreach"): 16.0,
    ("paged_adamw8bit", "fused"): 16.0,
    # bitsandbytes' 32-bit PagedAdamW: one optimizer_update_32bit kernel per tensor on fp32 states
    # (as fused AdamW: 28 B); paging states back from CPU RAM is not counted here.
    ("paged_adamw", "foreach"): 28.0,
    ("paged_adamw", "fused"): 28.0,
    ("sgd", "foreach"): 28.0,
    ("sgd", "fused"): 28.0,
}
# Gradient-norm clipping, read from the code (see models/mfu_calibration.md, "The optimizer step's
# gradient clipping"): torch.nn.utils.clip_grad_norm_ reads every gradient for the norm
# (torch._foreach_norm) and then ALWAYS rescales them, torch._foreach_mul_(grads, clip_coef_clamped),
# even when the coefficient clamps to 1, to avoid a host sync (pytorch/pytorch
# torch/nn/utils/clip_grad.py @01a57d87 _clip_grads_with_norm_; unconditional since pytorch#61042,
# torch 1.10, so in every torch 2.x): one read + one read and write of each gradient, in the
# gradients' dtype (the parameters': fp32 under mixed precision, 16-bit under bf16-true).
# DeepSpeed ZeRO clips inside its optimizer: the norm over the 16-bit gradient partitions
# (scaled_global_norm: get_grad_norm_direct(self.averaged_gradients[i], ...)), then
# unscale_and_clip_grads multiplies the fp32 gradient partition unconditionally
# (grad.data.mul_(1. / combined_scale)) (deepspeedai/DeepSpeed deepspeed/runtime/zero/
# stage_1_and_2.py @02aa38c3 step; ZeRO-3 counted the same). Which loops clip by default:
# frameworks.FrameworkDefaults.clips_grad_norm.
DEEPSPEED_SHARDINGS = frozenset({"zero2", "zero3"})
NF4_BYTES_PER_PARAM = 0.5625  # 4 bits + one fp32 absmax per 64 weights (QLoRA paper)


# Matmul rate of a precision regime against the BF16 tensor rate: 1 for 16-bit tensor math; 0 marks
# fp32, which runs on the CUDA cores at the GPU's own share (gpu_hardware.fp32_share: PyTorch keeps
# TF32 off for matmuls by default); -1 marks FP8 (Transformer Engine's gain where the GPU has FP8).
PRECISION_FACTORS = {"fp32": 0.0, "bf16-mixed": 1.0, "bf16-true": 1.0, "fp16-mixed": 1.0, "fp8": -1.0}


def precision_factor(precision: str, method: str = "full") -> float:
    """Compute-rate factor (or marker, see PRECISION_FACTORS) of a precision regime for ``method``.

    QLoRA under fp32 (the model loaded in fp32, no autocast) keeps its 4-bit matmuls at the 16-bit
    rate: bitsandbytes dequantises to ``bnb_4bit_compute_dtype`` and multiplies there, bf16 in the
    QLoRA recipes (transformers' and PEFT's examples); its attention stays fp32
    (throughput_attention.fp32_attention)."""
    try:
        factor = PRECISION_FACTORS[precision]
    except KeyError:
        raise BadInput(f"unknown precision {precision!r}; valid: {', '.join(PRECISION_FACTORS)}") from None
    return 1.0 if precision == "fp32" and method == "qlora" else factor


def comm_bytes_per_param(method: str, sharding: str, precision: str) -> float:
    """Bytes per parameter each GPU exchanges per micro-batch (see FULL_COMM_BYTES)."""
    scale = 2.0 if precision == "fp32" else 1.0
    if method == "full":
        return FULL_COMM_BYTES[sharding] * scale
    if sharding in ("zero3", "fsdp"):
        weight_bytes = NF4_BYTES_PER_PARAM if method == "qlora" else 2.0 * scale
        return 2.0 * weight_bytes
    return 0.0


def step_comm_bytes_per_param(method: str, sharding: str, precision: str) -> float:
    """Bytes per parameter each GPU exchanges once per optimizer step (see FULL_STEP_COMM_BYTES)."""
    scale = 2.0 if precision == "fp32" else 1.0
    return FULL_STEP_COMM_BYTES[sharding] * scale if method == "full" else 0.0


def gradient_bytes(precision: str) -> float:
    """Bytes of one gradient element: the parameters' dtype (bf16 under bf16-true; fp32 parameters,
    hence fp32 gradients, under mixed precision, fp8 and fp32)."""
    return 2.0 if precision == "bf16-true" else 4.0


def clip_grad_bytes(precision: str = "bf16-mixed", framework: str = "hf", sharding: str = "none") -> float:
    """HBM bytes per trainable parameter of the gradient-norm clip (where the framework's default
    loop clips: frameworks.FrameworkDefaults.clips_grad_norm): the norm's
    read plus the rescale's read and write of every gradient (torch clips even at coefficient 1).
    DeepSpeed ZeRO (``zero2``/``zero3``) takes the norm over its 16-bit gradient partitions and
    rescales the fp32 partition; everything else clips the parameters' gradients in their dtype.
    0 where the framework's default loop does not clip."""
    if not DEFAULTS[framework].clips_grad_norm:
        return 0.0
    grad = gradient_bytes(precision)
    if deepspeed_zero(framework, sharding):
        norm = 4.0 if precision == "fp32" else 2.0
        return norm + 2.0 * 4.0
    return grad + 2.0 * grad


def deepspeed_zero(framework: str, sharding: str) -> bool:
    """Does HF Trainer shard with DeepSpeed ZeRO here (``--sharding zero2/zero3``; the other
    frameworks' ``zero3`` is FSDP)?"""
    return framework == "hf" and sharding in DEEPSPEED_SHARDINGS


# DeepSpeed ZeRO's step around its FusedAdam, per parameter of the partition (deepspeed v0.14.2
# runtime/zero/stage3.py _prepare_fp32_grad_for_sub_group and _optimizer_step /
# _reassign_or_swap_out_partitioned_parameters; stage_1_and_2.py step does the same): the 16-bit
# gradient partitions flattened (read 2, write 2) and cast to fp32 (read 2, write 4), and after the
# update the fp32 master copied into the 16-bit parameters (read 4, write 2). Under fp32 the
# flatten moves 4 + 4 and there is no cast or copy.
DEEPSPEED_STEP_COPY_BYTES = {"16-bit": 4.0 + 6.0 + 6.0, "fp32": 8.0}


def optimizer_step_bytes(
    optimizer: str = "adamw",
    adamw_step: str = "foreach",
    precision: str = "bf16-mixed",
    framework: str = "hf",
    sharding: str = "none",
) -> float:
    """HBM bytes per trainable parameter of one optimizer step, gradient clipping included
    (OPTIMIZER_STEP_BYTES, 16-bit states under bf16-true move half the bytes, + clip_grad_bytes).
    Under DeepSpeed ZeRO (``deepspeed_zero``) "adamw" is DeepSpeed's FusedAdam on the fp32
    partition, with the gradient flatten, cast and parameter copy around it."""
    deepspeed = deepspeed_zero(framework, sharding)
    if deepspeed and optimizer == "adamw":
        adamw_step = "fused"
    try:
        base = OPTIMIZER_STEP_BYTES[(optimizer, adamw_step)]
    except KeyError:
        valid = sorted({o for o, _ in OPTIMIZER_STEP_BYTES})
        raise BadInput(f"unknown optimizer {optimizer!r}; valid: {', '.join(valid)}") from None
    # bitsandbytes' states are 8-bit or fp32 whatever the parameter dtype
    states = 0.5 if precision == "bf16-true" and optimizer in ("adamw", "sgd") else 1.0
    copies = DEEPSPEED_STEP_COPY_BYTES["fp32" if precision == "fp32" else "16-bit"] if deepspeed else 0.0
    return base * states + copies + clip_grad_bytes(precision, framework, sharding)


def check_config(method: str, sharding: str, gpus: int, seq_len: int, micro_batch: int) -> None:
    """Reject an unknown method or sharding, or a count below one, naming the valid choices."""
    if method not in METHODS:
        raise BadInput(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    if sharding not in FULL_COMM_BYTES:
        raise BadInput(f"unknown sharding {sharding!r}; valid: {', '.join(SHARDINGS)}")
    for name, value in (("gpus", gpus), ("seq_len", seq_len), ("micro_batch", micro_batch)):
        if value < 1:
            raise BadInput(f"{name} must be at least 1 (got {value})")
