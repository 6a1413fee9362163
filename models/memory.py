"""Peak training memory per GPU: will this model, method and setup fit on that GPU?

    peak = weights + gradients + optimizer + activations + logits + overhead          (per GPU)

All sizes are GB = 1e9 bytes. Sources of every formula: ``/work/shared/reference/memory-formulas.md``
(copied facts are cited inline); the calibrated constants and the measured accuracy are in
``models/memory_calibration.md``.

* weights: trainable working copy (4 B fp32, 2 B bf16) + frozen base. Frozen base under
  ``bf16-mixed`` is the fp32 module plus the bf16 copies autocast saves for backward (litgpt /
  AMP semantics: 4 + 2 B); QLoRA stores block linears in NF4 (4.5 bits with an fp32 absmax per 64
  weights, 4.127 bits with double quantization, Dettmers et al. 2023) and keeps embeddings, head
  and norms in 16-bit.
* gradients: trainable parameters only (4 B under fp32/bf16-mixed, 2 B under bf16-true).
* optimizer: AdamW 8 B (2 x fp32) or 4 B (2 x bf16 under bf16-true), 8-bit AdamW 2 B plus one fp32
  scale per 2048 values, SGD momentum 4/2 B; ``bf16-mixed`` adds the 4 B fp32 master copy here
  (ZeRO counts it as optimizer state: K = 12). Paged 8-bit AdamW has the same steady-state size.
* activations: per layer from the saved tensors of a pre-norm block (hidden, q/k/v, attention
  output, MLP intermediates; gated MLPs keep four f-wide tensors). FlashAttention/SDPA is assumed,
  so there is no s^2 score term. Frozen linears do not keep their inputs (LoRA on q,v keeps fewer
  MLP tensors). K/V are counted at query width: SDPA paths repeat GQA heads before attention.
  Gradient checkpointing keeps each layer's input plus one layer being recomputed.
* logits: b s V x 12 B where the loss upcasts (fp32 log-softmax + its gradient + the input
  gradient at the start of backward), 6 B for a 16-bit loss, 2 B chunked, 0 fused; plus, for the
  reserved/device metrics under variable-length batches, one cached earlier loss region.
* optimizer step: weights + gradients + states + foreach AdamW's state-sized temporary, when that
  moment is larger than the backward peak. Eager attention: seq x seq scores per head.
* overhead: CUDA context (visible to nvidia-smi, not to PyTorch's allocator counters), allocator
  fragmentation on the dynamic terms, NCCL/bucket buffers on multi-GPU jobs, QLoRA dequantization
  buffers.
* sharding over N GPUs: ZeRO-2 divides gradients and optimizer state by N; ZeRO-3/FSDP divide
  weights too and add the unsharded units in flight (current + prefetched block, and the current
  block's gradients); ``offload`` (ZeRO-3 with parameter and optimizer offload, FSDP CPU offload)
  keeps only the in-flight units on the GPU. Activations are never divided (data parallel).

* frameworks (``models/frameworks.py``): loss kernel (whole fp32 logits, chunked, fused), eager vs
  fused elementwise kernels, the QLoRA path, FSDP2's sharded fp32 master, litgpt's separate LM
  head and whole-block FSDP gradients; activation checkpointing none / selective (op-level) /
  full; activation offloading; optimizer in backward.
* gradient accumulation (default on): off, gradients take the memory backward frees
  (``zero_grad(set_to_none=True)``), so the peak holds max(gradients, activations + logits).

The arithmetic lives in one NumPy kernel (:func:`_kernel`) that :func:`estimate_memory` runs on
scalars and :func:`fit_sweep` on whole grids, so both paths agree bit for bit. Why this module is
over ~400 lines: the per-setup features, that kernel and the sweep are one contract (same floats
on every path); the setup and estimate types live in :mod:`gpuprice.models.memory_setup`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpuprice.errors import BadInput
from gpuprice.models.architectures import ModelArch
from gpuprice.models.choices import (  # re-exported: callers import the vocabulary from here too
    LORA_TARGETS,
    MEMORY_METRICS,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    SHARDINGS,
    SWEEP_STRATEGIES,
    LoraTargets,
    MemoryMetric,
    Method,
    Optimizer,
    Precision,
)
from gpuprice.models.fit_verdict import VERDICTS, planning_gb, verdict_codes
from gpuprice.models.frameworks import DEFAULTS
from gpuprice.models.memory_setup import (  # re-exported: the public names of the memory model
    _STRATEGY_CODE,
    BREAKDOWN_TERMS,
    DEFAULT_CONSTANTS,
    GB,
    GIB,
    Breakdown,
    MemoryConstants,
    MemoryEstimate,
    Sharding,
    TrainingSetup,
    assumptions,
    keeps_scores,
    one_line_error,
)

__all__ = [
    "BREAKDOWN_TERMS",
    "DEFAULT_CONSTANTS",
    "GB",
    "GIB",
    "LORA_TARGETS",
    "MEMORY_METRICS",
    "METHODS",
    "OPTIMIZERS",
    "PRECISIONS",
    "SHARDINGS",
    "SWEEP_COLUMNS",
    "SWEEP_STRATEGIES",
    "Breakdown",
    "LoraTargets",
    "MemoryConstants",
    "MemoryEstimate",
    "MemoryMetric",
    "Method",
    "Optimizer",
    "Precision",
    "PreparedSetups",
    "Sharding",
    "TrainingSetup",
    "assumptions",
    "estimate_memory",
    "fit_sweep",
    "lora_params",
    "one_line_error",
    "per_gpu_gb_many",
]

# ----- fixed facts (sources in the module docstring) ---------------------------------------------
NF4_BYTES = 4.5 / 8  # 4-bit + fp32 absmax per 64 weights
NF4_DQ_BYTES = 4.127 / 8  # double quantization: FP8 absmax, second-level block 256
EIGHT_BIT_STATE_BYTES = 2 + 2 * 4 / 2048  # two 8-bit states + fp32 block scales (block 2048)
# Bytes per logit alive at the loss's peak, counted from the kernels (memory_calibration.md):
# * upcast (``logits.float()`` or autocast's fp32 cross_entropy): the forward holds the 16-bit
#   logits, their fp32 copy and the fp32 log-softmax (2 + 4 + 4); backward starts with the saved
#   fp32 log-softmax, nll_loss's fp32 gradient and log_softmax_backward's fp32 result (4 + 4 + 4).
# * 16-bit loss (F.cross_entropy on bf16 logits, no autocast): 16-bit logits + log-softmax (2 + 2)
#   forward, saved log-softmax + gradient + input gradient (2 + 2 + 2) in backward.
# * fp32 head (fp32 training, PEFT's fp32 lm_head under QLoRA): 4 + 4 forward, 4 + 4 + 4 backward.
LOGIT_BYTES_UPCAST = 12.0
LOGIT_BYTES_16 = 6.0
LOGIT_BYTES_32 = 12.0
# Bytes per saved activation element: the compute dtype (the calibrated factor absorbs the fp32
# norm statistics and the odd upcast tensor autocast keeps).
ACT_BYTES = {"fp32": 4.0, "bf16-mixed": 2.0, "bf16-true": 2.0}
# Frozen base weights of LoRA: the module dtype (bf16-mixed = 16-bit base + fp32 adapters, as
# PEFT + AMP, DeepSpeed and torchtune run it).
FROZEN_BYTES = {"fp32": 4.0, "bf16-mixed": 2.0, "bf16-true": 2.0}


# ----- per-setup features (independent of GPU count and sharding) --------------------------------
def lora_params(arch: ModelArch, rank: int, targets: str) -> int:
    """Adapter parameters: r (d_in + d_out) per adapted matrix, over layers (and experts).

    ``qv`` adapts the query and value projections; ``all`` every linear in the blocks (q, k, v, o
    and the MLP / every expert's MLP), as PEFT's ``all-linear`` does."""
    h = arch.hidden_size
    attn_qv = rank * (h + arch.q_width) + rank * (h + arch.kv_width)
    attn_layers = arch.num_layers + arch.cross_attention_layers
    if targets == "qv":
        return attn_layers * attn_qv
    attn_all = attn_qv + rank * (h + arch.kv_width) + rank * (arch.attn_out_width + h)
    mats = 3 if arch.gated_mlp else 2

    def mlp(width: int) -> int:
        return mats * rank * (h + width)

    moe_layers = arch.num_layers - arch.dense_layers if arch.is_moe else 0
    dense_layers = arch.num_layers - moe_layers
    total = attn_layers * attn_all + dense_layers * mlp(arch.intermediate_size)
    total += moe_layers * (arch.num_experts + arch.num_shared_experts) * mlp(arch.expert_width)
    return total


def _framework_arch(setup: TrainingSetup) -> ModelArch:
    """The shape as the framework builds it: litgpt's ``GPT`` always creates ``lm_head =
    nn.Linear(...)`` next to ``wte = nn.Embedding(...)`` (``litgpt/model.py``), so a checkpoint
    with tied embeddings (Gemma, Llama-3.2) gets a separate head unless ``tie_embeddings`` is set."""
    if DEFAULTS[setup.framework].unties_embeddings and setup.arch.tied_embeddings:
        return setup.arch.model_copy(update={"tied_embeddings": False})
    return setup.arch


def _activation_elements(setup: TrainingSetup) -> tuple[float, float]:
    """Saved elements per token per layer (before the calibrated activation factor), as
    (no recomputation, op-level selective recomputation).

    No recomputation: what autograd keeps for one pre-norm block. A frozen ``nn.Linear`` keeps no
    input for a weight gradient, so LoRA on q,v saves fewer MLP tensors; bitsandbytes' 4-bit
    matmul saves its input whenever any gradient flows (QLoRA keeps every linear input like full
    fine-tuning), torchao's NF4 linear does not. Eager RMSNorm keeps an fp32 copy of its input
    (and, with a trainable weight, the normalised 16-bit tensor); fused kernels (torch.compile,
    Unsloth's Triton norms and SwiGLU) keep neither, nor the activation output of a gated MLP.

    Selective (torchtitan's op-level policy): the block input, the attention (SDPA) output and
    every second matmul output are saved; everything else is recomputed in backward."""
    arch = _framework_arch(setup)
    defaults = DEFAULTS[setup.framework]
    h = arch.hidden_size
    method, targets, rank = setup.method, setup.lora_targets, setup.lora_rank
    fused = setup.compile or defaults.fused_kernels
    qlora_inputs = method == "qlora" and defaults.qlora_saves_linear_inputs
    linear_inputs_saved = method == "full" or qlora_inputs or targets == "all"
    # attention: norm input, norm output (feeds q,k,v), q, K/V at query width, output
    attention = 2 * h + 3 * arch.q_width + arch.attn_out_width
    if arch.is_moe:
        width = (arch.experts_per_token + arch.num_shared_experts) * arch.expert_width
        dispatch = arch.experts_per_token * h  # tokens copied into expert batches
    else:
        width, dispatch = arch.intermediate_size, 0
    activation_out = 0 if fused else width  # act(gate) / act(fc1), recomputed by fused kernels
    if arch.gated_mlp:  # gate, up always; norm output and product only as linear inputs
        mlp = (2 * h + 3 * width) if linear_inputs_saved else (h + 2 * width)
    else:  # fc1 output always; norm output only as a linear input
        mlp = (2 * h + width) if linear_inputs_saved else (h + 0 * width)
    mlp += activation_out
    norms = 0.0
    if not fused:
        upcast = 0.0 if setup.precision == "fp32" else 2.0  # fp32 copy = two 16-bit elements
        normalised = 1.0 if method == "full" else 0.0
        norms = arch.norms_per_layer * (upcast + normalised) * h
    adapters = 0
    if method != "full":  # x @ A intermediates of each adapted matrix
        adapters = rank * (2 if targets == "qv" else (4 + (3 if arch.gated_mlp else 2)))
    per_layer = attention + mlp + dispatch + adapters + norms
    if arch.cross_attention_layers:  # T5 decoder blocks also attend over the encoder output
        per_layer += (
            arch.cross_attention_layers / arch.num_layers * (h + 2 * arch.q_width + arch.attn_out_width)
        )
    mlp_mm = (2 * width if arch.gated_mlp else width) + h  # gate/up (or fc1) and down (or fc2) outputs
    matmul_outputs = arch.q_width + 2 * arch.kv_width + h + mlp_mm
    selective = h + arch.attn_out_width + 0.5 * matmul_outputs + dispatch + adapters
    return float(per_layer), float(min(selective, per_layer))


_FEATURES = (
    "train_w",  # trainable working weights, bytes (unsharded)
    "train_w_sharded",  # the same under ZeRO-3/FSDP (0 when the sharded fp32 params are the master)
    "frozen_w",  # frozen base weights, bytes
    "grads",  # gradient bytes
    "grads_sharded",  # gradient bytes ZeRO-3/FSDP shards (whole blocks when a unit mixes frozen weights)
    "optim",  # optimizer bytes (incl. fp32 master under bf16-mixed)
    "unit_w",  # bytes of the largest unit gathered by ZeRO-3/FSDP
    "unit_g",  # its gradient bytes (full fine-tuning)
    "act_layer",  # saved activation bytes of one layer (no checkpointing), before the factor
    "act_selective",  # bytes one layer keeps under op-level selective recomputation
    "act_ckpt",  # bytes kept per layer under full recomputation (its input)
    "layers",  # layers whose saved tensors stay on the GPU
    "ac",  # 0 none, 1 selective, 2 full
    "logits",  # logits / loss buffer bytes
    "dequant",  # bytes of one block's linears dequantized to bf16 (QLoRA), else 0
    "metric",  # 0 device, 1 reserved, 2 allocated
    "accumulates",  # 1: gradients coexist with a forward's activations; 0: they replace them
    "variable",  # 1: batches vary in length (the allocator keeps a previous loss region cached)
    "step_temp",  # bytes of the optimizer step's temporaries (foreach AdamW: one state-sized list)
    "step_temp_sharded",  # the same under ZeRO/FSDP (0 where DeepSpeed's FusedAdam steps in place)
    "scores",  # bytes of attention scores one layer keeps for backward (eager / explicit scores)
    "scores_bwd",  # bytes alive while one layer's score backward runs, plus the shared 4D mask
)
_METRIC_CODE = {"device": 0, "reserved": 1, "allocated": 2}
_AC_CODE = {"none": 0, "selective": 1, "full": 2}
# Bytes per logit element alive at the loss's peak, (16-bit, fp32) output projection. full: the
# framework's own figure (FrameworkDefaults.full_loss_bytes; transformers: 16-bit logits + fp32
# upcast + fp32 gradient = 10); chunked: one 16-bit copy of the logits (torchtune's table: chunking
# saved 8.1 GiB on 1.05e9 logits, i.e. 10 -> ~2 B); the upcast and the gradient exist for one chunk
# at a time; fused: no logits tensor (fused linear + cross-entropy).
CHUNKED_LOGIT_BYTES = (2.0, 4.0)
# Saved tensors still on the GPU under activation offloading: the layer being computed and the one
# whose copy to host is in flight (torchtune's OffloadActivations uses one side stream).
OFFLOADED_RESIDENT_LAYERS = 2.0


def _per_param_bytes(precision: str, optimizer: str) -> tuple[float, float, float]:
    """(working weights, gradient, optimizer incl. master) bytes per trainable parameter."""
    weight = 4.0 if precision == "fp32" else 2.0
    grad = 2.0 if precision == "bf16-true" else 4.0
    master = 4.0 if precision == "bf16-mixed" else 0.0
    if optimizer == "adamw":
        states = 4.0 if precision == "bf16-true" else 8.0
    elif optimizer in ("adamw8bit", "paged_adamw8bit"):
        states = EIGHT_BIT_STATE_BYTES
    else:  # sgd with momentum
        states = 2.0 if precision == "bf16-true" else 4.0
    return weight, grad, states + master


def _features(setup: TrainingSetup) -> dict[str, float]:
    arch = _framework_arch(setup)
    defaults = DEFAULTS[setup.framework]
    w_b, g_b, o_b = _per_param_bytes(setup.precision, setup.optimizer)
    n_lora = lora_params(arch, setup.lora_rank, setup.lora_targets) if setup.method != "full" else 0
    trainable = arch.n_params if setup.method == "full" else n_lora
    frozen_w = 0.0
    unit_byte = w_b
    fp32_head = setup.precision == "fp32"
    if setup.method == "lora":
        unit_byte = FROZEN_BYTES[setup.precision]
        frozen_w = arch.n_params * unit_byte
    elif setup.method == "qlora":
        unit_byte = NF4_DQ_BYTES if setup.qlora_double_quant else NF4_BYTES
        quant = arch.quantizable_params
        rest = (
            4.0
            if setup.precision == "fp32" or (setup.precision == "bf16-mixed" and defaults.qlora_fp32_rest)
            else 2.0
        )
        frozen_w = quant * unit_byte + (arch.n_params - quant) * rest
        fp32_head = rest == 4.0
    unit = arch.largest_layer_params
    unit_g = unit * (4.0 if setup.precision == "fp32" else 2.0) if setup.method == "full" else 0.0
    grads = trainable * g_b
    grads_sharded = grads
    if setup.method == "lora" and defaults.fsdp_unit_grads_whole:
        # One FSDP unit per block holds the adapters and the frozen weights (use_orig_params=True):
        # PyTorch's FSDP docs - "the gradient memory usage will be higher than expected (namely,
        # equivalent to not freezing those parameters)". Embeddings/head form a frozen root unit.
        block_params = arch.n_params - arch.embedding_params - arch.head_params
        grads_sharded = max(grads, block_params * g_b)
        unit_g = unit * g_b
    if setup.optimizer_in_backward:  # each gradient is applied and freed as soon as it is reduced
        grads = min(grads, unit * g_b)
    # FSDP2 mixed precision (torchtitan): the sharded fp32 parameters are the master copy
    sharded_w_b = 0.0 if defaults.sharded_fp32_master and setup.precision == "bf16-mixed" else w_b
    tokens = setup.seq_len * setup.micro_batch
    per_layer, selective = _activation_elements(setup)
    dequant = 0.0
    if setup.method == "qlora":  # one block's (active) linears expanded to bf16
        active_linear = arch.quantizable_params * (arch.n_active_params / arch.n_params)
        dequant = active_linear / arch.num_layers * 2.0
        if defaults.dequant_per_linear:  # torchao linear_nf4: one weight matrix at a time
            dequant = min(dequant, arch.hidden_size * max(arch.intermediate_size, arch.q_width) * 2.0)
    act_bytes = ACT_BYTES[setup.precision]
    ac = setup.activation_checkpointing
    offloaded = setup.cpu_offload_activations or (ac == "full" and defaults.offloads_checkpoints)
    layers = float(arch.num_layers)
    resident = min(layers, OFFLOADED_RESIDENT_LAYERS) if offloaded else layers
    if setup.loss == "full":
        # autocast (bf16-mixed) runs cross_entropy in fp32 whatever the code does
        upcast = fp32_head or defaults.loss_upcasts or setup.precision == "bf16-mixed"
        logit_bytes = (LOGIT_BYTES_32 if fp32_head else LOGIT_BYTES_UPCAST) if upcast else LOGIT_BYTES_16
    elif setup.loss == "chunked":
        logit_bytes = CHUNKED_LOGIT_BYTES[1 if fp32_head else 0]
    else:
        logit_bytes = 0.0
    # torch.optim.AdamW(foreach=True) (_multi_tensor_adam): exp_avg_sq_sqrt = torch._foreach_sqrt(
    # exp_avg_sqs) is a new tensor per parameter in the state dtype, alive until addcdiv_ has used
    # it. 8-bit optimizers (bitsandbytes) and fused AdamW update in place in one kernel.
    step_temp = 0.0
    if setup.optimizer == "adamw" and defaults.adamw_step == "foreach":
        step_temp = trainable * (2.0 if setup.precision == "bf16-true" else 4.0)
    scores = scores_bwd = 0.0
    if keeps_scores(setup):
        # transformers' eager_attention_forward: softmax(scores, dtype=float32).to(query.dtype) ->
        # the fp32 softmax output (softmax backward reads it) and the 16-bit probabilities (the
        # P @ V matmul saves them); fp32 training: one 4-byte tensor. Backward of that layer: the
        # 16-bit gradient of P, its fp32 upcast and the fp32 softmax gradient (2 + 4 + 4 B).
        # Plus the (b, 1, s, s) additive mask the eager path materialises once per step.
        elements = float(setup.micro_batch) * arch.num_heads * float(setup.seq_len) ** 2
        kept, backward = (4.0, 8.0) if setup.precision == "fp32" else (6.0, 10.0)
        scores = elements * kept
        scores_bwd = elements * backward + float(setup.micro_batch) * float(setup.seq_len) ** 2 * act_bytes
    return {
        "train_w": trainable * w_b,
        "train_w_sharded": trainable * sharded_w_b,
        "frozen_w": frozen_w,
        "grads": grads,
        "grads_sharded": grads_sharded,
        "optim": trainable * o_b,
        "unit_w": unit * unit_byte,
        "unit_g": unit_g,
        "act_layer": tokens * per_layer * act_bytes,
        "act_selective": tokens * selective * act_bytes,
        "act_ckpt": tokens * arch.hidden_size * act_bytes,
        "layers": resident,
        "ac": float(_AC_CODE[ac]),
        "logits": tokens * arch.vocab_size * logit_bytes,
        "dequant": dequant,
        "metric": float(_METRIC_CODE[setup.memory_metric]),
        "accumulates": float(setup.gradient_accumulation),
        "variable": float(setup.variable_lengths),
        "step_temp": step_temp,
        # hf shards with DeepSpeed ZeRO, whose "AdamW" is deepspeed.ops.adam.FusedAdam (in place)
        "step_temp_sharded": 0.0 if setup.framework == "hf" else step_temp,
        "scores": scores,
        "scores_bwd": scores_bwd,
    }


# ----- the kernel --------------------------------------------------------------------------------
def _kernel(f: Mapping[str, Any], gpus: Any, code: Any, c: MemoryConstants) -> dict[str, Any]:
    """Per-GPU GB by term. Inputs broadcast against each other; same float64 ops for any shape."""
    n = gpus.astype(np.float64)
    zero3 = code >= 2
    offload = code == 3
    inflight_w = np.where(zero3, 2.0 * f["unit_w"], 0.0)
    inflight_g = np.where(zero3, f["unit_g"], 0.0)
    sharded_state = (f["train_w_sharded"] + f["frozen_w"]) / n
    weights = (
        np.where(offload, 0.0, np.where(zero3, sharded_state, f["train_w"] + f["frozen_w"])) + inflight_w
    )
    grads = (
        np.where(
            offload,
            0.0,
            np.where(zero3, f["grads_sharded"] / n, np.where(code >= 1, f["grads"] / n, f["grads"])),
        )
        + inflight_g
    )
    optim = np.where(offload, 0.0, np.where(code >= 1, f["optim"] / n, f["optim"]))
    kept_per_layer = np.where(
        f["ac"] >= 2, f["act_ckpt"], np.where(f["ac"] >= 1, f["act_selective"], f["act_layer"])
    )
    recomputed = np.where(f["ac"] >= 1, f["act_layer"], 0.0)  # one layer rebuilt during backward
    activations = c.activation_factor * (f["layers"] * kept_per_layer + recomputed)
    # Attention scores (eager / explicit-score models): every stored layer keeps them without
    # recomputation; with recomputation only the layer being rebuilt; plus one layer's backward.
    activations = (
        activations + np.where(f["ac"] >= 1, f["scores"], f["layers"] * f["scores"]) + f["scores_bwd"]
    )
    logits = f["logits"]
    # Without accumulation the gradients are allocated during backward while the saved activations
    # and the logits are released, so the peak holds the larger of the two; the breakdown then shows
    # only the gradients beyond the memory backward frees.
    grads = np.where(f["accumulates"] > 0, grads, np.maximum(grads - activations - logits, 0.0))
    buffers = c.qlora_dequant_layers * f["dequant"] + np.where(n > 1, c.comm_buffer_gb * GB, 0.0)
    allocated = weights + grads + optim + activations + logits + buffers
    # The optimizer step runs after backward has freed the activations and the logits: weights,
    # every gradient, the states and the step's temporaries (sharded like the states). When that
    # is the larger moment, the breakdown shows the excess under overhead.
    step_temp = np.where(offload, 0.0, np.where(code >= 1, f["step_temp_sharded"] / n, f["step_temp"]))
    step_grads = np.where(
        offload, 0.0, np.where(zero3, f["grads_sharded"] / n, np.where(code >= 1, f["grads"] / n, f["grads"]))
    )
    step_extra = np.maximum(weights + step_grads + optim + step_temp + buffers - allocated, 0.0)
    allocated = allocated + step_extra
    # Batches of varying length: the caching allocator cannot merge the freed vocabulary-sized loss
    # blocks of a shorter step into the larger ones the longest step needs (blocks never merge
    # across segments), so the reserved pool keeps one earlier loss region beside the live one
    # (pytorch/devlogs "When does fragmentation occur in the CUDA caching allocator?", 2026;
    # NVIDIA-NeMo/NeMo#9061: dynamic batch shapes re-allocate every step). Not in allocated.
    cached = f["variable"] * logits
    slack = np.where(f["metric"] <= 1, c.fragmentation * allocated + cached, 0.0)
    context = np.where(f["metric"] == 0, c.cuda_context_gb * GB, 0.0)
    overhead = buffers + step_extra + slack + context
    per_gpu = weights + grads + optim + activations + logits + overhead
    # What must fit on the card whatever the metric reports: allocated + slack + CUDA context.
    device = allocated * (1.0 + c.fragmentation) + cached + c.cuda_context_gb * GB
    return {
        "weights": weights / GB,
        "gradients": grads / GB,
        "optimizer": optim / GB,
        "activations": activations / GB,
        "logits": logits / GB,
        "overhead": overhead / GB,
        "cuda_context": context / GB,
        "allocator_slack": slack / GB,
        "per_gpu": per_gpu / GB,
        "device": device / GB,
    }


def estimate_memory(setup: TrainingSetup, constants: MemoryConstants = DEFAULT_CONSTANTS) -> MemoryEstimate:
    """Predicted peak memory per GPU (GB) with its breakdown."""
    feats = {k: np.float64(v) for k, v in _features(setup).items()}
    out = _kernel(feats, np.int64(setup.gpus), np.int64(_STRATEGY_CODE[setup.sharding]), constants)
    parts = {k: float(out[k]) for k in BREAKDOWN_TERMS}
    per_gpu = float(out["per_gpu"])
    arch = _framework_arch(setup)
    n_lora = lora_params(arch, setup.lora_rank, setup.lora_targets) if setup.method != "full" else 0
    return MemoryEstimate(
        per_gpu_gb=per_gpu,
        planning_gb=planning_gb(per_gpu, setup.margin),
        device_gb=float(out["device"]),
        margin=setup.margin,
        breakdown=Breakdown(**parts),
        cuda_context_gb=float(out["cuda_context"]),
        allocator_slack_gb=float(out["allocator_slack"]),
        assumptions=assumptions(setup),
        total_params=arch.n_params,
        trainable_params=arch.n_params if setup.method == "full" else n_lora,
        lora_params=n_lora,
        tokens_per_micro_batch=setup.seq_len * setup.micro_batch,
        gpus=setup.gpus,
        sharding=setup.sharding,
        memory_metric=setup.memory_metric,
    )


class PreparedSetups:
    """Many setups with their per-setup features computed once; :meth:`per_gpu_gb` then costs one
    vectorised kernel call per set of constants (calibration re-evaluates thousands of them)."""

    def __init__(self, setups: Sequence[TrainingSetup]) -> None:
        rows = [_features(s) for s in setups]
        self.setups = list(setups)
        self._feats = {k: np.array([r[k] for r in rows], dtype=np.float64) for k in _FEATURES}
        self._gpus = np.array([s.gpus for s in setups], dtype=np.int64)
        self._codes = np.array([_STRATEGY_CODE[s.sharding] for s in setups], dtype=np.int64)

    def per_gpu_gb(self, constants: MemoryConstants = DEFAULT_CONSTANTS) -> np.ndarray:
        return _kernel(self._feats, self._gpus, self._codes, constants)["per_gpu"]


def per_gpu_gb_many(
    setups: Sequence[TrainingSetup], constants: MemoryConstants = DEFAULT_CONSTANTS
) -> np.ndarray:
    """``estimate_memory(s).per_gpu_gb`` for many setups at once (each with its own gpus/sharding)."""
    return PreparedSetups(setups).per_gpu_gb(constants)


# ----- vectorised sweep --------------------------------------------------------------------------
SWEEP_COLUMNS = (
    "setup_index",
    "gpu",
    "gpu_count",
    "sharding",
    "per_gpu_gb",
    "planning_gb",
    "gpu_memory_gb",
    "fits",
    "headroom_gb",
    "least_complex",
    "verdict",
    "device_gb",
)


def _as_setup(item: TrainingSetup | Mapping[str, Any]) -> TrainingSetup:
    if isinstance(item, TrainingSetup):
        return item
    return TrainingSetup.checked(**dict(item))


def fit_sweep(
    setups: Sequence[TrainingSetup | Mapping[str, Any]],
    gpu_memory_gb: Mapping[str, float],
    gpu_counts: Sequence[int],
    strategies: Sequence[str] = SWEEP_STRATEGIES,
    constants: MemoryConstants = DEFAULT_CONSTANTS,
) -> pd.DataFrame:
    """Every setup x GPU x count x strategy, vectorised (the setups' own gpus/sharding are ignored).

    ``gpu_memory_gb`` holds each card's usable 1e9 bytes. ``verdict`` (fits / tight /
    does_not_fit, :mod:`gpuprice.models.fit_verdict`) judges the device figure; ``fits`` is
    ``verdict == "fits"``; ``headroom_gb`` = card - device figure. ``least_complex`` marks, per
    setup x GPU x count, the strategy with the best verdict (fits before tight), then the first in
    the order none, zero2, zero3/fsdp, offload; never a strategy that does not fit.
    Row order: setup, then GPU (mapping order), then count, then strategy (given order)."""
    unknown = [s for s in strategies if s not in _STRATEGY_CODE]
    if unknown:
        raise BadInput(f"unknown sharding strategy {unknown[0]!r}; valid: {', '.join(_STRATEGY_CODE)}")
    counts = [int(c) for c in gpu_counts]
    if any(c < 1 for c in counts):
        raise BadInput(f"gpu counts must be >= 1, got {counts}")
    resolved = [_as_setup(s) for s in setups]
    gpu_names = list(gpu_memory_gb)
    n_s, n_g, n_c, n_k = len(resolved), len(gpu_names), len(counts), len(strategies)
    if 0 in (n_s, n_g, n_c, n_k):
        return pd.DataFrame({col: [] for col in SWEEP_COLUMNS})

    rows = [_features(s) for s in resolved]
    feats = {k: np.array([r[k] for r in rows], dtype=np.float64).reshape(n_s, 1, 1, 1) for k in _FEATURES}
    gpus = np.array(counts, dtype=np.int64).reshape(1, 1, n_c, 1)
    codes = np.array([_STRATEGY_CODE[s] for s in strategies], dtype=np.int64).reshape(1, 1, 1, n_k)
    out = _kernel(feats, gpus, codes, constants)
    shape = (n_s, n_g, n_c, n_k)
    per_gpu = np.broadcast_to(out["per_gpu"], shape)
    margins = np.array([s.margin for s in resolved], dtype=np.float64).reshape(n_s, 1, 1, 1)
    planning = per_gpu / (1 - margins)
    memory = np.broadcast_to(
        np.array([gpu_memory_gb[g] for g in gpu_names], dtype=np.float64).reshape(1, n_g, 1, 1), shape
    )
    # The verdict judges the device figure whatever metric per_gpu_gb reports (fit_verdict.py).
    device = np.broadcast_to(out["device"], shape)
    codes_v = np.broadcast_to(verdict_codes(device, memory, margins), shape)
    fits = codes_v == 0
    runnable = codes_v <= 1  # fits or tight: the predicted peak is within the card

    # least complex strategy per setup x GPU x count: the best verdict first (fits before tight),
    # then the lowest complexity code (ties: first given); only where the peak fits at all.
    rank = np.where(
        runnable,
        (codes_v * (4 * n_k) + codes * n_k + np.arange(n_k).reshape(1, 1, 1, n_k)),
        np.iinfo(np.int64).max,
    )
    best = rank.argmin(axis=3)
    least = np.zeros(shape, dtype=bool)
    np.put_along_axis(least, best[..., None], True, axis=3)
    least &= runnable

    frame = pd.DataFrame(
        {
            "setup_index": np.repeat(np.arange(n_s), n_g * n_c * n_k),
            "gpu": np.tile(np.repeat(np.array(gpu_names, dtype=object), n_c * n_k), n_s),
            "gpu_count": np.tile(np.repeat(np.array(counts), n_k), n_s * n_g),
            "sharding": np.tile(np.array(list(strategies), dtype=object), n_s * n_g * n_c),
            "per_gpu_gb": per_gpu.ravel(),
            "planning_gb": planning.ravel(),
            "gpu_memory_gb": memory.ravel(),
            "fits": fits.ravel(),
            "headroom_gb": (memory - device).ravel(),
            "least_complex": least.ravel(),
            "verdict": np.array(VERDICTS, dtype=object)[codes_v.ravel()],
            "device_gb": device.ravel(),
        }
    )
    return frame
