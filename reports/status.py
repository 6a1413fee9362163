"""What a page says about its data, in one place, so every statement on a page agrees.

The age of the newest snapshot (against the week's end) and each provider's freshness are both
judged on the same day, the report's ``as_of`` date, and said together in
:func:`data_status`; the index, every workload page and the summary print these same sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuprice.reports.data import ProviderFreshness, ReportMeta
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, STALE_AFTER_DAYS


def _stale_reason(row: ProviderFreshness) -> str:
    if row.last_success_date is None:
        return "no successful scrape"
    if row.last_status not in (None, "success"):
        return f"last success {row.last_success_date.isoformat()}, newest attempt {row.last_status}"
    if row.days_since_success is not None:
        return f"page {row.days_since_success} day{'s' if row.days_since_success != 1 else ''} old"
    return f"last success {row.last_success_date.isoformat()}"


def data_status(meta: ReportMeta, freshness: Sequence[ProviderFreshness]) -> tuple[list[str], bool]:
    """Sentences on how current the page's prices are, and whether any of them is a warning."""
    day = meta.as_of.isoformat()
    lines: list[str] = []
    warn = False
    if meta.lag_days > STALE_AFTER_DAYS:
        warn = True
        lines.append(
            f"The newest prices are from {day}, {meta.lag_days} days before the end of this week "
            f"({meta.week.end.isoformat()}); no scrape has landed since."
        )
    stale = [f for f in freshness if f.stale]
    if freshness and not stale:
        lines.append(f"All {len(freshness)} providers were fresh on {day}.")
    elif stale:
        warn = True
        reasons = ", ".join(f"{f.provider} ({_stale_reason(f)})" for f in stale)
        too_old = [
            f.provider
            for f in stale
            if f.last_success_date is not None
            and (f.days_since_success is None or f.days_since_success > MAX_PRICE_AGE_DAYS)
        ]
        lines.append(
            f"{len(stale)} of {len(freshness)} providers {'was' if len(stale) == 1 else 'were'} stale on {day}: {reasons}. "
            + (
                f"Prices from pages more than {MAX_PRICE_AGE_DAYS} days old ({', '.join(too_old)}) are not current: "
                "no recommendation or cheapest uses them; they are listed as older observations."
                if too_old
                else f"Their prices are older than the rest, but within {MAX_PRICE_AGE_DAYS} days: still current."
            )
        )
    return lines, warn
