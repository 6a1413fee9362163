"""Shared parsing helpers: prices, numbers, header mapping."""

from decimal import Decimal

import pytest

from gpuprice.scrapers.parsing import map_columns, parse_number, parse_price


@pytest.mark.parametrize(
    "text, value, is_from",
    [
        ("$2.49", "2.49", False),
        ("$1,234.56", "1234.56", False),
        ("from $0.99/GPU-hr", "0.99", True),
        ("From\u00a0$ 1.50", "1.50", True),
        ("  $3.90 /GPU-hr ", "3.90", False),
        ("US$12", "12", False),
        ("2.1", "2.1", False),
    ],
)
def test_prices(text, value, is_from):
    price = parse_price(text)
    assert price.value == Decimal(value) and price.is_from is is_from


@pytest.mark.parametrize("text", ["Contact sales", "Contact Us", "—", "-", "", "Coming soon", "N/A"])
def test_unpriced_cells_are_none_never_zero(text):
    assert parse_price(text) is None


@pytest.mark.parametrize("text", ["$3.2.9", "cheap", "$"])
def test_garbage_is_an_error(text):
    with pytest.raises(ValueError):
        parse_price(text)


def test_numbers():
    assert parse_number("2,048 GB") == 2048
    assert parse_number("80GB") == 80
    assert parse_number("1.5 TB") == 1.5
    assert parse_number("none") is None


def test_columns_are_mapped_by_header_not_position():
    wanted = {"name": [r"^(gpu|name|instance)"], "on_demand": [r"on demand"], "spot": [r"preemptible|spot"]}
    mapping, missing, unexpected = map_columns(
        ["Preemptible", "NEW COLUMN", "GPU", "On-demand"], wanted, required=["name", "on_demand"]
    )
    assert mapping == {"name": 2, "on_demand": 3, "spot": 0}
    assert missing == [] and unexpected == ["NEW COLUMN"]
    _, missing, _ = map_columns(["GPU"], wanted, required=["name", "on_demand"])
    assert missing == ["on_demand"]
