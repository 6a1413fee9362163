"""config.json readings of 2026 MoE releases that a sweep of real configs found misread.

Each config here is written with the real field names and values of the named model's
``config.json`` (only the fields the reader uses), as transcribed in:

- ai-dynamo/aiconfigurator @ 095f58a51c4ca8e61b66ec108d86f223f8d559ce,
  aic-core/src/aiconfigurator_core/model_configs/<org>--<model>_config.json: DeepSeek-V4-Flash
  (deepseek-ai's, and sgl-project's FP8 copy labelled ``deepseek_ref``), Step-3.7-Flash,
  MiniMax-M3 (and nvidia's MiniMax-M3-NVFP4 VL wrapper), MiMo-V2-Flash, Kimi-K3;
- a Swift test fixture holding the key fields of tencent's Hunyuan-A13B and Hunyuan-7B configs
  (stored in the search index without its repository; the per-layer lists as Hunyuan writes them);
- mlc-ai/mlc-llm @ 79d603f085f50500e9509fa01785ffa7ecfaaa93, python/mlc_llm/model/model_preset.py
  (MODEL_PRESETS "rwkv5_3b").

Before the fixes: a config naming no activation (DeepSeek-V4-Flash's SGLang copy, Step-3.7-Flash)
or an unlisted one (MiniMax-M3's "swigluoai") was read as a two-matrix MLP, a third of every
expert missing (198 / 132 / 287B for 291 / 196 / 426B); MiniMax-M3's dense blocks were read at
the experts' width and its VL copy's per-block ``moe_layer_freq`` ignored; Hunyuan exited 2 on its
per-layer lists; RWKV exited 2 asking for an attention head count; Kimi-K3 (Kimi Linear blocks
with experts in a latent space) read 3.7T where its makers say 2.8T.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuprice.errors import BadInput
from gpuprice.models.hf_config import arch_from_config

_DEEPSEEK_V4_FLASH = {
    "architectures": ["DeepseekV4ForCausalLM"],
    "model_type": "deepseek_v4",
    "hidden_act": "silu",
    "hidden_size": 4096,
    "num_hidden_layers": 43,
    "num_attention_heads": 64,
    "num_key_value_heads": 1,
    "head_dim": 512,
    "vocab_size": 129280,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 6,
    "q_lora_rank": 1024,
    "qk_rope_head_dim": 64,
}
_STEP_3_7_FLASH = {
    "architectures": ["Step3p7FlashForCausalLM"],
    "model_type": "step3p7",
    "num_hidden_layers": 45,
    "hidden_size": 4096,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 128896,
    "intermediate_size": 11264,
    "first_k_dense_replace": 3,
    "num_experts": 288,
    "num_experts_per_tok": 8,
    "moe_intermediate_size": 1280,
    "share_expert_dim": 1280,
    "n_shared_experts": 1,
}
_MINIMAX_M3_TEXT = {
    "hidden_act": "swigluoai",
    "hidden_size": 6144,
    "intermediate_size": 3072,
    "dense_intermediate_size": 12288,
    "shared_intermediate_size": 3072,
    "num_hidden_layers": 60,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "vocab_size": 200064,
    "tie_word_embeddings": False,
    "num_local_experts": 128,
    "num_experts_per_tok": 4,
    "n_shared_experts": 1,
    "moe_layer_freq": [0, 0, 0] + [1] * 57,
}
_MIMO_V2_FLASH = {
    "architectures": ["MiMoV2FlashForCausalLM"],
    "model_type": "mimo_v2_flash",
    "hidden_act": "silu",
    "num_hidden_layers": 48,
    "hidden_size": 4096,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 192,
    "intermediate_size": 16384,
    "vocab_size": 152576,
    "moe_layer_freq": [0] + [1] * 47,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 256,
    "n_shared_experts": None,
    "num_experts_per_tok": 8,
    "tie_word_embeddings": False,
}
_HUNYUAN_A13B = {
    "architectures": ["HunYuanMoEV1ForCausalLM"],
    "model_type": "hunyuan",
    "attention_head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "intermediate_size": 3072,
    "moe_intermediate_size": [3072] * 32,
    "moe_topk": [8] * 32,
    "num_attention_heads": 32,
    "num_experts": 64,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "num_shared_expert": [1] * 32,
    "tie_word_embeddings": True,
    "vocab_size": 128167,
}


def test_no_or_unlisted_activation_reads_as_a_gated_mlp() -> None:
    """SGLang's FP8 copy of DeepSeek-V4-Flash names no activation and a model_type of its own:
    it reads as deepseek-ai's config does (gated experts), not a third lighter."""
    official = arch_from_config(_DEEPSEEK_V4_FLASH)
    sglang = arch_from_config(
        {k: v for k, v in _DEEPSEEK_V4_FLASH.items() if k != "hidden_act"} | {"model_type": "deepseek_ref"}
    )
    assert official.gated_mlp and sglang.gated_mlp
    assert sglang.n_params == official.n_params
    step = arch_from_config(_STEP_3_7_FLASH)  # no hidden_act either
    assert step.gated_mlp and step.dense_layers == 3 and step.num_shared_experts == 1
    # 45 blocks: 3 dense (3 x 4096 x 11264 each) and 42 with 288 routed + 1 shared experts of 3 x
    # 4096 x 1280: ~196B (a third less, ~132B, before)
    assert step.n_params / 1e9 == pytest.approx(195.8, rel=0.01)


def test_minimax_m3_dense_blocks_expert_width_and_its_vl_copy() -> None:
    """MiniMax-M3 writes the experts' width as intermediate_size and the three dense blocks' as
    dense_intermediate_size; "swigluoai" is a SwiGLU. The VL wrapper's text_config has no
    moe_intermediate_size and marks dense blocks only by moe_layer_freq: it reads the same."""
    text = arch_from_config(
        {
            "model_type": "minimax_m3",
            **_MINIMAX_M3_TEXT,
            "first_k_dense_replace": 3,
            "moe_intermediate_size": 3072,
        }
    )
    vl = arch_from_config(
        {"model_type": "minimax_m3_vl", "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
         "text_config": _MINIMAX_M3_TEXT}
    )  # fmt: skip
    for arch in (text, vl):
        assert arch.gated_mlp and arch.dense_layers == 3
        assert (arch.intermediate_size, arch.moe_intermediate_size) == (12288, 3072)
    assert vl.n_params == text.n_params
    assert text.n_params / 1e9 == pytest.approx(426.0, rel=0.01)


def test_a_per_block_moe_flag_list_counts_the_dense_blocks() -> None:
    """MiMo-V2-Flash: ``moe_layer_freq`` is a 0/1 flag per block (block 0 dense). Xiaomi's card:
    309B total."""
    arch = arch_from_config(_MIMO_V2_FLASH)
    assert arch.dense_layers == 1
    assert arch.n_params / 1e9 == pytest.approx(309, rel=0.03)


def test_deepseek_v2_moe_layer_freq_every_kth_block() -> None:
    """DeepSeek-V2's rule (transformers' DeepseekV2DecoderLayer): block i is sparse when
    i >= first_k_dense_replace and i % moe_layer_freq == 0."""
    every_second = arch_from_config(
        _DEEPSEEK_V4_FLASH | {"model_type": "deepseek_v2", "first_k_dense_replace": 1, "moe_layer_freq": 2}
    )
    assert every_second.dense_layers == 43 - len([i for i in range(1, 43) if i % 2 == 0])


def test_hunyuan_per_layer_lists_read_as_one_value() -> None:
    """Hunyuan writes moe_topk, moe_intermediate_size and num_shared_expert once per block; all
    equal here. Tencent's card for Hunyuan-A13B: 80B total, 13B active."""
    arch = arch_from_config(_HUNYUAN_A13B)
    assert (arch.experts_per_token, arch.moe_intermediate_size, arch.num_shared_experts) == (8, 3072, 1)
    assert arch.n_params / 1e9 == pytest.approx(80, rel=0.03)
    uneven = _HUNYUAN_A13B | {"moe_topk": [8] * 31 + [4]}
    with pytest.raises(BadInput, match=r"experts per token differs by layer .*per-layer values are not read"):
        arch_from_config(uneven, "hunyuan/config.json")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"architectures": ["RwkvForCausalLM"], "model_type": "rwkv5", "attention_hidden_size": 2560,
             "head_size": 64, "hidden_size": 2560, "num_hidden_layers": 32, "vocab_size": 65536},
            "rwkv5: RWKV (time- and channel-mixing blocks, no attention) is not supported",
        ),
        (
            {"model_type": "kimi_k3", "text_config": {"model_type": "kimi_linear", "hidden_act": "situ",
             "hidden_size": 7168, "num_attention_heads": 96, "num_hidden_layers": 93, "vocab_size": 163840,
             "num_experts": 896, "moe_intermediate_size": 3072, "routed_expert_hidden_size": 3584,
             "linear_attn_config": {"kda_layers": [1, 2, 3], "full_attn_layers": [4]}}},
            "kimi_linear: Kimi Linear (KDA delta-rule linear attention beside MLA blocks) is not supported",
        ),
        (
            _DEEPSEEK_V4_FLASH | {"routed_expert_hidden_size": 2048},
            "deepseek_v4: experts in a latent space (routed_expert_hidden_size 2048 beside hidden_size 4096)",
        ),
    ],
)  # fmt: skip
def test_layouts_it_cannot_count_are_one_line_exit_2(cli, tmp_path: Path, config: dict, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = cli("fit", "--config", str(path), "--method", "lora")
    assert result.code == 2 and message in result.err and len(result.err.strip().splitlines()) == 1


def test_starcoder2_and_bert_tie_their_head_unless_told_otherwise() -> None:
    """Starcoder2Config and BertConfig keep PretrainedConfig's tie_word_embeddings=True, and
    bigcode/starcoder2-7b's config leaves it implicit (mlc-ai/mlc-llm @79d603f0 model_preset.py
    MODEL_PRESETS "starcoder2"): 7.17B as published, where an untied head read 7.40B. The 15B,
    whose config says false, keeps its own head."""
    seven_b = {
        "model_type": "starcoder2", "hidden_size": 4608, "intermediate_size": 18432, "num_hidden_layers": 32,
        "num_attention_heads": 36, "num_key_value_heads": 4, "vocab_size": 49152, "use_bias": True,
    }  # fmt: skip
    arch = arch_from_config(seven_b)
    assert arch.tied_embeddings and arch.n_params / 1e9 == pytest.approx(7.17, rel=0.005)
    assert not arch_from_config(seven_b | {"tie_word_embeddings": False}).tied_embeddings
    bert = arch_from_config(
        {"model_type": "bert", "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
         "num_attention_heads": 12, "vocab_size": 30522, "hidden_act": "gelu"}
    )  # fmt: skip
    # snowflake-arctic-embed-m (mlc-llm's preset; 109M published with biases and pooler)
    assert bert.tied_embeddings and not bert.gated_mlp and bert.n_params / 1e6 == pytest.approx(109, rel=0.02)
