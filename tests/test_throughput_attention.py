"""Attention kernels the throughput model tells apart (models/throughput_attention.py): SDPA with a
padding mask (memory-efficient kernel, full s x s), fp32 attention (3 x TF32), each framework's and
model family's default, and fp32 matmuls at each GPU's CUDA-core rate."""

from __future__ import annotations

import pytest

from gpuprice.models.architectures import resolve_model
from gpuprice.models.gpu_hardware import fp32_share, gpu_profile
from gpuprice.models.throughput import predict_throughput
from gpuprice.models.throughput_attention import fp32_attention, padding_mask

LLAMA_8B = resolve_model("meta-llama/Llama-3.1-8B")
GEMMA2_9B = resolve_model("google/gemma-2-9b")


def speed(arch=LLAMA_8B, method="full", gpu="a100-80gb-sxm", seq=8192, mb=2, precision="bf16-mixed", **kw):
    kw.setdefault("grad_accum", 64)
    return predict_throughput(arch, method, gpu, 1, seq, mb, True, precision, "none", **kw)


@pytest.mark.parametrize(
    ("framework", "attention", "micro_batch", "masked"),
    [
        ("hf", "sdpa", 2, True),  # padded batches: a 4-D mask, no FlashAttention backend
        ("hf", "sdpa", 1, False),  # one sequence padded to its own length: mask dropped
        ("hf", "flash", 4, False),  # flash_attention_2 unpads (varlen), causal kernel
        ("hf", "eager", 4, False),  # eager's scores are the eager term's
        ("torchtune", "sdpa", 4, False),  # is_causal, padding only in the labels
        ("torchtitan", "sdpa", 4, False),
        ("litgpt", "sdpa", 4, False),
    ],
)
def test_who_passes_sdpa_a_padding_mask(
    framework: str, attention: str, micro_batch: int, masked: bool
) -> None:
    assert padding_mask(framework, attention, micro_batch) is masked


def test_gemma2_always_builds_a_4d_mask_under_sdpa() -> None:
    assert padding_mask("hf", "sdpa", 1, "gemma2") and not padding_mask("hf", "flash", 1, "gemma2")
    one = speed(GEMMA2_9B, mb=1, attention="sdpa")
    flash = speed(GEMMA2_9B, mb=1, attention="flash")
    assert one.tokens_per_sec_per_gpu < 0.9 * flash.tokens_per_sec_per_gpu


def test_masked_sdpa_computes_the_full_product_at_the_memory_efficient_kernels_speed() -> None:
    flash = speed(attention="flash")
    masked = speed(attention="sdpa")
    unset = speed()  # attention not given: the calibrated fused causal kernel
    assert flash.tokens_per_sec_per_gpu == pytest.approx(unset.tokens_per_sec_per_gpu)
    # attention is ~1/5 of an 8B step at 8K tokens on A100; x4 (full s x s, half FA2's speed) plus
    # the mask reads makes the step 40-90 % longer
    ratio = flash.tokens_per_sec_per_gpu / masked.tokens_per_sec_per_gpu
    assert 1.4 < ratio < 1.9
    assert masked.eager_share > 0  # the mask's HBM reads
    assert masked.mfu < flash.mfu and masked.flops_per_token == flash.flops_per_token
    # the gap grows with the sequence: the s x s term
    short = (
        speed(seq=1024, mb=16, attention="flash").tokens_per_sec_per_gpu
        / speed(seq=1024, mb=16, attention="sdpa").tokens_per_sec_per_gpu
    )
    assert short < ratio


def test_default_attention_of_hf_with_padded_batches_is_masked_sdpa() -> None:
    from gpuprice.models.memory_setup import TrainingSetup

    setup = TrainingSetup.checked(arch=LLAMA_8B, method="lora", micro_batch=4, attention=None)
    assert setup.attention == "sdpa" and padding_mask(setup.framework, setup.attention, setup.micro_batch)
    tune = TrainingSetup.checked(
        arch=LLAMA_8B, method="lora", micro_batch=4, framework="torchtune", attention=None
    )
    assert not padding_mask(tune.framework, tune.attention, tune.micro_batch)


@pytest.mark.parametrize(
    ("gpu", "share"),
    [
        ("a100-80gb-sxm", 19.5 / 312),
        ("h100-sxm", 67 / 989),
        ("l40s", 0.25),
        ("rtx-4090", 0.5),
        ("mi300x", 0.125),
    ],
)
def test_fp32_share_of_the_bf16_peak_per_card(gpu: str, share: float) -> None:
    assert fp32_share(gpu_profile(gpu)) == pytest.approx(share)


def test_fp32_full_training_is_bound_by_the_cuda_cores() -> None:
    bf16 = speed(mb=1, attention="flash", grad_accum=512)
    fp32 = speed(mb=1, precision="fp32", attention="flash", grad_accum=512)
    # flash casts fp32 q/k/v to 16-bit: only the matmuls slow down, to ~1/16 on A100
    assert 1 / 20 < fp32.tokens_per_sec_per_gpu / bf16.tokens_per_sec_per_gpu < 1 / 12
    assert fp32_attention("fp32", "sdpa") and not fp32_attention("fp32", "flash")
    assert not fp32_attention("bf16-mixed", "sdpa")


def test_qlora_loaded_in_fp32_keeps_its_4bit_matmuls_at_the_16bit_rate_and_attention_in_fp32() -> None:
    bf16 = speed(method="qlora", mb=1, attention="sdpa")
    fp32 = speed(method="qlora", mb=1, precision="fp32", attention="sdpa")
    ratio = fp32.tokens_per_sec_per_gpu / bf16.tokens_per_sec_per_gpu
    # slower (attention in fp32 on the memory-efficient kernel), far from a full-fp32 job's 1/16
    assert 0.2 < ratio < 0.9  # 8K tokens: fp32 attention (x12 its 16-bit time) dominates


# ---------------------------------------------------------------- PEFT's fp32 adapters (bf16-true)
def test_fp32_adapters_on_a_bf16_base_cost_their_casts_and_sums() -> None:
    from gpuprice.models.throughput_adapters import adapter_bytes_per_token, adapter_widths, fp32_adapters

    assert fp32_adapters("hf", "lora", "bf16-true") and fp32_adapters("hf", "qlora", "bf16-true")
    assert not fp32_adapters("hf", "lora", "bf16-mixed")  # autocast runs the adapters in bf16
    assert not fp32_adapters("torchtune", "lora", "bf16-true") and not fp32_adapters(
        "hf", "full", "bf16-true"
    )
    # Llama-3.1-8B, all linears: q/k/v/o + gate/up/down read 6 x 4096 + 14336 and write
    # 4096 + 2 x 1024 + 4096 + 2 x 14336 + 4096 per layer
    ins, outs = adapter_widths(LLAMA_8B, "all")
    assert ins == 32 * (6 * 4096 + 14336) and outs == 32 * (4096 + 2 * 1024 + 4096 + 2 * 14336 + 4096)
    assert adapter_widths(LLAMA_8B, "qv") == (32 * 2 * 4096, 32 * (4096 + 1024))
    # forward 10 B per input and 28 B per output element, backward 20 / 28, forward again with AC
    assert adapter_bytes_per_token(LLAMA_8B, "all", True) == pytest.approx(40 * ins + 84 * outs)
    pure = speed(method="lora", precision="bf16-true", attention="flash", lora_targets="all")
    mixed = speed(method="lora", precision="bf16-mixed", attention="flash", lora_targets="all")
    assert 0.05 < pure.adapter_share < 0.2 and mixed.adapter_share == 0
    assert pure.tokens_per_sec_per_gpu < mixed.tokens_per_sec_per_gpu
    qv = speed(method="lora", precision="bf16-true", attention="flash", lora_targets="qv")
    assert speed(method="lora", precision="bf16-true").adapter_share == 0  # targets not given: not counted
    assert pure.adapter_share > 3 * qv.adapter_share


def test_the_ranking_sweep_and_a_single_prediction_agree_on_the_new_terms() -> None:
    """predict_frame (the ranking's vectorised path) with the attention and adapter columns gives
    what predict_throughput gives for the same setup."""
    import pandas as pd

    from gpuprice.models.throughput import ModelShape, predict_frame
    from gpuprice.models.throughput_adapters import adapter_bytes_per_token
    from gpuprice.models.throughput_attention import attention_inputs

    shape = ModelShape.of(LLAMA_8B)
    rows, singles = [], []
    for precision, method in (("bf16-true", "lora"), ("fp32", "qlora"), ("bf16-mixed", "full")):
        masked, element, fp32_attn = attention_inputs("hf", "sdpa", 2, precision, 32.0, False, "llama")
        adapters = adapter_bytes_per_token(LLAMA_8B, "all", True) if precision == "bf16-true" else 0.0
        rows.append(
            dict(
                gpu="a100-80gb-sxm",
                gpus=1,
                method=method,
                seq_len=8192,
                micro_batch=2,
                grad_checkpointing=True,
                precision=precision,
                sharding="none",
                n_params=shape.n_params,
                n_active_params=shape.n_active_params,
                layers=shape.layers,
                hidden=shape.hidden,
                attn_width=shape.attn_width,
                masked_heads=masked,
                mask_bytes=element,
                fp32_attention=fp32_attn,
                adapter_bytes=adapters,
            )
        )
        singles.append(
            predict_throughput(
                LLAMA_8B,
                method,
                "a100-80gb-sxm",
                1,
                8192,
                2,
                True,
                precision,
                "none",
                attention="sdpa",
                lora_targets="all",
            ).tokens_per_sec_per_gpu
        )
    out = predict_frame(pd.DataFrame(rows))
    assert list(out["tokens_per_sec_per_gpu"]) == pytest.approx(singles)
