"""Catalog rows and aliases for ids commonly fine-tuned that the catalog lacked (a measured-run CSV
naming one made a whole ``fit --batch`` / ``estimate --batch`` exit 2), and for the most frequent
ids of public fine-tuning example configs.

Rows (each ``source`` names the pinned file @ full commit its shape was read from; most are Hugging
Face pages in the stored docs corpus, read as blame / blob / tree views at a commit):
DeepSeek-R1-Distill-Qwen-1.5B (a bitsandbytes re-upload's config @0e5a729d; untied, unlike
Qwen2.5-1.5B: the official 3.55 GB bf16 file is the untied 1.78B), Qwen1.5-4B (the -Chat config
@4cd30db7), Qwen1.5-32B (MLP 27392, not Qwen2.5-32B's 27648; a copy read from the official snapshot
@cefef80d), Qwen2-57B-A14B (official config @759c0d83; the leaderboard's 57.409B is exact), Yi-1.5-9B
(official @848fb0c9; Yi-9B an alias), Granite 3.1 2B / 8B (the 3.1 card table @e16343c6 and the 8B
config @96fedcdf; Granite 3.0 2B / 8B aliases), StarCoder2-3B (tied, commit 8c5d79c2) and -15B
(untied, @1b425dd4), Codestral-22B-v0.1 (an AWQ export of its transformers conversion @fd2bc9d7),
DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config_671B.json @9b4e9788 and maxtext's HF config
@e591f30c; 671B without the 14B MTP module, 37B active; V3-Base, R1, R1-Zero aliases).
``fit --config`` on that HF config reads deepseek_v3 to the row's counts (tested below).

Aliases (a pinned copy of the alias's own config, or its card's figures, shows the base row's shape):
DeepSeek-R1-Distill-Qwen-7B -> Qwen2.5-7B (vocab 152064, untied, as Qwen2.5-Math-7B), Yi-1.5-6B(-Chat)
-> Yi-6B, Yi-1.5-34B(-Chat) -> Yi-34B, Hermes-3-Llama-3.1-8B / -70B -> Llama 3.1 (the ChatML tokens
reuse Llama 3's reserved ids: vocab 128256 as Llama 3.1, not grown), gemma-1.1-7b-it -> gemma-7b,
Qwen3-4B-Instruct-2507 -> Qwen3-4B, Qwen3-30B-A3B-Instruct-2507 / -Thinking-2507 -> Qwen3-30B-A3B.

Survey: model-loading fields (axolotl base_model, LLaMA-Factory model_name_or_path, torchtune 'tune
download', trl / ms-swift --model / model_name_or_path / from_pretrained, unsloth model_name) in
axolotl examples/ @067b021c, LLaMA-Factory examples/ @ff6d4d12, torchtune recipes/configs/ @bd2a0fc7,
trl examples/ + docs/source/ @f2cd5771, unslothai/notebooks python_scripts/ @bdda2efc and ms-swift
examples/ @3602360a; one count per file; ties at the 40th place (7 files) broken alphabetically.
27 of the 40 resolved before, 29 after (SURVEY_TOP40); the rows of
tests/test_catalog_multimodal_hybrid.py (Qwen3.5-35B-A3B, Llama-3.2-11B-Vision) make 31.

Left out (no shape is guessed):
- google/gemma-1.1-2b-it: copies of its config found only at 'main' (no pinned commit) or with 2 added
  tokens (vocab 256002).
- The survey's vision / omni / hybrid models, Gemma 4, functiongemma-270m and Muse-Glimmer-30B: see
  tests/test_catalog_multimodal_hybrid.py (language-model rows for Qwen3.5-35B-A3B and
  Llama-3.2-11B-Vision; the others left out there, each with its reason).
- Qwen/Qwen2.5-Math-1.5B / -7B: litgpt gives the blocks but not whether the head is tied.
- deepseek-ai/DeepSeek-R1-0528 / DeepSeek-V3-0324: the config excerpts found leave out the vocabulary.
- Granite 3.0 8B's own config was not found pinned: its alias rests on the 3.0 card (8.1B), a
  fine-tune of granite-3.0-8b-base with the same blocks (5 added tokens) and the unpinned shape in
  tests/test_hf_config_real.py (vocab 49155, tied), which the row's count matches (tested below).
"""

from __future__ import annotations

import pytest

from gpuprice.models.architectures import catalog, find_model
from gpuprice.models.hf_config import arch_from_config
from tests.test_hf_config_real import CASES

NEW_IDS = [
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
    "Qwen/Qwen1.5-4B",
    "Qwen/Qwen1.5-32B",
    "Qwen/Qwen2-57B-A14B",
    "01-ai/Yi-1.5-9B",
    "ibm-granite/granite-3.1-2b-base",
    "ibm-granite/granite-3.1-8b-instruct",
    "bigcode/starcoder2-3b",
    "bigcode/starcoder2-15b",
    "mistralai/Codestral-22B-v0.1",
    "deepseek-ai/DeepSeek-V3",
]

ALIASES = [
    ("Qwen/Qwen1.5-4B-Chat", "Qwen/Qwen1.5-4B"),
    ("Qwen/Qwen1.5-32B-Chat", "Qwen/Qwen1.5-32B"),
    ("Qwen/Qwen2-57B-A14B-Instruct", "Qwen/Qwen2-57B-A14B"),
    ("01-ai/Yi-9B", "01-ai/Yi-1.5-9B"),
    ("ibm-granite/granite-3.0-2b-instruct", "ibm-granite/granite-3.1-2b-base"),
    ("ibm-granite/granite-3.0-8b-instruct", "ibm-granite/granite-3.1-8b-instruct"),
    ("deepseek-ai/DeepSeek-V3-Base", "deepseek-ai/DeepSeek-V3"),
    ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3"),
    ("deepseek-ai/DeepSeek-R1-Zero", "deepseek-ai/DeepSeek-V3"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "Qwen/Qwen2.5-7B"),
    ("01-ai/Yi-1.5-6B", "01-ai/Yi-6B"),
    ("01-ai/Yi-1.5-6B-Chat", "01-ai/Yi-6B"),
    ("01-ai/Yi-1.5-34B", "01-ai/Yi-34B"),
    ("01-ai/Yi-1.5-34B-Chat", "01-ai/Yi-34B"),
    ("NousResearch/Hermes-3-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
    ("NousResearch/Hermes-3-Llama-3.1-70B", "meta-llama/Llama-3.1-70B"),
    ("google/gemma-1.1-7b-it", "google/gemma-7b"),
    ("Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-4B"),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-30B-A3B"),
    ("Qwen/Qwen3-30B-A3B-Thinking-2507", "Qwen/Qwen3-30B-A3B"),
]

# The ids the brief named, with the row each resolves to (-base / -instruct / -Chat through the
# catalog's suffix rule where the pair shares a shape).
REQUESTED = {
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B": "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B": "Qwen/Qwen2.5-7B",
    "Qwen/Qwen1.5-4B": "Qwen/Qwen1.5-4B",
    "Qwen/Qwen1.5-32B": "Qwen/Qwen1.5-32B",
    "Qwen/Qwen2-57B-A14B": "Qwen/Qwen2-57B-A14B",
    "01-ai/Yi-9B": "01-ai/Yi-1.5-9B",
    "01-ai/Yi-1.5-6B": "01-ai/Yi-6B",
    "01-ai/Yi-1.5-9B": "01-ai/Yi-1.5-9B",
    "01-ai/Yi-1.5-34B": "01-ai/Yi-34B",
    "01-ai/Yi-1.5-6B-Chat": "01-ai/Yi-6B",
    "01-ai/Yi-1.5-9B-Chat": "01-ai/Yi-1.5-9B",
    "01-ai/Yi-1.5-34B-Chat": "01-ai/Yi-34B",
    "ibm-granite/granite-3.0-2b-base": "ibm-granite/granite-3.1-2b-base",
    "ibm-granite/granite-3.0-2b-instruct": "ibm-granite/granite-3.1-2b-base",
    "ibm-granite/granite-3.1-2b-base": "ibm-granite/granite-3.1-2b-base",
    "ibm-granite/granite-3.1-2b-instruct": "ibm-granite/granite-3.1-2b-base",
    "ibm-granite/granite-3.0-8b-base": "ibm-granite/granite-3.1-8b-instruct",
    "ibm-granite/granite-3.0-8b-instruct": "ibm-granite/granite-3.1-8b-instruct",
    "ibm-granite/granite-3.1-8b-base": "ibm-granite/granite-3.1-8b-instruct",
    "ibm-granite/granite-3.1-8b-instruct": "ibm-granite/granite-3.1-8b-instruct",
    "bigcode/starcoder2-3b": "bigcode/starcoder2-3b",
    "bigcode/starcoder2-15b": "bigcode/starcoder2-15b",
    "NousResearch/Hermes-3-Llama-3.1-8B": "meta-llama/Llama-3.1-8B",
    "NousResearch/Hermes-3-Llama-3.1-70B": "meta-llama/Llama-3.1-70B",
    "google/gemma-1.1-7b-it": "google/gemma-7b",
    "mistralai/Codestral-22B-v0.1": "mistralai/Codestral-22B-v0.1",
    "deepseek-ai/DeepSeek-V3": "deepseek-ai/DeepSeek-V3",
    "deepseek-ai/DeepSeek-R1": "deepseek-ai/DeepSeek-V3",
}

# The survey's 40 most frequent ids (files naming each in a model-loading field; see the docstring).
SURVEY_TOP40 = [
    ("Qwen/Qwen2.5-7B-Instruct", 74),
    ("Qwen/Qwen3-0.6B", 33),
    ("Qwen/Qwen2.5-VL-3B-Instruct", 32),
    ("Qwen/Qwen2.5-VL-7B-Instruct", 27),
    ("meta-llama/Meta-Llama-3-8B-Instruct", 27),
    ("Qwen/Qwen2.5-1.5B-Instruct", 25),
    ("Qwen/Qwen3-8B", 24),
    ("Qwen/Qwen3-4B-Instruct-2507", 23),
    ("Qwen/Qwen2.5-0.5B-Instruct", 22),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", 22),
    ("Qwen/Qwen2-0.5B-Instruct", 20),
    ("Qwen/Qwen3-4B", 20),
    ("Qwen/Qwen2.5-7B", 19),
    ("unsloth/gpt-oss-20b", 19),
    ("Qwen/Qwen3.5-35B-A3B", 18),
    ("Qwen/Qwen3.5-4B", 17),
    ("Qwen/Qwen3-1.7B", 16),
    ("Qwen/Qwen2.5-0.5B", 15),
    ("meta-llama/Llama-3.2-3B-Instruct", 15),
    ("Qwen/Qwen2-1.5B-Instruct", 14),
    ("Qwen/Qwen2.5-3B-Instruct", 13),
    ("Qwen/Qwen3.5-2B", 13),
    ("meta-llama/Llama-3.2-1B-Instruct", 12),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", 12),
    ("unsloth/gemma-4-E2B-it", 12),
    ("unsloth/gpt-oss-20b-BF16", 12),
    ("meta-llama/Llama-2-7b-hf", 11),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", 10),
    ("meta-llama/Llama-3.2-1B", 10),
    ("mistralai/Mistral-7B-v0.1", 10),
    ("Qwen/Qwen2.5-Omni-7B", 9),
    ("unsloth/Llama-3.2-3B-Instruct", 9),
    ("unsloth/Muse-Glimmer-30B-unsloth-bnb-4bit", 9),
    ("unsloth/gemma-4-12b-it", 9),
    ("unsloth/llama-3-8b-bnb-4bit", 9),
    ("unsloth/mistral-7b-v0.3", 9),
    ("unsloth/functiongemma-270m-it", 8),
    ("NousResearch/Llama-2-7b-hf", 7),
    ("NousResearch/Llama-3.2-1B", 7),
    ("Qwen/Qwen2.5-3B", 7),
]
SURVEY_ADDED = {
    "Qwen/Qwen3-4B-Instruct-2507": "Qwen/Qwen3-4B",
    "Qwen/Qwen3-30B-A3B-Instruct-2507": "Qwen/Qwen3-30B-A3B",
    "unsloth/Qwen3-4B-Instruct-2507": "Qwen/Qwen3-4B",  # the survey's 62nd (6 unsloth notebooks)
}


@pytest.mark.parametrize(("name", "model_id"), sorted(REQUESTED.items()))
def test_requested_ids_resolve(name: str, model_id: str) -> None:
    assert find_model(name) == catalog()[model_id].arch


@pytest.mark.parametrize(("name", "model_id"), sorted(SURVEY_ADDED.items()))
def test_surveyed_ids_added_here_resolve(name: str, model_id: str) -> None:
    assert find_model(name) == catalog()[model_id].arch


def test_survey_top40_resolution_count() -> None:
    """27 of the 40 resolved before this change; the two 2507 aliases make 29, and the rows of
    tests/test_catalog_multimodal_hybrid.py 31."""
    assert len(SURVEY_TOP40) == 40
    assert sum(find_model(name) is not None for name, _ in SURVEY_TOP40) >= 31


def test_shapes_that_differ_from_their_lookalikes() -> None:
    """The 1.5B distill unties the Qwen2.5-1.5B head; Qwen1.5-32B's MLP is narrower than
    Qwen2.5-32B's; StarCoder2-3B ties and -15B unties; Hermes 3 keeps Llama 3.1's vocabulary."""
    distill = catalog()["deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"].arch
    qwen25 = catalog()["Qwen/Qwen2.5-1.5B"].arch
    assert not distill.tied_embeddings and qwen25.tied_embeddings
    assert distill.n_params - qwen25.n_params == distill.vocab_size * distill.hidden_size
    assert catalog()["Qwen/Qwen1.5-32B"].arch.intermediate_size == 27392
    assert catalog()["Qwen/Qwen2.5-32B"].arch.intermediate_size == 27648
    assert catalog()["bigcode/starcoder2-3b"].arch.tied_embeddings
    assert not catalog()["bigcode/starcoder2-15b"].arch.tied_embeddings
    hermes = find_model("NousResearch/Hermes-3-Llama-3.1-8B")
    assert hermes is not None and hermes.vocab_size == 128256


def test_deepseek_v3_row_agrees_with_the_config_reader() -> None:
    """The reader reads deepseek_v3 (MLA with a q latent, 3 dense blocks, 256 + 1 experts) to the
    row's counts; both leave the MTP module out (671B main model, 37B active). The shape fields are
    tests/test_hf_config_real.py's case, which AI-Hypercomputer/maxtext
    src/maxtext/checkpoint_conversion/utils/hf_model_configs.py @e591f30cbbf217ed67ef71263ec0538239f9c3b8
    (deepseek3_671b_dict) repeats in every field the reader reads (the row's pinned source)."""
    case = next(c for c in CASES if c.repo == "deepseek-ai/DeepSeek-V3")
    read = arch_from_config(case.config, "deepseek-ai/DeepSeek-V3/config.json")
    entry = catalog()["deepseek-ai/DeepSeek-V3"]
    assert read.n_params == entry.arch.n_params
    assert read.n_active_params == entry.arch.n_active_params
    assert entry.published_active_params_b is not None
    assert entry.arch.n_active_params / 1e9 == pytest.approx(entry.published_active_params_b, rel=0.02)


@pytest.mark.parametrize(
    "repo", ["deepseek-ai/DeepSeek-V3", "ibm-granite/granite-3.0-8b-base", "bigcode/starcoder2-15b"]
)
def test_rows_agree_with_the_config_readers_real_cases(repo: str) -> None:
    """tests/test_hf_config_real.py holds these repositories' config.json shapes (read at 'main'):
    the rows they resolve to count the same parameters (Granite 3.0 8B: the 3.1 row's)."""
    case = next(c for c in CASES if c.repo == repo)
    read = arch_from_config(case.config, f"{repo}/config.json")
    arch = find_model(repo)
    assert arch is not None
    assert (read.n_params, read.n_active_params) == (arch.n_params, arch.n_active_params)


def test_qwen2_moe_active_parameters() -> None:
    entry = catalog()["Qwen/Qwen2-57B-A14B"]
    assert entry.published_active_params_b is not None
    assert entry.arch.n_active_params / 1e9 == pytest.approx(entry.published_active_params_b, rel=0.02)
    assert entry.arch.n_active_params < entry.arch.n_params
