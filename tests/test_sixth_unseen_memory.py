"""Sixth unseen memory source (issue 33): ColossalChat's SFT benchmark (hpcaitech/ColossalAI), scored
first with the shipped model, both through the calibration tooling and the way an acceptance check
does (``fit --batch`` on a CSV with only the contract's columns).

``tests/data/measured_memory_holdout6.csv``: the SFT list of the "Hardware Requirements" section of
``applications/ColossalChat/examples/README.md`` @d888c3787c38e6cd3a00193a1cac4939dd56a377, the commit
that added the figures together with ``benchmarks/benchmark_sft.py`` (read with ``benchmark_sft.sh``,
``dummy_dataset.py``, ``coati/models/lora.py``, ``coati/trainer/sft.py`` and ColossalChat's
``requirements.txt`` at that commit). Llama-2-7b-hf in bf16 with FlashAttention-2 and (reentrant)
gradient checkpointing, ColossalAI's Booster with ``LowLevelZeroPlugin(stage=2, precision="bf16")``
(bf16 weights and gradients, fp32 master and HybridAdam states in ZeRO-2 partitions) over 2 or 4
H800 80GB, dummy data of 2,048 tokens per sample (one shape every step), no gradient accumulation;
the figure is the script's last print, ``torch.cuda.max_memory_allocated()`` of the master process
in MiB. 5 runs, all completed: full fine-tuning at micro-batch 4 (2 GPUs), 8 and 16 (4 GPUs), and
coati LoRA (every ``nn.Linear``, r=8 and r=32) at micro-batch 8 on 4 GPUs. None ran out of memory.

Left out, with the reason: the two ``zero2_cpu`` runs (``LowLevelZeroPlugin(cpu_offload=True)``
moves the gradient partitions, fp32 master and optimizer states to the CPU and keeps the full bf16
weights on every GPU: ZeRO-2 with a CPU optimizer, which no ``--sharding`` value says; the tooling's
``offload`` tier is ZeRO-3 with parameter offload and would read them 34-66 % under); the DPO,
SimPO, ORPO and KTO lists (preference losses over chosen and rejected sequences, DPO with a
reference model: no CLI input); the PPO table (tensor parallelism, not modelled).

First scores (models/memory_calibration.md, "Sixth unseen source"), with the model as shipped on
main @456de0e when the rows were written: 9.1 % median |error|, 100 % within 20 %, +1.8 % signed;
the same through ``fit --batch``. Full fine-tuning -9.1 % (2 GPUs, micro-batch 4), +1.8 % and
-5.6 % (4 GPUs, 8 and 16); LoRA +18.4 % (r=8) and +18.8 % (r=32). No completed run is judged
``does_not_fit`` at margin 0. With the five earlier unseen sources: 112 runs, 7.7 % / 85 % (-3.8 %);
6.8 % / 89 % (-3 %) once main had gpjt's ``built_before_zero_init`` input (@077f109, landed
meanwhile; this source's own figures are the same).
The guards sit just above these figures, so a change that makes the model worse on this source fails
here.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
from batch_scoring import batch_answers, completed_peaks

from conftest import TEST_DATA
from gpuprice.models.calibration.memory_fit import prepared, select_rows, stats
from gpuprice.models.calibration.memory_report import HOLDOUTS
from gpuprice.models.memory import estimate_memory

HOLDOUT6_CSV = TEST_DATA / "measured_memory_holdout6.csv"
COMMIT = re.compile(r"@[0-9a-f]{40}\b")
REPO = "hpcaitech/ColossalAI applications/ColossalChat/examples/README.md @"
NAME = "ColossalChat SFT benchmark"


def _lora_rank(row: dict[str, str]) -> int:
    """The run's LoRA rank as the README states it ("lora_rank=8")."""
    found = re.search(r"lora_rank=(\d+)", row["notes"])
    assert found, row["notes"][-200:]
    return int(found.group(1))


def _measured_gb(row: dict[str, str]) -> float:
    return float(row["reported_value"]) * 2**30 / 1e9  # reported in GiB (the README's MiB / 1024)


def test_rows_cite_a_commit_and_parse_as_the_script_ran() -> None:
    unseen = select_rows(HOLDOUT6_CSV)
    assert len(unseen.measured) == 5 and not unseen.oom
    assert not unseen.excluded and not unseen.boundary
    for m in unseen.measured:
        source = m.row["source_url_or_repo_path"]
        assert source.startswith(REPO) and COMMIT.search(source), source
    # what benchmark_sft.py did, read at that commit: ColossalAI ZeRO-2 bf16 (fp32 master and
    # HybridAdam states partitioned), FlashAttention-2, checkpointing, dummy data of one shape, one
    # micro-batch per step, HF's LlamaForCausalLM loss, max_memory_allocated
    for m in unseen.measured:
        setup = m.setup
        assert setup.framework == "hf" and setup.sharding == "zero2" and setup.gpus in (2, 4)
        assert setup.precision == "bf16-mixed" and setup.optimizer == "adamw" and setup.grad_accum == 1
        assert setup.attention == "flash" and setup.memory_metric == "allocated"
        assert setup.variable_lengths is False and setup.activation_checkpointing == "full"
        assert setup.seq_len == 2048 and m.card_gb is not None and m.card_gb > 85
        if setup.method == "lora":
            # coati's convert_to_lora_module wraps every nn.Linear of the blocks (and lm_head)
            assert setup.lora_targets == "all" and setup.lora_rank == _lora_rank(m.row)
        else:
            assert setup.method == "full"
    assert sorted(m.setup.method for m in unseen.measured) == ["full", "full", "full", "lora", "lora"]
    assert HOLDOUTS[NAME] == HOLDOUT6_CSV
    assert list(HOLDOUTS)[5] == NAME  # the sixth entry (the seventh, axolotl's examples, came later)


def test_sixth_unseen_source_does_not_regress() -> None:
    # First score (@456de0e): 9.1 % median |error|, 100 % within 20 %, +1.8 % signed. Full fine-tuning
    # -9.1 / +1.8 / -5.6 %: on 2 GPUs the step holds each gradient partition twice (ColossalAI 0.4.0's
    # LowLevelZeroOptimizer.step casts the bf16 partition to an fp32 copy before HybridAdam runs) and
    # the trainer keeps `outputs` (fp32 logits) alive through backward; LoRA +18 / +19 %: without
    # enable_input_require_grads the reentrant checkpoint runs the frozen-input blocks without a
    # graph, so backward never reaches them (no CLI input says so).
    unseen = select_rows(HOLDOUT6_CSV)
    predicted = prepared(unseen.measured).per_gpu_gb()
    measured = np.array([m.gb for m in unseen.measured])
    median, within = stats(predicted, measured)
    assert median <= 9.5 and within >= 100.0, (median, within)
    assert abs(float(np.median(predicted / measured - 1))) <= 0.03
    errors = predicted / measured - 1
    assert float(np.max(np.abs(errors))) <= 0.20, errors
    # every run completed on its 80 GB H800: none may be judged does_not_fit at margin 0
    for m in unseen.measured:
        estimate = estimate_memory(m.setup.model_copy(update={"margin": 0.0}), card_gb=m.card_gb)
        assert m.card_gb is not None and estimate.verdict(m.card_gb).verdict != "does_not_fit", m.row


def test_every_unseen_source_together_with_the_sixth() -> None:
    # The six unseen sources (HOLDOUTS): 112 runs, 7.7 % / 85 % (-3.8 %) at this source's first score
    # (@456de0e; the five earlier ones alone: 107 runs, 7.5 % / 84 %); 6.8 % / 89 % (-3 %) on main
    # @b1d416d, after gpjt's built_before_zero_init input (@077f109; this source's figures unchanged);
    # 6.9 % / 88 % (-1.3 %) with FSDP's retention of recomputed inputs and sharded QLoRA's 16-bit rest
    # (fms's FSDP QLoRA runs read 2-5 GB high now, memory_calibration.md).
    # The target is <= 12 % / >= 65 %.
    # the first six entries of HOLDOUTS (the seventh: tests/test_seventh_unseen_memory.py)
    rows = [m for path in list(HOLDOUTS.values())[:6] for m in select_rows(path).measured]
    assert len(rows) == 113  # 112 before gpjt's expandable-segments run at micro-batch 13
    predicted = prepared(rows).per_gpu_gb()
    median, within = stats(predicted, np.array([m.gb for m in rows]))
    assert median <= 12.0 and within >= 65.0, (median, within)
    assert median <= 7.2 and within >= 88.0, (median, within)


def _contract_memory_csv(path: Path) -> list[dict[str, str]]:
    """The holdout's runs as an acceptance check writes them: only `fit` options as columns."""
    with HOLDOUT6_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["model", "method", "optimizer", "precision", "seq_len", "micro_batch", "grad_checkpointing"]
            + ["framework", "compile", "memory_metric", "attention", "margin", "lora_rank", "lora_targets"]
            + ["gpus", "sharding", "gpu"]
        )
        for row in rows:
            lora = row["method"] == "lora"
            rank = str(_lora_rank(row)) if lora else "16"
            writer.writerow(
                [row["model"], row["method"], "adamw", "bf16-mixed", row["seq_len"], row["micro_batch"]]
                + ["true", "hf", "false", "allocated", "flash", "0", rank, "all"]
                + [row["num_gpus"], "zero2", "h800"]
            )
    return rows


def test_sixth_source_through_fit_batch_does_not_regress(cli, home, tmp_path: Path) -> None:
    # Through the contract's columns the tooling's figures: 9.1 % / 100 % (+1.8 %) at the first
    # score; at margin 0 no completed run does_not_fit on the H800 (85.9 GB; device 73.1 GB for
    # full fine-tuning on 2 GPUs at micro-batch 4, the largest). No run of the source ran out of
    # memory.
    batch = tmp_path / "memory.csv"
    rows = _contract_memory_csv(batch)
    answers = batch_answers(cli, "fit", batch, 5)
    done, predicted, measured = completed_peaks(rows, answers, _measured_gb)
    median, within = stats(predicted, measured)
    assert len(done) == 5 and median <= 9.5 and within >= 100.0, (median, within)
    assert abs(float(np.median(predicted / measured - 1))) <= 0.03
    assert all(a["total_params"] == 6_738_415_616 for _, a in done)
    assert not any(a["verdict"] == "does_not_fit" for _, a in done)
