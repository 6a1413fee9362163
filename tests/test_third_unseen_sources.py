"""Third unseen sources (issue 33): measured runs from trainers the models were never fitted to,
scored first with the shipped model, both through the calibration tooling and the way an acceptance
check does (``fit --batch`` / ``estimate --batch`` on a CSV with only the contract's columns).

* memory: ``tests/data/measured_memory_holdout3.csv``, 5 runs of Liger-Kernel's HF Trainer example
  without Liger (linkedin/Liger-Kernel ``examples/huggingface/results/*_use_liger_False_*.log``
  @1dce7fd4: trl SFTTrainer, FSDP full shard over 4 A100 80GB, bf16 autocast, gradient
  checkpointing, Alpaca capped at 512 tokens, ``torch.cuda.max_memory_allocated``).
* throughput: the same 5 runs (tokens/s of padded tokens) and 11 pre-training runs of IBM's
  foundation-model-stack/fms-fsdp README tables (Llama-2 7B-70B, FSDP/HSDP on 96-128 A100/H100),
  appended to ``tests/data/throughput_holdout.csv``.

First scores (before anything was changed for them), models/memory_calibration.md and
models/mfu_calibration.md, "Third unseen source": memory 35.5 % median |error|, 20 % within 20 %
(+35 % signed; through ``fit --batch``, which then kept gradients beside the activations, 55.6 % / 0 %;
after h33mem2's two physical rules, gradients freed with one micro-batch per step and accelerate's
fp32 FSDP master: 27.4 % / 20 % (+27 %) both ways);
throughput fms-fsdp 6.8 % / 100 % within 25 %, Liger-Kernel 29.6 % / 40 % (+30 %, too fast).
The guards sit just above those figures (the issue's targets are asserted where they are met), so
a change that makes the models worse on these sources fails here.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import TEST_DATA
from gpuprice.models.calibration.memory_fit import prepared, select_rows, stats
from gpuprice.models.calibration.throughput_holdout import Scored, summarize
from gpuprice.models.calibration.throughput_rows import load_benchmark_rows, source_family
from gpuprice.models.memory import estimate_memory

HOLDOUT3_CSV = TEST_DATA / "measured_memory_holdout3.csv"
THROUGHPUT_HOLDOUT_CSV = TEST_DATA / "throughput_holdout.csv"
LIGER = "linkedin/Liger-Kernel"
FMS = "foundation-model-stack/fms-fsdp"
COMMIT = re.compile(r"@[0-9a-f]{40}\b")


# ----- memory ------------------------------------------------------------------------------------
def test_memory_rows_cite_a_commit_and_parse_without_exclusions() -> None:
    unseen = select_rows(HOLDOUT3_CSV)
    assert len(unseen.measured) == 5 and not unseen.oom and not unseen.excluded
    for m in unseen.measured:
        assert COMMIT.search(m.row["source_url_or_repo_path"]), m.row["source_url_or_repo_path"]
        # what the trainer did, read from its code: FSDP over 4 GPUs, fp32 master (accelerate's
        # upcast) under bf16 autocast, one micro-batch per step, dynamic padding, allocated bytes
        setup = m.setup
        assert (setup.method, setup.sharding, setup.gpus, setup.precision) == (
            "full",
            "fsdp",
            4,
            "bf16-mixed",
        )
        assert setup.memory_metric == "allocated" and setup.attention == "sdpa"
        assert setup.activation_checkpointing == "full" and setup.gradient_accumulation is False
        assert setup.variable_lengths is not False and setup.seq_len == 512


def test_memory_third_unseen_source_does_not_regress() -> None:
    # First score with the shipped constants: 35.5 % median |error|, 20 % within 20 %, +35 %
    # signed (over: the rows are set at the 512-token cap; the measured steps' batches averaged
    # 229-416 padded tokens). Not the issue's target (<= 12 % / >= 65 %). After accelerate's fp32
    # FSDP master (16 B/param, not 18; models/memory_calibration.md): 27.4 % / 20 % (+27 %).
    unseen = select_rows(HOLDOUT3_CSV)
    predicted = prepared(unseen.measured).per_gpu_gb()
    measured = np.array([m.gb for m in unseen.measured])
    median, within = stats(predicted, measured)
    assert median <= 28.0 and within >= 20.0, (median, within)
    # every run completed on an A100 80GB: none may be judged does_not_fit at margin 0
    for m in unseen.measured:
        estimate = estimate_memory(m.setup.model_copy(update={"margin": 0.0}))
        assert estimate.verdict(85.899).verdict != "does_not_fit", m.setup.arch.name


def _contract_memory_csv(path: Path) -> list[float]:
    """The holdout's runs as an acceptance check writes them: only `fit` options as columns."""
    measured: list[float] = []
    with HOLDOUT3_CSV.open(newline="", encoding="utf-8") as fh, path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["model", "method", "precision", "seq_len", "micro_batch", "grad_checkpointing", "gpus"]
            + ["sharding", "gpu", "memory_metric", "margin"]
        )
        for row in csv.DictReader(fh):
            writer.writerow(
                [row["model"], "full", "bf16-mixed", row["seq_len"], row["micro_batch"], "true"]
                + [row["num_gpus"], "fsdp", "a100-80gb-sxm", "allocated", "0"]
            )
            measured.append(float(row["peak_gb_per_gpu"]))
    return measured


def test_memory_through_fit_batch_does_not_regress(cli, home, tmp_path: Path) -> None:
    # `fit --batch` without a grad_accum column: first score 55.6 % / 0 % within 20 % (+56 %),
    # when the memory model kept the fp32 gradient shards beside the activations whatever
    # grad_accum said, and gemma-7b (measured 55.4 GB allocated, 82.2 GB reserved on an 85.9 GB
    # card) judged does_not_fit at margin 0 (91.1 GB device). Now accumulation follows grad_accum
    # (default 1: gradients freed after each step) and hf + fsdp keeps 16 B/param: 27.4 % / 20 %
    # (+27 %), the holdout tooling's figure, and no run judged does_not_fit (gemma 76.3 GB device).
    batch = tmp_path / "memory.csv"
    measured = np.array(_contract_memory_csv(batch))
    result = cli("fit", "--batch", str(batch))
    assert result.code == 0, result.err
    answers = [json.loads(line) for line in result.out.splitlines() if line.strip()]
    predicted = np.array([a["per_gpu_gb"] for a in answers])
    median, within = stats(predicted, measured)
    assert len(answers) == 5 and median <= 28.0 and within >= 20.0, (median, within)
    assert not any(a["verdict"] == "does_not_fit" for a in answers)


# ----- throughput --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scored(holdout_scores: list[Scored]) -> list[Scored]:
    return [s for s in holdout_scores if s.family in (LIGER, FMS)]


def test_throughput_rows_are_appended_with_provenance() -> None:
    rows = [r for r in load_benchmark_rows(str(THROUGHPUT_HOLDOUT_CSV)) if source_family(r) in (LIGER, FMS)]
    assert (
        sum(source_family(r) == FMS for r in rows) == 11 and sum(source_family(r) == LIGER for r in rows) == 5
    )
    for row in rows:
        assert COMMIT.search(str(row["source"])) and str(row["reported"]).strip(), row["source"]


def test_fms_fsdp_pretraining_meets_the_issue_accuracy(scored: list[Scored]) -> None:
    # First score 6.8 % median |error|, 100 % within 25 % (+3.8 %), never fitted to.
    summary = summarize([s for s in scored if s.family == FMS])
    assert summary.runs == 11 and not any(s.refitted for s in scored)
    assert summary.median_abs <= 0.15  # the issue's throughput target
    assert summary.median_abs <= 0.08 and summary.within == 1.0


def test_liger_hf_trainer_fine_tuning_does_not_regress(scored: list[Scored]) -> None:
    # First score 29.6 % / 40 % within 25 %, +29.6 % signed (too fast; models/mfu_calibration.md
    # "Third unseen source" says why). Not the issue's target (<= 15 %).
    summary = summarize([s for s in scored if s.family == LIGER])
    assert summary.runs == 5 and all(s.finetune for s in scored if s.family == LIGER)
    assert summary.median_abs <= 0.31 and summary.within >= 0.4


def test_throughput_through_estimate_batch_matches_the_holdout_scoring(cli, home, tmp_path: Path) -> None:
    from gpuprice.models.architectures import find_model

    rows = [r for r in load_benchmark_rows(str(THROUGHPUT_HOLDOUT_CSV)) if source_family(r) in (LIGER, FMS)]
    batch = tmp_path / "throughput.csv"
    with batch.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["model", "params_b", "method", "precision", "seq_len", "micro_batch", "grad_checkpointing"]
            + ["gpus", "sharding", "gpu", "attention", "compile"]
        )
        for r in rows:
            known = find_model(str(r["model"])) is not None
            writer.writerow(
                [r["model"] if known else "", "" if known else r["params_b"], "full", "bf16-mixed"]
                + [r["seq_len"], r["micro_batch"], str(r["act_ckpt"]).lower(), r["gpu_count"], "fsdp"]
                + ["a100-80gb-sxm" if str(r["gpu"]).startswith("A100") else "h100-sxm", r["attention"]]
                + ["true" if "torch.compile on" in str(r["notes"]) else "false"]
            )
    result = cli("estimate", "--batch", str(batch), "--tokens", "1000000000")
    assert result.code == 0, result.err
    answers = [json.loads(line) for line in result.out.splitlines() if line.strip()]
    errors: dict[str, list[float]] = {}
    for r, a in zip(rows, answers, strict=True):
        errors.setdefault(source_family(r), []).append(
            a["tokens_per_sec_per_gpu"] / float(str(r["tokens_per_sec_per_gpu"])) - 1
        )
    assert float(np.median(np.abs(errors[FMS]))) <= 0.08
    assert float(np.median(np.abs(errors[LIGER]))) <= 0.31
