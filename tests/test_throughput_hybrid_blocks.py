"""The throughput model's adapter traffic and hf QLoRA's fp32 stream counted by block part.

``throughput_adapters.adapter_widths`` (PEFT's fp32 adapters under bf16-true) and
``throughput_fp32_stream.fp32_stream_bytes_per_token`` run over the blocks that hold each part
(``memory_features.block_parts``, the rule ``lora_params`` counts adapters by): q, k, v, o only in
softmax-attention blocks, an MLP only where there is one, a linear mixer's projections under
``all``; an empty Nemotron-NAS block adds nothing. An ordinary model's figures are the ones before
(the catalog guard in the commit compared every model, targets and checkpointing). Small configs
from tests/test_memory_hybrid_blocks.py's helpers.
"""

from __future__ import annotations

from test_hf_config_nas import _block
from test_memory_hybrid_blocks import H, _nas, _nemotron_h

from gpuprice.models.block_parts import mixer_width
from gpuprice.models.throughput_adapters import adapter_widths
from gpuprice.models.throughput_fp32_stream import (
    FP32_GRAD_SUM_EXTRA,
    NORM_SAVING,
    _mlp,
    fp32_stream_bytes_per_token,
)

TWO_FULL = [_block(2, 2.0), _block(2, 2.0)]


def _diff(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return b[0] - a[0], b[1] - a[1]


def test_an_empty_block_adds_no_traffic() -> None:
    base, more = _nas(TWO_FULL), _nas([*TWO_FULL, _block(None, None)])
    for targets in ("qv", "qkvo", "all"):
        assert adapter_widths(more, targets) == adapter_widths(base, targets)
        for checkpointing in (False, True):
            stream = fp32_stream_bytes_per_token(more, targets, checkpointing)
            assert stream == fp32_stream_bytes_per_token(base, targets, checkpointing)


def test_an_attention_free_block_adds_only_its_mlp() -> None:
    base, more = _nas(TWO_FULL), _nas([*TWO_FULL, _block(None, 2.0)])
    width = float(base.intermediate_size)
    for targets in ("qv", "qkvo"):
        assert adapter_widths(more, targets) == adapter_widths(base, targets)
    assert _diff(adapter_widths(base, "all"), adapter_widths(more, "all")) == (2 * H + width, 2 * width + H)
    # the stream: one MLP on it plus its sub-block's norm (no round trip) and fp32 + fp32 add
    forward, backward = _mlp(float(H), width, True, True)
    forward += (6.0 - NORM_SAVING) * H
    backward += (FP32_GRAD_SUM_EXTRA - NORM_SAVING) * H
    for checkpointing, passes in ((False, 1.0), (True, 2.0)):
        extra = fp32_stream_bytes_per_token(more, "all", checkpointing) - fp32_stream_bytes_per_token(
            base, "all", checkpointing
        )
        assert abs(extra - (passes * forward + backward)) < 1e-6


def test_a_mamba_block_carries_adapters_on_its_projections_only() -> None:
    """Nemotron-H: a Mamba-2 block's in_proj reads h, out_proj reads d_inner (a third of the
    mixer's width, ``mixer_output_input``) and writes h; no q, k, v, o."""
    base, more = _nemotron_h("*-"), _nemotron_h("M*-")
    for targets in ("qv", "qkvo"):
        assert adapter_widths(more, targets) == adapter_widths(base, targets)
    width = mixer_width(more)
    ins, outs = _diff(adapter_widths(base, "all"), adapter_widths(more, "all"))
    assert abs(ins - (H + width / 3)) < 1e-9 and abs(outs - (2 * width / 3 + H)) < 1e-9
    assert ins + outs == 2 * H + width  # r (d_in + d_out) of lora_params, over the rank
    for targets in ("qv", "all"):
        assert fp32_stream_bytes_per_token(more, targets, True) > fp32_stream_bytes_per_token(
            base, targets, True
        )
