"""Measured spot risk: AWS's interruption-frequency buckets as preemption rates.

AWS's Spot Instance Advisor publishes, per region, OS and instance type, the bucket of the
"frequency of interruption": the share of Spot capacity of that type AWS reclaimed over the
trailing month, in five buckets (``spot-advisor-data.json`` ``ranges``): <5 %, 5-10 %, 10-15 %,
15-20 %, >20 %. The live AWS fetch stores that file with the prices; the parser puts each spot
offer's bucket label on the offer (``interruption_bucket``). The bucket definitions are bundled in
``models/spot_interruption_buckets.csv`` (label, bounds, the midpoint used, source).

Rate used by the cost model, per node-hour: the bucket's midpoint ``p`` read as the probability
that an instance running for a month (730 h) is interrupted, so ``rate = -ln(1 - p) / 730``
(Poisson arrivals). The open bucket >20 % uses 25 % (the midpoint of 20-30 %, an assumption: the
advisor gives no upper bound). A spot offer without a bucket (every other provider, an AWS type
the advisor does not list) keeps the documented default ``CostTerms.spot_preemptions_per_node_hour``.
Each ranked spot offer names the rate it used (``preemption_rate_source``).
"""

from __future__ import annotations

import csv
import functools
import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

BUCKETS_CSV = Path(__file__).resolve().with_name("spot_interruption_buckets.csv")
HOURS_PER_MONTH = 730.0
DEFAULT_SOURCE = "default"


class InterruptionBucket(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    lower_pct: float = Field(ge=0, le=100)
    upper_pct: float | None = Field(default=None, ge=0, le=100)
    midpoint_pct: float = Field(gt=0, lt=100)
    source_url: str


@functools.cache
def buckets() -> dict[str, InterruptionBucket]:
    with BUCKETS_CSV.open(newline="", encoding="utf-8") as handle:
        rows = [
            InterruptionBucket.model_validate({k: (v if v != "" else None) for k, v in row.items()})
            for row in csv.DictReader(handle)
        ]
    return {row.label: row for row in rows}


def bucket_rate(label: str | None) -> float | None:
    """Preemptions per node-hour of a bucket label ("<5%", "5-10%", ...); None when unknown."""
    if not label:
        return None
    bucket = buckets().get(label.replace(" ", ""))
    if bucket is None:
        return None
    return -math.log1p(-bucket.midpoint_pct / 100.0) / HOURS_PER_MONTH


def rate_source(label: str | None) -> str:
    """What a ranked spot offer says about its rate: ``aws-spot-advisor <label>`` or ``default``."""
    return f"aws-spot-advisor {label}" if bucket_rate(label) is not None else DEFAULT_SOURCE
