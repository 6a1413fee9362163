"""Measured LLM pre-training throughput on NVIDIA Blackwell (B200, GB200), sources the model was never
fitted to (issue 33): first scores with the shipped model, whose Blackwell efficiency is Hopper's at
ratio 1 (``ASSUMED_FAMILY_RATIOS``), before anything was changed for them.

24 rows appended to ``tests/data/throughput_holdout.csv``:

* ``NVIDIA/dgxc-benchmarking`` @c5c765f2684f983e787eaada4073b63c8287caf6 (release v25.05.05; the tables
  are identical in v25.05 .. v25.05.05, and no other release tag publishes Blackwell figures: v25.07 on
  give configurations and the formula only), ``llama3.1/README.md`` "Expected Performance" (Llama 3.1
  405B, BF16 and FP8, 128 / 256 / 512 GB200: 6 rows) and ``nemotron/README.md`` "GB200 Performance"
  (Nemotron-4 340B, BF16 and FP8, weak and strong scaling, 128 / 256 / 512 GB200: 12 rows). NeMo 2 in
  nvidia/nemo:25.04.01, NVIDIA/NeMo @6f2c6fda ``scripts/performance/llm/pretrain_*``; launch.sh sets the
  parallelism (405B TP4 PP8 CP2 VP8, GBS GPUs/2; 340B TP8 PP4 VP12, GBS GPUs/4 or 512), the
  recommended-config CSV no recompute, no offload, no FSDP. tokens/s per GPU = seq x GBS / the stated
  step time / GPUs (the README's formula; every stated total agrees within 0.1 %).
* ``NVIDIA-NeMo/Megatron-Bridge`` ``docs/performance-summary.md`` @5776a6d90b4dd8692902ab2eb581369484e19283,
  "25.11 NeMo Container", DGX-B200 and DGX-GB200: Llama 3 8B on 8 GPUs (B200, GB200) and Llama 3.1
  405B on 128 B200, each FP8-CS and FP8-MX (the parenthesised figure): 6 rows, Tokens / sec / GPU as
  stated; presets from ``scripts/performance/configs/llama`` at the same commit (no recompute).

FP8 rows are written as the earlier dgxc / NeMo FP8 rows are (precision ``fp8``); they are not
written through ``estimate --batch`` (the contract's precisions are fp32 / bf16-mixed / bf16-true).

Left out: every NVFP4 row (the model has no FP4 precision; it would read them as bf16); DGX-GB300 rows
(GB300 is not a catalog GPU); Megatron-Bridge's GB200 Llama 3 70B FP8-CS rows (Megatron FSDP with 20-40
layers' activations offloaded to the CPU, which the inputs cannot express) and its 25.11 GB200 405B row
(the table's TP4 PP16 VP4 on 256 GPUs disagrees with the preset at the same commit, so the rest of its
setup cannot be pinned); the same Llama configurations re-measured in the 25.09 and 26.02 .. 26.06
sections (kept once, from 25.11, the last section with B200 rows), 26.06's GB200 SFT / LoRA rows (their
packing and LoRA targets were not pinned here); MoE rows (DeepSeek-V3, Qwen3, GPT-OSS, Kimi, Llama 4,
Nemotron 3; the only B300 rows are MoE); grok1 (MoE); NeMo's long-sequence B200 table
(``performance_long_sequence.md``: TFLOPS only, no token rate); torchao's Llama3-8B torchtitan runs on
"8x power limited B200" (``docs/source/workflows/training.md`` @36027d82: the limit is not stated, so
the card is not the catalog's 1,000 W B200); ml-engineering's long-context B200 sweep (TFLOPS only, with
CPU optimizer offload); blog posts (Crusoe, Together, Fixstars, the PyTorch Crusoe B200 post) whose
tables could not be read and pinned in full. No RTX 5090 / RTX PRO 6000 run with a full setup was found
beyond universal-llm-trainer's (already in the holdout).

First scores (main @e43d6bf), holdout tooling, shipped constants: the 24 runs 29.5 % median |error|,
50 % within 25 %, +29.5 % signed (25 with ml-engineering's B200 row: 24.3 %, 52 %, +24.3 %); dgxc's GB200 runs
35.4 %, 33 %, +35.4 % (405B +21.1 .. +24.3 %, 340B +34.8 .. +48.1 %: the model too fast on the large
models); Megatron-Bridge 12.0 %, 100 %, -6.7 % (8B -4.1 .. -15.2 %, 405B on B200 +12.0 / +18.7 %).
Per GPU: B200 (5 runs, with ml-engineering's) 12.0 %, 100 %, +5.4 %; GB200 (20) 35.2 %, 40 %, +35.2 %.
The evidence rule (MIN_FAMILY_RUNS 3 from MIN_FAMILY_SOURCES 2): B200 now has 5 runs from 2 source
families (Megatron-Bridge, ml-engineering); GB200 20 from 2 (dgxc-benchmarking, Megatron-Bridge, both
NVIDIA's Megatron stack, so not independent in software); B300, RTX 5090: none; RTX PRO 6000: 12 from
one. The Blackwell / Hopper efficiency ratio that zeroes the median signed error (computed, not
applied): 0.80 over all 25, 0.94 on B200, 0.73 on GB200 (0.73 dgxc, 1.08 Megatron-Bridge). The guards
sit just above the first scores (not tuned).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_dgxc_benchmarking_throughput import _gbs, _stated

from conftest import TEST_DATA
from gpuprice.models.calibration.throughput_holdout import Scored, summarize
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    cases_from_benchmarks,
    load_benchmark_rows,
    row_number,
    source_family,
)
from gpuprice.models.gpu_hardware import ASSUMED_FAMILY_RATIOS, MIN_FAMILY_RUNS, MIN_FAMILY_SOURCES
from gpuprice.models.throughput import evaluate
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS

HOLDOUT_CSV = TEST_DATA / "throughput_holdout.csv"
PUBLIC_CSV = TEST_DATA / "throughput_public.csv"
DGXC = "NVIDIA/dgxc-benchmarking"
DGXC_COMMIT = "c5c765f2684f983e787eaada4073b63c8287caf6"  # v25.05.05
NEMO_COMMIT = "6f2c6fdaffcc0af97a9e2219fcc104e2399627e4"  # setup.sh NEMO_COMMIT (r2.3.0)
BRIDGE = "NVIDIA-NeMo/Megatron-Bridge"
BRIDGE_COMMIT = "5776a6d90b4dd8692902ab2eb581369484e19283"


def _all_rows() -> list[dict[str, object]]:
    return load_benchmark_rows(str(HOLDOUT_CSV))


def _is_blackwell(row: dict[str, object]) -> bool:
    return benchmark_case(row).profile.family == "blackwell"


def _new_rows() -> list[dict[str, object]]:
    return [
        r
        for r in _all_rows()
        if (source_family(r) == DGXC and "llama3/finetuning/" not in str(r["source"]))
        or source_family(r) == BRIDGE
    ]


def test_rows_cite_their_table_at_its_commit() -> None:
    rows = _new_rows()
    assert len(rows) == 24
    dgxc = [r for r in rows if source_family(r) == DGXC]
    bridge = [r for r in rows if source_family(r) == BRIDGE]
    assert len(dgxc) == 18 and len(bridge) == 6
    for r in dgxc:
        assert f"@{DGXC_COMMIT} section:" in str(r["source"]) and NEMO_COMMIT in str(r["notes"])
        assert r["gpu"] == "GB200" and r["workload"] == "pretrain_full"
    assert sum("llama3.1/README.md" in str(r["source"]) for r in dgxc) == 6
    assert sum("nemotron/README.md" in str(r["source"]) for r in dgxc) == 12
    for r in bridge:
        assert f"{BRIDGE} docs/performance-summary.md @{BRIDGE_COMMIT} section: 25.11 NeMo Container" in str(
            r["source"]
        )
        assert BRIDGE_COMMIT in str(r["notes"]) and r["workload"] == "pretrain_full"
    assert sorted(str(r["gpu"]) for r in bridge) == ["B200"] * 4 + ["GB200"] * 2
    # no NVFP4 / GB300 row (left out: no FP4 precision, GB300 not in the catalog)
    assert not any("fp4" in str(r["precision"]).lower() or "GB300" in str(r["gpu"]) for r in rows)


def test_dgxc_tokens_per_second_is_the_global_batch_over_the_step_time() -> None:
    for row in (r for r in _new_rows() if source_family(r) == DGXC):
        gpus = int(row_number(row, "gpu_count") or 0)
        seq = int(row_number(row, "seq_len") or 0)
        step = _stated(row, "Training step time (seconds per step)")
        tps = row_number(row, "tokens_per_sec_per_gpu")
        assert tps == pytest.approx(seq * _gbs(row) / step / gpus, abs=0.06)
        # the README's own total agrees with its step time within 0.1 %
        assert _stated(row, "Throughput in tokens per second") == pytest.approx(tps * gpus, rel=1e-3)
        tp, pp, cp = (int(x) for x in re.findall(r"[TPC]P(\d+)", str(row["sharding"]))[:3])
        assert row_number(row, "grad_accum") == _gbs(row) // (gpus // (tp * pp * cp))


def test_bridge_rows_are_the_table_figures() -> None:
    for row in (r for r in _new_rows() if source_family(r) == BRIDGE):
        cs, mx = re.search(r"Tokens / sec / GPU (\d+) \((\d+)\)", str(row["reported"])).groups()  # type: ignore[union-attr]
        mxfp8 = "MXFP8" in str(row["precision"])
        assert row_number(row, "tokens_per_sec_per_gpu") == float(mx if mxfp8 else cs)


def test_rows_parse_as_the_runs_ran() -> None:
    for row in _new_rows():
        case = benchmark_case(row)
        assert case.profile.family == "blackwell"
        assert case.profile.slug == {"GB200": "gb200", "B200": "b200"}[str(row["gpu"])]
        assert case.precision == ("fp8" if str(row["precision"]).startswith("fp8") else "bf16-mixed")
        assert case.method == "full" and not case.checkpointing and case.selective_flops == 0
        assert case.sharding == "model_parallel" and not case.compiled
        assert case.masked_heads == 0 and case.adapter_bytes == 0 and case.stream_bytes == 0
        if "405B" in str(row["model"]):
            assert case.shape.layers == 126 and case.shape.hidden == 16384
        elif "8B" in str(row["model"]):
            assert case.shape.layers == 32 and case.shape.hidden == 4096


@pytest.fixture(scope="module")
def blackwell(every: list[Scored]) -> list[tuple[dict[str, object], Scored]]:
    """(row, score) of every Blackwell holdout row; score_holdout walks families sorted, rows in order."""
    rows = _all_rows()
    ordered = [r for f in sorted({source_family(r) for r in rows}) for r in rows if source_family(r) == f]
    assert len(ordered) == len(every)
    return [(r, s) for r, s in zip(ordered, every, strict=True) if _is_blackwell(r)]


def test_first_scores_per_source_do_not_regress(blackwell: list[tuple[dict[str, object], Scored]]) -> None:
    assert len(blackwell) == 25 and not any(s.refitted for _, s in blackwell)
    # all 25: 24.3 %, 52 % within 25 %, +24.3 % signed
    total = summarize([s for _, s in blackwell])
    assert total.median_abs <= 0.25 and total.within >= 0.52
    dgxc = [(r, s) for r, s in blackwell if s.family == DGXC]
    llama = [s.error for r, s in dgxc if "405B" in str(r["model"])]
    nemotron = [s.error for r, s in dgxc if "Nemotron" in str(r["model"])]
    # 405B +21.1 .. +24.3 %, 340B +34.8 .. +48.1 % (35.4 %, 33 % within, +35.4 % over the 18)
    assert len(llama) == 6 and all(0.20 <= e <= 0.25 for e in llama), llama
    assert len(nemotron) == 12 and all(0.34 <= e <= 0.49 for e in nemotron), nemotron
    assert summarize([s for _, s in dgxc]).median_abs <= 0.36
    bridge = [(r, s) for r, s in blackwell if s.family == BRIDGE]
    small = [s.error for r, s in bridge if "8B" in str(r["model"])]
    large = [s.error for r, s in bridge if "405B" in str(r["model"])]
    # 8B -4.1 .. -15.2 %, 405B on 128 B200 +12.0 / +18.7 % (12.0 %, 100 %, -6.7 % over the 6)
    assert len(small) == 4 and all(-0.16 <= e <= -0.035 for e in small), small
    assert len(large) == 2 and all(0.11 <= e <= 0.19 for e in large), large
    assert summarize([s for _, s in bridge]).median_abs <= 0.125


def test_first_scores_per_gpu(blackwell: list[tuple[dict[str, object], Scored]]) -> None:
    b200 = summarize([s for r, s in blackwell if r["gpu"] == "B200"])
    gb200 = summarize([s for r, s in blackwell if r["gpu"] == "GB200"])
    # B200 12.0 %, 100 %, +5.4 % over 5; GB200 35.2 %, 40 %, +35.2 % over 20
    assert b200.runs == 5 and b200.median_abs <= 0.125 and b200.within == 1.0
    assert gb200.runs == 20 and gb200.median_abs <= 0.36 and gb200.within >= 0.4


def _runs_and_sources() -> dict[str, tuple[int, int]]:
    rows = [r for path in (HOLDOUT_CSV, PUBLIC_CSV) for r in load_benchmark_rows(str(path))]
    out: dict[str, tuple[int, int]] = {}
    for slug in ("b200", "gb200", "b300", "rtx-pro-6000", "rtx-5090"):
        mine = [r for r in rows if benchmark_case(r).profile.slug == slug]
        out[slug] = (len(mine), len({source_family(r) for r in mine}))
    return out


def test_evidence_per_blackwell_part_against_the_family_rule() -> None:
    counts = _runs_and_sources()
    assert counts == {
        "b200": (5, 2),  # Megatron-Bridge 4, ml-engineering 1
        "gb200": (20, 2),  # dgxc-benchmarking 18, Megatron-Bridge 2 (both NVIDIA's Megatron stack)
        "b300": (0, 0),
        "rtx-pro-6000": (12, 1),  # universal-llm-trainer only
        "rtx-5090": (0, 0),
    }
    meets = {s for s, (n, k) in counts.items() if n >= MIN_FAMILY_RUNS and k >= MIN_FAMILY_SOURCES}
    assert meets == {"b200", "gb200"}
    # measured, not applied: the shipped constants still borrow Hopper's efficiency at ratio 1
    assert ASSUMED_FAMILY_RATIOS["blackwell"] == ("hopper", 1.0)
    assert "blackwell" not in CALIBRATED_PARAMETERS.family_efficiency


def _implied_ratio(rows: list[dict[str, object]]) -> float:
    """Blackwell / Hopper efficiency ratio at which the median signed error of ``rows`` is zero."""
    hopper = CALIBRATED_PARAMETERS.family_efficiency["hopper"]
    cases = cases_from_benchmarks([benchmark_case(r) for r in rows])
    measured = np.array([row_number(r, "tokens_per_sec_per_gpu") for r in rows], dtype=float)

    def signed(ratio: float) -> float:
        table = {**CALIBRATED_PARAMETERS.family_efficiency, "blackwell": ratio * hopper}
        params = CALIBRATED_PARAMETERS.model_copy(update={"family_efficiency": table})
        return float(np.median(evaluate(cases, params).tokens_per_sec_per_gpu / measured - 1))

    low, high = 0.3, 2.0
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if signed(mid) < 0 else (low, mid)
    return (low + high) / 2


def test_implied_blackwell_to_hopper_ratio_is_computed_not_applied() -> None:
    rows = [r for r in _all_rows() if _is_blackwell(r)]
    assert len(rows) == 25
    by_gpu = {g: [r for r in rows if r["gpu"] == g] for g in ("B200", "GB200")}
    assert _implied_ratio(rows) == pytest.approx(0.80, abs=0.01)
    assert _implied_ratio(by_gpu["B200"]) == pytest.approx(0.94, abs=0.01)
    assert _implied_ratio(by_gpu["GB200"]) == pytest.approx(0.73, abs=0.01)
