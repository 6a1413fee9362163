"""gpuprice parse PROVIDER FILE: a saved pricing page -> JSON offers (contract schema)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from gpuprice.commands import metavars
from gpuprice.commands.output import terminal_safe, write_json
from gpuprice.commands.validation import parse_date, parse_provider
from gpuprice.errors import BadInput, StructureError
from gpuprice.scrapers.gunzip import GZIP_MAGIC, MAX_PAGE_BYTES, GunzipError, gunzip_capped
from gpuprice.scrapers.offer import PROVIDERS


def read_page(path: Path) -> bytes:
    """The saved page's bytes, gunzipped when it is gzip; a bad or oversized file is bad input."""
    if not path.is_file():
        raise BadInput(f"no such file {str(path)!r}")
    data = path.read_bytes()
    if data[:2] == GZIP_MAGIC:
        try:
            data = gunzip_capped(data, MAX_PAGE_BYTES)
        except GunzipError as exc:
            if exc.reason == "too_large":
                raise BadInput(f"{path}: page larger than {MAX_PAGE_BYTES:,} bytes") from None
            raise BadInput(f"{path}: not a valid gzip file ({exc})") from None
    if len(data) > MAX_PAGE_BYTES:
        raise BadInput(f"{path}: page larger than {MAX_PAGE_BYTES:,} bytes")
    return data


def parse(
    provider: Annotated[
        str,
        typer.Argument(
            help=f"The provider whose page it is: {metavars.choice(PROVIDERS)}.", metavar="PROVIDER"
        ),
    ],
    file: Annotated[
        Path, typer.Argument(help="A saved pricing page (.html/.json, optionally .gz).", metavar="FILE")
    ],
    observed_on: Annotated[
        str | None, typer.Option("--observed-on", help="Date the page was seen.", metavar=metavars.DATE)
    ] = None,
    report: Annotated[bool, typer.Option("--report", help="Print the parse report on stderr.")] = False,
) -> None:
    """Parse a saved pricing page and print its offers as JSON."""
    from gpuprice.scrapers.offer import StructureMissing
    from gpuprice.scrapers.registry import parse_page

    name = parse_provider(provider)
    day = parse_date(observed_on, "--observed-on") if observed_on else None
    body = read_page(file)
    try:
        result = parse_page(name, body, observed_on=day)
    except StructureMissing as exc:
        raise StructureError(str(exc)) from None
    write_json([o.contract_dict() for o in result.offers])
    r = result.report
    summary = f"{name}: {len(result.offers)} offers, {r.unpriced_rows} unpriced, {len(r.rejected)} rejected"
    if r.parse_strategy == "fallback":
        summary += ", read by the fallback extractor"
    if r.unknown_gpus:
        summary += f", unknown GPUs: {', '.join(r.unknown_gpus)}"
    print(terminal_safe(summary), file=sys.stderr)  # names come from the page
    if report:
        print(terminal_safe(r.model_dump_json(indent=1)), file=sys.stderr)
