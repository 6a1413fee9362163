"""NeMo Automodel's LoRA benchmark table on DGX-H100, a throughput source the model was never fitted
to (issue 33): first scores with the shipped model, before anything was changed for them.

NVIDIA-NeMo/Automodel ``docs/performance-summary.mdx`` @36044ad3d139363fb6c73c24af2e7c6b65ec52f6,
"Fine-Tuning (LoRA) Performance, System: DGX-H100, Precision: BF16": all six rows, appended to
``tests/data/throughput_holdout.csv``. Automodel is NVIDIA's PyTorch-native trainer (Hugging Face
checkpoints, FSDP2, its own LoRA), not the Megatron-based NeMo whose performance summary is a
calibration source. Every run is LoRA dim 16 on every linear (``match_all_linear``) with the
fused Triton kernel, mock data of full 4,096-token sequences (no padding), micro-batch 2, global
batch 32, bf16 weights with adapters created in the base weight's bf16 (no PEFT fp32 adapters),
torch AdamW, FlashAttention-2: Llama-3.1-8B and Qwen2.5-7B on one H100 (no checkpointing, no
compile; recipes @507bfb75, where the rows were added), Llama-3.3-70B and Qwen2.5-32B on 8 and 16
H100 as FSDP2 over 4 / 8 x tensor parallel 2 (checkpointing, torch.compile, FSDP2 prefetch; recipes
@2013a4dd, where those rows were re-measured). tokens/s per GPU is the table's, = 32 x 4,096 /
time per global step / GPUs (models/mfu_calibration.md, "NeMo Automodel's LoRA benchmark").

Left out: the table's earlier pipeline-parallel rows (Llama 70B TP 2 x PP 4, Qwen 32B PP 4,
interleaved 1F1B at pipeline micro-batch 1, @822effa1 and before): the same models on the same GPU
counts, superseded in the table by the rows above; the model has no pipeline-bubble input, and a
superseded layout would count the same model/GPU pair twice. The pre-training and MoE rows are not
fine-tuning.

First scores (main @456de0e): holdout tooling 13.6 % median |error|, 100 % within 25 %, +13.5 %
signed (one GPU -10.2 / -12.7 %; tensor-parallel runs +12.3 .. +24.8 %, read as ``model_parallel``,
which the model charges no communication); through ``estimate --batch`` with only the contract's
columns (TP not expressible: ``fsdp`` over all GPUs) 20.3 % / 67 % (-20.3 %) with ``bf16-true`` (the
product charges hf LoRA under bf16-true PEFT's fp32 adapters, which Automodel does not have: one
GPU -35 / -38 %), 11.4 % / 100 % (+8.2 %) with ``bf16-mixed``; all unseen fine-tuning runs 11.6 % /
75 % within 25 % over 99 (9.5 % / 73 % over the 93 before). The guards sit just above those figures.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest
from batch_scoring import batch_answers, throughput_scores

from conftest import TEST_DATA
from gpuprice.models.calibration.lora_notes import stated_lora_targets
from gpuprice.models.calibration.throughput_holdout import Scored, summarize
from gpuprice.models.calibration.throughput_rows import (
    benchmark_case,
    load_benchmark_rows,
    row_number,
    source_family,
)

HOLDOUT_CSV = TEST_DATA / "throughput_holdout.csv"
AUTOMODEL = "NVIDIA-NeMo/Automodel"
COMMIT = "36044ad3d139363fb6c73c24af2e7c6b65ec52f6"
# where the one-GPU rows were added / the tensor-parallel rows re-measured, with their recipes
RECIPE_COMMITS = {"507bfb7514f0060b45fda40da97b050425ec11c8", "2013a4dd6e932c4e4f48ca6b4a3fc295cdd64e33"}
GLOBAL_TOKENS = 32 * 4096  # GBS 32 sequences of 4,096 mock tokens per optimizer step


def _rows() -> list[dict[str, object]]:
    return [r for r in load_benchmark_rows(str(HOLDOUT_CSV)) if source_family(r) == AUTOMODEL]


def _stated(row: dict[str, object], name: str) -> float:
    match = re.search(rf"{name} ([0-9.]+)", str(row["reported"]))
    assert match, (name, row["reported"])
    return float(match.group(1))


def test_rows_cite_the_table_row_at_its_commit() -> None:
    rows = _rows()
    assert len(rows) == 6 and {str(r["workload"]) for r in rows} == {"finetune_lora"}
    labels = set()
    for row in rows:
        source = str(row["source"])
        prefix = f"docs/performance-summary.mdx @{COMMIT} section: Fine-Tuning (LoRA) Performance, "
        assert prefix in source, source
        labels.add(source.split(", row ")[1])
        # the recipe the row ran, at the commit its numbers were written
        recipe = re.search(r"recipe examples/llm_finetune/\S+\.yaml @([0-9a-f]{40})\b", str(row["notes"]))
        assert recipe and recipe.group(1) in RECIPE_COMMITS, row["notes"]
        assert str(row["reported"]).startswith(source.split(", row ")[1] + ":")
    assert len(labels) == 6  # one row each, none counted twice


def test_tokens_per_second_is_the_global_batch_over_the_step_time() -> None:
    # benchmark.py times each global step (all micro-batches and the optimizer step) after 5
    # warm-up steps; the table's Tokens/sec/GPU = GBS x seq_len / step time / GPUs (the step time is
    # printed to 0.01 s, hence the tolerance)
    for row in _rows():
        gpus = row_number(row, "gpu_count")
        assert gpus in (1, 8, 16) and row_number(row, "seq_len") == 4096
        measured = row_number(row, "tokens_per_sec_per_gpu")
        assert measured == _stated(row, "Tokens/sec/GPU")
        step = _stated(row, "Time per Global Step")
        assert GLOBAL_TOKENS / step / gpus == pytest.approx(measured, rel=2e-3), row["source"]
        # GBS 32 = micro-batch 2 x data-parallel ranks (GPUs / TP) x gradient accumulation
        tp = _stated(row, "TP")
        assert _stated(row, "FSDP") == gpus / tp
        assert row_number(row, "micro_batch") == _stated(row, "MBS") == 2
        assert row_number(row, "grad_accum") == _stated(row, "GA")
        assert 2 * (gpus / tp) * _stated(row, "GA") == _stated(row, "GBS") == 32


def test_rows_parse_as_the_runs_ran() -> None:
    for row in _rows():
        case = benchmark_case(row)
        assert case.method == "lora" and case.precision == "bf16-true"
        assert case.profile.slug == "h100-sxm" and case.micro_batch == 2
        # Automodel's LoRA is created in the base weight's bf16: no PEFT fp32-adapter traffic
        assert case.adapter_bytes == 0 and case.stream_bytes == 0
        # FlashAttention-2 on unpadded mock sequences: no padding mask, no fp32 attention
        assert case.masked_heads == 0 and case.score_heads == 0 and not case.fp32_attention
        assert stated_lora_targets(str(row["notes"])) == "all"  # match_all_linear
        if case.gpus == 1:
            assert case.sharding == "none" and not case.checkpointing and not case.compiled
        else:  # FSDP2 x TP 2: the tooling reads tensor parallelism as model_parallel
            assert case.sharding == "model_parallel" and case.checkpointing and case.compiled


@pytest.fixture(scope="module")
def scored(every: list[Scored]) -> list[Scored]:
    return [s for s in every if s.family == AUTOMODEL]


def test_first_scores_through_the_holdout_tooling_do_not_regress(scored: list[Scored]) -> None:
    # 13.6 % median |error|, 100 % within 25 %, +13.5 % signed; one GPU -10.2 % (Llama-3.1-8B),
    # -12.7 % (Qwen2.5-7B); FSDP2 x TP 2 +14.6 / +12.3 % on 8 GPUs, +24.8 / +19.8 % on 16
    summary = summarize(scored)
    assert summary.runs == 6 and not any(s.refitted for s in scored) and all(s.finetune for s in scored)
    assert summary.median_abs <= 0.15  # the fine-tuning target
    assert summary.median_abs <= 0.14 and summary.within >= 1.0
    assert [float(str(r["tokens_per_sec_per_gpu"])) for r in _rows()] == [s.measured for s in scored]
    cases = [benchmark_case(r) for r in _rows()]
    one = [s.error for s, c in zip(scored, cases, strict=True) if c.gpus == 1]
    tp = [s.error for s, c in zip(scored, cases, strict=True) if c.gpus > 1]
    assert len(one) == 2 and all(-0.14 <= e <= -0.09 for e in one)  # the model too slow
    assert len(tp) == 4 and all(0.11 <= e <= 0.26 for e in tp)  # too fast: no TP/FSDP traffic charged


def _contract_csv(path: Path, precision: str) -> list[float]:
    """The runs as an acceptance check writes them: only the contract's `estimate` columns. The
    contract has no tensor parallelism: the multi-GPU runs go in as FSDP over all their GPUs."""
    measured: list[float] = []
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["model", "method", "optimizer", "precision", "seq_len", "micro_batch", "grad_checkpointing"]
            + ["framework", "attention", "compile", "lora_rank", "lora_targets", "gpus", "sharding", "gpu"]
        )
        for r in _rows():
            gpus = int(row_number(r, "gpu_count") or 1)
            several = gpus > 1
            writer.writerow(
                [r["model"], "lora", "adamw", precision, r["seq_len"], r["micro_batch"]]
                + [str(r["act_ckpt"]).lower(), "hf", "flash", "true" if several else "false", 16, "all"]
                + [gpus, "fsdp" if several else "none", "h100-sxm"]
            )
            measured.append(float(str(r["tokens_per_sec_per_gpu"])))
    return measured


@pytest.mark.parametrize(
    ("precision", "worst_median", "least_within"),
    [
        # what ran (bf16 weights and AdamW, no autocast): 20.3 %, 67 %, -20.3 %; hf LoRA under
        # bf16-true is charged PEFT's fp32 adapters, which Automodel's bf16 LoRA does not have (one
        # GPU -35.0 / -38.1 %)
        ("bf16-true", 0.21, 0.65),
        # without that term: 11.4 %, 100 %, +8.2 % (one GPU as the tooling, -10.2 / -12.7 %)
        ("bf16-mixed", 0.12, 1.0),
    ],
)
def test_first_scores_through_estimate_batch_with_contract_columns(
    cli, home, tmp_path: Path, precision: str, worst_median: float, least_within: float
) -> None:
    batch = tmp_path / "automodel.csv"
    measured = np.array(_contract_csv(batch, precision))
    answers = batch_answers(cli, "estimate", batch, 6, "--tokens", "1000000000", "--usd-per-gpu-hour", "2")
    median, within = throughput_scores(answers, measured)
    assert median <= worst_median and within >= least_within, (median, within)


def test_all_unseen_fine_tuning_runs_with_these(every: list[Scored]) -> None:
    # 11.6 % / 75 % within 25 % over 99 unseen fine-tuning runs (9.5 % / 73 % over the 93 before:
    # the six land between 10 % and 25 %, where the 93 have a gap from 9.5 % to 11.0 %)
    from gpuprice.models.calibration.throughput_band_table import EXCLUDED_FAMILIES

    finetune = [s for s in every if s.finetune and s.family not in EXCLUDED_FAMILIES]
    summary = summarize(finetune)
    assert summary.runs >= 99 and AUTOMODEL in {s.family for s in finetune}
    assert summary.median_abs <= 0.15  # the target
    assert summary.median_abs <= 0.12 and summary.within >= 0.7
