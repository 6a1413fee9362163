"""Which attention kernel a training step runs, and what it costs against the fused causal kernel.

The calibrated attention term (:mod:`gpuprice.models.throughput_core`) is FlashAttention-2 (or
SDPA's flash backend) with ``is_causal``: it skips the masked upper half of the score matrix and
runs in 16-bit. Two common setups leave that kernel, and neither is fitted here:

* **A padding mask under SDPA.** transformers drops the 2-D attention mask and calls SDPA with
  ``is_causal=True`` only when no token is masked (``AttentionMaskConverter._ignore_causal_mask_sdpa``,
  ``modeling_attn_mask_utils.py``; ``masking_utils.sdpa_mask`` keeps the same rule); a batch with
  padding gets a 4-D mask instead, and PyTorch's dispatcher refuses FlashAttention for any non-null
  ``attn_mask`` (``aten/src/ATen/native/transformers/sdp_utils_cpp.h``, ``check_for_attn_mask``
  among the flash constraints), so the memory-efficient kernel runs. It computes every tile of the
  s x s product (``is_causal`` is False: no half skipped) and reads the mask for every head.
  The memory-efficient backend is xformers' CUTLASS kernel, which the FlashAttention-2 paper
  (Dao 2023, arXiv 2307.08691, section 4.1, A100 forward + backward, with and without causal
  mask) measures at about half FlashAttention-2's speed: "FlashAttention-2 is around 2x faster
  than FlashAttention and FlashAttention in xformers (the 'cutlass' implementation)".
  ``flash`` (``attn_implementation="flash_attention_2"``) unpads the batch with the same mask
  (``_upad_input`` / ``flash_attn_varlen_func``): no s x s, causal kernel.
* **fp32 activations under SDPA.** FlashAttention takes fp16/bf16 only (``sdp_utils.cpp``,
  ``check_flash_attention_datatype``); the memory-efficient kernel accepts fp32 and on sm80+ runs
  it on the tensor cores as three TF32 products per product (``mem_eff_attention/gemm_kernel_utils.h``,
  ``DefaultGemmType<ArchTag, float>``: ``OpMultiplyAddFastF32``), i.e. a third of the TF32 rate,
  which is half the BF16 rate on every catalog card: 1/6 of the 16-bit attention rate.

Gemma-2 under SDPA always gets a 4-D mask: ``Gemma2Model._update_causal_mask`` builds one "in any
case, not only when there's padding" (sliding-window layers; no ``_ignore_causal_mask_sdpa``), so
its SDPA runs the memory-efficient kernel whatever the batch (transformers 4.4x
``models/gemma2/modeling_gemma2.py``; its ``_check_and_enable_sdpa`` turned the default into eager up
to 4.47, which ``--attention eager`` expresses).

Who passes a padding mask: transformers models under HF Trainer / TRL / accelerate loops
(``--framework hf``) whose collator pads each batch to its longest sequence
(``DataCollatorWithPadding``, ``DataCollatorForSeq2Seq``, TRL's default collator; packing is off
by default in TRL's ``SFTConfig``): with more than one sequence per micro-batch a batch of
unequal lengths has zeros in its mask. One sequence per micro-batch is padded to its own length
(all ones: the mask is dropped). torchtune, torchtitan and litgpt call SDPA with ``is_causal``
and no mask (padding only shows in the labels), Unsloth runs its own causal kernels.
"""

from __future__ import annotations

# FlashAttention-2 paper, section 4.1: the memory-efficient (xformers CUTLASS) kernel at about
# half FlashAttention-2's throughput on the same problem.
MEM_EFFICIENT_SLOWDOWN = 2.0
# A causal kernel computes about half of the s x s tiles; with an explicit mask all of them.
CAUSAL_SKIP = 2.0
# fp32 attention on sm80+: 3 x TF32 products (OpMultiplyAddFastF32), TF32 = 1/2 the BF16 rate.
FP32_ATTENTION_RATE = 1.0 / 6.0
# Bytes per element of the 4-D additive mask transformers builds in the activations' dtype.
MASK_BYTES = {"fp32": 4.0}
DEFAULT_MASK_BYTES = 2.0


# transformers model types whose SDPA path always passes an explicit 4-D mask (see above).
ALWAYS_MASKED_MODEL_TYPES = frozenset({"gemma2"})


def padding_mask(framework: str, attention: str, micro_batch: int, model_type: str = "") -> bool:
    """Does SDPA receive an explicit mask (and so run the memory-efficient kernel over the full
    s x s product)? transformers (``framework`` hf) with ``sdpa`` and more than one sequence per
    micro-batch, or a model type that always builds one (see the module docstring)."""
    from gpuprice.models.frameworks import DEFAULTS

    defaults = DEFAULTS.get(framework)
    passes_mask = defaults.passes_padding_mask if defaults else True
    always = model_type in ALWAYS_MASKED_MODEL_TYPES
    return attention == "sdpa" and passes_mask and (micro_batch > 1 or always)


def fp32_attention(precision: str, attention: str) -> bool:
    """Do the attention's q, k, v reach the kernel in fp32? Under ``precision`` fp32 (no autocast),
    except ``flash``: transformers' FlashAttention-2 path casts fp32 inputs to 16-bit first."""
    return precision == "fp32" and attention != "flash"


def mask_bytes(precision: str) -> float:
    """Bytes per element of the additive mask (the activations' dtype)."""
    return MASK_BYTES.get(precision, DEFAULT_MASK_BYTES)


def attention_inputs(
    framework: str,
    attention: str,
    micro_batch: int,
    precision: str,
    heads: float,
    keeps_scores: bool,
    model_type: str = "",
) -> tuple[float, float, bool]:
    """(heads given an explicit padding mask, the mask's bytes per element, fp32 attention) for one
    setup: the throughput model's ``masked_heads``, ``mask_bytes`` and ``fp32_attention`` inputs.
    Attention that keeps explicit scores (eager, ALiBi) is the eager term's, not these."""
    if keeps_scores:
        return 0.0, 0.0, False
    masked = padding_mask(framework, attention, micro_batch, model_type)
    return (heads if masked else 0.0), mask_bytes(precision), fp32_attention(precision, attention)
