"""`fit --batch` / `estimate --batch` on rows as a checker writes them: every CONTRACT column,
empty cells meaning the default, booleans as true/1/yes/FALSE/no/0, GPUs as nvidia-smi and cloud
catalogs name them (AWS's "A10G", "NVIDIA A100-SXM4-80GB", "H100 80GB HBM3"), and one bad row
named by line, data row and column (exit 2, nothing on stdout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hf_config_real import CASES

CONTRACT_FIT_COLUMNS = (
    "model,config,params_b,method,optimizer,precision,seq_len,micro_batch,grad_checkpointing,"
    "activation_checkpointing,framework,compile,memory_metric,attention,margin,lora_rank,lora_targets,"
    "gpus,sharding,gpu"
)
# meta-llama/Llama-4-Scout-17B-16E config.json, as tests/test_hf_config_real.py records it
LLAMA4_SCOUT = next(case.config for case in CASES if case.repo == "meta-llama/Llama-4-Scout-17B-16E")


def _one_line_error(result) -> str:
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    return lines[0]


def _csv(tmp_path: Path, header: str, *rows: str) -> Path:
    (tmp_path / "scout").mkdir(exist_ok=True)
    (tmp_path / "scout" / "config.json").write_text(json.dumps(LLAMA4_SCOUT))
    path = tmp_path / "runs.csv"
    path.write_text("\n".join((header, *rows)) + "\n")
    return path


def test_fit_batch_with_every_contract_column_and_empty_cells(cli, tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        CONTRACT_FIT_COLUMNS,
        "meta-llama/Llama-3.1-8B,,,lora,,,,,true,,,,,,,,,,,A10G",
        "meta-llama/Llama-3.1-8B,,,qlora,,,1024,2,yes,,,,,,,,,,,NVIDIA A10G",
        ",,7,full,adamw8bit,bf16-mixed,4096,1,1,,hf,false,reserved,sdpa,0,,,2,zero3,NVIDIA A100-SXM4-80GB",
        ",scout/config.json,,qlora,,,,,,,,,,,,,,8,fsdp,H100 80GB HBM3",
        "meta-llama/Llama-3.1-8B,,,lora,,,,,FALSE,,,,,,,,,,,NVIDIA H100 80GB HBM3",
        "meta-llama/Llama-3.1-8B,,,LoRA,,,,,no,,,,,,,,,,,Tesla V100-SXM2-32GB",
    )
    result = cli("fit", "--batch", str(path))
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in result.out.strip().splitlines()]
    assert len(rows) == 6
    assert [r["gpu"] for r in rows] == ["a10g", "a10g", "a100-80gb-sxm", "h100-sxm", "h100-sxm", "v100"]
    assert [r["grad_checkpointing"] for r in rows] == [True, True, True, True, False, False]
    assert rows[0]["seq_len"] == 2048 and rows[0]["micro_batch"] == 1  # empty cells: the defaults
    assert rows[0]["optimizer"] == "adamw" and rows[0]["precision"] == "bf16-mixed"
    assert rows[0]["gpu_memory_gb"] == pytest.approx(24.147)  # A10G: nvidia-smi 23028 MiB
    assert rows[3]["model"] == "scout" and rows[3]["gpus"] == 8
    assert rows[5]["method"] == "lora"


def test_estimate_batch_with_a10g_and_token_suffixes(cli, tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "model,method,gpu,gpus,tokens,hours,usd_per_gpu_hour,grad_checkpointing",
        "meta-llama/Llama-3.1-8B,lora,A10G,1,1e7,,1.006,true",
        "meta-llama/Llama-3.1-8B,qlora,NVIDIA GeForce RTX 4090,1,10M,,,",
        "meta-llama/Llama-3.1-8B,lora,NVIDIA L4,,,10,,",
    )
    result = cli("estimate", "--batch", str(path))
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in result.out.strip().splitlines()]
    assert len(rows) == 3
    assert rows[0]["cost_usd"] == pytest.approx(rows[0]["gpu_hours"] * 1.006, abs=0.01)
    assert rows[1]["hours"] == pytest.approx(10e6 / rows[1]["tokens_per_sec_per_gpu"] / 3600, rel=0.01)
    assert rows[2]["hours"] == 10 and rows[2]["cost_usd"] is None


def test_estimate_batch_of_measured_runs_without_a_length_answers_the_speed(cli, tmp_path: Path) -> None:
    """A file of measured runs states the setup, not a training length: each row gets its tokens/s
    and MFU (what it is scored on), with hours and cost null and said why; the same speed as
    with a length. A row that gives both tokens and hours is still bad input."""
    header = "model,method,gpu,gpus,sharding,seq_len,micro_batch,grad_checkpointing"
    runs = (
        "meta-llama/Llama-3.1-8B,lora,NVIDIA A100-SXM4-80GB,1,,2048,4,true",
        "meta-llama/Llama-3.1-8B,full,H100 80GB HBM3,8,zero3,4096,1,true",
    )
    path = _csv(tmp_path, header, *runs)
    result = cli("estimate", "--batch", str(path))
    assert result.code == 0, result.err
    speed_only = [json.loads(line) for line in result.out.strip().splitlines()]
    with_length = cli("estimate", "--batch", str(path), "--tokens", "1B")
    assert with_length.code == 0, with_length.err
    costed = [json.loads(line) for line in with_length.out.strip().splitlines()]
    assert len(speed_only) == len(costed) == 2
    for alone, full in zip(speed_only, costed, strict=True):
        assert alone["tokens_per_sec_per_gpu"] == full["tokens_per_sec_per_gpu"] > 0
        assert alone["mfu"] == full["mfu"] and alone["tokens_per_sec_band"] == full["tokens_per_sec_band"]
        assert alone["hours"] is alone["gpu_hours"] is alone["cost_usd"] is alone["tokens"] is None
        assert alone["hours_band"] is alone["cost_band"] is None and full["hours"] > 0
        assert alone["cost_note"].startswith("no tokens or hours given")
    both = _csv(tmp_path, header + ",tokens,hours", runs[0] + ",1B,10")
    assert "exactly one of --tokens" in _one_line_error(cli("estimate", "--batch", str(both)))


@pytest.mark.parametrize(
    ("bad_row", "where"),
    [
        ("meta-llama/Llama-3.1-8B,lorra,A10G,true", "line 3 (row 2, column method)"),
        ("meta-llama/Llama-3.1-8B,lora,A10X,true", "line 3 (row 2, column gpu)"),
        ("meta-llama/Llama-3.1-8B,lora,A10G,maybe", "line 3 (row 2, column grad_checkpointing)"),
        ("not/a-model,lora,A10G,true", "line 3 (row 2, column model)"),
    ],
)
def test_one_bad_row_names_line_row_and_column(cli, tmp_path: Path, bad_row: str, where: str) -> None:
    path = _csv(
        tmp_path,
        "model,method,gpu,grad_checkpointing",
        "meta-llama/Llama-3.1-8B,lora,A10G,true",
        bad_row,
        "meta-llama/Llama-3.1-8B,qlora,L4,",
    )
    for command in ("fit", "estimate"):
        extra = ("--tokens", "1M") if command == "estimate" else ()
        result = cli(command, "--batch", str(path), *extra)
        assert f"{path} {where}:" in _one_line_error(result)
        assert result.out == ""  # every row is checked before any prints


def test_a_config_cell_missing_a_field_names_the_field(cli, tmp_path: Path) -> None:
    broken = json.loads(json.dumps(LLAMA4_SCOUT))
    del broken["text_config"]["num_hidden_layers"]
    path = _csv(tmp_path, "config,method", "scout/config.json,qlora")
    (tmp_path / "scout" / "config.json").write_text(json.dumps(broken))
    line = _one_line_error(cli("fit", "--batch", str(path)))
    assert "line 2 (row 1, column config)" in line and "num_hidden_layers" in line


def test_a_config_cell_may_name_the_model_folder(cli, tmp_path: Path) -> None:
    """A Hugging Face model folder holds its config.json (``from_pretrained`` takes the folder): a
    ``config`` cell or ``--config`` naming the folder reads the same; a folder without one is a
    one-line error naming it."""
    path = _csv(tmp_path, "config,method,gpu", "scout,qlora,h100-sxm", "scout/config.json,qlora,h100-sxm")
    result = cli("fit", "--batch", str(path))
    assert result.code == 0, result.err
    by_folder, by_file = (json.loads(line) for line in result.out.strip().splitlines())
    assert (
        by_folder["per_gpu_gb"] == by_file["per_gpu_gb"] and by_folder["model"] == by_file["model"] == "scout"
    )
    (tmp_path / "empty").mkdir()
    line = _one_line_error(cli("fit", "--config", str(tmp_path / "empty"), "--method", "lora"))
    assert "config folder" in line and "has no config.json" in line


def test_measured_run_tables_column_names_read_as_the_options(cli, tmp_path: Path) -> None:
    """Tables of measured runs name some options as trainers do (num_gpus, seq_length,
    per_device_train_batch_size, gradient_checkpointing): read as gpus, seq_len, micro_batch and
    grad_checkpointing, each said on stderr; the same answer as the option names give."""
    aliased = _csv(
        tmp_path,
        "model,method,num_gpus,sharding,seq_length,per_device_train_batch_size,gradient_checkpointing,gpu",
        "meta-llama/Llama-3.1-70B,lora,8,fsdp,4096,2,true,h100-sxm",
    )
    result = cli("fit", "--batch", str(aliased))
    assert result.code == 0, result.err
    assert f"{aliased}: reading column num_gpus as gpus" in result.err
    answer = json.loads(result.out)
    options = (
        "--gpus",
        "8",
        "--sharding",
        "fsdp",
        "--seq-len",
        "4096",
        "--micro-batch",
        "2",
        "--grad-checkpointing",
    )
    direct = cli(
        "fit",
        "--model",
        "meta-llama/Llama-3.1-70B",
        "--method",
        "lora",
        "--gpu",
        "h100-sxm",
        *options,
        "--json",
    )
    assert direct.code == 0, direct.err
    assert (answer["gpus"], answer["seq_len"], answer["micro_batch"]) == (8, 4096, 2)
    assert answer["per_gpu_gb"] == json.loads(direct.out)["per_gpu_gb"]
