"""gpuprice check-live [--providers p1,...]: does each provider's live page still parse?"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from gpuprice.commands.validation import parse_providers
from gpuprice.scrapers.redact import redact_credentials

LISTED = 8  # new/gone/changed offers listed per provider before "... and N more"


def check_live(
    providers: Annotated[
        str | None,
        typer.Option("--providers", help="Comma-separated subset of providers [all].", metavar="P1,P2,..."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per provider on stdout.")] = False,
) -> None:
    """Fetch each provider's live source once (politely), store and parse it, and compare it
    with the newest stored snapshot. Exit 1 when a provider cannot be fetched or parsed.

    GPUPRICE_LIVE_BASE_URL=http://host:port sends every request to BASE/PROVIDER/PATH
    instead of the provider's site (for tests and mirrors)."""
    from gpuprice.scrapers.live_check import SnapshotPrice, check_provider
    from gpuprice.settings import Settings

    chosen = parse_providers(providers)
    settings = Settings.from_env()
    home = settings.ensure_home()
    failed = 0
    for provider in chosen:
        day, previous = _newest_snapshot(settings.warehouse_path, provider)
        print(f"checking {provider} ...", file=sys.stderr)
        check = check_provider(
            provider,
            home=home,
            previous=[SnapshotPrice(**row) for row in previous],
            previous_date=day,
            base_url=settings.live_base_url,
        )
        failed += not check.ok
        if as_json:
            print(redact_credentials(json.dumps(check.model_dump(mode="json") | {"ok": check.ok})))
        else:
            print(redact_credentials("\n".join(_lines(check))))
    if failed:
        raise typer.Exit(1)


def _newest_snapshot(path, provider: str):
    """(date, offers) of the provider's newest stored snapshot; (None, []) without a warehouse."""
    if not path.exists():
        return None, []
    from gpuprice.warehouse.connection import connect_read_only
    from gpuprice.warehouse.queries import newest_snapshot

    con = connect_read_only(path)
    try:
        return newest_snapshot(con, provider)
    finally:
        con.close()


def _lines(check) -> list[str]:
    if not check.ok:
        status = check.http_status if check.http_status is not None else "-"
        return [f"{check.provider:<14} FAILED  HTTP {status}  {check.bytes:,} bytes  {check.error}"]
    unknown = ", ".join(check.unknown_gpus) or "none"
    head = (
        f"{check.provider:<14} ok      HTTP {check.http_status}  {check.bytes:,} bytes  {check.strategy}"
        f"  {check.offers} offers  {check.rejected} rejected  unknown GPUs: {unknown}"
    )
    coverage = (
        f"  identity: {check.identity or '-'}  coverage: {check.listings_seen} listings seen,"
        f" {check.gpus_mapped} of {check.offers} offers with a known GPU, {len(check.unknown_gpus)} unknown names"
    )
    diff = check.diff
    if diff is None or diff.snapshot_date is None:
        return [head, coverage, "  vs stored snapshot: none yet"]
    lines = [
        head,
        coverage,
        f"  vs snapshot {diff.snapshot_date}: {len(diff.new)} new, {len(diff.gone)} gone,"
        f" {len(diff.changed)} changed",
    ]
    lines += _capped("new:    ", diff.new)
    lines += _capped("gone:   ", diff.gone)
    lines += _capped(
        "changed:",
        [f"{c.offer} ${c.old_usd_per_gpu_hour:.4f} -> ${c.new_usd_per_gpu_hour:.4f}" for c in diff.changed],
    )
    return lines


def _capped(kind: str, items: list[str]) -> list[str]:
    """At most LISTED lines of one kind, then how many more (--json lists them all)."""
    shown = [f"    {kind} {item}" for item in items[:LISTED]]
    if len(items) > LISTED:
        shown.append(f"    {kind} ... and {len(items) - LISTED} more (--json lists all)")
    return shown
