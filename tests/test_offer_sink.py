"""The offer sink shared by the provider parsers: validation, duplicates, unknown GPUs, report notes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpuprice.scrapers.offer import Offer, ParseResult
from gpuprice.scrapers.offer_sink import OfferSink


def fields(**overrides: Any) -> dict[str, Any]:
    """A valid one-GPU on-demand offer's fields."""
    return {
        "gpu": "h100-sxm",
        "gpu_raw": "NVIDIA H100",
        "gpu_count": 1,
        "usd_per_gpu_hour": Decimal("2.49"),
        "sku": "h100",
    } | overrides


def reasons(sink: OfferSink) -> list[tuple[str, str]]:
    return [(row.raw, row.reason) for row in sink.report.rejected]


def test_valid_offers_are_kept_in_order_for_the_sinks_provider() -> None:
    sink = OfferSink("lambda")
    first = sink.add("row 1", **fields())
    second = sink.add("row 2", **fields(tier="spot", usd_per_gpu_hour=1.2))
    assert isinstance(first, Offer) and first.provider == "lambda" and first.usd_per_gpu_hour == 2.49
    assert sink.offers == [first, second] and sink.report.rejected == []


def test_an_offer_repeating_a_kept_key_is_rejected_as_a_duplicate() -> None:
    sink = OfferSink("lambda")
    kept = sink.add("row 1", **fields())
    # Same key (sku, count, tier, ...), another price: the first one stands.
    assert sink.add("row 2", **fields(usd_per_gpu_hour=2.99)) is None
    assert sink.offers == [kept]
    assert reasons(sink) == [("row 2", "duplicate offer")]


def test_invalid_fields_are_rejected_with_every_reason_never_raised() -> None:
    sink = OfferSink("coreweave")
    assert sink.add("row", **fields(gpu_count=0, usd_per_gpu_hour=1234.5)) is None
    assert sink.offers == []
    assert reasons(sink) == [
        (
            "row",
            "gpu_count: Input should be greater than or equal to 1; usd_per_gpu_hour: Input should be less than 1000",
        )
    ]


def test_a_whole_offer_check_is_named_offer_and_a_prefix_is_prepended() -> None:
    sink = OfferSink("nebius")
    sink.add("row", reason_prefix="invalid offer from column 'Reserved': ", **fields(tier="reserved"))
    assert reasons(sink) == [
        (
            "row",
            "invalid offer from column 'Reserved': offer: Value error, a reserved offer needs commitment_months",
        )
    ]


def test_reasons_without_field_names_for_callers_that_name_the_value() -> None:
    sink = OfferSink("crusoe")
    assert (
        sink.validate(
            "row",
            reason_prefix="invalid offer ($1234.50/GPU-hr): ",
            name_fields=False,
            **fields(usd_per_gpu_hour=1234.5),
        )
        is None
    )
    assert reasons(sink) == [("row", "invalid offer ($1234.50/GPU-hr): Input should be less than 1000")]


def test_validate_builds_without_keeping_and_keep_names_the_duplicate_its_own_way() -> None:
    sink = OfferSink("crusoe")
    offers = [sink.validate(f"cell {i}", **fields()) for i in range(2)]
    assert sink.offers == [] and all(isinstance(o, Offer) for o in offers)
    assert [sink.keep(o, f"{o.sku} | {o.tier}") for o in offers] == [True, False]
    assert reasons(sink) == [("h100 | on_demand", "duplicate offer")]


def test_known_gpu_names_map_to_slugs_with_the_providers_convention() -> None:
    # A bare "H100" is the PCIe card at Massed Compute and the SXM part elsewhere (models.gpu_names).
    assert OfferSink("massedcompute").gpu_slug("H100") == "h100-pcie"
    assert OfferSink("lambda").gpu_slug("H100") == "h100-sxm"
    sink = OfferSink("lambda")
    assert sink.gpu_slug("RTX 6000", 48.0) == "rtx-6000-ada"  # memory from another column decides
    assert sink.report.unknown_gpus == []


def test_unknown_gpu_names_are_listed_once_under_the_pages_name() -> None:
    sink = OfferSink("runpod")
    assert sink.gpu_slug("Foo X9", None, "foo-x9-id") == "unknown"
    assert sink.gpu_slug("Foo X9") == "unknown"
    sink.note_unknown_gpu("Bar 7")
    assert sink.report.unknown_gpus == ["Foo X9", "Bar 7"]


def test_an_alternative_spelling_maps_a_name_the_page_wrote_oddly() -> None:
    sink = OfferSink("runpod")
    assert sink.gpu_slug("Hopper flagship", 80.0, "", "NVIDIA H100 80GB HBM3") == "h100-sxm"
    assert sink.report.unknown_gpus == []


def test_notes_and_columns_are_recorded_once_per_page_in_first_seen_order() -> None:
    sink = OfferSink("massedcompute")
    sink.note("'from' prices are lower bounds")
    sink.note("'from' prices are lower bounds")
    sink.note_columns(missing=["vram", "ram"], unexpected=["Notes", "Notes"])
    sink.note_columns(missing=["ram", "storage"], unexpected=["Interconnect"])
    assert sink.report.notes == ["'from' prices are lower bounds"]
    assert sink.report.missing_columns == ["vram", "ram", "storage"]
    assert sink.report.unexpected_columns == ["Notes", "Interconnect"]


def test_result_carries_the_offers_and_their_count() -> None:
    sink = OfferSink("lambda")
    sink.add("a", **fields())
    sink.add("b", **fields())
    sink.add("c", **fields(sku="h100-b"))
    result = sink.result()
    assert isinstance(result, ParseResult)
    assert [o.sku for o in result.offers] == ["h100", "h100-b"]
    assert (result.report.provider, result.report.offers, len(result.report.rejected)) == ("lambda", 2, 1)
