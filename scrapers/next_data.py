"""Data a Next.js page carries in scripts: ``__NEXT_DATA__`` JSON and App Router flight data.

The Pages Router puts the page props in ``<script id="__NEXT_DATA__">`` as one JSON document.
The App Router streams React Server Component (RSC) rows instead, as JSON string arguments of
``self.__next_f.push([1, "..."])`` calls spread over many scripts; a row (``<id>:<json>``) may be
split across chunks, so the chunks are joined in page order before the rows are read. RSC writes
a literal string starting with ``$`` as ``$$`` (``"$$2.95"``); other ``$``-strings are references.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_PUSH = "__next_f.push("
_ROW = re.compile(r"^([0-9a-fA-F]+):(.*)$")


def next_f_strings(code: str) -> list[str]:
    """The string arguments of every ``self.__next_f.push([...])`` call in one script's code."""
    decoder = json.JSONDecoder()
    strings: list[str] = []
    start = code.find(_PUSH)
    while start != -1:
        bracket = code.find("[", start)
        if bracket == -1:
            break
        try:
            payload, end = decoder.raw_decode(code, bracket)
        except (json.JSONDecodeError, ValueError):
            end = start + 1
        else:
            if isinstance(payload, list):
                strings.extend(item for item in payload if isinstance(item, str))
        start = code.find(_PUSH, end)
    return strings


def flight_payload(scripts: list[str]) -> str:
    """The App Router flight data of a page: every push chunk of ``scripts`` joined in order."""
    return "".join(chunk for code in scripts if _PUSH in code for chunk in next_f_strings(code))


def flight_rows(payload: str) -> Iterator[Any]:
    """Each JSON row of a flight payload (``5:[...]``), decoded, with ``$$`` escapes undone.

    Rows of other kinds (``1:I[...]`` module imports, ``2:HL[...]`` hints, text chunks) and rows
    that are not valid JSON are skipped.
    """
    for line in payload.splitlines():
        match = _ROW.match(line)
        if not match or match.group(2)[:1] not in ("[", "{", '"'):
            continue
        try:
            yield unescape_rsc(json.loads(match.group(2)))
        except json.JSONDecodeError:
            continue


def unescape_rsc(node: Any) -> Any:
    """``"$$2.95"`` -> ``"$2.95"`` throughout a decoded RSC row (references stay as they are)."""
    if isinstance(node, str):
        return node[1:] if node.startswith("$$") else node
    if isinstance(node, list):
        return [unescape_rsc(item) for item in node]
    if isinstance(node, dict):
        return {key: unescape_rsc(value) for key, value in node.items()}
    return node


def is_rsc_reference(text: str) -> bool:
    """RSC references and markers (``$L3``, ``$undefined``, ``$@1``, ``$``), not page text."""
    return text == "$" or bool(re.match(r"^\$(?:[A-Za-z@#]|[0-9a-f]+$)", text))


def embedded_json_values(text: str) -> Iterator[Any]:
    """The JSON objects and arrays written in ``text``, escaped or not, outermost first.

    For a fragment of flight data cut out of a script string (``{\\"type\\":\\"table\\",...}``):
    the escapes are undone first, then every position that starts a decodable object or array is
    decoded and the scan resumes after it, so values cut at the fragment's ends are skipped and
    whole values inside them still found. ``$$`` escapes are undone in what is yielded.
    """
    if '\\"' in text:
        text = unescape_string_body(text)
    decoder = json.JSONDecoder()
    index = 0
    while True:
        starts = [i for i in (text.find("{", index), text.find("[", index)) if i != -1]
        if not starts:
            return
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, ValueError):
            index = start + 1
            continue
        if isinstance(value, (dict, list)) and value:
            yield unescape_rsc(value)
        index = end


# Where a saved fragment of push strings runs from one push call into the next.
_PUSH_BOUNDARY = re.compile(r'"\]\)\s*</script>\s*<script[^>]*>\s*(?:self\.)?__next_f\.push\(\[\s*1\s*,\s*"')
_PUSH_END = re.compile(r'"\]\)\s*</script>.*\Z', re.S)


def fragment_flight_payload(text: str) -> str:
    """The flight data of a saved fragment of push strings: text cut from inside one push call's
    string (escaped, with no opening ``<script>``), possibly running on through later push calls
    (``"])</script><script>self.__next_f.push([1,"``). Each piece's escapes are undone and the
    pieces joined in order, as :func:`flight_payload` joins a whole page's chunks."""
    pieces = _PUSH_BOUNDARY.split(text)
    pieces[-1] = _PUSH_END.sub("", pieces[-1])
    return "".join(unescape_string_body(piece) for piece in pieces)


def unescape_string_body(text: str) -> str:
    """The text a JSON string body stands for (``\\"`` -> ``"``), also when cut mid-escape."""
    body = text.strip()
    for trim in range(0, 6):  # a fragment may end inside an escape sequence ("\\u00")
        candidate = body[: len(body) - trim] if trim else body
        try:
            return json.loads(f'"{candidate}"')
        except json.JSONDecodeError:
            continue
    return body.replace('\\"', '"').replace("\\\\", "\\")
