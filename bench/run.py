"""``make bench`` / ``python -m bench.run``: every figure, one line each, and ``bench/results.json``.

Exit status: 0 when every benchmark ran (targets missed are reported, not fatal: timings on a
shared machine are noisy), 1 when a benchmark could not run or its two paths disagreed; with
``--strict`` also 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from bench import (
    backfill_speed,
    end_to_end,
    parse_speed,
    report_charts,
    scheduled_path,
    sweep_speed,
    warehouse_scale,
    warehouse_volume,
)
from bench.figures import Figure

RESULTS_PATH = Path(__file__).with_name("results.json")

BENCHMARKS: dict[str, Callable[[], list[Figure]]] = {
    "parse": parse_speed.measure,
    "sweep": sweep_speed.measure,
    "warehouse": warehouse_scale.measure,
    "e2e": end_to_end.measure,
    "reports": report_charts.measure,
    "backfill": backfill_speed.measure,
    "scheduled": scheduled_path.measure,
    # ~200 M rows by default (BENCH_VOLUME_ROWS=50M for less): about an hour on 2 cores
    "volume": warehouse_volume.measure,
}


def _machine() -> dict[str, object]:
    import duckdb
    import numpy
    import pandas

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in load] if load else None,
        "duckdb": duckdb.__version__,
        "pandas": pandas.__version__,
        "numpy": numpy.__version__,
    }


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        default=",".join(BENCHMARKS),
        help=f"comma-separated benchmarks to run (default: all of {', '.join(BENCHMARKS)})",
    )
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON results")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown or not chosen:
        parser.error(
            f"unknown benchmark {unknown[0] if unknown else args.only!r}; valid: {', '.join(BENCHMARKS)}"
        )
    args.chosen = chosen
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    started = time.perf_counter()
    machine = _machine()
    figures: list[Figure] = []
    errors: dict[str, str] = {}
    for name in args.chosen:
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        begun = time.perf_counter()
        try:
            produced = BENCHMARKS[name]()
        except Exception as exc:  # one broken benchmark must not hide the others' figures
            errors[name] = f"{type(exc).__name__}: {exc}"
            print(f"ERROR {name}: {errors[name]}", flush=True)
            traceback.print_exc(file=sys.stderr)
            continue
        for figure in produced:
            print(figure.line(), flush=True)
        figures.extend(produced)
        print(f"[bench] {name} took {time.perf_counter() - begun:.1f} s", file=sys.stderr, flush=True)

    total = time.perf_counter() - started
    results = {
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "total_s": round(total, 1),
        "machine": machine,
        "figures": [figure.model_dump(mode="json") for figure in figures],
        "errors": errors,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    missed = [f.name for f in figures if f.passed is False]
    print(
        f"{len(figures)} figures, {len(missed)} below target{': ' + ', '.join(missed) if missed else ''}; "
        f"{len(errors)} errors; {total:.0f} s; results in {args.output}",
        flush=True,
    )
    if errors or (args.strict and missed):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
