"""fms-acceleration's A100 fine-tuning runs, a throughput source the model was never fitted to
(issue 33): first scores with the shipped model, before anything was changed for them.

foundation-model-stack/fms-acceleration ``scripts/benchmarks/refs/a100_80gb.csv``
@24bdadb228e2d55bc0c69deec034b86a73da6917: its 23 completed plain-HF runs (framework_config ``none``
= full and LoRA, ``baseline-peft-bnb`` = QLoRA; fms-hf-tuning 2.5.0 = trl 0.13 SFTTrainer on
transformers 4.48.1, packed 4,096-token samples (SantaCoder 2,048), FlashAttention-2, gradient
checkpointing, one micro-batch per step, 1 GPU or FSDP FULL_SHARD over 2, A100 80GB), appended to
``tests/data/throughput_holdout.csv``. ``train_tokens_per_second`` is per GPU: transformers'
``Trainer.num_tokens`` counts this process's first batch's ``input_ids.numel()`` x max_steps, over the
whole 100-step ``train_runtime`` (models/mfu_calibration.md, "fms-acceleration's A100 fine-tuning
runs").

First scores: holdout tooling 6.5 % median |error|, 100 % within 25 %, +3.5 % signed; through
``estimate --batch`` with only the contract's columns 7.3 % / 100 % (+3.9 %) with ``lora_targets all``,
11.5 % / 96 % (+11.5 %) with ``qv`` (the runs targeted q, k, v, o: neither); all unseen fine-tuning
runs 11.8 % / 73 % over 88 (14.2 % over the 65 before).

Then the throughput model gained hf QLoRA's fp32 residual stream (models/throughput_fp32_stream.py),
read from trl's, PEFT's and bitsandbytes' code after these runs' one-GPU QLoRA misses were seen (no
constant fitted): the four one-GPU QLoRA runs went from +23 % to +7..+10 % with the adapters the runs
had (q, k, v, o: ``--lora-targets qkvo``, which the tooling now reads from the rows' notes), +2..+4 %
with ``all``; the FSDP ones do not have the stream and did not move. So this source is no longer
out-of-sample for those four runs. Reading q, k, v, o instead of ``all`` also moved the LoRA runs
from -7 % to +12 % (the per-step FSDP cost and Mixtral's expert loop, no longer hidden by charging
adapters the runs did not have). The figures the guards sit just above are now: tooling 6.6 % /
96 % (+6.6 %), QLoRA 6.6 %; ``estimate --batch`` 4.9 % (``all``), 7.9 % (``qv``), 6.7 % (``qkvo``).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest
from batch_scoring import batch_answers, throughput_scores

from conftest import TEST_DATA
from gpuprice.models.architectures import find_model
from gpuprice.models.calibration.throughput_holdout import Scored, summarize
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    load_benchmark_rows,
    row_number,
    source_family,
)
from gpuprice.models.throughput_adapters import adapter_bytes_per_token

HOLDOUT_CSV = TEST_DATA / "throughput_holdout.csv"
FMS = "foundation-model-stack/fms-acceleration"
COMMIT = "24bdadb228e2d55bc0c69deec034b86a73da6917"


def _rows() -> list[dict[str, object]]:
    return [r for r in load_benchmark_rows(str(HOLDOUT_CSV)) if source_family(r) == FMS]


def _reported(row: dict[str, object], name: str) -> float:
    match = re.search(rf"{name} ([0-9.]+)", str(row["reported"]))
    assert match, (name, row["reported"])
    return float(match.group(1))


def test_rows_cite_the_table_row_at_its_commit() -> None:
    rows = _rows()
    assert len(rows) == 23
    workloads = [str(r["workload"]) for r in rows]
    assert (workloads.count("finetune_full"), workloads.count("finetune_lora")) == (8, 6)
    assert workloads.count("finetune_qlora") == 9
    lines = set()
    for row in rows:
        source = str(row["source"])
        assert f"scripts/benchmarks/refs/a100_80gb.csv @{COMMIT} section: line " in source, source
        assert re.search(r"framework_config (none|baseline-peft-bnb), ", source), source
        lines.add(source.split("section: line ")[1].split(",")[0])
        # the row's figure is the table's train_tokens_per_second as logged, unconverted
        assert row_number(row, "tokens_per_sec_per_gpu") == _reported(row, "train_tokens_per_second")
    assert len(lines) == 23  # one row each, none counted twice


def test_train_tokens_per_second_is_per_gpu() -> None:
    # HF Trainer counts samples over all processes (per-device batch x GPUs x steps) but tokens on
    # this process only (num_tokens: first batch's numel x max_steps): samples/s x seq_len / GPUs
    # reproduces the logged tokens/s on every row, so it is already per GPU.
    for row in _rows():
        gpus = row_number(row, "gpu_count")
        seq = row_number(row, "seq_len")
        assert gpus in (1, 2) and seq in (2048, 4096)
        per_gpu = _reported(row, "train_samples_per_second") * seq / gpus
        assert per_gpu == pytest.approx(_reported(row, "train_tokens_per_second"), rel=2e-3), row["source"]
        # and 100 steps of micro_batch x gpus samples in train_runtime
        samples = 100 * (row_number(row, "micro_batch") or 0) * gpus
        assert samples / _reported(row, "train_runtime") == pytest.approx(
            _reported(row, "train_samples_per_second"), rel=2e-3
        )


def test_rows_parse_as_the_runs_ran() -> None:
    for row in _rows():
        case = benchmark_case(row)
        method = str(row["workload"]).removeprefix("finetune_")
        assert case.method == method
        # full/LoRA: torch_dtype bf16 and no --bf16 (no autocast); QLoRA: --bf16 autocast over nf4
        assert case.precision == ("bf16-mixed" if method == "qlora" else "bf16-true")
        assert case.sharding == ("fsdp" if case.gpus == 2 else "none")
        assert case.checkpointing and case.grad_accum == 1 and not case.compiled
        assert case.masked_heads == 0 and case.score_heads == 0 and not case.fp32_attention  # FA-2
        assert case.profile.slug == "a100-80gb-sxm"
        # PEFT's fp32 adapters on the bf16 base (no autocast): the LoRA rows only, on q, k, v, o
        assert (case.adapter_bytes > 0) == (method == "lora")
        if method == "lora":
            arch = find_model(str(row["model"]))
            assert case.adapter_bytes == adapter_bytes_per_token(arch, "qkvo", True)


@pytest.fixture(scope="module")
def scored(holdout_scores: list[Scored]) -> list[Scored]:
    return [s for s in holdout_scores if s.family == FMS]


def test_first_scores_through_the_holdout_tooling_do_not_regress(scored: list[Scored]) -> None:
    # First score 6.5 % median |error|, 100 % within 25 %, +3.5 % signed; full 6.2 %, LoRA 7.4 %
    # (-7.4 %: the adapters read as `all`), QLoRA 13.7 % (+13.7 %: one-GPU runs +23 %, trl's fp32
    # norms and stream). With the fp32 stream counted and the adapters read as the runs had them
    # (q, k, v, o): 6.6 %, QLoRA 6.6 %.
    summary = summarize(scored)
    assert summary.runs == 23 and not any(s.refitted for s in scored) and all(s.finetune for s in scored)
    assert summary.median_abs <= 0.15  # the fine-tuning target
    assert summary.median_abs <= 0.07 and summary.within >= 0.95
    qlora = summarize([s for s in scored if s.method == "qlora"])
    assert qlora.runs == 9 and qlora.median_abs <= 0.07
    cases = [benchmark_case(r) for r in _rows()]
    assert [float(str(r["tokens_per_sec_per_gpu"])) for r in _rows()] == [s.measured for s in scored]
    one_gpu = [s.error for s, c in zip(scored, cases, strict=True) if s.method == "qlora" and c.gpus == 1]
    assert len(one_gpu) == 4 and max(abs(e) for e in one_gpu) <= 0.10  # +23 % before the fp32 stream


def _contract_csv(path: Path, lora_targets: str) -> list[float]:
    """The runs as an acceptance check writes them: only the contract's `estimate` columns."""

    measured: list[float] = []
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["model", "params_b", "method", "optimizer", "precision", "seq_len", "micro_batch"]
            + ["grad_checkpointing", "framework", "attention", "lora_rank", "lora_targets", "gpus"]
            + ["sharding", "gpu"]
        )
        for r in _rows():
            known = find_model(str(r["model"])) is not None  # SantaCoder is not in the catalog
            method = str(r["workload"]).removeprefix("finetune_")
            adapters = method != "full"
            writer.writerow(
                [r["model"] if known else "", "" if known else r["params_b"], method, "adamw"]
                + ["bf16-mixed" if method == "qlora" else "bf16-true", r["seq_len"], r["micro_batch"]]
                + ["true", "hf", "flash", "16" if adapters else "", lora_targets if adapters else ""]
                + [r["gpu_count"], "fsdp" if str(r["gpu_count"]) == "2" else "none", "a100-80gb-sxm"]
            )
            measured.append(float(str(r["tokens_per_sec_per_gpu"])))
    return measured


@pytest.mark.parametrize(
    ("lora_targets", "worst_median", "least_within"),
    [
        ("all", 0.06, 0.95),  # first score 7.3 %, 100 % within 25 %, +3.9 %; with the fp32 stream 4.9 %
        # first score 11.5 %, 96 %, +11.5 % (fewer adapter bytes than q, k, v, o); with the stream 7.9 %
        ("qv", 0.09, 0.9),
        ("qkvo", 0.09, 0.95),  # what the runs targeted (an extra value beside the contract's two)
    ],
)
def test_first_scores_through_estimate_batch_with_contract_columns(
    cli, home, tmp_path: Path, lora_targets: str, worst_median: float, least_within: float
) -> None:
    batch = tmp_path / "fms.csv"
    measured = np.array(_contract_csv(batch, lora_targets))
    answers = batch_answers(cli, "estimate", batch, 23, "--tokens", "1000000000", "--usd-per-gpu-hour", "2")
    median, within = throughput_scores(answers, measured)
    assert median <= 0.15, median  # the fine-tuning target
    assert median <= worst_median and within >= least_within, (median, within)
