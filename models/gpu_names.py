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
2. An explicit form-factor word decides the part: SXM/SXM4/SXM5/SXM6, HGX, DGX, NVLink -> SXM;
   PCIe -> PCIe; NVL -> NVL. For H100, "HBM3" means SXM (the PCIe card is HBM2e, the NVL card
   has 94 GB) and "HBM2e" means PCIe. H200 has no PCIe part: "H200 PCIe" is the NVL card.
   B200/B300 sold in NVL72/NVL36 racks or with "Grace" are Grace-Blackwell (GB200).
3. Memory (from the text, else the ``vram_gb`` hint) separates same-named parts:
   A100 40 GB vs 80 GB, H100 94 GB = NVL, RTX 6000 48 GB = Ada / 96 GB = PRO (Blackwell),
   V100 16 GB vs 32 GB.
4. A bare name with neither hint follows the provider's documented convention
   (reference: provider-pages.md, each provider's SKU naming):
   - massedcompute: ``gpu_1x_h100`` is the H100 80GB PCIe card and the cheap H200 is the NVL
     card (its SXM5 parts are sold 8x only and always named "SXM5").
   - lambda: A100 without a memory size is the 40 GB card (``gpu_1x_a100``,
     ``gpu_1x_a100_sxm4`` and ``gpu_8x_a100`` are 40 GB; 80 GB plans always say "80GB").
   - lambda, coreweave, nebius, crusoe, runpod: a bare "H100"/"H200" card is the HGX (SXM) part.
5. Otherwise the provider-independent most common rental part: H100 -> h100-sxm,
   H200 -> h200-sxm, A100 (80 GB or unstated) -> a100-80gb-sxm (the 40 GB card is always
   labelled 40GB by the tracked providers), V100 -> v100 (the 32 GB SXM2 card).

A10G (AWS's variant of the A10 with different clocks) is not the A10 and is not in the
catalog, so it maps to ``"unknown"``; so do GB300, H20/H800/A800, Quadro RTX 6000 (24 GB) and
other parts the catalog does not hold.
"""

from __future__ import annotations

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
        return self.has(r"\b(?:sxm\d*|hgx|dgx|nvlink)\b")

    @property
    def pcie(self) -> bool:
        return self.has(r"\b(?:pcie\d*|pci e)\b")

    @property
    def nvl(self) -> bool:
        # "NVL" alone is the dual-card PCIe part; NVL72/NVL36 are Grace-Blackwell racks.
        return self.has(r"\bnvl\b")

    @property
    def rack(self) -> bool:
        return self.has(r"\b(?:nvl(?:72|36|4|2)|grace)\b")


def _normalise(raw: str) -> str:
    s = raw.lower()
    s = re.sub(r"[^a-z0-9.]+", " ", s)
    s = re.sub(r"(?<![0-9])\.|\.(?![0-9])", " ", s)  # keep decimal points only ("94.5gb")
    # Split glued counts and suffixes: "8xh100" -> "8x h100", "h100sxm5" -> "h100 sxm5".
    s = re.sub(r"\b(\d+)x(?=[a-z])", r"\1x ", s)
    s = re.sub(r"(?<=[a-z0-9])(?=(?:sxm|pcie|nvl|hbm)\d*[a-z]?\b)", " ", s)
    s = re.sub(r"(?<=\d)(?=gi?b\b)", " ", s)
    return " ".join(s.split())


def _memory_from_text(text: str) -> float | None:
    found = re.findall(r"\b(\d+(?:\.\d+)?) gi?b\b", text)
    return float(found[0]) if found else None


def _a100(h: _Hints) -> str:
    if h.memory_gb is not None:
        if h.memory_gb <= 60:
            return "a100-40gb"
    elif h.provider == "lambda" and not h.has(r"\b80\b"):
        return "a100-40gb"
    if h.sxm and h.pcie:
        return UNKNOWN
    if h.pcie:
        return "a100-80gb-pcie"
    return "a100-80gb-sxm"


def _h100(h: _Hints) -> str:
    explicit = [h.sxm, h.pcie, h.nvl]
    if sum(explicit) > 1:
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


def _rtx_6000(h: _Hints) -> str:
    if h.has(r"\bpro\b") or h.has(r"\bblackwell\b"):
        return "rtx-pro-6000"
    if h.has(r"\bada\b"):
        return "rtx-6000-ada"
    if h.has(r"\ba6000\b") or h.has(r"\ba 6000\b"):
        return "a6000"
    # Bare "RTX 6000": only memory tells the Ada (48 GB) and PRO (96 GB) cards from the
    # Turing Quadro RTX 6000 (24 GB), which the catalog does not hold.
    if h.memory_gb is not None:
        if 44 <= h.memory_gb <= 50:
            return "rtx-6000-ada"
        if 90 <= h.memory_gb <= 100:
            return "rtx-pro-6000"
    return UNKNOWN


def _v100(h: _Hints) -> str:
    if h.memory_gb is not None and h.memory_gb <= 20:
        return "v100-16gb"
    return "v100"


def _fixed(slug: str) -> Callable[[_Hints], str]:
    return lambda _h: slug


def _consumer(slug: str) -> Callable[[_Hints], str]:
    # "Ti"/"D" variants are different cards with different specs.
    number = slug.rsplit("-", 1)[1]
    return lambda h: UNKNOWN if h.has(rf"{number} ?(?:ti|d)\b") else slug


# (family, detector pattern over the normalised text, resolver). Look-arounds keep
# GB200/GH200 from matching B200/H200, L40S/L4 from matching L40, and A10G/A100 from A10.
_FAMILIES: tuple[tuple[str, str, Callable[[_Hints], str]], ...] = (
    ("gb200", r"\bgb200|\bgrace blackwell\b", _fixed("gb200")),
    ("gh200", r"\bgh200|\bgrace hopper\b", _fixed("gh200")),
    ("b300", r"\bb300(?![0-9])", _b300),
    ("b200", r"\bb200(?![0-9])", _b200),
    ("h200", r"\bh200(?![0-9])", _h200),
    ("h100", r"\bh100(?![0-9])", _h100),
    ("a100", r"\ba100(?![0-9])", _a100),
    ("l40s", r"\bl40s\b", _fixed("l40s")),
    ("l40", r"\bl40\b", _fixed("l40")),
    ("l4", r"\bl4\b", _fixed("l4")),
    ("a10", r"\ba10\b", _fixed("a10")),
    ("a40", r"\ba40\b", _fixed("a40")),
    ("rtx6000", r"\ba ?6000\b|\brtx ?(?:pro ?)?6000\b|\b6000 ?(?:ada|blackwell)\b|\bpro 6000\b", _rtx_6000),
    ("rtx4090", r"(?<![0-9])4090(?![0-9])", _consumer("rtx-4090")),
    ("rtx5090", r"(?<![0-9])5090(?![0-9])", _consumer("rtx-5090")),
    ("rtx3090", r"(?<![0-9])3090(?![0-9])", _consumer("rtx-3090")),
    ("v100", r"\bv100\b", _v100),
    ("t4", r"\bt4\b", _fixed("t4")),
    ("mi300x", r"\bmi300x\b", _fixed("mi300x")),
    ("mi325x", r"\bmi325x\b", _fixed("mi325x")),
    ("mi355x", r"\bmi355x\b", _fixed("mi355x")),
)


def normalize_gpu(raw: str, *, provider: str | None = None, vram_gb: float | None = None) -> str:
    """The catalog slug for a raw GPU name, or ``"unknown"`` (see the module docstring).

    ``provider`` selects that provider's naming convention for bare names; ``vram_gb`` (memory
    per GPU from another column of the page) separates same-named parts when the text does not.
    """
    text = _normalise(raw or "")
    if not text:
        return UNKNOWN
    memory = _memory_from_text(text)
    hints = _Hints(
        text=text,
        memory_gb=memory if memory is not None else vram_gb,
        provider=provider.strip().lower() if provider else None,
    )
    matches = [(family, resolve) for family, pattern, resolve in _FAMILIES if re.search(pattern, text)]
    if len(matches) != 1:
        return UNKNOWN
    return matches[0][1](hints)
