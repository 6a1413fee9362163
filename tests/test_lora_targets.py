"""``--lora-targets qkvo`` (the four attention projections, beside the contract's ``all`` and
``qv``): the adapter count, the activations and the throughput terms sit between the two, and the
calibration tooling reads the targets a measured run states in its notes."""

from __future__ import annotations

import json

import pytest

from gpuprice.models.architectures import find_model
from gpuprice.models.calibration.lora_notes import stated_lora_targets
from gpuprice.models.memory_features import lora_params
from gpuprice.models.throughput_adapters import adapter_bytes_per_token, adapter_widths
from gpuprice.models.throughput_fp32_stream import fp32_stream_bytes_per_token

LLAMA = "meta-llama/Llama-3.1-8B"


def test_counts_sit_between_qv_and_all() -> None:
    arch = find_model(LLAMA)
    assert arch is not None
    qv, qkvo, every = (lora_params(arch, 16, t) for t in ("qv", "qkvo", "all"))
    assert qv < qkvo < every
    h, q, kv = arch.hidden_size, arch.q_width, arch.kv_width
    # r (d_in + d_out) for q, k, v and o, every layer
    assert qkvo == arch.num_layers * 16 * ((h + q) + 2 * (h + kv) + (arch.attn_out_width + h))
    widths = {t: adapter_widths(arch, t) for t in ("qv", "qkvo", "all")}
    assert widths["qv"][0] < widths["qkvo"][0] < widths["all"][0]
    assert widths["qkvo"] == (
        arch.num_layers * (3 * h + arch.attn_out_width),
        arch.num_layers * (q + 2 * kv + h),
    )
    traffic = [adapter_bytes_per_token(arch, t, True) for t in ("qv", "qkvo", "all")]
    assert traffic == sorted(traffic) and len(set(traffic)) == 3
    # the fp32 stream: k's adapter adds its casts; o's input is the attention kernel's bf16 output
    stream = [fp32_stream_bytes_per_token(arch, t, True) for t in ("qv", "qkvo", "all")]
    assert stream[0] < stream[1] < stream[2]


def test_fit_and_estimate_take_it(cli, home) -> None:
    base = ["--model", LLAMA, "--method", "lora", "--lora-rank", "16", "--json"]
    answers = {t: json.loads(cli("fit", *base, "--lora-targets", t).out) for t in ("qv", "qkvo", "all")}
    assert answers["qv"]["lora_params"] < answers["qkvo"]["lora_params"] < answers["all"]["lora_params"]
    estimate = cli(
        "estimate",
        *base,
        "--lora-targets",
        "qkvo",
        "--gpu",
        "h100-sxm",
        "--tokens",
        "1B",
        "--usd-per-gpu-hour",
        "2",
        "--precision",
        "bf16-true",
    )
    assert estimate.code == 0, estimate.err
    assert json.loads(estimate.out)["time_breakdown"]["adapters"] > 0  # PEFT's fp32 adapters


def test_a_bad_value_names_the_valid_ones(cli) -> None:
    result = cli("fit", "--params-b", "8", "--method", "lora", "--lora-targets", "mlp")
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1
    for value in ("all", "qv", "qkvo"):
        assert value in result.err


@pytest.mark.parametrize(
    ("notes", "targets"),
    [
        ("lora r=16, alpha 16, dropout 0.1 on q_proj,k_proj,v_proj,o_proj", "qkvo"),
        ("LoRA r 16 on q_proj, k_proj, v_proj, o_proj", "qkvo"),
        ("lora target attention (q,k,v,o) r=16", "qkvo"),
        ("lora r=8 alpha 16 all linear (q,k,v,o,gate,up,down)", "all"),
        ("lora r=64 on c_attn,c_proj,w1,w2", "all"),
        ("LoRA r 8 on PEFT's default targets (q_proj, v_proj)", "qv"),
        ("lora r=8 on default targets", None),
    ],
)
def test_measured_rows_state_their_targets(notes: str, targets: str | None) -> None:
    assert stated_lora_targets(notes) == targets
