"""Behaviour of the throughput model: FLOPs accounting, efficiency trends, interconnects, APIs."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuprice.errors import BadInput
from gpuprice.models.architectures import resolve_model
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    benchmark_gpu,
    predict_from_benchmark_row,
    shape_from_size,
)
from gpuprice.models.throughput import (
    CALIBRATED_PARAMETERS,
    ModelShape,
    collective_busbw_gbs,
    gpu_profile,
    predict_frame,
    predict_throughput,
)

LLAMA_8B = resolve_model("meta-llama/Llama-3.1-8B")
LLAMA_70B = resolve_model("meta-llama/Llama-3.1-70B")
MIXTRAL = resolve_model("mistralai/Mixtral-8x7B-v0.1")


def tps(
    arch=LLAMA_8B, method="full", gpu="h100-sxm", gpus=1, seq=2048, mb=1, ac=False, sharding="none", **kw
):
    return predict_throughput(arch, method, gpu, gpus, seq, mb, ac, "bf16-mixed", sharding, **kw)


# ---------------------------------------------------------------- FLOPs per token
def test_full_training_counts_6n_plus_attention() -> None:
    shape = ModelShape.of(LLAMA_8B)
    result = tps(seq=4096)
    expected = 6 * shape.n_active_params + 12 * shape.layers * shape.attn_width * 4096
    assert result.flops_per_token == pytest.approx(expected)
    # llm-foundry's definition checked on a public row: MPT-13B, s = 32768, 1016 tok/s/GPU on
    # A100 = 0.5169 MFU "incl. attention flops" (cost-model.md's "+1.6 GFLOP for 8B at 8192"
    # is off by 8x: 12 x 32 x 4096 x 8192 = 12.9 GFLOP).
    mpt = ModelShape(n_params=13.011e9, n_active_params=13.011e9, layers=40, hidden=5120, attn_width=5120)
    mpt_flops = predict_throughput(mpt, "full", "a100-80gb-sxm", 8, 32768, 1, True, "bf16-mixed", "fsdp")
    assert 1016 * mpt_flops.flops_per_token / 312e12 == pytest.approx(0.5169, abs=0.001)


def test_adapters_count_4n_and_checkpointing_is_hardware_only() -> None:
    shape = ModelShape.of(LLAMA_8B)
    lora = tps(method="lora")
    assert lora.flops_per_token == pytest.approx(
        4 * shape.n_active_params + 12 * shape.layers * shape.attn_width * 2048
    )
    with_ac = tps(method="lora", ac=True)
    assert with_ac.flops_per_token == lora.flops_per_token  # MFU basis unchanged
    recompute = with_ac.hardware_flops_per_token - with_ac.flops_per_token
    assert recompute == pytest.approx(2 * shape.n_active_params + 4 * shape.layers * shape.attn_width * 2048)
    assert with_ac.hfu > with_ac.mfu


def test_checkpointing_costs_about_a_fifth_of_full_training_speed() -> None:
    # torchtune measured -21 % tokens/s from activation checkpointing (cost-model.md).
    ratio = tps(ac=True, mb=2, seq=4096).tokens_per_sec_per_gpu / tps(mb=2, seq=4096).tokens_per_sec_per_gpu
    assert 0.70 <= ratio <= 0.82


def test_moe_flops_use_active_parameters() -> None:
    result = tps(arch=MIXTRAL, method="lora", gpus=8, sharding="fsdp")
    dense_part = result.flops_per_token - 12 * 32 * 4096 * 2048
    assert dense_part == pytest.approx(4 * MIXTRAL.n_active_params)
    assert MIXTRAL.n_active_params < 0.35 * MIXTRAL.n_params


def test_mfu_is_tokens_times_model_flops_over_peak() -> None:
    result = tps(gpu="a100-80gb-sxm", mb=4)
    assert result.mfu == pytest.approx(result.tokens_per_sec_per_gpu * result.flops_per_token / 312e12)


# ---------------------------------------------------------------- efficiency trends
def test_lora_is_faster_than_full_and_qlora_pays_for_dequantisation() -> None:
    full = tps(gpu="a100-80gb-sxm", ac=True).tokens_per_sec_per_gpu
    lora = tps(gpu="a100-80gb-sxm", ac=True, method="lora").tokens_per_sec_per_gpu
    qlora = tps(gpu="a100-80gb-sxm", ac=True, method="qlora").tokens_per_sec_per_gpu
    assert lora > full
    # cost-model.md: QLoRA runs at 0.64-0.78x LoRA on A100/4090 at small micro-batches.
    assert 0.6 <= qlora / lora <= 0.9
    # A larger micro-batch amortises the per-pass dequantisation.
    qlora_mb8 = tps(gpu="a100-80gb-sxm", ac=True, method="qlora", mb=8).tokens_per_sec_per_gpu
    lora_mb8 = tps(gpu="a100-80gb-sxm", ac=True, method="lora", mb=8).tokens_per_sec_per_gpu
    assert qlora_mb8 / lora_mb8 > qlora / lora


def test_small_models_and_small_micro_batches_underutilise() -> None:
    small = predict_throughput(
        shape_from_size(0.35), "full", "a100-80gb-sxm", 1, 2048, 8, False, "bf16-mixed", "none"
    )
    big = predict_throughput(
        shape_from_size(13.0), "full", "a100-80gb-sxm", 1, 2048, 8, False, "bf16-mixed", "none"
    )
    assert small.mfu < big.mfu
    assert tps(mb=1, seq=512).mfu < tps(mb=8, seq=2048).mfu


def test_fp32_runs_at_the_cuda_core_fp32_rate() -> None:
    # PyTorch keeps TF32 off for matmuls by default: fp32 GEMMs run on the CUDA cores (H100 67 of
    # 989 TFLOP/s). Many micro-batches per optimizer step amortise the optimizer step.
    bf16 = tps(mb=4, grad_accum=256)
    fp32 = predict_throughput(LLAMA_8B, "full", "h100-sxm", 1, 2048, 4, False, "fp32", "none", grad_accum=256)
    assert fp32.tokens_per_sec_per_gpu == pytest.approx(bf16.tokens_per_sec_per_gpu * 67 / 989, rel=0.1)


def test_the_gradient_clip_reads_and_rewrites_every_gradient_in_its_dtype() -> None:
    """torch's clip_grad_norm_ reads each gradient for the norm and always rescales it (read + write,
    torch/nn/utils/clip_grad.py @01a57d87): 3 passes of the gradients' dtype, fp32 under mixed
    precision, bf16 under bf16-true; DeepSpeed ZeRO: the norm over 16-bit partitions, the rescale on
    the fp32 partition; torchtune's and litgpt's fine-tuning loops do not clip by default."""
    from gpuprice.models.throughput_recipe import OPTIMIZER_STEP_BYTES, clip_grad_bytes, optimizer_step_bytes

    assert clip_grad_bytes("bf16-mixed") == 4 + 4 + 4  # fp32 gradients: norm read, mul read + write
    assert clip_grad_bytes("fp32") == 12
    assert clip_grad_bytes("bf16-true") == 2 + 2 + 2  # bf16 gradients
    assert clip_grad_bytes("bf16-mixed", "torchtitan", "fsdp") == 12  # FSDP2's fp32 sharded grads
    assert (
        clip_grad_bytes("bf16-mixed", "hf", "zero3") == clip_grad_bytes("bf16-true", "hf", "zero2") == 2 + 8
    )
    assert clip_grad_bytes("bf16-true", "torchtune") == clip_grad_bytes("bf16-true", "litgpt") == 0
    foreach = OPTIMIZER_STEP_BYTES[("adamw", "foreach")]
    assert optimizer_step_bytes() == foreach + 12
    assert optimizer_step_bytes("adamw", "foreach", "bf16-true") == foreach / 2 + 6
    # the clip follows the gradients' dtype, not the states': 8-bit AdamW keeps 1-byte states
    eight_bit = OPTIMIZER_STEP_BYTES[("adamw8bit", "foreach")]
    assert optimizer_step_bytes("adamw8bit", "foreach", "bf16-true") == eight_bit + 6
    assert (
        optimizer_step_bytes("adamw", "fused", "bf16-true", "torchtune")
        == OPTIMIZER_STEP_BYTES[("adamw", "fused")] / 2
    )
    # estimate passes its framework and sharding through: torchtune's step is lighter than hf's
    assert 0 < tps(mb=4, framework="torchtune").optimizer_share < tps(mb=4).optimizer_share


def test_deepspeed_zero_steps_fused_adam_with_its_copies() -> None:
    """HF Trainer's zero2/zero3 is DeepSpeed: FusedAdam on the fp32 partition (28 B), the 16-bit
    gradients flattened (4 B) and cast to fp32 (6 B), the master copied back to 16 bits (6 B), and
    its clip (10 B); the other frameworks' zero3 is FSDP and keeps its own AdamW and clip."""
    from gpuprice.models.throughput_recipe import OPTIMIZER_STEP_BYTES, optimizer_step_bytes

    fused = OPTIMIZER_STEP_BYTES[("adamw", "fused")]
    for sharding in ("zero2", "zero3"):
        assert optimizer_step_bytes("adamw", "foreach", "bf16-mixed", "hf", sharding) == fused + 16 + 10
    assert optimizer_step_bytes("adamw", "foreach", "fp32", "hf", "zero3") == fused + 8 + 12
    assert optimizer_step_bytes("adamw", "fused", "bf16-mixed", "torchtitan", "zero3") == fused + 12
    assert optimizer_step_bytes("adamw", "foreach", "bf16-mixed", "hf", "fsdp") == (
        OPTIMIZER_STEP_BYTES[("adamw", "foreach")] + 12
    )


def test_the_optimizer_step_is_a_memory_bound_pass_once_per_step() -> None:
    from gpuprice.models.gpu_hardware import gpu_profile
    from gpuprice.models.throughput import optimizer_step_bytes

    one, many = tps(mb=4, grad_accum=1), tps(mb=4, grad_accum=16)
    assert one.optimizer_share > 0.1 > many.optimizer_share > 0  # 8B full on one H100, 8K tokens/step
    # The step's time is its bytes through HBM: shares x seconds per token x tokens per step.
    seconds_per_token = 1.0 / one.tokens_per_sec_per_gpu
    step_seconds = one.optimizer_share * seconds_per_token * 4 * 2048
    expected = (
        optimizer_step_bytes() * LLAMA_8B.n_params / (gpu_profile("h100-sxm").memory_bandwidth_tbps * 1e12)
    )
    assert step_seconds == pytest.approx(expected, rel=0.05)
    # fused AdamW moves ~3x fewer bytes than foreach; 8-bit states fewer still; adapters ~none
    fused = tps(mb=4, adamw_step="fused").optimizer_share
    eight_bit = tps(mb=4, optimizer="adamw8bit").optimizer_share
    assert one.optimizer_share > fused > eight_bit > 0
    assert tps(mb=4, method="lora").optimizer_share == 0
    # ZeRO/FSDP shard the states: each GPU updates 1/n of them
    sharded = tps(mb=4, gpus=8, sharding="zero3", gpu="h100-sxm").optimizer_share
    assert sharded < one.optimizer_share / 4


def test_ddp_all_reduce_and_zero2_gather_are_per_optimizer_step() -> None:
    # Gradient accumulation skips DDP's all-reduce on all but the last micro-batch (no_sync) and
    # ZeRO-2 all-gathers updated parameters once per step; ZeRO-3 gathers every micro-batch.
    for sharding in ("none", "zero2"):
        once = tps(gpu="a100-80gb-pcie", gpus=8, sharding=sharding, grad_accum=1).communication_share
        amortised = tps(gpu="a100-80gb-pcie", gpus=8, sharding=sharding, grad_accum=8).communication_share
        assert amortised < once, sharding
    zero3 = [
        tps(gpu="a100-80gb-pcie", gpus=8, sharding="zero3", grad_accum=g).communication_share for g in (1, 8)
    ]
    assert zero3[1] == pytest.approx(zero3[0], rel=0.05)


def test_every_catalog_gpu_has_a_sensible_prediction() -> None:
    from gpuprice.models.catalog import gpu_slugs

    for slug in gpu_slugs():
        result = tps(gpu=slug, method="lora", mb=2, ac=True)
        assert 0.05 < result.mfu < 0.8, slug
        assert result.tokens_per_sec_per_gpu > 0


# ---------------------------------------------------------------- interconnect and scaling
def test_nvlink_scales_full_finetuning_and_pcie_pays_a_penalty() -> None:
    sxm = tps(gpu="a100-80gb-sxm", gpus=8, sharding="zero3", mb=4, ac=True)
    pcie = tps(gpu="a100-80gb-pcie", gpus=8, sharding="zero3", mb=4, ac=True)
    single = tps(gpu="a100-80gb-sxm", gpus=1, mb=4, ac=True)
    assert sxm.tokens_per_sec_per_gpu > 0.85 * single.tokens_per_sec_per_gpu
    assert pcie.tokens_per_sec_per_gpu < 0.75 * sxm.tokens_per_sec_per_gpu
    assert pcie.communication_share > 0.2 > sxm.communication_share


def test_adapter_training_without_sharding_does_not_care_about_pcie() -> None:
    sxm = tps(gpu="a100-80gb-sxm", gpus=4, method="lora", mb=2)
    pcie = tps(gpu="a100-80gb-pcie", gpus=4, method="lora", mb=2)
    assert pcie.tokens_per_sec_per_gpu == pytest.approx(sxm.tokens_per_sec_per_gpu, rel=0.01)


def test_multi_node_depends_on_the_fabric() -> None:
    one_node = tps(arch=LLAMA_70B, gpus=8, sharding="fsdp", mb=2, ac=True)
    infiniband = tps(arch=LLAMA_70B, gpus=64, sharding="fsdp", mb=2, ac=True)
    ethernet = tps(arch=LLAMA_70B, gpus=64, sharding="fsdp", mb=2, ac=True, fabric_gbps_per_gpu=25)
    assert infiniband.tokens_per_sec_per_gpu > 0.85 * one_node.tokens_per_sec_per_gpu
    assert ethernet.tokens_per_sec_per_gpu < 0.6 * infiniband.tokens_per_sec_per_gpu


def test_collective_bandwidth_by_link() -> None:
    assert collective_busbw_gbs(gpu_profile("h100-sxm"), 8) == pytest.approx(360)
    assert collective_busbw_gbs(gpu_profile("h100-pcie"), 8) < 50
    assert collective_busbw_gbs(gpu_profile("rtx-4090"), 2) < collective_busbw_gbs(gpu_profile("l40s"), 2)
    # NVL cards are bridged in pairs: two GPUs talk over NVLink, eight over PCIe.
    assert collective_busbw_gbs(gpu_profile("h100-nvl"), 2) > 5 * collective_busbw_gbs(
        gpu_profile("h100-nvl"), 8
    )


# ---------------------------------------------------------------- APIs
def test_op_level_selective_checkpointing_recomputes_every_second_matmul() -> None:
    # torchtitan's op-level policy (activation_checkpoint.py, `_get_custom_policy`): a block's
    # aten.mm outputs are saved unless their count is even, so Llama's k, o and up projections are
    # recomputed: 2 x 32 x 4096 x (1024 + 4096 + 14336) = 5.10 GFLOP a token
    from gpuprice.models.selective_checkpointing import recomputed_matmul_flops, saved_matmul_outputs

    assert saved_matmul_outputs(LLAMA_8B) == 4096 + 1024 + 14336 + 4096  # q, v, gate, down kept
    assert recomputed_matmul_flops(LLAMA_8B) == 2 * 32 * 4096 * (1024 + 4096 + 14336)
    none, full = tps(seq=8192), tps(seq=8192, ac=True)
    selective = tps(seq=8192, selective_checkpointing=True)
    assert selective.hardware_flops_per_token - none.hardware_flops_per_token == pytest.approx(
        5.10e9, rel=1e-3
    )
    assert selective.flops_per_token == none.flops_per_token  # MFU's model FLOPs leave recompute out
    assert full.tokens_per_sec_per_gpu < selective.tokens_per_sec_per_gpu < none.tokens_per_sec_per_gpu
    # with full recompute asked as well, full wins; MoE and size-only shapes recompute half the blocks
    assert tps(seq=8192, ac=True, selective_checkpointing=True) == full
    moe = ModelShape.of(MIXTRAL)
    assert moe.recomputed_matmul_flops_per_token == pytest.approx(
        MIXTRAL.n_active_params - MIXTRAL.embedding_params - MIXTRAL.head_params
    )
    assert shape_from_size(7.0).selective_recompute_flops() == shape_from_size(7.0).n_active_params


def test_selective_rows_of_the_benchmarks_say_which_policy() -> None:
    base = {
        "gpu": "A100 80GB",
        "gpu_count": "64",
        "model": "meta-llama/Meta-Llama-3-8B",
        "seq_len": "8192",
        "workload": "pretrain_full",
        "precision": "bf16 mixed",
        "micro_batch": "1",
        "act_ckpt": "selective",
        "sharding": "FSDP2",
    }
    op = benchmark_case({**base, "notes": "AC 'selective op'"})
    layer = benchmark_case({**base, "notes": "AC 'selective layer'"})
    assert not op.checkpointing and op.selective_flops == pytest.approx(5.10e9, rel=1e-3)
    assert op.selective_attention == 0.0  # SDPA's output is saved
    # torchtitan's default layer option '2': every other layer recomputed whole
    assert (
        layer.selective_flops == pytest.approx(op.shape.n_active_params) and layer.selective_attention == 0.5
    )


def test_predict_frame_matches_single_predictions() -> None:
    configs = [
        ("h100-sxm", 8, "full", 4096, 2, True, "bf16-mixed", "fsdp", LLAMA_70B),
        ("a100-80gb-pcie", 4, "full", 2048, 1, True, "bf16-mixed", "zero3", LLAMA_8B),
        ("rtx-4090", 1, "qlora", 2048, 1, True, "bf16-mixed", "none", LLAMA_8B),
        ("l40s", 2, "lora", 1024, 4, False, "fp32", "zero2", LLAMA_8B),
        ("h100-sxm", 32, "lora", 2048, 1, True, "bf16-true", "fsdp", MIXTRAL),
    ]
    rows = []
    for gpu, gpus, method, seq, mb, ac, precision, sharding, arch in configs:
        shape = ModelShape.of(arch)
        rows.append(
            dict(
                gpu=gpu,
                gpus=gpus,
                method=method,
                seq_len=seq,
                micro_batch=mb,
                grad_checkpointing=ac,
                precision=precision,
                sharding=sharding,
                n_params=shape.n_params,
                n_active_params=shape.n_active_params,
                layers=shape.layers,
                hidden=shape.hidden,
                attn_width=shape.attn_width,
            )
        )
    frame = pd.DataFrame(rows, index=[10, 11, 12, 13, 14])
    out = predict_frame(frame)
    assert list(out.index) == [10, 11, 12, 13, 14]
    for (gpu, gpus, method, seq, mb, ac, precision, sharding, arch), (_, row) in zip(configs, out.iterrows()):
        single = predict_throughput(arch, method, gpu, gpus, seq, mb, ac, precision, sharding)
        assert row["tokens_per_sec_per_gpu"] == pytest.approx(single.tokens_per_sec_per_gpu)
        assert row["mfu"] == pytest.approx(single.mfu)


def test_predict_frame_handles_a_large_mixed_frame() -> None:
    # Its speed is the bench figure sweep.throughput_rows_per_s (make bench), not a unit test.
    from bench.sweep_speed import mixed_throughput_frame

    n = 200_000
    frame = mixed_throughput_frame(n, ModelShape.of(LLAMA_8B))
    out = predict_frame(frame)
    assert out["tokens_per_sec_per_gpu"].gt(0).all()
    assert len(out) == n and out.index.equals(frame.index)


def test_bad_inputs_are_bad_input() -> None:
    with pytest.raises(BadInput, match="method"):
        tps(method="prefix")
    with pytest.raises(BadInput, match="sharding"):
        tps(sharding="zero4")
    with pytest.raises(BadInput, match="h100-sxm"):
        tps(gpu="h100-sxn")
    with pytest.raises(BadInput, match="precision"):
        predict_throughput(LLAMA_8B, "full", "h100-sxm", 1, 2048, 1, False, "int3", "none")


# ---------------------------------------------------------------- benchmark rows
@pytest.mark.parametrize(
    ("raw", "slug"),
    [
        ("h100_80gb", "h100-sxm"),
        ("a100_40gb", "a100-40gb"),
        ("a100_80gb", "a100-80gb-sxm"),
        ("A100-40GB-SXM", "a100-40gb"),
        ("H100-80GB-SXM", "h100-sxm"),
        ("RTX 6000 Ada 48GB", "rtx-6000-ada"),
        ("RTX 3090 (280W, no NVLink)", "rtx-3090"),
        ("A5000-24GB", "a5000"),
        ("L40S", "l40s"),
        ("h200_141gb", "h200-sxm"),
    ],
)
def test_benchmark_gpu_names(raw: str, slug: str) -> None:
    assert benchmark_gpu(raw).slug == slug


def test_unknown_benchmark_gpu_is_bad_input() -> None:
    with pytest.raises(BadInput, match="Gaudi"):
        benchmark_gpu("Gaudi 2")


def test_benchmark_row_interpretation() -> None:
    row = {
        "gpu": "A100-80GB",
        "gpu_count": "1",
        "model": "Qwen-7B",
        "params_b": "7.72",
        "seq_len": "2048",
        "workload": "finetune_lora",
        "precision": "fp16+gptq-int4",
        "micro_batch": "",
        "act_ckpt": "yes",
        "sharding": "",
    }
    case = benchmark_case(row)
    assert (case.method, case.micro_batch, case.checkpointing, case.sharding) == ("qlora", 1, True, "none")
    assert case.shape.layers == 32  # found in the model catalog
    megatron = benchmark_case(
        {
            **row,
            "gpu_count": "64",
            "sharding": "TP4 PP8 CP1",
            "workload": "pretrain_full",
            "precision": "fp8",
            "model": "GPT3-175B",
            "params_b": "175",
        }
    )
    assert (megatron.method, megatron.precision, megatron.sharding) == ("full", "fp8", "model_parallel")
    assert (megatron.shape.layers, megatron.shape.hidden) == (96, 12288)  # GPT-3 paper shape


def test_unknown_model_uses_params_b_and_the_name_size() -> None:
    row = {
        "gpu": "a100_80gb",
        "gpu_count": "8",
        "model": "MPT-125m",
        "params_b": "0.174",
        "seq_len": "65536",
        "tokens_per_sec_per_gpu": "20368",
        "workload": "pretrain_full",
        "precision": "amp_bf16",
        "micro_batch": "1",
        "act_ckpt": "False",
        "sharding": "FULL_SHARD",
    }
    case = benchmark_case(row)
    assert (case.shape.layers, case.shape.hidden) == (12, 768)
    assert case.shape.n_params == pytest.approx(0.174e9)
    assert predict_from_benchmark_row(row) == pytest.approx(20368, rel=0.15)
    with pytest.raises(BadInput, match="params_b"):
        benchmark_case({**row, "model": "Mystery", "params_b": ""})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DeepSpeed ZeRO-3", "zero3"),
        ("ZeRO 2", "zero2"),
        ("SHARD_GRAD_OP", "zero2"),
        ("FULL_SHARD", "fsdp"),
        ("HYBRID_SHARD", "fsdp"),
        ("FSDP+cpu offload", "fsdp"),
        ("DDP", "none"),
        ("", "none"),
        ("TP4 PP8 CP1", "model_parallel"),
        ("TP1 PP1 CP1", "model_parallel"),
    ],
)
def test_benchmark_sharding_texts(text: str, expected: str) -> None:
    row = {
        "gpu": "H100 SXM",
        "gpu_count": "8",
        "model": "Llama-2-7b",
        "params_b": "6.74",
        "workload": "finetune_full",
        "precision": "bf16",
        "sharding": text,
    }
    assert benchmark_case(row).sharding == expected


def test_size_from_the_name_when_params_b_is_missing() -> None:
    row = {
        "gpu": "h100_80gb",
        "gpu_count": "8",
        "model": "MPT-13b",
        "params_b": "",
        "seq_len": "2048",
        "workload": "pretrain_full",
        "precision": "amp_bf16",
        "micro_batch": "8",
        "act_ckpt": "",
        "sharding": "FULL_SHARD",
    }
    case = benchmark_case(row)  # MPT-13b: no catalog row, so the size its name states
    assert case.shape.n_params == pytest.approx(13e9) and case.shape.layers == 40
    assert 0.3 < predict_from_benchmark_row(row) * 6 * 13e9 / 989e12 < 0.7  # a sane MFU
    # a name the catalog holds reads its real shape (mosaicml/mpt-7b: 6.65B, 32 layers)
    real = benchmark_case({**row, "model": "MPT-7b"}).shape
    assert real.n_params == pytest.approx(6.6496e9, rel=1e-4) and real.layers == 32


def test_calibrated_parameters_cover_every_family() -> None:
    complete = CALIBRATED_PARAMETERS.complete()
    for family in ("blackwell", "volta", "turing", "cdna"):
        assert 0 < complete.family_efficiency[family] <= 1
    assert complete.family_efficiency["blackwell"] == complete.family_efficiency["hopper"]


def test_transformers_llama4_runs_every_routed_expert_on_every_token() -> None:
    # Llama4TextMoe repeats each token once per expert and bmm's all 16 (router scores zero the
    # rest): a LoRA step computes the 90.6B parameters of the 15 unrouted experts too (4 FLOPs a
    # parameter a token: forward and input gradients), as hardware FLOPs; MFU stays on the active
    from gpuprice.models.frameworks import runs_every_expert
    from gpuprice.models.memory import TrainingSetup
    from gpuprice.models.memory_features import framework_arch

    scout = resolve_model("meta-llama/Llama-4-Scout-17B-16E")
    unrouted = scout.n_params - scout.n_active_params
    hf = tps(arch=scout, method="lora", framework="hf")
    own_code = tps(arch=scout, method="lora", framework="torchtune")
    assert runs_every_expert("hf", scout.model_type) and not runs_every_expert("torchtune", scout.model_type)
    assert hf.hardware_flops_per_token - own_code.hardware_flops_per_token == pytest.approx(4 * unrouted)
    assert hf.flops_per_token == own_code.flops_per_token
    assert hf.tokens_per_sec_per_gpu < 0.5 * own_code.tokens_per_sec_per_gpu
    # other MoE models under transformers dispatch tokens to their top-k experts only
    assert not runs_every_expert("hf", MIXTRAL.model_type)
    assert tps(arch=MIXTRAL, method="lora").hardware_flops_per_token == pytest.approx(
        tps(arch=MIXTRAL, method="lora", framework="torchtune").hardware_flops_per_token
    )
    # the memory model keeps every expert's activations under transformers (one rule)
    for framework, experts in (("hf", 16), ("torchtune", 1)):
        setup = TrainingSetup(arch=scout, method="lora", framework=framework)
        assert framework_arch(setup).experts_per_token == experts
