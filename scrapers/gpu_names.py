"""Map any provider's raw GPU text to a catalog slug, or to the literal ``"unknown"``.

The same card is written many ways ("NVIDIA H100 80GB HBM3", "H100 SXM5 80GB",
"gpu_8x_h100_sxm5", "On-demand 8x NVIDIA H100 SXM"), and different cards look alike
("GB200" vs "B200", "GH200" vs "H200", "L40" vs "L40S", "H100 NVL" vs "H100 SXM").
Matching is case-, whitespace- and punctuation-insensitive; vendor and marketing words
("NVIDIA", "AMD", "Tesla", "GeForce", "Instinct", "On-demand 8x") carry no information and
are ignored because detection looks only for model tokens and form-factor hints.

Rules, in order of precedence:

1. Exactly one GPU model must be recognised (H100, A100, L40S, ...). None, or two different
   models in one name, gives ``"unknown"``: an unmappable name is reported, never guessed.
   A bare number ("4090") counts only with RTX/GeForce or nothing but filler words around it;
   a MIG slice ("A100 MIG 1g.10gb") is not a whole GPU and is unknown.
2. An explicit form-factor word decides the part: SXM/SXM4/SXM5/SXM6, HGX, DGX -> SXM;
   PCIe -> PCIe; NVL -> NVL; NVLink -> SXM unless the name also says PCIe or NVL (then it is a
   bridge between cards). Contradictions (SXM and PCIe) give "unknown". For H100, "HBM3" means SXM (the PCIe card is HBM2e, the NVL card
   has 94 GB) and "HBM2e" means PCIe. H200 has no PCIe part: "H200 PCIe" is the NVL card.
   B200/B300 sold in NVL72/NVL36 racks or with "Grace" are Grace-Blackwell (GB200).
3. Memory (from the text, else the ``vram_gb`` hint) separates same-named parts:
   A100 40 GB vs 80 GB, H100 94 GB = NVL, V100 16 GB vs 32 GB, and bare workstation names:
   "RTX 6000" 48 GB = RTX 6000 Ada, 96 GB = RTX PRO 6000, 24 GB = Turing Quadro (unknown).
   Workstation generations are told apart by their words: "A6000" (Ampere), "6000 Ada",
   "PRO 6000"/"Blackwell"; the same applies to the 5000/4500/4000/2000 cards.
4. A bare name with neither hint follows the provider's documented convention
   (reference: provider-pages.md, each provider's SKU naming):
   - massedcompute: ``gpu_1x_h100`` is the H100 80GB PCIe card and the cheap H200 is the NVL
     card (its SXM5 parts are sold 8x only and always named "SXM5").
   - lambda: A100 without a memory size is the 40 GB card (``gpu_1x_a100``,
     ``gpu_1x_a100_sxm4`` and ``gpu_8x_a100`` are 40 GB; 80 GB plans always say "80GB").
   - lambda, coreweave, nebius, crusoe, runpod: a bare "H100"/"H200" card is the HGX (SXM) part.
   Provider names are matched loosely ("Lambda Labs" is lambda, "Massed Compute" massedcompute).
5. Otherwise the provider-independent most common rental part: H100 -> h100-sxm,
   H200 -> h200-sxm, A100 (80 GB or unstated) -> a100-80gb-sxm (the 40 GB card is always
   labelled 40GB by the tracked providers), V100 -> v100 (the 32 GB SXM2 card).

A10G (AWS's variant of the A10 in EC2 G5 instances, with a lower tensor peak) is its own slug
``a10g``, never the A10. H800 and A800 (the export variants with NVLink capped at 400 GB/s)
are their own slugs, as is H20 (96 GB; its 141 GB HBM3e edition is unknown). GB300 (and a B300
in an NVL72 rack or with Grace) is not in the catalog: unknown. GeForce cards are told apart by number and suffix
("3090" vs "3090 Ti", "4080" vs "4080 Super", "4070 Ti Super"); a suffix the catalog does not
hold ("4090 D", "4070 Ti") and, for the cards sold in two sizes, a stated memory that is not the
catalogued one (an 8 GB RTX 3060 or 4060 Ti, a 12 GB RTX 3080 is ``rtx-3080-12gb``) is unknown.
AMD MI250X / MI250 / MI210 are their own slugs (the MI250s per GCD, as ROCm lists them). Tesla
P100 is the PCIe 16 GB card (SXM2 and 12 GB cards unknown). "A2" is the 16 GB Ampere card, never a
Google Cloud a2-* machine type. Quadro RTX 6000 (24 GB) and other parts the catalog does not
hold map to ``"unknown"``.

Over ~400 lines: the name rules above and the tables of model tokens and form-factor words they
read are one mapping; split apart, a reader could not check a rule against the words it uses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

UNKNOWN = "unknown"


@dataclass(frozen=True)
class _Hints:
    """What the raw text (and the caller) tell about one GPU name."""

    text: str  # normalised: lower case, alphanumeric tokens separated by single spaces
    memory_gb: float | None
    provider: str | None

    def has(self, pattern: str) -> bool:
        return re.search(pattern, self.text) is not None

    @property
    def sxm(self) -> bool:
        # SXM/HGX/DGX name the socketed part outright; "NVLink" does too (CoreWeave's
        # "A100 80GB NVLINK") unless the name also says PCIe or NVL (cards joined by bridges).
        if self.has(r"\b(?:sxm\d*|hgx|dgx)\b"):
            return True
        return self.has(r"\bnvlink\b") and not (self.pcie or self.nvl)

    @property
    def pcie(self) -> bool:
        return self.has(r"\b(?:pcie\d*|pci e)\b")

    @property
    def nvl(self) -> bool:
        # "NVL" alone is the bridged PCIe part; NVL72/NVL36/NVL4 are Grace-Blackwell systems.
        return self.has(r"\bnvl\b")

    @property
    def rack(self) -> bool:
        return self.has(r"\b(?:nvl(?:72|36|4)|grace)\b")


def _normalise(raw: str) -> str:
    s = raw.lower()
    s = re.sub(r"[^a-z0-9.]+", " ", s)
    s = re.sub(r"(?<![0-9])\.|\.(?![0-9])", " ", s)  # keep decimal points only ("94.5gb")
    # Split glued words: "8xh100" -> "8x h100", "h100sxm5" -> "h100 sxm5", "80gb" -> "80 gb",
    # "rtx6000ada" -> "rtx 6000 ada", "rtxpro6000" -> "rtx pro 6000", "3090ti" -> "3090 ti".
    # Splits need a word-initial number, so model names like "a10g" or "mi300x" stay whole.
    s = re.sub(r"\b(\d+)x(?=[a-z])", r"\1x ", s)
    s = re.sub(r"(?<=[a-z0-9])(?=(?:sxm|pcie|nvl|hbm)\d*[a-z]?\b)", " ", s)
    s = re.sub(r"\b(\d+(?:\.\d+)?)(?=(?:gb|gib|g)\b)", r"\1 ", s)
    s = re.sub(r"\brtx(?=[a-z0-9])", "rtx ", s)
    s = re.sub(r"\bpro(?=\d)", "pro ", s)
    s = re.sub(r"(?<=\d)(?=(?:ada|blackwell)\b)", " ", s)
    s = re.sub(r"\b(\d{4})(ti|d|super)(super)?\b", lambda m: " ".join(g for g in m.groups() if g), s)
    return " ".join(s.split())


def _memory_from_text(text: str) -> float | None:
    """Memory per GPU named in the text: the first "N GB" that is not system RAM or disk."""
    for match in re.finditer(
        r"\b(\d+(?:\.\d+)?) (?:gb|gib|g)\b(?! (?:ram|ddr\d*|system|ssd|nvme|disk|storage))", text
    ):
        return float(match.group(1))
    return None


def _is_mig_slice(raw: str) -> bool:
    # "A100 MIG 1g.10gb" is a slice of a GPU; pricing it as the whole card would mislead.
    return re.search(r"\bmig\b|\b\d+g\.\d+gb\b", raw.lower()) is not None


# Words that carry no model information; a bare number ("4090") counts as a model name only
# when nothing but these surrounds it, so "Quantum Widget 4090" is not an RTX 4090.
_FILLER = frozenset(
    [
        "nvidia",
        "amd",
        "tesla",
        "geforce",
        "instinct",
        "rtx",
        "gpu",
        "gpus",
        "on",
        "demand",
        "ondemand",
        "x",
        "gb",
        "gib",
        "g",
        "card",
    ]
)


def _alone_with_filler(text: str, number: str) -> bool:
    rest = [t for t in text.split() if t != number and t not in _FILLER]
    return all(re.fullmatch(r"\d+x|\d+(?:\.\d+)?", t) for t in rest)


def _a100(h: _Hints) -> str:
    if h.memory_gb is not None:
        if h.memory_gb <= 60:
            return "a100-40gb"
    elif h.provider == "lambda":
        return "a100-40gb"
    if h.sxm and h.pcie:
        return UNKNOWN
    if h.pcie:
        return "a100-80gb-pcie"
    return "a100-80gb-sxm"


def _h100(h: _Hints) -> str:
    if sum([h.sxm, h.pcie, h.nvl]) > 1:
        return UNKNOWN
    if h.nvl:
        return "h100-nvl"
    if h.pcie:
        return "h100-pcie"
    if h.sxm:
        return "h100-sxm"
    if h.memory_gb is not None and 90 <= h.memory_gb <= 100:
        return "h100-nvl"
    if h.has(r"\bhbm3\b"):
        return "h100-sxm"
    if h.has(r"\bhbm2e\b"):
        return "h100-pcie"
    if h.provider == "massedcompute":
        return "h100-pcie"
    return "h100-sxm"


def _h200(h: _Hints) -> str:
    if (h.nvl or h.pcie) and h.sxm:
        return UNKNOWN
    if h.nvl or h.pcie:
        return "h200-nvl"
    if h.sxm:
        return "h200-sxm"
    if h.provider == "massedcompute":
        return "h200-nvl"
    return "h200-sxm"


def _b200(h: _Hints) -> str:
    return "gb200" if h.rack else "b200"


def _b300(h: _Hints) -> str:
    # GB300 is not in the catalog: a rack-scale B300 must not be priced as an HGX B300.
    return UNKNOWN if h.rack else "b300"


def _h20(h: _Hints) -> str:
    # The H20 was first sold with 96 GB HBM3; a 141 GB HBM3e edition followed (not catalogued).
    return UNKNOWN if h.memory_gb is not None and h.memory_gb > 100 else "h20"


def _p100(h: _Hints) -> str:
    # The catalog holds the PCIe 16 GB card; the faster SXM2 board and the 12 GB card differ.
    if h.sxm or h.has(r"\bnvlink\b"):
        return UNKNOWN
    if h.memory_gb is not None and abs(h.memory_gb - 16) > 1:
        return UNKNOWN
    return "p100"


@dataclass(frozen=True)
class _Workstation:
    """One workstation model number across generations ("A6000", "6000 Ada", "PRO 6000")."""

    ampere: str | None  # "RTX A6000"
    ada: str | None  # "RTX 6000 Ada"
    blackwell: str | None  # "RTX PRO 6000 Blackwell"
    by_memory: dict[float, str]  # bare "RTX 6000": memory tells the generation
    blackwell_max_q: str | None = None  # the 300 W Max-Q edition ("RTX PRO 6000 MaxQ")


# Bare "RTX N000" also names the Turing Quadro RTX cards (RTX 6000 24 GB, RTX 5000 16 GB,
# RTX 4000 8 GB), which the catalog does not hold: without a matching memory size the name
# stays unknown. Ampere cards are always written with the "A" ("RTX A6000").
_WORKSTATION: dict[str, _Workstation] = {
    "6000": _Workstation(
        "a6000", "rtx-6000-ada", "rtx-pro-6000", {48: "rtx-6000-ada", 96: "rtx-pro-6000"}, "rtx-pro-6000-maxq"
    ),
    "5000": _Workstation("a5000", "rtx-5000-ada", None, {32: "rtx-5000-ada"}),
    "4500": _Workstation("a4500", None, None, {}),
    "4000": _Workstation("a4000", "rtx-4000-ada", None, {20: "rtx-4000-ada"}),
    "2000": _Workstation(None, "rtx-2000-ada", None, {16: "rtx-2000-ada"}),
}
_WS_NUMBER = "(" + "|".join(_WORKSTATION) + ")"
_WS_PATTERNS = (
    rf"\ba{_WS_NUMBER}\b",
    rf"\b(?:rtx|quadro) (?:pro )?{_WS_NUMBER}\b",
    rf"\b{_WS_NUMBER} (?:ada|blackwell)\b",
    rf"\bpro {_WS_NUMBER}\b",
)


def _workstation_numbers(text: str) -> set[str]:
    return {m.group(1) for pattern in _WS_PATTERNS for m in re.finditer(pattern, text)}


def _workstation(h: _Hints) -> str:
    numbers = _workstation_numbers(h.text)
    if len(numbers) != 1:
        return UNKNOWN
    number = numbers.pop()
    card = _WORKSTATION[number]
    if h.has(r"\bsff\b"):
        return UNKNOWN  # the small-form-factor cards run at lower clocks and power
    if h.has(r"\bpro\b") or h.has(r"\bblackwell\b"):
        if h.has(r"\bmax ?q\b"):  # the 300 W edition sustains lower clocks than the 600 W ones
            return card.blackwell_max_q or UNKNOWN
        return card.blackwell or UNKNOWN
    if h.has(r"\bada\b"):
        return card.ada or UNKNOWN  # also the common misnomer "RTX A6000 Ada"
    if h.has(rf"\ba{number}\b"):
        return card.ampere or UNKNOWN
    if h.memory_gb is not None:
        for memory, slug in card.by_memory.items():
            if abs(h.memory_gb - memory) <= 2:
                return slug
    return UNKNOWN


def _v100(h: _Hints) -> str:
    if h.memory_gb is not None and h.memory_gb <= 20:
        return "v100-16gb"
    return "v100"


def _mi300(h: _Hints) -> str:
    # Bare "MI300": the 192 GB part is the MI300X; the MI300A APU (128 GB) is not in the catalog.
    return "mi300x" if h.memory_gb is not None and 180 <= h.memory_gb <= 200 else UNKNOWN


def _fixed(slug: str) -> Callable[[_Hints], str]:
    return lambda _h: slug


@dataclass(frozen=True)
class _GeForce:
    """One GeForce card: its slug and, for cards sold in two sizes, the memory that tells them apart."""

    slug: str
    # memory GB -> slug when a stated memory picks the card; empty: any stated memory is this card
    by_memory: dict[float, str] | None = None
    # the newer cards are never the laptop part of the same name (a different, slower chip)
    no_laptop: bool = True
    # sold in two sizes under one name, the smaller one more common: a bare name is unknown
    needs_memory: bool = False


# number -> suffix ("" / "ti" / "super" / "ti super") -> card. A suffix not listed ("4090 D",
# "4070 Ti", "3090 Super") is another card: unknown. The RTX 4090/5090/3090 keep their rules as
# they were (any stated memory, laptop names not told apart).
_GEFORCE: dict[str, dict[str, _GeForce]] = {
    "4090": {"": _GeForce("rtx-4090", no_laptop=False)},
    "5090": {"": _GeForce("rtx-5090", no_laptop=False)},
    "3090": {"": _GeForce("rtx-3090", no_laptop=False), "ti": _GeForce("rtx-3090-ti")},
    "3060": {"": _GeForce("rtx-3060", {12: "rtx-3060"})},  # an 8 GB RTX 3060 is a cut-down card
    "3080": {
        "": _GeForce("rtx-3080", {10: "rtx-3080", 12: "rtx-3080-12gb"}),
        "ti": _GeForce("rtx-3080-ti"),
    },
    "4080": {"": _GeForce("rtx-4080"), "super": _GeForce("rtx-4080-super")},
    "4070": {"ti super": _GeForce("rtx-4070-ti-super")},
    "4060": {
        "ti": _GeForce("rtx-4060-ti-16gb", {16: "rtx-4060-ti-16gb"}, needs_memory=True)
    },  # 8 GB: unknown
    "2080": {"ti": _GeForce("rtx-2080-ti", {11: "rtx-2080-ti"})},  # modded 22 GB boards are unknown
}
_GEFORCE_SUFFIX = r"((?: (?:ti|super|d))*)"


def _geforce(number: str) -> tuple[Callable[[str], bool], Callable[[_Hints], str]]:
    def detect(text: str) -> bool:
        if not re.search(rf"\b{number}\b", text):
            return False
        if re.search(rf"\b(?:rtx|geforce) {number}\b", text):
            return True
        return _alone_with_filler(" ".join(t for t in text.split() if t not in {"ti", "super", "d"}), number)

    def resolve(h: _Hints) -> str:
        match = re.search(rf"\b{number}{_GEFORCE_SUFFIX}\b", h.text)
        suffix = match.group(1).strip() if match else ""
        card = _GEFORCE[number].get(suffix)
        if card is None:
            return UNKNOWN  # "Ti", "Super" and "D" variants are different cards with different specs
        if card.no_laptop and h.has(r"\b(?:laptop|mobile|notebook|max q)\b"):
            return UNKNOWN
        if h.memory_gb is None:
            return UNKNOWN if card.needs_memory else card.slug
        if card.by_memory is None:
            return card.slug
        for memory, slug in card.by_memory.items():
            if abs(h.memory_gb - memory) <= 1:
                return slug
        return UNKNOWN

    return detect, resolve


def _pattern(regex: str) -> Callable[[str], bool]:
    compiled = re.compile(regex)
    return lambda text: compiled.search(text) is not None


# family -> (detector over the normalised text, resolver). Look-arounds keep GB200/GH200 from
# matching B200/H200, L40S/L4 from matching L40, and A10G/A100 from matching A10; a letter glued
# to a model number is another part (A100X is an 80 GB converged card, B200A a different SKU),
# so it stays unknown unless the catalog names it (suffixes such as SXM/NVL are split off first).
_FAMILIES: dict[str, tuple[Callable[[str], bool], Callable[[_Hints], str]]] = {
    "gb200": (_pattern(r"\bgb200|\bgrace blackwell\b"), _fixed("gb200")),
    "gh200": (_pattern(r"\bgh200|\bgrace hopper\b"), _fixed("gh200")),
    "b300": (_pattern(r"\bb300(?![0-9a-z])"), _b300),
    "b200": (_pattern(r"\bb200(?![0-9a-z])"), _b200),
    "h200": (_pattern(r"\bh200(?![0-9a-z])"), _h200),
    "h100": (_pattern(r"\bh100(?![0-9a-z])"), _h100),
    "a100": (_pattern(r"\ba100(?![0-9a-z])"), _a100),
    "h800": (_pattern(r"\bh800(?![0-9a-z])"), _fixed("h800")),
    "h20": (_pattern(r"\bh20(?![0-9a-z])"), _h20),
    # "A800 40GB Active" is a PCIe workstation card, not the 80 GB export A100: it stays unknown.
    "a800": (_pattern(r"\ba800(?![0-9a-z])(?!.*(?:\b40\s*gb|\bactive\b))"), _fixed("a800")),
    "l40s": (_pattern(r"\bl40s\b"), _fixed("l40s")),
    "l40": (_pattern(r"\bl40\b"), _fixed("l40")),
    "l4": (_pattern(r"\bl4\b"), _fixed("l4")),
    "l20": (_pattern(r"\bl20\b"), _fixed("l20")),
    "a10": (_pattern(r"\ba10\b"), _fixed("a10")),
    "a10g": (_pattern(r"\ba10g\b"), _fixed("a10g")),
    "a40": (_pattern(r"\ba40\b"), _fixed("a40")),
    "a30": (_pattern(r"\ba30\b"), _fixed("a30")),
    # Google Cloud's a2-highgpu/-ultragpu/-megagpu machine types carry A100s, not A2 cards.
    "a2": (_pattern(r"\ba2\b(?! (?:highgpu|ultragpu|megagpu)\b)"), _fixed("a2")),
    "workstation": (lambda text: bool(_workstation_numbers(text)), _workstation),
    **{f"rtx{number}": _geforce(number) for number in _GEFORCE},
    "titan-rtx": (_pattern(r"\btitan rtx\b"), _fixed("titan-rtx")),
    "v100": (_pattern(r"\bv100\b"), _v100),
    "t4": (_pattern(r"\bt4\b"), _fixed("t4")),
    "p100": (_pattern(r"\bp100\b"), _p100),
    "p40": (_pattern(r"\bp40\b"), _fixed("p40")),
    "mi300x": (_pattern(r"\bmi300x\b"), _fixed("mi300x")),
    "mi300": (_pattern(r"\bmi300\b"), _mi300),
    "mi325x": (_pattern(r"\bmi325x\b"), _fixed("mi325x")),
    "mi355x": (_pattern(r"\bmi355x\b"), _fixed("mi355x")),
    "mi250x": (_pattern(r"\bmi250x\b"), _fixed("mi250x")),
    "mi250": (_pattern(r"\bmi250\b"), _fixed("mi250")),
    "mi210": (_pattern(r"\bmi210\b"), _fixed("mi210")),
}

# A superchip's name may also name its GPU ("GH200 Grace Hopper (H100)", "GB200 ... B200"):
# that is one GPU, not two.
_ABSORBS: dict[str, frozenset[str]] = {
    "gb200": frozenset({"b200"}),
    "gh200": frozenset({"h100", "h200"}),
}


def _families_in(text: str) -> set[str]:
    found = {family for family, (detect, _) in _FAMILIES.items() if detect(text)}
    for family, absorbed in _ABSORBS.items():
        if family in found:
            found -= absorbed
    return found


def _provider_key(provider: str | None) -> str | None:
    """'Lambda Labs' -> 'lambda', 'Massed Compute' -> 'massedcompute'; others lower-cased."""
    if not provider:
        return None
    key = re.sub(r"[^a-z0-9]", "", provider.lower())
    for canonical in ("lambda", "massedcompute", "coreweave", "nebius", "crusoe", "runpod"):
        if key.startswith(canonical):
            return canonical
    return key


def normalize_gpu(raw: str, *, provider: str | None = None, vram_gb: float | None = None) -> str:
    """The catalog slug for a raw GPU name, or ``"unknown"`` (see the module docstring).

    ``provider`` selects that provider's naming convention for bare names; ``vram_gb`` (memory
    per GPU from another column of the page) separates same-named parts when the text does not.
    """
    raw = raw or ""
    text = _normalise(raw)
    if not text or _is_mig_slice(raw):
        return UNKNOWN
    memory = _memory_from_text(text)
    if memory is None and vram_gb is not None and math.isfinite(vram_gb) and vram_gb > 0:
        memory = float(vram_gb)  # a NaN or zero cell from a page is no hint at all
    hints = _Hints(
        text=text,
        memory_gb=memory,
        provider=_provider_key(provider),
    )
    families = _families_in(text)
    if len(families) != 1:
        return UNKNOWN  # nothing recognised, or two different models named at once
    _, resolve = _FAMILIES[families.pop()]
    return resolve(hints)
