"""Per-setup features of the memory model: the byte counts that do not depend on GPU count or sharding.

:func:`setup_features` turns one :class:`~gpuprice.models.memory_setup.TrainingSetup` into the
named floats (:data:`FEATURE_NAMES`) the kernel in :mod:`gpuprice.models.memory` combines with a
GPU count and a sharding strategy. The fixed facts below are sourced in that module's docstring.

Over ~400 lines on purpose: every per-setup byte count (weights, saved activations per block part,
logits, eager scores, paged states, linears kept) is one mapping from a setup to features, and
splitting it would spread one kernel input across modules; the block anatomy it shares with the
throughput model is in :mod:`gpuprice.models.block_parts`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuprice.models.architectures import ModelArch
from gpuprice.models.block_parts import (
    attention_share,
    block_parts,
    input_blocks,
    is_hybrid,
    mixer_linears,
    mixer_width,
)
from gpuprice.models.frameworks import DEFAULTS, fsdp_keeps_recomputed_inputs, runs_every_expert
from gpuprice.models.memory_setup import (
    TrainingSetup,
    keeps_grouped_kv_narrow,
    keeps_scores,
    qlora_fp32_activations,
    sharded_fp32_master,
)
from gpuprice.models.selective_checkpointing import saved_matmul_outputs

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
# fla's chunked gated delta rule works in chunks of 64 tokens (chunk_gated_delta_rule_fwd's
# ``chunk_size=64``); its lower-triangular chunk matrix A keeps 64 entries per token and head.
GATED_DELTANET_CHUNK = 64


def gated_deltanet_elements(setup: TrainingSetup, arch: ModelArch, out_proj_input: bool) -> float:
    """Saved elements per token of one Gated DeltaNet mixer in training (Qwen3-Next / Qwen3.5 on
    transformers' fast path, fla + causal-conv1d), in activation-dtype units (an fp32 tensor counts
    two under 16-bit training), the block norm's input and output apart.

    transformers' Qwen3NextGatedDeltaNet (modeling_qwen3_next.py @ 7515843b; Qwen3_5GatedDeltaNet
    the same with in_proj_qkv / in_proj_z / in_proj_b / in_proj_a) runs:

    * ``causal_conv1d_fn`` over the q, k, v projection (2 nk dk + nv dv): Dao-AILab/causal-conv1d's
      ``CausalConv1dFn`` saves its input x (silu fused, its output not kept);
    * q and k repeated to the nv value heads, then fla's ``ChunkGatedDeltaRuleFunction``
      (fla-org/flash-linear-attention @ 92396f25, fla/ops/gated_delta_rule/chunk.py) saves the
      l2-normalised q and k (nv dk each, input dtype) with their fp32 rstd (nv each), v (nv dv,
      ``input_guard``'s contiguous copy of the conv output's slice), g after
      ``chunk_local_cumsum`` (fp32, nv), beta (nv) and A (nv x 64, k's dtype);
    * beta = sigmoid(b) (its output is the beta above); g = -exp(A_log) * softplus(a.float() +
      dt_bias): softplus keeps its fp32 input (nv), the product keeps softplus' output (fp32, nv)
      only when A_log is trained (full fine-tuning);
    * fla's ``FusedRMSNormGated`` (``LayerNormGatedFunction``) saves its input (the rule's output,
      nv dv), the gate z (nv dv) and its fp32 rstd per head (nv);
    * out_proj's input (the norm's output, nv dv) when out_proj is trained or adapted.

    The in_proj outputs themselves are not kept (only the conv input and z, counted above)."""
    nk, dk = arch.linear_num_key_heads, arch.linear_key_head_dim
    nv, dv = arch.linear_num_value_heads, arch.linear_value_head_dim
    f32 = 1.0 if setup.precision == "fp32" else 2.0  # an fp32 tensor in activation-dtype units
    conv_input = 2 * nk * dk + nv * dv
    # q, k, v, A, beta; fp32 q_rstd, k_rstd and cumulated g
    rule = 2 * nv * dk + nv * dv + GATED_DELTANET_CHUNK * nv + nv + f32 * 3 * nv
    gates = f32 * nv * (2 if setup.method == "full" else 1)  # softplus input (and output)
    norm = 2 * nv * dv + f32 * nv  # input, z, rstd
    out = nv * dv if out_proj_input else 0
    return float(conv_input + rule + gates + norm + out)


def lora_params(arch: ModelArch, rank: int, targets: str) -> int:
    """Adapter parameters: r (d_in + d_out) per adapted matrix, over the blocks that hold it (and
    experts).

    ``qv`` adapts the query and value projections; ``qkvo`` the four attention projections; ``all``
    every linear in the blocks (q, k, v, o, the MLP / every expert's MLP and a linear mixer's
    projections), as PEFT's ``all-linear`` does. Only blocks with softmax attention have q, k, v, o
    (:func:`gpuprice.models.block_parts.block_parts`): Llama-3.3-Nemotron-Super-49B's 31 attention-free blocks carry none, a
    Gated DeltaNet or Mamba-2 block carries adapters on its own projections under ``all`` only."""
    h = arch.hidden_size
    parts = block_parts(arch)
    attn_qv = rank * (h + arch.q_width) + rank * (h + arch.kv_width)
    attn_layers = parts.attention + arch.cross_attention_layers
    if targets == "qv":
        return attn_layers * attn_qv
    attn_all = attn_qv + rank * (h + arch.kv_width) + rank * (arch.attn_out_width + h)
    if targets == "qkvo":
        return attn_layers * attn_all
    mats = 3 if arch.gated_mlp else 2

    def mlp(width: int, fan: int = h) -> int:
        return mats * rank * (fan + width)

    experts = arch.num_experts * mlp(arch.expert_width) + arch.num_shared_experts * mlp(arch.expert_width)
    if arch.moe_latent_size:  # routed experts read and write the latent; two h x latent projections
        latent = arch.moe_latent_size
        experts = arch.num_experts * mlp(arch.expert_width, latent) + 2 * rank * (h + latent)
        experts += arch.num_shared_experts * mlp(arch.expert_width)
    total = attn_layers * attn_all + (parts.mlp - parts.moe) * mlp(arch.intermediate_size)
    total += parts.moe * experts
    if parts.linear:
        total += parts.linear * round(rank * (mixer_linears(arch) * h + mixer_width(arch)))
    return total


def framework_arch(setup: TrainingSetup) -> ModelArch:
    """The shape as the framework builds and runs it: litgpt's ``GPT`` always creates ``lm_head =
    nn.Linear(...)`` next to ``wte = nn.Embedding(...)`` (``litgpt/model.py``), so a checkpoint
    with tied embeddings (Gemma, Llama-3.2) gets a separate head unless ``tie_embeddings`` is set;
    transformers' Llama 4 routes every token through every expert (``frameworks.runs_every_expert``)."""
    arch = setup.arch
    if DEFAULTS[setup.framework].unties_embeddings and arch.tied_embeddings:
        arch = arch.model_copy(update={"tied_embeddings": False})
    if arch.is_moe and runs_every_expert(setup.framework, arch.model_type):
        # transformers' Llama 4 runs every routed expert on every token (frameworks.py): their
        # activations are kept as if each token were routed to all of them
        arch = arch.model_copy(update={"experts_per_token": arch.num_experts})
    return arch


# transformers families whose attention splits one fused qkv projection into views, rotates q and
# k into new tensors and hands attention v as a view of it, so with as many KV heads as query heads
# the whole fused output stays alive, as in litgpt: Qwen-1's remote code (``modeling_qwen.py``:
# ``mixed_x_layer = self.c_attn(hidden_states)``, ``mixed_x_layer.split(self.split_size, dim=2)``)
# and Phi-3 (``qkv = self.qkv_proj(hidden_states)``, ``value_states = qkv[..., query_pos + kv_pos:]``).
# GPT-NeoX's ``query_key_value`` does the same (the saved-tensor probe measured it; its LayerNorm
# and parallel-residual terms are counted since the fifteenth session).
HF_FUSED_QKV_VIEWS = frozenset({"qwen", "phi3", "gpt_neox"})


@dataclass(frozen=True)
class _FusedQkv:
    attention: float
    mlp: float


def _fused_qkv_retained(arch: ModelArch) -> float:
    """The q and k parts of a fused qkv output that stay alive behind v's view (as many KV heads as
    query heads; grouped heads are expanded into copies, which keep nothing more)."""
    return float(arch.q_width + arch.kv_width) if arch.num_kv_heads == arch.num_heads else 0.0


def _fused_qkv_elements(arch: ModelArch, method: str, targets: str, base_keeps_inputs: bool) -> _FusedQkv:
    """What litgpt's fused qkv (and LoRA on it) keeps beyond separate q, k, v projections with
    PEFT-style adapters, per token and layer (16-bit elements), as autograd's saved tensors show
    for litgpt's own model code (memory_calibration.md, "Counted from what autograd saves"):

    * with as many KV heads as query heads, SDPA keeps v as a view of the fused qkv output, so the
      whole qkv stays alive (grouped heads are expanded into copies instead);

    LoRA only:

    * ``LoRAQKVLinear.zero_pad`` places the adapted q,v outputs with ``index_copy``, which keeps its
      source unless q, k and v are all adapted;
    * every adapted linear runs ``lora_dropout`` (0.05 by default): the dropped copy of its input
      (kept by ``lora_A`` in place of the input itself, unless a 4-bit base keeps that too) and
      the bool mask (half a 16-bit element). The q,k,v adapters share one; with all targets the
      output projection and each MLP linear have their own."""
    h = float(arch.hidden_size)
    retained = _fused_qkv_retained(arch)
    if method == "full":
        return _FusedQkv(retained, 0.0)
    own_copy = 1.5 if base_keeps_inputs else 0.5  # mask, and the copy when the input is kept anyway
    attention = retained + own_copy * h
    if targets == "qv":
        attention += arch.q_width + arch.kv_width
    mlp = 0.0
    if targets == "all":
        attention += 1.5 * arch.attn_out_width  # beside the SDPA output it reads
        inputs = 2 if arch.gated_mlp else 1
        width = arch.intermediate_size
        # each input projection drops its own copy of the one norm output PEFT would keep once
        mlp = inputs * 1.5 * h - (0.0 if base_keeps_inputs else h) + own_copy * width
    return _FusedQkv(attention, mlp)


def _activation_elements(setup: TrainingSetup) -> tuple[float, float, float]:
    """Saved elements per token per layer (before the calibrated activation factor), as
    (no recomputation, op-level selective recomputation, the one block rebuilt under recomputation).

    No recomputation: what autograd keeps for one pre-norm block. A frozen ``nn.Linear`` keeps no
    input for a weight gradient, so LoRA on q,v saves fewer MLP tensors; bitsandbytes' 4-bit
    matmul saves its input whenever any gradient flows (QLoRA keeps every linear input like full
    fine-tuning), torchao's NF4 linear does not. Eager 16-bit RMSNorm keeps an fp32 copy in place
    of its input (and, with a trainable weight, the normalised tensor: 16-bit in transformers, fp32
    in litgpt; what autograd saves, memory_calibration.md); fused kernels (torch.compile,
    Unsloth's Triton norms and SwiGLU) keep neither, nor the activation output of a gated MLP.

    Selective (torchtitan's op-level policy, :mod:`gpuprice.models.selective_checkpointing`): the
    block input, the attention (SDPA) output and every second matmul output are saved (q, v, gate
    and down in a dense block; half the matmul outputs elsewhere); the rest is recomputed.

    Hybrid decoders are summed over their blocks' parts (:func:`gpuprice.models.block_parts.block_parts`) and returned per
    layer as the mean over all ``num_layers`` blocks, so ``layers`` x this is the blocks' sum. The
    one block the memory kernel rebuilds under recomputation (selective or full) is the largest
    kind present, not that mean: a mixer + MLP block where some block holds both (the larger of
    attention and the linear mixer, whichever the model has), else the largest single part
    (Nemotron-H's blocks hold one part each). An ordinary model's is its per-layer figure."""
    arch = framework_arch(setup)
    defaults = DEFAULTS[setup.framework]
    h = arch.hidden_size
    method, targets, rank = setup.method, setup.lora_targets, setup.lora_rank
    fused = setup.compile or defaults.fused_kernels
    qlora_inputs = method == "qlora" and defaults.qlora_saves_linear_inputs
    linear_inputs_saved = method == "full" or qlora_inputs or targets == "all"
    # attention: norm input, norm output (feeds q,k,v), q, K, V, output; K and V at query width
    # unless the kernel takes grouped heads as they are (keeps_grouped_kv_narrow)
    kv_kept = arch.kv_width if keeps_grouped_kv_narrow(setup) else arch.q_width
    attention = 2 * h + arch.q_width + 2 * kv_kept + arch.attn_out_width
    if arch.is_moe:
        width = (arch.experts_per_token + arch.num_shared_experts) * arch.expert_width
        dispatch = arch.experts_per_token * h  # tokens copied into expert batches
    else:
        width, dispatch = arch.intermediate_size, 0
    # Fused kernels recompute act(gate) / act(fc1) in backward, except where backward's matmul reads
    # it anyway: a non-gated MLP's act(fc1) is fc2's input, which fc2's weight (or adapter) gradient
    # materialises, so torch.compile's min-cut partitioner saves it (torch/_functorch/partitioners.py
    # should_ban_recomputation, ban_recompute_materialized_backward on by default).
    fc2_reads_activation = not arch.gated_mlp and linear_inputs_saved
    activation_out = width if not fused or fc2_reads_activation else 0
    if arch.gated_mlp:  # gate, up always; norm output and product only as linear inputs
        mlp = (2 * h + 3 * width) if linear_inputs_saved else (h + 2 * width)
    else:  # fc1 output always; norm output only as a linear input
        mlp = (2 * h + width) if linear_inputs_saved else (h + 0 * width)
    mlp += activation_out
    if setup.framework == "hf" and arch.gelu_new and not fused:
        # transformers' NewGELUActivation computes 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) op
        # by op: its tanh output, 0.5 x and 1 + tanh are kept beside its input (the saved-tensor probe:
        # three width-sized tensors; torch's fused gelu keeps none)
        mlp += 3 * width
    norms = 0.0
    if not fused:
        kept_as_is = setup.precision == "fp32" or qlora_fp32_activations(setup) or not setup.norm_upcasts
        if arch.norm_type == "layernorm":
            # torch's layer_norm saves its input, mean and rstd and rebuilds the normalised tensor in
            # backward (native_layer_norm_backward): no copy of its own. Under autocast layer_norm
            # runs in fp32, so what it saves is the fp32 cast of its input.
            upcast = 1.0 if setup.precision == "bf16-mixed" and not kept_as_is else 0.0
            normalised = 0.0
        else:
            # a 16-bit eager RMSNorm keeps its fp32 copy (two 16-bit elements) in place of its input,
            # which attention and the MLP count as the norm's input: one element more per norm
            # (nothing to upcast in fp32, or in QLoRA's fp32 residual stream, counted as fp32_stream)
            upcast = 0.0 if kept_as_is else 1.0
            normalised = 0.0
            if method == "full":  # the normalised tensor, kept for the weight's gradient
                normalised = 2.0 if defaults.norm_grad_keeps_fp32 and not kept_as_is else 1.0
        norms = arch.norms_per_layer * (upcast + normalised) * h
    # Blocks by part (block_parts): each part brings its own saved tensors, a mixer-free block no
    # attention's, an MLP-free block no MLP's, an empty one (Nemotron-NAS) none. An ordinary model
    # has every share 1 (linear 0) and the sums below are today's per-layer figures exactly.
    parts = block_parts(arch)
    attention_share = parts.attention / arch.num_layers
    linear_share = parts.linear / arch.num_layers
    mlp_share = parts.mlp / arch.num_layers
    attention_adapters = mlp_adapters = mixer_adapters = 0.0
    if method != "full":  # x @ A intermediates of each adapted matrix
        attention_adapters = rank * (2 if targets == "qv" else 4)
        if targets == "all":
            mlp_adapters = rank * (3 if arch.gated_mlp else 2)
            mixer_adapters = rank * mixer_linears(arch)
    # A linear/SSM mixer (Mamba-2, an h x h linear) counted like attention by its projections:
    # norm input, norm output (its projections' input, kept when they are trained or adapted), the
    # input projections' outputs and the output projection's input (mixer_width). Mamba-2's fused
    # mamba_split_conv1d_scan_combined saves just that (zxbcdt, out_x; mamba_ssm
    # ops/triton/ssd_combined.py). A Gated DeltaNet (its head widths known) keeps what its kernels
    # save instead (gated_deltanet_elements: about twice its projections).
    linear_inputs = 2 * h if linear_inputs_saved else h
    linear_mixer = 0.0
    if parts.linear and arch.linear_num_value_heads:
        linear_mixer = linear_inputs + gated_deltanet_elements(setup, arch, linear_inputs_saved)
    elif parts.linear:
        linear_mixer = linear_inputs + mixer_width(arch)
    # A parallel mixer (Falcon-H1) reads its layer's norm output beside attention: the block input
    # and the norm output are attention's, not kept twice.
    shared_inputs = linear_inputs * arch.parallel_mixer_blocks / parts.linear if parts.linear else 0.0
    linear_mixer -= shared_inputs
    if defaults.fused_qkv:
        fused_qkv = _fused_qkv_elements(arch, method, targets, base_keeps_inputs=qlora_inputs)
        attention_adapters += fused_qkv.attention
        mlp_adapters += fused_qkv.mlp
    elif setup.framework == "hf" and arch.model_type in HF_FUSED_QKV_VIEWS:
        attention_adapters += _fused_qkv_retained(arch)
    per_layer = (
        attention_share * (attention + attention_adapters)
        + linear_share * (linear_mixer + mixer_adapters)
        + mlp_share * (mlp + dispatch + mlp_adapters)
        + norms
    )
    if arch.cross_attention_layers:  # T5 decoder blocks also attend over the encoder output
        per_layer += (
            arch.cross_attention_layers / arch.num_layers * (h + 2 * arch.q_width + arch.attn_out_width)
        )
    mlp_mm = (2 * width if arch.gated_mlp else width) + h  # gate/up (or fc1) and down (or fc2) outputs
    saved = saved_matmul_outputs(arch)  # models/selective_checkpointing.py: the 1st, 3rd, ... matmul
    if saved is not None:  # a dense block
        adapters = attention_adapters + mlp_adapters
        selective = h + arch.attn_out_width + saved + dispatch + adapters
    else:  # half of each part's matmul outputs (a linear mixer's: about its mixer_width)
        selective = (
            h * input_blocks(arch) / arch.num_layers  # the inputs of blocks that have their own
            + attention_share * (arch.attn_out_width + 0.5 * (arch.q_width + 2 * arch.kv_width + h))
            + attention_share * attention_adapters
            + linear_share * (0.5 * mixer_width(arch) + mixer_adapters)
            + mlp_share * (0.5 * mlp_mm + dispatch + mlp_adapters)
        )
    rebuilt = per_layer
    if is_hybrid(arch):
        mixers: list[float] = [float(attention + attention_adapters)] if parts.attention else []
        mixers += [linear_mixer + mixer_adapters] if parts.linear else []
        mixer = max(mixers, default=0.0)
        mlp_part = mlp + dispatch + mlp_adapters if parts.mlp else 0.0
        rebuilt = (mixer + mlp_part if parts.both > 0 else max(mixer, mlp_part)) + norms
        if arch.parallel_mixer_blocks:  # the layer rebuilt holds attention, the mixer and the MLP
            parallel = float(attention + attention_adapters) + linear_mixer + mixer_adapters
            rebuilt = parallel + mlp_part + 2 * norms  # its two norms (one a block in the mean)
    return float(per_layer), float(min(selective, per_layer)), float(rebuilt)


FEATURE_NAMES = (
    "train_w",  # trainable working weights, bytes (unsharded)
    "train_w_sharded",  # the same under ZeRO-3 (0 when the sharded fp32 params are the master)
    "train_w_fsdp",  # the same under --sharding fsdp (0 for FSDP2 and accelerate's fp32 flat params)
    "frozen_w",  # frozen base weights, bytes
    "grads",  # gradient bytes
    "grads_sharded",  # gradient bytes ZeRO-3/FSDP shards (whole blocks when a unit mixes frozen weights)
    "optim",  # optimizer bytes (incl. fp32 master under bf16-mixed)
    "unit_w",  # bytes of the largest unit gathered by ZeRO-3/FSDP
    "unit_g",  # its gradient bytes (full fine-tuning)
    "act_layer",  # saved activation bytes of one layer (no checkpointing), before the factor
    "act_selective",  # bytes one layer keeps under op-level selective recomputation
    "act_ckpt",  # bytes kept per layer under full recomputation (its input)
    "act_rebuilt",  # bytes of the one block rebuilt under recomputation (the largest kind; act_layer else)
    "layers",  # layers whose saved tensors stay on the GPU
    "ac",  # 0 none, 1 selective, 2 full
    "logits",  # logits / loss buffer bytes
    "dequant",  # bytes of one block's linears dequantized to bf16 (QLoRA), else 0
    "metric",  # 0 device, 1 reserved, 2 allocated
    "accumulates",  # 1: gradients coexist with a forward's activations; 0: they replace them
    "variable",  # 1: batches vary in length (the allocator keeps a previous loss region cached)
    "step_temp",  # bytes of the optimizer step's temporaries (foreach AdamW: one state-sized list)
    "step_temp_sharded",  # the same under ZeRO/FSDP (0 where DeepSpeed's FusedAdam steps in place)
    "scores",  # bytes of attention scores one layer keeps for backward, the mean over all blocks
    "scores_rebuilt",  # the scores of the one attention block rebuilt under recomputation (0: none)
    "scores_bwd",  # bytes alive while one layer's score backward runs, plus the shared 4D mask
    "paged",  # optimizer-state bytes a paged optimizer keeps in unified memory (evictable to CPU RAM)
    "paged_unit",  # the states of the largest tensor, prefetched to the GPU while its step runs
    "logits_held",  # bytes of returned logits the training loop keeps referenced through backward
    "fp32_stream",  # extra bytes of fp32 layer inputs (hf QLoRA's fp32 residual stream), unsharded runs
    "deepspeed",  # 1: the framework shards with DeepSpeed ZeRO (hf's zero2 / zero3 / offload)
    "ds_grad_partition",  # bytes of DeepSpeed ZeRO-3's persistent 16-bit gradient partitions (unsharded)
    "trainable",  # trainable parameters (elements)
    "ds_step_copy",  # bytes per element of ZeRO-3's step copy of a gradient sub-group (flatten + fp32)
    "linears_kept",  # bytes of gathered linear weights torch's linear keeps until backward (see there)
    "fp32_rest",  # bytes the fp32 cast of QLoRA's non-quantized weights adds (not when sharded, see there)
    "frozen_units_keep_inputs",  # 1: frozen FSDP units keep their recomputed inputs and grads (see there)
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
    elif optimizer == "paged_adamw":
        # bitsandbytes' 32-bit optimizers keep both states in fp32 whatever the parameter dtype
        # (``Optimizer2State.init_state``: optim_bits 32 -> get_state_buffer(p, dtype=torch.float32))
        states = 8.0
    elif optimizer in ("adamw8bit", "paged_adamw8bit"):
        states = EIGHT_BIT_STATE_BYTES
    else:  # sgd with momentum
        states = 2.0 if precision == "bf16-true" else 4.0
    return weight, grad, states + master


def _frozen_weights(setup: TrainingSetup, arch: ModelArch, w_b: float) -> tuple[float, float, bool]:
    """(bytes of the frozen base, bytes per weight of one unit's weights, whether the head and
    the non-quantised rest are fp32) for LoRA / QLoRA; full training freezes nothing."""
    if setup.method == "lora":
        unit_byte = FROZEN_BYTES[setup.precision]
        return arch.n_params * unit_byte, unit_byte, setup.precision == "fp32"
    if setup.method == "qlora":
        unit_byte = NF4_DQ_BYTES if setup.qlora_double_quant else NF4_BYTES
        quant = arch.quantizable_params
        rest = 4.0 if setup.precision == "fp32" else 2.0
        cast = _fp32_rest_bytes(setup, arch)  # PEFT's fp32 cast of the rest under mixed precision
        return quant * unit_byte + (arch.n_params - quant) * rest + cast, unit_byte, rest == 4.0 or cast > 0
    return 0.0, w_b, setup.precision == "fp32"


def _fp32_rest_bytes(setup: TrainingSetup, arch: ModelArch) -> float:
    """Bytes by which PEFT's ``prepare_model_for_kbit_training`` (every fp16/bf16 parameter but
    Params4bit cast to fp32) grows a mixed-precision QLoRA base beyond its 16-bit rest. Counted in
    ``frozen_w``; asked without the sharding (a sweep tries every strategy): the kernel takes it back
    under ZeRO-3/FSDP, where trl's SFTTrainer finds the 4-bit weights on the CPU or meta device
    (``is_sharded_qlora``) and calls neither ``prepare_model_for_kbit_training`` nor
    ``peft_module_casting_to_bf16`` ("one should never call ... when doing QLoRA + FSDP / DS-Zero3"),
    the rule :func:`qlora_fp32_activations` follows for the residual stream."""
    if (
        setup.method != "qlora"
        or setup.precision != "bf16-mixed"
        or not DEFAULTS[setup.framework].qlora_fp32_rest
    ):
        return 0.0
    return (arch.n_params - arch.quantizable_params) * 2.0


def _dequant_buffer(setup: TrainingSetup, arch: ModelArch) -> float:
    """QLoRA: bytes of one block's (active) linears expanded to bf16 (torchao's linear_nf4: one
    weight matrix at a time); 0 otherwise."""
    if setup.method != "qlora":
        return 0.0
    active_linear = arch.quantizable_params * (arch.n_active_params / arch.n_params)
    dequant = active_linear / input_blocks(arch) * 2.0  # the mean over blocks holding linears
    if DEFAULTS[setup.framework].dequant_per_linear:
        dequant = min(dequant, arch.hidden_size * max(arch.intermediate_size, arch.q_width) * 2.0)
    return dequant


def _logit_bytes(setup: TrainingSetup, arch: ModelArch, fp32_head: bool) -> float:
    """Bytes per logit element the loss keeps (0 when the loss never materialises the logits)."""
    if setup.loss == "fused":
        return 0.0
    # Soft-capped logits (Gemma 2): tanh's saved output, one more tensor in the head's dtype.
    softcap = (4.0 if fp32_head or setup.precision == "fp32" else 2.0) if arch.logit_softcapping else 0.0
    if setup.loss in ("full", "full-16bit"):
        # autocast (bf16-mixed) runs cross_entropy in fp32 whatever the code does; full-16bit is
        # cross-entropy on the 16-bit logits as given (no .float()), full the framework's own loss
        framework_upcasts = setup.loss == "full" and DEFAULTS[setup.framework].loss_upcasts
        upcast = fp32_head or framework_upcasts or setup.precision == "bf16-mixed"
        kept = (LOGIT_BYTES_32 if fp32_head else LOGIT_BYTES_UPCAST) if upcast else LOGIT_BYTES_16
        return kept + softcap
    return CHUNKED_LOGIT_BYTES[1 if fp32_head else 0] + softcap


def _held_logit_bytes(setup: TrainingSetup, arch: ModelArch, fp32_head: bool) -> float:
    """Bytes per logit of the returned logits a loop keeps referenced through backward: the tensor
    the loss reads (transformers before 4.46 returns the fp32 upcast, ``logits = logits.float()``
    before the loss; 16-bit where nothing upcasts); 0 for chunked/fused losses or loops that drop it."""
    if not setup.logits_kept or setup.loss not in ("full", "full-16bit"):
        return 0.0
    framework_upcasts = setup.loss == "full" and DEFAULTS[setup.framework].loss_upcasts
    upcast = fp32_head or framework_upcasts or setup.precision in ("bf16-mixed", "fp32")
    return 4.0 if upcast else 2.0


def _eager_scores(setup: TrainingSetup, arch: ModelArch, act_bytes: float) -> tuple[float, float]:
    """(bytes of one layer's attention scores kept for backward, extra bytes of its backward)
    under eager attention; 0 for fused kernels.

    transformers' eager_attention_forward: softmax(scores, dtype=float32).to(query.dtype) ->
    the fp32 softmax output (softmax backward reads it) and the 16-bit probabilities (the
    P @ V matmul saves them); fp32 training: one 4-byte tensor. Backward of that layer: the
    16-bit gradient of P, its fp32 upcast and the fp32 softmax gradient (2 + 4 + 4 B).
    Plus the (b, 1, s, s) additive mask the eager path materialises once per step.
    """
    if not keeps_scores(setup):
        return 0.0, 0.0
    elements = float(setup.micro_batch) * arch.num_heads * float(setup.seq_len) ** 2
    kept, backward = (4.0, 8.0) if setup.precision == "fp32" else (6.0, 10.0)
    mask = float(setup.micro_batch) * float(setup.seq_len) ** 2 * act_bytes
    return elements * kept, elements * backward + mask


# bitsandbytes pages a state only for tensors of at least 1e5 elements (``get_state_buffer``:
# ``if not self.is_paged or p.numel() < 1e5: torch.zeros_like(...)``, else ``F.get_paged``).
PAGED_MIN_ELEMENTS = 100_000


def _paged_states(setup: TrainingSetup, arch: ModelArch, trainable: int) -> tuple[float, float]:
    """(state bytes a paged optimizer keeps in CUDA unified memory, state bytes of the largest
    tensor) before sharding; (0, 0) for optimizers whose states live in device memory.

    bitsandbytes' paged optimizers allocate the states of every tensor of at least 1e5 elements
    with ``cudaMallocManaged`` (``F.get_paged`` -> ``cget_managed_ptr``, csrc/pythonInterface.cpp),
    which the driver pages out to CPU RAM when the GPU runs short, and prefetch one tensor's states
    (``prefetch_state``, ``cudaMemPrefetchAsync``) just before its update. The moments are paged, the
    fp32 master under bf16-mixed is the parameter itself (device memory), the 8-bit block scales are
    ordinary device tensors. Full fine-tuning: every weight matrix is above the threshold (the norm
    vectors are not, and are negligible). LoRA adapters (r x d) are paged only when the narrowest
    one reaches the threshold (r 16 x 4096 = 65,536 does not): otherwise counted as resident."""
    if setup.optimizer not in ("paged_adamw", "paged_adamw8bit"):
        return 0.0, 0.0
    if setup.method != "full" and setup.lora_rank * min(arch.hidden_size, arch.kv_width) < PAGED_MIN_ELEMENTS:
        return 0.0, 0.0
    per_param = 8.0 if setup.optimizer == "paged_adamw" else 2.0  # two fp32 or two uint8 moments
    widest = max(arch.intermediate_size, arch.expert_width, arch.q_width)
    if setup.method == "full":
        largest = max(arch.embedding_params, arch.head_params, arch.hidden_size * widest)
    else:
        largest = setup.lora_rank * widest
    return trainable * per_param, min(largest, trainable) * per_param


def _linears_kept(setup: TrainingSetup, arch: ModelArch, unit_byte: float) -> float:
    """Bytes of gathered 16-bit linear weights a ZeRO-3 model built outside ``zero.Init`` keeps
    until backward (whole, not partitions; the model subtracts the units it counts in flight).

    deepspeed v0.14.2 releases a gathered parameter by swapping ``param.data`` for an empty tensor
    (``partition_parameters.py`` ``free_param``), which frees the storage only when nothing else
    holds it. torch's ``linear`` saves ``weight.t()``, a view of that storage, for the matmul's
    backward; DeepSpeed's ``zero3_linear_wrap`` ("save variable ids ... which allows for underlying
    tensor to be garbage collected", ``runtime/zero/linear.py``) replaces it only once
    ``zero.Init.__enter__`` has run (kept after exit: "This will persist unless manually reset").
    Every linear whose forward built a graph keeps its weight: all of them without recomputation;
    with recomputation the blocks run without a graph and only the head, outside them, keeps its
    own. Asked without the framework's sharding backend, the sharding and the GPU count (a sweep
    tries every strategy on one setup): the memory kernel keeps them only under DeepSpeed ZeRO-3
    (the ``deepspeed`` feature) on more than one GPU, since one GPU gathers nothing
    (``_no_gather_coalesced``: views of the partition)."""
    if not setup.built_before_zero_init:
        return 0.0
    # tied or not, the head's matmul saves a view of a 16-bit (fp32 under fp32) weight; the blocks'
    # linears keep what a gathered unit holds per weight (QLoRA: the packed 4-bit weight, which
    # bitsandbytes' MatMul4Bit saves)
    head = arch.vocab_size * arch.hidden_size * (4.0 if setup.precision == "fp32" else 2.0)
    blocks = (arch.n_params - arch.embedding_params - arch.head_params) * unit_byte
    return head if setup.activation_checkpointing != "none" else head + blocks


def _frozen_units_keep_inputs(setup: TrainingSetup) -> bool:
    """Does FSDP keep every block's checkpointed input and its gradient until backward ends?

    Read at torch 2.4.1 / transformers 4.48.1 / peft 0.13.2 and reproduced on CPU
    (memory_calibration.md, "FSDP with reentrant checkpointing keeps frozen units' inputs"). peft's
    FSDP wrap policy makes each decoder layer a unit of frozen weights. For such a unit FSDP's
    ``_register_post_backward_reshard_only_hook`` hooks the unit's inputs that require grad with
    ``register_multi_grad_hook`` and removes the handle only in ``_finalize_params``, at the end of
    backward. transformers checkpoints around the units (in the model's layer loop) with
    ``use_reentrant=True`` by default, so the hook lands on the recompute's detached leaves: their
    ``AccumulateGrad`` nodes hold each leaf and its ``.grad``. Checkpointing inside the units
    (``apply_activation_checkpointing`` after wrapping: Answer.AI's train.py, accelerate's
    ``fsdp_activation_checkpointing``) hooks the real, non-leaf inputs and keeps nothing extra.
    Asked without the sharding and the recomputation (a sweep tries every strategy): the kernel
    applies it under FSDP with full recomputation."""
    return fsdp_keeps_recomputed_inputs(setup.framework, setup.method, setup.reentrant_checkpointing)


def setup_features(setup: TrainingSetup) -> dict[str, float]:
    arch = framework_arch(setup)
    defaults = DEFAULTS[setup.framework]
    w_b, g_b, o_b = _per_param_bytes(setup.precision, setup.optimizer)
    n_lora = lora_params(arch, setup.lora_rank, setup.lora_targets) if setup.method != "full" else 0
    trainable = arch.n_params if setup.method == "full" else n_lora
    frozen_w, unit_byte, fp32_head = _frozen_weights(setup, arch, w_b)
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
    # FSDP2 mixed precision (torchtitan), accelerate's FSDP (hf): the sharded fp32 parameters are
    # the master copy
    sharded_w_b = 0.0 if sharded_fp32_master(setup, "zero3") else w_b
    fsdp_w_b = 0.0 if sharded_fp32_master(setup, "fsdp") else w_b
    tokens = setup.seq_len * setup.micro_batch
    per_layer, selective, rebuilt = _activation_elements(setup)
    dequant = _dequant_buffer(setup, arch)
    act_bytes = ACT_BYTES[setup.precision]
    # PEFT's prepare_model_for_kbit_training casts every fp16/bf16 parameter but Params4bit to fp32
    # (peft utils/other.py; trl then puts the embedding and head back to bf16, the norms stay fp32):
    # a norm's output is fp32, bitsandbytes' Linear4bit returns ``out.to(inp_dtype)``, so the first
    # MLP's output and every residual add after it are fp32. Each layer but the first keeps an fp32
    # input, 2 B more per element; attention runs on bf16 copies.
    # Empty blocks (Nemotron-NAS) keep no input of their own (input_blocks).
    fp32_stream = 0.0
    blocks = input_blocks(arch)
    if qlora_fp32_activations(setup):
        fp32_stream = (blocks - 1) * tokens * arch.hidden_size * 2.0
    ac = setup.activation_checkpointing
    offloaded = setup.cpu_offload_activations or (ac == "full" and defaults.offloads_checkpoints)
    layers = float(arch.num_layers)
    resident = min(layers, OFFLOADED_RESIDENT_LAYERS) if offloaded else layers
    logit_bytes = _logit_bytes(setup, arch, fp32_head)
    held_bytes = _held_logit_bytes(setup, arch, fp32_head)
    # torch.optim.AdamW(foreach=True) (_multi_tensor_adam): exp_avg_sq_sqrt = torch._foreach_sqrt(
    # exp_avg_sqs) is a new tensor per parameter in the state dtype, alive until addcdiv_ has used
    # it. 8-bit optimizers (bitsandbytes) and fused AdamW update in place in one kernel.
    step_temp = 0.0
    if setup.optimizer == "adamw" and defaults.adamw_step == "foreach":
        step_temp = trainable * (2.0 if setup.precision == "bf16-true" else 4.0)
    scores, scores_bwd = _eager_scores(setup, arch, act_bytes)
    # Only softmax-attention blocks keep scores (a hybrid's Mamba / DeltaNet blocks none): the
    # stored sum takes the mean over blocks, the rebuilt block and one backward an attention block's.
    attending = attention_share(arch)
    paged, paged_unit = _paged_states(setup, arch, trainable)
    return {
        "train_w": trainable * w_b,
        "train_w_sharded": trainable * sharded_w_b,
        "train_w_fsdp": trainable * fsdp_w_b,
        "frozen_w": frozen_w,
        "grads": grads,
        "grads_sharded": grads_sharded,
        "optim": trainable * o_b,
        "unit_w": unit * unit_byte,
        "unit_g": unit_g,
        "act_layer": tokens * per_layer * act_bytes,
        "act_selective": tokens * selective * act_bytes,
        # per layer over all num_layers (the kernel multiplies by layers): the non-empty blocks'
        # inputs (input_blocks; an ordinary model's share is exactly 1)
        "act_ckpt": tokens * arch.hidden_size * act_bytes * (blocks / arch.num_layers),
        "act_rebuilt": tokens * rebuilt * act_bytes,
        "layers": resident,
        "ac": float(_AC_CODE[ac]),
        "logits": tokens * arch.vocab_size * (logit_bytes + held_bytes),
        "dequant": dequant,
        "metric": float(_METRIC_CODE[setup.memory_metric]),
        "accumulates": float(setup.grad_accum > 1),
        "variable": float(setup.variable_lengths),
        "step_temp": step_temp,
        # hf shards with DeepSpeed ZeRO, whose "AdamW" is deepspeed.ops.adam.FusedAdam (in place);
        # under FSDP (accelerate) HF Trainer steps torch.optim.AdamW (foreach) on the shards: the
        # kernel uses step_temp / N there
        "step_temp_sharded": 0.0 if setup.framework == "hf" else step_temp,
        "scores": scores * attending,
        "scores_rebuilt": scores if attending > 0 else 0.0,
        "scores_bwd": scores_bwd if attending > 0 else 0.0,
        "paged": paged,
        "paged_unit": paged_unit,
        "logits_held": tokens * arch.vocab_size * held_bytes,
        "fp32_stream": fp32_stream,
        # HF Trainer shards with DeepSpeed (--sharding zero2/zero3, ZeRO-Offload); deepspeed v0.14.2
        # runtime/zero/stage3.py: grad_partitions_flat_buffer, every gradient partition in the
        # gradient-accumulation dtype (the 16-bit model dtype), allocated at init and never freed;
        # at the step _prepare_fp32_grad_for_sub_group flattens a sub-group's partition (a 16-bit
        # copy) and casts it to fp32, one sub-group (sub_group_size, default 1e9) at a time.
        "deepspeed": 1.0 if setup.framework == "hf" else 0.0,
        "ds_grad_partition": trainable * (4.0 if setup.precision == "fp32" else 2.0),
        "trainable": float(trainable),
        "ds_step_copy": 4.0 if setup.precision == "fp32" else 6.0,
        "linears_kept": _linears_kept(setup, arch, unit_byte),
        "fp32_rest": _fp32_rest_bytes(setup, arch),
        "frozen_units_keep_inputs": 1.0 if _frozen_units_keep_inputs(setup) else 0.0,
    }
