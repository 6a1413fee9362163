"""Is this page the provider's? Asked before any reader, structured or fallback, takes a price from it.

A price read from another provider's page, or from a page about something else, is a wrong price
stored under the wrong name; so every page is confirmed first (``confirm``, called by
``registry.parse_page`` for both readers). Each provider declares its :class:`Identity` beside its
parser (``IDENTITY`` in its module):

- ``domains``: its web and API hosts ("coreweave.com"), matched as hosts in the page's text
  (links, canonical and OpenGraph tags, API URLs);
- ``brands``: its name as pages write it, as regular expressions ("CoreWeave", "Massed Compute");
- ``markers``: the structure only its pages or responses have, as regular expressions: class names
  of its site's design system, the field names of its API's response (Runpod's
  ``"securePrice"``, Azure's ``"armSkuName"``). Captured excerpts (a table cut out of a page, a
  flight-data fragment) often carry neither domain nor brand, but they carry these.

The rule, in order:

1. A page that names its own site (``<link rel="canonical">``, ``og:url``, ``og:site_name``,
   ``<base href>``) is the provider's exactly when that names the provider: a competitor's page
   that mentions the provider in passing is still the competitor's page.
2. Otherwise the page is the provider's when it carries some evidence of it (domain, brand or
   marker) and no other supported provider has more evidence on it.

A page that fails raises :class:`NotProvidersPage` (a ``StructureMissing``: exit 3, no offers,
the raw page stays in the store) saying "page does not look like <provider>'s pricing" and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gpuprice.scrapers.offer import StructureMissing

# Evidence is looked for in the first bytes of a page only: canonical tags, brand names, API field
# names and site class names all show up early, and a price file of hundreds of MB is not scanned.
SCAN_CHARS = 4_000_000
# Matches counted per pattern: enough to tell a page from a page that mentions a name in passing.
_MAX_COUNT = 50
# How evidence is labelled: a domain by its name, brands and markers by their kind.
BRAND = "brand name"
STRUCTURE = "page structure"


@dataclass(frozen=True)
class Identity:
    """What shows that a page or an API response is one provider's (see the module docstring)."""

    provider: str
    domains: tuple[str, ...]
    brands: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()
    # (label, pattern, a lower-case literal every match contains: a cheap test before the regex)
    _compiled: tuple[tuple[str, re.Pattern[str], str], ...] = field(
        init=False, repr=False, compare=False, default=()
    )

    def __post_init__(self) -> None:
        patterns: list[tuple[str, re.Pattern[str], str]] = []
        for domain in self.domains:
            host = re.escape(domain.lower())
            # "www.coreweave.com", "//lambda.ai/", "https:\u002F\u002Flambda.ai" (escaped in scripts)
            pattern = re.compile(rf"(?:(?<![\w-])|(?<=\\u002[Ff])){host}(?![\w-])", re.I)
            patterns.append((domain, pattern, domain.lower()))
        patterns.extend((BRAND, re.compile(brand), _required_literal(brand)) for brand in self.brands)
        patterns.extend((STRUCTURE, re.compile(marker), _required_literal(marker)) for marker in self.markers)
        object.__setattr__(self, "_compiled", tuple(patterns))

    def evidence(self, text: str, lowered: str | None = None) -> dict[str, int]:
        """How often this provider's domains (each by name), brand names and markers occur in ``text``
        (``lowered``: the same text in lower case, when the caller has it already)."""
        lowered = text.lower() if lowered is None else lowered
        found: dict[str, int] = {}
        for label, pattern, literal in self._compiled:
            if literal and literal not in lowered:
                continue  # cannot match: a pattern scan costs far more than this test
            count = 0
            for _ in pattern.finditer(text):
                count += 1
                if count >= _MAX_COUNT:
                    break
            if count:
                found[label] = found.get(label, 0) + count
        return found

    def owns_host(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        return any(host == d or host.endswith("." + d) for d in self.domains)

    def names_brand(self, text: str) -> bool:
        return any(re.search(brand, text) for brand in self.brands)


def _required_literal(pattern: str) -> str:
    """A lower-case word every match of ``pattern`` contains, or "" when none is certain.

    Lookarounds are dropped, escapes and optional characters end a word; a pattern with an
    alternation or a group has no certain word ("" means: always run the pattern).
    """
    body = re.sub(r"^\(\?[a-zA-Z]+\)", "", pattern)  # inline flags
    body = re.sub(r"\(\?<?[=!][^()]*\)", " ", body)  # lookarounds
    if "|" in body or "(" in body or "[" in body:
        return ""
    body = re.sub(r"\\\.", ".", body)  # an escaped dot is a dot
    body = re.sub(r"\\.", "\0", body)  # other escapes (\b, \s) separate literals
    body = re.sub(r".[?*]", "\0", body)  # an optional character is no part of a required literal
    literals = [part for part in re.split(r"[\0.^$+{}]", body.lower()) if len(part) >= 3]
    return max(literals, key=len) if literals else ""


class NotProvidersPage(StructureMissing):
    """The page is not the named provider's pricing: exit 3, no offers (the raw page is kept)."""

    def __init__(self, provider: str, why: str) -> None:
        super().__init__(provider, f"page does not look like {provider}'s pricing ({why})")
        self.args = (f"{provider}: page does not look like {provider}'s pricing: {why}",)
        self.why = why


# <link rel="canonical" href=...>, <meta property="og:url" content=...>, <base href=...>: the page's own URL.
_TAG = re.compile(r"<(?:link|meta|base)\b[^>]*>", re.I)
_ATTR = re.compile(r"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_HOST = re.compile(r"^(?:https?:)?//([^/:?#\s]+)", re.I)


def declared_site(text: str) -> tuple[list[str], list[str]]:
    """(hosts, site names) the page declares as its own: canonical link, og:url, base href, og:site_name."""
    hosts: list[str] = []
    names: list[str] = []
    for tag in _TAG.finditer(text):
        attrs = {
            m.group(1).lower(): m.group(2) or m.group(3) or m.group(4) or ""
            for m in _ATTR.finditer(tag.group(0))
        }
        name = tag.group(0)[1:5].lower()
        url = ""
        if (name == "link" and "canonical" in attrs.get("rel", "").lower().split()) or name == "base":
            url = attrs.get("href", "")
        elif name == "meta":
            prop = (attrs.get("property") or attrs.get("name") or "").lower()
            if prop == "og:url":
                url = attrs.get("content", "")
            elif prop == "og:site_name" and attrs.get("content", "").strip():
                names.append(attrs["content"].strip())
        host = _HOST.match(url.strip())
        if host:
            hosts.append(host.group(1))
    return hosts, names


def confirm(provider: str, text: str, identities: Mapping[str, Identity]) -> dict[str, int]:
    """The evidence that ``text`` is ``provider``'s page; raises :class:`NotProvidersPage` otherwise.

    ``identities`` holds every supported provider's :class:`Identity` (another provider's stronger
    evidence makes the page that provider's).
    """
    own = identities[provider]
    head = text[:SCAN_CHARS]
    hosts, site_names = declared_site(head)
    hosts, site_names = list(dict.fromkeys(hosts)), list(dict.fromkeys(site_names))
    if hosts or site_names:
        if any(own.owns_host(h) for h in hosts) or any(own.names_brand(n) for n in site_names):
            return {f"declared site {', '.join([*hosts, *site_names])}": 1}
        raise NotProvidersPage(provider, f"the page declares itself as {', '.join([*hosts, *site_names])}")
    lowered = head.lower()
    found = own.evidence(head, lowered)
    if not found:
        raise NotProvidersPage(provider, f"no {provider} domain, brand or page structure on it")
    score = sum(found.values())
    rivals = sorted(
        ((sum(e.values()), name) for name, e in _others(provider, identities, head, lowered)),
        reverse=True,
    )
    if rivals and rivals[0][0] > score:
        count, name = rivals[0]
        raise NotProvidersPage(provider, f"it names {name} {count} times and {provider} {score}")
    return found


def _others(
    provider: str, identities: Mapping[str, Identity], text: str, lowered: str
) -> Iterable[tuple[str, dict[str, int]]]:
    for name, identity in identities.items():
        if name != provider:
            found = identity.evidence(text, lowered)
            if found:
                yield name, found
