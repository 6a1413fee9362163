"""The calibrated constants of the throughput model (values and their fit: ``models/mfu_calibration.md``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpuprice.models.gpu_hardware import ASSUMED_FAMILY_RATIOS


class ThroughputParameters(BaseModel):
    """The calibrated constants of the throughput model (see mfu_calibration.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family_efficiency: dict[str, float] = Field(
        description="share of dense peak that large BF16 matmuls reach in training, per GPU family"
    )
    half_width: float = Field(
        gt=0, description="hidden size h0 in h/(h+h0): narrow models under-use tensor cores"
    )
    attention_efficiency: float = Field(gt=0, description="attention FLOPs' efficiency relative to matmuls")
    hopper_attention_factor: float = Field(
        gt=0,
        description="extra attention factor on Hopper/Blackwell (FlashAttention-2 does not use their new MMA units)",
    )
    layer_overhead_ms: float = Field(ge=0, description="fixed time per layer and micro-batch")
    dequant_bytes_per_param: float = Field(ge=0, description="memory traffic per 4-bit weight and pass")
    fp8_speedup: float = Field(gt=0, description="FP8 (Transformer Engine) gain over BF16 on FP8 parts")
    lora_efficiency: float = Field(
        gt=0, description="LoRA/QLoRA kernels' efficiency relative to full training"
    )
    compile_speedup: float = Field(
        default=1.0,
        gt=0,
        description="throughput gain of torch.compile / fused elementwise kernels (fewer HBM round trips, launches)",
    )
    node_scaling_loss: float = Field(ge=0, description="time added per doubling of the node count")
    comm_overlap: float = Field(ge=0, le=1, description="share of compute time that can hide communication")

    def efficiency_of(self, family: str) -> float:
        if family in self.family_efficiency:
            return self.family_efficiency[family]
        sibling, ratio = ASSUMED_FAMILY_RATIOS[family]  # type: ignore[index]
        return self.efficiency_of(sibling) * ratio  # a sibling may borrow in turn

    def borrowed_from(self, family: str) -> str | None:
        """The measured family whose efficiency ``family`` borrows (None: it has its own)."""
        while family not in self.family_efficiency:
            family = ASSUMED_FAMILY_RATIOS[family][0]  # type: ignore[index]
            if family in self.family_efficiency:
                return family
        return None

    def complete(self) -> ThroughputParameters:
        """The same parameters with every family's efficiency filled in (assumed ones derived)."""
        table = dict(self.family_efficiency)
        for family in ASSUMED_FAMILY_RATIOS:
            table.setdefault(family, self.efficiency_of(family))
        return self.model_copy(update={"family_efficiency": table})


# Starting point of the calibration: cost-model.md's anchors (H100 ~0.40 MFU, A100 ~0.50 for
# large pre-training with activation checkpointing, i.e. ~0.55/0.70 hardware utilisation), 0.8
# for LoRA kernels, 1.5x for FP8; the rest are order-of-magnitude guesses.
PRIOR_PARAMETERS = ThroughputParameters(
    family_efficiency={"ampere_datacenter": 0.70, "hopper": 0.55},
    half_width=300.0,
    attention_efficiency=0.8,
    hopper_attention_factor=0.6,
    layer_overhead_ms=1.0,
    dequant_bytes_per_param=8.0,
    fp8_speedup=1.5,
    lora_efficiency=0.8,
    compile_speedup=1.15,
    node_scaling_loss=0.02,
    comm_overlap=0.2,
)

# Result of `fit_parameters(load_benchmark_rows(throughput_public.csv))` (3000 iterations, 2 restarts),
# rounded, after issue 33 made the optimizer step and per-step collectives their own terms; see
# mfu_calibration.md for the fit, its accuracy and the holdout. Re-run when real runs exist.
CALIBRATED_PARAMETERS = ThroughputParameters(
    family_efficiency={"ampere_datacenter": 0.795, "hopper": 0.693},
    half_width=555.6,
    attention_efficiency=1.076,
    hopper_attention_factor=0.483,
    layer_overhead_ms=1.77,
    dequant_bytes_per_param=21.8,
    fp8_speedup=1.52,
    lora_efficiency=0.896,
    compile_speedup=1.125,
    node_scaling_loss=0.0179,
    comm_overlap=0.0545,
)
