"""Seventh unseen memory source (issue 33): axolotl's example configs (axolotl-ai-cloud/axolotl, a new
organisation), scored first with the shipped model, both through the calibration tooling and the way
an acceptance check does (``fit --batch`` on a CSV with only the contract's columns).

``tests/data/measured_memory_holdout7.csv``: the "This config uses about N GiB VRAM." line of nine
``examples/<model>/README.md`` files, each read at the commit that added the figure together with its
config (``apertus`` @c51d6b06, ``arcee`` @2974670b, ``devstral`` @8c6a6ea6, ``magistral`` @eac4a61f,
``seed-oss`` @79103b01, ``hunyuan`` @b71482ce, ``mimo`` and ``plano`` @4f5e8a32, ``ministral``
@2b66ee18; full shas in the rows). One template: ``axolotl train <yaml>`` on one GPU, QLoRA (4-bit
NF4 with double quantization), r=32 on every linear, ``sequence_len`` 2048 with sample packing
(bins padded to 2048), micro-batch 2, gradient accumulation 4, 8-bit AdamW (Devstral: ``adamw_torch``),
bf16 autocast, reentrant gradient checkpointing, FlashAttention-2, and Apple's Cut Cross-Entropy
plugin except on Magistral and MiMo. The figure is read as axolotl's ``device_mem_reserved(gib)``
log (``torch.cuda.max_memory_reserved``), the reading examples/gpt-oss/README.md says the maintainers
quote; three READMEs write GB, kept as written. 9 runs, all completed; none names its GPU, so no
verdict can be checked against a card; none ran out of memory.

At the first score none of the nine models was in the catalog: rows and batch runs give ``params_b``
(the size the model's name or README states) and the model read a representative dense shape (32k
vocabulary). Since the catalog's 2025-26 rows (tests/test_catalog_recent.py), the tooling reads
mistralai/Ministral-8B-Instruct-2410 with its own shape (131k vocabulary, 36 layers, 8.02B); the
other eight configs were not found in a pinned public copy and still read the stand-in. ``fit
--batch`` rows carry no model name (only ``params_b``), so that score does not move.

Left out, with the reason: the MoE, hybrid and multimodal examples with the same kind of line
(gpt-oss, qwen3-next, glm4.5/4.7-flash, trinity, granite4, LFM2, kimi-linear, jamba, dbrx,
internvl3_5, smolvlm2, magistral/vision, mistral-small 3.1, gemma4, qwen3.5; ``mistral-small``
carries a vision tower); ``magistral/think`` and ``ministral3`` (Mistral 3 checkpoints with a vision
encoder); ``olmo3`` (its figure's config could not be pinned to one commit in the time given).

First scores (models/memory_calibration.md, "Seventh unseen source"), model as shipped on main
@c7e13b9: through the tooling 21.1 % median |error|, 44 % within 20 %, +18.0 % signed; through
``fit --batch`` with only the contract's columns (no loss kernel, packing or accumulation columns:
the hf default whole fp32 loss) 34.2 % / 33 % (+23.2 %). With the six earlier unseen sources: 121 runs,
7.9 % / 85 % (-0.8 %) (the six alone: 112 runs, 6.9 % / 88 %, -1.3 %). The guards sit just above these figures,
so a change that makes the model worse on this source fails here.
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

HOLDOUT7_CSV = TEST_DATA / "measured_memory_holdout7.csv"
COMMIT = re.compile(r"@[0-9a-f]{40}\b")
REPO = "axolotl-ai-cloud/axolotl examples/"
NAME = "axolotl example configs"
# Cut Cross-Entropy (no logits tensor) on every config but these two (no plugins: the whole fp32 loss)
NO_CCE = {"mistralai/Magistral-Small-2506", "XiaomiMiMo/MiMo-7B-RL"}


def _measured_gb(row: dict[str, str]) -> float:
    value = float(row["reported_value"])
    return value * 2**30 / 1e9 if row["reported_unit"] == "GiB" else value


def test_rows_cite_a_commit_and_parse_as_the_configs_state() -> None:
    unseen = select_rows(HOLDOUT7_CSV)
    assert len(unseen.measured) == 9 and not unseen.oom
    assert not unseen.excluded and not unseen.boundary
    for m in unseen.measured:
        source = m.row["source_url_or_repo_path"]
        assert source.startswith(REPO) and COMMIT.search(source), source
        setup = m.setup
        assert setup.framework == "hf" and setup.sharding == "none" and setup.gpus == 1
        assert setup.method == "qlora" and setup.qlora_double_quant and setup.precision == "bf16-mixed"
        assert setup.lora_rank == 32 and setup.lora_targets == "all"
        assert setup.seq_len == 2048 and setup.micro_batch == 2 and setup.grad_accum == 4
        assert setup.variable_lengths is False and setup.activation_checkpointing == "full"
        assert setup.attention == "flash" and setup.memory_metric == "reserved"
        assert setup.optimizer == ("adamw" if "Devstral" in m.row["model"] else "adamw8bit")
        assert setup.loss == ("full" if m.row["model"] in NO_CCE else "fused")
        assert m.card_gb is None  # no README names the GPU
    assert HOLDOUTS[NAME] == HOLDOUT7_CSV
    assert list(HOLDOUTS)[6] == NAME  # the seventh entry (the eighth, LLMs-from-scratch, came later)


def test_seventh_unseen_source_does_not_regress() -> None:
    # First score (@c7e13b9): 21.1 % median |error|, 44 % within 20 %, +18.0 % signed. Over: the
    # 8-36B CCE runs +18 to +29 % (Devstral's 32-bit AdamW +29 %); under: Hunyuan-0.5B -65 % and
    # MiMo-7B -42 % (a 120k / 152k vocabulary read as 32k; MiMo without CCE keeps whole fp32 logits),
    # AFM-4.5B -13 %. models/memory_calibration.md, "Seventh unseen source".
    # Rescored when the catalog gained Ministral-8B-Instruct-2410's real shape (the eight others
    # still read the stand-in): 22.2 % / 33 % / +18.9 % (before: 21.1 % / 44 % / +18.0 %).
    # Ministral goes from +18.0 % (stand-in, 11.10 GB) to +46.4 % (13.77 GB): the weights term
    # rises from 5.28 to 8.05 GB because its 1.07B of 131k-vocabulary embedding + head are counted
    # in fp32 (memory_features._fp32_rest_bytes: PEFT's prepare_model_for_kbit_training cast for hf
    # QLoRA), 4.3 GB, where the stand-in's 32k vocabulary had 1.0 GB. Whether axolotl keeps that
    # cast is a model question, reported, not tuned here.
    unseen = select_rows(HOLDOUT7_CSV)
    predicted = prepared(unseen.measured).per_gpu_gb()
    measured = np.array([m.gb for m in unseen.measured])
    median, within = stats(predicted, measured)
    assert median <= 23.0 and within >= 33.0, (median, within)
    assert abs(float(np.median(predicted / measured - 1))) <= 0.20


def test_every_unseen_source_together_with_the_seventh() -> None:
    # The seven unseen sources (HOLDOUTS): 121 runs, 7.9 % / 85 % (-0.8 %) at this source's first
    # score (@c7e13b9); the six earlier ones alone: 112 runs, 6.9 % / 88 % (-1.3 %). With
    # Ministral-8B's catalog shape: 7.9 % / 84 % (-0.8 %); the six unchanged.
    # The target is <= 12 % / >= 65 %.
    # the first seven entries of HOLDOUTS (the eighth: tests/test_eighth_unseen_memory.py)
    rows = [m for path in list(HOLDOUTS.values())[:7] for m in select_rows(path).measured]
    assert len(rows) == 122  # 121 before gpjt's expandable-segments run at micro-batch 13
    predicted = prepared(rows).per_gpu_gb()
    median, within = stats(predicted, np.array([m.gb for m in rows]))
    assert median <= 12.0 and within >= 65.0, (median, within)
    assert median <= 8.2 and within >= 84.0, (median, within)


def _contract_memory_csv(path: Path) -> list[dict[str, str]]:
    """The holdout's runs as an acceptance check writes them: only the contract's `fit` options as
    columns (no loss kernel, packing or accumulation: those are options added beyond it)."""
    with HOLDOUT7_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["params_b", "method", "optimizer", "precision", "seq_len", "micro_batch", "grad_checkpointing"]
            + ["framework", "compile", "memory_metric", "attention", "margin", "lora_rank", "lora_targets"]
            + ["gpus", "sharding"]
        )
        for row in rows:
            optimizer = "adamw" if "adamw_torch" in row["method"] else "adamw8bit"
            writer.writerow(
                [row["params_b"], "qlora", optimizer, "bf16-mixed", row["seq_len"], row["micro_batch"]]
                + ["true", "hf", "false", "reserved", "flash", "0", "32", "all"]
                + ["1", "none"]
            )
    return rows


def test_seventh_source_through_fit_batch_does_not_regress(cli, home, tmp_path: Path) -> None:
    # Through the contract's columns: 34.2 % / 33 % (+23.2 %) at the first score; the contract has no
    # loss-kernel column, so every run is read with the hf default (the whole fp32 loss), which the
    # seven Cut Cross-Entropy runs never materialise. No card is named: no verdict to check.
    batch = tmp_path / "memory.csv"
    rows = _contract_memory_csv(batch)
    answers = batch_answers(cli, "fit", batch, 9)
    done, predicted, measured = completed_peaks(rows, answers, _measured_gb)
    median, within = stats(predicted, measured)
    assert len(done) == 9 and median <= 35.0 and within >= 33.0, (median, within)
    # +24.2 % since the saved-tensor count and its refit (+23.2 % before; memory_calibration.md,
    # "Counted from what autograd saves")
    assert abs(float(np.median(predicted / measured - 1))) <= 0.245
