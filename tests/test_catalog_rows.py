"""The checks every catalog-row test file shares, run once over all of them, and every catalog
row through both models.

Each test_catalog_* file lists the rows it added (``NEW_IDS``) and the aliases it cites
(``ALIASES``), with the evidence for each in its docstring; tests/catalog_checks.py holds the
checks. Every row's parameter count against its published total runs over the whole catalog in
tests/test_architectures.py."""

from __future__ import annotations

import json
import math

import pytest
import test_catalog_common_ids as common_ids
import test_catalog_derivatives as derivatives
import test_catalog_finetunes as finetunes
import test_catalog_multimodal_hybrid as multimodal_hybrid
from catalog_checks import assert_alias_resolves_to, assert_rows_cite_a_pinned_source

from gpuprice.models.architectures import catalog
from gpuprice.models.memory import TrainingSetup, estimate_memory
from gpuprice.models.throughput import predict_throughput

FILES = (common_ids, derivatives, finetunes, multimodal_hybrid)
NEW_IDS = sorted({model_id for f in FILES for model_id in f.NEW_IDS})
ALIASES = sorted({pair for f in FILES for pair in getattr(f, "ALIASES", [])})


def test_added_rows_cite_a_pinned_source() -> None:
    assert len(NEW_IDS) == sum(len(set(f.NEW_IDS)) for f in FILES)  # no row claimed twice
    assert_rows_cite_a_pinned_source(NEW_IDS)


@pytest.mark.parametrize(("name", "model_id"), ALIASES)
def test_aliases_resolve_to_their_base_and_cite_a_pinned_source(name: str, model_id: str) -> None:
    assert_alias_resolves_to(name, model_id)


@pytest.mark.parametrize("model_id", list(catalog()))
def test_every_row_answers_both_models(model_id: str) -> None:
    """LoRA at 2,048 tokens on one H100: a finite peak above the weights, a finite speed."""
    arch = catalog()[model_id].arch
    setup = TrainingSetup.checked(arch=arch, method="lora", seq_len=2048, micro_batch=1)
    memory = estimate_memory(setup)
    assert math.isfinite(memory.per_gpu_gb) and memory.per_gpu_gb > arch.n_params * 2 / 1e9
    speed = predict_throughput(arch, "lora", "h100-sxm", seq_len=2048)
    assert math.isfinite(speed.tokens_per_sec_per_gpu) and speed.tokens_per_sec_per_gpu > 0


@pytest.mark.parametrize(
    "model_id",
    [
        # names as measured runs and users write them: ids, aliases and -Instruct / -it forms
        "mistralai/Mistral-Small-24B-Instruct-2501",
        "tiiuae/Falcon3-7B-Base",
        "meta-llama/Llama-Guard-3-8B",
        "allenai/tulu-2-7b",
        "lmsys/vicuna-7b-v1.3",
        "huggyllama/llama-7b",
        "codellama/CodeLlama-34b-hf",
        "Qwen/Qwen1.5-MoE-A2.7B",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
        "Qwen/Qwen2-57B-A14B",
        "ibm-granite/granite-3.1-8b-instruct",
        "NousResearch/Hermes-3-Llama-3.1-8B",
        "deepseek-ai/DeepSeek-R1",
        "Qwen/Qwen3.5-35B-A3B",
        "meta-llama/Llama-3.2-11B-Vision-Instruct",
        "google/gemma-4-26B-A4B-it",
        "Qwen/Qwen2-VL-2B-Instruct",
    ],
)
def test_fit_lora_answers_through_the_command_line(cli, model_id: str) -> None:
    result = cli("fit", "--model", model_id, "--method", "lora", "--gpu", "h100-sxm", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["gpu"] == "h100-sxm"
