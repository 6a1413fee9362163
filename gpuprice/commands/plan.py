"""gpuprice plan --params-b N: the buying guide's memory rules of thumb and its ten configurations."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gpuprice.commands import metavars
from gpuprice.commands.output import write_json
from gpuprice.errors import BadInput
from gpuprice.models.rules_of_thumb import CONFIG_KEYS


def _print_table(result: dict[str, Any]) -> None:
    from rich.console import Console

    from gpuprice.commands.tables import Column, print_table, terminal_width

    console = Console(width=terminal_width(), highlight=False)
    m = result["methods"]
    console.print(
        f"Model of {result['params_b']:g}B parameters - rule-of-thumb memory (GB): "
        f"QLoRA {m['qlora']:,g}, LoRA {m['lora']:,g}, full 8-bit Adam {m['full_adam8bit']:,g}, "
        f"full AdamW {m['full_adamw_16']:,g} (16 B/param) to {m['full_adamw_18']:,g} (18 B/param); "
        f"4-bit weights alone {result['weights_4bit_gb']:,g}"
    )
    columns = [
        Column("Configuration"),
        Column("Total VRAM", numeric=True),
        Column(f"QLoRA {m['qlora']:,g} GB"),
        Column(f"LoRA {m['lora']:,g} GB"),
        Column(f"8-bit Adam {m['full_adam8bit']:,g} GB"),
        Column(f"AdamW {m['full_adamw_18']:,g} GB"),
    ]
    rows = [
        [row["config"], f"{row['total_vram_gb']:,g} GB", *("yes" if row[k] else "no" for k in CONFIG_KEYS)]
        for row in result["configs"]
    ]
    print_table(columns, rows, title="Fits? (multi-GPU configurations pool their VRAM)")
    console.print(f"Full AdamW: {result['rules']['full_adamw']}.")


def plan(
    params_b: Annotated[
        str | None,
        typer.Option("--params-b", help="Model size in billions of parameters.", metavar=metavars.FLOAT),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Or a catalog model: its parameter count.", metavar=metavars.TEXT),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """The buying guide's rules of thumb: memory per method and which configurations fit."""
    from gpuprice.models.rules_of_thumb import plan as rules_plan

    if (params_b is None) == (model is None):
        raise BadInput("give exactly one of --params-b N or --model ID")
    if model is not None:
        from gpuprice.models.architectures import resolve_model

        size = resolve_model(model_id=model).n_params / 1e9
    else:
        assert params_b is not None
        try:
            size = float(params_b)
        except ValueError:
            raise BadInput(f"--params-b {params_b!r} is not a number (billions of parameters)") from None
        if not 0.001 <= size <= 100_000:  # 1 M to 100 T parameters; NaN fails too
            raise BadInput(
                f"--params-b {params_b!r} is out of range: 0.001 to 100000 (billions of parameters)"
            )
    result = rules_plan(size)
    if json_out:
        write_json(result)
    else:
        _print_table(result)
