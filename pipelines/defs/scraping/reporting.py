"""What a scraping step shows Dagster: for the daily run's lone date, or for a backfill's range.

The stages treat every date alike (``stages.py``); only the telling differs, chosen once per step
by :func:`step_report`:

- :class:`LoneDate` (a daily run): the date's failure fails the step (Dagster marks it failed and
  retries a live fetch), its checks are the partition's blocking checks, and the metadata shows
  the page itself (URL, digest, a preview of the cheapest offers).
- :class:`DateRange` (a single-run backfill): failing dates are recorded and held back while the
  others load; the checks come as warnings naming the held-back dates, and the metadata counts
  dates. Dagster copies a range step's metadata and check results into every partition of the
  range, so one date's page details (or one date's blocking failure) would be wrong for all.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import dagster as dg

from gpuprice.pipelines.asset_keys import provider_asset_key
from gpuprice.pipelines.defs.scraping.checks import CHECKS
from gpuprice.pipelines.defs.scraping.stages import Checked, CheckFailure, Collected, Loaded, StepRun
from gpuprice.scrapers.offer import Offer


def offers_markdown(offers: list[Offer], limit: int = 10) -> str:
    """A Markdown preview of the cheapest offers (for the Dagster UI)."""
    rows = sorted(offers, key=lambda o: o.usd_per_gpu_hour)[:limit]
    lines = ["| gpu | raw name | count | tier | $/GPU-h |", "|---|---|---|---|---|"]
    for o in rows:
        raw = o.gpu_raw.replace("|", "\\|")
        lines.append(f"| {o.gpu} | {raw} | {o.gpu_count} | {o.tier} | {o.usd_per_gpu_hour:.4f} |")
    return "\n".join(lines)


def step_failure_line(provider: str, day: dt.date, error: str, *, page_kept: bool) -> str:
    """The one line a failed provider step shows in the run's log (the UI's and the CLI's): what
    failed, that nothing was replaced, and the command that tries again."""
    cause = (error.strip().splitlines() or ["failed"])[0]
    again = (
        f"after a parser fix, re-parse the kept page: gpuprice run --source raw --date {day} --providers {provider}"
        if page_kept
        else f"try again: gpuprice run --date {day} --providers {provider}"
    )
    return f"{provider} {day}: {cause}; the previous snapshot stays the latest; {again}"


@dataclass(frozen=True)
class LoneDate:
    """A step of one date: it fails with its date, and shows that date's page."""

    run: StepRun
    retries_allowed: bool

    @property
    def day(self) -> dt.date:
        return self.run.days[0]

    def raw(self, collected: Collected) -> dict[str, Any]:
        """The raw asset's metadata; dg.Failure when the page could not be had."""
        failure = collected.failures.get(self.day)
        if failure is not None:
            # Archive pages do not come back on retry; live fetches may (the fetcher already retried).
            raise dg.Failure(
                description=step_failure_line(self.run.provider, self.day, failure.message, page_kept=False),
                allow_retries=self.run.source == "live" and self.retries_allowed,
            ) from failure.cause
        chosen = collected.pages[self.day]
        return {
            "url": chosen.page.url,
            "bytes": chosen.page.bytes,
            "sha256": chosen.page.sha256,
            "stored_path": dg.MetadataValue.path(chosen.page.stored_path),
            "http_status": chosen.page.http_status,
            "pages_fetched": len(chosen.stored),
        }

    def parsed(self, checked: Checked) -> dict[str, Any]:
        """The parsed asset's metadata; dg.Failure (not retried: the same page parses the same
        way) when the page could not be read or parsed."""
        if self.day not in checked.parsed:
            failure = checked.failures[self.day]
            cause = None if isinstance(failure, CheckFailure) else failure.cause
            raise dg.Failure(
                description=step_failure_line(self.run.provider, self.day, failure.message, page_kept=True),
                allow_retries=False,
            ) from cause
        result = checked.parsed[self.day].result
        report = result.report
        return {
            "offers": len(result.offers),
            "parse_strategy": report.parse_strategy,
            "rejected": len(report.rejected),
            "unpriced_rows": report.unpriced_rows,
            "unknown_gpus": ", ".join(report.unknown_gpus) or "none",
            "missing_columns": ", ".join(report.missing_columns) or "none",
            "preview": dg.MetadataValue.md(offers_markdown(result.offers)),
        }

    def checks(self, checked: Checked) -> list[dg.AssetCheckResult]:
        """The date's blocking checks: a failed one fails the step once reported."""
        return [
            dg.AssetCheckResult(
                check_name=outcome.name,
                asset_key=provider_asset_key("parsed", self.run.provider),
                passed=outcome.passed,
                description=outcome.detail,
                metadata={"detail": outcome.detail},
                severity=dg.AssetCheckSeverity.ERROR,
            )
            for outcome in checked.outcomes[self.day]
        ]

    def loads(self, checked: Checked) -> bool:
        """Whether the snapshot stage runs. Not when the date failed a check: the snapshot stays,
        and the step fails (its check results already reported) with one line of the checks'
        findings, where Dagster's blocking-check error would name only the checks."""
        if checked.passed:
            return True
        failure = checked.failures[self.day]
        raise dg.Failure(
            description=step_failure_line(self.run.provider, self.day, failure.message, page_kept=True),
            allow_retries=False,
        )

    def warning(self, checked: Checked) -> str | None:
        return None  # a failure fails the step instead

    def loaded(self, loaded: Loaded, checked: Checked) -> dict[str, Any]:
        result = checked.passed[0].result
        return {
            "dagster/row_count": loaded.rows,
            "warehouse_rows_total": loaded.warehouse_rows,
            "quarantined": len(result.report.rejected),
            "cheapest": dg.MetadataValue.md(offers_markdown(result.offers, 5)),
        }


@dataclass(frozen=True)
class DateRange:
    """A step of many dates: failing dates are held back and counted, never fail the step."""

    run: StepRun

    def _summary(self, failed: list[dt.date], distinct_pages: int) -> dict[str, Any]:
        days = self.run.days
        return {
            "dates": len(days),
            "first_date": days[0].isoformat(),
            "last_date": days[-1].isoformat(),
            "dates_failed": len(failed),
            "distinct_pages": distinct_pages,
            "failed_dates": ", ".join(d.isoformat() for d in sorted(failed)[:20]) or "none",
        }

    def raw(self, collected: Collected) -> dict[str, Any]:
        distinct = {chosen.page.sha256 for chosen in collected.pages.values()}
        return self._summary(list(collected.failures), len(distinct))

    def parsed(self, checked: Checked) -> dict[str, Any]:
        return self._summary(list(checked.failures), checked.distinct_pages)

    def checks(self, checked: Checked) -> list[dg.AssetCheckResult]:
        """Each check as a warning naming the dates it held back (what goes on passed them all)."""
        days = self.run.days
        results = []
        for name in CHECKS:
            held = sorted(
                day
                for day, failure in checked.failures.items()
                if isinstance(failure, CheckFailure) and name in failure.failed_checks
            )
            results.append(
                dg.AssetCheckResult(
                    check_name=name,
                    asset_key=provider_asset_key("parsed", self.run.provider),
                    passed=not held,
                    severity=dg.AssetCheckSeverity.WARN,
                    description=f"{len(days) - len(held)} of {len(days)} dates passed"
                    + (f"; held back: {', '.join(d.isoformat() for d in held[:20])}" if held else ""),
                    metadata={"dates_held_back": len(held)},
                )
            )
        return results

    def loads(self, checked: Checked) -> bool:
        return True  # the dates that passed, if any; the others are recorded failed

    def warning(self, checked: Checked) -> str | None:
        """One line for the run's log when dates were held back: how many, the first one's cause."""
        if not checked.failures:
            return None
        first = min(checked.failures)
        more = len(checked.failures) - 1
        dates = f"{first}" + (f" and {more} more dates" if more else "")
        return (
            f"{self.run.provider}: {dates} held back, {checked.failures[first].message};"
            " the previous snapshot stays the latest (provider_runs has each date's error)"
        )

    def loaded(self, loaded: Loaded, checked: Checked) -> dict[str, Any]:
        return {
            "dagster/row_count": loaded.rows,
            "warehouse_rows_total": loaded.warehouse_rows,
            "dates_loaded": loaded.dates,
        }


def step_report(run: StepRun, *, retries_allowed: bool) -> LoneDate | DateRange:
    """How the step tells Dagster: a daily run's lone date, or a backfill's range."""
    match run.days:
        case [_]:
            return LoneDate(run, retries_allowed)
        case _:
            return DateRange(run)
