"""The training-recipe vocabulary every layer shares: one definition of each choice.

The CLI offers these values, the workload YAML validates against them, the memory and throughput
models branch on them and the reports label them; each imports the names from here, so a new
value is added once. Tuples are derived from the Literal types so the two cannot drift.
"""

from __future__ import annotations

from typing import Literal, get_args

Method = Literal["full", "lora", "qlora"]
# paged_adamw (bitsandbytes' 32-bit PagedAdamW, HF's ``paged_adamw_32bit``) is an extra value beside
# the contract's four: fp32 states in CUDA unified memory that page to CPU RAM (memory_calibration.md).
Optimizer = Literal["adamw", "adamw8bit", "paged_adamw8bit", "sgd", "paged_adamw"]
Precision = Literal["fp32", "bf16-mixed", "bf16-true"]
# LoRA's adapted linears: all (PEFT's "all-linear": q, k, v, o and the MLP / every expert), qv (the
# query and value projections, PEFT's default for Llama-like models), and beside the contract's two,
# qkvo (the attention projections only: q, k, v, o, a common recipe, e.g. fms-hf-tuning's).
LoraTargets = Literal["all", "qv", "qkvo"]
# How a job spreads its states over GPUs, as a user picks it (fsdp is ZeRO-3's tier).
Sharding = Literal["none", "zero2", "zero3", "fsdp"]
# A memory strategy is a sharding or CPU offload of the optimizer (what fit sweeps also try).
MemoryStrategy = Literal["none", "zero2", "zero3", "fsdp", "offload"]
# What the peak is compared with: nvidia-smi / the card ("device"), torch.cuda.max_memory_reserved
# ("reserved") or torch.cuda.max_memory_allocated ("allocated").
MemoryMetric = Literal["device", "reserved", "allocated"]

# --framework: whose documented defaults apply (models/frameworks.py); --loss: how the loss sees the
# logits (full: the framework's whole-logits loss; full-16bit: cross-entropy straight on the 16-bit
# logits, no fp32 upcast, as custom loops calling nn.CrossEntropyLoss on ``output.logits`` do);
# --activation-checkpointing: what backward recomputes.
Framework = Literal["hf", "torchtune", "torchtitan", "litgpt", "unsloth"]
LossKernel = Literal["full", "chunked", "fused", "full-16bit"]
ActivationCheckpointing = Literal["none", "selective", "full"]
# --attention: the attention kernel. flash (FlashAttention-2 / SDPA's flash backend) and sdpa
# (PyTorch scaled_dot_product_attention: flash or memory-efficient backends) keep no seq x seq
# matrix; eager (explicit softmax(Q K^T + mask) V, also every model whose code builds an explicit
# mask or bias: ALiBi, relative position bias) keeps the scores of every head.
Attention = Literal["flash", "sdpa", "eager"]

METHODS: tuple[Method, ...] = get_args(Method)
OPTIMIZERS: tuple[Optimizer, ...] = get_args(Optimizer)
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
LORA_TARGETS: tuple[LoraTargets, ...] = get_args(LoraTargets)
SHARDINGS: tuple[Sharding, ...] = get_args(Sharding)
MEMORY_METRICS: tuple[MemoryMetric, ...] = get_args(MemoryMetric)
FRAMEWORKS: tuple[Framework, ...] = get_args(Framework)
LOSS_KERNELS: tuple[LossKernel, ...] = get_args(LossKernel)
ACTIVATION_CHECKPOINTING: tuple[ActivationCheckpointing, ...] = get_args(ActivationCheckpointing)
ATTENTIONS: tuple[Attention, ...] = get_args(Attention)
# The strategies a fit sweep tries, least complex first (fsdp would repeat zero3's figures).
SWEEP_STRATEGIES: tuple[MemoryStrategy, ...] = ("none", "zero2", "zero3", "offload")

# GPUs in one node as clouds sell them (HGX/DGX boards): the unit of multi-node jobs, of node
# counts in cost terms and of the intra- vs inter-node bandwidth split.
GPUS_PER_NODE = 8
