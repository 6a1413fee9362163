"""Fifth unseen memory source (issue 33): Giles Thomas's measured memory sweeps of full fine-tuning
under HF Trainer + DeepSpeed ZeRO-3 (gpjt/fine-tune-2024-04), scored first with the shipped model,
both through the calibration tooling and the way an acceptance check does (``fit --batch`` on a
CSV with only the contract's columns).

``tests/data/measured_memory_holdout5.csv``: Qwen1.5-0.5B on one 24 GiB card and
Meta-Llama-3-8B over 8 A100 80GB, fp16 (DeepSpeed fp16: fp32 master and AdamW states), every
sample padded to ``max_length``, sdpa attention, gradient checkpointing off or on;
``torch.cuda.memory_stats()["active_bytes.all.peak"]`` per GPU (read as allocated; the 8B rows
take the largest of the 8 GPUs). 27 runs completed, 4 ran out of memory (each batch-size sweep's
stop). Left out: the runs with DeepSpeed optimizer offload (ZeRO-2 + CPU Adam: no CLI input),
with Liger kernels, and the PYTORCH_CUDA_ALLOC_CONF=expandable_segments repeats (the allocated
peak is the same; the setting is not a CLI input), except the one batch size the default allocator
could not run: Llama-3-8B at micro-batch 13 with recomputation completed with expandable segments
(added in the seventeenth session: 28 completed runs).

First scores (models/memory_calibration.md, "Fifth unseen source"), with the model as shipped on
main @190fb5d when the rows were written: 24.6 % median |error|, 48 % within 20 %, -24.6 % signed,
every run under; the same through ``fit --batch``; no completed run judged ``does_not_fit`` at
margin 0; none of the 4 out-of-memory runs predicted not to fit. With the four earlier unseen
sources: 107 runs, 10.3 % / 76 % (-8 %). Qwen1.5-0.5B is not in the catalog, so those rows are
scored on a dense shape of its size (32k vocabulary); given its config.json through ``fit --batch``
(its 151,936-token vocabulary) the source reads 11.3 % / 81 % (-11.3 %), and one OOM run is then
predicted not to fit.

Then the memory model gained DeepSpeed ZeRO-3's own state, read in deepspeed v0.14.2's stage3.py after
these misses were seen (persistent 16-bit gradient partitions, the step's sub-group copy, the gradient
bucket also on one GPU; constants recalibrated on the calibration rows only), so this source is no
longer out-of-sample: 8.8 % / 70 % (-8.8 %) through the tooling and ``fit --batch`` with params_b;
8.2 % / 81 % (-6.2 %) with Qwen's config.json, where both Qwen out-of-memory runs are then predicted
not to fit. The five sources together: 7.5 % / 81 % (-5 %). The guards sit just above these
figures, so a change that makes the model worse on this source fails here. With Qwen1.5-0.5B in
the catalog (its config.json facts) the tooling and ``fit --batch --model`` read its real shape too:
8.2 % / 81 % (-6 %), both Qwen out-of-memory runs predicted not to fit; five sources 7.5 % / 84 %.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from batch_scoring import batch_answers, completed_peaks, oom_runs_judged_to_fit

from conftest import TEST_DATA
from gpuprice.models.calibration.memory_fit import Measured, prepared, select_rows, stats
from gpuprice.models.calibration.memory_report import HOLDOUTS
from gpuprice.models.memory import estimate_memory

HOLDOUT5_CSV = TEST_DATA / "measured_memory_holdout5.csv"
COMMIT = re.compile(r"@[0-9a-f]{40}\b")
REPO = "gpjt/fine-tune-2024-04 "
# Both models (Meta-Llama-3-8B and this one) are catalog ids. Qwen1.5-0.5B was not at the first score (its rows give params_b, and
# were read as a representative 32k-vocabulary dense shape of that size); its config.json facts
# were added to the catalog afterwards, so the tooling and `--model` read its real shape.
QWEN = "Qwen/Qwen1.5-0.5B"
# Out-of-memory runs the model predicted to fit at the first score (@190fb5d): all four, each the
# first batch size that failed in its sweep (model, gpus, micro-batch, checkpointing). It may
# shrink; it may never grow.
OOM_PREDICTED_TO_FIT = {
    ("Qwen/Qwen1.5-0.5B", "1", "3", "False"),
    ("Qwen/Qwen1.5-0.5B", "1", "4", "True"),
    ("meta-llama/Meta-Llama-3-8B", "8", "3", "False"),
    ("meta-llama/Meta-Llama-3-8B", "8", "13", "True"),
}


def _measured_gb(row: dict[str, str]) -> float:
    return float(row["reported_value"]) * 2**30 / 1e9  # reported in GiB


def _key(row: dict[str, str]) -> tuple[str, str, str, str]:
    return (row["model"], row["num_gpus"], row["micro_batch"], row["grad_checkpointing"])


def test_rows_cite_a_commit_and_parse_as_the_scripts_ran() -> None:
    unseen = select_rows(HOLDOUT5_CSV)
    assert len(unseen.measured) == 28 and len(unseen.oom) == 4
    assert not unseen.excluded and not unseen.boundary
    rows = [m.row for m in unseen.measured] + [row for _, row, _, _ in unseen.oom]
    for row in rows:
        source = row["source_url_or_repo_path"]
        assert source.startswith(REPO) and COMMIT.search(source), source
    # what the scripts did, read from them at each results file's commit: HF Trainer + DeepSpeed
    # ZeRO-3 fp16 (fp32 master and AdamW states), padded to max_length, default sdpa attention,
    # one micro-batch per step, checkpointing as the row says, memory active = allocated
    for m in unseen.measured:
        setup = m.setup
        assert setup.framework == "hf" and setup.sharding == "zero3" and setup.method == "full"
        assert setup.precision == "bf16-mixed" and setup.optimizer == "adamw" and setup.grad_accum == 1
        assert setup.attention == "sdpa" and setup.memory_metric == "allocated"
        assert setup.variable_lengths is False and setup.gpus in (1, 8)
        checkpointing = "full" if m.row["grad_checkpointing"] == "True" else "none"
        assert setup.activation_checkpointing == checkpointing
    assert HOLDOUTS["gpjt fine-tune-2024-04"] == HOLDOUT5_CSV
    assert list(HOLDOUTS)[4] == "gpjt fine-tune-2024-04"  # the fifth entry (the sixth came later)


def test_fifth_unseen_source_does_not_regress() -> None:
    # First score (@190fb5d): 24.6 % median |error|, 48 % within 20 %, -24.6 % signed, all 27 runs
    # under. Llama-3-8B with checkpointing -8 to -18 % (a constant ~5 GB: DeepSpeed's persistent
    # 16-bit gradient partitions and its reduce bucket, not counted); without checkpointing -14 to
    # -42 % (torch's linear keeps each gathered 16-bit weight alive until backward: ZeRO-3's
    # memory-efficient linear is only patched inside zero.Init, which these scripts never enter);
    # Qwen1.5-0.5B -25 to -54 % (scored as a 32k-vocabulary dense shape of its size: its
    # 151,936-token vocabulary's fp32 loss tensors are missing, as is the same DeepSpeed state).
    # With DeepSpeed ZeRO-3's state counted: 8.8 % / 70 % (-8.8 %); Llama-3-8B with checkpointing
    # -5 to -10 %, without -11 to -35 % (the retained weights, not an input then). With the
    # retained weights an input (built_before_zero_init, read from the notes, which state the
    # scripts' order): 6.7 % / 100 % (-1.0 %); without checkpointing -3 to +8 %.
    unseen = select_rows(HOLDOUT5_CSV)
    predicted = prepared(unseen.measured).per_gpu_gb()
    measured = np.array([m.gb for m in unseen.measured])
    median, within = stats(predicted, measured)
    # Since the saved-tensor count and its refit: 6.8 % / 100 % (-3.6 %); the activation factor
    # 1.12 -> 1.02 on a count that lost 2 h a layer (the norms' inputs), the context 2.0 -> 1.5 GB.
    assert median <= 7.2 and within >= 96.0, (median, within)
    assert float(np.median(predicted / measured - 1)) >= -0.04
    assert all(m.setup.built_before_zero_init for m in unseen.measured)
    # every run completed on its card: none may be judged does_not_fit at margin 0
    for m in unseen.measured:
        estimate = estimate_memory(m.setup.model_copy(update={"margin": 0.0}), card_gb=m.card_gb)
        assert m.card_gb is not None and estimate.verdict(m.card_gb).verdict != "does_not_fit", m.row
    # out-of-memory runs: at the first score none was predicted not to fit; the tooling reads
    # "no zero.Init" from the notes (built_before_zero_init), so Llama-3-8B's micro-batch 3 without
    # checkpointing is now does_not_fit (97.4 GB device); micro-batch 13 with it (fragmentation:
    # reserved 1.20 x allocated without expandable segments) still "fits"
    fitting = set()
    for _, row, setup, capacity in unseen.oom:
        estimate = estimate_memory(setup.model_copy(update={"margin": 0.0}), card_gb=capacity)
        if estimate.verdict(capacity).verdict != "does_not_fit":
            fitting.add(_key(row))
    assert fitting <= {("meta-llama/Meta-Llama-3-8B", "8", "13", "True")}, fitting


def test_micro_batch_13_ran_out_only_under_the_default_allocator() -> None:
    # The out-of-memory run the model judges to fit (micro-batch 13 with recomputation) completed in
    # the same script's sweep with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: allocated peak
    # 69595 MiB (72.98 GB), reserved 77012 MiB. Without expandable segments micro-batch 12 already
    # reserved 78068 MiB over 64870 MiB allocated. The tensors fit; the default allocator's
    # fragmentation did not. The contract's inputs (and built_before_zero_init) are the same for
    # both runs, so no answer can be right on both: the model's "fits" is this run's.
    unseen = select_rows(HOLDOUT5_CSV)
    (expandable,) = [m for m in unseen.measured if "with-expandable-segments" in m.source]
    (default,) = [
        s for _, row, s, _ in unseen.oom if _key(row) == ("meta-llama/Meta-Llama-3-8B", "8", "13", "True")
    ]
    assert expandable.setup == default.model_copy(update={"memory_metric": "allocated"})
    assert expandable.gb == pytest.approx(69595 * 2**20 / 1e9)
    predicted = estimate_memory(expandable.setup).per_gpu_gb
    assert -0.10 < predicted / expandable.gb - 1 < 0.0, predicted  # -7.0 %: ZeRO-3's allocated runs low
    card = expandable.card_gb
    assert card is not None
    verdicts = {
        estimate_memory(s.model_copy(update={"margin": 0.0}), card_gb=card).verdict(card).verdict
        for s in (expandable.setup, default)
    }
    assert verdicts == {"fits"}

    # reserved beyond allocated: the default allocator's micro-batch 12 (completed) 13198 MiB, the
    # expandable segments' micro-batch 13 7417 MiB, both near the 80 GiB card's ceiling
    def slack_mib(m: Measured) -> int:
        found = re.search(r"memory active peak (\d+) MiB.*?reserved peak (\d+) MiB", m.row["notes"])
        assert found, m.row["notes"][-200:]
        return int(found[2]) - int(found[1])

    (default_12,) = [
        m
        for m in unseen.measured
        if m.row["micro_batch"] == "12" and m.setup.gpus == 8 and "no-expandable" in m.source
    ]
    assert (slack_mib(default_12), slack_mib(expandable)) == (13198, 7417)


def test_every_unseen_source_together_with_the_fifth() -> None:
    # The five unseen sources (HOLDOUTS): 107 runs, 10.3 % / 76 % (-8 %) at this source's first
    # score (the four earlier ones alone: 6.8 % / 85 %); 7.5 % / 81 % (-5 %) with DeepSpeed
    # ZeRO-3's state counted. The issue's target is <= 12 % / >= 65 %. With the sixth source
    # (ColossalChat's SFT benchmark, tests/test_sixth_unseen_memory.py): 112 runs, 7.7 % / 85 % (-4 %)
    # at its first score (@456de0e), 6.8 % / 89 % (-3 %) with built_before_zero_init (@077f109).
    rows = [m for path in list(HOLDOUTS.values())[:6] for m in select_rows(path).measured]  # 7th: later
    assert len(rows) == 113  # 112 before gpjt's expandable-segments run at micro-batch 13
    predicted = prepared(rows).per_gpu_gb()
    median, within = stats(predicted, np.array([m.gb for m in rows]))
    assert median <= 12.0 and within >= 65.0, (median, within)
    assert median <= 7.2 and within >= 86.0, (median, within)  # 112 runs 6.8 % / 89 % (107: 6.7 % / 89 %)


def _contract_memory_csv(path: Path, qwen_config: str = "") -> list[dict[str, str]]:
    """The holdout's runs as an acceptance check writes them: only `fit` options as columns, the
    models by catalog id, or Qwen1.5-0.5B by the config.json ``qwen_config`` names (beside ``path``)."""
    with HOLDOUT5_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["model", "config", "method", "optimizer", "precision", "seq_len", "micro_batch"]
            + ["grad_checkpointing", "framework", "compile", "memory_metric", "attention", "margin"]
            + ["gpus", "sharding", "gpu"]
        )
        for row in rows:
            by_config = bool(qwen_config) and row["model"] == QWEN
            oom = row["peak_gb_per_gpu"] == "OOM"
            writer.writerow(
                ["" if by_config else row["model"], qwen_config if by_config else "", "full", "adamw"]
                + ["bf16-mixed", row["seq_len"], row["micro_batch"], row["grad_checkpointing"].lower()]
                + ["hf", "false", "device" if oom else "allocated", "sdpa", "0", row["num_gpus"], "zero3"]
                + ["rtx-3090" if row["num_gpus"] == "1" else "a100-80gb-sxm"]
            )
    return rows


def test_fifth_source_through_fit_batch_does_not_regress(cli, home, tmp_path: Path) -> None:
    # Through the contract's columns the tooling's figures (allocated: no variable-length term, so
    # the missing `packed` column costs nothing): 24.6 % / 48 % (-24.6 %) at the first score; at
    # margin 0 no completed run does_not_fit, and all four out-of-memory runs "fit" (Llama-3-8B
    # micro-batch 3 without checkpointing 81.8 GB device on the 85.9 GB card, micro-batch 13 with
    # it 70.2 GB; Qwen1.5-0.5B 17.9 and 12.2 GB on the 25.8 GB card).
    batch = tmp_path / "memory.csv"
    rows = _contract_memory_csv(batch)
    answers = batch_answers(cli, "fit", batch, 32)
    done, predicted, measured = completed_peaks(rows, answers, _measured_gb)
    median, within = stats(predicted, measured)
    assert len(done) == 28 and median <= 8.7 and within >= 81.0, (median, within)  # 8.2 % / 81 % now
    assert float(np.median(predicted / measured - 1)) >= -0.07
    assert not any(a["verdict"] == "does_not_fit" for _, a in done)
    fitting = oom_runs_judged_to_fit(rows, answers, _key)
    assert fitting <= OOM_PREDICTED_TO_FIT, fitting


# Qwen1.5-0.5B's shape as its Hugging Face config.json states it (Qwen/Qwen1.5-0.5B): the fields the
# CLI's --config reads. The catalog did not carry the model at the first score, so only a config
# gave the CLI its 151,936-token vocabulary; it does now, and both paths must agree.
QWEN15_05B_CONFIG = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 1024,
    "intermediate_size": 2816,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "max_position_embeddings": 32768,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-06,
    "torch_dtype": "bfloat16",
}


def test_fifth_source_with_the_real_qwen_shape_through_fit_batch(cli, home, tmp_path: Path) -> None:
    # The same runs with Qwen1.5-0.5B given by its config.json (a `config` column) instead of
    # params_b: 11.3 % / 81 % (-11.3 %) at the first score (@190fb5d); the Qwen rows alone -5 to
    # -19 % (median -9 %) instead of -25 to -54 %: most of the params_b figure's error is the
    # stand-in shape's 32k vocabulary. Out of memory: Qwen micro-batch 3 without checkpointing is
    # now does_not_fit (29.3 GB device on the 25.8 GB card); the other three still "fit".
    (tmp_path / "config.json").write_text(json.dumps(QWEN15_05B_CONFIG))
    batch = tmp_path / "memory.csv"
    rows = _contract_memory_csv(batch, qwen_config="config.json")
    answers = batch_answers(cli, "fit", batch, 32)
    done, predicted, measured = completed_peaks(rows, answers, _measured_gb)
    assert all(a["total_params"] == 463_987_712 for r, a in done if r["model"] == QWEN)
    median, within = stats(predicted, measured)
    assert median <= 8.7 and within >= 81.0, (median, within)  # 11.3 % first, 8.2 % with ZeRO-3's state
    assert not any(a["verdict"] == "does_not_fit" for _, a in done)
    fitting = oom_runs_judged_to_fit(rows, answers, _key)
    # with DeepSpeed ZeRO-3's state counted, both Qwen runs are predicted not to fit
    assert fitting <= {k for k in OOM_PREDICTED_TO_FIT if k[0] != "Qwen/Qwen1.5-0.5B"}, fitting


def test_built_before_zero_init_through_fit_batch(cli, home, tmp_path: Path) -> None:
    # The scripts' order said as a CSV column (fit's --built-before-zero-init): the same figures
    # as the tooling, and the out-of-memory run without checkpointing judged does_not_fit. The
    # contract's columns alone (the test above) keep HF's documented order, where from_pretrained
    # runs under zero.Init and nothing is retained.
    batch = tmp_path / "memory.csv"
    rows = _contract_memory_csv(batch)
    with batch.open(newline="") as fh:
        table = list(csv.reader(fh))
    with batch.open("w", newline="") as fh:
        csv.writer(fh).writerows([[*table[0], "built_before_zero_init"], *([*r, "true"] for r in table[1:])])
    answers = batch_answers(cli, "fit", batch, 32)
    assert all(a["built_before_zero_init"] is True for a in answers)
    done, predicted, measured = completed_peaks(rows, answers, _measured_gb)
    tooling = prepared(select_rows(HOLDOUT5_CSV).measured).per_gpu_gb()
    assert np.allclose(predicted, tooling, atol=0.01)
    median, within = stats(predicted, measured)
    assert median <= 7.2 and within >= 96.0, (median, within)  # 6.7 % / 100 %
    assert not any(a["verdict"] == "does_not_fit" for _, a in done)
    fitting = oom_runs_judged_to_fit(rows, answers, _key)
    assert fitting <= {("meta-llama/Meta-Llama-3-8B", "8", "13", "True")}, fitting


def test_built_before_zero_init_keeps_only_what_a_graph_saved() -> None:
    # DeepSpeed ZeRO-3 over 8 GPUs without recomputation: every linear's 16-bit weight (Llama-3-8B:
    # 8.03e9 - 0.53e9 embedding = 7.5e9 parameters, 15.0 GB) replaces the two units in flight. With
    # recomputation only the head's saved weight view (1.05 GB), within the units in flight already
    # counted. One GPU (views of the partition), FSDP (frees storage by resizing it), ZeRO-2 (no
    # gathering) and the documented order keep nothing more.
    from gpuprice.models.architectures import resolve_model
    from gpuprice.models.memory import TrainingSetup, fit_sweep

    arch = resolve_model("meta-llama/Meta-Llama-3-8B", None, None)
    job = {"arch": arch, "method": "full", "seq_len": 2048, "micro_batch": 1, "gpus": 8, "sharding": "zero3"}

    def weights(**update: object) -> float:
        setup = TrainingSetup.checked(**{**job, **update})
        return estimate_memory(setup).breakdown.weights

    kept = weights(built_before_zero_init=True) - weights()
    head = arch.vocab_size * arch.hidden_size
    linears = 2.0 * (arch.n_params - arch.embedding_params) / 1e9
    # the two units in flight were Llama-3-8B's largest, its embedding (the head's size) twice
    assert kept == pytest.approx(linears - 2 * 2.0 * head / 1e9, abs=1e-6) and kept > 12.0
    # QLoRA keeps the packed 4-bit weights bitsandbytes' MatMul4Bit saves (about a quarter), the
    # 16-bit head whole
    qlora = {"method": "qlora", "activation_checkpointing": "none"}
    kept_4bit = weights(built_before_zero_init=True, **qlora) - weights(**qlora)
    assert 0.2 * kept < kept_4bit < 0.4 * kept, (kept_4bit, kept)
    for update in (
        {"activation_checkpointing": "full"},
        {"gpus": 1},
        {"sharding": "fsdp"},
        {"sharding": "zero2"},
        {"framework": "torchtune", "sharding": "fsdp"},
    ):
        assert weights(built_before_zero_init=True, **update) == weights(**update), update
    # the ranking's sweep tries every strategy on one setup: it must count the same
    setup = TrainingSetup.checked(**{**job, "gpus": 1, "sharding": "none", "built_before_zero_init": True})
    sweep = fit_sweep([setup], {"a100-80gb-sxm": 85.9}, [8], ["zero3"])
    on_eight = estimate_memory(setup.model_copy(update={"gpus": 8, "sharding": "zero3"}), card_gb=85.9)
    assert float(sweep["per_gpu_gb"].iloc[0]) == on_eight.per_gpu_gb


def test_a_rank_job_carries_built_before_zero_init() -> None:
    # `gpuprice rank` JOB options become a Workload, whose setup on each strategy the sweep judges
    from gpuprice.models.workload_jobs import job_workload

    fields = {"model": "meta-llama/Meta-Llama-3-8B", "method": "full", "tokens": "1B"}
    workload = job_workload({**fields, "built_before_zero_init": True})
    assert workload.setup(8, "zero3").built_before_zero_init is True
    assert job_workload(fields).setup(8, "zero3").built_before_zero_init is False
