"""Architecture catalog, parameter counts, config.json reading and the params-only shape."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gpuprice.errors import BadInput
from gpuprice.models.architectures import (
    ModelArch,
    catalog,
    find_model,
    model_ids,
    normalize_model_name,
    resolve_model,
    shape_for_params,
)
from gpuprice.models.hf_config import arch_from_config, arch_from_config_file
from tests.conftest import TEST_DATA

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
MEASURED_CSV = TEST_DATA / "measured_memory_public.csv"

# Families the brief requires (Hugging Face repo ids).
REQUIRED_IDS = [
    "meta-llama/Llama-2-7b-hf",
    "meta-llama/Llama-2-13b-hf",
    "meta-llama/Llama-2-70b-hf",
    "meta-llama/Llama-3.1-8B",
    "meta-llama/Llama-3.1-70B",
    "meta-llama/Llama-3.1-405B",
    "meta-llama/Llama-3.2-1B",
    "meta-llama/Llama-3.2-3B",
    "meta-llama/Llama-3.3-70B-Instruct",
    "mistralai/Mistral-7B-v0.1",
    "mistralai/Mixtral-8x7B-v0.1",
    "mistralai/Mixtral-8x22B-v0.1",
    "Qwen/Qwen-7B",
    "Qwen/Qwen-14B",
    "Qwen/Qwen-72B",
    "Qwen/Qwen2.5-0.5B",
    "Qwen/Qwen2.5-1.5B",
    "Qwen/Qwen2.5-3B",
    "Qwen/Qwen2.5-7B",
    "Qwen/Qwen2.5-14B",
    "Qwen/Qwen2.5-32B",
    "Qwen/Qwen2.5-72B",
    "google/gemma-2b",
    "google/gemma-7b",
    "google/gemma-2-9b",
    "google/gemma-2-27b",
    "microsoft/phi-2",
    "microsoft/Phi-3-mini-4k-instruct",
    "microsoft/Phi-3-medium-4k-instruct",
    "tiiuae/falcon-7b",
    "tiiuae/falcon-40b",
    "01-ai/Yi-34B",
    "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T",
    "deepseek-ai/DeepSeek-V2-Lite",
    "bigcode/starcoder",
]

# fixture file -> catalog id it must reproduce
FIXTURE_MODELS = {
    "llama-3.1-8b": "meta-llama/Llama-3.1-8B",
    "llama-3.2-1b": "meta-llama/Llama-3.2-1B",
    "mistral-7b-v0.1": "mistralai/Mistral-7B-v0.1",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-v0.1",
    "qwen-7b": "Qwen/Qwen-7B",
    "qwen2.5-7b": "Qwen/Qwen2.5-7B",
    "gemma-7b": "google/gemma-7b",
    "gemma-2-9b": "google/gemma-2-9b",
    "phi-2": "microsoft/phi-2",
    "phi-1_5-msft": "microsoft/phi-1_5",
    "phi-3-mini": "microsoft/Phi-3-mini-4k-instruct",
    "falcon-7b": "tiiuae/falcon-7b",
    "falcon-40b-refinedweb": "tiiuae/falcon-40b",
    "starcoder": "bigcode/starcoder",
    "pythia-6.9b": "EleutherAI/pythia-6.9b",
    "bloom-7b1": "bigscience/bloom-7b1",
    "deepseek-v2-lite": "deepseek-ai/DeepSeek-V2-Lite",
    "glm-4-9b": "THUDM/glm-4-9b",
    "t0-3b": "bigscience/T0_3B",
}


def test_required_families_are_in_the_catalog() -> None:
    missing = [m for m in REQUIRED_IDS if m not in catalog()]
    assert not missing
    assert len(model_ids()) >= 50


@pytest.mark.parametrize("model_id", list(catalog()))
def test_parameter_count_matches_published_total(model_id: str) -> None:
    entry = catalog()[model_id]
    assert entry.arch.n_params / 1e9 == pytest.approx(entry.published_params_b, rel=0.02)


@pytest.mark.parametrize(
    ("model_id", "active_b"),
    [("mistralai/Mixtral-8x7B-v0.1", 12.9), ("mistralai/Mixtral-8x22B-v0.1", 39.0)],
)
def test_moe_active_parameters(model_id: str, active_b: float) -> None:
    arch = catalog()[model_id].arch
    assert arch.n_active_params / 1e9 == pytest.approx(active_b, rel=0.02)
    assert arch.n_active_params < arch.n_params


def test_dense_models_touch_every_parameter() -> None:
    arch = catalog()["meta-llama/Llama-3.1-8B"].arch
    assert arch.n_active_params == arch.n_params
    # GQA: 8 KV heads of 128 -> K/V projections 4096 x 1024
    assert arch.kv_width == 1024 and arch.q_width == 4096


def test_largest_layer_is_a_block_or_the_embedding() -> None:
    llama2 = catalog()["meta-llama/Llama-2-7b-hf"].arch
    llama3 = catalog()["meta-llama/Llama-3.1-8B"].arch
    assert llama2.largest_layer_params == llama2.dense_block_params()  # 202M block > 131M embedding
    assert llama3.largest_layer_params == 128256 * 4096  # 525M embedding > 218M block


def test_measured_csv_models_resolve_with_matching_sizes() -> None:
    """Every model named in the measurement set is in the catalog (sources that store a tied head
    twice report the untied count, so either count may match)."""
    with MEASURED_CSV.open() as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        arch = find_model(row["model"])
        assert arch is not None, row["model"]
        counts = [
            arch.n_params,
            arch.n_params + (arch.vocab_size * arch.hidden_size if arch.tied_embeddings else 0),
        ]
        reported = float(row["params_b"]) * 1e9
        assert min(abs(c / reported - 1) for c in counts) < 0.02, (row["model"], arch.n_params)


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        ("Llama-2-7b", "meta-llama/Llama-2-7b-hf"),
        ("meta-llama/llama-2-7b-HF", "meta-llama/Llama-2-7b-hf"),
        ("llama-3-8b", "meta-llama/Meta-Llama-3-8B"),
        ("Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),
        ("phi-1.5", "microsoft/phi-1_5"),
        ("Mistral-7B-v0.2", "mistral-community/Mistral-7B-v0.2"),
        ("glm-4-9b-chat", "THUDM/glm-4-9b"),
        ("bloomz-7b1", "bigscience/bloom-7b1"),
    ],
)
def test_names_as_sources_write_them(name: str, model_id: str) -> None:
    assert find_model(name) == catalog()[model_id].arch


def test_normalize_strips_org_and_suffixes() -> None:
    assert normalize_model_name("meta-llama/Llama-2-7b-chat-hf") == "llama-2-7b"
    assert normalize_model_name("microsoft/phi-1_5") == "phi-1.5"
    # re-uploads in another weight format train the original's shape
    assert normalize_model_name("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit") == "meta-llama-3.1-8b"
    assert normalize_model_name("unsloth/gemma-2-9b-it-unsloth-bnb-4bit") == "gemma-2-9b"
    assert find_model("unsloth/mistral-7b-v0.3-bnb-4bit") == find_model("mistralai/Mistral-7B-v0.3")
    assert find_model("TheBloke/Llama-2-7B-Chat-GPTQ") == find_model("meta-llama/Llama-2-7b-hf")


def test_resolve_model_takes_the_exact_shape_and_checks_a_size_beside_it() -> None:
    with pytest.raises(BadInput, match="give the model: --model ID"):
        resolve_model()
    # a size beside a catalog id confirms it (gemma-7b counts 8.54B with its embeddings)
    assert resolve_model(model_id="google/gemma-7b", params_b=8.5) == find_model("google/gemma-7b")
    with pytest.raises(BadInput, match=r"--params-b 7 disagrees with google/gemma-7b \(8.54B"):
        resolve_model(model_id="google/gemma-7b", params_b=7)
    # a model the catalog does not hold, given with its size: the representative shape, named
    stand_in = resolve_model(model_id="example-org/new-model-8b", params_b=8)
    assert stand_in.representative and stand_in.n_params == shape_for_params(8).n_params
    assert stand_in.name == "example-org/new-model-8b (not in the catalog: dense-8b)"
    with pytest.raises(BadInput, match="unknown model 'example-org/new-model-8b'"):
        resolve_model(model_id="example-org/new-model-8b")
    assert not resolve_model(model_id="google/gemma-7b").representative and shape_for_params(7).representative


def test_unknown_model_names_close_matches() -> None:
    with pytest.raises(BadInput) as exc:
        resolve_model(model_id="meta-llama/Llama-3.1-7B")
    message = str(exc.value)
    assert "meta-llama/Llama-3.1-7B" in message and "meta-llama/Llama-3.1-70B" in message
    assert "\n" not in message


@pytest.mark.parametrize("params_b", [0.07, 0.5, 1.0, 3.0, 6.74, 13, 34, 70, 175, 405, 1000])
def test_shape_for_params_hits_the_size(params_b: float) -> None:
    arch = shape_for_params(params_b)
    assert arch.n_params / 1e9 == pytest.approx(params_b, rel=0.03)
    assert arch.num_heads * arch.head_dim == arch.hidden_size
    assert arch.gated_mlp and arch.num_experts == 1


def test_shape_for_params_reproduces_llama2_7b() -> None:
    arch = shape_for_params(6.74)
    llama = catalog()["meta-llama/Llama-2-7b-hf"].arch
    assert (arch.hidden_size, arch.num_layers, arch.intermediate_size) == (
        llama.hidden_size,
        llama.num_layers,
        llama.intermediate_size,
    )


def test_shape_grows_with_size() -> None:
    shapes = [shape_for_params(p) for p in (1, 7, 70, 400)]
    assert [s.hidden_size for s in shapes] == sorted(s.hidden_size for s in shapes)
    assert [s.num_layers for s in shapes] == sorted(s.num_layers for s in shapes)


@pytest.mark.parametrize("bad", [0.0, -3.0, 1e7, float("nan")])
def test_shape_rejects_absurd_sizes(bad: float) -> None:
    with pytest.raises(BadInput):
        resolve_model(params_b=bad)


# ----- config.json -------------------------------------------------------------------------------
@pytest.mark.parametrize("fixture", sorted(FIXTURE_MODELS))
def test_config_fixture_matches_catalog(fixture: str) -> None:
    arch = arch_from_config_file(CONFIGS / f"{fixture}.json")
    expected = catalog()[FIXTURE_MODELS[fixture]].arch
    assert arch.n_params == pytest.approx(expected.n_params, rel=0.005)
    assert arch.n_active_params == pytest.approx(expected.n_active_params, rel=0.005)
    for field in (
        "hidden_size",
        "num_layers",
        "num_heads",
        "num_kv_heads",
        "head_dim",
        "intermediate_size",
        "vocab_size",
        "tied_embeddings",
        "gated_mlp",
        "num_experts",
        "experts_per_token",
    ):
        assert getattr(arch, field) == getattr(expected, field), field


def test_resolve_model_reads_a_config_path() -> None:
    arch = resolve_model(config_path=str(CONFIGS / "mixtral-8x7b.json"))
    assert arch.num_experts == 8 and arch.experts_per_token == 2


def test_field_name_variants(tmp_path: Path) -> None:
    # GPT-2 style names, no intermediate size -> 4h, learned positions, tied head
    gpt2 = {
        "model_type": "gpt2",
        "n_embd": 768,
        "n_layer": 12,
        "n_head": 12,
        "vocab_size": 50257,
        "n_positions": 1024,
    }
    arch = arch_from_config(gpt2, "gpt2/config.json")
    assert arch.intermediate_size == 4 * 768 and arch.position_embeddings == 1024 and arch.tied_embeddings
    assert arch.n_params / 1e6 == pytest.approx(124.4, rel=0.01)  # GPT-2 small


def test_qwen1_intermediate_is_halved_and_falcon_multi_query() -> None:
    qwen = arch_from_config_file(CONFIGS / "qwen-7b.json")
    assert qwen.intermediate_size == 11008  # config stores 22016
    falcon = arch_from_config_file(CONFIGS / "falcon-7b.json")
    assert falcon.num_kv_heads == 1 and falcon.norms_per_layer == 1
    falcon40 = arch_from_config_file(CONFIGS / "falcon-40b-refinedweb.json")
    assert falcon40.num_kv_heads == 8 and falcon40.norms_per_layer == 2


def test_unknown_model_type_reads_like_llama() -> None:
    cfg = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    cfg["model_type"] = "brand_new_llm"
    arch = arch_from_config(cfg)
    assert arch.gated_mlp and arch.n_params == catalog()["meta-llama/Llama-3.1-8B"].arch.n_params


def test_text_config_of_multimodal_wrappers() -> None:
    inner = json.loads((CONFIGS / "mistral-7b-v0.1.json").read_text())
    arch = arch_from_config({"model_type": "llava", "text_config": inner})
    assert arch.hidden_size == 4096 and arch.num_kv_heads == 8


def test_missing_required_field_names_field_and_file(tmp_path: Path) -> None:
    cfg = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    del cfg["num_hidden_layers"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    with pytest.raises(BadInput) as exc:
        arch_from_config_file(path)
    assert str(path) in str(exc.value) and "num_hidden_layers" in str(exc.value)


def test_malformed_json_names_file_and_position(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "hidden_size": 4096,\n  "num_hidden_layers": 32\n  "vocab_size": 32000\n}\n')
    with pytest.raises(BadInput) as exc:
        arch_from_config_file(path)
    assert str(path) in str(exc.value) and "line 4" in str(exc.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[1, 2]", "expected a JSON object"),
        (
            '{"hidden_size": "big", "num_attention_heads": 8, "num_hidden_layers": 2, "vocab_size": 10}',
            "hidden size",
        ),
    ],
)
def test_wrong_shapes_and_types(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(BadInput, match=fragment):
        arch_from_config_file(path)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not found"):
        resolve_model(config_path=tmp_path / "nope.json")


def test_inconsistent_heads_rejected() -> None:
    with pytest.raises(BadInput, match="not a multiple"):
        arch_from_config(
            {
                "model_type": "llama",
                "hidden_size": 512,
                "num_hidden_layers": 2,
                "num_attention_heads": 8,
                "num_key_value_heads": 3,
                "vocab_size": 100,
            }
        )
    with pytest.raises(ValueError):
        ModelArch(
            name="x",
            model_type="llama",
            hidden_size=64,
            num_layers=1,
            num_heads=4,
            num_kv_heads=3,
            head_dim=16,
            intermediate_size=128,
            vocab_size=10,
            tied_embeddings=False,
            gated_mlp=True,
        )
