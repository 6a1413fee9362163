"""Sizes and commitment terms as pricing pages write them (shared by the provider parsers)."""

from __future__ import annotations

import pytest

from gpuprice.scrapers.quantities import size_gb, term_months


@pytest.mark.parametrize(
    ("text", "gb"),
    [
        ("512 GB", 512.0),
        ("1,800 GiB", 1932.7),  # GB are 1e9 bytes: 1800 * 1.0737
        ("226 GiB", 242.7),
        ("22 TiB SSD", 24189.3),
        ("1.3 TiB", 1429.4),
        ("1.5 TB", 1500.0),
        ("30TB NVMe", 30000.0),
        ("2 x 3.84 TB", 7680.0),  # a count of drives
        ("8\u00d7 3.84 TB", 30720.0),
        ("512 MB", 0.5),
        ("2048 MiB", 2.1),
        ("DDR5-4800, 512 GB", 512.0),  # the number that states a unit wins over a bare one before it
        ("750", 750.0),
        ("2,048", 2048.0),
        ("0 GB", 0.0),
    ],
)
def test_sizes_in_gb(text: str, gb: float) -> None:
    assert size_gb(text) == gb


@pytest.mark.parametrize(
    ("text", "unit", "gb"), [("7.68", "TB", 7680.0), ("480", "GiB", 515.4), ("7.68 GB", "TB", 7.7)]
)
def test_a_bare_number_takes_the_default_unit_and_a_stated_unit_overrides_it(
    text: str, unit: str, gb: float
) -> None:
    assert size_gb(text, default_unit=unit) == gb


@pytest.mark.parametrize("text", [None, "", "—", "N/A", "Included"])
def test_no_number_is_no_size(text: object) -> None:
    assert size_gb(text) is None


@pytest.mark.parametrize(
    ("text", "months"),
    [
        ("1-year reserved", 12),
        ("1 year reserved", 12),
        ("Reserved (6 months)", 6),
        ("3 yr commit", 36),
        ("36-mo reserved", 36),
        ("12MONTH", 12),
        ("One-year reserved", 12),
        ("reserved three years", 36),
        ("six month commitment", 6),
        ("2\u2013year", 24),
    ],
)
def test_terms_in_months(text: str, months: int) -> None:
    assert term_months(text) == months


@pytest.mark.parametrize(
    "text", ["Reserved", "Reserved price", "On-demand", "Contact sales", "", None, "monthly", "H100 80GB"]
)
def test_text_without_a_term_has_none(text: object) -> None:
    assert term_months(text) is None
