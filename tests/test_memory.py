"""Memory-fit model: the terms, sharding, validation, the vectorised sweep and row mapping."""

from __future__ import annotations

import numpy as np
import pytest

from gpuprice.errors import BadInput
from gpuprice.models.architectures import catalog, shape_for_params
from gpuprice.models.calibration.memory_rows import UnusableRow, setup_from_measurement_row
from gpuprice.models.catalog import get_gpu
from gpuprice.models.memory import (
    DEFAULT_CONSTANTS,
    GB,
    NF4_BYTES,
    NF4_DQ_BYTES,
    SWEEP_COLUMNS,
    MemoryConstants,
    TrainingSetup,
    estimate_memory,
    fit_sweep,
    lora_params,
    per_gpu_gb_many,
)

LLAMA2_7B = catalog()["meta-llama/Llama-2-7b-hf"].arch
LLAMA3_8B = catalog()["meta-llama/Llama-3.1-8B"].arch
LLAMA3_70B = catalog()["meta-llama/Llama-3.1-70B"].arch
MIXTRAL = catalog()["mistralai/Mixtral-8x7B-v0.1"].arch
# No context, fragmentation or buffers: isolates the physical terms.
BARE = MemoryConstants(
    cuda_context_gb=0, fragmentation=0, activation_factor=1, qlora_dequant_layers=0, comm_buffer_gb=0
)


def setup(**kw) -> TrainingSetup:
    # two micro-batches per step: gradients persist beside the activations, so the breakdown shows
    # every state term (one micro-batch frees them: test_without_accumulation_...)
    base = dict(arch=LLAMA2_7B, method="full", grad_accum=2)
    base.update(kw)
    return TrainingSetup(**base)


def states_bytes_per_param(s: TrainingSetup) -> float:
    b = estimate_memory(s, BARE).breakdown
    return (b.weights + b.gradients + b.optimizer) * GB / s.arch.n_params


# ----- bytes per parameter ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("precision", "optimizer", "expected"),
    [
        ("bf16-mixed", "adamw", 18.0),  # HF anatomy: 6 + 4 + 8 (fp32 master counted with the optimizer)
        ("fp32", "adamw", 16.0),  # 4 + 4 + 8
        ("bf16-true", "adamw", 8.0),  # 2 + 2 + 4 (bf16 m, v)
        ("bf16-true", "adamw8bit", 6.0),  # 2 + 2 + 2 (+ block scales)
        ("bf16-mixed", "adamw8bit", 12.0),  # 2 + 4 + (2 + 4 master)
        ("bf16-mixed", "paged_adamw8bit", 12.0),  # paging does not shrink steady state
        ("bf16-true", "paged_adamw", 12.0),  # 2 + 2 + 8: bitsandbytes' 32-bit states are fp32
        ("fp32", "sgd", 12.0),  # 4 + 4 + 4 momentum
        ("bf16-true", "sgd", 6.0),
    ],
)
def test_full_finetune_state_bytes(precision: str, optimizer: str, expected: float) -> None:
    assert states_bytes_per_param(setup(precision=precision, optimizer=optimizer)) == pytest.approx(
        expected, abs=0.01
    )


def test_lora_params_formula_sheet_example() -> None:
    # r=8 on q,v of Llama-2-7B: 32 layers x 2 matrices x 8 x (4096 + 4096) = 4,194,304 (litgpt's table)
    assert lora_params(LLAMA2_7B, 8, "qv") == 4_194_304
    assert lora_params(LLAMA2_7B, 8, "all") > 4 * lora_params(LLAMA2_7B, 8, "qv")
    assert lora_params(MIXTRAL, 8, "all") > 8 * lora_params(MIXTRAL, 8, "qv")  # every expert adapted


def test_lora_gradients_and_optimizer_cover_adapters_only() -> None:
    est = estimate_memory(setup(method="lora", precision="bf16-true", lora_rank=16, lora_targets="all"), BARE)
    n = est.lora_params
    assert est.trainable_params == n
    assert est.breakdown.gradients == pytest.approx(n * 2 / GB)
    assert est.breakdown.optimizer == pytest.approx(n * 4 / GB)
    assert est.breakdown.weights == pytest.approx((LLAMA2_7B.n_params * 2 + n * 2) / GB)


def test_lora_base_dtype_by_precision() -> None:
    bf16 = estimate_memory(setup(method="lora", precision="bf16-mixed"), BARE).breakdown.weights
    fp32 = estimate_memory(setup(method="lora", precision="fp32"), BARE).breakdown.weights
    assert fp32 == pytest.approx(2 * bf16, rel=0.01)


@pytest.mark.parametrize(("double_quant", "nf4"), [(False, NF4_BYTES), (True, NF4_DQ_BYTES)])
def test_qlora_weights_nf4_plus_16bit_rest(double_quant: bool, nf4: float) -> None:
    s = setup(method="qlora", precision="bf16-true", qlora_double_quant=double_quant)
    est = estimate_memory(s, BARE)
    quant = LLAMA2_7B.quantizable_params
    expected = quant * nf4 + (LLAMA2_7B.n_params - quant) * 2 + est.lora_params * 2
    assert est.breakdown.weights == pytest.approx(expected / GB)
    # embeddings + head of Llama-2-7B stay 16-bit: 2 x 32000 x 4096 x 2 B ~ 0.52 GB
    assert (LLAMA2_7B.n_params - quant) * 2 / GB == pytest.approx(0.52, abs=0.01)


def test_double_quant_saves_0373_bits_per_param() -> None:
    plain = estimate_memory(setup(method="qlora", qlora_double_quant=False), BARE).breakdown.weights
    dq = estimate_memory(setup(method="qlora", qlora_double_quant=True), BARE).breakdown.weights
    assert (plain - dq) * GB == pytest.approx(LLAMA2_7B.quantizable_params * 0.373 / 8, rel=1e-6)


def test_qlora_under_amp_upcasts_rest_and_logits() -> None:
    true = estimate_memory(setup(method="qlora", precision="bf16-true"), BARE).breakdown
    mixed = estimate_memory(setup(method="qlora", precision="bf16-mixed"), BARE).breakdown
    rest = LLAMA2_7B.n_params - LLAMA2_7B.quantizable_params
    assert mixed.weights - true.weights == pytest.approx(rest * 2 / GB, rel=0.05)
    # PEFT's fp32 head under AMP: fp32 logits, log-softmax and gradients (12 B at the start of
    # backward), the same as the upcasting 16-bit head's peak
    assert mixed.logits == pytest.approx(true.logits)


# ----- activations and logits ---------------------------------------------------------------------
def test_activations_linear_in_tokens_no_quadratic_term() -> None:
    a1 = estimate_memory(setup(seq_len=1024), BARE).breakdown.activations
    a2 = estimate_memory(setup(seq_len=2048), BARE).breakdown.activations
    a4 = estimate_memory(setup(seq_len=1024, micro_batch=4), BARE).breakdown.activations
    assert a2 == pytest.approx(2 * a1)
    assert a4 == pytest.approx(4 * a1)


def test_full_finetune_activation_count_near_formula_sheet() -> None:
    # Formula sheet: ~34 sbh bytes per layer for Llama-2-7B (SwiGLU, FlashAttention, no dropout).
    # Its count has no fp32 norm copies and no saved act(gate): fused kernels (compile) match it.
    s = setup(precision="bf16-true", seq_len=1, micro_batch=1, compile=True)
    per_layer = estimate_memory(s, BARE).breakdown.activations * GB / LLAMA2_7B.num_layers
    assert 30 <= per_layer / LLAMA2_7B.hidden_size <= 40


def test_gradient_checkpointing_keeps_layer_inputs_plus_one_layer() -> None:
    # No logits (fused loss): the layer inputs plus the one layer backward rebuilds.
    off = estimate_memory(
        setup(seq_len=4096, precision="bf16-true", loss="fused"), BARE
    ).breakdown.activations
    on = estimate_memory(
        setup(seq_len=4096, precision="bf16-true", grad_checkpointing=True, loss="fused"), BARE
    ).breakdown.activations
    layer = off / LLAMA2_7B.num_layers
    inputs = 4096 * LLAMA2_7B.hidden_size * 2 * LLAMA2_7B.num_layers / GB
    assert on == pytest.approx(inputs + layer)


def test_the_rebuilt_layer_and_the_loss_are_not_alive_together() -> None:
    # Backward rebuilds a checkpointed layer only after the loss's backward freed the logits: the
    # peak holds the layer inputs plus the larger of the two (the breakdown shows the rebuilt layer
    # beyond the logits). Without recomputation every layer's tensors are alive at the loss.
    def parts(**kw: object) -> tuple[float, float]:
        b = estimate_memory(setup(seq_len=4096, precision="bf16-true", **kw), BARE).breakdown
        return b.activations, b.logits

    inputs = 4096 * LLAMA2_7B.hidden_size * 2 * LLAMA2_7B.num_layers / GB
    layer = parts(loss="fused")[0] / LLAMA2_7B.num_layers
    for loss in ("full", "chunked", "fused"):
        logits = parts(loss=loss)[1]
        activations, counted = parts(loss=loss, grad_checkpointing=True)
        assert counted == pytest.approx(logits)
        assert activations + counted == pytest.approx(inputs + max(layer, logits))
        none, with_logits = parts(loss=loss)
        assert none + with_logits == pytest.approx(layer * LLAMA2_7B.num_layers + logits)


def test_a_loop_that_keeps_the_output_keeps_its_logits() -> None:
    # AnswerDotAI/fsdp_qlora train.py holds `output` through backward and the step; transformers
    # before 4.46 returns the fp32 upcast the loss read: 4 B a logit at the loss and beside the
    # rebuilt layer. Loops that drop the output (HF Trainer's compute_loss) keep nothing.
    one = dict(arch=LLAMA3_8B, method="lora", seq_len=4096, micro_batch=2, precision="bf16-true")
    count = 2 * 4096 * 128256
    dropped = estimate_memory(TrainingSetup(**one), BARE).breakdown.logits
    kept = estimate_memory(TrainingSetup(**one, logits_kept=True), BARE).breakdown.logits
    assert kept - dropped == pytest.approx(count * 4 / GB)
    fused = TrainingSetup(**one, loss="fused", logits_kept=True)
    assert estimate_memory(fused, BARE).breakdown.logits == 0


def test_lora_on_qv_saves_fewer_activations_than_full_or_qlora() -> None:
    full = estimate_memory(setup(method="full"), BARE).breakdown.activations
    lora_qv = estimate_memory(setup(method="lora", lora_targets="qv"), BARE).breakdown.activations
    qlora_qv = estimate_memory(
        setup(method="qlora", lora_targets="qv", grad_checkpointing=False), BARE
    ).breakdown.activations
    assert lora_qv < full
    assert qlora_qv > lora_qv  # bitsandbytes' 4-bit matmul keeps its input


def test_logits_bytes_follow_the_loss_code() -> None:
    def logits(**fields: object) -> float:
        one = TrainingSetup(arch=LLAMA3_8B, method="lora", seq_len=4096, micro_batch=2, **fields)
        return estimate_memory(one, BARE).breakdown.logits

    count = 2 * 4096 * 128256
    # transformers' ForCausalLMLoss upcasts: saved fp32 log-softmax + fp32 grad + fp32 input grad
    assert logits(precision="bf16-true") == pytest.approx(count * 12 / GB)
    # litgpt's chunked_cross_entropy on bf16 chunks: 16-bit log-softmax + grad + input grad
    assert logits(precision="bf16-true", framework="litgpt") == pytest.approx(count * 6 / GB)
    # ... unless autocast (bf16-mixed) runs cross_entropy in fp32
    assert logits(precision="bf16-mixed", framework="litgpt") == pytest.approx(count * 12 / GB)


def test_variable_lengths_keep_one_earlier_loss_region_in_reserved_memory() -> None:
    def est(metric: str, variable: bool) -> object:
        one = TrainingSetup(
            arch=LLAMA3_8B, method="lora", seq_len=4096, memory_metric=metric, variable_lengths=variable
        )
        return estimate_memory(one, BARE)

    for metric in ("reserved", "device"):
        gap = est(metric, True).per_gpu_gb - est(metric, False).per_gpu_gb
        assert gap == pytest.approx(est(metric, False).breakdown.logits)
    assert est("allocated", True).per_gpu_gb == est("allocated", False).per_gpu_gb
    # torchtitan trains at one fixed seq_len
    assert not TrainingSetup(arch=LLAMA3_8B, method="full", framework="torchtitan").variable_lengths


def test_foreach_adamw_step_temporary_sets_the_peak_of_short_full_fine_tunes() -> None:
    def peak(**fields: object) -> float:
        one = TrainingSetup(arch=LLAMA3_8B, method="full", precision="bf16-true", seq_len=256, **fields)
        return estimate_memory(one, BARE).per_gpu_gb

    # torch.optim.AdamW(foreach): torch._foreach_sqrt(exp_avg_sqs) = one bf16 state-sized list
    extra = peak() - peak(framework="torchtitan")  # torchtitan's AdamW is fused
    assert extra > 0.5 * LLAMA3_8B.n_params * 2 / GB
    assert peak(optimizer="adamw8bit") < peak()  # bitsandbytes updates in place


def test_moe_activations_scale_with_routed_experts() -> None:
    dense_like = MIXTRAL.model_copy(update={"num_experts": 1, "experts_per_token": 1})
    moe = estimate_memory(TrainingSetup(arch=MIXTRAL, method="full"), BARE).breakdown.activations
    dense = estimate_memory(TrainingSetup(arch=dense_like, method="full"), BARE).breakdown.activations
    assert 1.5 < moe / dense < 2.0  # two experts' MLP tensors per token, attention unchanged


# ----- sharding ------------------------------------------------------------------------------------
def test_zero2_divides_gradients_and_optimizer_only() -> None:
    one = estimate_memory(setup(), BARE).breakdown
    eight = estimate_memory(setup(gpus=8, sharding="zero2"), BARE).breakdown
    assert eight.weights == pytest.approx(one.weights)
    assert eight.gradients == pytest.approx(one.gradients / 8)
    assert eight.optimizer == pytest.approx(one.optimizer / 8)
    assert eight.activations == pytest.approx(one.activations)


def test_zero3_divides_weights_and_adds_units_in_flight() -> None:
    one = estimate_memory(setup(), BARE).breakdown
    unit = LLAMA2_7B.largest_layer_params
    for sharding in ("zero3", "fsdp"):
        eight = estimate_memory(setup(gpus=8, sharding=sharding), BARE).breakdown
        # hf + fsdp: accelerate's fp32 flat parameters are the master, no sharded 16-bit copy
        sharded = one.weights / 8 if sharding == "zero3" else 0.0
        assert eight.weights == pytest.approx(sharded + 2 * unit * 2 / GB)
        if sharding == "fsdp":
            assert eight.gradients == pytest.approx(one.gradients / 8 + unit * 2 / GB)
        else:  # DeepSpeed ZeRO-3 keeps 16-bit gradient partitions; fp32 ones only at the step
            assert eight.gradients == pytest.approx(LLAMA2_7B.n_params * 2 / 8 / GB + unit * 2 / GB)
    pure = estimate_memory(setup(gpus=8, sharding="fsdp", precision="bf16-true"), BARE).breakdown
    assert pure.weights == pytest.approx(LLAMA2_7B.n_params * 2 / 8 / GB + 2 * unit * 2 / GB)


def test_offload_keeps_only_units_in_flight() -> None:
    est = estimate_memory(
        TrainingSetup(arch=LLAMA3_70B, method="full", gpus=8, sharding="offload"), BARE
    ).breakdown
    unit = LLAMA3_70B.largest_layer_params
    assert est.optimizer == 0
    assert est.weights == pytest.approx(2 * unit * 2 / GB)


def test_data_parallel_lora_does_not_shrink_per_gpu() -> None:
    one = estimate_memory(setup(method="lora"))
    dp = estimate_memory(setup(method="lora", gpus=8, sharding="zero2"))
    assert dp.breakdown.weights == pytest.approx(one.breakdown.weights)
    assert dp.per_gpu_gb >= one.per_gpu_gb * 0.98


def test_full_70b_needs_sharding() -> None:
    single = estimate_memory(TrainingSetup(arch=LLAMA3_70B, method="full"))
    sharded = estimate_memory(
        TrainingSetup(arch=LLAMA3_70B, method="full", gpus=16, sharding="zero3", grad_checkpointing=True)
    )
    assert single.per_gpu_gb > 1000
    assert sharded.per_gpu_gb < 141


# ----- totals, margin, metric -----------------------------------------------------------------------
def test_breakdown_sums_to_peak_and_margin_is_separate() -> None:
    est = estimate_memory(setup(method="qlora", margin=0.25, gpus=2, sharding="fsdp"))
    assert est.breakdown.total() == pytest.approx(est.per_gpu_gb)
    assert est.planning_gb == pytest.approx(est.per_gpu_gb / (1 - 0.25))  # 25 % of the card kept free
    out = est.contract_dict()
    assert set(out["breakdown"]) == {
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "logits",
        "overhead",
        "cuda_context_gb",
        "allocator_slack_gb",
    }
    assert out["per_gpu_gb"] == pytest.approx(sum(out["breakdown"].values()), abs=2e-3)
    assert out["breakdown"]["cuda_context_gb"] > 0 and out["breakdown"]["allocator_slack_gb"] > 0


def test_memory_metric_orders_allocated_reserved_device() -> None:
    peaks = [
        estimate_memory(setup(method="lora", memory_metric=m)).per_gpu_gb
        for m in ("allocated", "reserved", "device")
    ]
    assert peaks[0] < peaks[1] < peaks[2]


def test_qlora_defaults_to_gradient_checkpointing() -> None:
    assert TrainingSetup(arch=LLAMA2_7B, method="qlora").grad_checkpointing is True
    assert TrainingSetup(arch=LLAMA2_7B, method="qlora", grad_checkpointing=False).grad_checkpointing is False
    assert TrainingSetup(arch=LLAMA2_7B, method="lora").grad_checkpointing is False


def test_default_qlora_70b_fits_one_80gb_gpu_but_lora_does_not() -> None:
    qlora = estimate_memory(TrainingSetup(arch=LLAMA3_70B, method="qlora"))
    lora = estimate_memory(TrainingSetup(arch=LLAMA3_70B, method="lora"))
    a100, l40s = get_gpu("a100-80gb-sxm").usable_memory_gb, get_gpu("l40s").usable_memory_gb
    assert qlora.fits(a100) and not qlora.fits(l40s)
    assert not lora.fits(a100) and lora.per_gpu_gb > 140


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("seq_len", 0),
        ("gpus", 0),
        ("micro_batch", -1),
        ("margin", 0.95),
        ("margin", -0.1),
        ("lora_rank", 100_000),
        ("method", "prefix"),
        ("sharding", "zero9"),
        ("seq_len", 10_000_000),
    ],
)
def test_validation_one_line(field: str, value: object) -> None:
    fields = {"arch": LLAMA2_7B, "method": "lora", field: value}
    with pytest.raises(BadInput) as exc:
        TrainingSetup.checked(**fields)
    message = str(exc.value)
    assert "\n" not in message and field.replace("_", "-") in message


def test_absurd_token_count_rejected() -> None:
    with pytest.raises(BadInput, match="absurd"):
        TrainingSetup.checked(arch=LLAMA2_7B, method="lora", seq_len=1_000_000, micro_batch=1000)


# ----- sweep ---------------------------------------------------------------------------------------
GPU_MEMORY = {"l4": 24.0, "a100-40gb": 40.0, "a100-80gb-sxm": 80.0, "h200-sxm": 141.0}


def sweep_setups() -> list[TrainingSetup]:
    return [
        TrainingSetup(arch=LLAMA3_70B, method="full", grad_checkpointing=True),
        TrainingSetup(arch=LLAMA3_8B, method="lora", precision="bf16-true", seq_len=4096, micro_batch=2),
        TrainingSetup(arch=LLAMA3_70B, method="qlora", margin=0.3),
        TrainingSetup(arch=MIXTRAL, method="full", optimizer="adamw8bit", precision="bf16-true"),
    ]


def test_sweep_shape_and_columns() -> None:
    frame = fit_sweep(sweep_setups(), GPU_MEMORY, [1, 2, 8])
    assert tuple(frame.columns) == SWEEP_COLUMNS
    assert len(frame) == 4 * 4 * 3 * 4
    first = frame.iloc[0]
    assert (first.setup_index, first.gpu, first.gpu_count, first.sharding) == (0, "l4", 1, "none")
    assert (frame.headroom_gb == frame.gpu_memory_gb - frame.device_gb).all()
    margin = np.array([sweep_setups()[i].margin for i in frame.setup_index])
    assert (frame.fits == (frame.headroom_gb >= margin * frame.gpu_memory_gb)).all()
    tight = (frame.headroom_gb >= 0) & ~frame.fits
    assert (frame.verdict == np.where(frame.fits, "fits", np.where(tight, "tight", "does_not_fit"))).all()


def test_sweep_agrees_exactly_with_scalar_path() -> None:
    setups = sweep_setups()
    frame = fit_sweep(setups, GPU_MEMORY, [1, 2, 8], ("none", "zero2", "zero3", "fsdp", "offload"))
    for row in frame.itertuples():
        one = setups[row.setup_index].model_copy(update={"gpus": row.gpu_count, "sharding": row.sharding})
        est = estimate_memory(one, card_gb=row.gpu_memory_gb)
        assert row.per_gpu_gb == est.per_gpu_gb  # bit for bit: same kernel, same operations
        assert row.planning_gb == est.planning_gb
        assert row.fits == est.fits(row.gpu_memory_gb)


def test_least_complex_marks_first_fitting_strategy() -> None:
    frame = fit_sweep(sweep_setups(), GPU_MEMORY, [1, 2, 8, 16], ("offload", "zero3", "none", "zero2"))
    order = {"none": 0, "zero2": 1, "zero3": 2, "offload": 3}
    for _, group in frame.groupby(["setup_index", "gpu", "gpu_count"]):
        # the best verdict first (fits, then tight), then the least complex strategy
        fitting = group[group.fits] if group.fits.any() else group[group.verdict == "tight"]
        marked = group[group.least_complex]
        if fitting.empty:
            assert marked.empty
        else:
            assert len(marked) == 1
            assert order[marked.sharding.iloc[0]] == min(order[s] for s in fitting.sharding)
    # 70B full fine-tune (18 B/param = 1.27 TB of state): up to 8x H200 only with CPU offload; 16x ZeRO-3
    chosen = frame[(frame.setup_index == 0) & (frame.gpu == "h200-sxm") & frame.least_complex]
    assert dict(zip(chosen.gpu_count, chosen.sharding)) == {
        1: "offload",
        2: "offload",
        8: "offload",
        16: "zero3",
    }


def test_sweep_accepts_mappings_and_rejects_unknown_strategy() -> None:
    frame = fit_sweep([{"arch": LLAMA2_7B, "method": "lora"}], {"l40s": 48.0}, [1])
    assert frame.fits.any()
    with pytest.raises(BadInput, match="zero9"):
        fit_sweep(sweep_setups(), GPU_MEMORY, [1], ("zero9",))
    assert fit_sweep([], GPU_MEMORY, [1]).empty


def test_sweep_covers_the_colleague_sized_grid() -> None:
    # Its speed is the bench figure sweep.memory_fit_configs_per_s (make bench), not a unit test.
    sizes = np.linspace(0.5, 400, 50)
    setups = [
        TrainingSetup(arch=shape_for_params(float(p)), method=("full", "lora", "qlora")[i % 3])
        for i, p in enumerate(sizes)
    ]
    gpus = {f"gpu{i}": 16.0 + 8 * i for i in range(40)}
    counts = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    frame = fit_sweep(setups, gpus, counts)
    assert len(frame) == 50 * 40 * 10 * 4
    assert frame["per_gpu_gb"].gt(0).all()


def test_per_gpu_gb_many_matches_scalar() -> None:
    setups = sweep_setups() + [setup(gpus=4, sharding="zero3")]
    many = per_gpu_gb_many(setups)
    assert many.tolist() == [estimate_memory(s).per_gpu_gb for s in setups]


# ----- measurement rows ----------------------------------------------------------------------------
def row(**kw) -> dict[str, str]:
    base = dict(
        model="Llama-2-7b",
        params_b="6.74",
        method="lora",
        precision="bf16-true",
        seq_len="1304",
        micro_batch="1",
        grad_checkpointing="False",
        num_gpus="1",
        sharding="none",
        notes="LoRA r=8 q,v only",
        memory_metric="torch.cuda.max_memory_allocated",
        gpu="A100-40GB",
    )
    base.update(kw)
    return base


def test_row_mapping_litgpt() -> None:
    s = setup_from_measurement_row(row())
    assert (s.arch, s.method, s.precision, s.lora_rank, s.lora_targets, s.memory_metric) == (
        LLAMA2_7B,
        "lora",
        "bf16-true",
        8,
        "qv",
        "allocated",
    )
    assert s.grad_checkpointing is False and s.sharding == "none"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (dict(precision="bf16-mixed"), ("lora", "fp32")),  # Lightning: fp32 module under autocast
        (dict(method="qlora", precision="bf16-mixed+bnb.nf4"), ("qlora", "bf16-mixed")),
        (dict(method="qlora", precision="fp16 + GPTQ-int4 base"), ("qlora", "bf16-true")),
        (dict(precision="bf16 (HF Trainer bf16=True)"), ("lora", "bf16-mixed")),
        (dict(method="full_bf16_adamw", precision="bf16"), ("full", "bf16-true")),
        (dict(method="full_adamw", precision="bf16", sharding="zero3", num_gpus="2"), ("full", "bf16-mixed")),
        (dict(method="full_adam8bit", precision="bf16"), ("full", "bf16-true")),
    ],
)
def test_row_mapping_precision_regimes(changes: dict[str, str], expected: tuple[str, str]) -> None:
    s = setup_from_measurement_row(row(**changes))
    assert (s.method, s.precision) == expected


def test_row_mapping_details() -> None:
    s = setup_from_measurement_row(
        row(
            method="qlora",
            precision="bf16-true+bnb.nf4-dq",
            sharding="fsdp+cpu_offload",
            num_gpus="2",
            grad_checkpointing="unknown",
            memory_metric="peak reserved",
            notes="LoRA r=64 on c_attn,c_proj,w1,w2",
        )
    )
    assert (s.sharding, s.gpus, s.grad_checkpointing, s.qlora_double_quant) == ("offload", 2, True, True)
    assert (s.lora_rank, s.lora_targets, s.memory_metric) == (64, "all", "reserved")
    assert setup_from_measurement_row(row(sharding="ddp", num_gpus="2")).sharding == "none"
    assert setup_from_measurement_row(row(method="full_adam8bit")).optimizer == "adamw8bit"


def test_unknown_model_falls_back_to_params_b() -> None:
    s = setup_from_measurement_row(row(model="SomeLab/Unreleased-13B", params_b="13.0"))
    assert s.arch.n_params / 1e9 == pytest.approx(13.0, rel=0.02)


@pytest.mark.parametrize(
    "changes",
    [
        dict(seq_len="short (twitter_complaints)"),
        dict(micro_batch="unknown"),
        dict(method="dora"),
        dict(sharding="fsdp+tp8+pp8"),
        dict(precision="unknown (likely fp32/mixed)"),
        dict(model="mystery", params_b=""),
    ],
)
def test_unusable_rows(changes: dict[str, str]) -> None:
    with pytest.raises(UnusableRow):
        setup_from_measurement_row(row(**changes))


def test_catalog_name_with_a_different_size_falls_back_to_params_b() -> None:
    # "Llama-2-7b" with 13B parameters is not the catalog's 7B model: trust the size.
    s = setup_from_measurement_row(row(params_b="13.0"))
    assert s.arch.n_params / 1e9 == pytest.approx(13.0, rel=0.02)
    assert setup_from_measurement_row(row(params_b="")).arch == LLAMA2_7B


# ----- issue 15: framework, checkpointing, compile, loss, offload, metric ----------------------------
def _peak(**kw) -> float:
    base = dict(
        arch=LLAMA3_8B, method="full", seq_len=4096, micro_batch=2, precision="bf16-true", grad_accum=2
    )
    base.update(kw)
    return estimate_memory(TrainingSetup(**base))


def test_selective_checkpointing_sits_between_none_and_full() -> None:
    acts = [_peak(activation_checkpointing=m).breakdown.activations for m in ("none", "selective", "full")]
    assert acts[0] > acts[1] > acts[2] > 0


def test_grad_checkpointing_is_the_alias_of_full_and_contradictions_are_bad_input() -> None:
    assert _peak(grad_checkpointing=True).per_gpu_gb == _peak(activation_checkpointing="full").per_gpu_gb
    with pytest.raises(BadInput, match="alias"):
        TrainingSetup.checked(
            arch=LLAMA3_8B, method="full", grad_checkpointing=True, activation_checkpointing="none"
        )
    assert TrainingSetup(arch=LLAMA3_8B, method="qlora").activation_checkpointing == "full"


def test_compile_saves_activations_and_chunked_or_fused_loss_saves_logits() -> None:
    eager, compiled = _peak(), _peak(compile=True)
    assert compiled.breakdown.activations < eager.breakdown.activations
    full, chunked, fused = (_peak(loss=k).breakdown.logits for k in ("full", "chunked", "fused"))
    tokens_vocab = 4096 * 2 * LLAMA3_8B.vocab_size
    assert full == pytest.approx(tokens_vocab * 12 / GB) and chunked == pytest.approx(tokens_vocab * 2 / GB)
    assert fused == 0


def test_offload_and_optimizer_in_backward() -> None:
    base = _peak(activation_checkpointing="full")
    assert _peak(activation_checkpointing="full", cpu_offload_activations=True).breakdown.activations < (
        base.breakdown.activations
    )
    assert _peak(optimizer_in_backward=True).breakdown.gradients < 0.1 * _peak().breakdown.gradients


def test_framework_defaults_are_applied() -> None:
    tune = TrainingSetup(arch=LLAMA3_8B, method="lora", framework="torchtune")
    assert (tune.precision, tune.loss) == ("bf16-true", "chunked")
    unsloth = estimate_memory(TrainingSetup(arch=LLAMA3_8B, method="qlora", framework="unsloth"))
    hf = estimate_memory(TrainingSetup(arch=LLAMA3_8B, method="qlora"))
    assert unsloth.breakdown.logits == 0 and unsloth.per_gpu_gb < hf.per_gpu_gb
    assert any("unsloth" in line for line in unsloth.assumptions)


def test_torchtitan_fsdp2_keeps_no_16bit_copy_of_the_sharded_params() -> None:
    kw = dict(gpus=32, precision="bf16-mixed", activation_checkpointing="selective")
    titan = _peak(framework="torchtitan", sharding="fsdp", **kw)
    deepspeed = _peak(framework="hf", sharding="zero3", **kw)  # 16-bit params + fp32 master: 18 B
    assert deepspeed.breakdown.weights - titan.breakdown.weights == pytest.approx(
        2 * LLAMA3_8B.n_params / 32 / GB
    )
    assert titan.breakdown.activations == deepspeed.breakdown.activations


def test_hf_accelerate_fsdp_and_deepspeed_zero3_keep_16_bytes_per_param() -> None:
    # accelerate's Accelerator.prepare_model upcasts every trainable FSDP flat parameter to fp32
    # under mixed precision (huggingface/accelerate src/accelerate/accelerator.py @00093722): the
    # fp32 shard is the master copy, no 16-bit copy persists; fp32 gradients. DeepSpeed ZeRO-3 keeps
    # 16-bit parameters and 16-bit gradient partitions beside the fp32 master and states
    # (deepspeed v0.14.2 runtime/zero/stage3.py grad_partitions_flat_buffer), and makes fp32
    # gradients only at the step, one sub-group at a time.
    n = LLAMA2_7B.n_params
    fsdp = setup(gpus=8, sharding="fsdp", precision="bf16-mixed", framework="hf")
    zero3 = setup(gpus=8, sharding="zero3", precision="bf16-mixed", framework="hf")
    unit = LLAMA2_7B.largest_layer_params
    in_flight = (2 * unit * 2 + unit * 2) / GB  # two gathered 16-bit units + one unit's gradients
    fsdp_b, zero3_b = estimate_memory(fsdp, BARE).breakdown, estimate_memory(zero3, BARE).breakdown
    assert fsdp_b.weights + fsdp_b.gradients + fsdp_b.optimizer - in_flight == pytest.approx(16 * n / 8 / GB)
    assert zero3_b.weights + zero3_b.gradients + zero3_b.optimizer - in_flight == pytest.approx(
        16 * n / 8 / GB
    )
    assert any("16 B/param" in line for line in estimate_memory(fsdp).assumptions)
    assert any("16-bit gradient partitions" in line for line in estimate_memory(zero3).assumptions)
    # not under bf16-true (no fp32 copy at all) and not for other frameworks' FSDP
    pure = setup(gpus=8, sharding="fsdp", precision="bf16-true", framework="hf")
    assert estimate_memory(pure, BARE).breakdown.optimizer == pytest.approx(4 * n / 8 / GB)


def test_memory_metric_changes_the_report_not_the_verdict() -> None:
    est = {m: _peak(memory_metric=m) for m in ("device", "reserved", "allocated")}
    assert est["allocated"].per_gpu_gb < est["reserved"].per_gpu_gb < est["device"].per_gpu_gb
    assert est["reserved"].cuda_context_gb == 0 and est["device"].cuda_context_gb > 1
    assert est["allocated"].allocator_slack_gb == 0
    devices = {round(e.device_gb, 9) for e in est.values()}
    assert len(devices) == 1
    card = est["device"].device_planning_gb - 0.01  # just too small for the device figure
    assert not any(e.fits(card) for e in est.values())


def test_litgpt_fsdp_lora_shards_whole_block_gradients() -> None:
    # Fabric FSDP wraps each Block (adapters + frozen weights, use_orig_params=True): PyTorch's
    # FSDP docs say the gradient memory is then as if nothing were frozen.
    kw = dict(
        arch=LLAMA2_7B,
        method="lora",
        precision="bf16-true",
        gpus=2,
        sharding="fsdp",
        seq_len=1304,
        grad_accum=2,
    )
    litgpt = estimate_memory(TrainingSetup(framework="litgpt", **kw), BARE)
    tune = estimate_memory(TrainingSetup(framework="torchtune", **kw), BARE)
    blocks = LLAMA2_7B.n_params - LLAMA2_7B.embedding_params - LLAMA2_7B.head_params
    unit = LLAMA2_7B.largest_layer_params
    assert litgpt.breakdown.gradients == pytest.approx((blocks / 2 + unit) * 2 / GB)
    assert tune.breakdown.gradients < 0.01 * litgpt.breakdown.gradients
    single = dict(kw, gpus=1, sharding="none")  # unsharded: only the adapters have gradients
    assert estimate_memory(TrainingSetup(framework="litgpt", **single)).breakdown.gradients < 0.1


def test_litgpt_builds_a_separate_head_for_tied_checkpoints() -> None:
    gemma = catalog()["google/gemma-2b"].arch
    assert gemma.tied_embeddings
    kw = dict(arch=gemma, method="full", precision="bf16-true", seq_len=512)
    litgpt = estimate_memory(TrainingSetup(framework="litgpt", **kw), BARE)
    tune = estimate_memory(TrainingSetup(framework="torchtune", **kw), BARE)
    head = gemma.vocab_size * gemma.hidden_size
    assert litgpt.trainable_params - tune.trainable_params == head
    assert litgpt.breakdown.weights - tune.breakdown.weights == pytest.approx(head * 2 / GB)


def test_litgpt_bf16_mixed_qlora_keeps_the_rest_in_fp32() -> None:
    # Lightning's bf16-mixed keeps the module in fp32: embeddings, head and norms stay fp32.
    kw = dict(arch=LLAMA2_7B, method="qlora", precision="bf16-mixed")
    mixed = estimate_memory(TrainingSetup(framework="litgpt", **kw), BARE)
    true = estimate_memory(TrainingSetup(framework="litgpt", **dict(kw, precision="bf16-true")), BARE)
    rest = LLAMA2_7B.n_params - LLAMA2_7B.quantizable_params
    assert mixed.breakdown.weights - true.breakdown.weights == pytest.approx(rest * 2 / GB, rel=0.01)


def test_without_accumulation_gradients_take_the_memory_backward_frees() -> None:
    # zero_grad(set_to_none=True): gradients are allocated in backward as activations are freed.
    # One rule: accumulation follows grad_accum (default 1, HF Trainer's), in fit and estimate alike.
    kw = dict(arch=LLAMA3_8B, method="full", precision="bf16-true", seq_len=4096, micro_batch=2)
    summed = estimate_memory(TrainingSetup(grad_accum=4, **kw), BARE)
    single = estimate_memory(TrainingSetup(**kw), BARE)
    assert (
        not TrainingSetup(**kw).gradient_accumulation
        and TrainingSetup(grad_accum=2, **kw).gradient_accumulation
    )
    assert estimate_memory(TrainingSetup(grad_accum=2, **kw), BARE).per_gpu_gb == summed.per_gpu_gb
    b = summed.breakdown
    expected = summed.per_gpu_gb - b.gradients - b.activations - b.logits
    expected += max(b.gradients, b.activations + b.logits)
    assert single.per_gpu_gb == pytest.approx(expected)
    assert single.breakdown.total() == pytest.approx(single.per_gpu_gb)
    assert any("one micro-batch per step" in line for line in single.assumptions)
    assert any("gradient accumulation (4 micro-batches" in line for line in summed.assumptions)
    lora = dict(kw, method="lora")  # the adapters' small gradients fit in what backward frees
    with_ga = estimate_memory(TrainingSetup(grad_accum=8, **lora), BARE)
    without = estimate_memory(TrainingSetup(**lora), BARE)
    assert with_ga.per_gpu_gb - without.per_gpu_gb == pytest.approx(with_ga.breakdown.gradients)


def test_soft_capped_logits_keep_tanh_output() -> None:
    # transformers Gemma2ForCausalLM: logits / cap -> tanh -> * cap; tanh's backward reads its
    # output, one more logits-sized tensor in the head's dtype (config final_logit_softcapping).
    from gpuprice.models.architectures import find_model
    from gpuprice.models.hf_config import arch_from_config

    gemma2 = find_model("google/gemma-2-9b")
    assert gemma2 is not None and gemma2.logit_softcapping
    plain = gemma2.model_copy(update={"logit_softcapping": False})
    setups = [
        TrainingSetup(arch=a, method="lora", precision="bf16-true", seq_len=4096, micro_batch=1)
        for a in (gemma2, plain)
    ]
    capped, uncapped = (estimate_memory(s).breakdown.logits for s in setups)
    assert capped - uncapped == pytest.approx(4096 * 256000 * 2 / 1e9, rel=1e-6)
    config = {"model_type": "gemma2", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}
    config |= {"intermediate_size": 128, "vocab_size": 1000}
    assert arch_from_config({**config, "final_logit_softcapping": 30.0}).logit_softcapping
    assert not arch_from_config({**config, "final_logit_softcapping": None}).logit_softcapping


# ----- paged optimizers and the 16-bit loss (issue 33) --------------------------------------------
def test_paged_optimizer_states_stay_in_the_peak_but_leave_the_verdict() -> None:
    # bitsandbytes' paged states live in CUDA unified memory (cudaMallocManaged) and page out to CPU
    # RAM when the card runs short: per_gpu_gb keeps them, the device figure the verdict judges does
    # not (except the one tensor whose states are prefetched for its update).
    # no cached loss region in per_gpu_gb; 4,096 tokens keep backward, not the foreach AdamW step
    # (its state-sized temporary), the larger moment for the plain optimizer
    fixed = dict(precision="bf16-true", variable_lengths=False, seq_len=4096)
    plain = estimate_memory(setup(**fixed, optimizer="adamw"), BARE)
    paged = estimate_memory(setup(**fixed, optimizer="paged_adamw"), BARE)
    n = LLAMA2_7B.n_params
    assert paged.breakdown.optimizer == pytest.approx(n * 8 / GB)
    assert paged.per_gpu_gb == pytest.approx(plain.per_gpu_gb + n * 4 / GB)
    largest = max(LLAMA2_7B.embedding_params, LLAMA2_7B.hidden_size * LLAMA2_7B.intermediate_size)
    assert paged.paged_optimizer_gb == pytest.approx((n - largest) * 8 / GB)
    assert paged.device_gb == pytest.approx(paged.per_gpu_gb - paged.paged_optimizer_gb)
    assert plain.paged_optimizer_gb == 0 and plain.device_gb == pytest.approx(plain.per_gpu_gb)
    assert any("paged optimizer" in line for line in paged.assumptions)
    assert paged.contract_dict()["paged_optimizer_gb"] == pytest.approx(paged.paged_optimizer_gb, abs=1e-3)
    # 53 GB of states beside 54 GB resident on a 64 GiB card: the states page out, the run fits
    card = 64 * 2**30 / GB
    assert paged.verdict(card).fits and not plain.verdict(card).fits
    # sharded states: each rank pages its own share
    sharded = estimate_memory(setup(**fixed, optimizer="paged_adamw", gpus=8, sharding="fsdp"), BARE)
    assert sharded.paged_optimizer_gb == pytest.approx(paged.paged_optimizer_gb / 8)
    # 8-bit paged: the uint8 moments page, 2 B a parameter
    eight = estimate_memory(setup(**fixed, optimizer="paged_adamw8bit"), BARE)
    assert eight.paged_optimizer_gb == pytest.approx((n - largest) * 2 / GB)


def test_small_lora_adapters_are_not_paged() -> None:
    # bitsandbytes pages only tensors of >= 1e5 elements: r 16 x 4096 adapters stay in device memory
    lora = dict(method="lora", optimizer="paged_adamw", variable_lengths=False)
    small = estimate_memory(setup(**lora, lora_rank=16), BARE)
    assert small.paged_optimizer_gb == 0 and small.device_gb == pytest.approx(small.per_gpu_gb)
    wide = estimate_memory(setup(**lora, lora_rank=64), BARE)
    assert 0 < wide.paged_optimizer_gb < wide.breakdown.optimizer


def test_sweep_judges_what_stays_resident() -> None:
    s = setup(precision="bf16-true", optimizer="paged_adamw", margin=0.0)
    frame = fit_sweep([s], {"card": 48 * 2**30 / GB}, [1], ["none"], BARE)
    assert frame.verdict.iloc[0] == "fits"
    assert frame.device_gb.iloc[0] == pytest.approx(estimate_memory(s, BARE).device_gb)


def test_sixteen_bit_loss_counts_six_bytes_a_logit_unless_autocast_upcasts() -> None:
    tokens = 2048 * LLAMA3_8B.vocab_size
    lora = dict(arch=LLAMA3_8B, method="lora", seq_len=2048)
    assert estimate_memory(
        setup(**lora, precision="bf16-true", loss="full-16bit"), BARE
    ).breakdown.logits == (pytest.approx(tokens * 6 / GB))
    assert estimate_memory(setup(**lora, precision="bf16-true", loss="full"), BARE).breakdown.logits == (
        pytest.approx(tokens * 12 / GB)
    )
    # autocast runs cross_entropy in fp32 whatever the code does
    mixed = estimate_memory(setup(**lora, precision="bf16-mixed", loss="full-16bit"), BARE)
    assert mixed.breakdown.logits == pytest.approx(tokens * 12 / GB)
    assert any(
        "no fp32 upcast" in line for line in estimate_memory(setup(**lora, loss="full-16bit")).assumptions
    )


def test_row_mapping_of_paged_adamw_and_a_stated_loss() -> None:
    assert setup_from_measurement_row(row(method="full_pagedadamw")).optimizer == "paged_adamw"
    assert setup_from_measurement_row(row(method="full_paged_adamw8bit")).optimizer == "paged_adamw8bit"
    assert setup_from_measurement_row(row(loss="full-16bit")).loss == "full-16bit"


def test_hf_qlora_under_mixed_precision_keeps_an_fp32_residual_stream() -> None:
    # PEFT's prepare_model_for_kbit_training casts every non-4-bit parameter to fp32 (trl puts the
    # embedding and head back to bf16; the norms stay fp32): a norm's output is fp32 and
    # bitsandbytes' Linear4bit returns its input's dtype, so every layer input after the first is
    # fp32, 2 B an element more (foundation-model-stack/fms-acceleration's one-GPU QLoRA runs miss
    # 228-341 KB a token without it; Mistral-7B: 31 x 4096 x 2 B = 254 KB). Attention runs on bf16
    # copies, so the rest of a block is not doubled. A pure-bf16 run and torchtune's NF4 path keep
    # 16-bit inputs; under ZeRO-3/FSDP trl skips the cast for sharded QLoRA.
    from gpuprice.models.memory_features import setup_features

    base = dict(arch=LLAMA3_8B, method="qlora", seq_len=4096, activation_checkpointing="full")
    tokens = 4096
    mixed = setup_features(TrainingSetup(**base, precision="bf16-mixed"))
    pure = setup_features(TrainingSetup(**base, precision="bf16-true"))
    torchtune = setup_features(TrainingSetup(**base, precision="bf16-mixed", framework="torchtune"))
    extra = (LLAMA3_8B.num_layers - 1) * tokens * LLAMA3_8B.hidden_size * 2.0
    assert mixed["fp32_stream"] == extra and pure["fp32_stream"] == torchtune["fp32_stream"] == 0.0
    # The fp32 norms have nothing to upcast: the fp32 input they keep is the stream counted above,
    # where a 16-bit run's RMSNorm keeps an fp32 copy in its place (one 16-bit element a norm more).
    norms = LLAMA3_8B.norms_per_layer * tokens * LLAMA3_8B.hidden_size * 2.0
    assert pure["act_layer"] - mixed["act_layer"] == norms and mixed["act_ckpt"] == pure["act_ckpt"]
    one = estimate_memory(TrainingSetup(**base, precision="bf16-mixed"), BARE)
    pure_one = estimate_memory(TrainingSetup(**base, precision="bf16-true"), BARE)
    assert one.breakdown.activations == pytest.approx(pure_one.breakdown.activations + extra / 1e9, rel=1e-9)
    assert any("every layer input after the first is fp32" in line for line in one.assumptions)
    # sharded QLoRA (trl skips prepare_model_for_kbit_training): no fp32 stream
    sharded = dict(base, precision="bf16-mixed", gpus=2)
    fsdp = estimate_memory(TrainingSetup(**sharded, sharding="fsdp"), BARE)
    plain = estimate_memory(TrainingSetup(**sharded, sharding="fsdp", framework="torchtune"), BARE)
    assert fsdp.breakdown.activations == pytest.approx(plain.breakdown.activations, rel=1e-9)


def test_hf_fsdp_steps_foreach_adamw_on_the_shards() -> None:
    # HF Trainer under accelerate's FSDP runs torch.optim.AdamW (foreach) on the shards: one
    # state-sized temporary per GPU at the step (fms-acceleration's Mistral-7B full fine-tune over
    # 2 A100s peaks at 36.23 GB = 7.24e9 x (2 weights + 2 grads + 4 states + 2 temporary) / 2).
    # DeepSpeed's ZeRO steps FusedAdam in place.
    full = dict(arch=LLAMA3_8B, method="full", precision="bf16-true", gpus=2, seq_len=128)
    fsdp = estimate_memory(TrainingSetup(**full, sharding="fsdp"), BARE)
    zero3 = estimate_memory(TrainingSetup(**full, sharding="zero3"), BARE)
    n = LLAMA3_8B.n_params
    buffers = BARE.comm_buffer_gb
    # the step is the larger moment at 128 tokens: FSDP holds 2 + 2 + 4 + 2 (the temporary) B/param / 2
    assert fsdp.per_gpu_gb >= n * 10 / 2 / 1e9 + buffers
    # DeepSpeed: 2 + 2 (gradient partitions) + 4 B/param / 2 and one sub-group's flatten + fp32 copy
    # (6 B x 1e9 elements), no optimizer temporary
    step = n * 8 / 2 / 1e9 + 6 * 1e9 / 1e9 + buffers
    unit = LLAMA3_8B.largest_layer_params
    assert step <= zero3.per_gpu_gb <= step + 3 * unit * 2 / 1e9


def test_fragmentation_is_a_share_of_the_pool_backward_builds_not_of_the_steps_excess() -> None:
    # The caching allocator serves what the optimizer step needs beyond the pool forward and backward
    # built with new segments of the size asked (get_allocation_size: above 10 MB, rounded to 2 MB),
    # so the step adds no fragmentation. universal-llm-trainer's Llama-3.1-8B full fine-tuning
    # (pure bf16, foreach AdamW, one micro-batch, 8,192 x 2, recomputation; one GPU and no QLoRA, so
    # no buffers): its step allocates 5 x 16.06 GB (weights, gradients, two states, the sqrt
    # temporary), 15.1 GB beyond the backward moment. Shipped constants.
    c = DEFAULT_CONSTANTS
    ult = TrainingSetup(
        arch=LLAMA3_8B, method="full", precision="bf16-true", seq_len=8192, micro_batch=2,
        grad_checkpointing=True, loss="full-16bit", variable_lengths=False, margin=0.0,
    )  # fmt: skip
    allocated = estimate_memory(ult.model_copy(update={"memory_metric": "allocated"}), c)
    step_excess = allocated.breakdown.overhead  # the step beyond the backward moment (no buffers here)
    assert allocated.per_gpu_gb == pytest.approx(5 * ult.arch.n_params * 2 / GB, rel=1e-6)
    assert step_excess == pytest.approx(15.1, abs=0.1)
    pool = allocated.per_gpu_gb - step_excess
    device = estimate_memory(ult, c).device_gb
    assert device == pytest.approx(
        allocated.per_gpu_gb + c.fragmentation * pool + c.cuda_context_gb, rel=1e-9
    )
    # the share on the whole peak would add 6 % of the 15.1 GB excess, 0.9 GB more: 86.6 GB, over the
    # H100's 85.9 GB, where the run completed
    assert device < 85.9 < allocated.per_gpu_gb * (1 + c.fragmentation) + c.cuda_context_gb
    # reserved carries the same slack (no context)
    reserved = estimate_memory(ult.model_copy(update={"memory_metric": "reserved"}), c).per_gpu_gb
    assert reserved == pytest.approx(allocated.per_gpu_gb + c.fragmentation * pool, rel=1e-9)
    # A backward-dominated run (LoRA, no recomputation) has no step excess: the share of its whole peak.
    lora = TrainingSetup(arch=LLAMA3_8B, method="lora", seq_len=4096, micro_batch=4, margin=0.0)
    lora_allocated = estimate_memory(lora.model_copy(update={"memory_metric": "allocated"}), c)
    assert lora_allocated.breakdown.overhead == pytest.approx(0.0, abs=1e-9)
    assert estimate_memory(lora, c).device_gb == pytest.approx(
        lora_allocated.per_gpu_gb * (1 + c.fragmentation) + c.cuda_context_gb, rel=1e-9
    )


def test_an_estimate_whose_peak_is_the_optimizer_step_says_so() -> None:
    # The breakdown lists backward's terms (gradients 0 under one micro-batch, the logits) with the
    # step's excess under overhead; the note tells the reader which moment the peak is.
    ult = TrainingSetup(
        arch=LLAMA3_8B, method="full", precision="bf16-true", seq_len=8192, micro_batch=2,
        grad_checkpointing=True, loss="full-16bit", variable_lengths=False,
    )  # fmt: skip
    [note] = [a for a in estimate_memory(ult).assumptions if a.startswith("peak at the optimizer step")]
    assert "15.1 GB above backward's" in note and "foreach AdamW" in note
    # 8-bit AdamW updates in place: no foreach temporary named (its step may still be the peak)
    eight_bit = ult.model_copy(update={"optimizer": "adamw8bit"})
    assert not any("foreach" in a for a in estimate_memory(eight_bit).assumptions)
    # a backward-dominated run carries no such note
    lora = TrainingSetup(arch=LLAMA3_8B, method="lora", seq_len=4096, micro_batch=4)
    assert not any("optimizer step" in a for a in estimate_memory(lora).assumptions)
