"""Where a provider parser puts what it reads from one page: offers, and the report about them.

The parser finds rows and reads cells; the sink decides what becomes an offer. Every offer is
built through the pydantic :class:`~scrapers.offer.Offer` model, so a row with an impossible
value is rejected with the model's reason, and a row repeating an offer already kept (same
:attr:`Offer.key`) is rejected as a duplicate. Rejections go to the report with the row's raw
text; they never abort the page. Two rules hold for every parser here: a GPU count written with a
minus sign ("-8x NVIDIA H100") and a price per GPU-hour below the plausible floor
(:data:`~scrapers.parsing.MIN_USD_PER_GPU_HOUR`) are rejected with the reason. A GPU name the catalog cannot map keeps the slug ``unknown``
and is listed once in ``unknown_gpus``: reported, never dropped or guessed.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from gpuprice.scrapers.gpu_names import UNKNOWN, normalize_gpu
from gpuprice.scrapers.offer import Offer, ParseReport, ParseResult, Provider, RejectedRow
from gpuprice.scrapers.parsing import check_gpu_hour_floor, negative_count

# Noted once per page by parsers that keep a "from $x" price (a floor over host variants) as the price.
FROM_PRICE_NOTE = "'from' prices are lower bounds"


def validation_reason(exc: ValidationError, *, name_fields: bool = True) -> str:
    """The model's complaints on one line: 'usd_per_gpu_hour: Input should be less than 1000'.

    Several errors are joined with '; '; a whole-offer check (no field) is named 'offer'.
    ``name_fields=False`` gives the messages alone, for callers whose reason already names the value.
    """
    if not name_fields:
        return "; ".join(error["msg"] for error in exc.errors())
    return "; ".join(
        f"{'.'.join(map(str, error['loc'])) or 'offer'}: {error['msg']}" for error in exc.errors()
    )


def sku_naming_memory(sku: str, gpu_raw: str, vram_gb: float | None, provider: str) -> str:
    """``sku`` with the memory appended when the name alone would name another part.

    Pages sell one name in two memory sizes ("NVIDIA A100 SXM" with 40 GB and with 80 GB): the
    80 GB row gets " 80GB" in its sku, so the two are two offers, not a duplicate. Names that
    identify their part (H100 SXM is 80 GB) keep their sku unchanged, day after day.
    """
    if vram_gb is None:
        return sku
    if normalize_gpu(gpu_raw, provider=provider) == normalize_gpu(
        gpu_raw, provider=provider, vram_gb=vram_gb
    ):
        return sku
    return f"{sku} {vram_gb:g}GB"


class OfferSink:
    """The offers and the :class:`ParseReport` of one page of one provider."""

    def __init__(self, provider: str) -> None:
        # Validates the name (one of PROVIDERS): parser modules name themselves with a plain str.
        self.report = ParseReport.model_validate({"provider": provider})
        self.provider: Provider = self.report.provider
        self.offers: list[Offer] = []
        self._keys: set[tuple] = set()

    # --- the report ------------------------------------------------------------------------

    def gpu_slug(self, raw: str, vram_gb: float | None = None, *alternatives: str) -> str:
        """Catalog slug of a GPU name, trying alternative spellings (an API id, a URL parameter)
        before giving up; a name none of them maps is noted as unknown under ``raw``."""
        for name in (raw, *alternatives):
            if name:
                slug = normalize_gpu(name, provider=self.provider, vram_gb=vram_gb)
                if slug != UNKNOWN:
                    return slug
        self.note_unknown_gpu(raw)
        return UNKNOWN

    def note_unknown_gpu(self, raw: str) -> None:
        """List a GPU name the catalog does not know (once per page)."""
        if raw not in self.report.unknown_gpus:
            self.report.unknown_gpus.append(raw)

    def note(self, text: str) -> None:
        """Add a note to the report unless the page already has it."""
        if text not in self.report.notes:
            self.report.notes.append(text)

    def note_columns(self, *, missing: Iterable[str] = (), unexpected: Iterable[str] = ()) -> None:
        """Record columns a table lacks or has beyond those the parser maps, each name once per page."""
        for target, names in (
            (self.report.missing_columns, missing),
            (self.report.unexpected_columns, unexpected),
        ):
            target.extend(name for name in dict.fromkeys(names) if name not in target)

    def reject(self, raw: str, reason: str) -> None:
        """A row that could not become an offer, with its text and why."""
        self.report.rejected.append(RejectedRow(raw=raw, reason=reason))

    # --- offers ----------------------------------------------------------------------------

    def validate(
        self, raw: str, *, reason_prefix: str = "", name_fields: bool = True, **fields: Any
    ) -> Offer | None:
        """The offer built from ``fields`` for this provider, or None with ``raw`` rejected.

        The rejection reason is ``reason_prefix`` followed by :func:`validation_reason`.
        """
        for name in ("gpu_raw", "sku"):
            count = negative_count(fields.get(name))
            if count:
                self.reject(raw, f"{reason_prefix}negative GPU count {count!r} in {name} {fields[name]!r}")
                return None
        price = fields.get("usd_per_gpu_hour")
        if isinstance(price, (int, float, Decimal)) and not isinstance(price, bool):
            try:
                check_gpu_hour_floor(price, raw)
            except ValueError as exc:
                self.reject(raw, f"{reason_prefix}{exc}")
                return None
        try:
            return Offer(provider=self.provider, **fields)
        except ValidationError as exc:
            self.reject(raw, reason_prefix + validation_reason(exc, name_fields=name_fields))
            return None

    def keep(self, offer: Offer, raw: str) -> bool:
        """Keep a valid offer unless the page already gave the same one (then ``raw`` is rejected)."""
        if offer.key in self._keys:
            self.reject(raw, "duplicate offer")
            return False
        self._keys.add(offer.key)
        self.offers.append(offer)
        return True

    def add(self, raw: str, *, reason_prefix: str = "", **fields: Any) -> Offer | None:
        """Validate and keep one offer; the kept offer, or None when ``raw`` was rejected."""
        offer = self.validate(raw, reason_prefix=reason_prefix, **fields)
        if offer is None or not self.keep(offer, raw):
            return None
        return offer

    def result(self) -> ParseResult:
        """The page's offers and report (with the offer count filled in)."""
        self.report.offers = len(self.offers)
        for note in spot_above_on_demand(self.offers):
            self.note(note)
        return ParseResult(offers=self.offers, report=self.report)


def spot_above_on_demand(offers: Iterable[Offer]) -> list[str]:
    """Notes for spot prices above the on-demand price of the same offer (same SKU, count,
    cloud, region, day and basis): interruptible capacity never costs more, so one of the two
    prices is misread or mislabelled. Flagged in the report, not dropped: the page says so."""
    on_demand: dict[tuple, float] = {}
    for offer in offers:
        if offer.tier == "on_demand":
            on_demand[_spot_pair_key(offer)] = offer.usd_per_gpu_hour
    notes = []
    for offer in offers:
        price = on_demand.get(_spot_pair_key(offer)) if offer.tier == "spot" else None
        if price is not None and offer.usd_per_gpu_hour > price:
            notes.append(
                f"spot above on-demand: {offer.sku} spot ${offer.usd_per_gpu_hour:g}/GPU-h > on-demand ${price:g}"
            )
    return notes


def _spot_pair_key(offer: Offer) -> tuple:
    return (
        offer.sku,
        offer.gpu_count,
        offer.community,
        offer.region,
        offer.effective_from,
        offer.price_basis,
    )
