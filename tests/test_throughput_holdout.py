"""The throughput model on measured runs from trainers it was never fitted to (issue 33).

``tests/data/throughput_holdout.csv``: ms-swift's DeepSpeed fine-tuning table, universal-llm-trainer's
single-GPU fine-tuning tables, VectorLM's FSDP full/LoRA table, XTuner's ZeRO-3 speed tables and
torchtitan's FSDP pre-training tables, and multi-node DeepSpeed ZeRO-3 runs with a stated fabric (the ZeRO++
blog's baselines and AWS's runs in DeepSpeed PR #1453: tests/test_throughput_multinode.py), fms-acceleration's
plain-HF A100 runs (tests/test_fms_acceleration_throughput.py), PEFT's MetaMathQA method comparison on one
L40S (tests/test_peft_method_comparison_throughput.py), NeMo Automodel's LoRA table on DGX-H100
(tests/test_nemo_automodel_throughput.py), torchao's torchtitan bf16 baselines, TinyLlama's README figure
the HF blog's DeepSpeed-vs-FSDP fine-tuning table (tests/test_ao_tinyllama_hf_blog_throughput.py), and
ml-engineering's H200/B200 ZeRO-2 steps and axolotl's Llama 4 Scout QLoRA runs
(tests/test_ml_engineering_axolotl_throughput.py), and NVIDIA's DGX Cloud benchmarking recipes' Llama 3
8B / 70B SFT and LoRA on H100 (tests/test_dgxc_benchmarking_throughput.py), and Blackwell pre-training:
the same recipes' GB200 Llama 3.1 405B / Nemotron-4 340B tables and Megatron-Bridge's B200 / GB200 rows
(tests/test_blackwell_throughput.py) (sources and
rows cited in each row). A family that also has calibration rows (torchtitan) is scored by constants refitted
without it. The guards sit just above what the model achieves (models/mfu_calibration.md,
"Holdout"), so a change that makes it worse on unseen trainers fails here; they are not the
issue's targets, which the fine-tuning rows do not meet (see the calibration notes).
"""

from __future__ import annotations

import re

import pytest

from conftest import TEST_DATA
from gpuprice.models.calibration.throughput_holdout import (
    Scored,
    family_of,
    groups,
    summarize,
)
from gpuprice.models.calibration.throughput_rows import load_benchmark_rows

HOLDOUT_CSV = TEST_DATA / "throughput_holdout.csv"
BRIDGE = "NVIDIA-NeMo/Megatron-Bridge"
PUBLIC_CSV = TEST_DATA / "throughput_public.csv"

# Achieved (median |error|, share within 25 %), shipped constants / torchtitan refitted without it:
#   ms-swift (2 runs)                 7.4 %, 100 %  (9.8 % before the optimizer-step term)
#   torchtitan (10 runs)              2.4 %, 100 %  (9.7 % before op-level selective checkpointing was
#                                     charged every second matmul's recompute, layer-level half the
#                                     layers': its 7 selective runs read +10 %; 11.3 % refitted)
#   universal-llm-trainer (34 runs)   14.9 %, 62 % (30.4 % / 44 % before the RTX PRO 6000's sustained
#                                     matmul rate: tests/test_power_bound_gemm.py; 270 % before its rows
#                                     said sdpa + bf16-true/fp32: SDPA with a padding mask, fp32 QLoRA,
#                                     PEFT's fp32 adapters)
#   VectorLM (18 runs)                5.7 %, 100 %  (5.8 % first scored, before its rows said bf16-true)
#   XTuner (6 runs)                  14.5 %,  67 %  (idem; the 32-GPU ZeRO-3 rows are +33 %/+55 %)
#   DeepSpeed ZeRO-3 multi-node (23) 11.5 %,  87 %  (68.1 % / 13 % first scored, before the tooling
#                                     read the fabric the rows state)
GUARDS = {
    "modelscope/ms-swift": (0.09, 1.0),
    "pytorch/torchtitan": (0.04, 0.9),
    "ljm565/universal-llm-trainer": (0.16, 0.58),
    "VectorInstitute/vectorlm": (0.07, 0.95),
    "InternLM/xtuner": (0.16, 0.6),
    "microsoft/DeepSpeed": (0.13, 0.85),
    # 4.7 %, 100 % (80 % first scored; its full run +31.7 % -> +24.9 % with the clip's rescale)
    "huggingface/peft": (0.055, 1.0),
    # 13.6 %, 100 % (first score: tests/test_nemo_automodel_throughput.py)
    "NVIDIA-NeMo/Automodel": (0.14, 1.0),
    # first scores (tests/test_ao_tinyllama_hf_blog_throughput.py): the HF blog's Granite-7B full
    # fine-tuning, FSDP / ZeRO-3 on 4 A100, 11.4 %, 100 %; torchao's torchtitan bf16 baselines,
    # 46.0 %, 0 % (H100 +28.8 %, MI300X +63.3 %), 37.5 % / 50 % with selective checkpointing's
    # recompute (+22.0 / +52.9 %); TinyLlama's one run (-1.4 %) is guarded there
    "huggingface/blog": (0.12, 1.0),
    "pytorch/ao": (0.38, 0.5),
    # first scores (tests/test_ml_engineering_axolotl_throughput.py): ml-engineering's Llama-3.1-8B
    # ZeRO-2 steps on 8 H200 / 8 B200, 10.4 %, 100 % (-15.5 / +5.4 %); axolotl's Llama 4 Scout QLoRA,
    # 368.7 %, 0 % (+141.0 / +596.5 %: transformers runs every token through all 16 experts)
    "stas00/ml-engineering": (0.11, 1.0),
    "axolotl-ai-cloud/axolotl": (3.7, 0.0),
    # first scores (tests/test_dgxc_benchmarking_throughput.py): NeMo 2.1 Llama 3 SFT / LoRA on packed
    # SQuAD, 8-32 H100, 29.2 %, 40 % (the 8B runs -29 .. -44 %: packed short examples' attention and
    # Megatron's per-layer cost; the 70B runs -12 .. +5 %); 31.4 %, 37 % over 38 with its 18 GB200
    # pre-training runs (+21 .. +48 %: tests/test_blackwell_throughput.py)
    "NVIDIA/dgxc-benchmarking": (0.32, 0.36),
    # first scores (tests/test_blackwell_throughput.py): Megatron-Bridge 25.11 FP8 pre-training on
    # B200 / GB200, 12.0 %, 100 % (8B -4 .. -15 %, 405B on 128 B200 +12 / +19 %)
    "NVIDIA-NeMo/Megatron-Bridge": (0.125, 1.0),
}


@pytest.fixture(scope="module")
def scored(holdout_scores: list[Scored]) -> list[Scored]:
    return holdout_scores  # score_holdout() over HOLDOUT_CSV and PUBLIC_CSV, 1,500 iterations


def test_every_holdout_row_cites_a_commit_and_a_table_row() -> None:
    rows = load_benchmark_rows(str(HOLDOUT_CSV))
    assert len(rows) >= 70
    for row in rows:
        assert re.search(r"@[0-9a-f]{40}\b", str(row["source"])), row["source"]
        assert "section:" in str(row["source"]) and str(row["reported"]).strip(), row


def test_holdout_families_are_not_calibration_sources_unless_refitted(scored: list[Scored]) -> None:
    public = {family_of(r) for r in load_benchmark_rows(str(PUBLIC_CSV))}
    for s in scored:
        assert s.refitted == (s.family in public), s.family
    assert {s.family for s in scored} - public, "no holdout family is new to the calibration"


@pytest.mark.parametrize("family", sorted(GUARDS))
def test_error_per_source_family_does_not_regress(scored: list[Scored], family: str) -> None:
    summary = summarize([s for s in scored if s.family == family])
    worst_median, least_within = GUARDS[family]
    assert summary.runs >= 2
    assert summary.median_abs <= worst_median, f"{family}: median error {summary.median_abs:.3f}"
    assert summary.within >= least_within, f"{family}: {summary.within:.0%} within 25 %"


def test_pretraining_holdout_is_within_the_calibrated_accuracy(scored: list[Scored]) -> None:
    pre = groups(scored)["pre-training"]
    # 8.3 %, 89 % within 25 % over 47 since torchao's H100 / MI300X runs (+28.8 / +63.3 %) and
    # TinyLlama's (-1.4 %) were added; 7.9 %, 93 % over the 44 before; 5.9 %, 91 % with selective
    # checkpointing's recompute counted
    before = summarize(
        [s for s in scored if not s.finetune and s.family not in ("NVIDIA/dgxc-benchmarking", BRIDGE)]
    )
    assert before.runs >= 8 and before.median_abs <= 0.065 and before.within >= 0.9
    # 12.0 %, 77 % within 25 %, +7.5 % signed over 71 with the 24 Blackwell pre-training runs (GB200
    # +21 .. +48 % on 340-405B, 8B -4 .. -15 %: tests/test_blackwell_throughput.py), scored with nothing
    # changed: this guard follows the total
    assert pre.runs >= 71 and pre.median_abs <= 0.125 and pre.within >= 0.77


def test_fine_tuning_rows_over_every_unseen_family_meet_the_issue_target(scored: list[Scored]) -> None:
    """Issue 33's target: a median fine-tuning error <= 15 % on unseen sources, over every holdout
    family (EXCLUDED_FAMILIES, empty today, would name one whose setup the inputs cannot express).
    11.6 % / 74 % over 125 with the DGX Cloud benchmarking recipes' 20 NeMo runs (8B -29 .. -44 %, 70B
    -12 .. +5 %), first scored with nothing changed (tests/test_dgxc_benchmarking_throughput.py);
    10.2 % / 80 % over 105 with ml-engineering's two ZeRO-2 runs (-15.5 / +5.4 %) and axolotl's two
    Llama 4 Scout QLoRA runs (+141 / +597 %), first scored with nothing changed
    (tests/test_ml_engineering_axolotl_throughput.py);
    10.1 % / 81 % over 101 runs with the HF blog's two full fine-tuning runs, first scored with nothing
    changed (tests/test_ao_tinyllama_hf_blog_throughput.py; they land above the old median of 9.5 %);
    9.5 % / 81 % within 25 % over 99 runs since the RTX PRO 6000 borrows Hopper's efficiency scaled by
    its measured sustained matmul rate (tests/test_power_bound_gemm.py; universal-llm-trainer's twelve
    runs on it +60.9 % -> +22.2 %); 11.6 % / 75 % with NeMo Automodel's six LoRA runs on DGX-H100, first
    scored with nothing changed (tests/test_nemo_automodel_throughput.py; the 93 before have no run
    between 9.5 % and 11.0 %, where the median moves to); 9.5 % / 73 % over 93 since the gradient clip's rescale is counted
    (throughput_recipe.clip_grad_bytes; PEFT's full run +31.7 % -> +24.9 %); 9.5 % / 72 % with
    PEFT's five MetaMathQA runs (first scored:
    tests/test_peft_method_comparison_throughput.py); 10.3 % / 72 % over 88 since hf QLoRA's fp32 residual stream is counted
    (models/throughput_fp32_stream.py, read from the code after fms-acceleration's one-GPU QLoRA runs
    missed by +23 %) and the rows' adapters are read from their notes (fms-acceleration's q, k, v, o:
    ``qkvo``, no longer ``all``); 11.8 % with those runs first scored, nothing changed for them
    (tests/test_fms_acceleration_throughput.py); 14.2 % over the 65 before
    them; 111 % over the first 60 before universal-llm-trainer's runs were read as they
    ran (SDPA with a padding mask, QLoRA loaded in fp32: models/throughput_attention.py), 16.0 % over
    65 before PEFT's fp32 adapters under bf16-true were counted (models/throughput_adapters.py)."""
    from gpuprice.models.calibration.throughput_band_table import EXCLUDED_FAMILIES

    rows = [s for s in scored if s.finetune and s.family not in EXCLUDED_FAMILIES]
    summary = summarize(rows)
    assert summary.runs >= 88 and len({s.family for s in rows}) >= 6
    assert summary.median_abs <= 0.15 and summary.within >= 0.6  # the target
    # 10.1 % / 81 % over 101 with the HF blog's two Granite-7B runs (+10.1 / +12.8 %), first scored;
    # 10.2 % / 80 % over 105 with ml-engineering's and axolotl's four; 11.6 % / 74 % over 125 with
    # the DGX Cloud benchmarking recipes' twenty (the twelve 8B runs beyond 28 %)
    assert summary.median_abs <= 0.12 and summary.within >= 0.74  # guard just above what is achieved


def test_fine_tuning_rows_of_the_framework_families_stay_where_they_were(scored: list[Scored]) -> None:
    """ms-swift, VectorLM and XTuner (flash attention, packed or fixed-length batches): 6.5 %, 92 %
    within 25 % over 26 runs, unchanged by the masked-SDPA and fp32 terms."""
    families = {"modelscope/ms-swift", "VectorInstitute/vectorlm", "InternLM/xtuner"}
    summary = summarize([s for s in scored if s.finetune and s.family in families])
    assert summary.runs >= 26
    assert summary.median_abs <= 0.07 and summary.within >= 0.9  # guard just above what is achieved


def test_a_row_stating_pure_bf16_is_read_as_bf16_true() -> None:
    """VectorLM casts the model to bf16 and runs torch AdamW on it (profiling/benchmark.py L342,
    L386 @9045f08): its rows say bf16-true, read with 16-bit optimizer states (half the step's
    bytes of the same row read as mixed precision)."""
    from gpuprice.models.calibration.throughput_rows import benchmark_case

    rows = [r for r in load_benchmark_rows(str(HOLDOUT_CSV)) if family_of(r) == "VectorInstitute/vectorlm"]
    assert len(rows) == 18 and {r["precision"] for r in rows} == {"bf16-true"}
    pure = benchmark_case(rows[0])
    mixed = benchmark_case({**rows[0], "precision": "bf16"})
    assert pure.precision == "bf16-true" and mixed.precision == "bf16-mixed"
    assert pure.optimizer_bytes == pytest.approx(mixed.optimizer_bytes / 2)


def test_universal_llm_trainer_rows_are_read_as_they_ran() -> None:
    """Its --gpu_test keeps the real sample's padding mask with transformers' default SDPA at batch 2
    (attention sdpa: masked, memory-efficient kernel), loads full/LoRA in bf16 without autocast
    (bf16-true) and QLoRA in fp32 with bf16 4-bit compute (fp32: attention in fp32)."""
    from gpuprice.models.calibration.throughput_rows import benchmark_case

    rows = [
        r for r in load_benchmark_rows(str(HOLDOUT_CSV)) if family_of(r) == "ljm565/universal-llm-trainer"
    ]
    assert len(rows) == 34 and {r["attention"] for r in rows} == {"sdpa"}
    for row in rows:
        case = benchmark_case(row)
        assert case.masked_heads > 0 and case.micro_batch == 2
        assert case.precision == ("fp32" if case.method == "qlora" else "bf16-true")
        assert case.fp32_attention == (case.method == "qlora")


def test_vectorlm_lora_adapters_are_cast_to_bf16_with_the_model() -> None:
    """VectorLM calls model.bfloat16() after the LoRA wrap (profiling/benchmark.py L342 @9045f08):
    its adapters are bf16, so its bf16-true LoRA rows carry no fp32-adapter traffic, while
    universal-llm-trainer's (bf16 load, then PEFT 0.14's fp32 adapters) do."""
    from gpuprice.models.calibration.throughput_rows import benchmark_case

    rows = load_benchmark_rows(str(HOLDOUT_CSV))
    vectorlm = [benchmark_case(r) for r in rows if family_of(r) == "VectorInstitute/vectorlm"]
    assert {c.adapter_bytes for c in vectorlm if c.method == "lora"} == {0.0}
    trainer = [benchmark_case(r) for r in rows if family_of(r) == "ljm565/universal-llm-trainer"]
    assert all(c.adapter_bytes > 0 for c in trainer if c.method == "lora")
    assert all(c.adapter_bytes == 0 for c in trainer if c.method != "lora")  # full; QLoRA is fp32
