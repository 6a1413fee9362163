"""robots.txt rules (RFC 9309) for the polite fetcher.

Python's ``urllib.robotparser`` applies the first matching rule and knows neither ``*`` nor
``$`` in paths, so a site that writes ``Allow: /pricing`` after ``Disallow: /`` (common on
marketing sites) would be read wrongly. This module follows the RFC instead:

- the groups naming our product token (case-insensitive) apply, merged; otherwise the ``*``
  groups, merged; otherwise everything is allowed;
- the longest matching rule wins, and ``Allow`` wins a tie;
- ``*`` matches any run of characters and a trailing ``$`` anchors the end;
- ``/robots.txt`` itself is always allowed;
- only the first 512 KiB are read (the RFC asks crawlers to read at least 500 KiB).

``Crawl-delay`` is not in the RFC but widely used; it is kept so the fetcher can slow down.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

ROBOTS_MAX_BYTES = 512 * 1024

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE_RE = re.compile(r"%([0-9A-Fa-f]{2})")


def _normalize_path(path: str) -> str:
    """Put a URL path or a rule path in one percent-encoded form so they compare as octets.

    Escapes of unreserved characters are decoded (``%7E`` -> ``~``), other escapes get upper-case
    hex, and non-ASCII characters are UTF-8 percent-encoded.
    """

    def _unescape(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else "%" + match.group(1).upper()

    decoded = _ESCAPE_RE.sub(_unescape, path)
    out: list[str] = []
    for char in decoded:
        if ord(char) < 128:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


@dataclass(frozen=True)
class Rule:
    allow: bool
    path: str  # normalized; may contain '*' and a trailing '$'

    def matches(self, target: str) -> bool:
        return _pattern(self.path).match(target) is not None

    @property
    def specificity(self) -> int:
        """Rule length in octets, as the RFC measures "most specific"."""
        return len(self.path.encode("utf-8"))


@functools.lru_cache(maxsize=4096)
def _pattern(path: str) -> re.Pattern[str]:
    anchored = path.endswith("$")
    body = path[:-1] if anchored else path
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    return re.compile(regex + ("$" if anchored else ""), re.DOTALL)


@dataclass
class _Group:
    agents: list[str] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None


@dataclass(frozen=True)
class RobotsPolicy:
    """The rules that apply to one user agent on one host."""

    rules: tuple[Rule, ...] = ()
    crawl_delay: float | None = None
    # Why the policy is what it is ("parsed", "robots.txt missing (HTTP 404)", ...), for messages.
    origin: str = "parsed"
    disallow_all: bool = False

    @classmethod
    def allow_all(cls, origin: str) -> RobotsPolicy:
        return cls(origin=origin)

    @classmethod
    def deny_all(cls, origin: str) -> RobotsPolicy:
        return cls(origin=origin, disallow_all=True)

    def allows(self, url: str) -> bool:
        parts = urlsplit(url)
        path = parts.path or "/"
        if path == "/robots.txt":
            return True
        if self.disallow_all:
            return False
        target = _normalize_path(path + (f"?{parts.query}" if parts.query else ""))
        best: Rule | None = None
        for rule in self.rules:
            if not rule.matches(target):
                continue
            if (
                best is None
                or rule.specificity > best.specificity
                or (rule.specificity == best.specificity and rule.allow and not best.allow)
            ):
                best = rule
        return best is None or best.allow


def product_token(user_agent: str) -> str:
    """The product token robots.txt groups name: 'gpuprice/0.1 (+https://...)' -> 'gpuprice'."""
    token = user_agent.strip().split("/", 1)[0].split(" ", 1)[0]
    return token.lower()


def _parse_groups(text: str) -> list[_Group]:
    groups: list[_Group] = []
    current: _Group | None = None
    in_rules = False  # a user-agent line after rules starts a new group
    for raw_line in text.splitlines():
        line = raw_line.split("#", 1)[0].strip()
        if ":" not in line:
            continue
        key, value = (part.strip() for part in line.split(":", 1))
        key = key.lower().replace("_", "-")
        if key in ("user-agent", "useragent"):
            if current is None or in_rules:
                current = _Group()
                groups.append(current)
                in_rules = False
            current.agents.append(value.lower())
        elif key in ("allow", "disallow"):
            if current is None:
                continue  # rules before any user-agent line belong to no group
            in_rules = True
            if value:  # an empty Disallow allows everything: it is no rule at all
                current.rules.append(Rule(allow=key == "allow", path=_normalize_path(value)))
        elif key == "crawl-delay" and current is not None:
            in_rules = True
            try:
                delay = float(value)
            except ValueError:
                continue
            if delay >= 0:
                current.crawl_delay = delay
    return groups


def _agent_matches(line_agent: str, token: str) -> bool:
    # "User-agent: gpuprice/0.1" also names us: compare the product token only.
    return line_agent.split("/", 1)[0].strip() == token


def parse_robots(content: bytes, user_agent: str) -> RobotsPolicy:
    """The policy a robots.txt body sets for ``user_agent``."""
    text = content[:ROBOTS_MAX_BYTES].decode("utf-8", errors="replace").lstrip("\ufeff")
    groups = _parse_groups(text)
    token = product_token(user_agent)
    chosen = [group for group in groups if any(_agent_matches(a, token) for a in group.agents)]
    if not chosen:
        chosen = [group for group in groups if "*" in group.agents]
    rules = tuple(rule for group in chosen for rule in group.rules)
    delays = [group.crawl_delay for group in chosen if group.crawl_delay is not None]
    return RobotsPolicy(rules=rules, crawl_delay=max(delays) if delays else None)
