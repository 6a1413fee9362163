"""Catalog rows for the open models fine-tuned most in 2025-2026 (Qwen3, Gemma 3, gpt-oss, Phi-4,
OLMo 2, Mistral NeMo, ...): each row reproduces a config.json read in a pinned public file (its
``source`` names the repository path @ full commit, or the GitHub thread that quotes it) and its
parameter count meets the published total (tests/test_architectures.py checks every row against
``published_params_b`` within 2 %).

Left out, because no copy of their config.json was found in a citable public file (no shape is
guessed): swiss-ai/Apertus-8B, arcee-ai/AFM-4.5B, ByteDance-Seed/Seed-OSS-36B-Base,
tencent/Hunyuan-0.5B, XiaomiMiMo/MiMo-7B (also carries a multi-token-prediction block ModelArch has no
field for), katanemo/Plano-Orchestrator-4B, mistralai/Mistral-Small-24B-Base-2501, the
Devstral-Small-2505 / Magistral-Small-2506 aliases (only Devstral-Small-2507's config was read),
HuggingFaceTB/SmolLM2-1.7B (tie_word_embeddings not seen), DeepSeek-R1-Distill-Qwen-* (the
Distill-Llama-8B/70B aliases were read).
"""

from __future__ import annotations

import re

import pytest

from gpuprice.models.architectures import catalog, find_model
from gpuprice.models.hf_config import arch_from_config
from tests.test_hf_config_real import CASES

COMMIT = re.compile(r"@[0-9a-f]{40}\b")
THREAD = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(pull|issues)/\d+")

RECENT_IDS = [
    "Qwen/Qwen3-0.6B",
    "Qwen/Qwen3-1.7B",
    "Qwen/Qwen3-4B",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-14B",
    "Qwen/Qwen3-32B",
    "Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3-235B-A22B",
    "google/gemma-3-1b-pt",
    "google/gemma-3-4b-pt",
    "google/gemma-3-12b-pt",
    "google/gemma-3-27b-pt",
    "openai/gpt-oss-20b",
    "openai/gpt-oss-120b",
    "microsoft/phi-4",
    "microsoft/Phi-4-mini-instruct",
    "allenai/OLMo-2-1124-7B",
    "allenai/OLMo-2-1124-13B",
    "mistralai/Mistral-Nemo-Base-2407",
    "mistralai/Ministral-8B-Instruct-2410",
    "mistralai/Devstral-Small-2507",
    "HuggingFaceTB/SmolLM3-3B",
    "meta-llama/Llama-4-Scout-17B-16E",
]

# gpt-oss's card counts active parameters without the input embedding (the unembedding is counted).
ACTIVE_WITHOUT_EMBEDDING = {"openai/gpt-oss-20b", "openai/gpt-oss-120b"}


def test_recent_models_are_in_the_catalog_with_a_pinned_source() -> None:
    entries = catalog()
    missing = [m for m in RECENT_IDS if m not in entries]
    assert not missing
    for model_id in RECENT_IDS:
        source = entries[model_id].source
        assert COMMIT.search(source) or THREAD.search(source), model_id


@pytest.mark.parametrize("model_id", [m for m in RECENT_IDS if catalog()[m].arch.is_moe])
def test_moe_active_parameters_match_the_cards(model_id: str) -> None:
    entry = catalog()[model_id]
    arch = entry.arch
    assert entry.published_active_params_b is not None
    active = arch.n_active_params - (arch.embedding_params if model_id in ACTIVE_WITHOUT_EMBEDDING else 0)
    assert active / 1e9 == pytest.approx(entry.published_active_params_b, rel=0.02)
    assert arch.n_active_params < arch.n_params


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        ("Qwen/Qwen3-8B-Base", "Qwen/Qwen3-8B"),
        ("Qwen3-0.6B-Base", "Qwen/Qwen3-0.6B"),
        ("Qwen/Qwen3-30B-A3B-Base", "Qwen/Qwen3-30B-A3B"),
        ("google/gemma-3-4b-it", "google/gemma-3-4b-pt"),
        ("google/gemma-3-27b-it", "google/gemma-3-27b-pt"),
        ("mistralai/Mistral-Nemo-Instruct-2407", "mistralai/Mistral-Nemo-Base-2407"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "meta-llama/Llama-3.1-8B"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "meta-llama/Llama-3.3-70B-Instruct"),
        ("HuggingFaceTB/SmolLM3-3B-Base", "HuggingFaceTB/SmolLM3-3B"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Scout-17B-16E"),
    ],
)
def test_aliases_resolve_to_their_base(name: str, model_id: str) -> None:
    assert find_model(name) == catalog()[model_id].arch


_REAL_CASES = {case.repo: case for case in CASES}


@pytest.mark.parametrize("model_id", [m for m in RECENT_IDS if m in _REAL_CASES])
def test_catalog_row_agrees_with_the_config_reader(model_id: str) -> None:
    """The same model read from its config.json shape (tests/test_hf_config_real.py) counts the
    same parameters (the reader leaves gpt-oss's o_proj / expert biases out: < 0.01 %)."""
    read = arch_from_config(_REAL_CASES[model_id].config, f"{model_id}/config.json")
    row = catalog()[model_id].arch
    assert read.n_params == pytest.approx(row.n_params, rel=0.001)
    assert read.n_active_params == pytest.approx(row.n_active_params, rel=0.001)
    for field in ("hidden_size", "num_layers", "num_heads", "num_kv_heads", "head_dim", "vocab_size"):
        assert getattr(read, field) == getattr(row, field), field
    assert (read.tied_embeddings, read.num_experts, read.experts_per_token) == (
        row.tied_embeddings,
        row.num_experts,
        row.experts_per_token,
    )
