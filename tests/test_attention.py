"""--attention: eager attention and explicit-score models keep seq x seq scores per head (issue 33)."""

from __future__ import annotations

import json

import pytest

from gpuprice.models.architectures import resolve_model
from gpuprice.models.memory import GB, TrainingSetup, estimate_memory

LLAMA2_7B = resolve_model("meta-llama/Llama-2-7b-hf", None, None)
BLOOM = resolve_model("bigscience/bloom-7b1", None, None)


def _peak(**fields: object) -> float:
    return estimate_memory(TrainingSetup(arch=LLAMA2_7B, method="lora", **fields)).breakdown.activations


@pytest.mark.parametrize("seq_len", [2048, 4096, 8192])
def test_eager_scores_with_recomputation_are_one_layer_plus_its_backward(seq_len: int) -> None:
    # fused loss: no logits, so the rebuilt layer's moment is the peak (with logits it is the
    # larger of the two moments: test_memory.py, test_the_rebuilt_layer_and_the_loss_...)
    extra = _peak(seq_len=seq_len, grad_checkpointing=True, attention="eager", loss="fused") - _peak(
        seq_len=seq_len, grad_checkpointing=True, attention="sdpa", loss="fused"
    )
    elements = 1 * LLAMA2_7B.num_heads * seq_len**2
    # 6 B kept (fp32 softmax + bf16 probabilities) + 10 B in backward + the (b, 1, s, s) bf16 mask
    assert extra * GB == pytest.approx(elements * 16 + seq_len**2 * 2, rel=1e-9)


def test_eager_without_recomputation_keeps_every_layers_scores() -> None:
    extra = _peak(seq_len=1024, attention="eager") - _peak(seq_len=1024, attention="sdpa")
    elements = LLAMA2_7B.num_heads * 1024**2
    assert extra * GB == pytest.approx(elements * (6 * LLAMA2_7B.num_layers + 10) + 1024**2 * 2, rel=1e-9)
    assert _peak(seq_len=1024, attention="flash") == _peak(seq_len=1024, attention="sdpa")


def test_defaults_follow_the_model_and_the_framework() -> None:
    assert TrainingSetup(arch=LLAMA2_7B, method="lora").attention == "sdpa"
    assert TrainingSetup(arch=LLAMA2_7B, method="lora", framework="unsloth").attention == "flash"
    assert TrainingSetup(arch=BLOOM, method="lora").attention == "eager"  # ALiBi: explicit scores
    # asking a fused kernel does not remove the scores a model's own code builds
    fused = estimate_memory(TrainingSetup(arch=BLOOM, method="lora", attention="sdpa", seq_len=2048))
    eager = estimate_memory(TrainingSetup(arch=BLOOM, method="lora", attention="eager", seq_len=2048))
    assert fused.per_gpu_gb == eager.per_gpu_gb
    assert any("explicit scores" in line for line in fused.assumptions)


def test_cli_attention_value_and_bad_value(cli) -> None:
    ok = cli(
        "fit", "--model", "meta-llama/Llama-2-7b-hf", "--method", "lora", "--attention", "eager", "--json"
    )
    assert ok.code == 0 and json.loads(ok.out)["attention"] == "eager"
    bad = cli("fit", "--model", "meta-llama/Llama-2-7b-hf", "--method", "lora", "--attention", "xformers")
    assert bad.code == 2 and len(bad.err.strip().splitlines()) == 1
    assert "xformers" in bad.err and all(v in bad.err for v in ("flash", "sdpa", "eager"))


def test_batch_column_attention(cli, tmp_path) -> None:
    rows = tmp_path / "runs.csv"
    rows.write_text(
        "model,method,seq_len,grad_checkpointing,attention,gpu\n"
        "meta-llama/Llama-2-7b-hf,lora,4096,true,sdpa,a100-80gb-sxm\n"
        "meta-llama/Llama-2-7b-hf,lora,4096,true,eager,a100-80gb-sxm\n",
        encoding="utf-8",
    )
    result = cli("fit", "--batch", str(rows))
    assert result.code == 0, result.err
    sdpa, eager = (json.loads(line) for line in result.out.splitlines())
    assert (sdpa["attention"], eager["attention"]) == ("sdpa", "eager")
    assert eager["per_gpu_gb"] > sdpa["per_gpu_gb"] + 8  # 32 heads x 4096^2 x 16 B = 8.6 GB
    assert {"verdict", "band_gb", "gpu_memory_gb"} <= set(eager)
