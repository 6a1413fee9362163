"""MoE and multimodal config.json shapes the reader had not seen, read against published totals.

Each case is a minimal config written here with the real field names and values of the named
model's ``config.json`` (only the fields the count reads), as the config is transcribed in:

- ai-dynamo/aiconfigurator @ 095f58a51c4ca8e61b66ec108d86f223f8d559ce,
  aic-core/src/aiconfigurator_core/model_configs/<org>--<model>_config.json: MiniMax-M2.5,
  Kimi-K2-Instruct, Kimi-K2.5, Qwen3-VL-4B/8B-Instruct, Qwen3-VL-30B-A3B / 235B-A22B-Instruct;
- NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a,
  tests/unit_tests/models/olmoe/test_olmoe_bridge.py (olmoe_1b_7b_config_dict, OLMoE-1B-7B) and
  tests/unit_tests/models/glm/test_glm45_bridge.py (glm45_355b_config, glm45_air_106b_config:
  GLM-4.5 / GLM-4.5-Air, architectures Glm4MoeForCausalLM; the fixture labels them
  model_type "glm", the published config.json says "glm4_moe", which is used here);
- mlc-ai/mlc-llm @ 79d603f085f50500e9509fa01785ffa7ecfaaa93, python/mlc_llm/model/model_preset.py
  (MODEL_PRESETS "deepseek" = deepseek-moe-16b, "llava" = llava-1.5-7b-hf, "phi-3_5-vision",
  "ministral3_3b_2512").

Published totals: the model cards / papers named in each case. MiniMax (9.8B), GLM-4.5 (32B /
12B) state active parameters without the token embedding and the untied LM head; those are
checked that way. A VLM's published total includes its vision tower; the reader counts the
language model a trainer fine-tunes, so each VLM case is checked against the language model's
published size (stated beside the vision tower's, or the size of the text model whose shape the
text_config repeats exactly), never the VLM's headline number.

Before the fixes here: llava-1.5-7b-hf refused ("config has no hidden size field": its
text_config names no shape and relies on LlamaConfig's defaults); every other case read within
2 %. Left out: Falcon-H1 (falcon_h1, Megatron-Bridge tests/unit_tests/models/falcon_h1/
test_falcon_h1_bridge.py, Falcon-H1-0.5B) reads 0.34B of ~0.52B: each block runs a Mamba-2
mixer beside attention, and ModelArch has one mixer per block (a formula change, not the
reader's); Kimi-K2's active count (card "32B", rounded; the reader gives 32.9B with embeddings);
MiMo-V2-Flash, Step-3.7-Flash, GLM-5, DeepSeek-V4 and MiniMax-M3 (no published count found to
cite); jamba, dbrx, granitemoe(hybrid), mamba, zamba2, bamba, lfm2 (no config found in a stored
repository within the time of this pass).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from config_answers import Case, assert_fit_and_estimate_answer

from gpuprice.errors import BadInput
from gpuprice.models.hf_config import arch_from_config, arch_from_config_file

_QWEN3_VL_30B_TEXT = {
    "model_type": "qwen3_vl_moe_text",
    "attention_bias": False,
    "decoder_sparse_step": 1,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "mlp_only_layers": [],
    "moe_intermediate_size": 768,
    "num_attention_heads": 32,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "num_key_value_heads": 4,
    "vocab_size": 151936,
}
_KIMI_K2 = {
    "model_type": "kimi_k2",
    "attention_bias": False,
    "first_k_dense_replace": 1,
    "hidden_act": "silu",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "kv_lora_rank": 512,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 384,
    "n_shared_experts": 1,
    "num_attention_heads": 64,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 61,
    "num_key_value_heads": 64,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "tie_word_embeddings": False,
    "v_head_dim": 128,
    "vocab_size": 163840,
}

CASES = [
    Case(
        "allenai/OLMoE-1B-7B-0924",
        6.9,
        1.3,
        "OLMoE paper (arXiv 2409.02060): 6.9B total, 1.3B active",
        {
            "model_type": "olmoe",
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 1024,
            "num_attention_heads": 16,
            "num_experts": 64,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 16,
            "num_key_value_heads": 16,
            "tie_word_embeddings": False,
            "vocab_size": 50304,
        },
    ),
    Case(
        "deepseek-ai/deepseek-moe-16b-base",
        16.4,
        2.8,
        "model card / DeepSeekMoE paper: 16.4B total, 2.8B activated (2 shared experts, 1 dense layer)",
        {
            "model_type": "deepseek",
            "attention_bias": False,
            "first_k_dense_replace": 1,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 10944,
            "moe_intermediate_size": 1408,
            "moe_layer_freq": 1,
            "n_routed_experts": 64,
            "n_shared_experts": 2,
            "num_attention_heads": 16,
            "num_experts_per_tok": 6,
            "num_hidden_layers": 28,
            "num_key_value_heads": 16,
            "tie_word_embeddings": False,
            "vocab_size": 102400,
        },
    ),
    Case(
        "zai-org/GLM-4.5",
        355,
        32,
        "model card: 355B total, 32B active (active without embedding and LM head; the Hub's 358B adds the MTP layer)",
        {
            "model_type": "glm4_moe",
            "attention_bias": True,
            "first_k_dense_replace": 3,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 12288,
            "moe_intermediate_size": 1536,
            "n_routed_experts": 160,
            "n_shared_experts": 1,
            "num_attention_heads": 96,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 92,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "vocab_size": 151552,
        },
    ),
    Case(
        "zai-org/GLM-4.5-Air",
        106,
        12,
        "model card: 106B total, 12B active (active without embedding and LM head)",
        {
            "model_type": "glm4_moe",
            "attention_bias": True,
            "first_k_dense_replace": 1,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 10944,
            "moe_intermediate_size": 1408,
            "n_routed_experts": 128,
            "n_shared_experts": 1,
            "num_attention_heads": 96,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 46,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "vocab_size": 151552,
        },
    ),
    Case(
        "MiniMaxAI/MiniMax-M2.5",
        229.9,
        9.8,
        "MiniMax-M2 series (emergentmind.com/topics/minimax-m2-5): 229.9B total, 9.8B activated "
        "(without embedding and LM head); intermediate_size is the expert width, shared_intermediate_size 0",
        {
            "model_type": "minimax_m2",
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 3072,
            "intermediate_size": 1536,
            "num_attention_heads": 48,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 62,
            "num_key_value_heads": 8,
            "num_local_experts": 256,
            "shared_intermediate_size": 0,
            "tie_word_embeddings": False,
            "use_qk_norm": True,
            "vocab_size": 200064,
        },
    ),
    Case(
        "moonshotai/Kimi-K2-Instruct",
        1040,
        None,
        "Kimi K2 technical report (as quoted at agentwiki.org/moonshot_kimi_k2): 1.04T total; DeepSeek-V3 "
        "layout (MLA, 1 dense layer, 1 shared expert); the card's '32B activated' is rounded, not checked",
        _KIMI_K2,
    ),
    Case(
        "moonshotai/Kimi-K2.5",
        1040,
        None,
        "language model only: its text_config is Kimi-K2's (1.04T); the 0.4B MoonViT vision encoder "
        "(agentwiki.org/moonshot_kimi_k2) is not counted",
        {"model_type": "kimi_k25", "tie_word_embeddings": False, "text_config": _KIMI_K2},
    ),
    Case(
        "Qwen/Qwen3-VL-30B-A3B-Instruct",
        30.5,
        3.3,
        "language model only: the text_config repeats Qwen3-30B-A3B's shape (card: 30.5B total, 3.3B "
        "activated); the vision tower is not counted",
        {"model_type": "qwen3_vl_moe", "tie_word_embeddings": False, "text_config": _QWEN3_VL_30B_TEXT},
    ),
    Case(
        "Qwen/Qwen3-VL-235B-A22B-Instruct",
        235,
        22,
        "language model only: the text_config repeats Qwen3-235B-A22B's shape (card: 235B total, 22B "
        "activated); the vision tower is not counted",
        {
            "model_type": "qwen3_vl_moe",
            "tie_word_embeddings": False,
            "text_config": dict(
                _QWEN3_VL_30B_TEXT,
                hidden_size=4096,
                intermediate_size=12288,
                moe_intermediate_size=1536,
                num_attention_heads=64,
                num_hidden_layers=94,
            ),
        },
    ),
    Case(
        "Qwen/Qwen3-VL-8B-Instruct",
        8.2,
        None,
        "language model only: the text_config repeats Qwen3-8B's shape (card: 8.2B); tie_word_embeddings "
        "false is stated only at the top level",
        {
            "model_type": "qwen3_vl",
            "tie_word_embeddings": False,
            "text_config": {
                "model_type": "qwen3_vl_text",
                "attention_bias": False,
                "head_dim": 128,
                "hidden_act": "silu",
                "hidden_size": 4096,
                "intermediate_size": 12288,
                "num_attention_heads": 32,
                "num_hidden_layers": 36,
                "num_key_value_heads": 8,
                "vocab_size": 151936,
            },
        },
    ),
    Case(
        "Qwen/Qwen3-VL-4B-Instruct",
        4.0,
        None,
        "language model only: the text_config repeats Qwen3-4B's shape (card: 4.0B, tied embeddings)",
        {
            "model_type": "qwen3_vl",
            "tie_word_embeddings": True,
            "text_config": {
                "model_type": "qwen3_vl_text",
                "head_dim": 128,
                "hidden_act": "silu",
                "hidden_size": 2560,
                "intermediate_size": 9728,
                "num_attention_heads": 32,
                "num_hidden_layers": 36,
                "num_key_value_heads": 8,
                "tie_word_embeddings": True,
                "vocab_size": 151936,
            },
        },
    ),
    Case(
        "mistralai/Ministral-3-3B-Instruct-2512",
        3.4,
        None,
        "language model only: 3.4B language model + 0.4B vision encoder (NVIDIA Megatron-Bridge docs, "
        "models/vlm/ministral3; apxml.com/models/ministral-3-3b: 3.4B decoder, 410M ViT)",
        {
            "model_type": "ministral3",
            "text_config": {
                "model_type": "ministral3",
                "head_dim": 128,
                "hidden_act": "silu",
                "hidden_size": 3072,
                "intermediate_size": 9216,
                "num_attention_heads": 32,
                "num_hidden_layers": 26,
                "num_key_value_heads": 8,
                "tie_word_embeddings": True,
                "vocab_size": 131072,
            },
        },
    ),
    Case(
        "llava-hf/llava-1.5-7b-hf",
        6.74,
        None,
        "language model only: Vicuna-7B v1.5, a Llama-2-7B fine-tune (Hub safetensors 6.74B); the "
        "text_config names no shape (LlamaConfig's defaults), the CLIP ViT-L tower is not counted",
        {
            "model_type": "llava",
            "tie_word_embeddings": False,
            "text_config": {"model_type": "llama", "vocab_size": 32064},
        },
    ),
    Case(
        "microsoft/Phi-3.5-vision-instruct",
        3.8,
        None,
        "language model only: the card's 4.2B includes the CLIP image encoder; the decoder is "
        "Phi-3.5-mini's shape (card: 3.8B)",
        {
            "model_type": "phi3_v",
            "hidden_act": "silu",
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "tie_word_embeddings": False,
            "vocab_size": 32064,
        },
    ),
]
# Cards whose active count leaves out the token embedding and the untied LM head.
ACTIVE_WITHOUT_EMBEDDING_AND_HEAD = {"zai-org/GLM-4.5", "zai-org/GLM-4.5-Air", "MiniMaxAI/MiniMax-M2.5"}


def _id(case: Case) -> str:
    return case.repo


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_total_parameters_match_the_published_count(case: Case) -> None:
    arch = arch_from_config(case.config, f"{case.repo}/config.json")
    assert arch.n_params / 1e9 == pytest.approx(case.total_b, rel=0.02), case.published


@pytest.mark.parametrize("case", [c for c in CASES if c.active_b], ids=_id)
def test_active_parameters_match_the_published_count(case: Case) -> None:
    arch = arch_from_config(case.config, f"{case.repo}/config.json")
    active = arch.n_active_params
    if case.repo in ACTIVE_WITHOUT_EMBEDDING_AND_HEAD:
        active -= arch.embedding_params + arch.head_params
    assert active / 1e9 == pytest.approx(case.active_b, rel=0.02), case.published


def _case(repo: str) -> Case:
    return next(c for c in CASES if c.repo == repo)


def test_moe_layouts_are_read_as_published() -> None:
    """DeepSeek-MoE 16B: 1 dense block, 2 shared experts of the expert width; GLM-4.5: 3 dense
    blocks; Kimi-K2 keeps DeepSeek-V3's latent attention; MiniMax-M2's intermediate_size is the
    expert width (no moe_intermediate_size)."""
    deepseek = arch_from_config(_case("deepseek-ai/deepseek-moe-16b-base").config)
    assert (deepseek.dense_layers, deepseek.num_shared_experts, deepseek.expert_width) == (1, 2, 1408)
    assert arch_from_config(_case("zai-org/GLM-4.5").config).dense_layers == 3
    kimi = arch_from_config(_case("moonshotai/Kimi-K2-Instruct").config)
    assert (kimi.kv_lora_rank, kimi.q_lora_rank, kimi.num_experts, kimi.experts_per_token) == (
        512,
        1536,
        384,
        8,
    )
    minimax = arch_from_config(_case("MiniMaxAI/MiniMax-M2.5").config)
    assert (minimax.num_experts, minimax.expert_width, minimax.num_shared_experts) == (256, 1536, 0)


def test_a_wrapper_reads_its_text_config_like_the_text_model() -> None:
    """Kimi-K2.5's language model is Kimi-K2's; the top-level tie flag applies when the
    text_config is silent."""
    k2 = arch_from_config(_case("moonshotai/Kimi-K2-Instruct").config)
    k25 = arch_from_config(_case("moonshotai/Kimi-K2.5").config)
    assert k25.n_params == k2.n_params and k25.n_active_params == k2.n_active_params
    qwen = _case("Qwen/Qwen3-VL-8B-Instruct").config
    assert not arch_from_config(qwen).tied_embeddings
    assert arch_from_config(dict(qwen, tie_word_embeddings=True)).tied_embeddings


def test_nested_defaults_do_not_fill_a_top_level_config(tmp_path: Path) -> None:
    """LlamaConfig's defaults fill only a nested text_config; a top-level llama config without
    its shape still names the missing field."""
    llava = arch_from_config(_case("llava-hf/llava-1.5-7b-hf").config)
    assert (llava.hidden_size, llava.num_layers, llava.intermediate_size, llava.vocab_size) == (
        4096,
        32,
        11008,
        32064,
    )
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "vocab_size": 32064}))
    with pytest.raises(BadInput, match="no hidden size field") as err:
        arch_from_config_file(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "repo",
    ["deepseek-ai/deepseek-moe-16b-base", "Qwen/Qwen3-VL-30B-A3B-Instruct", "llava-hf/llava-1.5-7b-hf"],
)
def test_fit_and_estimate_read_the_config(cli, home: Path, tmp_path: Path, repo: str) -> None:
    assert_fit_and_estimate_answer(cli, tmp_path, _case(repo).config)


def test_a_wrapper_without_a_text_shape_names_the_field(cli, home: Path, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llava", "text_config": {"model_type": "mistral"}}))
    result = cli("fit", "--config", str(path), "--method", "lora", "--gpu", "h100-sxm", "--json")
    assert result.code == 2
    assert "hidden size" in result.err and len(result.err.strip().splitlines()) == 1
