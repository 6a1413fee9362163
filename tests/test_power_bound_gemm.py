"""The RTX PRO 6000 Blackwell's sustained matmul rate (models/gpu_hardware.py).

Two independent GEMM measurements, neither a training row: the GB202 runs FP32-accumulate tensor
math at full rate (waynehacking8/blackwell-tensorcore-kernels ``results/mma_rate_probe.csv``
@c289bdedb5f256fdf1351de3cacf7757564a0dd0: 1,023.8 FLOP per SM per clock, as FP16 accumulate), yet
``torch.matmul`` bf16 at 8192^3 climbs linearly with the board's power limit, 120 TFLOPS at 240 W
to about 317 at 600 W (1a1a11a/gpu_power ``figures/tflops_vs_power.png``
@ab312b337508d81114fd55b7d5febba080d6895e), 63 % of the 503.8 datasheet figure, where cuBLAS on an
H100 SXM sustains 750-762 of 989 (77 %, waynehacking8 ``results/bench_sm90a.csv``). The card
borrowed the A100's efficiency at ratio 1 and was predicted 1.5x an A100; universal-llm-trainer's
twelve RTX PRO 6000 runs (a holdout source, ``docs/gpu_test.md`` @1e7ea83) measured 0.89x.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpuprice.models.calibration.throughput_holdout import HOLDOUT_CSV, family_of, score_holdout
from gpuprice.models.calibration.throughput_rows import load_benchmark_rows
from gpuprice.models.gpu_hardware import gpu_profile
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS

UNIVERSAL = "ljm565/universal-llm-trainer"


def test_the_rtx_pro_6000_borrows_hoppers_efficiency_scaled_by_the_sustained_gemm_shares() -> None:
    profile = gpu_profile("rtx-pro-6000")
    assert profile.family == "blackwell_workstation"
    assert profile.peak_tflops == pytest.approx(503.8)  # the datasheet stays the MFU denominator
    assert CALIBRATED_PARAMETERS.borrowed_from(profile.family) == "hopper"
    ratio = CALIBRATED_PARAMETERS.efficiency_of(profile.family) / CALIBRATED_PARAMETERS.efficiency_of(
        "hopper"
    )
    assert ratio == pytest.approx((317.0 / 503.8) / (756.0 / 989.0))
    assert 0.8 < ratio < 0.85


def test_geforce_cards_keep_the_ampere_efficiency() -> None:
    """The consumer GB202 and its predecessors run FP32 accumulate at half rate (their catalog
    peaks already say so) and are not the power-bound workstation board."""
    for slug in ("rtx-5090", "rtx-4090", "rtx-3090"):
        family = gpu_profile(slug).family
        assert family == "geforce"
        assert CALIBRATED_PARAMETERS.efficiency_of(family) == CALIBRATED_PARAMETERS.efficiency_of(
            "ampere_datacenter"
        )


def _tokens_per_sec(cli, gpu: str) -> float:
    result = cli(
        "estimate", "--model", "meta-llama/Llama-3.1-8B", "--method", "full", "--precision", "bf16-true",
        "--seq-len", "8192", "--micro-batch", "2", "--activation-checkpointing", "full",
        "--gpu", gpu, "--tokens", "1B", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    return float(json.loads(result.out)["tokens_per_sec_per_gpu"])


def test_an_rtx_pro_6000_trains_about_as_fast_as_an_a100_not_half_again(cli) -> None:
    """universal-llm-trainer's Llama-3.1-8B full run: 1,503 tokens/s on the RTX PRO 6000, 1,689 on
    the A100 (0.89x); the old borrowed efficiency said 1.54x."""
    ratio = _tokens_per_sec(cli, "rtx-pro-6000") / _tokens_per_sec(cli, "a100-80gb-sxm")
    assert 0.85 <= ratio <= 1.25, ratio


def test_the_holdout_rtx_pro_6000_runs_are_no_longer_half_again_too_fast() -> None:
    """Median signed error of its twelve runs: +60.9 % with Ampere's efficiency at ratio 1, +22.2 %
    now (bf16 +21..+37 %, fp32 QLoRA -15..+11 %); the source does not say which edition it ran
    (the 300 W Max-Q sustains about half the 600 W board's matmul rate in the same sweep)."""
    rows = load_benchmark_rows(str(HOLDOUT_CSV))
    scored = [s for s in score_holdout(rows) if s.family == UNIVERSAL]
    source_rows = [r for r in rows if family_of(r) == UNIVERSAL]
    errors = np.array([s.error for r, s in zip(source_rows, scored, strict=True) if "Pro" in str(r["gpu"])])
    assert len(errors) == 12
    assert float(np.median(errors)) <= 0.25  # guard just above the +22.2 % achieved


def _lora_estimate(cli, gpu: str, *extra: str) -> str:
    result = cli(
        "estimate",
        "--model",
        "meta-llama/Llama-3.1-8B",
        "--method",
        "lora",
        "--gpu",
        gpu,
        "--tokens",
        "1B",
        *extra,
    )
    assert result.code == 0, result.err
    return str(result.out)


def test_estimate_says_how_the_borrowed_efficiency_is_scaled(cli) -> None:
    band = json.loads(_lora_estimate(cli, "rtx-pro-6000", "--json"))["tokens_per_sec_band"]
    assert band["borrowed_efficiency_from"] == "hopper"
    assert band["borrowed_efficiency_ratio"] == pytest.approx(0.823, abs=1e-3)
    assert "rtx-pro-6000 borrows hopper's efficiency x 0.82" in _lora_estimate(cli, "rtx-pro-6000")
    # ratio 1 is not printed
    assert "l40s borrows ampere_datacenter's efficiency)" in _lora_estimate(cli, "l40s")


def test_the_300_w_max_q_edition_is_its_own_card_and_slower() -> None:
    """Runpod sells "RTX PRO 6000 MaxQ" beside the 600 W cards (ewyluda/gpu-price-index runpod.json
    @d789fed5: "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"). Measured on that card:
    cuBLAS 225.75 TFLOPS at 8192^3 (waynehacking8 results/bench.csv) of its 440.4 boost-clock peak
    (188 SMs x 1,024 FLOP per clock x 2,288 MHz). Priced as the 600 W board it looked 1.4x faster
    than it is."""
    from gpuprice.scrapers.gpu_names import normalize_gpu

    assert normalize_gpu("RTX PRO 6000 MaxQ", provider="runpod", vram_gb=96) == "rtx-pro-6000-maxq"
    profile = gpu_profile("rtx-pro-6000-maxq")
    assert profile.family == "blackwell_workstation_max_q"
    assert profile.peak_tflops == pytest.approx(440.4)
    ratio = CALIBRATED_PARAMETERS.efficiency_of(profile.family) / CALIBRATED_PARAMETERS.efficiency_of(
        "hopper"
    )
    assert ratio == pytest.approx((225.75 / 440.4) / (756.0 / 989.0))
    sustained_max_q = 440.4 * CALIBRATED_PARAMETERS.efficiency_of(profile.family)
    sustained_600w = 503.8 * CALIBRATED_PARAMETERS.efficiency_of(gpu_profile("rtx-pro-6000").family)
    assert sustained_max_q / sustained_600w == pytest.approx(225.75 / 317.0, rel=1e-6)  # 0.71


def test_estimate_runs_the_max_q_slower_than_the_600_w_board(cli) -> None:
    max_q = _tokens_per_sec(cli, "rtx-pro-6000-maxq")
    full_power = _tokens_per_sec(cli, "rtx-pro-6000")
    assert 0.7 <= max_q / full_power <= 0.85, max_q / full_power
