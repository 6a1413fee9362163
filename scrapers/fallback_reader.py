"""Lines -> offers, for the fallback extractor (``scrapers/fallback.py``, whose docstring gives
the rules): GPU contexts, prices with their units, tier labels, cards and table rows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from gpuprice.scrapers.fallback_lines import CELL_SEP, HEADING_MARK
from gpuprice.scrapers.offer import Tier
from gpuprice.scrapers.offer_sink import OfferSink
from gpuprice.scrapers.parsing import clean_text, parse_price
from gpuprice.scrapers.quantities import term_months

NO_GPU_REASON = "fallback: price without a GPU name"

_MAX_LINE = 400

# A GPU model as pages write it: vendor, HGX/DGX, the model, then qualifiers (memory, form factor).
_MODEL = (
    r"(?:GB[23]00|GH200|[BH][123]\d0|A100|A10G?|A30|A40|A16|L40S?|L4|V100|T4|P100|"
    r"RTX\s?(?:PRO\s?)?\d{4}(?:\s?Ada)?|RTX\s?A\d{4}|A[456]000(?:\s?Ada)?|MI\d{3}X?|Gaudi\s?\d)"
)
_QUALIFIER = (
    r"(?:\s*(?:\d{2,3}\s?GB(?:\s?(?:HBM\w*|GDDR\w*|VRAM))?|SXM\d?|PCIe(?:\s?Gen\s?\d)?|NVL(?:ink)?|"
    r"HGX|DGX|Tensor\s?Core|Ada|Blackwell|Hopper|Grace(?:\s?(?:Hopper|Blackwell))?|Superchip|"
    r"Server\s?Edition|Workstation\s?Edition|Max-Q|OAM))*"
)
GPU_NAME = re.compile(
    rf"(?<![\w-])(?:(?:NVIDIA|AMD|Intel)\s+)?(?:(?:HGX|DGX)\s+)?{_MODEL}(?![\w-]){_QUALIFIER}",
    re.I,
)
_COUNT_BEFORE = re.compile(r"(?<![\w.])(\d{1,3})\s*[x\u00d7]\s*(?=[A-Za-z])", re.I)
_COUNT_AFTER = re.compile(r"[x\u00d7]\s*(\d{1,3})(?![\w.])|(?<![\w.])(\d{1,3})\s*(?:gpus?|cards?)\b", re.I)
_VRAM = re.compile(r"(\d{2,3}(?:\.\d+)?)\s?GB", re.I)
_TAG_LINE = re.compile(
    r"^(?:\d{2,3}\s?GB(?:\s?(?:HBM\w*|GDDR\w*|VRAM))?|HGX|DGX|SXM\d?|PCIe(?:\s?Gen\s?\d)?|NVL|NVLink)$", re.I
)
# "$2.49", "US$ 2.49", "from $0.99", "USD 2.49", each with an optional unit after it.
_PRICE = re.compile(
    r"(?P<text>(?:from\s+)?(?:US\s?\$|\$|USD\s?)\s?\d[\d,]*(?:\.\d+)?)"
    r"(?P<unit>\s*(?:/|per\s+)\s*(?:gpu[\s/-]*(?:hr|hour|h)\b|gpu\b|(?:hr|hour|h)\b|[a-z][\w-]*))?",
    re.I,
)
_PER_GPU_UNIT = re.compile(r"gpu", re.I)
_HOURLY_UNIT = re.compile(r"^\s*(?:/|per\s+)\s*(?:hr|hour|h)\s*$", re.I)
_UNPRICED = re.compile(r"contact\s*(?:us|sales)|talk\s+to\s+(?:us|sales)|coming\s+soon|sold\s+out", re.I)
_SPOT = re.compile(r"\b(spot|preemptible|interruptible)\b", re.I)
_RESERVED = re.compile(r"\b(reserved|reservation|commit(?:ted|ment)?)\b", re.I)
_ON_DEMAND = re.compile(r"\bon[\s-]?demand\b|\bpay[\s-]as[\s-]you[\s-]go\b", re.I)
_PER_GPU_HEADER = re.compile(r"gpu\W*(?:hr|hour|h)\b|per\s+gpu|/\s*gpu", re.I)
# A provider's own instance name ("gpu_8x_h100_sxm5"): stable across days, so it is the sku.
_SKU_TOKEN = re.compile(r"\bgpu_\d{1,2}x_[a-z0-9_]+\b", re.I)
_VRAM_HEADER = re.compile(r"vram|gpu\s*mem", re.I)
_COUNT_HEADER = re.compile(r"^(?:#|number of|no\.? of)?\s*gpus?(?:\s*(?:count|qty))?$", re.I)


@dataclass
class _Context:
    """The GPU the prices after its name belong to."""

    gpu_raw: str
    count: int | None
    vram_gb: float | None
    sku: str | None = None  # a provider SKU on the line ("gpu_8x_h100"), kept as the offer's sku
    priced: int = 0  # prices taken so far (only the first may be unlabelled)
    from_row: bool = False  # named in a table row: it does not carry over to the next row


@dataclass
class _Price:
    text: str
    unit: str
    label: str | None


@dataclass
class _Item:
    """A line of a card: a lone price, an unpriced cell ("Contact sales") or a tier label."""

    kind: str  # "price", "unpriced" or "label"
    text: str
    price: _Price | None = None


class LineReader:
    """Lines in page order -> offers in ``sink``.

    Table rows (several cells) are read on their own, labelled by the header row above them.
    Card lines (a lone price, a lone label) are buffered per GPU context and paired when the
    context ends: labels follow their prices when the card ends with a label, else each price
    takes the label just above it.
    """

    def __init__(self, sink: OfferSink, *, unlabeled_tier: Tier | None, instance_priced: bool) -> None:
        self.sink = sink
        self.unlabeled_tier = unlabeled_tier
        self.instance_priced = instance_priced
        self.context: _Context | None = None
        self.header: list[str] | None = None
        self.items: list[_Item] = []

    def read(self, line: str) -> None:
        heading = line.startswith(HEADING_MARK)
        line = line.lstrip(HEADING_MARK).strip()
        if len(line) > _MAX_LINE or not line:
            return
        cells = line.split(CELL_SEP) if CELL_SEP in line else [line]
        gpu = self._gpu_in(line)
        if gpu is not None:
            self.finish()
            gpu.from_row = len(cells) > 1
            previous = self.context
            if gpu.count is None and previous is not None and previous.priced == 0 and not gpu.from_row:
                gpu.count = previous.count  # "gpu_2x_h100" then "H100 80GB PCIe": one instance, two names
                gpu.sku = gpu.sku or previous.sku
            self.context = gpu
        elif heading or (len(cells) > 1 and self.context is not None and self.context.from_row):
            self.finish()
            self.context = None  # a new card or row that names no GPU: earlier names do not carry over
        prices = list(self._prices(cells))
        if not prices:
            self._read_text_line(line, cells, has_gpu=gpu is not None)
            return
        self.sink.report.rows_seen += 1
        if self.context is None:
            for _ in prices:
                self.sink.reject(line, NO_GPU_REASON)
            return
        if len(cells) == 1 and len(prices) == 1 and prices[0].label is None:
            self.items.append(_Item("price", line, prices[0]))
            return
        self.finish()
        count = self._count_in(line) or self.context.count
        if len(cells) > 1:
            count = self._count_from_header(cells) or count
            if self.context.vram_gb is None:
                self.context.vram_gb = self._vram_from_header(cells)
        for price in prices:
            self._emit(price, price.label, self.context, count, line)

    def _read_text_line(self, line: str, cells: list[str], *, has_gpu: bool) -> None:
        if has_gpu:
            return
        if len(cells) > 1:
            self.finish()
            self.header = cells
            return
        if self.context is None:
            return
        if len(line) <= 40 and _label_kind(line):
            self.items.append(_Item("label", line))
        elif _UNPRICED.search(line) and len(line) <= 40:
            self.items.append(_Item("unpriced", line))
        elif not self.items and _TAG_LINE.match(line) and line.lower() not in self.context.gpu_raw.lower():
            self.context.gpu_raw = f"{self.context.gpu_raw} {line}"
            if self.context.vram_gb is None and (vram := _VRAM.search(line)):
                self.context.vram_gb = float(vram.group(1))

    def finish(self) -> None:
        """Pair the buffered card lines of the current context and emit their offers."""
        items, self.items = self.items, []
        if not items or self.context is None:
            return
        values = [i for i in items if i.kind != "label"]
        labels_below = items[-1].kind == "label" and items[0].kind != "label"
        label_of: dict[int, str] = {}
        for index, item in enumerate(items):
            if item.kind != "label":
                continue
            neighbour = index - 1 if labels_below else index + 1
            if 0 <= neighbour < len(items) and items[neighbour].kind != "label":
                label_of[id(items[neighbour])] = item.text
        for item in values:
            if item.kind == "price" and item.price is not None:
                self._emit(item.price, label_of.get(id(item)), self.context, self.context.count, item.text)
            else:
                self.context.priced += 1  # "Contact sales" holds its tier's place in the card

    def _prices(self, cells: list[str]) -> Iterator[_Price]:
        for index, cell in enumerate(cells):
            header_label = None
            if self.header and len(self.header) == len(cells):
                header_label = self.header[index]
            for match in _PRICE.finditer(cell):
                unit = match.group("unit") or ""
                if unit and not (_PER_GPU_UNIT.search(unit) or _HOURLY_UNIT.match(unit)):
                    continue  # another unit: storage per GiB-month, CPU per vCPU-hour
                if header_label and not unit and _PER_GPU_HEADER.search(header_label):
                    unit = "/GPU-hr"
                elif header_label and not unit and re.search(r"\b(hr|hour|hourly)\b", header_label, re.I):
                    unit = "/hr"
                own_label = _label_text(cell[: match.start()]) or _label_text(cell[match.end() :])
                label = own_label or (header_label if header_label and _label_kind(header_label) else None)
                yield _Price(text=match.group("text"), unit=unit, label=label)

    def _gpu_in(self, line: str) -> _Context | None:
        # SKUs such as gpu_8x_h100 name a GPU too; the fullest name on the line wins
        # ("RTX A6000" over the "a6000" of "gpu_1x_a6000").
        names = [clean_text(m.group(0)) for m in GPU_NAME.finditer(line.replace("_", " "))]
        if not names:
            return None
        name = max(reversed(names), key=len)  # on a tie the later one (the cell, not the SKU)
        vram = _VRAM.search(name)
        sku = _SKU_TOKEN.search(line)
        return _Context(
            gpu_raw=name,
            count=self._count_in(line),
            vram_gb=float(vram.group(1)) if vram else None,
            sku=sku.group(0) if sku else None,
        )

    @staticmethod
    def _count_in(line: str) -> int | None:
        for rx in (_COUNT_BEFORE, _COUNT_AFTER):
            match = rx.search(line.replace("_", " "))
            if match:
                value = int(next(g for g in match.groups() if g))
                if 1 <= value <= 64:
                    return value
        return None

    def _count_from_header(self, cells: list[str]) -> int | None:
        if not self.header or len(self.header) != len(cells):
            return None
        for index, header in enumerate(self.header):
            if _COUNT_HEADER.match(header.strip()) and re.fullmatch(r"\d{1,3}", cells[index].strip()):
                return int(cells[index])
        return None

    def _vram_from_header(self, cells: list[str]) -> float | None:
        if not self.header or len(self.header) != len(cells):
            return None
        for index, header in enumerate(self.header):
            if not _VRAM_HEADER.search(header):
                continue
            if vram := _VRAM.search(cells[index]):
                return float(vram.group(1))
            if re.search(r"\bGB\b", header, re.I) and re.fullmatch(
                r"\d{1,4}(?:\.\d+)?", cells[index].strip()
            ):
                return float(cells[index])  # "VRAM (GB)" | "141"
        return None

    def _emit(self, price: _Price, label: str | None, context: _Context, count: int | None, raw: str) -> None:
        sink = self.sink
        first = context.priced == 0
        context.priced += 1
        tier: Tier | None = _label_kind(label) if label else None
        if tier is None:
            if not first or self.unlabeled_tier is None:
                sink.reject(raw, "fallback: price without an on-demand/spot/reserved label")
                return
            tier = self.unlabeled_tier
        months = term_months(label) if tier == "reserved" and label else None
        if tier == "reserved" and months is None:
            sink.reject(raw, "fallback: reserved price without a term")
            return
        try:
            parsed = parse_price(price.text)
        except ValueError as exc:
            sink.reject(raw, f"fallback: {exc}")
            return
        if parsed is None:
            return
        value: Decimal = parsed.value
        per_gpu_unit = bool(_PER_GPU_UNIT.search(price.unit))
        per_instance = not per_gpu_unit and (
            self.instance_priced or (bool(price.unit) and count is not None and count > 1)
        )
        if per_instance and count is None:
            sink.reject(raw, "fallback: per-instance price without a GPU count")
            return
        gpu_count = count or 1
        sku = context.sku or (context.gpu_raw if gpu_count == 1 else f"{gpu_count}x {context.gpu_raw}")
        sink.add(
            raw,
            reason_prefix="fallback: ",
            gpu=sink.gpu_slug(context.gpu_raw, context.vram_gb),
            gpu_raw=context.gpu_raw,
            gpu_count=gpu_count,
            vram_gb=context.vram_gb,
            tier=tier,
            commitment_months=months,
            usd_per_gpu_hour=value / gpu_count if per_instance else value,
            usd_per_instance_hour=value if per_instance else None,
            sku=sku,
            price_basis="from" if parsed.is_from else "list",  # "from $x": a floor, never a list price
        )


def _label_kind(text: str | None) -> Tier | None:
    if not text:
        return None
    if _SPOT.search(text):
        return "spot"
    if _RESERVED.search(text) or (term_months(text) is not None and len(text) <= 40):
        return "reserved"
    if _ON_DEMAND.search(text):
        return "on_demand"
    return None


def _label_text(text: str) -> str | None:
    """A tier label written in the price's own cell ("Spot: $1.60"), if any."""
    text = text.strip(" :-\u2013")
    return text if text and len(text) <= 40 and _label_kind(text) else None
