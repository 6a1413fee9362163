"""The per-layer activation count against what autograd saved when the frameworks' own code ran.

Figures measured with a ``torch.autograd.graph.saved_tensors_hooks`` pack hook (every saved
tensor's storage, parameters and buffers excluded, a view counting its whole base) over one
forward pass of the framework's model code at three layers minus two, Llama-2-7B's shape
(hidden 4,096, MLP 11,008, 32 heads), 64 tokens, bf16 on CPU: torch 2.4.1, transformers 4.44.2,
Lightning-AI/litgpt @26857050 and lit-gpt @8641822b (the commit its resource tables were measured
at). On CPU dropout keeps a 16-bit noise tensor where CUDA's ``native_dropout`` keeps a bool mask,
so each dropout's half element is taken off the CPU figure. The probe and the table:
models/memory_calibration.md, "Counted from what autograd saves".

The count may differ from a measurement by 1 %: the probe also sees the few (batch, heads, tokens)
tensors (SDPA's log-sum-exp, RMSNorm's rsqrt) the count leaves out.
"""

from __future__ import annotations

import pytest

from conftest import TEST_DATA
from gpuprice.models.architectures import ModelArch, find_model
from gpuprice.models.hf_config import arch_from_config_file
from gpuprice.models.memory_features import _activation_elements
from gpuprice.models.memory_setup import TrainingSetup, assumptions

LLAMA_2_7B = "meta-llama/Llama-2-7b-hf"

# (framework, method, LoRA targets, RMSNorm upcasts, hook-measured 16-bit elements per token and
# layer in units of hidden_size, on CUDA)
MEASURED = [
    # transformers' LlamaDecoderLayer (SDPA): the fp32 RMSNorm copy stands in for the block input
    ("hf", "full", "all", True, 22.77),
    # litgpt: fused qkv kept whole through v, fp32 normalised tensor for the norm weight's gradient
    ("litgpt", "full", "all", True, 26.83),
    # LoRAQKVLinear's index_copy source and the LoRA dropout's copy and mask (CPU 22.27)
    ("litgpt", "lora", "qv", True, 22.27 - 0.5),
    # every linear adapted: five dropouts, each its own copy and mask (CPU 31.53)
    ("litgpt", "lora", "all", True, 31.53 - 0.5 * (1 + 1 + 1 + 1 + 11008 / 4096)),
    # lit-gpt before its RMSNorm upcast (6178c7cc): the 16-bit block input kept (CPU 20.21)
    ("litgpt", "lora", "qv", False, 20.21 - 0.5),
]


@pytest.mark.parametrize(("framework", "method", "targets", "upcasts", "measured"), MEASURED)
def test_count_matches_what_autograd_saved(
    framework: str, method: str, targets: str, upcasts: bool, measured: float
) -> None:
    arch = find_model(LLAMA_2_7B)
    setup = TrainingSetup(
        arch=arch,
        framework=framework,
        method=method,
        precision="bf16-true",
        seq_len=64,
        micro_batch=1,
        attention="sdpa",
        lora_rank=8,
        lora_targets=targets,
        norm_upcasts=upcasts,
    )
    per_layer, _, _ = _activation_elements(setup)
    assert per_layer / arch.hidden_size == pytest.approx(measured, rel=0.01)


def test_mixed_precision_counts_the_same_block() -> None:
    # bf16-mixed keeps the same 16-bit activations: the same 22.77 h as bf16-true in transformers
    arch = find_model(LLAMA_2_7B)
    counts = {
        precision: _activation_elements(
            TrainingSetup(
                arch=arch, framework="hf", method="full", precision=precision, seq_len=64, micro_batch=1
            )
        )[0]
        for precision in ("bf16-true", "bf16-mixed")
    }
    assert counts["bf16-true"] == counts["bf16-mixed"]
    assert counts["bf16-true"] / arch.hidden_size == pytest.approx(22.77, rel=0.01)


def test_transformers_fused_qkv_families_keep_the_whole_projection() -> None:
    # Qwen-1's c_attn and Phi-3's qkv_proj are split into views; q and k are rotated into new
    # tensors and v reaches attention as a view, so its whole fused output stays alive (the
    # probe saw the same 3 h storage behind v in GPT-NeoX's query_key_value and litgpt's qkv).
    from gpuprice.models.memory_features import HF_FUSED_QKV_VIEWS

    arch = find_model(LLAMA_2_7B)
    counts = {}
    for model_type in ("llama", *sorted(HF_FUSED_QKV_VIEWS)):
        shaped = arch.model_copy(update={"model_type": model_type})
        setup = TrainingSetup(arch=shaped, framework="hf", method="full", precision="bf16-true", seq_len=64)
        counts[model_type] = _activation_elements(setup)[0] / arch.hidden_size
    assert counts["qwen"] == counts["phi3"] == pytest.approx(counts["llama"] + 2.0)
    # grouped KV heads are expanded into copies (repeat_kv): nothing beyond them stays alive
    grouped = arch.model_copy(update={"model_type": "phi3", "num_kv_heads": 8})
    llama_grouped = grouped.model_copy(update={"model_type": "llama"})
    assert (
        _activation_elements(TrainingSetup(arch=grouped, framework="hf", method="full", seq_len=64))[0]
        == _activation_elements(TrainingSetup(arch=llama_grouped, framework="hf", method="full", seq_len=64))[
            0
        ]
    )


def per_layer_count(arch: ModelArch, **fields: object) -> float:
    """The count per token and layer in units of h, bf16-true at 64 tokens with SDPA (hf full
    fine-tuning unless ``fields`` say otherwise), as the probes ran."""
    setup = TrainingSetup.model_validate(
        {"arch": arch, "framework": "hf", "method": "full", "precision": "bf16-true", "seq_len": 64}
        | {"attention": "sdpa", **fields}
    )
    return _activation_elements(setup)[0] / arch.hidden_size


def test_compile_keeps_the_activation_a_following_matmul_reads() -> None:
    # torch.compile's min-cut partitioner recomputes cheap pointwise ops in backward, but never one
    # whose output backward must materialise anyway (torch/_functorch/partitioners.py,
    # should_ban_recomputation with ban_recompute_materialized_backward, on by default). Measured with
    # the same pack hook over compiled blocks (torch 2.4.1, inductor on CPU, bf16, four layers minus
    # two; memory_calibration.md, "torch.compile keeps what a matmul reads"):
    # * the book's GPT block (rasbt/LLMs-from-scratch ch05/10_llm-training-speed/01_opt_single_gpu.py
    #   @908dd2f: nn.LayerNorm, SDPA, a tanh-GELU MLP 4 x 768 wide): 34.07 bytes per token and layer
    #   in units of h, two of them the dropouts' bool masks, which the count leaves out: 16.04
    #   16-bit elements. The GELU output is fc2's input, read by fc2's weight-gradient matmul: saved.
    # * a LayerNorm + SwiGLU block (512 wide, MLP 1,408): 26.0 -> 20.5 bytes eager -> compiled, one
    #   act(gate) (2 x 2.75 h bytes) fewer: it feeds only pointwise ops in backward, so it is
    #   recomputed.
    gpt = arch_from_config_file(TEST_DATA / "configs" / "llms-from-scratch-gpt-124m-vocab50304.json")
    assert not gpt.gated_mlp and gpt.intermediate_size == 4 * gpt.hidden_size

    def per_layer(arch: ModelArch, compiled: bool, method: str = "full") -> float:
        return per_layer_count(arch, method=method, lora_targets="qv", compile=compiled)

    assert per_layer(gpt, compiled=True) == pytest.approx(16.04, rel=0.01)
    llama = find_model(LLAMA_2_7B)
    width = llama.intermediate_size / llama.hidden_size
    # a gated MLP: compiled keeps neither act(gate) nor the RMSNorm copies (2 norms x (copy + normalised))
    assert per_layer(llama, compiled=False) - per_layer(llama, compiled=True) == pytest.approx(width + 4.0)
    # a frozen fc2 (LoRA on q and v only) takes no weight gradient: nothing reads act(fc1) but its own
    # backward, so compile recomputes it there
    assert per_layer(gpt, compiled=True, method="lora") < per_layer(gpt, compiled=True) - 4.0


# torch.nn.LayerNorm blocks (same hook, torch 2.4.1, CPU, bf16-true, 64 tokens, three layers minus
# two): transformers 4.44.2's GPT-NeoX layer (512 wide, MLP 2,048, dropout 0), full fine-tuning; and
# litgpt @26857050's Pythia, Phi-2 and Falcon-7B blocks, LoRA on q and v (r 8, dropout 0.05; CPU's
# noise tensor taken down to CUDA's bool mask, -0.5). (model, framework, method, measured)
LAYERNORM_MEASURED = [
    ("EleutherAI/pythia-1b", "hf", "full", 17.16),
    ("EleutherAI/pythia-1b", "litgpt", "lora", 15.14 - 0.5),
    ("microsoft/phi-2", "litgpt", "lora", 15.16 - 0.5),
    ("tiiuae/falcon-7b", "litgpt", "lora", 12.11 - 0.5),
]


@pytest.mark.parametrize(("name", "framework", "method", "measured"), LAYERNORM_MEASURED)
def test_torch_layernorm_keeps_no_copy_of_its_own(
    name: str, framework: str, method: str, measured: float
) -> None:
    # native_layer_norm saves its input, mean and rstd and rebuilds the normalised tensor in
    # backward, so a LayerNorm block keeps neither the fp32 copy nor the normalised tensor that
    # transformers' RMSNorm keeps: counted so, each count is within 8 % of the probe (10-31 % over
    # with RMSNorm's terms).
    arch = find_model(name)
    assert arch.norm_type == "layernorm"

    def per_layer(shape: ModelArch, precision: str = "bf16-true") -> float:
        return per_layer_count(
            shape, framework=framework, method=method, lora_targets="qv", lora_rank=8, precision=precision
        )

    assert per_layer(arch) == pytest.approx(measured, rel=0.08)
    as_rmsnorm = per_layer(arch.model_copy(update={"norm_type": "rmsnorm"}))
    assert as_rmsnorm > per_layer(arch) and abs(as_rmsnorm / measured - 1) > 0.08
    # under autocast layer_norm runs in fp32: what it saves is the fp32 cast of its input
    if framework == "hf":
        assert per_layer(arch, "bf16-mixed") == per_layer(arch) + arch.norms_per_layer


# transformers 4.44.2 decoder layers (same hook, torch 2.4.1, CPU, bf16-true, SDPA, full fine-tuning,
# 512 wide, MLP 2,048, dropout 0, 64 tokens, three layers minus two): (model_type, measured)
TRANSFORMERS_LAYERNORM_MEASURED = [
    ("gpt2", 28.04),
    ("gpt_neox", 17.16),
    ("starcoder2", 16.29),
    ("stablelm", 24.10),
]


@pytest.mark.parametrize(("model_type", "measured"), TRANSFORMERS_LAYERNORM_MEASURED)
def test_transformers_layernorm_families_against_the_probe(model_type: str, measured: float) -> None:
    # GPT-2's MLP runs transformers' NewGELUActivation (gelu_new), a Python tanh formula that keeps
    # its tanh output, 0.5 x and 1 + tanh beside its input (probed alone: 3.0 elements per element;
    # torch's fused gelu and gelu_pytorch_tanh keep none): three MLP widths more than StarCoder2's
    # fused tanh GELU of the same width. GPT-NeoX's fused query_key_value stays alive behind v's view
    # (HF_FUSED_QKV_VIEWS); its parallel residual, whose MLP norm reads attention's input, is not
    # counted (the count is 5 % over: memory_calibration.md, "The MLP's activation and the
    # parallel residual").
    base = {"hidden_size": 512, "num_layers": 3, "num_heads": 8, "num_kv_heads": 8, "head_dim": 64}
    arch = ModelArch(
        name=model_type,
        model_type=model_type,
        intermediate_size=2048,
        vocab_size=1000,
        tied_embeddings=False,
        gated_mlp=model_type == "stablelm",
        norm_type="layernorm",
        gelu_new=model_type == "gpt2",
        **base,
    )
    tolerance = 0.06 if model_type == "gpt_neox" else 0.02
    assert per_layer_count(arch) == pytest.approx(measured, rel=tolerance)
    if model_type == "gpt2":  # the Python formula only in transformers' eager path (2,048 = 4 h wide)
        assert per_layer_count(arch) - per_layer_count(arch, compile=True) == pytest.approx(3 * 4)
        assert per_layer_count(arch, framework="litgpt") < per_layer_count(arch) - 2 * 4


def test_grouped_kv_heads_are_kept_at_query_width_unless_flash_attention_takes_them_as_they_are() -> None:
    # transformers' sdpa and eager paths repeat grouped K/V heads into query-width copies before the
    # kernel (repeat_kv: expand + reshape), and SDPA saves those copies: the same pack-hook probe
    # over a Llama decoder with 2 K/V heads of 8 (transformers 4.44.2, torch 2.4.1 CPU, bf16, three
    # layers minus two) keeps 28.04 h a token, exactly what the same block with 8 K/V heads keeps.
    # FlashAttention takes the grouped heads as they are (flash_attn_func: "MQA/GQA by passing in
    # KV with fewer heads than Q"), so what it saves for K and V is their own width.
    gqa = ModelArch(
        name="llama-gqa",
        model_type="llama",
        hidden_size=512,
        num_layers=3,
        num_heads=8,
        num_kv_heads=2,
        head_dim=64,
        intermediate_size=2048,
        vocab_size=1000,
        tied_embeddings=False,
        gated_mlp=True,
        norm_type="rmsnorm",
    )
    mha = gqa.model_copy(update={"num_kv_heads": 8})
    assert per_layer_count(gqa) == per_layer_count(mha) == pytest.approx(28.04, rel=0.02)
    assert per_layer_count(gqa, attention="eager") == per_layer_count(mha, attention="eager")
    kv_share = gqa.kv_width / gqa.hidden_size  # 0.25
    assert per_layer_count(mha) - per_layer_count(gqa, attention="flash") == pytest.approx(2 * (1 - kv_share))
    assert per_layer_count(mha, attention="flash") == per_layer_count(mha)


def test_only_frameworks_that_hand_flash_attention_grouped_heads_keep_them_narrow() -> None:
    # transformers and Unsloth pass grouped K/V to flash_attn_func; torchtune, torchtitan and litgpt
    # widen them to the query's heads before their kernel, so --attention flash changes nothing there.
    gqa = find_model("mistralai/Mistral-7B-v0.1")
    assert gqa is not None and gqa.num_kv_heads < gqa.num_heads
    for framework, narrows in (("hf", True), ("unsloth", True), ("torchtune", False), ("litgpt", False)):
        flash, sdpa = (per_layer_count(gqa, framework=framework, attention=a) for a in ("flash", "sdpa"))
        expected = 2 * (gqa.q_width - gqa.kv_width) / gqa.hidden_size if narrows else 0.0
        assert sdpa - flash == pytest.approx(expected), framework
    setup = TrainingSetup.model_validate(
        {"arch": gqa, "method": "lora", "seq_len": 4096, "attention": "flash"}
    )
    assert any("grouped K/V heads kept at their own width" in line for line in assumptions(setup))
    setup = setup.model_copy(update={"attention": "sdpa"})
    assert any("grouped K/V heads kept at query width" in line for line in assumptions(setup))
