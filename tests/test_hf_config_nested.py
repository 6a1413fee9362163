"""Where the config reader finds the language model, and what it refuses: cases reported by the
catalog survey of multimodal and hybrid ids (tests/test_catalog_multimodal_hybrid.py).

* Qwen2.5-Omni keeps its language model under ``thinker_config.text_config`` (transformers'
  Qwen2_5OmniConfig -> Qwen2_5OmniThinkerConfig -> Qwen2_5OmniTextConfig); before, the reader
  refused it ("no attention head count").
* Saved copies of some multimodal configs carry a top-level ``hidden_size`` beside the nested
  text config, without a head count: the nested language model is read.
* Gemma 4 E2B/E4B (``hidden_size_per_layer_input`` > 0: per-layer embedding tables, as Gemma 3n)
  read as 1.64B against a published 5.1B: they are refused in one line, like gemma3n.
* ``use_attn_output_gate`` doubles q_proj like Qwen3.5's ``attn_output_gate``.

The shapes below are small and claim no published model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuprice.errors import BadInput
from gpuprice.models.hf_config import arch_from_config

TEXT: dict[str, Any] = {
    "model_type": "qwen2_5_omni_text",
    "hidden_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "intermediate_size": 1536,
    "vocab_size": 1000,
    "tie_word_embeddings": False,
}


def test_omni_thinker_text_config_is_the_language_model() -> None:
    omni = {
        "model_type": "qwen2_5_omni",
        "thinker_config": {"model_type": "qwen2_5_omni_thinker", "text_config": TEXT, "vision_config": {}},
        "talker_config": {"model_type": "qwen2_5_omni_talker", "hidden_size": 896},
    }
    arch = arch_from_config(omni)
    direct = arch_from_config({**TEXT, "model_type": "qwen2"})
    assert arch.n_params == direct.n_params and arch.qkv_bias  # read as Qwen2: q, k, v biases
    assert (arch.hidden_size, arch.num_layers, arch.num_kv_heads) == (512, 4, 2)


def test_a_top_level_width_without_heads_reads_the_nested_text_model() -> None:
    wrapper = {"model_type": "qwen2_vl", "hidden_size": 4096, "text_config": {**TEXT, "model_type": "qwen2"}}
    assert arch_from_config(wrapper).hidden_size == 512
    # a top level that is itself a language model (width and heads) stays the one read
    plain = {**TEXT, "model_type": "qwen2", "text_config": {"hidden_size": 64, "num_attention_heads": 2}}
    assert arch_from_config(plain).hidden_size == 512


def test_per_layer_embedding_models_are_refused_in_one_line(cli, tmp_path: Path) -> None:
    config = {**TEXT, "model_type": "gemma4_text", "hidden_size_per_layer_input": 256}
    with pytest.raises(BadInput, match="per-layer embeddings"):
        arch_from_config(config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gemma4", "text_config": config}))
    result = cli("fit", "--config", str(path), "--method", "lora")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "hidden_size_per_layer_input" in result.err
    # zero (the dense Gemma 4 sizes) is read as before
    assert arch_from_config({**config, "hidden_size_per_layer_input": 0}).hidden_size == 512


@pytest.mark.parametrize("flag", ["use_attn_output_gate", "attn_output_gate"])
def test_an_attention_output_gate_doubles_q_proj(flag: str) -> None:
    plain = arch_from_config({**TEXT, "model_type": "llama"})
    gated = arch_from_config({**TEXT, "model_type": "llama", flag: True})
    assert gated.attention_output_gate and not plain.attention_output_gate
    assert gated.n_params - plain.n_params == 4 * 512 * plain.q_width
