"""Parameter counts read from real config.json shapes, against the model cards' totals.

Each case is a minimal config with the real field names and values of the named repository's
``config.json`` (https://huggingface.co/<repo>/blob/main/config.json; only the fields the count
needs, plus the ones whose absence the reader must cope with, e.g. Gemma 3's text_config without
vocab_size or head counts). Totals are the model cards' (or the Hub's safetensors totals where the
card only says "7B"). A config missing a field the count needs names that field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from config_answers import Case

from gpuprice.errors import BadInput
from gpuprice.models.hf_config import arch_from_config, arch_from_config_file

CASES = [
    Case(
        "meta-llama/Llama-4-Scout-17B-16E",
        109,
        17,
        "model card: 17B active, 109B total",
        {
            "model_type": "llama4",
            "text_config": {
                "model_type": "llama4_text",
                "hidden_size": 5120,
                "intermediate_size": 8192,
                "intermediate_size_mlp": 16384,
                "num_hidden_layers": 48,
                "num_attention_heads": 40,
                "num_key_value_heads": 8,
                "head_dim": 128,
                "vocab_size": 202048,
                "num_local_experts": 16,
                "num_experts_per_tok": 1,
                "interleave_moe_layer_step": 1,
                "hidden_act": "silu",
                "tie_word_embeddings": False,
            },
        },
    ),
    Case(
        "meta-llama/Llama-4-Maverick-17B-128E",
        400,
        17,
        "model card: 17B active, 400B total",
        {
            "model_type": "llama4",
            "text_config": {
                "model_type": "llama4_text",
                "hidden_size": 5120,
                "intermediate_size": 8192,
                "intermediate_size_mlp": 16384,
                "num_hidden_layers": 48,
                "num_attention_heads": 40,
                "num_key_value_heads": 8,
                "head_dim": 128,
                "vocab_size": 202048,
                "num_local_experts": 128,
                "num_experts_per_tok": 1,
                "interleave_moe_layer_step": 2,
                "hidden_act": "silu",
                "tie_word_embeddings": False,
            },
        },
    ),
    Case(
        "Qwen/Qwen3-8B",
        8.2,
        None,
        "model card: 8.2B",
        {
            "model_type": "qwen3",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "num_hidden_layers": 36,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 151936,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "Qwen/Qwen3-0.6B",
        0.6,
        None,
        "model card: 0.6B",
        {
            "model_type": "qwen3",
            "hidden_size": 1024,
            "intermediate_size": 3072,
            "num_hidden_layers": 28,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 151936,
            "tie_word_embeddings": True,
        },
    ),
    Case(
        "Qwen/Qwen3-30B-A3B",
        30.5,
        3.3,
        "model card: 30.5B total, 3.3B activated",
        {
            "model_type": "qwen3_moe",
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "moe_intermediate_size": 768,
            "num_hidden_layers": 48,
            "num_attention_heads": 32,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "vocab_size": 151936,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "decoder_sparse_step": 1,
            "mlp_only_layers": [],
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "Qwen/Qwen2.5-7B",
        7.61,
        None,
        "model card: 7.61B",
        {
            "model_type": "qwen2",
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "num_hidden_layers": 28,
            "num_attention_heads": 28,
            "num_key_value_heads": 4,
            "vocab_size": 152064,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "Qwen/Qwen1.5-MoE-A2.7B",
        14.3,
        2.7,
        "model card: 14.3B total, 2.7B activated",
        {
            "model_type": "qwen2_moe",
            "hidden_size": 2048,
            "intermediate_size": 5632,
            "moe_intermediate_size": 1408,
            "shared_expert_intermediate_size": 5632,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "vocab_size": 151936,
            "num_experts": 60,
            "num_experts_per_tok": 4,
            "decoder_sparse_step": 1,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "mistralai/Mixtral-8x7B-v0.1",
        46.7,
        12.9,
        "Mistral AI: 46.7B total, 12.9B per token",
        {
            "model_type": "mixtral",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 32000,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "deepseek-ai/DeepSeek-V3",
        671,
        37,
        "model card: 671B total, 37B activated (685B on the Hub adds the 14B MTP module)",
        {
            "model_type": "deepseek_v3",
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "moe_intermediate_size": 2048,
            "num_hidden_layers": 61,
            "num_attention_heads": 128,
            "num_key_value_heads": 128,
            "vocab_size": 129280,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "num_experts_per_tok": 8,
            "first_k_dense_replace": 3,
            "q_lora_rank": 1536,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "deepseek-ai/DeepSeek-V2",
        236,
        21,
        "model card: 236B total, 21B activated",
        {
            "model_type": "deepseek_v2",
            "hidden_size": 5120,
            "intermediate_size": 12288,
            "moe_intermediate_size": 1536,
            "num_hidden_layers": 60,
            "num_attention_heads": 128,
            "num_key_value_heads": 128,
            "vocab_size": 102400,
            "n_routed_experts": 160,
            "n_shared_experts": 2,
            "num_experts_per_tok": 6,
            "first_k_dense_replace": 1,
            "q_lora_rank": 1536,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "microsoft/Phi-3.5-MoE-instruct",
        41.9,
        6.6,
        "model card: 16x3.8B, 6.6B active; 41.9B total",
        {
            "model_type": "phimoe",
            "hidden_size": 4096,
            "intermediate_size": 6400,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 32064,
            "num_local_experts": 16,
            "num_experts_per_tok": 2,
            "hidden_act": "silu",
            "attention_bias": True,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "microsoft/Phi-3-mini-4k-instruct",
        3.8,
        None,
        "model card: 3.8B",
        {
            "model_type": "phi3",
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 32,
            "vocab_size": 32064,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "google/gemma-3-27b-pt",
        27,
        None,
        "model card: 27B (text 27.0B + 0.4B SigLIP)",
        {
            "model_type": "gemma3",
            "text_config": {
                "model_type": "gemma3_text",
                "head_dim": 128,
                "hidden_size": 5376,
                "intermediate_size": 21504,
                "num_attention_heads": 32,
                "num_hidden_layers": 62,
                "num_key_value_heads": 16,
                "query_pre_attn_scalar": 168,
                "sliding_window": 1024,
            },
        },
    ),
    Case(
        "google/gemma-3-4b-pt",
        3.88,
        None,
        "text decoder 3.88B of the 4.3B card total (SigLIP 0.42B)",
        {
            "model_type": "gemma3",
            "text_config": {
                "model_type": "gemma3_text",
                "hidden_size": 2560,
                "intermediate_size": 10240,
                "num_hidden_layers": 34,
                "sliding_window": 1024,
            },
        },
    ),
    Case(
        "google/gemma-2-9b",
        9.24,
        None,
        "Hub safetensors total 9.24B",
        {
            "model_type": "gemma2",
            "hidden_size": 3584,
            "intermediate_size": 14336,
            "num_hidden_layers": 42,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "head_dim": 256,
            "vocab_size": 256000,
            "final_logit_softcapping": 30.0,
        },
    ),
    Case(
        "mistralai/Ministral-8B-Instruct-2410",
        8.02,
        None,
        "model card: 8.02B",
        {
            "model_type": "mistral",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "num_hidden_layers": 36,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 131072,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "mistralai/Mistral-Nemo-Base-2407",
        12.2,
        None,
        "Hub safetensors total 12.2B",
        {
            "model_type": "mistral",
            "hidden_size": 5120,
            "intermediate_size": 14336,
            "num_hidden_layers": 40,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 131072,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "openai/gpt-oss-20b",
        21,
        3.6,
        "model card: 21B total, 3.6B active (active without the 0.58B token embedding, as OpenAI's model card counts it)",
        {
            "model_type": "gpt_oss",
            "hidden_size": 2880,
            "intermediate_size": 2880,
            "num_hidden_layers": 24,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "head_dim": 64,
            "vocab_size": 201088,
            "num_local_experts": 32,
            "experts_per_token": 4,
            "attention_bias": True,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "openai/gpt-oss-120b",
        117,
        5.1,
        "model card: 117B total, 5.1B active (active without the 0.58B token embedding, as OpenAI's model card counts it)",
        {
            "model_type": "gpt_oss",
            "hidden_size": 2880,
            "intermediate_size": 2880,
            "num_hidden_layers": 36,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "head_dim": 64,
            "vocab_size": 201088,
            "num_local_experts": 128,
            "experts_per_token": 4,
            "attention_bias": True,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "allenai/OLMo-2-1124-7B",
        7.3,
        None,
        "model card: 7B; Hub safetensors 7.3B",
        {
            "model_type": "olmo2",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 32,
            "vocab_size": 100352,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "ibm-granite/granite-3.0-8b-base",
        8.17,
        None,
        "Hub safetensors total 8.17B",
        {
            "model_type": "granite",
            "hidden_size": 4096,
            "intermediate_size": 12800,
            "num_hidden_layers": 40,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 49155,
            "tie_word_embeddings": True,
        },
    ),
    Case(
        "tiiuae/falcon-7b",
        6.92,
        None,
        "FalconForCausalLM ties lm_head to the embedding: 6.92B unique (the Hub's 7.22B counts the head twice)",
        {
            "model_type": "falcon",
            "hidden_size": 4544,
            "num_hidden_layers": 32,
            "num_attention_heads": 71,
            "vocab_size": 65024,
            "multi_query": True,
            "parallel_attn": True,
            "bias": False,
            "new_decoder_architecture": False,
        },
    ),
    Case(
        "EleutherAI/gpt-neox-20b",
        20.55,
        None,
        "GPT-NeoX-20B paper: 20.55B",
        {
            "model_type": "gpt_neox",
            "hidden_size": 6144,
            "intermediate_size": 24576,
            "num_hidden_layers": 44,
            "num_attention_heads": 64,
            "vocab_size": 50432,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "EleutherAI/pythia-1.4b",
        1.41,
        None,
        "Pythia paper table 1: 1,414,647,808",
        {
            "model_type": "gpt_neox",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "vocab_size": 50304,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "openai-community/gpt2",
        0.124,
        None,
        "124M (GPT-2 small)",
        {
            "model_type": "gpt2",
            "n_embd": 768,
            "n_layer": 12,
            "n_head": 12,
            "vocab_size": 50257,
            "n_positions": 1024,
        },
    ),
    Case(
        "openai-community/gpt2-xl",
        1.558,
        None,
        "1.5B (1,557,611,200)",
        {
            "model_type": "gpt2",
            "n_embd": 1600,
            "n_layer": 48,
            "n_head": 25,
            "vocab_size": 50257,
            "n_positions": 1024,
        },
    ),
    Case(
        "google-t5/t5-base",
        0.2229,
        None,
        "T5 paper: 220M",
        {
            "model_type": "t5",
            "d_model": 768,
            "d_ff": 3072,
            "d_kv": 64,
            "num_layers": 12,
            "num_decoder_layers": 12,
            "num_heads": 12,
            "vocab_size": 32128,
            "feed_forward_proj": "relu",
        },
    ),
    Case(
        "google/flan-t5-base",
        0.2476,
        None,
        "Hub safetensors total 248M",
        {
            "model_type": "t5",
            "d_model": 768,
            "d_ff": 2048,
            "d_kv": 64,
            "num_layers": 12,
            "num_decoder_layers": 12,
            "num_heads": 12,
            "vocab_size": 32128,
            "feed_forward_proj": "gated-gelu",
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "CohereForAI/c4ai-command-r-v01",
        35.0,
        None,
        "model card: 35B",
        {
            "model_type": "cohere",
            "hidden_size": 8192,
            "intermediate_size": 22528,
            "num_hidden_layers": 40,
            "num_attention_heads": 64,
            "num_key_value_heads": 64,
            "vocab_size": 256000,
            "tie_word_embeddings": True,
            "use_qk_norm": False,
        },
    ),
    Case(
        "microsoft/phi-4",
        14.7,
        None,
        "Hub safetensors total 14.7B",
        {
            "model_type": "phi3",
            "hidden_size": 5120,
            "intermediate_size": 17920,
            "num_hidden_layers": 40,
            "num_attention_heads": 40,
            "num_key_value_heads": 10,
            "vocab_size": 100352,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "bigcode/starcoder2-15b",
        16.0,
        None,
        "Hub safetensors total 16.0B",
        {
            "model_type": "starcoder2",
            "hidden_size": 6144,
            "intermediate_size": 24576,
            "num_hidden_layers": 40,
            "num_attention_heads": 48,
            "num_key_value_heads": 4,
            "vocab_size": 49152,
            "use_bias": True,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "tiiuae/falcon-180B",
        179.5,
        None,
        "Hub safetensors total 179.5B",
        {
            "model_type": "falcon",
            "hidden_size": 14848,
            "num_hidden_layers": 80,
            "num_attention_heads": 232,
            "num_kv_heads": 8,
            "vocab_size": 65024,
            "new_decoder_architecture": True,
            "parallel_attn": True,
            "bias": False,
        },
    ),
    Case(
        "meta-llama/Llama-3.2-11B-Vision",
        9.78,
        None,
        "text decoder 9.78B of the 10.67B total (vision encoder 0.89B); cross-attention blocks are among num_hidden_layers",
        {
            "model_type": "mllama",
            "text_config": {
                "model_type": "mllama_text_model",
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_hidden_layers": 40,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "vocab_size": 128256,
                "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38],
                "tie_word_embeddings": False,
                "hidden_act": "silu",
            },
        },
    ),
    Case(
        "google/gemma-3-1b-pt",
        1.0,
        None,
        "model card: 1B",
        {
            "model_type": "gemma3_text",
            "hidden_size": 1152,
            "intermediate_size": 6912,
            "num_hidden_layers": 26,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 256,
            "vocab_size": 262144,
        },
    ),
    Case(
        "Qwen/Qwen2.5-72B",
        72.7,
        None,
        "model card: 72.7B",
        {
            "model_type": "qwen2",
            "hidden_size": 8192,
            "intermediate_size": 29568,
            "num_hidden_layers": 80,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "vocab_size": 152064,
            "tie_word_embeddings": False,
        },
    ),
    Case(
        "mistralai/Mistral-Small-24B-Base-2501",
        23.6,
        None,
        "Hub safetensors total 23.6B",
        {
            "model_type": "mistral",
            "hidden_size": 5120,
            "intermediate_size": 32768,
            "num_hidden_layers": 40,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 131072,
            "tie_word_embeddings": False,
        },
    ),
]
# OpenAI's gpt-oss card counts active parameters without the token embedding.
ACTIVE_WITHOUT_EMBEDDING = {"openai/gpt-oss-20b", "openai/gpt-oss-120b"}


@pytest.mark.parametrize("case", CASES, ids=[c.repo for c in CASES])
def test_total_parameters_match_the_model_card(case: Case) -> None:
    arch = arch_from_config(case.config, f"{case.repo}/config.json")
    assert arch.n_params / 1e9 == pytest.approx(case.total_b, rel=0.02), case.published


@pytest.mark.parametrize("case", [c for c in CASES if c.active_b], ids=[c.repo for c in CASES if c.active_b])
def test_active_parameters_of_mixtures_of_experts(case: Case) -> None:
    arch = arch_from_config(case.config, f"{case.repo}/config.json")
    active = arch.n_active_params - (arch.embedding_params if case.repo in ACTIVE_WITHOUT_EMBEDDING else 0)
    assert active / 1e9 == pytest.approx(case.active_b, rel=0.02), case.published


def test_llama4_dense_and_moe_blocks_interleave() -> None:
    """Maverick (interleave_moe_layer_step 2): 24 dense blocks of intermediate_size_mlp, 24 MoE
    blocks of 128 routed experts + 1 shared expert of intermediate_size; an explicit moe_layers
    list wins over the step."""
    maverick = next(c for c in CASES if c.repo.endswith("Maverick-17B-128E")).config
    arch = arch_from_config(maverick)
    assert (arch.dense_layers, arch.intermediate_size, arch.moe_intermediate_size) == (24, 16384, 8192)
    assert arch.num_shared_experts == 1 and arch.num_experts == 128
    text = dict(maverick["text_config"], moe_layers=[47])
    assert arch_from_config({"model_type": "llama4", "text_config": text}).dense_layers == 47
    text["moe_layers"] = [48]
    with pytest.raises(BadInput, match="moe_layers must be a list of block indices 0-47"):
        arch_from_config({"model_type": "llama4", "text_config": text})


def test_qwen_moe_sparse_step_and_mlp_only_layers() -> None:
    qwen = dict(next(c for c in CASES if c.repo == "Qwen/Qwen3-30B-A3B").config)
    assert arch_from_config(qwen).dense_layers == 0
    assert arch_from_config(dict(qwen, decoder_sparse_step=2)).dense_layers == 24
    assert arch_from_config(dict(qwen, mlp_only_layers=[0, 1, 47])).dense_layers == 3


@pytest.mark.parametrize(
    ("repo", "field", "named"),
    [
        ("Qwen/Qwen3-8B", "hidden_size", "hidden size"),
        ("Qwen/Qwen3-8B", "num_hidden_layers", "layer count"),
        ("Qwen/Qwen3-8B", "vocab_size", "vocabulary size"),
        ("Qwen/Qwen3-8B", "num_attention_heads", "attention head count"),
        ("openai-community/gpt2", "n_embd", "hidden size"),
        ("google-t5/t5-base", "num_layers", "layer count"),
    ],
)
def test_a_missing_field_is_named(tmp_path: Path, repo: str, field: str, named: str) -> None:
    config = dict(next(c for c in CASES if c.repo == repo).config)
    del config[field]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(BadInput) as err:
        arch_from_config_file(path)
    message = str(err.value)
    assert str(path) in message and named in message and field in message and "\n" not in message


def test_gemma3_text_config_defaults_do_not_override_what_the_config_says() -> None:
    gemma = next(c for c in CASES if c.repo == "google/gemma-3-27b-pt").config
    arch = arch_from_config(gemma)
    assert (arch.num_heads, arch.num_kv_heads, arch.head_dim, arch.vocab_size) == (32, 16, 128, 262208)
    assert arch.tied_embeddings
