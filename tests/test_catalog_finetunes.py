"""Catalog rows and aliases for fine-tunes and releases that measured runs name by Hugging Face repo id
(Mistral Small 3 / Large 2, Code Llama 70B, Falcon3, Llama Guard 3, Nemotron-70B, CodeGemma, Vicuna
v1.3, Tulu 2, OpenHermes 2, Dolphin 2.x, Zephyr alpha). Each row reproduces a config.json read in a
pinned public file (its ``source`` names the repository path @ full commit: Lightning-AI/litgpt's
config list, a copy of the Mistral-Small-24B-Instruct-2501 repository in OpenMOSE/RWKV-LM-RLHF,
leliuga/cohere-configurations' GGUF manifests, RahulSChand/gpu_poor's all_configs.json). An alias rests
on a pinned copy of its own config with the base row's shapes, or on its model card stating it is a
fine-tune of the base (Llama Guard 3: "a Llama-3.1-8B pretrained model, fine-tuned", card copy in
ZHUI/paddlenlp_model_readme @40a7101e89dcf9a0dedb0e0d48c8c357fcc95996). Fine-tunes that added tokens
(OpenHermes 2, Dolphin 2.1 / 2.2.1: vocab 32002) are aliases of the OpenHermes-2.5 row, which has that
vocabulary, not of Mistral-7B.

Falcon3 totals are the Hugging Face pages' safetensors sizes; litgpt's entry does not say whether the
head is tied and only the untied count meets them. Mistral-Large-Instruct-2407 meets the card's "123B"
and CodeLlama-70b-hf the paper's "70B" (the count is 68.98B, 1.5 % below; the paper rounds).

Left out (no shape is guessed):
- NousResearch/Hermes-3-Llama-3.1-8B / -70B: card copies (git-thinh/ai-docs) give base_model
  Meta-Llama-3.1-8B but also say ChatML "special tokens were added"; no pinned config.json shows whether
  the vocabulary grew. NousResearch/Hermes-2-Pro-Llama-3-8B, cognitivecomputations/dolphin-2.9-llama3-8b:
  no pinned config or card copy found. cognitivecomputations/dolphin-2.6-mistral-7b: its manifest gives
  vocab 32001 (one added token), which no row has; not added for want of a published total.
- google/gemma-1.1-7b-it / -2b-it: no pinned card copy or config found (the Gemma 1.1 card is not in the
  paddlenlp copies).
- mistralai/Codestral-22B-v0.1: the card copies found state no shape; no config copy pinned.
- ibm-granite/granite-3.x-2b / 8b: the granite-3.1-language-models README @336bd555 gives no shapes; no
  config copy pinned.
- 01-ai/Yi-9B, Yi-1.5-6B / 9B / 34B; Qwen/Qwen1.5-4B / 32B, Qwen2-57B-A14B (the cards in the paddlenlp
  copies give only "57B / 14B activated", no shapes); stabilityai/stablelm-2-12b; internlm/internlm2-20b;
  tiiuae/falcon-11B; HuggingFaceH4/mistral-7b-sft-beta: no pinned config copy found.
- bigcode/starcoder2-3b / 15b: NVIDIA/NeMo's Starcoder2Config3B / 15B give the shapes but set
  share_embeddings_and_output_weights False for all sizes, while the 7B checkpoint ties (its row); whether
  3b / 15b tie is not pinned.
- baichuan-inc/Baichuan2-13B-Base: gpu_poor's copy gives the shape (hidden 5120, 40 layers, intermediate
  13696, vocab 125696; 13.90B counted) but no published total within 2 % was found ("13B" is 6.9 % off).
- facebook/opt-125m / 350m / 2.7b / 30b, EleutherAI/gpt-neo-*: as in tests/test_catalog_classic.py.
"""

from __future__ import annotations

from gpuprice.models.architectures import catalog, find_model

NEW_IDS = [
    "mistralai/Mistral-Small-24B-Base-2501",
    "mistralai/Mistral-Large-Instruct-2407",
    "codellama/CodeLlama-70b-hf",
    "tiiuae/Falcon3-1B-Base",
    "tiiuae/Falcon3-3B-Base",
    "tiiuae/Falcon3-7B-Base",
    "tiiuae/Falcon3-10B-Base",
]

ALIASES = [
    ("mistralai/Mistral-Small-24B-Instruct-2501", "mistralai/Mistral-Small-24B-Base-2501"),
    ("mistralai/Mistral-Large-Instruct-2411", "mistralai/Mistral-Large-Instruct-2407"),
    ("codellama/CodeLlama-70b-Python-hf", "codellama/CodeLlama-70b-hf"),
    ("codellama/CodeLlama-70b-Instruct-hf", "codellama/CodeLlama-70b-hf"),
    ("tiiuae/Falcon3-1B-Instruct", "tiiuae/Falcon3-1B-Base"),
    ("tiiuae/Falcon3-3B-Instruct", "tiiuae/Falcon3-3B-Base"),
    ("tiiuae/Falcon3-7B-Instruct", "tiiuae/Falcon3-7B-Base"),
    ("tiiuae/Falcon3-10B-Instruct", "tiiuae/Falcon3-10B-Base"),
    ("meta-llama/Llama-Guard-3-8B", "meta-llama/Llama-3.1-8B"),
    ("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", "meta-llama/Llama-3.1-70B"),
    ("google/codegemma-7b-it", "google/gemma-7b"),
    ("google/codegemma-7b", "google/gemma-7b"),
    ("lmsys/vicuna-7b-v1.3", "huggyllama/llama-7b"),
    ("lmsys/vicuna-13b-v1.3", "huggyllama/llama-13b"),
    ("lmsys/vicuna-33b-v1.3", "huggyllama/llama-30b"),
    ("allenai/tulu-2-7b", "meta-llama/Llama-2-7b-hf"),
    ("allenai/tulu-2-dpo-7b", "meta-llama/Llama-2-7b-hf"),
    ("allenai/tulu-2-13b", "meta-llama/Llama-2-13b-hf"),
    ("allenai/tulu-2-dpo-13b", "meta-llama/Llama-2-13b-hf"),
    ("allenai/tulu-2-70b", "meta-llama/Llama-2-70b-hf"),
    ("allenai/tulu-2-dpo-70b", "meta-llama/Llama-2-70b-hf"),
    ("ehartford/dolphin-2.0-mistral-7b", "mistralai/Mistral-7B-v0.1"),
    ("HuggingFaceH4/zephyr-7b-alpha", "mistralai/Mistral-7B-v0.1"),
    ("teknium/OpenHermes-2-Mistral-7B", "teknium/OpenHermes-2.5-Mistral-7B"),
    ("ehartford/dolphin-2.1-mistral-7b", "teknium/OpenHermes-2.5-Mistral-7B"),
    ("ehartford/dolphin-2.2.1-mistral-7b", "teknium/OpenHermes-2.5-Mistral-7B"),
]


def test_across_organisations() -> None:
    """The dolphin repos moved from ehartford/ to cognitivecomputations/; Code Llama is also
    published under meta-llama/."""
    assert find_model("cognitivecomputations/dolphin-2.1-mistral-7b") == find_model(
        "ehartford/dolphin-2.1-mistral-7b"
    )
    assert find_model("meta-llama/CodeLlama-70b-hf") == catalog()["codellama/CodeLlama-70b-hf"].arch


def test_added_tokens_keep_their_own_vocabulary() -> None:
    """Code Llama 70B keeps its 16 infilling tokens; the ChatML fine-tunes their two added tokens."""
    assert catalog()["codellama/CodeLlama-70b-hf"].arch.vocab_size == 32016
    for name in ("teknium/OpenHermes-2-Mistral-7B", "ehartford/dolphin-2.1-mistral-7b"):
        arch = find_model(name)
        assert arch is not None and arch.vocab_size == 32002
    base = find_model("ehartford/dolphin-2.0-mistral-7b")
    assert base is not None and base.vocab_size == 32000


def test_mistral_small_matches_its_safetensors_index() -> None:
    """The index's total_size (47,144,806,400 bytes, bfloat16) is 23,572,403,200 parameters: exact."""
    arch = catalog()["mistralai/Mistral-Small-24B-Base-2501"].arch
    assert arch.n_params == 47_144_806_400 // 2
    assert arch.q_width == 4096 and arch.hidden_size == 5120
