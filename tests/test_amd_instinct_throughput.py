"""AMD Instinct (CDNA) training throughput: what the measurements support (issue 33).

The throughput model borrows the CDNA efficiency from Hopper at ratio 0.7
(``gpu_hardware.ASSUMED_FAMILY_RATIOS``); the project's rule gives a family its own constant only
with at least ``MIN_FAMILY_RUNS`` (3) runs from ``MIN_FAMILY_SOURCES`` (2) independent source
families. The search for more AMD runs (MI300X first; MI325X, MI355X, MI250X) found no further row
that could be pinned to a cited file with its full setup, so no row was appended and this file
scores the one that exists, with the shipped model, and records what was left out and why.

The one measured run: ``pytorch/ao`` ``docs/source/workflows/training.md``
@36027d82d1ad9949597ea16002ff4940374b1b94, "e2e training benchmarks", the AMD MI300x bf16 baseline
(torchtitan Llama3-8B, 8 GPUs, FSDP2, local batch 1 x 8,192, per-op SAC, compiled): 5,376.5
tokens/s/GPU measured, 8,223.3 predicted (+52.9 %); the same script's H100 row 6,150 measured,
7,501.9 predicted (+22.0 %). Computed, not applied: the CDNA/Hopper ratio that predicts the MI300X
run exactly is 0.423 (efficiency 0.293 against Hopper's 0.693); the ratio that gives it the H100
row's +22.0 % is 0.533. One run from one source: the rule is not met and the shipped 0.7 stays.

Left out (searched; nothing invented):

- AMD's "Performance results with AMD ROCm software" page (amd.com ... rocm-hub/dev-ai/
  performance-results.html, training tabs: Megatron-LM / PyTorch / JAX MaxText on MI300X, MI325X,
  MI355X): the stored copies reach only the page's inference section; no training row could be read.
  The ROCm docs' training pages (``ROCm/ROCm`` ``docs/how-to/rocm-for-ai/training/benchmark-docker/
  megatron-lm.rst``, ``pytorch-training.rst`` to @e396b489 of 21 Mar 2025) link to that page and
  state no figures; ``ROCm/MAD`` ``benchmark/*/README.md`` (stored versions) give run commands only.
- The "ROCm PyTorch Training Container (v25.2)" README (MI300X / MI325X TFLOPS/s/GPU for Llama 3.1
  8B / 70B and Mistral 7B with FSDP, ``AMD-AIG-AIMA/pytorch-training-benchmark`` ``train_fsdp.py``):
  its text is in the file index without a repository or path to cite, and it states TFLOPS without
  the FLOPs-per-token basis (``train_fsdp.py`` would have to be read for it); not pinned.
- ``ROCm/TransformerEngine`` issues #72, #76, #78, #79 (Oct 2024; SemiAnalysis's and AMD's
  MI300X TFLOP/s/GPU for GPT-2 1.5B, Llama3-8B FSDP and a 4-layer Llama3-70B proxy, BF16 / TE FP8):
  the reproduction scripts' FLOPs basis is ``6 N + 12 L H d_head s_max`` but ``s_max``, the
  micro-batch and the BF16 figures could not be read whole from the stored thread; the 70B proxy
  is not a catalog model. Not converted.
- ``ROCm/rocm-blogs`` ``blogs/artificial-intelligence/ROCm7-MI355X-training-performance/README.md``
  @7552daef (Dec 2025): MI355X / B200 ratios only, no tokens/s.
- ``DmitriiNikolaevAtAmd/tprimat`` ``peak_throughput_summary.txt`` @f9fa79e6 (Jan 2026, Primus
  Megatron on 8 MI300X, Llama 3.1 8B 8,609 and Qwen2.5-7B 10,992 tokens/s/GPU at 2,048 tokens):
  the MI300X figures are the same within 0.3 % under TP 1, 2 and 4 and imply 512-640 sequences a
  step against the 128 of the repository's ``config.yaml``: the run's batch and parallelism are not
  the stated ones and cannot be pinned.
- SemiAnalysis "MI300X vs H100 vs H200 Benchmark Part 1: Training" (Dec 2024): the stored copies
  give the article's opening only, not its training tables.
- ``tinygrad/tinygrad`` MI350X Llama 8B issues: MI350X is not a catalog card and the threads give
  no throughput in the stored excerpts.
"""

from __future__ import annotations

import pytest

from conftest import TEST_DATA
from gpuprice.models.calibration.throughput_holdout import score_holdout
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    cases_from_benchmarks,
    load_benchmark_rows,
    source_family,
)
from gpuprice.models.gpu_hardware import ASSUMED_FAMILY_RATIOS, MIN_FAMILY_RUNS, MIN_FAMILY_SOURCES
from gpuprice.models.throughput import evaluate
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS

HOLDOUT_CSV = TEST_DATA / "throughput_holdout.csv"
PUBLIC_CSV = TEST_DATA / "throughput_public.csv"
AO = "pytorch/ao"
AO_COMMIT = "36027d82d1ad9949597ea16002ff4940374b1b94"


def _cdna_rows(path: object) -> list[dict[str, object]]:
    return [r for r in load_benchmark_rows(str(path)) if benchmark_case(r).profile.family == "cdna"]


def _ao_pair() -> tuple[dict[str, object], dict[str, object]]:
    rows = [r for r in load_benchmark_rows(str(HOLDOUT_CSV)) if source_family(r) == AO]
    mi300x = next(r for r in rows if str(r["gpu"]) == "MI300X")
    h100 = next(r for r in rows if str(r["gpu"]) == "H100")
    return mi300x, h100


def test_cdna_still_borrows_hopper_and_the_rule_is_not_met() -> None:
    holdout, public = _cdna_rows(HOLDOUT_CSV), _cdna_rows(PUBLIC_CSV)
    assert public == []  # no AMD run in the calibration set
    assert len(holdout) == 1 and source_family(holdout[0]) == AO
    assert f"@{AO_COMMIT}" in str(holdout[0]["source"])
    runs, sources = len(holdout), {source_family(r) for r in holdout}
    assert runs < MIN_FAMILY_RUNS or len(sources) < MIN_FAMILY_SOURCES
    assert ASSUMED_FAMILY_RATIOS["cdna"] == ("hopper", 0.7)
    assert "cdna" not in CALIBRATED_PARAMETERS.family_efficiency


def test_the_one_mi300x_run_and_its_h100_pair_score_as_first_recorded() -> None:
    # torchtitan Llama3-8B through torchao's script: MI300X +52.9 %, H100 +22.0 % (shipped model)
    mi300x, h100 = _ao_pair()
    scored = score_holdout([mi300x, h100])
    assert not any(s.refitted for s in scored)  # pytorch/ao is not a calibration family
    errors = {str(r["gpu"]): s.error for r, s in zip((mi300x, h100), scored, strict=True)}
    assert 0.52 <= errors["MI300X"] <= 0.54, errors
    assert 0.21 <= errors["H100"] <= 0.23, errors
    assert scored[0].measured == 5376.5 and scored[1].measured == 6150.0


@pytest.mark.parametrize(("target_error", "ratio"), [(0.0, 0.423), (0.2198, 0.533)])
def test_the_ratio_the_run_implies_is_computed_not_applied(target_error: float, ratio: float) -> None:
    """The CDNA/Hopper ratio at which the model meets the MI300X run exactly (0.423) or with the
    H100 row's own error (0.533), found by bisection on a copy of the parameters."""
    mi300x, _ = _ao_pair()
    hopper = CALIBRATED_PARAMETERS.efficiency_of("hopper")
    case = cases_from_benchmarks([benchmark_case(mi300x)])

    def predicted(r: float) -> float:
        table = {**CALIBRATED_PARAMETERS.family_efficiency, "cdna": hopper * r}
        params = CALIBRATED_PARAMETERS.model_copy(update={"family_efficiency": table})
        return float(evaluate(case, params).tokens_per_sec_per_gpu[0])

    target = 5376.5 * (1 + target_error)
    low, high = 0.1, 1.0
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (low, mid) if predicted(mid) > target else (mid, high)
    assert low == pytest.approx(ratio, abs=0.002)
    assert predicted(0.7) == pytest.approx(8223.3, rel=1e-3)  # the shipped ratio
