"""What Dagster alone costs the daily run: the run's own graph with empty step bodies.

``python -m bench.orchestration_floor`` copies the shape of the code location's assets (the same
keys, dependencies, checks, partitions, steps and pool) with bodies that only report their
results, opens the persistent CLI instance under ``$GPUPRICE_HOME`` as ``gpuprice run`` does and
runs the selection ``gpuprice run`` runs for one date. It prints, as JSON, the seconds from
opening the instance to the end of the run: Dagster's instance, events and pool slots for this
graph, with none of gpuprice's work. Importing gpuprice (to read the shape) is not timed.

Run it twice on one home and keep the second figure: the daily run finds an instance that already
holds the day before.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import dagster as dg

from gpuprice.pipelines.asset_keys import daily_selection
from gpuprice.pipelines.instance import cli_instance
from gpuprice.pipelines.runner import materialize_for_cli
from gpuprice.scrapers.offer import PROVIDERS


def _empty_assets(assets_def: dg.AssetsDefinition) -> dg.AssetsDefinition:
    specs = list(assets_def.specs)
    check_specs = list(assets_def.check_specs)

    @dg.multi_asset(
        name=assets_def.op.name,
        specs=specs,
        check_specs=check_specs,
        partitions_def=assets_def.partitions_def,
        pool=assets_def.op.pool,
        can_subset=assets_def.can_subset,
    )
    def empty() -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
        for check in check_specs:
            yield dg.AssetCheckResult(asset_key=check.asset_key, check_name=check.name, passed=True)
        for spec in specs:
            yield dg.MaterializeResult(asset_key=spec.key, metadata={"rows": 1})

    return empty


def _empty_checks(checks_def: dg.AssetChecksDefinition) -> dg.AssetChecksDefinition:
    specs = list(checks_def.check_specs)

    @dg.multi_asset_check(name=checks_def.op.name, specs=specs, pool=checks_def.op.pool)
    def empty() -> Iterator[dg.AssetCheckResult]:
        for check in specs:
            yield dg.AssetCheckResult(asset_key=check.asset_key, check_name=check.name, passed=True)

    return empty


def empty_graph() -> list:
    """The code location's assets and checks with empty bodies."""
    from gpuprice.pipelines.definitions import defs

    assets = [_empty_assets(a) for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)]
    checks = [_empty_checks(c) for c in defs.asset_checks or [] if isinstance(c, dg.AssetChecksDefinition)]
    return [*assets, *checks]


def run_once(home: Path, partition: str, providers: Sequence[str] = PROVIDERS) -> float:
    """Seconds to open the instance under ``home`` and run the daily selection with empty bodies."""
    graph = empty_graph()
    started = time.perf_counter()
    instance = cli_instance(home)
    try:
        result, errors = materialize_for_cli(
            daily_selection(providers),
            resources={},
            instance=instance,
            label="orchestration-floor",
            partition_key=partition,
            definitions=graph,
        )
        if not result.success:
            raise RuntimeError(f"the empty graph's run failed: {'; '.join(errors)}")
        return time.perf_counter() - started
    finally:
        instance.dispose()


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    partition = args[0] if args else "2026-10-06"
    home = Path(os.environ.get("GPUPRICE_HOME", "data"))
    print(json.dumps({"seconds": run_once(home, partition)}))


if __name__ == "__main__":
    main()
