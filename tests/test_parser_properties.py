"""Property tests: generated variations of each provider's documented page parse to the same offers.

Each test renders one page from fixed rows, varying what real sites change without notice: column
order, class names (Webflow rebuilds), whitespace, non-breaking spaces and HTML entities. The
offers (compared as sets of their full fields) must not move. Few examples, derandomized and
without a database, so runs are cheap and repeatable.
"""

from __future__ import annotations

import html
import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuprice.scrapers.registry import parse_page, provider_parser

PROPERTY_SETTINGS = settings(
    max_examples=12,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Ways a page writes the space between two words.
SPACES = st.lists(
    st.sampled_from([" ", "  ", "\n  ", "&nbsp;", "&#32;", "\t", "&#160;"]), min_size=8, max_size=8
)
CLASS_NAMES = st.from_regex(r"[a-z][a-z0-9]{1,7}([_-][a-z0-9]{1,6})?", fullmatch=True)


def _spaced(text: str, spaces: list[str], seed: int) -> str:
    """``text`` HTML-escaped, each space replaced by one of ``spaces`` and "$" maybe as "&#36;"."""
    rng = random.Random(seed)
    words = [html.escape(word, quote=False) for word in text.split(" ")]
    out = words[0]
    for word in words[1:]:
        out += rng.choice(spaces) + word
    return out.replace("$", rng.choice(["$", "&#36;", "&dollar;"]))


def _offers(provider: str, page: str) -> set[str]:
    # Served at the provider's pricing URL, as the page says of itself (scrapers/identity.py).
    canonical = f'<head><link rel="canonical" href="{provider_parser(provider).PRICING_URL}"></head>'
    result = parse_page(provider, page.replace("<html>", "<html>" + canonical, 1).encode())
    assert result.report.parse_strategy == "structured"
    return {json.dumps(o.model_dump(mode="json"), sort_keys=True) for o in result.offers}


def _table(headers: list[str], rows: list[list[str]], order: list[int], cls: str, spaces: list[str]) -> str:
    head = "".join(f"<th>{_spaced(headers[i], spaces, i)}</th>" for i in order)
    body = "".join(
        "<tr>" + "".join(f"<td>{_spaced(row[i], spaces, i + 7 * r)}</td>" for i in order) + "</tr>"
        for r, row in enumerate(rows)
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


# ----------------------------------------------------------------------------------- lambda
LAMBDA_HEADERS = ["Plan", "VRAM/GPU", "vCPUs", "RAM", "STORAGE", "PRICE/GPU/HR*"]
LAMBDA_ROWS = [
    ["On-demand 8x NVIDIA H100 SXM", "80 GB", "208", "1800 GiB", "22 TiB SSD", "$2.99"],
    ["On-demand 8x NVIDIA B200 SXM6", "180 GB", "208", "2900 GiB", "22 TiB SSD", "$6.69"],
    ["On-demand 8x NVIDIA A100 SXM", "40 GB", "124", "1800 GiB", "6 TiB SSD", "Sold out"],
]


def _lambda_page(order: list[int], cls: str, spaces: list[str]) -> str:
    return f"<html><body><main class='{cls}-main'>{_table(LAMBDA_HEADERS, LAMBDA_ROWS, order, cls, spaces)}</main></body></html>"


@PROPERTY_SETTINGS
@given(order=st.permutations(range(6)), cls=CLASS_NAMES, spaces=SPACES)
def test_lambda_variations_parse_to_the_same_offers(order: list[int], cls: str, spaces: list[str]) -> None:
    assert _offers("lambda", _lambda_page(order, cls, spaces)) == _offers(
        "lambda", _lambda_page(list(range(6)), "pricing", [" "])
    )


# ----------------------------------------------------------------------------------- coreweave
COREWEAVE_HEADERS = [
    "GPU Model",
    "GPU Count",
    "VRAM (GB)",
    "vCPUs",
    "System RAM (GB)",
    "Local Storage (TB)",
    "On-Demand Price / hr",
    "Spot Price / hr",
]
COREWEAVE_ROWS = [
    ["NVIDIA HGX B200", "8", "180", "128", "2,048", "61.44", "$68.80", "Contact sales"],
    ["NVIDIA HGX H100", "8", "80", "128", "2,048", "61.44", "$49.24", "$19.71"],
    ["NVIDIA HGX B300", "8", "288", "128", "3,072", "61.44", "Contact sales", "—"],
]


def _coreweave_page(order: list[int], cls: str, spaces: list[str]) -> str:
    return f"<html><body><div class='{cls}'>{_table(COREWEAVE_HEADERS, COREWEAVE_ROWS, order, cls, spaces)}</div></body></html>"


@PROPERTY_SETTINGS
@given(order=st.permutations(range(8)), cls=CLASS_NAMES, spaces=SPACES)
def test_coreweave_variations_parse_to_the_same_offers(order: list[int], cls: str, spaces: list[str]) -> None:
    assert _offers("coreweave", _coreweave_page(order, cls, spaces)) == _offers(
        "coreweave", _coreweave_page(list(range(8)), "pricing", [" "])
    )


# ----------------------------------------------------------------------------------- massedcompute
MASSED_HEADERS = ["Instance", "GPU", "GPUs", "VRAM", "vCPUs", "RAM", "Storage", "Price/hr"]
MASSED_ROWS = [
    ["gpu_1x_h100", "H100 80GB PCIe", "1", "80 GB", "20", "128 GB", "750 GB", "$2.73"],
    ["gpu_8x_h100_sxm5", "H100 SXM5", "8", "80 GB", "208", "2,048 GB", "7.68 TB", "$25.12"],
    ["gpu_1x_l40s", "L40S", "1", "48 GB", "16", "64 GB", "500 GB", "$0.88"],
]


def _massed_page(order: list[int], cls: str, spaces: list[str]) -> str:
    return f"<html><body><section class='{cls}'>{_table(MASSED_HEADERS, MASSED_ROWS, order, cls, spaces)}</section></body></html>"


@PROPERTY_SETTINGS
@given(order=st.permutations(range(8)), cls=CLASS_NAMES, spaces=SPACES)
def test_massedcompute_variations_parse_to_the_same_offers(
    order: list[int], cls: str, spaces: list[str]
) -> None:
    assert _offers("massedcompute", _massed_page(order, cls, spaces)) == _offers(
        "massedcompute", _massed_page(list(range(8)), "pricing", [" "])
    )


# ----------------------------------------------------------------------------------- nebius
NEBIUS_HEADERS = ["", "vCPU per GPU", "RAM per GPU, GB", "Preemptible, GPU-hour", "On-demand, GPU-hour"]
NEBIUS_ROWS = [
    ["NVIDIA HGX H100", "16", "200", "$1.25", "$2.95"],
    ["NVIDIA HGX B200", "20", "224", "$3.95", "$7.15"],
    ["NVIDIA L40S with Intel Sapphire Rapids", "8", "32", "—", "from $1.55"],
]
JSON_SPACES = st.lists(st.sampled_from([" ", "  ", "\u00a0", " \u00a0"]), min_size=8, max_size=8)


def _nebius_page(order: list[int], spaces: list[str], app_router: bool) -> str:
    rng = random.Random(len(spaces))

    def cell(text: str) -> str:
        return "".join(rng.choice(spaces) if ch == " " else ch for ch in text)

    rows = [[cell(NEBIUS_HEADERS[i]) for i in order]] + [[cell(row[i]) for i in order] for row in NEBIUS_ROWS]
    if not app_router:
        data = {"props": {"pageProps": {"table": {"rows": rows}}}, "page": "/prices"}
        return f'<html><body><script id="__NEXT_DATA__" type="application/json">{json.dumps(data)}</script></body></html>'
    escaped = [[("$" + c) if c.startswith("$") else c for c in row] for row in rows]
    payload = "4:" + json.dumps(["$", "$L5", None, {"table": {"rows": escaped}}]) + "\n"
    cut = len(payload) // 2
    pushes = "".join(
        f"<script>self.__next_f.push([1,{json.dumps(part)}])</script>"
        for part in (payload[:cut], payload[cut:])
    )
    return f"<html><body>{pushes}</body></html>"


@PROPERTY_SETTINGS
@given(order=st.permutations(range(5)), spaces=JSON_SPACES, app_router=st.booleans())
def test_nebius_variations_parse_to_the_same_offers(
    order: list[int], spaces: list[str], app_router: bool
) -> None:
    assert _offers("nebius", _nebius_page(order, spaces, app_router)) == _offers(
        "nebius", _nebius_page(list(range(5)), [" "], False)
    )


# ----------------------------------------------------------------------------------- crusoe
CRUSOE_CARDS = [
    ("NVIDIA H100", ["80GB", "HGX"], [("On-demand", "$3.90/GPU-hr"), ("Spot", "$1.60/GPU-hr")]),
    ("NVIDIA A100", ["80GB", "SXM"], [("On-demand", "$1.95/GPU-hr"), ("1-year reserved", "$1.40/GPU-hr")]),
    ("NVIDIA B200", ["180GB", "HGX"], [("On-demand", "Contact sales"), ("Spot", "Contact sales")]),
]


def _crusoe_page(cls: str, spaces: list[str], label_after: bool, heading: str) -> str:
    cards = []
    for i, (name, tags, cells) in enumerate(CRUSOE_CARDS):
        tag_html = "".join(f'<div class="{cls}_tag">{t}</div>' for t in tags)
        rows = []
        for j, (label, price) in enumerate(cells):
            label_el = f'<div class="{cls}_label">{_spaced(label, spaces, i + j)}</div>'
            price_el = f'<div class="{cls}_value">{_spaced(price, spaces, 3 * i + j)}</div>'
            rows.append(
                f'<div class="{cls}_row">'
                + (price_el + label_el if label_after else label_el + price_el)
                + "</div>"
            )
        cards.append(
            f'<div class="{cls}_card"><{heading} class="{cls}_title">{_spaced(name, spaces, i)}</{heading}>'
            f"{tag_html}{''.join(rows)}</div>"
        )
    return f'<html><body><div class="{cls}_grid">{"".join(cards)}</div></body></html>'


@PROPERTY_SETTINGS
@given(
    cls=CLASS_NAMES, spaces=SPACES, label_after=st.booleans(), heading=st.sampled_from(["h3", "h4", "div"])
)
def test_crusoe_variations_parse_to_the_same_offers(
    cls: str, spaces: list[str], label_after: bool, heading: str
) -> None:
    assert _offers("crusoe", _crusoe_page(cls, spaces, label_after, heading)) == _offers(
        "crusoe", _crusoe_page("pricing", [" "], False, "h3")
    )


# ----------------------------------------------------------------------------------- runpod
RUNPOD_ROWS = [
    (
        "H100 SXM",
        {"data-secure": "2.99", "data-community": "2.69", "data-secure-spot": "1.75"},
        "80 GB VRAM|125 GB RAM|20 vCPUs",
    ),
    ("L40S", {"data-secure": "0.86", "data-community": "0.79"}, "48 GB VRAM|94 GB RAM|16 vCPUs"),
]


def _runpod_page(cls: str, spaces: list[str], attr_order: int) -> str:
    rows = []
    for i, (name, attrs, tags) in enumerate(RUNPOD_ROWS):
        items = list(attrs.items())
        random.Random(attr_order + i).shuffle(items)
        attributes = " ".join(f'{k}="{v}"' for k, v in items)
        chips = "".join(f'<span class="{cls}-chip">{_spaced(t, spaces, i)}</span>' for t in tags.split("|"))
        rows.append(
            f'<div class="{cls}-row" {attributes}><a href="/deploy?gpu={name.replace(" ", "%20")}">'
            f'<span class="{cls}-name">{name}</span></a><div>{chips}</div></div>'
        )
    return f"<html><body><div class='{cls}-list'>{''.join(rows)}</div></body></html>"


@PROPERTY_SETTINGS
@given(cls=CLASS_NAMES, spaces=SPACES, attr_order=st.integers(0, 1000))
def test_runpod_variations_parse_to_the_same_offers(cls: str, spaces: list[str], attr_order: int) -> None:
    assert _offers("runpod", _runpod_page(cls, spaces, attr_order)) == _offers(
        "runpod", _runpod_page("gpu-pricing", [" "], 0)
    )
