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


@pytest.mark.parametrize("text", ["-$1.00", "$-1.00", "($42.00)", "\u2212$42.00", "\u2013$3"])
def test_a_sign_is_a_rejection_never_dropped(text):
    with pytest.raises(ValueError, match="negative"):
        parse_price(text)


@pytest.mark.parametrize(
    "text, header, word",
    [
        ("\u20ac6.69", None, "EUR"),
        ("6.69 GBP", None, "GBP"),
        ("42,00 \u20ac", None, "EUR"),
        ("C$3.10", None, "C$"),
        ("$6.69", "PRICE/GPU/MONTH* (EUR)", "EUR"),
        ("$6.69", "On-Demand Price / month", "month"),
        ("$1,200 per instance-month", None, "month"),
        ("$2.49 billed monthly", None, "monthly"),
    ],
)
def test_other_currencies_and_periods_are_rejected_with_the_raw_text(text, header, word):
    with pytest.raises(ValueError) as caught:
        parse_price(text, header=header)
    assert word.lower() in str(caught.value).lower() and text in str(caught.value)


@pytest.mark.parametrize(
    "text, header",
    [
        ("$2.49/hr", "Price per GPU-hour, 1-month term"),
        ("$2.49", "1-year reserved"),
        ("$2.49", "PRICE/GPU/HR*"),
    ],
)
def test_hourly_prices_with_terms_in_the_header_are_read(text, header):
    assert parse_price(text, header=header).value == Decimal("2.49")


def test_exponents_and_json_numbers_are_read_exactly_then_bounded():
    assert parse_price("$6.69e3").value == Decimal("6690")
    assert parse_price(3.49).value == Decimal("3.49")
    assert parse_price(0).value == 0  # "not offered" to the caller, never a price
    for bad in ("2.5e-05", 2.5e-05, "1e16", 1e16, float("nan"), True, -3.49):
        with pytest.raises(ValueError):
            parse_price(bad)


def test_a_number_glued_to_a_name_is_not_the_price():
    assert parse_price("H100 $2.49").value == Decimal("2.49")
    assert parse_price("from$0.99").is_from


def test_signed_numbers():
    assert parse_number("-4") == -4
    assert parse_number("\u22128 GPUs") == -8
    assert parse_number("H100-80GB") == 100  # a hyphen inside a name is no sign
    assert parse_number("1e3") == 1000


def test_struck_through_text_is_not_cell_text():
    from bs4 import BeautifulSoup

    from gpuprice.scrapers.parsing import cell_text

    for html in (
        "<td><s>$7.99</s> $6.69</td>",
        "<td><del>$7.99</del><span>$6.69</span></td>",
        "<td><strike>$7.99</strike>$6.69</td>",
        '<td><span class="line-through">$7.99</span> $6.69</td>',
    ):
        cell = BeautifulSoup(html, "lxml").td
        assert cell_text(cell) == "$6.69", html
