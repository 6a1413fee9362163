"""gpuprice fit end to end: options, --json, --gpu, --batch CSV and one-line errors (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuprice.commands.batch import read_batch_csv, setup_from_batch_row
from gpuprice.commands.model_options import setup_from_options
from gpuprice.errors import BadInput

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def one_line_error(result) -> str:
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    return lines[0]


def test_verification_command_fits_with_breakdown(cli) -> None:
    result = cli(
        "fit", "--model", "meta-llama/Llama-3.1-70B", "--method", "qlora", "--gpu", "a100-80gb-sxm", "--json"
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    # an "80 GB" A100 holds 80 GiB: 81920 MiB = 85.899e9 bytes, as the peaks are counted
    assert data["fits"] is True and data["gpu"] == "a100-80gb-sxm" and data["gpu_memory_gb"] == 85.899
    assert data["verdict"] in ("fits", "tight") and data["margin"] == 0.2
    assert data["headroom_gb"] == pytest.approx(85.899 - data["device_gb"], abs=2e-3)
    assert data["band_gb"]["low"] < data["per_gpu_gb"] < data["band_gb"]["high"]
    parts = data["breakdown"]
    assert set(parts) == {
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "logits",
        "overhead",
        "cuda_context_gb",
        "allocator_slack_gb",
    }
    assert data["per_gpu_gb"] == pytest.approx(sum(parts.values()), abs=1e-6)
    assert data["planning_gb"] == pytest.approx(data["per_gpu_gb"] / 0.8, abs=1e-3)
    assert 35 < parts["weights"] < 50  # 4-bit 70B weights + 16-bit/fp32 embeddings and head


def test_without_gpu_no_fit_fields(cli) -> None:
    result = cli("fit", "--params-b", "7", "--method", "full", "--precision", "bf16-true", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert "fits" not in data and "gpu" not in data
    assert data["breakdown"]["optimizer"] == pytest.approx(7 * 4, rel=0.03)  # bf16 m, v


def test_all_options(cli) -> None:
    result = cli(
        "fit",
        "--config",
        str(CONFIGS / "mixtral-8x7b.json"),
        "--method",
        "full",
        "--optimizer",
        "adamw8bit",
        "--precision",
        "bf16-mixed",
        "--seq-len",
        "4096",
        "--micro-batch",
        "2",
        "--grad-checkpointing",
        "--gpus",
        "8",
        "--sharding",
        "zero3",
        "--gpu",
        "h100-sxm",
        "--margin",
        "0.25",
        "--json",
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert (data["gpus"], data["sharding"], data["grad_checkpointing"], data["margin"]) == (
        8,
        "zero3",
        True,
        0.25,
    )
    assert data["planning_gb"] == pytest.approx(data["per_gpu_gb"] / (1 - 0.25), abs=1e-3)


def test_lora_options_and_qlora_checkpointing_switch(cli) -> None:
    qv = json.loads(
        cli(
            "fit", "--params-b", "8", "--method", "lora", "--lora-rank", "8", "--lora-targets", "qv", "--json"
        ).out
    )
    alls = json.loads(cli("fit", "--params-b", "8", "--method", "lora", "--lora-rank", "64", "--json").out)
    assert qv["lora_params"] < alls["lora_params"]
    on = json.loads(cli("fit", "--params-b", "8", "--method", "qlora", "--json").out)
    off = json.loads(
        cli("fit", "--params-b", "8", "--method", "qlora", "--no-grad-checkpointing", "--json").out
    )
    assert on["grad_checkpointing"] is True and off["grad_checkpointing"] is False
    assert off["breakdown"]["activations"] > on["breakdown"]["activations"]


def test_table_output(cli) -> None:
    result = cli("fit", "--model", "meta-llama/Llama-3.1-8B", "--method", "lora", "--gpu", "l4")
    assert result.code == 0, result.err
    assert "weights" in result.out and "planning" in result.out and "does not fit" in result.out
    assert "margin 20%" in result.out and "within" in result.out  # the setting and the band are shown
    # the answer leads: the verdict on the card, then the peak with its band, then how it was reached
    first, second = result.out.splitlines()[:2]
    assert first.startswith("l4, margin 20%: does not fit"), first
    assert second.startswith("peak ") and "band" in second and "usable" in second, second


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (
            ("--model", "meta-llama/Llama-3.1-7B", "--method", "lora"),
            ["Llama-3.1-7B", "meta-llama/Llama-3.1-70B"],
        ),
        (("--params-b", "7", "--method", "lora", "--gpu", "h100"), ["h100", "h100-sxm"]),
        (("--params-b", "7", "--method", "lora", "--precision", "fp16"), ["fp16", "bf16-true", "bf16-mixed"]),
        (("--params-b", "7", "--method", "ful"), ["ful", "full"]),
        (
            (
                "--params-b",
                "7",
            ),
            ["--method"],
        ),
        (
            (
                "--method",
                "lora",
            ),
            ["give the model", "--params-b N"],
        ),
        (("--params-b", "7", "--model", "google/gemma-7b", "--method", "lora"), ["disagrees", "8.54B"]),
        (("--params-b", "7", "--method", "lora", "--seq-len", "0"), ["seq-len"]),
        (("--params-b", "7", "--method", "lora", "--gpus", "two"), ["--gpus", "two"]),
        (("--params-b", "7", "--method", "lora", "--sharding", "zero4"), ["zero4", "zero3"]),
        (("--params-b", "-3", "--method", "lora"), ["params-b"]),
    ],
)
def test_bad_input_is_one_line_exit_2(cli, args: tuple[str, ...], fragments: list[str]) -> None:
    line = one_line_error(cli("fit", *args))
    for fragment in fragments:
        assert fragment in line, line


def test_bad_config_file(cli, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": 64,\n "num_attention_heads": 4,,\n}')
    line = one_line_error(cli("fit", "--config", str(path), "--method", "lora"))
    assert str(path) in line and "line 2" in line


# ----- --batch ----------------------------------------------------------------------------------
def write_batch(tmp_path: Path, text: str) -> Path:
    sub = tmp_path / "configs"
    sub.mkdir(exist_ok=True)
    shutil.copy(CONFIGS / "qwen2.5-7b.json", sub / "config.json")
    path = tmp_path / "runs.csv"
    path.write_text(text)
    return path


def test_batch_json_lines_in_row_order(cli, tmp_path: Path) -> None:
    path = write_batch(
        tmp_path,
        "model,config,params_b,method,seq-len,gpus,sharding,gpu,grad_checkpointing\n"
        "meta-llama/Llama-3.1-8B,,,lora,4096,1,none,l40s,false\n"
        ",configs/config.json,,qlora,,,,,\n"
        "\n"
        ",,70,full,2048,16,zero3,h200-sxm,true\n",
    )
    result = cli("fit", "--batch", str(path), "--gpu", "a100-80gb-sxm")
    assert result.code == 0, result.err
    lines = [json.loads(x) for x in result.out.strip().splitlines()]
    assert [x["model"] for x in lines] == [
        "meta-llama/Llama-3.1-8B",
        "configs",
        "dense-70b",
    ]  # config: its folder
    assert [x["gpu"] for x in lines] == [
        "l40s",
        "a100-80gb-sxm",
        "h200-sxm",
    ]  # CLI --gpu fills the empty cell
    assert lines[1]["method"] == "qlora" and lines[2]["gpus"] == 16 and lines[2]["grad_checkpointing"] is True
    for x in lines:
        assert x["per_gpu_gb"] == pytest.approx(sum(x["breakdown"].values()), abs=1e-6)


def test_batch_command_line_fills_missing_columns(cli, tmp_path: Path) -> None:
    path = write_batch(tmp_path, "method,seq_len\nlora,1024\nfull,512\n")
    result = cli("fit", "--batch", str(path), "--model", "google/gemma-2b", "--precision", "bf16-true")
    assert result.code == 0, result.err
    lines = [json.loads(x) for x in result.out.strip().splitlines()]
    assert [(x["model"], x["method"], x["seq_len"], x["precision"]) for x in lines] == [
        ("google/gemma-2b", "lora", 1024, "bf16-true"),
        ("google/gemma-2b", "full", 512, "bf16-true"),
    ]


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("model,method\nmeta-llama/Llama-3.1-8B,lora,extra\n", ["line 2", "expected 2 fields"]),
        ("model,methd\nmeta-llama/Llama-3.1-8B,lora\n", ["line 1", "methd", "method"]),
        ("model,method\nmeta-llama/Llama-3.1-8B,lora\nnot-a-model,lora\n", ["line 3", "not-a-model"]),
        ("params_b,method,seq_len\n7,lora,long\n", ["line 2", "seq_len", "long"]),
        ("params_b,method,gpu\n7,lora,a100\n", ["line 2", "a100"]),
        ('model,method\n"meta-llama/Llama-3.1-8B,lora\n', ["malformed CSV"]),
        ("", ["empty"]),
        ("model,method\n", ["no data rows"]),
        ("model,model\nx,y\n", ["twice"]),
    ],
)
def test_batch_errors_name_file_and_line(cli, tmp_path: Path, text: str, fragments: list[str]) -> None:
    path = write_batch(tmp_path, text)
    line = one_line_error(cli("fit", "--batch", str(path)))
    assert str(path) in line
    for fragment in fragments:
        assert fragment in line, line


def test_batch_missing_file(cli, tmp_path: Path) -> None:
    assert "not found" in one_line_error(cli("fit", "--batch", str(tmp_path / "none.csv")))


def test_batch_bad_row_prints_nothing(cli, tmp_path: Path) -> None:
    path = write_batch(tmp_path, "params_b,method\n7,lora\n7,bogus\n")
    result = cli("fit", "--batch", str(path))
    assert result.code == 2 and result.out == ""


# ----- the shared helpers the estimate command reuses ------------------------------------------
def test_helpers_for_other_commands(tmp_path: Path) -> None:
    path = write_batch(tmp_path, "config,method,tokens\nconfigs/config.json,lora,1000000\n")
    rows = read_batch_csv(path, allowed_columns=("config", "method", "tokens"))
    assert rows[0].values["config"] == str(tmp_path / "configs" / "config.json")
    assert rows[0].values["tokens"] == "1000000"  # extra columns stay available to the caller
    setup = setup_from_batch_row(rows[0], {"seq_len": 4096})
    assert (setup.arch.hidden_size, setup.arch.num_kv_heads, setup.seq_len) == (3584, 4, 4096)
    assert setup_from_options(params_b=13, method="full", gpus="4", sharding="fsdp").gpus == 4
    with pytest.raises(BadInput, match="unknown option"):
        setup_from_options(params_b=13, method="full", tokens=5)


DONE_WHEN = (
    "fit", "--model", "meta-llama/Llama-3.1-70B", "--method", "full", "--seq-len", "4096",
    "--micro-batch", "1", "--gpus", "32", "--sharding", "fsdp", "--activation-checkpointing",
    "selective", "--memory-metric", "reserved", "--json",
)  # fmt: skip


def test_torchtitan_and_hf_differ_for_stated_reasons(cli) -> None:
    titan = json.loads(cli(*DONE_WHEN, "--framework", "torchtitan").out)
    hf = json.loads(cli(*DONE_WHEN, "--framework", "hf").out)
    assert titan["framework"] == "torchtitan" and hf["framework"] == "hf"
    assert titan["activation_checkpointing"] == "selective" and titan["memory_metric"] == "reserved"
    for data in (titan, hf):
        parts = data["breakdown"]
        # reserved metric: no CUDA context; slack = fragmentation (calibrated 0.03) + cached regions
        assert parts["cuda_context_gb"] == 0 and parts["allocator_slack_gb"] >= 0
        assert data["per_gpu_gb"] == pytest.approx(sum(parts.values()), abs=1e-6)
        # the device figure adds the CUDA context to allocated + fragmentation; the cached earlier
        # loss regions of variable-length batches (in reserved) are freed before an OOM: not in it
        assert data["device_gb"] > data["per_gpu_gb"] - parts["allocator_slack_gb"]
    # FSDP2 (torchtitan) and accelerate's FSDP (hf, fp32 flat parameters): fp32 shards are the master
    assert titan["breakdown"]["weights"] == pytest.approx(hf["breakdown"]["weights"])
    assert titan["per_gpu_gb"] < hf["per_gpu_gb"]  # hf: variable-length batches' cached loss region
    assert any("FSDP2" in line for line in titan["assumptions"])
    assert any("16 B/param" in line for line in hf["assumptions"])
    assert any("16 B/param" in line for line in titan["assumptions"])
    zero3 = [a if a != "fsdp" else "zero3" for a in DONE_WHEN]
    deepspeed = json.loads(cli(*zero3, "--framework", "hf").out)  # DeepSpeed ZeRO-3: 16-bit copy too
    assert any("16-bit gradient partitions" in line for line in deepspeed["assumptions"])
    assert deepspeed["breakdown"]["weights"] > hf["breakdown"]["weights"]


def test_batch_accepts_the_new_columns(cli, tmp_path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(
        "model,method,framework,activation_checkpointing,compile,loss,memory_metric,"
        "cpu_offload_activations,optimizer_in_backward,gpu\n"
        "meta-llama/Llama-3.1-8B,qlora,unsloth,,,,allocated,,,l4\n"
        "meta-llama/Llama-3.1-8B,full,torchtune,selective,true,chunked,reserved,true,true,h100-sxm\n"
    )
    result = cli("fit", "--batch", str(path))
    assert result.code == 0, result.err
    first, second = (json.loads(line) for line in result.out.splitlines())
    assert (first["framework"], first["loss"], first["memory_metric"]) == ("unsloth", "fused", "allocated")
    assert first["activation_checkpointing"] == "full"  # QLoRA's recipe
    assert (second["compile"], second["loss"], second["activation_checkpointing"]) == (
        True,
        "chunked",
        "selective",
    )
    assert "fits" in first and "fits" in second


@pytest.mark.parametrize(
    "option,value",
    [
        ("--framework", "deepspeed"),
        ("--activation-checkpointing", "some"),
        ("--memory-metric", "smi"),
        ("--loss", "x"),
    ],
)
def test_bad_new_option_values_exit_2_with_one_line(cli, option, value) -> None:
    result = cli("fit", "--params-b", "7", "--method", "lora", option, value)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1 and "valid" in result.err


def test_paged_adamw_and_the_16bit_loss_are_extra_values(cli) -> None:
    # beside the contract's values: 32-bit PagedAdamW (bitsandbytes) and a loss on the 16-bit logits
    args = ["fit", "--params-b", "7", "--method", "full", "--precision", "bf16-true", "--optimizer"]
    args += ["paged_adamw", "--loss", "full-16bit", "--margin", "0", "--json"]
    result = cli(*args)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["paged_optimizer_gb"] > 50 and data["optimizer"] == "paged_adamw"
    assert data["device_gb"] < data["per_gpu_gb"] - 50
    assert any("paged optimizer" in line for line in data["assumptions"])
    # on a 24 GB card the states beyond it page out: the figure tops out at the card (or at the
    # device figure, when even that is over it); the verdict judges the device figure
    on_card = json.loads(cli(*args, "--gpu", "rtx-4090").out)
    assert on_card["device_gb"] == data["device_gb"]
    assert on_card["per_gpu_gb"] == pytest.approx(max(on_card["gpu_memory_gb"], data["device_gb"]), abs=2e-3)
    assert on_card["given_way_gb"] == pytest.approx(data["per_gpu_gb"] - on_card["per_gpu_gb"], abs=2e-3)
    assert on_card["headroom_gb"] == pytest.approx(on_card["gpu_memory_gb"] - on_card["device_gb"], abs=2e-3)
    bad = one_line_error(cli("fit", "--params-b", "7", "--method", "full", "--optimizer", "paged"))
    for value in ("adamw", "adamw8bit", "paged_adamw8bit", "sgd", "paged_adamw"):
        assert value in bad


# ----- GPUs named as catalogs and nvidia-smi name them ------------------------------------------
@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("a100-80gb-sxm", "a100-80gb-sxm"),
        ("A100 80GB", "a100-80gb-sxm"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("L40S", "l40s"),
    ],
)
def test_batch_gpu_names_as_catalogs_write_them(cli, tmp_path: Path, name: str, slug: str) -> None:
    path = write_batch(tmp_path, f'params_b,method,gpu\n7,lora,"{name}"\n')
    result = cli("fit", "--batch", str(path))
    assert result.code == 0, result.err
    assert json.loads(result.out)["gpu"] == slug


@pytest.mark.parametrize(("name", "fragment"), [("8x H100", "gpus"), ("Quantum 9000", "unknown GPU")])
def test_batch_gpu_name_errors(cli, tmp_path: Path, name: str, fragment: str) -> None:
    path = write_batch(tmp_path, f"params_b,method,gpu\n7,lora,{name}\n")
    line = one_line_error(cli("fit", "--batch", str(path)))
    assert "line 2" in line and fragment in line, line


def test_packed_and_logits_kept_say_what_the_trainer_does(cli, tmp_path) -> None:
    # Beside the contract's options: ljm565/universal-llm-trainer's Gemma-2-9B LoRA (2 x 8192 fully
    # filled tokens, nn.CrossEntropyLoss on the bf16 logits; 60 GB reserved measured on an H100).
    # On the hf path (variable lengths, fp32 upcast) the device figure is over the card; said as
    # the trainer runs it, it fits.
    args = ["fit", "--model", "google/gemma-2-9b", "--method", "lora", "--precision", "bf16-true"]
    args += ["--seq-len", "8192", "--micro-batch", "2", "--grad-checkpointing", "--gpu", "h100-sxm"]
    args += ["--margin", "0", "--memory-metric", "reserved", "--json"]
    hf = json.loads(cli(*args).out)
    assert hf["verdict"] == "does_not_fit" and hf["packed"] is False
    stated = json.loads(cli(*args, "--packed", "--loss", "full-16bit").out)
    assert stated["verdict"] == "fits" and stated["packed"] is True and stated["given_way_gb"] == 0
    assert stated["per_gpu_gb"] == pytest.approx(60.0, rel=0.05)
    # the same through --batch columns
    batch = tmp_path / "runs.csv"
    batch.write_text(
        "model,method,precision,seq_len,micro_batch,grad_checkpointing,gpu,margin,memory_metric,packed,loss\n"
        "google/gemma-2-9b,lora,bf16-true,8192,2,true,h100-sxm,0,reserved,true,full-16bit\n"
    )
    row = json.loads(cli("fit", "--batch", str(batch)).out)
    assert row["per_gpu_gb"] == stated["per_gpu_gb"]
    # a loop that keeps the output through backward holds its logits too (Answer.AI's train.py)
    base = ["fit", "--params-b", "7", "--method", "lora", "--json"]
    kept = json.loads(cli(*base, "--logits-kept").out)
    dropped = json.loads(cli(*base).out)
    assert kept["logits_kept"] is True and kept["breakdown"]["logits"] > dropped["breakdown"]["logits"]
    bad = tmp_path / "bad.csv"
    bad.write_text("params_b,method,packed\n7,lora,maybe\n")
    result = cli("fit", "--batch", str(bad))
    assert result.code == 2 and "packed 'maybe' is not a boolean (true/false)" in one_line_error(result)
