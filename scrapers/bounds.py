"""Bounds on the work one page may cost: how deeply its HTML nests, and how long it is parsed.

A page is capped in bytes when it is fetched and inflated (``scrapers/gunzip.py``); these bound
what fits under that cap. 20,000 nested ``<div>`` elements (100 KB) cost one HTML reader 70 s and
100,000 several minutes: the nesting is measured first, with one linear scan of the tags, and
a page nested deeper than any real page is refused before a tree is built. Whatever else is slow
is stopped by a time limit on the whole parse. Either fails that provider with one line (a
:class:`~scrapers.offer.StructureMissing`); the other providers land.
"""

from __future__ import annotations

import contextlib
import re
import signal
import threading
from collections.abc import Iterator
from typing import Any

from gpuprice.scrapers.offer import StructureMissing

# Real pricing pages nest 10-40 elements deep (the deepest page of the sample archive and the
# captured real pages: 14); a browser's own tree builders stop at 512.
MAX_HTML_DEPTH = 400
# Real pricing pages have a few thousand elements (the largest captured: 1,238); a parsed element
# costs an HTML reader ~1-2 KB, so this bounds the tree to a few hundred MB.
MAX_HTML_ELEMENTS = 250_000
# A page parses in well under a second; a minute means the page is built to stall the reader.
PARSE_SECONDS_LIMIT = 60.0

_NOT_MARKUP = re.compile(
    r"<!--.*?(?:-->|$)|<(script|style|template|textarea|title)\b[^>]*>.*?(?:</\1\s*>|$)", re.I | re.S
)
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)(?:[^>\"']|\"[^\"]*\"|'[^']*')*?(/?)>")
# Elements that never hold others, and those whose end tag HTML lets a page leave out (a browser
# closes them itself): neither deepens the tree as written.
_VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
        "keygen",
        "command",
        "basefont",
        "frame",
    ]
)
_END_OPTIONAL = frozenset(
    [
        "p",
        "li",
        "dt",
        "dd",
        "tr",
        "td",
        "th",
        "thead",
        "tbody",
        "tfoot",
        "option",
        "optgroup",
        "colgroup",
        "caption",
        "rb",
        "rt",
        "rtc",
        "rp",
        "html",
        "head",
        "body",
    ]
)


def html_shape(text: str) -> tuple[int, int]:
    """(how deeply the elements of an HTML text nest, how many tags it has), scripts, styles
    and comments aside."""
    depth = deepest = 0
    tags = _TAG.findall(_NOT_MARKUP.sub("", text))
    for close, name, self_closing in tags:
        name = name.lower()
        if name in _VOID or name in _END_OPTIONAL:
            continue
        if close:
            depth = max(0, depth - 1)
        elif not self_closing:
            depth += 1
            deepest = max(deepest, depth)
    return deepest, len(tags)


def check_html_depth(
    text: str, provider: str, *, limit: int = MAX_HTML_DEPTH, max_elements: int = MAX_HTML_ELEMENTS
) -> None:
    """StructureMissing for ``provider`` when ``text`` is HTML nested deeper than ``limit`` or
    with more than ``max_elements`` tags."""
    if text.lstrip()[:1] in ("{", "["):  # JSON: bounded by its own reader (gpuprice.bounded_load)
        return
    depth, tags = html_shape(text)
    if depth > limit:
        raise StructureMissing(
            provider, f"HTML nested {depth:,} elements deep, more than the {limit} any pricing page needs"
        )
    if tags > max_elements:
        raise StructureMissing(
            provider, f"HTML of {tags:,} tags, more than the {max_elements:,} any pricing page needs"
        )


class ParseTimeout(StructureMissing):
    """A page whose parse ran past :data:`PARSE_SECONDS_LIMIT`."""


class _Expired(BaseException):
    """Raised by the timer inside the parse: a BaseException, so no reader's ``except Exception``
    (nor the fallback's retry on StructureMissing) takes it for a page without prices."""


@contextlib.contextmanager
def parse_time_limit(provider: str, seconds: float | None = None) -> Iterator[None]:
    """Stop the block with ParseTimeout after ``seconds`` (default :data:`PARSE_SECONDS_LIMIT`).

    A SIGALRM, so only in the main thread (where the CLI and each Dagster step process parse)
    and only when no other timer runs; otherwise the depth check is the bound."""
    limit = PARSE_SECONDS_LIMIT if seconds is None else seconds
    if (
        threading.current_thread() is not threading.main_thread()
        or not hasattr(signal, "setitimer")
        or signal.getitimer(signal.ITIMER_REAL)[0] > 0
    ):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    except _Expired:
        raise ParseTimeout(provider, f"the page took more than {limit:g} s to parse") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
