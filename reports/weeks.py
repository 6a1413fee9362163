"""ISO weeks (``2026-W44``): the unit a weekly report covers."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from gpuprice.errors import BadInput

_WEEK_RE = re.compile(r"^(\d{4})-?W(\d{1,2})$", re.IGNORECASE)


# The years a report week may name: the weeks around it must stay inside the calendar.
MIN_YEAR, MAX_YEAR = 1970, 9000


@dataclass(frozen=True, order=True)
class IsoWeek:
    year: int
    week: int

    @classmethod
    def parse(cls, text: str) -> IsoWeek:
        """Parse ``YYYY-Www`` (also ``YYYYWww``); BadInput naming the value and the expected form."""
        match = _WEEK_RE.match(text.strip())
        expected = "expected an ISO week like 2026-W44"
        if not match:
            raise BadInput(f"bad --week {text!r}; {expected}")
        year, week = int(match.group(1)), int(match.group(2))
        if not MIN_YEAR <= year <= MAX_YEAR:  # 9999-W52 would reach past the calendar a week later
            raise BadInput(
                f"bad --week {text!r}: year {year} is out of range ({MIN_YEAR}-{MAX_YEAR}); {expected}"
            )
        try:
            dt.date.fromisocalendar(year, week, 1)
        except ValueError:
            raise BadInput(f"bad --week {text!r}: {year} has no ISO week {week}; {expected}") from None
        return cls(year, week)

    @classmethod
    def of(cls, day: dt.date) -> IsoWeek:
        iso = day.isocalendar()
        return cls(iso.year, iso.week)

    @property
    def start(self) -> dt.date:
        """Monday of the week."""
        return dt.date.fromisocalendar(self.year, self.week, 1)

    @property
    def end(self) -> dt.date:
        """Sunday of the week (inclusive)."""
        return dt.date.fromisocalendar(self.year, self.week, 7)

    def contains(self, day: dt.date) -> bool:
        return self.start <= day <= self.end

    def __str__(self) -> str:
        return f"{self.year}-W{self.week:02d}"
