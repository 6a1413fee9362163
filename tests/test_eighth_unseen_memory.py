"""Eighth unseen memory source (issue 33): Sebastian Raschka's "PyTorch Performance Tips for Faster
LLM Training" (rasbt/LLMs-from-scratch, a new organisation), scored first with the shipped model,
both through the calibration tooling and the way an acceptance check does (``fit --batch`` on a CSV
with only the contract's columns).

``tests/data/measured_memory_holdout8.csv``: the ``Reserved memory`` lines of
``ch05/10_llm-training-speed/README.md`` @908dd2f71ed39ecc36934b8315f16d21c60cd0d9, the commit that
added the figures together with ``00_orig.py``, ``01_opt_single_gpu.py`` and
``02_opt_multi_gpu_dpp.py`` (read at that commit; the figures are unchanged at the README's later
commits). The book's GPTModel (GPT_CONFIG_124M: 12 layers x 768, 12 heads, untied head, 163.0M
parameters) trained from scratch on packed 1,024-token windows of one book with its own loop (no
autocast, no checkpointing, no accumulation; ``F.cross_entropy`` on the logits in the model's dtype)
on an A100; ``torch.cuda.memory_reserved`` / 1024**3 after an epoch (the pool's high-water mark),
read as GiB. 8 completed runs: the fp32 baseline (from-scratch eager attention with dropout on the
weights, from-scratch LayerNorm and tanh GELU), then the README's cumulative steps 5-10 (pure bf16
via ``model.to(torch.bfloat16)``; PyTorch LayerNorm/GELU; SDPA flash attention; ``torch.compile``;
vocabulary 50,304; batch 32) and the 4-GPU DDP run at batch 32 per GPU; plus 1 out-of-memory run:
section 10 settles at batch 32, "the largest power of 2 supported by the GPU", so batch 64 did not fit.

The card: the README says "A100" only. It is read as the 40 GB A100 because batch 64 (twice the
activations of the 22.5 GiB batch-32 run, about 44 GiB) would have fitted an 80 GB one; the OOM run
needs more than 40 GiB on either card, so that row's claim holds whichever A100 it was.

Left out, with the reason: sections 1-4 (mask built on the fly, TF32, fused AdamW, pinned memory;
26.24 GiB): the model's inputs are those of the baseline (the 0.02 GiB is the registered mask
buffer), so they would count one run four more times; ``Allocated memory`` lines (the current
allocation after the epoch, not a peak).

The rows name the script's own shape in a ``config`` column
(``tests/data/configs/llms-from-scratch-gpt-124m-vocab50257.json`` and ``...-vocab50304.json``,
written from GPT_CONFIG_124M; no GPT-2 in the catalog), which the tooling reads as the contract's
``--config``. Until the fifteenth session the rows carried ``params_b`` 0.163 only and the tooling
read a representative dense shape (8 x 1024, 32k vocabulary, a gated MLP). ``fit --batch`` reads the
script's own shape from a ``config`` column (a GPT-2 config.json written from GPT_CONFIG_124M: the contract's
``--config``) with the contract's other columns, so it assumes what the contract's defaults say: the
hf whole-logits loss upcast to fp32 and batches of varying length (the cached earlier loss region),
neither of which this loop has.

First scores (models/memory_calibration.md, "Eighth unseen source"), model as shipped on main
@f64dd43: through the tooling 21.5 % median |error|, 50 % within 20 %, -21.5 % signed; through
``fit --batch`` 78.9 % / 12 % (+78.9 %). With the seven earlier unseen sources: 129 runs, 7.9 % / 82 %
(-1.6 %) (the seven alone 121 runs, 7.9 % / 84 %). No completed run is judged ``does_not_fit`` at
margin 0 on the 40 GB A100 either way. The OOM run (batch 64): ``fit --batch`` judges it
``does_not_fit`` (58.5 GB), the tooling's full inputs (16-bit loss, packed, compile) put it at 35.4 GB
on a 42.9 GB card: judged to fit (``OOM_JUDGED_TO_FIT_BY_TOOLING``, with the reason). The guards
sit just above these figures, so a change that makes the model worse on this source fails here.

Fifteenth session: the tooling reads the book's shape (above) and torch.compile keeps a non-gated
MLP's activation output, which fc2's weight gradient reads (memory_calibration.md, "torch.compile
keeps what a matmul reads"): 7.5 % / 75 % (-2.1 %); the OOM run's device figure is 44.4 GB on the
42.9 GB card: judged does_not_fit. That rule was found reading this source's compile rows, so they
are no out-of-sample evidence for it; it comes from the partitioner's code and a probe of the
book's block, and no constant moved.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
from batch_scoring import batch_answers, completed_peaks, oom_runs_judged_to_fit

from conftest import TEST_DATA
from gpuprice.models.calibration.memory_fit import prepared, select_rows, stats
from gpuprice.models.calibration.memory_report import HOLDOUTS
from gpuprice.models.memory import estimate_memory

HOLDOUT8_CSV = TEST_DATA / "measured_memory_holdout8.csv"
COMMIT = re.compile(r"@[0-9a-f]{40}\b")
REPO = (
    "rasbt/LLMs-from-scratch ch05/10_llm-training-speed/README.md @908dd2f71ed39ecc36934b8315f16d21c60cd0d9"
)
NAME = "LLMs-from-scratch training-speed tips"
# The out-of-memory runs (by micro-batch) the model judges to fit with the inputs the tooling reads:
# none since the fifteenth session (batch 64: 44.4 GB device on the 42.9 GB A100). Before it, batch 64
# was predicted 35.4 GB on the 42.9 GB A100. The same model under-reads the completed batch-32
# run by 29 % (17.2 vs 24.2 GB, stand-in 32k vocabulary: logits 6.3 GB where the 50,304-token head
# needs about 9.9; torch.compile's activation discount, 3.65 -> 2.36 GB at batch 8, where the measured
# pool grew 5.90 -> 6.19 GiB); doubling the measured batch-32 pool gives about 44 GiB > 40 GiB.
OOM_JUDGED_TO_FIT_BY_TOOLING: set[int] = set()
GPT_CONFIG_124M = {
    "model_type": "gpt2",
    "n_embd": 768,
    "n_layer": 12,
    "n_head": 12,
    "n_positions": 1024,
    "n_inner": None,
    "tie_word_embeddings": False,  # GPTModel's out_head is its own Linear
    "activation_function": "gelu_pytorch_tanh",
}


def _measured_gb(row: dict[str, str]) -> float:
    return float(row["reported_value"]) * 2**30 / 1e9  # the code divides by 1024**3


def test_rows_cite_a_commit_and_parse_as_the_scripts_ran() -> None:
    unseen = select_rows(HOLDOUT8_CSV)
    assert len(unseen.measured) == 8 and len(unseen.oom) == 1
    assert not unseen.excluded and not unseen.boundary
    for m in unseen.measured:
        source = m.row["source_url_or_repo_path"]
        assert source.startswith(REPO) and COMMIT.search(source), source
        setup = m.setup
        assert setup.framework == "hf" and setup.method == "full" and setup.optimizer == "adamw"
        assert setup.seq_len == 1024 and setup.grad_accum == 1 and setup.variable_lengths is False
        assert setup.activation_checkpointing == "none" and setup.memory_metric == "reserved"
        ddp = "DistributedDataParallel" in m.row["notes"]
        assert setup.sharding == "none" and setup.gpus == (4 if ddp else 1)
        assert m.card_gb is not None and 42 < m.card_gb < 43  # the 40 GB A100 (40 GiB)
        if setup.precision == "fp32":
            assert setup.attention == "eager" and setup.loss == "full" and not setup.compile
        else:
            assert setup.precision == "bf16-true" and setup.loss == "full-16bit"
            assert setup.compile == ("torch.compile(model)" in m.row["notes"])
    assert [m.setup.compile for m in unseen.measured] == [False] * 4 + [True] * 4
    # the script's shape from the row's config column, not a stand-in of its size
    for m in unseen.measured:
        arch = m.setup.arch
        assert not arch.representative and not arch.gated_mlp and arch.model_type == "gpt2"
        assert (arch.hidden_size, arch.num_layers, arch.num_heads, arch.tied_embeddings) == (
            768,
            12,
            12,
            False,
        )
        assert arch.vocab_size == (50304 if "vocab 50304" in m.row["model"] else 50257)
    assert [m.setup.attention for m in unseen.measured] == ["eager"] * 3 + ["flash"] * 5
    [(_, row, setup, card)] = unseen.oom
    assert row["source_url_or_repo_path"].startswith(REPO)
    assert setup.micro_batch == 64 and setup.compile and setup.precision == "bf16-true" and 42 < card < 43
    assert HOLDOUTS[NAME] == HOLDOUT8_CSV
    assert list(HOLDOUTS)[7] == NAME  # the eighth entry (the ninth, Lambda's guide, came later)


def test_eighth_unseen_source_does_not_regress() -> None:
    # First score (@f64dd43): 21.5 % median |error|, 50 % within 20 %, -21.5 % signed. Under: the fp32
    # baseline -39 % (from-scratch attention keeps the dropout output and mask beside the fp32
    # softmax, from-scratch LayerNorm/GELU keep their intermediates), the torch.compile rows -20 to
    # -29 % (compile's activation discount; the stand-in's 32k vocabulary). Over: the bf16 step 6
    # +16 % (the HF eager path's fp32 softmax copy the book's bf16 softmax does not make).
    # models/memory_calibration.md, "Eighth unseen source". Since the saved-tensor count and its
    # refit (activation factor 1.12 -> 1.02, the thirteenth session): 22.8 % / 38 % (-22.8 %): the
    # book's own GPT code keeps more than transformers' blocks, which the factor fitted to litgpt's
    # tables had partly covered. A regression on this source, accepted for the count every framework
    # agrees on (memory_calibration.md, "Counted from what autograd saves").
    # Fifteenth session (the book's shape from the config column; compile keeps act(fc1)): 7.5 % /
    # 75 % (-2.1 %); with the shape alone 14.7 % / 75 % (-12.6 %); since torch's LayerNorm keeps no
    # copy of its own, 4.5 % / 75 % (-2.2 %). Still under: the fp32 baseline -34 %. Over: the bf16
    # step 6 +21 % (the from-scratch attention's dropout and softmax, read as transformers' eager).
    unseen = select_rows(HOLDOUT8_CSV)
    predicted = prepared(unseen.measured).per_gpu_gb()
    measured = np.array([m.gb for m in unseen.measured])
    median, within = stats(predicted, measured)
    assert median <= 5.0 and within >= 75.0, (median, within)
    assert abs(float(np.median(predicted / measured - 1))) <= 0.03
    # every run completed on its A100: none may be judged does_not_fit at margin 0
    for m in unseen.measured:
        estimate = estimate_memory(m.setup.model_copy(update={"margin": 0.0}), card_gb=m.card_gb)
        assert m.card_gb is not None and estimate.verdict(m.card_gb).verdict != "does_not_fit", m.row
    # the out-of-memory run: judged to fit with the tooling's inputs (named above, not hidden)
    judged_to_fit = set()
    for _, _, setup, card in unseen.oom:
        estimate = estimate_memory(setup.model_copy(update={"margin": 0.0}), card_gb=card)
        if estimate.verdict(card).verdict != "does_not_fit":
            judged_to_fit.add(setup.micro_batch)
    assert judged_to_fit == OOM_JUDGED_TO_FIT_BY_TOOLING


def test_every_unseen_source_together_with_the_eighth() -> None:
    # The eight unseen sources (HOLDOUTS): 129 runs, 7.9 % / 82 % (-1.6 %) at this source's first
    # score (@f64dd43); the seven earlier ones alone: 121 runs, 7.9 % / 84 % (-0.8 %).
    # The target is <= 12 % / >= 65 %. With the ninth (Lambda's distributed training guide,
    # tests/test_ninth_unseen_memory.py): 133 runs, 8.8 % / 81 % (-1.0 %) at its first score.
    # the first eight entries of HOLDOUTS (the ninth came later)
    rows = [m for path in list(HOLDOUTS.values())[:8] for m in select_rows(path).measured]
    assert len(rows) == 130  # 129 before gpjt's expandable-segments run at micro-batch 13
    predicted = prepared(rows).per_gpu_gb()
    median, within = stats(predicted, np.array([m.gb for m in rows]))
    assert median <= 12.0 and within >= 65.0, (median, within)
    assert median <= 8.2 and within >= 82.0, (median, within)


def _contract_memory_csv(path: Path) -> list[dict[str, str]]:
    """The holdout's runs as an acceptance check writes them: only the contract's `fit` options as
    columns (the script's shape as a `config` column; no loss-kernel or packing column), on the
    catalog's 40 GB A100 at margin 0."""
    for vocab in (50257, 50304):
        (path.parent / f"gpt_{vocab}.json").write_text(json.dumps({**GPT_CONFIG_124M, "vocab_size": vocab}))
    with HOLDOUT8_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["config", "method", "optimizer", "precision", "seq_len", "micro_batch", "grad_checkpointing"]
            + ["framework", "compile", "memory_metric", "attention", "margin", "gpus", "sharding", "gpu"]
        )
        for row in rows:
            vocab = 50304 if "vocab 50304" in row["model"] else 50257
            precision = "fp32" if row["precision"].startswith("fp32") else "bf16-true"
            compiled = "torch.compile(model)" in row["notes"]
            writer.writerow(
                [f"gpt_{vocab}.json", "full", "adamw", precision, row["seq_len"], row["micro_batch"], "false"]
                + ["hf", str(compiled).lower(), "reserved", row["attention"], "0", row["num_gpus"], "none"]
                + ["a100-40gb"]
            )
    return rows


def test_eighth_source_through_fit_batch_does_not_regress(cli, home, tmp_path: Path) -> None:
    # Through the contract's columns: 78.9 % / 12 % (+78.9 %) at the first score. The contract has
    # no loss or packing column: every bf16 run is read with the hf loss (16-bit logits, fp32 copy
    # and fp32 gradient: 4.9 GB at batch 8 where the loop's 16-bit cross-entropy keeps about 2.5) and
    # the reserved pool with one cached earlier loss region (5.2-12.1 GB) that packed 1,024-token
    # windows never leave. The device figure excludes that cache, so no completed run is judged
    # does_not_fit on the 40 GB A100; the OOM run (batch 64, 58.5 GB) is judged does_not_fit.
    batch = tmp_path / "memory.csv"
    rows = _contract_memory_csv(batch)
    answers = batch_answers(cli, "fit", batch, 9)
    done, predicted, measured = completed_peaks(rows, answers, _measured_gb)
    median, within = stats(predicted, measured)
    assert len(done) == 8 and median <= 80.0 and within >= 12.0, (median, within)
    assert abs(float(np.median(predicted / measured - 1))) <= 0.80
    assert all(a["gpu"] == "a100-40gb" and a["verdict"] != "does_not_fit" for _, a in done)
    assert oom_runs_judged_to_fit(rows, answers, lambda r: int(r["micro_batch"])) == set()
