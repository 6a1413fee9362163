"""Rules-of-thumb mode: the buying guide's 70B table, reproduced cell by cell, and other sizes."""

from __future__ import annotations

import json

import pytest

from gpuprice.errors import BadInput
from gpuprice.models.rules_of_thumb import CONFIG_KEYS, GUIDE_CONFIGS, plan

# seed-guide.md section 3, copied verbatim: config -> (total VRAM, QLoRA, LoRA, 8-bit Adam, AdamW)
GUIDE_TABLE_70B = {
    "1x L40S": (48, "no", "no", "no", "no"),
    "1x A100 80GB": (80, "yes", "no", "no", "no"),
    "1x H100": (80, "yes", "no", "no", "no"),
    "1x H200": (141, "yes", "no", "no", "no"),
    "1x B200": (180, "yes", "yes", "no", "no"),
    "2x H200": (282, "yes", "yes", "no", "no"),
    "4x A100 80GB": (320, "yes", "yes", "no", "no"),
    "8x H100": (640, "yes", "yes", "no", "no"),
    "8x H200": (1128, "yes", "yes", "yes", "no"),
    "8x B200": (1440, "yes", "yes", "yes", "yes"),
}


def test_method_estimates_for_70b() -> None:
    assert plan(70)["methods"] == {
        "qlora": 52.5,
        "lora": 168.0,
        "full_adam8bit": 840.0,
        "full_adamw_16": 1120.0,
        "full_adamw_18": 1260.0,
    }
    assert plan(70)["weights_4bit_gb"] == 35.0


def test_reproduces_all_40_cells_of_the_guide() -> None:
    configs = plan(70)["configs"]
    assert [c["config"] for c in configs] == list(GUIDE_TABLE_70B)
    for row in configs:
        vram, *cells = GUIDE_TABLE_70B[row["config"]]
        assert row["total_vram_gb"] == vram
        assert [("yes" if row[k] else "no") for k in CONFIG_KEYS] == cells, row["config"]


def test_8x_h200_covers_16_bytes_but_not_adamw() -> None:
    result = plan(70)
    h200 = next(c for c in result["configs"] if c["config"] == "8x H200")
    assert h200["total_vram_gb"] - result["methods"]["full_adamw_16"] == 8  # only 8 GB for activations
    assert not h200["full_adamw"]


def test_smaller_models_fit_more_and_larger_fewer() -> None:
    def yes_count(params_b: float) -> int:
        return sum(row[k] for row in plan(params_b)["configs"] for k in CONFIG_KEYS)

    counts = [yes_count(p) for p in (1, 7, 13, 34, 70, 180, 405, 1000)]
    assert counts == sorted(counts, reverse=True)
    seven = {c["config"]: c for c in plan(7)["configs"]}
    assert seven["1x L40S"]["qlora"] and seven["1x L40S"]["lora"] and not seven["1x L40S"]["full_adamw"]
    assert seven["1x H200"]["full_adamw"]  # 7 x 18 = 126 GB <= 141 GB
    assert not any(c["qlora"] for c in plan(2000)["configs"])


def test_fit_rule_is_consistent_for_any_size() -> None:
    for params_b in (0.5, 3, 8, 70, 123.4, 405):
        result = plan(params_b)
        for row in result["configs"]:
            # AdamW implies the 16-byte state fits with 2 B/param to spare, and 8-bit Adam fits too
            if row["full_adamw"]:
                assert row["total_vram_gb"] - result["methods"]["full_adamw_16"] >= 2 * params_b
                assert row["full_adam8bit"] and row["lora"] and row["qlora"]


@pytest.mark.parametrize("bad", [0, -5, float("nan"), float("inf"), 1e9])
def test_rejects_bad_sizes(bad: float) -> None:
    with pytest.raises(BadInput):
        plan(bad)


def test_guide_configs_name_real_catalog_gpus() -> None:
    from gpuprice.models.catalog import get_gpu

    for cfg in GUIDE_CONFIGS:
        spec = get_gpu(cfg.gpu_slug)
        assert spec.memory_gb * cfg.gpus == pytest.approx(cfg.total_vram_gb, rel=0.05)


# ----- CLI ------------------------------------------------------------------------------------------
def test_cli_plan_json(cli) -> None:
    result = cli("plan", "--params-b", "70", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["methods"]["lora"] == 168.0
    assert {c["config"]: c["full_adam8bit"] for c in data["configs"]}["8x H200"] is True
    assert set(data["configs"][0]) >= {
        "config",
        "total_vram_gb",
        "qlora",
        "lora",
        "full_adam8bit",
        "full_adamw",
    }


def test_cli_plan_table(cli) -> None:
    result = cli("plan", "--params-b", "70")
    assert result.code == 0, result.err
    for name in GUIDE_TABLE_70B:
        assert name in result.out
    assert "1,260" in result.out and "52.5" in result.out


def test_cli_plan_from_catalog_model(cli) -> None:
    result = cli("plan", "--model", "meta-llama/Llama-3.1-8B", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["params_b"] == pytest.approx(8.03, rel=0.001)


@pytest.mark.parametrize(
    "args", [("--params-b", "-1"), ("--params-b", "abc"), (), ("--params-b", "7", "--model", "x")]
)
def test_cli_plan_bad_input(cli, args: tuple[str, ...]) -> None:
    result = cli("plan", *args)
    assert result.code == 2
    assert result.err.strip() and len(result.err.strip().splitlines()) == 1
    assert "Traceback" not in result.err
