"""Accuracy of the memory model against public measurements (tests/data/measured_memory_public.csv).

Row selection, calibration and leave-one-source-out validation live in
``gpuprice.models.calibration.memory_fit`` (documented in models/memory_calibration.md). Guards sit
just under what the shipped constants achieve, so a change that makes the model worse fails here.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import TEST_DATA
from gpuprice.models.calibration.memory_fit import (
    HeldOut,
    Selection,
    calibrate,
    leave_one_source_out,
    select_rows,
    source_of,
    stats,
)
from gpuprice.models.calibration.memory_fit import prepared as on_their_cards
from gpuprice.models.memory import DEFAULT_CONSTANTS, PreparedSetups, estimate_memory

MEASURED_CSV = TEST_DATA / "measured_memory_public.csv"

# Issue 33's targets on the earlier holdouts (leave-one-source-out): median <= 10 %, >= 75 % within
# 20 %; on measured runs from a source never fitted to (tests/data/measured_memory_holdout.csv,
# ms-swift on HF Trainer): median <= 12 %, >= 65 % within 20 %. Achieved (memory_calibration.md):
# in-sample 5.4 % / 82.7 %, LOSO 7.6 % / 80.8 %, leave-one-source-FAMILY-out 7.9 % / 79.8 %,
# unseen holdout 11.3 % / 75 % (gradient accumulation following grad_accum: rows that state no
# accumulation, and the many that state nothing, free their gradients after each step; before it:
# 6.8 % / 83.7 %, 9.5 % / 81.7 %, 10.6 % / 78.8 %, 11.4 % / 75 %; one row more outside 20 %).
# Issue 15's in-sample 6 % / 85 %: the median is met, the share within 20 % is not (82.7 %): the
# loss count (12 B/logit where the code upcasts, 6 B where litgpt's does not) replaced a figure
# chosen for its score.
# Then the rebuilt layer of a recomputing backward counted beside the loss's logits as the larger
# moment, not their sum, and Answer.AI's train.py rows with what its code does (the output's fp32
# logits kept through backward, LoRA r 64 on six linears), recalibrated: in-sample 5.9 % / 81.7 %,
# LOSO 6.7 % / 80.8 %, family-out 6.8 % / 80.8 %, ms-swift 11.4 % / 75 %; LOSO by method full
# 9.6 % (62.5 % within 20 %: two rows crossed it), lora 5.1 %, qlora 8.3 % (was 7.4 %).
# Then hf QLoRA's activations counted fp32 (PEFT's prepare_model_for_kbit_training makes the
# embedding, so the residual stream, fp32 and bitsandbytes' Linear4bit returns its input dtype):
# in-sample 5.3 % / 81.7 % (hf 3.7 %, ftune -6 % -> +3 %), LOSO 6.9 % / 79.8 %, family-out 7.0 % /
# 79.8 %: the constants fitted without litgpt no longer carry the activation factor that the
# uncounted fp32 QLoRA activations pushed up, and one litgpt row crossed 20 %.
# Then DeepSpeed ZeRO-3's persistent 16-bit gradient partitions, its step's sub-group copy and its
# gradient bucket on one GPU (deepspeed v0.14.2 stage3.py), read after the fifth unseen source
# (gpjt/fine-tune-2024-04) missed by -25 %; recalibrated (context 1.7 -> 2.0 GB, dequant 2.5 ->
# 2.25 blocks): in-sample 5.2 % / 81.7 %, LOSO 6.9 % / 79.8 % (full 9.6 -> 8.0 %, lora 5.2 ->
# 5.3 %), family-out 7.0 -> 6.7 % / 79.8 %.
TARGET_LOSO_MEDIAN, TARGET_LOSO_WITHIN = 10.0, 75.0
TARGET_UNSEEN_MEDIAN, TARGET_UNSEEN_WITHIN = 12.0, 65.0
GUARD_MEDIAN, GUARD_WITHIN = 5.5, 81.5
GUARD_LOSO_MEDIAN, GUARD_LOSO_WITHIN = 7.0, 79.0
GUARD_FAMILY_MEDIAN, GUARD_FAMILY_WITHIN = 7.1, 79.0
GUARD_UNSEEN_MEDIAN, GUARD_UNSEEN_WITHIN = 11.5, 74.0
# The per-method LOSO medians (full, lora, qlora) may not get worse than this. QLoRA 8.4 -> 9.0 in
# the fifteenth session: torch's LayerNorm keeps no copy of its own (probed; memory_calibration.md),
# which moves 4 litgpt rows by 0.15 GB in-sample and makes three folds refit the activation factor
# and the dequantisation depth (qlora 8.3 -> 8.9 %).
GUARD_LOSO_BY_METHOD = {"full": 8.5, "lora": 5.4, "qlora": 9.0}
HOLDOUT_CSV = TEST_DATA / "measured_memory_holdout.csv"


@pytest.fixture(scope="module")
def selection() -> Selection:
    return select_rows(MEASURED_CSV)


@pytest.fixture(scope="module")
def prepared(selection: Selection) -> tuple[PreparedSetups, np.ndarray]:
    return on_their_cards(selection.measured), np.array([m.gb for m in selection.measured])


@pytest.fixture(scope="module")
def held_out(selection: Selection) -> HeldOut:
    return leave_one_source_out(selection.measured)


def test_selection_keeps_most_rows_and_explains_every_exclusion(selection: Selection) -> None:
    assert len(selection.measured) >= 100  # the optimisation rows (compile, chunked CE, ...) are in
    assert len(selection.oom) >= 5 and len(selection.boundary) == 3
    assert all(reason for reason in selection.excluded.values())
    assert len(selection.excluded) <= 14


def test_optimisation_rows_carry_their_inputs(selection: Selection) -> None:
    by_index = {m.index: m.setup for m in selection.measured}
    compiled, chunked, ckpt, in_bwd, offload = (by_index[i] for i in (51, 52, 53, 54, 55))
    assert compiled.compile and compiled.loss == "full" and compiled.framework == "torchtune"
    assert chunked.loss == "chunked" and chunked.activation_checkpointing == "none"
    assert ckpt.activation_checkpointing == "full" and not ckpt.optimizer_in_backward
    assert in_bwd.optimizer_in_backward and not in_bwd.cpu_offload_activations
    assert offload.cpu_offload_activations and offload.compile
    assert by_index[58].method == "qlora" and by_index[58].cpu_offload_activations  # "(same)" as LoRA
    assert by_index[46].optimizer_in_backward and by_index[46].sharding == "offload"
    assert not by_index[46].gradient_accumulation  # "bs=2, no grad accumulation"
    assert by_index[85].gradient_accumulation and by_index[85].grad_accum == 8  # Qwen: "bs1 GA8"
    # A row that states nothing takes the CLI's default, one micro-batch per step (gradients freed)
    assert by_index[51].grad_accum == 1 and not by_index[51].gradient_accumulation


def test_the_unseen_rows_carry_their_stated_accumulation() -> None:
    # ms-swift "GA 16"; universal-llm-trainer "GA 32" / "GA 1"; Liger "gradient_accumulation_steps 1"
    swift = select_rows(HOLDOUT_CSV).measured
    assert {m.setup.grad_accum for m in swift} == {16}
    trainer = select_rows(TEST_DATA / "measured_memory_holdout2.csv").measured
    assert {m.setup.grad_accum for m in trainer} == {1, 32}
    liger = select_rows(TEST_DATA / "measured_memory_holdout3.csv").measured
    assert {m.setup.grad_accum for m in liger} == {1}


def test_units_converted_from_gib(selection: Selection) -> None:
    gib_rows = [m for m in selection.measured if m.row["reported_unit"].lower() == "gib"]
    assert gib_rows
    for m in gib_rows:
        assert m.gb == pytest.approx(float(m.row["peak_gb_per_gpu"]), abs=0.01)
        assert m.gb > float(m.row["reported_value"])


def test_accuracy_on_all_usable_rows(prepared: tuple[PreparedSetups, np.ndarray]) -> None:
    batch, measured = prepared
    median, within = stats(batch.per_gpu_gb(), measured)
    assert median <= GUARD_MEDIAN, f"regression: median APE {median:.1f} %"
    assert within >= GUARD_WITHIN, f"regression: {within:.1f} % within 20 %"


def test_leave_one_source_out(held_out: HeldOut) -> None:
    measured = np.array([m.gb for m in held_out.measured])
    median, within = stats(held_out.predicted, measured)
    assert median <= TARGET_LOSO_MEDIAN and within >= TARGET_LOSO_WITHIN
    assert median <= GUARD_LOSO_MEDIAN, f"LOSO median {median:.1f} %"
    assert within >= GUARD_LOSO_WITHIN, f"LOSO {within:.1f} % within 20 %"
    for method, guard in GUARD_LOSO_BY_METHOD.items():
        index = [i for i, m in enumerate(held_out.measured) if m.setup.method == method]
        assert stats(held_out.predicted[index], measured[index])[0] <= guard, method


def test_scalar_path_gives_the_same_predictions(
    selection: Selection, prepared: tuple[PreparedSetups, np.ndarray]
) -> None:
    batch, _ = prepared
    scalar = [estimate_memory(m.setup, card_gb=m.card_gb).per_gpu_gb for m in selection.measured]
    assert batch.per_gpu_gb().tolist() == scalar


def test_every_oom_row_is_predicted_not_to_fit(selection: Selection, held_out: HeldOut) -> None:
    # The product's verdict at margin 0 (the predicted device peak against the card's usable bytes,
    # the sold "40 GB" read as GiB), with the shipped constants and those calibrated without the
    # row's source. Row 45 (older lit-gpt tutorial) names no GPU; the same commit's tutorials ran
    # on A100 40GB (cited in the row), where the predicted 77 GB does not fit.
    # The device figure leaves out the cached earlier loss regions (the allocator frees them and
    # retries before failing). Row 14 (litgpt resource table, Llama-2-7B LoRA at 4 x 1304 on A100
    # 40GB) is then 2 % under its card with the constants calibrated without its source (activation
    # factor 0.96): litgpt puts its longest sample first, so no cached region could have caused that
    # OOM either; it is the one leave-one-source-out miss, the shipped constants predict it.
    missed = set()
    for index, row, setup, capacity in selection.oom:
        source = source_of(row)
        for constants in (DEFAULT_CONSTANTS, held_out.constants.get(source, DEFAULT_CONSTANTS)):
            estimate = estimate_memory(setup.model_copy(update={"margin": 0.0}), constants)
            if estimate.verdict(capacity).verdict != "does_not_fit":
                missed.add(index)
        assert estimate_memory(setup).device_gb > capacity, index
    assert missed <= {14}, missed


def test_capacity_boundary_rows_plan_near_the_card(selection: Selection) -> None:
    # "max context that fits in N GB" (peak ~= VRAM): the predicted device peak should be ~N GB.
    # Unsloth's HF+FA2 QLoRA rows (Llama-3.1-8B, 5.8k-28k tokens) sit 15 / 18 / 21 % under their
    # cards since a recomputing backward's rebuilt layer counts as the larger moment beside the
    # loss, not added to it (11 / 13 / 15 % before): about 4.6 B per logit the model does not
    # count on that path (memory_calibration.md, "What still misses"). None is judged not to fit.
    for index, _row, setup, capacity in selection.boundary:
        peak = estimate_memory(setup).device_gb
        assert peak == pytest.approx(capacity, rel=0.22), (index, peak, capacity)


def test_shipped_constants_are_the_calibration_on_all_rows(
    prepared: tuple[PreparedSetups, np.ndarray],
) -> None:
    batch, measured = prepared
    assert calibrate(batch, measured) == DEFAULT_CONSTANTS


def test_litgpt_rows_carry_what_litgpt_states(selection: Selection) -> None:
    by_index = {m.index: m.setup for m in selection.measured}
    # finetune/lora.py: FSDPStrategy(activation_checkpointing_policy={Block}) when devices > 1
    assert by_index[19].activation_checkpointing == "full" and by_index[19].sharding == "fsdp"
    # resource-tables.md: StableLM Alpha's longest Alpaca example is 1034 tokens (finetune_lora.md rows)
    assert by_index[38].seq_len == 1034 and by_index[41].seq_len == 1304
    # config_hub gemma-*/qlora.yaml: every linear (and the head) adapted, lora_r 16
    assert (by_index[26].lora_rank, by_index[26].lora_targets) == (16, "all")
    assert (by_index[27].lora_rank, by_index[27].lora_targets) == (32, "qv")  # llama-3-8b/lora.yaml


def test_leave_one_source_family_out(selection: Selection) -> None:
    # A framework's or organisation's tables leave the calibration together (litgpt's three files).
    from gpuprice.models.calibration.memory_fit import family_of, leave_one_family_out

    held = leave_one_family_out(selection.measured)
    assert {family_of(m.source) for m in selection.measured} == set(held.constants)
    assert "Lightning-AI/litgpt" in held.constants
    measured = np.array([m.gb for m in held.measured])
    median, within = stats(held.predicted, measured)
    assert median <= GUARD_FAMILY_MEDIAN and within >= GUARD_FAMILY_WITHIN, (median, within)


def test_unseen_source_holdout() -> None:
    # ms-swift's benchmark tables (HF Trainer, Qwen-1 remote code, 512-8192 tokens, eager and flash
    # attention): never used to calibrate anything; scored with the shipped constants.
    unseen = select_rows(HOLDOUT_CSV)
    assert len(unseen.measured) >= 35 and not unseen.excluded
    predicted = on_their_cards(unseen.measured).per_gpu_gb()
    measured = np.array([m.gb for m in unseen.measured])
    median, within = stats(predicted, measured)
    assert median <= TARGET_UNSEEN_MEDIAN and within >= TARGET_UNSEEN_WITHIN, (median, within)
    assert median <= GUARD_UNSEEN_MEDIAN and within >= GUARD_UNSEEN_WITHIN, (median, within)
    eager = [m for m in unseen.measured if m.setup.attention == "eager"]
    assert len(eager) == 2 and all(m.setup.variable_lengths is not False for m in eager)


def test_shipped_error_band_is_the_out_of_sample_validation() -> None:
    # models/memory_band.json is regenerated by gpuprice.models.calibration.memory_band_table from
    # the leave-one-source-family-out predictions of the calibration runs and the shipped model's
    # predictions of the unseen sources' runs; a model change must regenerate it.
    import json

    from gpuprice.models.calibration.memory_band_table import band_table
    from gpuprice.models.calibration.memory_report import HOLDOUTS
    from gpuprice.models.memory_band import BAND_PATH

    shipped = json.loads(BAND_PATH.read_text(encoding="utf-8"))
    assert shipped["bands"] == band_table(MEASURED_CSV)["bands"]
    assert shipped["data"] == [MEASURED_CSV.name, *(path.name for path in HOLDOUTS.values())]
    for band in shipped["bands"].values():
        assert band["low"] < 0 < band["high"]
    # every measured run of both kinds is in the band of all runs
    calibration_only = band_table(MEASURED_CSV, unseen=())["bands"]
    unseen_runs = sum(len(select_rows(path).measured) for path in HOLDOUTS.values())
    assert shipped["bands"]["all"]["runs"] == calibration_only["all"]["runs"] + unseen_runs


def test_a_model_known_only_by_size_carries_the_band_of_runs_predicted_from_size(cli) -> None:
    # The 104 calibration runs predicted from their parameter count alone (the representative
    # Llama-2-style shape, 32k vocabulary) with their family's constants: -30 % / +69 % over all
    # runs, against -40 % / +30 % with the real shapes; the high side widens because modern
    # 128k-256k vocabularies hold logits the stand-in does not.
    import json

    from gpuprice.models.memory_band import band_of

    for method in ("full", "lora", "qlora", "all"):
        known, sized = band_of(method), band_of(method, shape_known=False)
        assert sized.key == f"{method}, shape from size" and sized.runs == known.runs
        assert sized.high > known.high
    by_size = json.loads(cli("fit", "--params-b", "8", "--method", "lora", "--json").out)
    by_name = json.loads(cli("fit", "--model", "meta-llama/Llama-3.1-8B", "--method", "lora", "--json").out)
    assert by_size["band"]["runs_like"] == "lora, shape from size"
    assert by_name["band"]["runs_like"] == "lora"
    assert by_size["assumptions"][0].startswith("shape unknown: a representative dense decoder of 8.")
    assert not any(line.startswith("shape unknown") for line in by_name["assumptions"])
    high = by_size["band_gb"]["high"] / by_size["per_gpu_gb"] - 1
    assert high == pytest.approx(band_of("lora", shape_known=False).high, abs=1e-3)


HOLDOUT2_CSV = TEST_DATA / "measured_memory_holdout2.csv"


def test_second_unseen_source_holdout() -> None:
    # ljm565/universal-llm-trainer docs/gpu_test.md (its own loop on transformers 4.49, 2 x 8192
    # fully filled tokens, torch.cuda.memory_reserved): never fitted to. First score, before any
    # change: 6.7 % / 75 % within 20 % (+6 % signed) with the Gemma-2 QLoRA OOM predicted to fit;
    # with the soft-capped-logits term (Gemma 2's tanh output): 6.1 % / 75 %, the OOM predicted;
    # with the rows' loss column saying what the trainer's code does (nn.CrossEntropyLoss on the
    # bf16 logits, no upcast: --loss full-16bit, 6 B a logit): 3.8 % / 100 % (+2 %); with the
    # rebuilt layer counted as the larger moment beside the loss (not added), recalibrated:
    # 5.5 % / 100 % (-4 %).
    unseen = select_rows(HOLDOUT2_CSV)
    assert len(unseen.measured) == 12 and len(unseen.oom) == 1 and not unseen.excluded
    predicted = on_their_cards(unseen.measured).per_gpu_gb()
    measured = np.array([m.gb for m in unseen.measured])
    median, within = stats(predicted, measured)
    assert median <= TARGET_UNSEEN_MEDIAN and within >= TARGET_UNSEEN_WITHIN, (median, within)
    assert median <= 5.6 and within >= 99.0, (median, within)
    assert all(m.setup.loss == "full-16bit" for m in unseen.measured)
    for _index, _row, setup, capacity in unseen.oom:
        estimate = estimate_memory(setup.model_copy(update={"margin": 0.0}))
        assert estimate.verdict(capacity).verdict == "does_not_fit"


def test_every_unseen_source_together_meets_the_issue_target() -> None:
    # Issue 33's target is over the sources the model was never fitted to, together: ms-swift (40),
    # universal-llm-trainer (12) and Liger-Kernel's HF example (5): 8.9 % / 75 % (-4 %) when added;
    # 9.4 % / 79 % (-7 %) with the rebuilt layer as the larger moment beside the loss. Liger alone
    # misses (27.4 %, now 19.7 %): its rows sit at a 512-token cap the logs do not resolve.
    rows = [
        m
        for path in (HOLDOUT_CSV, HOLDOUT2_CSV, TEST_DATA / "measured_memory_holdout3.csv")
        for m in select_rows(path).measured
    ]
    assert len(rows) == 57
    predicted = on_their_cards(rows).per_gpu_gb()
    median, within = stats(predicted, np.array([m.gb for m in rows]))
    assert median <= TARGET_UNSEEN_MEDIAN and within >= TARGET_UNSEEN_WITHIN, (median, within)
    assert median <= 9.5 and within >= 74.0, (median, within)


def test_completed_runs_judged_does_not_fit_at_margin_zero() -> None:
    # Issue 33: no completed run predicted "does not fit" when the margin is zero. Down from 4 to 2:
    # torchtune's Llama-2-70B PagedAdamW run (paged states leave the verdict) and universal-llm-
    # trainer's Gemma-2-9B LoRA (its 16-bit loss stated); then to 0: Answer.AI's Mistral-7B QLoRA on
    # 2 x RTX 4090 (27.0 GB device predicted for the 25.8 GB card) is 25.1 GB once a recomputing
    # backward's rebuilt layer counts as the larger moment beside the loss, not their sum
    # (memory_calibration.md, "The rebuilt layer and the loss"). Back to 1 with the saved-tensor
    # count and its refit (fragmentation 3 -> 6 %): universal-llm-trainer's Llama-3.1-8B full
    # fine-tuning at 8,192 x 2 (86.6 GB device for the H100's 85.9), whose AdamW step allocates
    # 80.3 GB while its trainer logged 78.0 GB reserved after the step ("Counted from what autograd
    # saves"). Back to 0 when fragmentation became a share of the pool forward and backward build:
    # the step's 15.1 GB beyond that pool comes from new segments of the size asked, so its device
    # figure is 80.3 + 6 % of 65.2 + 1.5 = 85.7 GB (memory_calibration.md, "The optimizer step's
    # excess gets segments of its own size"). Any run judged does_not_fit fails.
    from gpuprice.errors import BadInput
    from gpuprice.models.catalog import resolve_gpu

    judged, over = 0, []
    for path in (MEASURED_CSV, HOLDOUT_CSV, HOLDOUT2_CSV):
        for m in select_rows(path).measured:
            try:
                capacity = resolve_gpu(m.row["gpu"]).usable_memory_gb
            except BadInput:
                continue
            judged += 1
            if (
                estimate_memory(m.setup.model_copy(update={"margin": 0.0})).verdict(capacity).verdict
                == "does_not_fit"
            ):
                over.append((m.source, m.row["model"], m.setup.seq_len))
    assert judged >= 130
    assert over == []


def test_a_rows_card_comes_from_its_gpu_text_or_a_card_named_in_the_notes() -> None:
    # fsdp_qlora's Llama-2-70B row ran on "RTX 3090/4090" with "128GB CPU RAM + swap" in its notes:
    # the host's RAM is not the card (it had been read as a 137 GB card); the card family's 24 GiB is
    from gpuprice.models.calibration.memory_fit import card_of

    row = {"gpu": "RTX 3090/4090", "notes": "CPU offload; 128GB CPU RAM + swap", "model": "x"}
    row["source_url_or_repo_path"] = "s"
    assert card_of(row, [row]) == pytest.approx(24 * 2**30 / 1e9)
    named = {**row, "gpu": "not stated", "notes": "a 48 GB card; 21GB VRAM used"}
    assert card_of(named, [named]) == pytest.approx(48 * 2**30 / 1e9)
    assert card_of({**named, "notes": "21GB VRAM used"}, [named]) is None
