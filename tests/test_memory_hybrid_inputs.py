"""Empty blocks (Nemotron-NAS: no-op attention and no-op FFN) keep no input of their own.

The per-layer terms that count every block (memory_features ``input_blocks``): the checkpointed
block inputs under full recomputation (``act_ckpt`` x ``layers``), hf QLoRA's fp32 residual stream
(``fp32_stream``) and the QLoRA dequantization buffer (``dequant``, one block's linears: the mean
over the blocks that hold any). An empty block returns its input tensor itself, so its
checkpoint wrapper saves the storage the next block's wrapper saves, and it runs no norm and no
linear: adding one changes none of the three. An ordinary model counts all ``num_layers`` (the
catalog guard in the commit compared every model's features).
"""

from __future__ import annotations

from test_hf_config_nas import _block
from test_memory_hybrid_blocks import _nas

from gpuprice.models.architectures import ModelArch, find_model
from gpuprice.models.block_parts import input_blocks
from gpuprice.models.memory_features import setup_features
from gpuprice.models.memory_setup import TrainingSetup

TWO_FULL = [_block(2, 2.0), _block(2, 2.0)]


def _qlora(arch: ModelArch) -> dict[str, float]:
    """hf QLoRA (full recomputation, PEFT's fp32 residual stream), one GPU."""
    return setup_features(TrainingSetup(arch=arch, method="qlora", seq_len=256))


def test_an_empty_block_keeps_no_input() -> None:
    base, more = _nas(TWO_FULL), _nas([*TWO_FULL, _block(None, None), _block(None, None)])
    assert (more.empty_layers, input_blocks(more), input_blocks(base)) == (2, 2, 2)
    assert more.quantizable_params == base.quantizable_params
    a, b = _qlora(base), _qlora(more)
    assert a["fp32_stream"] > 0 and a["dequant"] > 0
    assert b["layers"] * b["act_ckpt"] == a["layers"] * a["act_ckpt"]
    assert (b["fp32_stream"], b["dequant"]) == (a["fp32_stream"], a["dequant"])


def test_one_part_blocks_keep_their_inputs() -> None:
    """An attention-only or MLP-only block does work, so its input counts."""
    more = _nas([*TWO_FULL, _block(None, 2.0), _block(2, None)])
    assert (more.empty_layers, input_blocks(more)) == (0, 4)
    f = _qlora(more)
    assert f["act_ckpt"] * f["layers"] == 4 * 256 * more.hidden_size * 2.0


def test_ordinary_models_count_every_layer() -> None:
    arch = find_model("meta-llama/Llama-3.1-8B")
    assert arch is not None and input_blocks(arch) == arch.num_layers == 32
    f = _qlora(arch)
    assert f["fp32_stream"] == 31 * 256 * arch.hidden_size * 2.0
