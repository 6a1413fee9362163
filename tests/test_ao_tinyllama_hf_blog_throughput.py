"""Three throughput sources the model was never fitted to (issue 33): first scores with the shipped
model, before anything was changed for them.

Rows appended to ``tests/data/throughput_holdout.csv`` (each cites path @ commit and table row):

- ``pytorch/ao`` ``docs/source/workflows/training.md`` @36027d82d1ad9949597ea16002ff4940374b1b94, the
  bf16 baselines of "e2e training benchmarks" on 8 x H100 and 8 x MI300X: Llama3-8B pre-training
  run by **torchtitan** (torchao's ``benchmarks/float8/training/llama3.sh``: local batch 1, seq 8192,
  compile, FSDP2, per-op SAC), median of torchtitan's per-GPU ``tps`` (``parse_torchtitan_logs.py``).
  torchtitan is a calibration family (its 405B row), so these are torchtitan runs scored by constants
  that saw one torchtitan run, not a refit;
- ``jzhang38/TinyLlama`` ``README.md`` @bf122247c486b6b897050e98cbb7bedae8eeba73, "Blazingly Fast":
  24k tokens/s per A100-40G, 56 % MFU, no activation checkpointing (FSDP, micro-batch 8 x 2048,
  flash attention 2 and fused kernels; ``pretrain/tinyllama.py``), 16 GPUs (the README's hardware);
- ``huggingface/blog`` ``deepspeed-to-fsdp-and-back.md`` @09e9aa2d9b04feabe06bf98d25691caf8d967eea,
  Table 3: full fine-tuning of IBM Granite 7B on four A100 at batch 8, FSDP (aligned mode) and
  DeepSpeed ZeRO-3, tokens/s/device with the step time (so the sequence length, 4,096, follows).

Left out: torchao's float8 / MXFP8 rows (not bf16); the B200 bf16 baseline (8,307.5 tokens/s), run
on "power limited B200 GPUs" with the cap unstated: the product's B200 is a full-power card and the
model has no power-cap input (first score, not in the CSV: +100.0 %, models/mfu_calibration.md);
torchao's torchtune Llama3.2-3B fine-tuning figures (GPU not stated); its MoE and quantized-training
rows (MoE, or approximate "~17k" on an unnamed Llama2-1B shape); TinyLlama's inference table.

First scores (main @c7e13b9), holdout tooling: the five runs 12.8 % median |error|, 60 % within 25 %,
+12.8 % signed; fine-tuning (the blog's two) 11.4 %, 100 %, +11.4 %; torchao +28.8 % (H100) and
+63.3 % (MI300X); TinyLlama -1.4 %. All unseen fine-tuning runs 10.1 % / 81 % over 101 (9.5 % over
the 99 before); pre-training 8.3 % / 89 % over 47 (7.9 % / 93 % over 44). The guards sit just
above those figures (not tuned).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest
from batch_scoring import batch_answers, throughput_scores

from conftest import TEST_DATA
from gpuprice.models.calibration.throughput_holdout import Scored, summarize
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    load_benchmark_rows,
    row_number,
    source_family,
)

HOLDOUT_CSV = TEST_DATA / "throughput_holdout.csv"
COMMITS = {
    "pytorch/ao": "36027d82d1ad9949597ea16002ff4940374b1b94",
    "jzhang38/TinyLlama": "bf122247c486b6b897050e98cbb7bedae8eeba73",
    "huggingface/blog": "09e9aa2d9b04feabe06bf98d25691caf8d967eea",
}
PATHS = {
    "pytorch/ao": "docs/source/workflows/training.md",
    "jzhang38/TinyLlama": "README.md",
    "huggingface/blog": "deepspeed-to-fsdp-and-back.md",
}


def _rows(family: str | None = None) -> list[dict[str, object]]:
    return [
        r
        for r in load_benchmark_rows(str(HOLDOUT_CSV))
        if source_family(r) in COMMITS and (family is None or source_family(r) == family)
    ]


def _stated(row: dict[str, object], name: str) -> float:
    match = re.search(rf"{re.escape(name)} ([0-9.]+)", str(row["reported"]))
    assert match, (name, row["reported"])
    return float(match.group(1))


def test_rows_cite_the_table_row_at_its_commit() -> None:
    rows = _rows()
    assert len(rows) == 5
    assert [source_family(r) for r in rows].count("pytorch/ao") == 2
    assert [source_family(r) for r in rows].count("jzhang38/TinyLlama") == 1
    assert [source_family(r) for r in rows].count("huggingface/blog") == 2
    for row in rows:
        family = source_family(row)
        assert f"{family} {PATHS[family]} @{COMMITS[family]} section: " in str(row["source"])
        assert str(row["reported"]).strip()
    assert not any(str(r["gpu"]).startswith("B200") for r in rows)  # power-limited, left out
    assert {str(r["workload"]) for r in _rows("huggingface/blog")} == {"finetune_full"}
    assert {str(r["workload"]) for r in _rows("pytorch/ao") + _rows("jzhang38/TinyLlama")} == {
        "pretrain_full"
    }


def test_conversions_follow_from_the_stated_figures() -> None:
    # torchao: the table's median tokens/second is torchtitan's per-GPU tps, taken as stated
    for row in _rows("pytorch/ao"):
        assert row_number(row, "tokens_per_sec_per_gpu") == _stated(row, "Median tokens/second")
        assert row_number(row, "seq_len") == 8192 and row_number(row, "micro_batch") == 1
    # the blog: tokens/s/device x step time = batch 8 x 4,096 tokens; MFU on 6N at the A100's 312 TFLOPS
    for row in _rows("huggingface/blog"):
        tps = _stated(row, "Tokens / sec / device")
        assert row_number(row, "tokens_per_sec_per_gpu") == tps
        assert tps * _stated(row, "Step time (s)") / 8 == pytest.approx(4096, rel=0.005)
        assert 6 * 6.74e9 * tps / 312e12 == pytest.approx(_stated(row, "MFU"), abs=0.005)
    # TinyLlama: 24k stated; the README's 3,456 A100 GPU hours on 300B tokens is 24.1k
    (tiny,) = _rows("jzhang38/TinyLlama")
    assert row_number(tiny, "tokens_per_sec_per_gpu") == 24000
    gpu_hours, tokens = 3456, 300e9
    assert tokens / (gpu_hours * 3600) == pytest.approx(24000, rel=0.01)


def test_rows_parse_as_the_runs_ran() -> None:
    for row in _rows():
        case = benchmark_case(row)
        assert case.method == "full" and case.precision == "bf16-mixed"
        assert case.masked_heads == 0 and case.score_heads == 0 and not case.fp32_attention
        family = source_family(row)
        if family == "pytorch/ao":  # FSDP2, compile, per-op SAC (no full recompute)
            assert case.profile.slug in ("h100-sxm", "mi300x") and case.gpus == 8
            assert case.sharding == "fsdp" and case.compiled and not case.checkpointing
        elif family == "jzhang38/TinyLlama":
            assert case.profile.slug == "a100-40gb" and case.gpus == 16 and case.micro_batch == 8
            assert case.sharding == "fsdp" and not case.compiled and not case.checkpointing
            assert case.shape.layers == 22 and case.shape.hidden == 2048  # the catalog's TinyLlama
        else:
            assert case.profile.slug == "a100-80gb-sxm" and case.gpus == 4 and case.micro_batch == 8
            assert case.sharding in ("fsdp", "zero3") and case.checkpointing and not case.compiled


@pytest.fixture(scope="module")
def scored(every: list[Scored]) -> list[Scored]:
    return [s for s in every if s.family in COMMITS]


def test_first_scores_through_the_holdout_tooling_do_not_regress(scored: list[Scored]) -> None:
    # 12.8 % median |error|, 60 % within 25 %, +12.8 % signed over the five; per run (families
    # sorted): blog FSDP +10.1 %, DeepSpeed +12.8 %, TinyLlama -1.4 %, H100 +28.8 %, MI300X +63.3 %
    # at the first score; H100 +22.0 %, MI300X +52.9 % with op-level selective checkpointing's
    # recompute counted (every second matmul of a block: 5.1 GFLOP a token on Llama-3-8B)
    summary = summarize(scored)
    assert summary.runs == 5 and not any(s.refitted for s in scored)
    assert summary.median_abs <= 0.13 and summary.within >= 0.6
    errors = [s.error for s in scored]
    bounds = [(0.09, 0.115), (0.115, 0.14), (-0.03, 0.0), (0.205, 0.235), (0.515, 0.545)]
    for error, (low, high) in zip(errors, bounds, strict=True):
        assert low <= error <= high, errors
    finetune = summarize([s for s in scored if s.finetune])
    assert finetune.runs == 2 and finetune.median_abs <= 0.15  # the fine-tuning target
    assert finetune.median_abs <= 0.12 and finetune.within >= 1.0


def _contract_csv(path: Path, blog_attention: str) -> list[float]:
    """The runs as an acceptance check writes them: only the contract's `estimate` columns.
    Granite 7B is not in the catalog: ``params_b`` 6.74 (the blog's MFU implies it)."""
    measured: list[float] = []
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["model", "params_b", "method", "optimizer", "precision", "seq_len", "micro_batch"]
            + ["activation_checkpointing", "framework", "compile", "attention", "gpus", "sharding", "gpu"]
        )
        for r in _rows():
            family = source_family(r)
            case = benchmark_case(r)
            # (model, params_b, activation_checkpointing, framework, compile, attention)
            setup = {
                "pytorch/ao": (r["model"], "", "selective", "torchtitan", "true", ""),
                "jzhang38/TinyLlama": (r["model"], "", "none", "litgpt", "false", ""),
                "huggingface/blog": ("", "6.74", "full", "hf", "false", blog_attention),
            }[family]
            model, params, ckpt, framework, compiled, attention = setup
            writer.writerow(
                [model, params, "full", "adamw", "bf16-mixed", r["seq_len"], r["micro_batch"]]
                + [ckpt, framework, compiled, attention, case.gpus, case.sharding, case.profile.slug]
            )
            measured.append(float(str(r["tokens_per_sec_per_gpu"])))
    return measured


@pytest.mark.parametrize(
    ("blog_attention", "worst_median", "least_within", "blog_bounds"),
    [
        # attention left to the product's default: hf at micro-batch 8 is read as SDPA with a padding
        # mask (-22.7 / -20.9 % on the blog's runs, whose 8 x 4,096 tokens a step are unpadded);
        # 22.7 %, 60 % within 25 % over the five (H100 +23.7 %, MI300X +54.5 %, TinyLlama -1.8 %)
        ("", 0.23, 0.6, (-0.24, -0.19)),
        # attention flash (a fused causal kernel, as the tooling reads the unstated column):
        # 12.8 %, 60 % over the five (blog +10.1 / +12.8 %)
        ("flash", 0.13, 0.6, (0.09, 0.14)),
    ],
)
def test_first_scores_through_estimate_batch_with_contract_columns(
    cli,
    home,
    tmp_path: Path,
    blog_attention: str,
    worst_median: float,
    least_within: float,
    blog_bounds: tuple[float, float],
) -> None:
    batch = tmp_path / "unseen.csv"
    measured = np.array(_contract_csv(batch, blog_attention))
    answers = batch_answers(cli, "estimate", batch, 5, "--tokens", "1000000000", "--usd-per-gpu-hour", "2")
    median, within = throughput_scores(answers, measured)
    assert median <= worst_median and within >= least_within, (median, within)
    errors = np.array([a["tokens_per_sec_per_gpu"] for a in answers]) / measured - 1
    # H100 +30.8 -> +23.7 %, MI300X +65.0 -> +54.5 % once `--activation-checkpointing selective` is
    # charged its recompute (every second matmul of a block)
    assert 0.22 <= errors[0] <= 0.255 and 0.53 <= errors[1] <= 0.56 and -0.04 <= errors[2] <= 0.0, errors
    assert all(blog_bounds[0] <= e <= blog_bounds[1] for e in errors[3:]), errors


def test_all_unseen_runs_with_these(every: list[Scored]) -> None:
    # fine-tuning 10.1 % / 81 % within 25 % over 101 (9.5 % / 81 % over the 99 before: the blog's
    # two land at 10-13 %, just above the old median); pre-training 8.3 % / 89 % over 47, 5.9 % /
    # 91 % once selective checkpointing's recompute is counted (torchtitan 10.1 -> 2.4 %)
    from gpuprice.models.calibration.throughput_band_table import EXCLUDED_FAMILIES

    finetune = summarize([s for s in every if s.finetune and s.family not in EXCLUDED_FAMILIES])
    assert finetune.runs >= 101 and finetune.median_abs <= 0.15  # the target
    # 11.6 % / 74 % over 125 since the DGX Cloud benchmarking recipes' twenty NeMo runs joined, first
    # scored with nothing changed (tests/test_dgxc_benchmarking_throughput.py): the guard follows the total
    assert finetune.median_abs <= 0.12 and finetune.within >= 0.74
    blackwell = ("NVIDIA/dgxc-benchmarking", "NVIDIA-NeMo/Megatron-Bridge")  # their pre-training rows
    pre = summarize([s for s in every if not s.finetune and s.family not in blackwell])
    assert pre.runs >= 47 and pre.median_abs <= 0.065 and pre.within >= 0.9
    # 12.0 % / 77 % over 71 with the 24 Blackwell pre-training runs, first scored with nothing changed
    # (tests/test_blackwell_throughput.py): the guard follows the total
    every_pre = summarize([s for s in every if not s.finetune])
    assert every_pre.runs >= 71 and every_pre.median_abs <= 0.125 and every_pre.within >= 0.77
