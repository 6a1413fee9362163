"""Hybrid decoders' activations and LoRA adapters counted by block part (memory_features.block_parts).

A block holds softmax attention, a linear/SSM mixer (Gated DeltaNet, Mamba-2, a Nemotron-NAS
h x h linear) or no mixer, and an MLP/MoE or none. The adapters (``lora_params``) and the saved
elements per token (``act_layer`` x ``layers``) sum over the parts the blocks hold: an
attention-free block brings no attention tensors and no q, k, v, o adapters, an empty block
(Nemotron-NAS: neither part) brings nothing but its norms. An ordinary model is every block
attention + MLP, and the figures are the ones before the split (the memory holdout tests guard
that too).

The configs are small ones written here in the structure of tests/test_hf_config_nas.py's
block_configs and tests/test_hf_config_hybrid.py's hybrid_override_pattern; Super-49B is that
file's transcription (ai-dynamo/aiconfigurator @ 095f58a51c4ca8e61b66ec108d86f223f8d559ce).
"""

from __future__ import annotations

from typing import Any

from test_hf_config_nas import _block
from test_hf_config_nas import _super as nas_super_49b

from gpuprice.models.architectures import ModelArch, find_model
from gpuprice.models.block_parts import BlockParts, block_parts, mixer_width
from gpuprice.models.hf_config import arch_from_config
from gpuprice.models.memory_features import lora_params, setup_features
from gpuprice.models.memory_setup import TrainingSetup

RANK = 16
H = 256  # hidden size of the small configs: 4 heads of 64


def _nas(blocks: list[dict[str, Any]]) -> ModelArch:
    config = {
        "architectures": ["DeciLMForCausalLM"],
        "model_type": "nemotron-nas",
        "block_configs": blocks,
        "hidden_act": "silu",
        "hidden_size": H,
        "intermediate_size": None,
        "num_attention_heads": 4,
        "num_hidden_layers": len(blocks),
        "num_key_value_heads": None,
        "tie_word_embeddings": False,
        "vocab_size": 1024,
    }
    return arch_from_config(config)


def _nemotron_h(pattern: str) -> ModelArch:
    """A dense Nemotron-H (no MoE): Mamba-2 (M), attention (*), squared-ReLU MLP (-) blocks."""
    config = {
        "model_type": "nemotron_h",
        "hybrid_override_pattern": pattern,
        "num_hidden_layers": len(pattern),
        "hidden_size": H,
        "intermediate_size": 1024,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "mamba_num_heads": 8,
        "mamba_head_dim": 64,
        "n_groups": 1,
        "ssm_state_size": 16,
        "conv_kernel": 4,
        "mlp_hidden_act": "relu2",
        "tie_word_embeddings": False,
        "vocab_size": 1024,
    }
    return arch_from_config(config)


def _saved_elements(arch: ModelArch, targets: str) -> float:
    """Saved elements per token over all blocks, LoRA, fused kernels (no norm copies); rounded off
    the float error of the per-layer mean times the layers."""
    setup = TrainingSetup(arch=arch, method="lora", lora_targets=targets, seq_len=1, compile=True)
    features = setup_features(setup)
    return round(features["act_layer"] * features["layers"] / 2.0, 6)  # bf16: 2 bytes an element


def _attention_adapters(arch: ModelArch, targets: str) -> int:
    h, q, kv, out = arch.hidden_size, arch.q_width, arch.kv_width, arch.attn_out_width
    qv = RANK * (h + q) + RANK * (h + kv)
    return qv if targets == "qv" else qv + RANK * (h + kv) + RANK * (out + h)


TWO_FULL = [_block(2, 2.0), _block(2, 2.0)]


def test_an_attention_free_block_adds_only_its_mlp() -> None:
    base, more = _nas(TWO_FULL), _nas([*TWO_FULL, _block(None, 2.0)])
    assert block_parts(more) == BlockParts(attention=2, linear=0, mlp=3, moe=0, both=2)
    assert more.intermediate_size == base.intermediate_size
    for targets in ("qv", "qkvo"):
        assert lora_params(more, RANK, targets) == lora_params(base, RANK, targets)
    width = base.intermediate_size
    assert lora_params(more, RANK, "all") - lora_params(base, RANK, "all") == 3 * RANK * (H + width)
    # the MLP's tensors (norm input and output, gate, up, product) and its three x @ A
    mlp = 2 * H + 3 * width + 3 * RANK
    assert _saved_elements(more, "all") - _saved_elements(base, "all") == mlp
    # q,v only: the frozen MLP keeps its norm input, gate and up
    assert _saved_elements(more, "qv") - _saved_elements(base, "qv") == H + 2 * width


def test_an_empty_block_adds_nothing() -> None:
    base, more = _nas(TWO_FULL), _nas([*TWO_FULL, _block(None, None)])
    assert block_parts(more) == BlockParts(attention=2, linear=0, mlp=2, moe=0, both=2, empty=1)
    assert more.intermediate_size == base.intermediate_size
    for targets in ("qv", "qkvo", "all"):
        assert lora_params(more, RANK, targets) == lora_params(base, RANK, targets)
        assert _saved_elements(more, targets) == _saved_elements(base, targets)


def test_an_mlp_free_block_adds_only_its_attention() -> None:
    base, more = _nas(TWO_FULL), _nas([*TWO_FULL, {**_block(2, None)}])
    assert block_parts(more) == BlockParts(attention=3, linear=0, mlp=2, moe=0, both=2)
    for targets in ("qv", "qkvo", "all"):
        assert lora_params(more, RANK, targets) - lora_params(base, RANK, targets) == _attention_adapters(
            base, targets
        )
    attention = 2 * H + 3 * base.q_width + base.attn_out_width + 4 * RANK
    assert _saved_elements(more, "qkvo") - _saved_elements(base, "qkvo") == attention


def test_nemotron_super_49b_adapters_cover_only_its_attention_blocks() -> None:
    """Llama-3.3-Nemotron-Super-49B: attention in 49 of its 80 blocks, an MLP in all 80 (before:
    q, k, v, o on all 80, 32.8M q,v adapters at rank 16 instead of 20.1M)."""
    arch = arch_from_config(nas_super_49b())
    assert (arch.num_layers, arch.mixer_free_layers, arch.mlp_free_layers) == (80, 31, 0)
    assert block_parts(arch) == BlockParts(attention=49, linear=0, mlp=80, moe=0, both=49)
    for targets in ("qv", "qkvo"):
        assert lora_params(arch, RANK, targets) == 49 * _attention_adapters(arch, targets)
    mlp = 3 * RANK * (arch.hidden_size + arch.intermediate_size)
    assert lora_params(arch, RANK, "all") == 49 * _attention_adapters(arch, "qkvo") + 80 * mlp
    assert lora_params(arch, RANK, "qv") == 20_070_400


def test_a_mamba_block_has_adapters_on_its_own_projections_only() -> None:
    """Nemotron-H: a Mamba-2 block has no q, k, v, o; under ``all`` PEFT's all-linear adapts its
    in_proj and out_proj (r (d_in + d_out) each = r (2 h + mixer weights / h)); its saved tensors
    are counted by those projections (norm input, in_proj input, in_proj outputs, out_proj input)."""
    base, more = _nemotron_h("*-"), _nemotron_h("M*-")
    assert block_parts(more) == BlockParts(attention=1, linear=1, mlp=1, moe=0, both=0)
    assert lora_params(more, RANK, "qv") == lora_params(base, RANK, "qv") == _attention_adapters(base, "qv")
    assert lora_params(more, RANK, "qkvo") == lora_params(base, RANK, "qkvo")
    width = mixer_width(more)
    assert lora_params(more, RANK, "all") - lora_params(base, RANK, "all") == round(RANK * (2 * H + width))
    assert _saved_elements(more, "all") - _saved_elements(base, "all") == 2 * H + width + 2 * RANK
    assert _saved_elements(more, "qv") - _saved_elements(base, "qv") == H + width


def test_ordinary_models_are_every_block_attention_and_mlp() -> None:
    llama = find_model("meta-llama/Llama-3.1-8B")
    lite = find_model("deepseek-ai/DeepSeek-V2-Lite")
    assert llama is not None and lite is not None
    assert block_parts(llama) == BlockParts(32, 0, 32, 0, 32)
    assert block_parts(lite) == BlockParts(
        lite.num_layers, 0, lite.num_layers, lite.num_layers - 1, lite.num_layers
    )
    h, f = llama.hidden_size, llama.intermediate_size
    every = llama.num_layers * (_attention_adapters(llama, "qkvo") + 3 * RANK * (h + f))
    assert lora_params(llama, RANK, "all") == every
