"""Fourth unseen memory source (issue 33): foundation-model-stack/fms-acceleration's A100 80GB
reference benchmark, scored first with the shipped model, both through the calibration tooling and
the way an acceptance check does (``fit --batch`` on a CSV with only the contract's columns).

``tests/data/measured_memory_holdout4.csv``: the plain-HF rows (framework_config ``none``: full
fine-tuning and LoRA; ``baseline-peft-bnb``: QLoRA) of ``scripts/benchmarks/refs/a100_80gb.csv``
@24bdadb2 (fms-hf-tuning 2.5.0 / trl 0.13 / transformers 4.48.1: packed 4,096-token samples,
FlashAttention-2, gradient checkpointing, 1 GPU or FSDP over 2; ``torch.cuda.max_memory_allocated``
of the first process). 23 runs completed, 17 ran out of memory. Left out: the rows with the
project's own kernels and plugins (``foak-*``, ``accelerated-peft-*``, GPTQ bases): no CLI input
says what they change.

First scores (models/memory_calibration.md, "Fourth unseen source"), with the model as shipped
when the rows were written (main @4798334): 5.2 % median |error|, 91 % within 20 %, -0.4 % signed,
the same through ``fit --batch``; no completed run judged ``does_not_fit`` at margin 0; 15 of the 17
out-of-memory runs predicted not to fit (the two Llama-2-70B QLoRA runs at micro-batch 4 predicted
to fit); with the three earlier holdouts 80 runs, 9.0 % / 82 % (-4.5 %). With main @fa65695 (hf
QLoRA counts fp32 activations; not fitted to these rows either): 10.0 % / 74 % (+3.7 %) both ways,
no completed run ``does_not_fit``, all 17 out-of-memory runs ``does_not_fit``; 80 runs 9.6 % / 79 %
(-2.7 %). With FSDP's retention of recomputed inputs under transformers' reentrant checkpointing
counted (read in torch's FSDP code, memory_calibration.md): 6.2 % / 91 % (+6.2 %) both ways, the
growth with tokens right on the FSDP QLoRA runs, their intercepts 2-5 GB high. The guards sit just
above the current figures, so a change that makes the model worse on this source fails here.
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

HOLDOUT4_CSV = TEST_DATA / "measured_memory_holdout4.csv"
COMMIT = re.compile(r"@[0-9a-f]{40}\b")
# The CLI's catalog ids of the source's models (SantaCoder since it joined the catalog; before, the
# rows passed params_b and were scored on a gated, RMSNorm, multi-head 1.12B stand-in).
CATALOG_MODELS = {
    "bigcode/gpt_bigcode-santacoder",
    "mistralai/Mistral-7B-v0.1",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "NousResearch/Llama-2-70b-hf",
}
# Out-of-memory runs the model predicted to fit at the first score (@4798334): Llama-2-70B QLoRA,
# micro-batch 4, on one GPU (fp32 residual stream after PEFT's prepare_model_for_kbit_training, not
# counted then) and on two (FSDP; not explained). Empty since @fa65695; it may never grow beyond them.
OOM_PREDICTED_TO_FIT = {
    ("NousResearch/Llama-2-70b-hf", "qlora", "1", "4"),
    ("NousResearch/Llama-2-70b-hf", "qlora", "2", "4"),
}


def _key(row: dict[str, str]) -> tuple[str, str, str, str]:
    return (row["model"], row["method"], row["num_gpus"], row["micro_batch"])


def test_rows_cite_a_commit_and_parse_without_exclusions() -> None:
    unseen = select_rows(HOLDOUT4_CSV)
    assert len(unseen.measured) == 23 and len(unseen.oom) == 17
    assert not unseen.excluded and not unseen.boundary
    rows = [m.row for m in unseen.measured] + [row for _, row, _, _ in unseen.oom]
    for row in rows:
        assert COMMIT.search(row["source_url_or_repo_path"]), row["source_url_or_repo_path"]
    # what the benchmark did, read from its code: packed 4,096-token samples (2,048 for
    # SantaCoder), FlashAttention-2, checkpointing, one micro-batch per step, FSDP over 2 GPUs,
    # pure bf16 without autocast for full/LoRA, autocast over a double-quantized nf4 base for QLoRA
    for m in unseen.measured:
        setup = m.setup
        assert setup.framework == "hf" and setup.attention == "flash" and setup.memory_metric == "allocated"
        assert setup.activation_checkpointing == "full" and setup.grad_accum == 1
        assert setup.variable_lengths is False and setup.seq_len in (2048, 4096)
        assert setup.sharding == ("fsdp" if setup.gpus == 2 else "none")
        if setup.method == "qlora":
            assert setup.precision == "bf16-mixed" and setup.qlora_double_quant
        else:
            assert setup.precision == "bf16-true"
        if setup.method != "full":
            assert (setup.lora_rank, setup.lora_targets) == (16, "qkvo")  # q_proj, k_proj, v_proj, o_proj
    assert (
        "fms-acceleration benchmarks" in HOLDOUTS and HOLDOUTS["fms-acceleration benchmarks"] == HOLDOUT4_CSV
    )


def test_fourth_unseen_source_does_not_regress() -> None:
    # First score (@4798334): 5.2 % median |error|, 91 % within 20 %, -0.4 % signed; misses beyond
    # 20 %: SantaCoder on 2 GPUs (+25 %: the 1.6 GB NCCL/bucket constant is outside torch's
    # allocator) and Mistral-7B QLoRA on 1 GPU at micro-batch 8 (-24 %: fp32 residual stream after
    # prepare_model_for_kbit_training). @fa65695: 10.0 % / 74 % (+3.7 %): the fp32-activation rule
    # also reaches the FSDP QLoRA runs (+23 to +49 %), where trl skips prepare_model_for_kbit_training.
    # With the rule as the code runs (every layer input but the first fp32, none under FSDP) and
    # FSDP's foreach AdamW temporary: 4.0 % / 96 % (+1 %); the Llama-2-70B QLoRA 2 x 4 OOM is again
    # predicted to fit (61.0 GB device), as at the first score. With FSDP's retention of the
    # recomputed inputs counted: 6.2 % / 91 % (+6.2 %), the 70B run 85.3 GB device (a coin flip on
    # the 85.9 GB card: the same configuration completed at earlier refreshes of the table); 80.7 GB
    # since the saved-tensor count's refit (activation factor 1.12 -> 1.02).
    unseen = select_rows(HOLDOUT4_CSV)
    predicted = prepared(unseen.measured).per_gpu_gb()
    measured = np.array([m.gb for m in unseen.measured])
    median, within = stats(predicted, measured)
    assert median <= 6.5 and within >= 90.0, (median, within)
    assert abs(float(np.median(predicted / measured - 1))) <= 0.07
    # every run completed on an A100 80GB: none may be judged does_not_fit at margin 0
    for m in unseen.measured:
        estimate = estimate_memory(m.setup.model_copy(update={"margin": 0.0}), card_gb=m.card_gb)
        assert m.card_gb is not None and estimate.verdict(m.card_gb).verdict != "does_not_fit", m.row["model"]
    # out-of-memory runs: all but the two named ones predicted not to fit on the 80 GiB card
    fitting = set()
    for _, row, setup, capacity in unseen.oom:
        estimate = estimate_memory(setup.model_copy(update={"margin": 0.0}), card_gb=capacity)
        if estimate.verdict(capacity).verdict != "does_not_fit":
            fitting.add(_key(row))
    assert fitting <= OOM_PREDICTED_TO_FIT, fitting


def test_every_unseen_source_together_with_the_fourth() -> None:
    # The three earlier holdouts (57 runs, tests/test_memory_accuracy.py) with this one: 80 runs,
    # 9.0 % / 82 % (-4.5 %) at the first score, 9.6 % / 79 % (-2.7 %) @fa65695, 6.8 % / 85 % (-3 %)
    # with the fp32-stream rule as the code runs, 6.9 % / 84 % (-2.1 %) with FSDP's retention of
    # recomputed inputs. The target is <= 12 % / >= 65 %.
    # the first four entries of HOLDOUTS (the fifth, tests/test_fifth_unseen_memory.py, came later)
    rows = [m for path in list(HOLDOUTS.values())[:4] for m in select_rows(path).measured]
    assert len(rows) == 80
    predicted = prepared(rows).per_gpu_gb()
    median, within = stats(predicted, np.array([m.gb for m in rows]))
    assert median <= 12.0 and within >= 65.0, (median, within)
    assert median <= 7.2 and within >= 83.0, (median, within)


def _contract_memory_csv(path: Path) -> list[dict[str, str]]:
    """The holdout's runs as an acceptance check writes them: only `fit` options as columns."""
    with HOLDOUT4_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["model", "params_b", "method", "optimizer", "precision", "seq_len", "micro_batch"]
            + ["grad_checkpointing", "framework", "compile", "memory_metric", "attention", "margin"]
            + ["lora_rank", "lora_targets", "gpus", "sharding", "gpu"]
        )
        for row in rows:
            known = row["model"] in CATALOG_MODELS
            oom = row["peak_gb_per_gpu"] == "OOM"
            writer.writerow(
                [row["model"] if known else "", "" if known else row["params_b"], row["method"], "adamw"]
                + ["bf16-mixed" if row["method"] == "qlora" else "bf16-true", row["seq_len"]]
                + [row["micro_batch"], "true", "hf", "false", "device" if oom else "allocated", "flash", "0"]
                + ["16", "qv", row["num_gpus"], "none" if row["num_gpus"] == "1" else "fsdp", "a100-80gb-sxm"]
            )
    return rows


def test_fourth_source_through_fit_batch_does_not_regress(cli, home, tmp_path: Path) -> None:
    # Through the contract's columns the tooling's figure (the allocated figure has no
    # variable-length term, so the missing `packed` column costs nothing here): first score 5.2 % /
    # 91 % (-0.4 %), 10.0 % / 74 % (+3.7 %) @fa65695. Verdicts at margin 0 on the A100 80GB: no
    # completed run does_not_fit; out-of-memory runs: 15 of 17 does_not_fit at first (the
    # Llama-2-70B QLoRA micro-batch-4 runs 84.2 GB device on one GPU, 67.3 GB on two: "fits"),
    # all 17 @fa65695; with the fp32-stream rule as the code runs 4.0 % / 96 % and 16 of 17 (the
    # two-GPU one, 61.0 GB device, fits again); with FSDP's retention counted 6.2 % / 91 % (the
    # two-GPU one 85.1 GB device against 85.9: "fits", the run on the card's edge).
    batch = tmp_path / "memory.csv"
    rows = _contract_memory_csv(batch)
    answers = batch_answers(cli, "fit", batch, 40)
    done, predicted, measured = completed_peaks(rows, answers, lambda r: float(r["reported_value"]))
    median, within = stats(predicted, measured)
    assert len(done) == 23 and median <= 6.5 and within >= 90.0, (median, within)
    assert not any(a["verdict"] == "does_not_fit" for _, a in done)
    fitting = oom_runs_judged_to_fit(rows, answers, _key)
    assert fitting <= OOM_PREDICTED_TO_FIT, fitting


def test_fsdp_reentrant_retention_is_counted_where_it_applies() -> None:
    # Llama-2-70B QLoRA on 2 GPUs at micro-batch 4 ran out of memory; FSDP with transformers'
    # reentrant checkpointing (around the units) keeps every frozen unit's recomputed input and its
    # gradient until backward ends (memory_calibration.md): the last block's backward holds the
    # inputs twice, that block rebuilt and no logits. Only hf LoRA/QLoRA under FSDP with full
    # recomputation; --non-reentrant-checkpointing (or checkpointing inside the units) keeps nothing.
    from gpuprice.models.architectures import resolve_model
    from gpuprice.models.memory import TrainingSetup, estimate_memory, fit_sweep

    arch = resolve_model("meta-llama/Llama-2-70b-hf", None, None)
    job = {"arch": arch, "method": "qlora", "seq_len": 4096, "micro_batch": 4, "gpus": 2, "sharding": "fsdp"}

    def peak(**update: object) -> tuple[float, bool]:
        estimate = estimate_memory(TrainingSetup.checked(**{**job, **update}))
        return estimate.per_gpu_gb, any("reentrant checkpointing" in line for line in estimate.assumptions)

    kept, named = peak()
    released, _ = peak(reentrant_checkpointing=False)
    # at least the inputs' gradients: 2 B x hidden x layers x tokens (2.68 MB a token, 44 GB here)
    tokens = job["seq_len"] * job["micro_batch"]
    assert named and kept - released >= 2.0 * arch.hidden_size * arch.num_layers * tokens / 1e9 * 0.9
    for update in (
        {"method": "full", "activation_checkpointing": "full"},
        {"sharding": "zero3"},
        {"framework": "torchtune"},
        {"activation_checkpointing": "none"},
    ):
        assert peak(**update) == peak(reentrant_checkpointing=False, **update), update
    # the ranking's sweep tries every strategy on one setup: it must count the same
    setup = TrainingSetup.checked(**{**job, "gpus": 1, "sharding": "none"})
    sweep = fit_sweep([setup], {"a100-80gb-sxm": 85.9}, [2], ["fsdp"])
    assert (
        float(sweep["per_gpu_gb"].iloc[0])
        == estimate_memory(setup.model_copy(update={"gpus": 2, "sharding": "fsdp"}), card_gb=85.9).per_gpu_gb
    )


def test_answer_ai_checkpoints_inside_its_fsdp_units() -> None:
    # AnswerDotAI/fsdp_qlora train.py @05ed9f2a wraps in FSDP first, then applies torch's
    # apply_activation_checkpointing: the checkpoint runs inside each unit, so FSDP hooks the real
    # inputs and keeps nothing more. The tooling says so; no calibration row gets the term.
    from gpuprice.models.calibration.memory_report import DATA
    from gpuprice.models.memory_features import setup_features

    rows = select_rows(DATA / "measured_memory_public.csv").measured
    answer_ai = [m for m in rows if "AnswerDotAI/fsdp_qlora" in m.row["source_url_or_repo_path"]]
    assert answer_ai and all(not m.setup.reentrant_checkpointing for m in answer_ai)
    retained = [
        m
        for m in rows
        if setup_features(m.setup)["frozen_units_keep_inputs"] > 0
        and m.setup.sharding == "fsdp"
        and m.setup.activation_checkpointing == "full"
    ]
    assert not retained, [m.row["model"] for m in retained]


def test_non_reentrant_checkpointing_through_the_cli(cli, home, tmp_path: Path) -> None:
    args = ["fit", "--model", "meta-llama/Llama-2-70b-hf", "--method", "qlora", "--seq-len", "4096"]
    args += ["--micro-batch", "4", "--gpus", "2", "--sharding", "fsdp", "--gpu", "a100-80gb-sxm", "--json"]
    first, second = cli(*args), cli(*args, "--non-reentrant-checkpointing")
    assert first.code == second.code == 0, (first.err, second.err)
    default, released = json.loads(first.out), json.loads(second.out)
    assert default["non_reentrant_checkpointing"] is False and released["non_reentrant_checkpointing"] is True
    assert default["per_gpu_gb"] > released["per_gpu_gb"] + 15.0
    # the same as a --batch column
    batch = tmp_path / "jobs.csv"
    batch.write_text(
        "model,method,seq_len,micro_batch,gpus,sharding,gpu,non_reentrant_checkpointing\n"
        "meta-llama/Llama-2-70b-hf,qlora,4096,4,2,fsdp,a100-80gb-sxm,true\n"
    )
    answers = batch_answers(cli, "fit", batch, 1)
    assert answers[0]["per_gpu_gb"] == released["per_gpu_gb"]


def test_a_rank_job_carries_non_reentrant_checkpointing() -> None:
    from gpuprice.models.workload_jobs import job_workload

    fields = {"model": "meta-llama/Llama-2-70b-hf", "method": "qlora", "tokens": "1B"}
    assert (
        job_workload({**fields, "non_reentrant_checkpointing": True}).setup(2, "fsdp").reentrant_checkpointing
        is False
    )
    assert job_workload(fields).setup(2, "fsdp").reentrant_checkpointing is True


def test_sharded_qlora_keeps_its_non_quantized_weights_16_bit() -> None:
    # trl's SFTTrainer skips prepare_model_for_kbit_training for QLoRA under ZeRO-3/FSDP (the 4-bit
    # weights load on the CPU or meta device), so the embeddings, head and norms stay as loaded
    # (bf16); on one GPU PEFT's cast makes them fp32 (Llama-2-70B: 0.53e9 weights, 1.05 GB more).
    from gpuprice.models.architectures import resolve_model
    from gpuprice.models.memory import TrainingSetup

    arch = resolve_model("meta-llama/Llama-2-70b-hf", None, None)
    rest = (arch.n_params - arch.quantizable_params) * 2.0 / 1e9

    def weights(precision: str, sharding: str, gpus: int) -> float:
        setup = TrainingSetup.checked(
            arch=arch, method="qlora", precision=precision, gpus=gpus, sharding=sharding
        )
        return estimate_memory(setup).breakdown.weights

    assert weights("bf16-mixed", "none", 1) - weights("bf16-true", "none", 1) >= rest - 1e-6
    assert weights("bf16-mixed", "zero3", 2) == weights("bf16-true", "zero3", 2)
    assert weights("bf16-mixed", "fsdp", 2) <= weights("bf16-true", "fsdp", 2)


def test_santacoder_rows_run_on_its_own_shape_and_loss() -> None:
    # SantaCoder is multi-query (one K/V head), LayerNorm, a 4 x wide GELU MLP and a tied 49,280-token
    # head (its config.json, now in the catalog); transformers 4.48.1 computed its loss in its own
    # forward on the shifted 16-bit logits, which the rows' loss column states. On that shape:
    # one GPU -0.2 % and -12.9 %, two (FSDP) +33 % and +10 % (the 1.6 GB buffer constant again).
    santacoder = [m for m in select_rows(HOLDOUT4_CSV).measured if "santacoder" in m.row["model"]]
    assert len(santacoder) == 4
    for m in santacoder:
        arch = m.setup.arch
        assert arch.name == "bigcode/gpt_bigcode-santacoder" and arch.num_kv_heads == 1
        assert arch.norm_type == "layernorm" and not arch.gated_mlp and arch.tied_embeddings
        assert m.setup.loss == "full-16bit" and "GPTBigCodeForCausalLM.forward" in m.row["notes"]
    one_gpu = [m for m in santacoder if m.setup.gpus == 1]
    errors = prepared(one_gpu).per_gpu_gb() / np.array([m.gb for m in one_gpu]) - 1
    assert np.all(np.abs(errors) < 0.15), errors
