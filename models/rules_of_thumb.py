"""The buying guide's planning rules of thumb (seed guide section 3, "guide 2"), for any size.

Per billion parameters (the guide's 70B figures in brackets):

* QLoRA: 0.75 GB - QLoRA tuned 65B on one 48 GB GPU, 48/65 = 0.74 rounded up [52.5 GB].
* LoRA on a bf16 base: 2 B/param floor x 1.2 planning margin (adapters and their optimizer,
  ~1 %, sit inside the margin) [168 GB].
* Full fine-tune, 8-bit Adam: 6 + 2 + 4 = 12 B/param [840 GB].
* Full fine-tune, mixed-precision AdamW: 16 B/param (EleutherAI, 2 + 12 + 2) [1,120 GB] and
  18 B/param (Hugging Face, 6 + 8 + 4) [1,260 GB]; activations come on top.

Fit rule (a configuration pools its VRAM: the guide assumes FSDP / ZeRO-3 across its GPUs):

* QLoRA, LoRA, 8-bit Adam: fits when total VRAM >= the estimate.
* AdamW: fits when total VRAM >= the 18-byte estimate. The 18-byte figure is the 16-byte state
  plus a 2 B/param reserve for activations; the guide rejects 8x H200 because 1,128 GB covers the
  16-byte 1,120 GB but leaves only 8 GB (0.11 B/param) for activations, and accepts 8x B200, which
  keeps 180 GB after the 18-byte estimate. The same rule applies unchanged at any size.

This reproduces all 40 cells of the guide's 70B table (tests/test_plan.py).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from gpuprice.errors import BadInput

QLORA_GB_PER_B = 0.75
LORA_BYTES_PER_PARAM = 2.0
PLANNING_MARGIN = 0.20
FULL_ADAM8BIT_BYTES = 12.0
FULL_ADAMW_16_BYTES = 16.0
FULL_ADAMW_18_BYTES = 18.0
WEIGHTS_4BIT_BYTES = 0.5  # "an RTX 4090 (24 GB) cannot hold even the 35 GB of 4-bit 70B weights"


class GuideConfig(BaseModel):
    """One row of the guide's table: a GPU configuration and its combined VRAM (GB, as printed)."""

    model_config = ConfigDict(frozen=True)

    name: str
    gpus: int
    gpu_slug: str
    total_vram_gb: float


# Names and VRAM exactly as the guide's table prints them (H200 141 GB, B200 180 GB).
GUIDE_CONFIGS: tuple[GuideConfig, ...] = (
    GuideConfig(name="1x L40S", gpus=1, gpu_slug="l40s", total_vram_gb=48),
    GuideConfig(name="1x A100 80GB", gpus=1, gpu_slug="a100-80gb-sxm", total_vram_gb=80),
    GuideConfig(name="1x H100", gpus=1, gpu_slug="h100-sxm", total_vram_gb=80),
    GuideConfig(name="1x H200", gpus=1, gpu_slug="h200-sxm", total_vram_gb=141),
    GuideConfig(name="1x B200", gpus=1, gpu_slug="b200", total_vram_gb=180),
    GuideConfig(name="2x H200", gpus=2, gpu_slug="h200-sxm", total_vram_gb=282),
    GuideConfig(name="4x A100 80GB", gpus=4, gpu_slug="a100-80gb-sxm", total_vram_gb=320),
    GuideConfig(name="8x H100", gpus=8, gpu_slug="h100-sxm", total_vram_gb=640),
    GuideConfig(name="8x H200", gpus=8, gpu_slug="h200-sxm", total_vram_gb=1128),
    GuideConfig(name="8x B200", gpus=8, gpu_slug="b200", total_vram_gb=1440),
)

CONFIG_KEYS: tuple[str, ...] = ("qlora", "lora", "full_adam8bit", "full_adamw")


def _gb(value: float) -> float:
    return round(value, 4)  # keeps 70 x 2.4 = 168 exact for the comparisons


def method_estimates(params_b: float) -> dict[str, float]:
    """GB per method for a model of ``params_b`` billion parameters."""
    return {
        "qlora": _gb(params_b * QLORA_GB_PER_B),
        "lora": _gb(params_b * LORA_BYTES_PER_PARAM * (1 + PLANNING_MARGIN)),
        "full_adam8bit": _gb(params_b * FULL_ADAM8BIT_BYTES),
        "full_adamw_16": _gb(params_b * FULL_ADAMW_16_BYTES),
        "full_adamw_18": _gb(params_b * FULL_ADAMW_18_BYTES),
    }


def config_fits(total_vram_gb: float, methods: dict[str, float]) -> dict[str, bool]:
    """The guide's yes/no per method for a configuration with this combined VRAM."""
    return {
        "qlora": total_vram_gb >= methods["qlora"],
        "lora": total_vram_gb >= methods["lora"],
        "full_adam8bit": total_vram_gb >= methods["full_adam8bit"],
        # 16-byte state + 2 B/param activation reserve = the 18-byte estimate
        "full_adamw": total_vram_gb >= methods["full_adamw_18"],
    }


def plan(params_b: float) -> dict[str, Any]:
    """``gpuprice plan --json``: method estimates (GB) and the guide's ten configurations."""
    if isinstance(params_b, bool) or not isinstance(params_b, (int, float)) or not math.isfinite(params_b):
        raise BadInput(f"--params-b {params_b!r} is not a number")
    if not 0 < params_b <= 100_000:
        raise BadInput(f"--params-b {params_b:g} must be between 0 and 100000 (billions of parameters)")
    methods = method_estimates(float(params_b))
    configs = []
    for cfg in GUIDE_CONFIGS:
        row: dict[str, Any] = {"config": cfg.name, "total_vram_gb": cfg.total_vram_gb}
        row.update(config_fits(cfg.total_vram_gb, methods))
        configs.append(row)
    return {
        "params_b": float(params_b),
        "methods": methods,
        "weights_4bit_gb": _gb(params_b * WEIGHTS_4BIT_BYTES),
        "configs": configs,
        "rules": {
            "qlora": f"{QLORA_GB_PER_B} GB per billion parameters (QLoRA: 65B on one 48 GB GPU)",
            "lora": f"{LORA_BYTES_PER_PARAM:g} B/param bf16 base x {1 + PLANNING_MARGIN:g} planning margin",
            "full_adam8bit": f"{FULL_ADAM8BIT_BYTES:g} B/param (6 + 2 + 4)",
            "full_adamw": (
                f"fits when total VRAM >= {FULL_ADAMW_18_BYTES:g} B/param: the {FULL_ADAMW_16_BYTES:g}-byte "
                f"state plus {FULL_ADAMW_18_BYTES - FULL_ADAMW_16_BYTES:g} B/param for activations"
            ),
            "pooling": "multi-GPU configurations pool VRAM (FSDP / ZeRO-3 sharding)",
        },
    }
