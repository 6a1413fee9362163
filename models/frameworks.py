"""Training frameworks' documented defaults that change memory and speed (``--framework``).

Each entry encodes what the framework does unless told otherwise; nothing here is fitted to
measurements. Sources (file paths in each project's repository; details in
``models/memory_calibration.md``):

* ``hf`` - transformers Trainer / TRL / PEFT / accelerate / DeepSpeed. Loss: ``ForCausalLMLoss``
  upcasts the whole logits tensor, ``logits = logits.float()`` (``src/transformers/loss/loss_utils.py``).
  Gradient checkpointing wraps whole decoder layers (``gradient_checkpointing_enable``); there is no
  op-level selective recompute. QLoRA: ``peft.prepare_model_for_kbit_training`` casts the
  non-quantized layers to fp32 and enables gradient checkpointing, so the residual stream is fp32 and
  bitsandbytes' ``Linear4bit`` returns ``out.to(inp_dtype)``: QLoRA's activations are fp32; its 4-bit
  matmul saves its input for backward. Eager RMSNorm upcasts to fp32 (``LlamaRMSNorm.forward``). Sharded full
  training (``--sharding zero3``) is counted as DeepSpeed ZeRO-3 does (deepspeed v0.14.2
  ``runtime/zero/stage3.py``): 16-bit parameters + 16-bit gradient partitions kept in one buffer
  from init + fp32 master + states (16 B/param / N), one sub-group's gradients flattened and cast to
  fp32 at the step, and the gradient bucket allocated on every rank; ``--sharding fsdp`` is
  accelerate's FSDP (fp32 flat parameters are the master).
* ``torchtune`` - loss ``CEWithChunkedOutputLoss`` (``torchtune/modules/loss``: the output projection
  returns 8 chunks and "only upcast one chunk at a time"); training dtype ``bf16`` = pure bf16
  (no fp32 master); QLoRA through torchao ``NF4Tensor`` / ``linear_nf4`` (the frozen 4-bit weight's
  matmul keeps no input for a weight gradient); FSDP2 ``fully_shard`` per layer shards the frozen base.
* ``torchtitan`` - loss ``cross_entropy(pred.flatten(0, 1).float(), ...)`` (full fp32 upcast);
  FSDP2 with ``MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)``: the sharded parameters
  *are* the fp32 master weights and 16-bit copies exist only for the gathered units (16 B/param);
  selective AC ``op`` (``torchtitan/distributed/activation_checkpoint.py``) saves the outputs of
  SDPA and of every second matmul, recomputing the rest.
* ``litgpt`` - fine-tuning calls ``model(x, lm_head_chunk_size=128)`` and ``chunked_cross_entropy``
  (``litgpt/utils.py``, chunk 128 tokens). Its comment says the chunking only spreads the
  deallocation at the start of backward: every chunk's logits and log-softmax stay alive together,
  so the whole logits are materialised; ``F.cross_entropy`` runs on the bf16 chunks (no
  ``.float()``), so the loss keeps 16-bit tensors: 6 B/logit at the start of backward under
  ``bf16-true`` (``loss_upcasts=False``; autocast upcasts under ``bf16-mixed``). Default
  ``precision: bf16-true``. ``GPT`` always builds
  ``lm_head = nn.Linear`` beside ``wte = nn.Embedding`` (``litgpt/model.py``): tied checkpoints
  (Gemma, Llama-3.2) get a separate head. ``bf16-mixed`` keeps the module in fp32 under autocast
  (Lightning's precision semantics), so QLoRA's non-quantized layers are fp32. Sharded runs use
  Fabric's FSDP with ``auto_wrap_policy={Block}`` (``finetune/*.py``): a block's LoRA adapters and
  frozen weights share one FSDP unit, and PyTorch's FSDP docs warn that with mixed frozen and
  trainable parameters "the gradient memory usage will be higher than expected (namely,
  equivalent to not freezing those parameters)" (confirmed for litgpt in Lightning-AI/litgpt#1417).
* ``unsloth`` - Triton kernels for RMSNorm, SwiGLU/GeGLU, RoPE and the LoRA MLP/attention
  (``unsloth/kernels``): elementwise intermediates are recomputed in the fused backward as under
  ``torch.compile``; fused chunked cross-entropy (no full logits); ``use_gradient_checkpointing=
  "unsloth"`` offloads the checkpointed layer inputs to CPU RAM; the 4-bit base keeps 16-bit
  embeddings (no fp32 upcast).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuprice.models.choices import (  # re-exported: the vocabulary lives in choices
    ACTIVATION_CHECKPOINTING,
    FRAMEWORKS,
    LOSS_KERNELS,
    ActivationCheckpointing,
    Framework,
    LossKernel,
)

__all__ = [
    "ACTIVATION_CHECKPOINTING",
    "DEFAULTS",
    "FRAMEWORKS",
    "LOSS_KERNELS",
    "ActivationCheckpointing",
    "Framework",
    "FrameworkDefaults",
    "LossKernel",
    "defaults_of",
]


@dataclass(frozen=True)
class FrameworkDefaults:
    """What a framework does by default (see the module docstring for each source)."""

    name: str
    precision: str  # the training dtype its recipes use
    loss: str  # full (whole fp32 logits), chunked (one fp32 chunk at a time), fused (no logits)
    fused_kernels: bool  # norms/activations fused without torch.compile (elementwise recomputed)
    offloads_checkpoints: bool  # full AC keeps the layer inputs in CPU RAM
    qlora_saves_linear_inputs: bool  # 4-bit matmul keeps its input (bitsandbytes) or not (torchao)
    qlora_fp32_rest: bool  # non-quantized layers upcast to fp32 under mixed precision (PEFT)
    sharded_fp32_master: bool  # FSDP2: sharded fp32 params are the master copy (no 16-bit copy)
    # The unchunked loss upcasts the logits to fp32 (transformers' ForCausalLMLoss and torchtitan:
    # ``logits.float()``; torchtune's CrossEntropyLoss on ``logits.float()``), or runs
    # F.cross_entropy on the 16-bit logits (litgpt's chunked_cross_entropy under bf16-true).
    loss_upcasts: bool
    dequant_per_linear: bool  # 4-bit base dequantised one linear at a time (else a block's linears)
    # FSDP wraps each block with its LoRA adapters and its frozen weights in one unit
    # (use_orig_params=True): the unit's gradient is as big as if nothing were frozen.
    fsdp_unit_grads_whole: bool
    unties_embeddings: bool  # the LM head is its own matrix even when the checkpoint ties it
    summary: str  # one line shown with results
    # The attention kernel unless told otherwise: transformers picks "sdpa" where the model supports
    # it (``_check_and_adjust_attn_implementation``, default since v4.36), torchtune, torchtitan and
    # litgpt call F.scaled_dot_product_attention, Unsloth runs FlashAttention / xformers kernels.
    attention: str = "sdpa"
    # Batches of varying length (padding to the longest sequence of each batch: transformers'
    # DataCollatorWithPadding / DataCollatorForSeq2Seq, litgpt, torchtune without packing) rather
    # than one fixed shape (torchtitan's fixed seq_len, packing, padding to max_length).
    variable_lengths: bool = True
    # QLoRA's activations are fp32 under mixed precision: PEFT's prepare_model_for_kbit_training
    # casts the embedding to fp32, so the residual stream is fp32, and bitsandbytes' Linear4bit
    # returns ``out.to(inp_dtype)`` (``bitsandbytes/nn/modules.py``): every block tensor is fp32.
    qlora_fp32_activations: bool = False
    # AdamW step implementation: "foreach" (torch.optim.AdamW's default on CUDA: _multi_tensor_adam
    # builds torch._foreach_sqrt(exp_avg_sqs), one state-sized temporary list, before addcdiv) or
    # "fused" (one kernel, no temporary). HF Trainer's default optim "adamw_torch" and litgpt leave
    # the default; torchtune recipes pass fused=True; torchtitan's optimizer implementation
    # defaults to "fused".
    adamw_step: str = "foreach"
    # Whether the framework's default training loop clips the gradient norm (the clip's bytes:
    # throughput_recipe.clip_grad_bytes). transformers' Trainer: max_grad_norm 1.0 (TrainingArguments),
    # accelerator.clip_grad_norm_ -> torch's or FSDP's clip_grad_norm_, DeepSpeed's gradient_clipping
    # "auto"; Unsloth trains through it (TRL's SFTTrainer). torchtitan: job config training.max_norm
    # 1.0, dist_utils.clip_grad_norm_ (pytorch/torchtitan torchtitan/distributed/utils.py @0032be99).
    # torchtune's recipes read cfg.get("clip_grad_norm", None): off unless set (pytorch/torchtune
    # recipes/full_finetune_single_device.py @01067f61); litgpt's finetune/full.py calls
    # optimizer.step() with no clip (Lightning-AI/litgpt litgpt/finetune/full.py @0077627d).
    clips_grad_norm: bool = True
    # transformers models get the batch's 2-D attention mask and, when some token is padding, pass
    # SDPA a 4-D mask (no FlashAttention backend: models/throughput_attention.py). torchtune,
    # torchtitan, litgpt and Unsloth call their causal kernels without a padding mask.
    passes_padding_mask: bool = False
    # ``--sharding fsdp`` under bf16-mixed keeps fp32 flat parameters as the master copy (no 16-bit
    # copy): accelerate's ``Accelerator.prepare_model`` upcasts every trainable FSDP flat parameter
    # to fp32 when mixed precision is on (huggingface/accelerate src/accelerate/accelerator.py
    # @00093722: ``param.data = param.data.to(torch.float32)  # upcasting``, warning "Upcasted low
    # precision parameters ... because mixed precision turned on in FSDP"). ``zero3`` stays
    # DeepSpeed's accounting (16-bit params + fp32 master).
    fsdp_fp32_master: bool = False
    # One fused qkv linear whose output SDPA keeps alive through v (litgpt's ``CausalSelfAttention``;
    # LoRA on it is ``LoRAQKVLinear`` with lora_dropout 0.05): memory_features._fused_qkv_elements
    fused_qkv: bool = False
    # A trainable RMSNorm weight keeps the fp32 normalised tensor for its gradient (litgpt's
    # ``(x_normed * weight.float()).to(dtype)``) rather than a 16-bit one (transformers')
    norm_grad_keeps_fp32: bool = False
    # Under ``--attention flash`` grouped K/V heads reach FlashAttention as they are
    # (``flash_attn_func``: "MQA/GQA by passing in KV with fewer heads than Q"): transformers'
    # flash_attention_2 path calls no repeat_kv, Unsloth's fast attention hands K and V to
    # flash_attn_func unexpanded. torchtune (expand + flatten), torchtitan (repeat_kv) and litgpt
    # (expand) widen them to the query's heads before the kernel, the width the count keeps.
    flash_takes_grouped_kv: bool = False


DEFAULTS: dict[str, FrameworkDefaults] = {
    "hf": FrameworkDefaults(
        "hf",
        "bf16-mixed",
        "full",
        fused_kernels=False,
        offloads_checkpoints=False,
        qlora_saves_linear_inputs=True,
        qlora_fp32_rest=True,
        qlora_fp32_activations=True,
        sharded_fp32_master=False,
        fsdp_fp32_master=True,
        loss_upcasts=True,
        dequant_per_linear=False,
        fsdp_unit_grads_whole=False,
        unties_embeddings=False,
        summary="transformers: whole logits upcast to fp32 in the loss; eager RMSNorm/SwiGLU; "
        "its gradient checkpointing wraps whole layers (selective = PyTorch's op-level policy on the "
        "blocks); ZeRO keeps 16-bit params + fp32 master",
        passes_padding_mask=True,
        flash_takes_grouped_kv=True,
    ),
    "torchtune": FrameworkDefaults(
        "torchtune",
        "bf16-true",
        "chunked",
        fused_kernels=False,
        offloads_checkpoints=False,
        qlora_saves_linear_inputs=False,
        qlora_fp32_rest=False,
        sharded_fp32_master=False,
        loss_upcasts=True,
        dequant_per_linear=True,
        fsdp_unit_grads_whole=False,
        unties_embeddings=False,
        clips_grad_norm=False,
        summary="torchtune: chunked cross-entropy (8 chunks, one upcast at a time); pure bf16; "
        "torchao NF4 keeps no linear inputs; FSDP2 shards the frozen base",
        adamw_step="fused",
    ),
    "torchtitan": FrameworkDefaults(
        "torchtitan",
        "bf16-mixed",
        "full",
        fused_kernels=False,
        offloads_checkpoints=False,
        qlora_saves_linear_inputs=True,
        qlora_fp32_rest=False,
        sharded_fp32_master=True,
        loss_upcasts=True,
        dequant_per_linear=False,
        fsdp_unit_grads_whole=False,
        unties_embeddings=False,
        summary="torchtitan: fp32 logits in the loss; FSDP2 keeps sharded fp32 master params and "
        "16-bit copies only for gathered units; op-level selective AC saves SDPA + every 2nd matmul",
        adamw_step="fused",
        variable_lengths=False,
    ),
    "litgpt": FrameworkDefaults(
        "litgpt",
        "bf16-true",
        "full",
        fused_kernels=False,
        offloads_checkpoints=False,
        qlora_saves_linear_inputs=True,
        qlora_fp32_rest=True,
        sharded_fp32_master=False,
        loss_upcasts=False,
        dequant_per_linear=False,
        fsdp_unit_grads_whole=True,
        unties_embeddings=True,
        clips_grad_norm=False,
        fused_qkv=True,
        norm_grad_keeps_fp32=True,
        summary="litgpt: lm_head and cross-entropy chunked by 128 tokens, all chunks alive together "
        "(whole logits materialised); bf16-true by default; separate LM head; FSDP units mix LoRA "
        "and frozen weights (whole-block gradients)",
    ),
    "unsloth": FrameworkDefaults(
        "unsloth",
        "bf16-true",
        "fused",
        fused_kernels=True,
        offloads_checkpoints=True,
        qlora_saves_linear_inputs=True,
        qlora_fp32_rest=False,
        sharded_fp32_master=False,
        loss_upcasts=True,
        dequant_per_linear=False,
        fsdp_unit_grads_whole=False,
        unties_embeddings=False,
        summary="unsloth: Triton RMSNorm/SwiGLU/RoPE/LoRA kernels; fused chunked cross-entropy; "
        "'unsloth' gradient checkpointing offloads layer inputs to CPU; 16-bit embeddings",
        attention="flash",
        flash_takes_grouped_kv=True,
    ),
}


# transformers model types whose MoE block runs every routed expert on every token:
# ``Llama4TextMoe.forward`` repeats the hidden states once per expert
# (``hidden_states.repeat(router_scores.shape[1], 1)``), scales each copy by the router's score
# (sigmoid of -inf, so zero, off the top-k) and ``Llama4TextExperts`` runs ``torch.bmm`` over all
# of them (transformers ``models/llama4/modeling_llama4.py`` @000c33fdfde12e1ffafbfcdb3c926df5727a00b6).
# A step computes and keeps every expert's activations, not the top-k's. Frameworks with their own
# model code (torchtune, torchtitan, litgpt) dispatch each token to its experts only.
EVERY_EXPERT_MODEL_TYPES = frozenset({"llama4", "llama4_text"})


def runs_every_expert(framework: str, model_type: str) -> bool:
    """Does the framework's model code run every routed expert on every token? One rule for the
    memory model's activations and the throughput model's FLOPs."""
    return framework == "hf" and model_type in EVERY_EXPERT_MODEL_TYPES


def defaults_of(framework: str) -> FrameworkDefaults:
    return DEFAULTS[framework]


def qlora_fp32_stream(framework: str, method: str, precision: str, sharding: str = "none") -> bool:
    """Does QLoRA run on an fp32 residual stream? Where the framework upcasts the non-quantized
    layers under mixed precision (PEFT's ``prepare_model_for_kbit_training``: the norms stay fp32
    and bitsandbytes' Linear4bit returns its input's dtype), unless the 4-bit weights are sharded
    (ZeRO-3/FSDP: trl's ``is_sharded_qlora`` skips the cast). One rule for memory and throughput."""
    defaults = DEFAULTS[framework]
    return (
        method == "qlora"
        and defaults.qlora_fp32_activations
        and defaults.qlora_fp32_rest
        and precision == "bf16-mixed"
        and sharding not in ("zero3", "fsdp")
    )


def fsdp_keeps_recomputed_inputs(framework: str, method: str, reentrant_checkpointing: bool) -> bool:
    """Under FSDP with full recomputation, does the framework keep every block's recomputed input
    and its gradient until backward ends? hf's LoRA/QLoRA (peft's wrap policy: units of frozen
    weights) with transformers' reentrant checkpointing around the units
    (memory_features._frozen_units_keep_inputs). One rule for the memory kernel and the assumptions."""
    return framework == "hf" and method != "full" and reentrant_checkpointing
