"""hf QLoRA's fp32 residual stream in the throughput model (models/throughput_fp32_stream.py): one
rule with the memory model (frameworks.qlora_fp32_stream), bytes counted from the code's casts and
fp32 elementwise ops, and the same figure from the scalar prediction, the ranking's frame and the
calibration tooling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import TEST_DATA
from gpuprice.models.architectures import find_model
from gpuprice.models.calibration.throughput_rows import benchmark_case, load_benchmark_rows, source_family
from gpuprice.models.frameworks import qlora_fp32_stream
from gpuprice.models.memory_setup import TrainingSetup, qlora_fp32_activations
from gpuprice.models.throughput import ModelShape, predict_frame, predict_throughput
from gpuprice.models.throughput_fp32_stream import fp32_stream_bytes_per_token

MISTRAL = "mistralai/Mistral-7B-v0.1"


def test_the_rule_is_the_memory_models() -> None:
    assert qlora_fp32_stream("hf", "qlora", "bf16-mixed")
    assert qlora_fp32_stream("hf", "qlora", "bf16-mixed", "zero2")  # the weights stay whole
    for sharding in ("zero3", "fsdp"):  # trl's is_sharded_qlora skips the cast
        assert not qlora_fp32_stream("hf", "qlora", "bf16-mixed", sharding)
    assert not qlora_fp32_stream("hf", "qlora", "bf16-true")  # no autocast: no fp32 norms
    assert not qlora_fp32_stream("hf", "lora", "bf16-mixed")
    for framework in ("torchtune", "torchtitan", "unsloth"):
        assert not qlora_fp32_stream(framework, "qlora", "bf16-mixed")
    arch = find_model(MISTRAL)
    for precision in ("bf16-mixed", "bf16-true"):
        setup = TrainingSetup(arch=arch, method="qlora", precision=precision, seq_len=4096)
        assert qlora_fp32_activations(setup) == qlora_fp32_stream("hf", "qlora", precision)


def test_bytes_follow_the_shape() -> None:
    arch = find_model(MISTRAL)
    assert arch is not None
    qv, every = (fp32_stream_bytes_per_token(arch, t, True) for t in ("qv", "all"))
    assert 0 < qv < every  # adapters on the MLP's linears add their casts and sums
    recomputed, once = (fp32_stream_bytes_per_token(arch, "qv", c) for c in (True, False))
    forward = recomputed - once
    assert 0 < forward < once  # checkpointing repeats the forward; backward costs more than it
    deeper = arch.model_copy(update={"num_layers": 2 * arch.num_layers})
    assert fp32_stream_bytes_per_token(deeper, "qv", True) == pytest.approx(2 * qv)
    # Mistral-7B: tens of MB per token, tens of microseconds on an A100's 2.0 TB/s
    assert 60e6 < qv < 140e6 and 60e6 < every < 140e6


def test_scalar_and_frame_agree() -> None:
    arch = find_model(MISTRAL)
    assert arch is not None
    single = predict_throughput(
        arch, "qlora", "a100-80gb-sxm", 1, 4096, 4, True, "bf16-mixed", lora_targets="qv", attention="flash"
    )
    plain = predict_throughput(arch, "qlora", "a100-80gb-sxm", 1, 4096, 4, True, "bf16-mixed")
    assert single.fp32_stream_share > 0.1 and plain.fp32_stream_share == 0.0
    assert single.tokens_per_sec_per_gpu < plain.tokens_per_sec_per_gpu
    shape = ModelShape.of(arch)
    frame = pd.DataFrame(
        [
            {
                "gpu": "a100-80gb-sxm",
                "gpus": 1,
                "method": "qlora",
                "seq_len": 4096,
                "micro_batch": 4,
                "grad_checkpointing": True,
                "precision": "bf16-mixed",
                "sharding": "none",
                "n_params": shape.n_params,
                "n_active_params": shape.n_active_params,
                "layers": shape.layers,
                "hidden": shape.hidden,
                "attn_width": shape.attn_width,
                "stream_bytes": fp32_stream_bytes_per_token(arch, "qv", True),
            }
        ]
    )
    assert predict_frame(frame)["tokens_per_sec_per_gpu"].iloc[0] == pytest.approx(
        single.tokens_per_sec_per_gpu
    )
    fsdp = predict_throughput(
        arch, "qlora", "a100-80gb-sxm", 2, 4096, 2, True, "bf16-mixed", "fsdp", lora_targets="qv"
    )
    assert fsdp.fp32_stream_share == 0.0


def test_tooling_counts_it_where_the_runs_had_it() -> None:
    rows = load_benchmark_rows(str(TEST_DATA / "throughput_holdout.csv"))
    fms = [benchmark_case(r) for r in rows if source_family(r) == "foundation-model-stack/fms-acceleration"]
    qlora = [c for c in fms if c.method == "qlora"]
    assert qlora and all((c.stream_bytes > 0) == (c.gpus == 1) for c in qlora)  # FSDP over 2: none
    assert all(c.stream_bytes == 0 for c in fms if c.method != "qlora")
    # Qwen's GPTQ QLoRA: PEFT does not upcast a GPTQ base's other layers
    public = load_benchmark_rows(str(TEST_DATA / "throughput_public.csv"))
    gptq = [benchmark_case(r) for r in public if "gptq" in str(r["precision"]).lower()]
    assert gptq and all(c.method == "qlora" and c.stream_bytes == 0 for c in gptq)
    assert np.all([c.stream_bytes == 0 for c in map(benchmark_case, public)])
