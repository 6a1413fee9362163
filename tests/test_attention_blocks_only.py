"""Attention's s x s work happens in softmax-attention blocks only (block_parts.attention_share).

A hybrid decoder's Mamba-2 / Gated DeltaNet blocks compute no Q K^T: the throughput model charged
attention FLOPs (12 L s width a token) over every block, and the memory model kept eager scores for
every block, so a Mamba stack read as if it attended. Now the s x s terms run over the attention
blocks only: the throughput's per-layer attention width is its mean over all blocks, the memory's
stored scores likewise, and the one block rebuilt under recomputation (and one backward) keeps an
attention block's scores when the model has one. An ordinary model's share is exactly 1 (the
commit compared the 130 catalog models under six setups: every fit and estimate unchanged). Small
Nemotron-H configs from tests/test_memory_hybrid_blocks.py.
"""

from __future__ import annotations

import pytest
from test_memory_hybrid_blocks import _nemotron_h

from gpuprice.models.architectures import find_model
from gpuprice.models.block_parts import attention_share
from gpuprice.models.memory import TrainingSetup, estimate_memory
from gpuprice.models.memory_features import setup_features
from gpuprice.models.throughput import ModelShape, predict_throughput

SEQ = 8192


def test_the_share_counts_attention_blocks() -> None:
    # Nemotron-H's blocks hold one part each: "*-*-" is two attention blocks of four
    assert attention_share(_nemotron_h("*-*-")) == 0.5
    assert attention_share(_nemotron_h("M-*-")) == 0.25
    assert attention_share(_nemotron_h("M-M-")) == 0.0
    llama = find_model("meta-llama/Llama-3.1-8B")
    assert llama is not None and attention_share(llama) == 1.0


def test_throughput_charges_attention_flops_in_attention_blocks_only() -> None:
    half, full = _nemotron_h("M-*-"), _nemotron_h("*-*-")
    assert ModelShape.of(half).attn_width == pytest.approx(ModelShape.of(full).attn_width / 2)
    assert ModelShape.of(_nemotron_h("M-M-")).attn_width == 0.0
    # model FLOPs per token: 6 N + 12 x (attention blocks) x s x width; a Mamba-only stack has no
    # s-dependent term, so doubling the sequence leaves its FLOPs per token unchanged
    mamba = _nemotron_h("M-M-")
    short = predict_throughput(mamba, "full", "h100-sxm", seq_len=1024)
    long = predict_throughput(mamba, "full", "h100-sxm", seq_len=SEQ)
    assert long.flops_per_token == pytest.approx(short.flops_per_token)
    attn = predict_throughput(half, "full", "h100-sxm", seq_len=SEQ).flops_per_token
    assert attn - 6 * half.n_params == pytest.approx(12 * 1 * SEQ * half.q_width, rel=1e-9)


def test_eager_scores_are_kept_by_attention_blocks_only() -> None:
    def scores(pattern: str, checkpointing: str) -> tuple[float, float, float]:
        setup = TrainingSetup(
            arch=_nemotron_h(pattern),
            method="full",
            seq_len=SEQ,
            attention="eager",
            activation_checkpointing=checkpointing,
        )
        f = setup_features(setup)
        return f["scores"] * f["layers"], f["scores_rebuilt"], f["scores_bwd"]

    one_block = 4 * SEQ**2 * 6.0  # heads x s^2 x (fp32 softmax + 16-bit probabilities)
    stored, rebuilt, backward = scores("*-*-", "none")
    assert stored == pytest.approx(2 * one_block) and rebuilt == pytest.approx(one_block) and backward > 0
    stored, rebuilt, _ = scores("M-*-", "none")
    assert stored == pytest.approx(one_block) and rebuilt == pytest.approx(one_block)
    assert scores("M-M-", "none") == (0.0, 0.0, 0.0)  # no attention: no scores, no 4-D mask
    # the answer: a Mamba stack under --attention eager is the same as under flash
    mamba = _nemotron_h("M-M-")
    eager = estimate_memory(TrainingSetup(arch=mamba, method="full", seq_len=SEQ, attention="eager"))
    flash = estimate_memory(TrainingSetup(arch=mamba, method="full", seq_len=SEQ, attention="flash"))
    assert eager.per_gpu_gb == pytest.approx(flash.per_gpu_gb)
