"""The workload catalog: built-in classes, user overrides, and one-line errors with file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuprice.errors import BadInput
from gpuprice.models.workloads import BUILTIN_PATH, Workload, get_workload, load_file, load_workloads

GOOD = """\
workloads:
  - name: my-run
    description: a small LoRA run
    model: meta-llama/Llama-3.1-8B
    method: lora
    seq_len: 1024
    tokens: 20_000_000
    checkpoint_interval_tokens: 5_000_000
    cost_terms:
      storage_usd_per_gb_month: 0.02
"""


@pytest.fixture(autouse=True)
def _no_user_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUPRICE_WORKLOADS", raising=False)


def write(tmp_path: Path, text: str, name: str = "w.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_builtin_catalog_covers_the_guide_classes() -> None:
    workloads = {w.name: w for w in load_workloads()}
    qlora_70b = workloads["llama-3.1-70b-qlora"]
    assert (qlora_70b.method, qlora_70b.arch().n_params > 60e9) == ("qlora", True)
    methods = {(w.method, w.optimizer) for w in workloads.values() if w.arch().n_params > 60e9}
    assert {("qlora", "paged_adamw8bit"), ("full", "adamw"), ("full", "adamw8bit")} <= methods
    small_adapters = [
        w for w in workloads.values() if w.method in ("lora", "qlora") and 6e9 < w.arch().n_params < 14e9
    ]
    assert {w.method for w in small_adapters} == {"lora", "qlora"}
    assert any(w.method == "full" and 6e9 < w.arch().n_params < 35e9 for w in workloads.values())
    pretraining = workloads["llama-3.1-8b-continued-pretraining"]
    assert pretraining.training_tokens >= 100e9
    assert (pretraining.min_nodes, pretraining.max_nodes) == (2, 64)
    assert any(w.training_tokens <= 10e6 for w in workloads.values())  # budget experiment


def test_every_builtin_workload_is_usable() -> None:
    for workload in load_workloads():
        setup = workload.setup(gpus=8, sharding="zero3")
        assert setup.method == workload.method
        assert workload.checkpoint_gb() > 0
        definition = workload.definition()
        json.dumps(definition)
        assert definition["checkpoints"] >= 1
        assert definition["source"].endswith("workloads.yaml")


def test_derived_checkpoint_size_and_counts() -> None:
    full = get_workload("llama-3.1-70b-full-adamw")
    assert full.checkpoint_gb() == pytest.approx(12 * full.arch().n_params / 1e9)  # fp32 master + 2 moments
    adapters = get_workload("llama-3.1-70b-qlora")
    assert adapters.checkpoint_gb() < 5  # adapters only
    pretraining = get_workload("llama-3.1-8b-continued-pretraining")
    # 100B tokens as written (not 25,000 steps of 4,194,304 tokens = 104.858B), a checkpoint every 4B.
    assert pretraining.training_tokens == 100e9 and pretraining.tokens_per_checkpoint == 4e9
    assert pretraining.definition()["checkpoints"] == 25


def test_user_file_extends_and_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    override = (
        GOOD
        + """\
  - name: llama-3.1-8b-lora
    model: meta-llama/Llama-3.1-8B
    method: lora
    tokens: 1_000_000
    checkpoint_interval_hours: 2
"""
    )
    workloads = {w.name: w for w in load_workloads(write(tmp_path, override))}
    assert workloads["my-run"].cost_terms.storage_usd_per_gb_month == 0.02
    assert workloads["my-run"].cost_terms.startup_hours == 0.25  # untouched defaults
    assert workloads["llama-3.1-8b-lora"].training_tokens == 1e6
    assert workloads["llama-3.1-8b-lora"].tokens_per_checkpoint is None  # wall-clock checkpoints
    assert "llama-3.1-70b-qlora" in workloads
    assert len(workloads) == len(load_file(BUILTIN_PATH)) + 1


def test_unknown_workload_names_close_matches() -> None:
    with pytest.raises(BadInput, match="llama-3.1-70b-qlora"):
        get_workload("llama-3.1-70b-qlra")


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (GOOD.replace("seq_len: 1024", "seq_len: lots"), 6, "field seq_len"),
        (GOOD.replace("method: lora", "method: prefix"), 5, "field method"),
        (GOOD.replace("    seq_len: 1024\n", "    seq_len: 1024\n    sequence: 3\n"), 7, "field sequence"),
        (
            GOOD.replace("      storage_usd_per_gb_month: 0.02", "      storage_usd_per_gb_month: -1"),
            10,
            "cost_terms.storage_usd_per_gb_month",
        ),
        (GOOD.replace("    method: lora\n", ""), 2, "field method"),
        (GOOD.replace("    tokens: 20_000_000\n", ""), 2, "tokens"),
        (GOOD.replace("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8C"), 4, "Llama-3.1-8B"),
        (GOOD.replace("seq_len: 1024", "seq_len: [1024"), 6, "malformed YAML"),
        (GOOD.replace("name: my-run", "name: My Run"), 2, "field name"),
        (GOOD + GOOD.split("workloads:\n")[1], 11, "defined twice"),
        ("workloads:\n  - just a string\n", 2, "mapping"),
        ("workload:\n  - name: x\n", 1, "unknown top-level key"),
        ("workloads: 3\n", 1, "must be a list"),
    ],
)
def test_malformed_files_name_file_line_and_field(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(BadInput) as info:
        load_file(path)
    message = str(info.value)
    assert message.startswith(f"{path} line {line}:"), message
    assert fragment in message
    assert "\n" not in message


def test_missing_or_empty_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BadInput, match="not found"):
        load_file(tmp_path / "nope.yaml")
    with pytest.raises(BadInput, match="empty"):
        load_file(write(tmp_path, ""))
    with pytest.raises(BadInput, match="missing.yaml"):
        load_workloads(tmp_path / "missing.yaml")


def test_model_validation_rules() -> None:
    base = dict(
        name="x", model="meta-llama/Llama-3.1-8B", method="lora", tokens=1e6, checkpoint_interval_tokens=1e5
    )
    Workload.model_validate(base)
    for broken in (
        {**base, "params_b": 70},  # a size that is not the model's
        {**base, "steps": 10},  # tokens and steps
        {**{k: v for k, v in base.items() if k != "tokens"}, "steps": 10},  # steps without batch
        {**base, "checkpoint_interval_hours": 1},  # two intervals
        {**base, "min_nodes": 4, "max_nodes": 2},
    ):
        with pytest.raises(ValueError):
            Workload.model_validate(broken)
    # a size beside the model confirms it; beside a model the catalog does not hold, it shapes it
    assert Workload.model_validate({**base, "params_b": 8}).arch().name == "meta-llama/Llama-3.1-8B"
    unknown = Workload.model_validate({**base, "model": "example-org/new-8b", "params_b": 8}).arch()
    assert unknown.representative and unknown.name.startswith("example-org/new-8b (not in the catalog")
    by_size = Workload.model_validate({**{k: v for k, v in base.items() if k != "model"}, "params_b": 13})
    assert by_size.arch().n_params == pytest.approx(13e9, rel=0.02)


def test_yaml_takes_the_command_line_spellings_and_limits(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "workloads:\n  - name: j\n    model: meta-llama/Llama-3.1-8B\n    method: lora\n    tokens: 500M\n"
        "    checkpoint_interval_tokens: 50M\n    deadline_hours: 12\n    max_gpus: 8\n    budget_usd: 100\n"
        "    tier: on_demand,spot\n    providers: [lambda, Runpod]\n",
    )
    (job,) = load_file(path)
    assert job.training_tokens == 5e8 and job.tokens_per_checkpoint == 5e7
    assert job.tier == ("on_demand", "spot") and job.providers == ("lambda", "runpod")
    assert job.gpu_limit == 8 and job.budget_usd == 100
    definition = job.definition()
    assert definition["lora_rank"] == 16 and definition["tier"] == ["on_demand", "spot"]
    for text, fragment in (
        ("tokens: 5Q", "tokens"),
        ("tokens: 1B\n    tier: spto", "tier"),
        ("tokens: 1B\n    providers: lamda", "lamda"),
        ("tokens: 1B\n    budget_usd: -1", "budget_usd"),
    ):
        bad = write(
            tmp_path, f"workloads:\n  - name: j\n    params_b: 8\n    method: lora\n    {text}\n", "bad.yaml"
        )
        with pytest.raises(BadInput, match=fragment):
            load_file(bad)


def test_no_interval_means_ten_checkpoints_and_full_jobs_have_no_adapter_fields() -> None:
    job = Workload.model_validate(
        {"name": "f", "params_b": 8, "method": "full", "tokens": "2B", "lora_rank": 64}
    )
    assert job.tokens_per_checkpoint == 2e8 and job.definition()["checkpoints"] == 10
    assert (
        job.lora_rank is None
        and "lora_rank" not in job.definition()
        and "lora_targets" not in job.definition()
    )


def test_memory_fit_table_stays_within_the_workload_limits() -> None:
    from gpuprice.models.fit_table import memory_fit_table

    four_nodes = get_workload("llama-3.1-70b-full-adamw")
    one_node = get_workload("llama-3.1-8b-qlora")
    table = memory_fit_table([four_nodes, one_node])
    assert table.loc[table["workload"] == four_nodes.name, "gpu_count"].max() == 32
    assert table.loc[table["workload"] == one_node.name, "gpu_count"].max() == 8


def test_framework_and_checkpointing_fields_reach_the_memory_setup() -> None:
    base = dict(
        name="x", model="meta-llama/Llama-3.1-8B", method="lora", tokens=1e6, checkpoint_interval_tokens=1e5
    )
    tuned = Workload.model_validate(
        {**base, "framework": "torchtune", "activation_checkpointing": "selective", "compile": True}
    )
    assert tuned.precision == "bf16-true"  # torchtune trains in pure bf16
    setup = tuned.setup(gpus=2, sharding="fsdp")
    assert (setup.framework, setup.activation_checkpointing, setup.compile, setup.loss) == (
        "torchtune",
        "selective",
        True,
        "chunked",
    )
    assert not tuned.uses_checkpointing and tuned.definition()["activation_checkpointing"] == "selective"
    with pytest.raises(ValueError):
        Workload.model_validate({**base, "grad_checkpointing": True, "activation_checkpointing": "none"})


def test_a_file_edited_between_loads_is_read_again(tmp_path: Path) -> None:
    # load_file parses a given text once per process: an edited file must not come back stale.
    text = "workloads:\n  - name: j\n    model: meta-llama/Llama-3.1-8B\n    method: lora\n    tokens: 500M\n"
    path = write(tmp_path, text)
    (first,) = load_file(path)
    assert load_file(path) == [first] and load_file(path) is not load_file(path)
    write(tmp_path, text.replace("500M", "2B"))
    (edited,) = load_file(path)
    assert first.training_tokens == 5e8 and edited.training_tokens == 2e9
    write(tmp_path, text.replace("lora", "no-such-method"))
    with pytest.raises(BadInput):
        load_file(path)
