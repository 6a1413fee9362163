"""Catalog rows and aliases for common fine-tuning bases and derivatives that measured runs name by
their Hugging Face repo id (LLaMA-1 as huggyllama, Code Llama, Vicuna, Zephyr, OpenHermes, SOLAR,
Yi, DeepSeek LLM / Coder, Qwen1.5-MoE, Phi-3.5-mini). Each row reproduces a config.json read in a
pinned public file (its ``source`` names the repository path @ full commit): mlc-ai/mlc-llm's model
presets, RahulSChand/gpu_poor's all_configs.json (trimmed config.json copies keyed by repo id) and
leliuga/cohere-configurations' manifests (the config section of each GGUF conversion, with the
original repo as parent_id). An alias is added only where such a copy of its own config has the base
row's shapes; the base row's ``note`` cites it. tests/test_architectures.py checks every row's count
against ``published_params_b`` within 2 %.

Qwen2.5-Coder-0.5B ... 32B, QwQ-32B(-Preview) and Qwen2.5-7B / 14B-Instruct-1M are aliases of the
Qwen2.5 rows on their model cards' evidence (ZHUI/paddlenlp_model_readme
@40a7101e89dcf9a0dedb0e0d48c8c357fcc95996, copies of the cards): each card states the same total and
non-embedding parameters, layers and query / key-value heads as the Qwen2.5 card of that size, which
fixes the shape (the two totals fix the embedding, the rest the blocks); DeepSeek-R1-Distill-Qwen-14B /
-32B are fine-tunes of Qwen2.5-14B / -32B (the R1 card's "Base Model" column in the same copy).

Left out, because no copy of their config.json was found in a citable public file (no shape is
guessed): 01-ai/Yi-9B, Yi-1.5-6B / 9B / 34B; DeepSeek-R1-Distill-Qwen-1.5B / 7B (fine-tunes of
Qwen2.5-Math-1.5B / 7B, whose cards give no shape; the Math-1.5B does not tie its head as Qwen2.5-1.5B
does); Qwen2.5-Math-7B; Qwen1.5-4B / 32B and Qwen2-57B-A14B; NousResearch/Hermes-3-Llama-3.1-8B;
nvidia/Llama-3.1-Nemotron-70B-Instruct-HF; mistralai/Mistral-Small-24B-Base-2501 (as in
tests/test_catalog_recent.py), Mistral-Large-Instruct-2407, Codestral-22B-v0.1; google/gemma-1.1-7b-it,
google/codegemma-7b; tiiuae/Falcon3-1B / 3B / 7B / 10B-Base. Qwen/Qwen1.5-1.8B: its config was read
(mlc-llm's 'qwen2' preset, the -Chat config, tie_word_embeddings true: 1.53B), but the only published
total found (the Hub's 1.84B) counts an untied head, so the row is left out rather than given a count
that contradicts its config. microsoft/Phi-3-medium-4k-instruct was already in the catalog.
"""

from __future__ import annotations

import pytest
from catalog_checks import (
    COMMIT,
)

from gpuprice.models.architectures import catalog, find_model
from gpuprice.models.hf_config import arch_from_config
from tests.test_hf_config_real import CASES

NEW_IDS = [
    "huggyllama/llama-7b",
    "huggyllama/llama-13b",
    "huggyllama/llama-30b",
    "huggyllama/llama-65b",
    "codellama/CodeLlama-7b-hf",
    "codellama/CodeLlama-13b-hf",
    "codellama/CodeLlama-34b-hf",
    "teknium/OpenHermes-2.5-Mistral-7B",
    "upstage/SOLAR-10.7B-v1.0",
    "01-ai/Yi-6B",
    "deepseek-ai/deepseek-llm-7b-base",
    "deepseek-ai/deepseek-llm-67b-base",
    "deepseek-ai/deepseek-coder-6.7b-base",
    "Qwen/Qwen1.5-MoE-A2.7B",
]

ALIASES = [
    ("lmsys/vicuna-7b-v1.5", "meta-llama/Llama-2-7b-hf"),
    ("lmsys/vicuna-13b-v1.5", "meta-llama/Llama-2-13b-hf"),
    ("HuggingFaceH4/zephyr-7b-beta", "mistralai/Mistral-7B-v0.1"),
    ("microsoft/Phi-3.5-mini-instruct", "microsoft/Phi-3-mini-4k-instruct"),
    ("upstage/SOLAR-10.7B-Instruct-v1.0", "upstage/SOLAR-10.7B-v1.0"),
    ("deepseek-ai/deepseek-llm-7b-chat", "deepseek-ai/deepseek-llm-7b-base"),
    ("deepseek-ai/deepseek-llm-67b-chat", "deepseek-ai/deepseek-llm-67b-base"),
    ("deepseek-ai/deepseek-coder-6.7b-instruct", "deepseek-ai/deepseek-coder-6.7b-base"),
]


def test_code_llama_keeps_its_own_vocabulary() -> None:
    """Code Llama 7B/13B carry 16 infilling tokens (vocab 32016), so they are not Llama 2 aliases;
    the 34B has none (vocab 32000) but 8 K/V heads."""
    assert catalog()["codellama/CodeLlama-7b-hf"].arch.vocab_size == 32016
    assert catalog()["codellama/CodeLlama-13b-hf"].arch.vocab_size == 32016
    big = catalog()["codellama/CodeLlama-34b-hf"].arch
    assert (big.vocab_size, big.num_kv_heads) == (32000, 8)
    assert catalog()["teknium/OpenHermes-2.5-Mistral-7B"].arch.vocab_size == 32002


def test_qwen15_moe_row_agrees_with_the_config_reader() -> None:
    """The same model's config.json shape in tests/test_hf_config_real.py counts the same
    parameters, and the row meets the card's 2.7B activated."""
    case = next(c for c in CASES if c.repo == "Qwen/Qwen1.5-MoE-A2.7B")
    read = arch_from_config(case.config, "Qwen/Qwen1.5-MoE-A2.7B/config.json")
    entry = catalog()["Qwen/Qwen1.5-MoE-A2.7B"]
    assert read.n_params == entry.arch.n_params and read.n_active_params == entry.arch.n_active_params
    assert entry.published_active_params_b is not None
    assert entry.arch.n_active_params / 1e9 == pytest.approx(entry.published_active_params_b, rel=0.02)


# Card figures (ZHUI/paddlenlp_model_readme @40a7101e, Qwen/<name>/index.md): total and non-embedding
# parameters (B), stated identically on the Qwen2.5, Qwen2.5-Coder (and QwQ) cards of each size.
QWEN25_CARDS = {
    "Qwen/Qwen2.5-0.5B": (0.49, 0.36, ["Qwen/Qwen2.5-Coder-0.5B", "Qwen/Qwen2.5-Coder-0.5B-Instruct"]),
    "Qwen/Qwen2.5-1.5B": (1.54, 1.31, ["Qwen/Qwen2.5-Coder-1.5B", "Qwen/Qwen2.5-Coder-1.5B-Instruct"]),
    "Qwen/Qwen2.5-3B": (3.09, 2.77, ["Qwen/Qwen2.5-Coder-3B-Instruct"]),
    "Qwen/Qwen2.5-7B": (7.61, 6.53, ["Qwen/Qwen2.5-Coder-7B", "Qwen/Qwen2.5-7B-Instruct-1M"]),
    "Qwen/Qwen2.5-14B": (
        14.7,
        13.1,
        [
            "Qwen/Qwen2.5-Coder-14B-Instruct",
            "Qwen/Qwen2.5-14B-Instruct-1M",
            "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
        ],
    ),
    "Qwen/Qwen2.5-32B": (
        32.5,
        31.0,
        [
            "Qwen/Qwen2.5-Coder-32B",
            "Qwen/QwQ-32B",
            "Qwen/QwQ-32B-Preview",
            "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
        ],
    ),
}


@pytest.mark.parametrize("base", QWEN25_CARDS)
def test_qwen25_derivatives_share_the_shape_their_cards_state(base: str) -> None:
    """The row meets both card figures to their rounding (the cards print 14.77B as "14.7B" and
    32.76B as "32.5B"; the non-embedding count leaves out the embedding and, where untied, the
    head), and every derivative the cards list resolves to that row."""
    total, non_embedding, derivatives = QWEN25_CARDS[base]
    arch = find_model(base)
    assert arch is not None
    head = 0 if arch.tied_embeddings else arch.embedding_params
    assert arch.n_params / 1e9 == pytest.approx(total, rel=0.01)
    assert (arch.n_params - arch.embedding_params - head) / 1e9 == pytest.approx(non_embedding, rel=0.01)
    for name in derivatives:
        assert find_model(name) == arch, name
    assert COMMIT.search(catalog()[base].note or "")
