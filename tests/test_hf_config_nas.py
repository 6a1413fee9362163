"""Nemotron-NAS / DeciLM ``block_configs`` (model_type ``nemotron-nas``) read against the published
totals.

The modelling code (NVIDIA/TensorRT-LLM @ 0193dbd4189221d0fd5e9f20cdb384d3da8dbc24,
tensorrt_llm/_torch/models/modeling_nemotron_nas.py, ``NemotronNASDecoderLayer``, a port of the
models' own modeling_decilm.py) builds each block from its entry: attention that is not ``no_op``
is input_layernorm plus either an h x h linear (``replace_with_linear``) or Llama attention with
num_attention_heads // ``n_heads_in_group`` KV heads; an FFN that is not ``no_op`` is
post_attention_layernorm plus an h x h linear or a gated MLP of width
``_ffn_mult_to_intermediate_size`` = int(2 ffn_mult h / 3) rounded up to a multiple of 256.

Each config here is written in the real structure with the real per-block values, as run lengths
of (n_heads_in_group or None for a no-op attention, ffn_mult or None for a no-op FFN):
Llama-3.3-Nemotron-Super-49B-v1 from ai-dynamo/aiconfigurator @
095f58a51c4ca8e61b66ec108d86f223f8d559ce (aic-core/src/aiconfigurator_core/model_configs/
nvidia--Llama-3_3-Nemotron-Super-49B-v1_config.json; NVIDIA/NeMo's copy below has the same 80
blocks); Llama-3.1-Nemotron-Ultra-253B-v1 from NVIDIA/NeMo @
8cfedd7203462cb251a914e700e5605444277561 (nemo/collections/llm/gpt/model/
llama_nemotron_config.py, LLAMA_31_NEMOTRON_ULTRA_253B_HETEROGENEOUS_CONFIG, "Config copy from"
the model's Hugging Face config.json). Before the fix the blocks were ignored (every block a full
Llama block with MHA and a 4h MLP): Super read 88.0B, Ultra 700.0B.

Left out: Llama-3.1-Nemotron-Nano-8B/4B are plain ``llama`` configs (no block_configs) and read
as such; Llama-3.1-Nemotron-51B (the one with ``replace_with_linear`` attention) was found only as
a third-party tuple transcription, not as a config file, so the linear blocks are checked on a
small config written here instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuprice.errors import BadInput
from gpuprice.models.hf_config import arch_from_config, arch_from_config_file

Run = tuple[int | None, float | None, int]

SUPER_RUNS: list[Run] = [
    (8, 2.625, 1), (8, 5.25, 5), (None, 2.625, 2), (8, 5.25, 3), (None, 3.28125, 1), (8, 5.25, 30),
    (None, 1.3125, 1), (None, 2.625, 2), (None, 1.3125, 1), (None, 5.25, 1), (None, 1.3125, 1),
    (None, 2.625, 1), (None, 1.3125, 3), (8, 5.25, 1), (None, 1.3125, 1), (None, 1.0, 2),
    (None, 1.3125, 1), (None, 1.0, 3), (None, 1.3125, 2), (None, 0.5, 2), (None, 1.0, 2),
    (None, 0.5, 2), (None, 1.0, 1), (None, 0.5, 2), (8, 5.25, 9),
]  # fmt: skip
ULTRA_RUNS: list[Run] = [
    (16, 0.4875, 1), (16, 0.975, 1), (16, 1.4625, 6), (16, 1.95, 1), (None, None, 4), (16, 1.95, 3),
    (16, 4.875, 2), (None, None, 6), (16, 4.875, 3), (None, None, 5), (16, 4.875, 3),
    (16, 2.4375, 1), (None, None, 3), (16, 1.95, 3), (None, 1.95, 1), (16, 4.875, 1),
    (None, 4.875, 1), (None, None, 5), (16, 4.875, 4), (None, None, 5), (16, 4.875, 4),
    (None, None, 5), (16, 4.875, 4), (None, None, 5), (16, 4.875, 4), (None, None, 5),
    (16, 4.875, 1), (16, 3.4125, 3), (None, None, 2), (16, 2.925, 1), (16, 2.4375, 3),
    (None, 2.4375, 2), (16, 2.4375, 1), (None, None, 1), (None, 2.4375, 7), (16, 2.4375, 1),
    (None, None, 5), (16, 2.925, 1), (16, 4.875, 1), (None, 4.875, 1), (16, 4.875, 1),
    (None, None, 8), (None, 36.5625, 1), (None, None, 8), (None, 39.0, 1), (None, None, 8),
    (None, 31.40625, 1), (None, None, 5), (None, 27.5625, 1), (None, 1.95, 1), (16, 1.95, 1),
    (16, 2.4375, 1), (None, None, 1), (16, 2.4375, 2), (16, 3.4125, 1), (16, 4.875, 4),
    (16, 2.4375, 1),
]  # fmt: skip


def _block(group: int | None, mult: float | None, linear_attention: bool = False) -> dict[str, Any]:
    return {
        "attention": {
            "n_heads_in_group": group,
            "no_op": group is None and not linear_attention,
            "num_sink_tokens": None,
            "replace_with_linear": linear_attention,
            "sparsify": None,
            "unshifted_sink": False,
            "use_prefill_window_in_sink_attention": False,
            "window_length": None,
        },
        "ffn": {"ffn_mult": mult, "no_op": mult is None, "replace_with_linear": False, "sparsify": None},
    }


def _nas(runs: list[Run], hidden: int, heads: int) -> dict[str, Any]:
    blocks = [_block(group, mult) for group, mult, n in runs for _ in range(n)]
    return {
        "architectures": ["DeciLMForCausalLM"],
        "model_type": "nemotron-nas",
        "attention_bias": False,
        "block_configs": blocks,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": None,
        "mlp_bias": False,
        "num_attention_heads": heads,
        "num_hidden_layers": len(blocks),
        "num_key_value_heads": None,
        "tie_word_embeddings": False,
        "vocab_size": 128256,
    }


def _super() -> dict[str, Any]:
    return _nas(SUPER_RUNS, 8192, 64)


def _ultra() -> dict[str, Any]:
    return _nas(ULTRA_RUNS, 16384, 128)


def _width(mult: float, h: int) -> int:
    width = int(2 * mult * h / 3)
    return -(-width // 256) * 256


def _per_block_sum(config: dict[str, Any]) -> int:
    """Weights as the modelling code allocates them, block by block (embeddings, head, final norm
    included)."""
    h, heads = config["hidden_size"], config["num_attention_heads"]
    d = h // heads
    total = 2 * config["vocab_size"] * h + h
    for block in config["block_configs"]:
        attention, ffn = block["attention"], block["ffn"]
        if not attention["no_op"]:
            if attention["replace_with_linear"]:
                total += h + h * h
            else:
                kv = heads // attention["n_heads_in_group"]
                total += h + 2 * h * heads * d + 2 * h * kv * d
        if not ffn["no_op"]:
            total += h + 3 * h * _width(ffn["ffn_mult"], h)
    return total


# (name, config, published total B, what the card says)
CASES = [
    (
        "nvidia/Llama-3_3-Nemotron-Super-49B-v1",
        _super,
        49.9,
        "49.9B (Hugging Face's count of the checkpoint; the name rounds to 49B)",
    ),
    ("nvidia/Llama-3_1-Nemotron-Ultra-253B-v1", _ultra, 253.0, "model card / name: 253B"),
]


@pytest.mark.parametrize(("repo", "config", "total_b", "card"), CASES, ids=[c[0] for c in CASES])
def test_total_is_the_published_one(repo: str, config: Any, total_b: float, card: str) -> None:
    arch = arch_from_config(config(), f"{repo}/config.json")
    assert arch.n_params / 1e9 == pytest.approx(total_b, rel=0.01), card
    assert arch.n_active_params == arch.n_params


@pytest.mark.parametrize("config", [_super, _ultra], ids=["super-49b", "ultra-253b"])
def test_total_is_the_per_block_sum_up_to_the_mean_width_rounding(config: Any) -> None:
    """The uniform shape's total equals the block-by-block sum to within the rounding of the mean
    MLP width: half a width step (3h weights) per MLP-bearing block."""
    data = config()
    arch = arch_from_config(data)
    mlp_blocks = arch.num_layers - arch.mlp_free_layers
    assert abs(arch.n_params - _per_block_sum(data)) <= 3 * arch.hidden_size * mlp_blocks / 2


def test_blocks_map_onto_the_uniform_shape() -> None:
    """Super: 31 attention-free blocks, all 49 attention blocks with 8 KV heads, all 80 blocks with
    an MLP. Ultra: 98 attention-free and 81 MLP-free blocks (81 blocks hold neither), 8 KV heads."""
    s = arch_from_config(_super())
    assert (s.num_layers, s.mixer_free_layers, s.mlp_free_layers, s.linear_attention_layers) == (80, 31, 0, 0)
    assert (s.num_kv_heads, s.head_dim, s.gated_mlp, s.norms_per_layer) == (8, 128, True, 2)
    # the mean width lies between the narrowest (0.5 -> 2816) and widest (5.25 -> 28672) blocks
    assert _width(0.5, 8192) < s.intermediate_size < _width(5.25, 8192)
    u = arch_from_config(_ultra())
    assert (u.num_layers, u.mixer_free_layers, u.mlp_free_layers) == (162, 98, 81)
    assert (u.num_kv_heads, u.norms_per_layer) == (8, 1)
    assert _width(36.5625, 16384) == 399360  # the widest Ultra MLP, as the code rounds it


def test_linear_replacements_and_mixed_kv_groups() -> None:
    """A small config in the same structure: a block whose attention is an h x h linear, and
    attention blocks with 2 and 8 heads per KV group (mean 5 KV heads is no divisor of 16, so the
    nearest, 4, is taken and the difference carried by the mean MLP width)."""
    blocks = [_block(2, 2.0), _block(8, 1.0), _block(None, 3.0, linear_attention=True), _block(None, None)]
    config = {**_nas([], 1024, 16), "block_configs": blocks, "num_hidden_layers": 4, "vocab_size": 1000}
    arch = arch_from_config(config)
    assert (arch.linear_attention_layers, arch.linear_attention_params) == (1, 1024 * 1024)
    assert (arch.mixer_free_layers, arch.mlp_free_layers, arch.num_kv_heads) == (1, 1, 4)
    config["block_configs"][2]["attention"]["n_heads_in_group"] = None
    assert abs(arch.n_params - _per_block_sum(config)) <= 3 * 1024 * 3 / 2


def test_bad_block_configs_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    config = _super()
    config["num_hidden_layers"] = 79
    path.write_text(json.dumps(config))
    with pytest.raises(BadInput, match="block_configs lists 80 blocks"):
        arch_from_config_file(path)
    config = _super()
    config["block_configs"][0]["attention"]["n_heads_in_group"] = 7
    path.write_text(json.dumps(config))
    with pytest.raises(BadInput) as err:
        arch_from_config_file(path)
    assert "n_heads_in_group" in str(err.value) and "\n" not in str(err.value)
    config = _super()
    config["block_configs"][3]["ffn"] = "big"
    path.write_text(json.dumps(config))
    with pytest.raises(BadInput, match=r"block_configs\[3\] has no ffn object"):
        arch_from_config_file(path)
