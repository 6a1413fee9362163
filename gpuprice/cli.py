"""The ``gpuprice`` command line (see CONTRACT.md). Each command is a module-level function in
``gpuprice/commands/<command>.py``, registered on ``app`` by ``gpuprice.commands.register_all``.

Errors: BadInput -> exit 2, StructureError -> exit 3, both as one line on stderr.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, cast

import typer
import typer.core

from gpuprice.disk import full_disk_message, is_no_space, no_space_message
from gpuprice.errors import BadInput, StructureError
from gpuprice.scrapers.redact import redact_credentials

app = typer.Typer(
    name="gpuprice",
    help="GPU price warehouse for planning LLM training runs.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts like "[adamw]" are literal, not Rich markup
)


def _argument_type(self: typer.core.TyperArgument, ctx: object) -> str | None:
    # Typer prints a positional argument as "NAME <str>": our arguments are parsed as text by the
    # commands, so the Python type says nothing; the metavar (PROVIDER, FILE, QUERY) says it all.
    return None


typer.core.TyperArgument.display_type_rich = _argument_type  # type: ignore[method-assign,assignment]


def version_text() -> str:
    try:
        return f"gpuprice {metadata.version('gpuprice')}"
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "gpuprice (not installed)"


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True)
    ] = False,
) -> None:
    """GPU price warehouse for planning LLM training runs."""
    if version:
        typer.echo(version_text())
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:  # plain `gpuprice`: the usual help, and success
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


_registered = False


def _register() -> None:
    """Add the commands to the app once (main() may be called many times in one process)."""
    global _registered
    if _registered:
        return
    from gpuprice.commands import register_all

    register_all(app)
    _registered = True


def _click_exceptions() -> tuple[type[Exception], ...]:
    """Click's exception classes: Typer may bundle its own copy of click."""
    import click

    classes: list[type[Exception]] = [click.exceptions.ClickException]
    try:
        from typer._click import exceptions as bundled  # typer >= 0.2x vendors click

        classes.append(bundled.ClickException)
    except ImportError:
        pass
    return tuple(classes)


def _select_warehouse() -> None:
    """The warehouse engine the environment names (GPUPRICE_WAREHOUSE), for every command."""
    from gpuprice.settings import Settings
    from gpuprice.warehouse import connection, lake

    lake.select(*Settings.warehouse_engine())
    connection.set_lock_timeout(Settings.lock_timeout())  # GPUPRICE_LOCK_TIMEOUT
    lake.set_snapshot_retention(Settings.lake_snapshot_days())  # GPUPRICE_LAKE_SNAPSHOT_DAYS


def main(argv: list[str] | None = None) -> int:
    _register()
    try:
        _select_warehouse()
        code = app(args=argv, prog_name="gpuprice", standalone_mode=False)
        if isinstance(code, int) and code != 0:  # typer.Exit(n) returns n when not standalone
            raise SystemExit(code)
    except (BadInput, StructureError) as exc:
        print(f"gpuprice: {redact_credentials(str(exc))}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    except typer.Exit as exc:  # raised by commands that set their own exit code
        raise SystemExit(exc.exit_code) from None
    except (typer.Abort, KeyboardInterrupt):
        print("gpuprice: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except BrokenPipeError:  # `gpuprice sql ... | head`: the reader left, nothing to say
        raise SystemExit(0) from None
    except OSError as exc:  # a read-only or full disk, a folder without permission: one line
        where = f" {exc.filename}" if exc.filename else ""
        if is_no_space(exc):
            print(f"gpuprice: {no_space_message(exc.filename or _home())}", file=sys.stderr)
        else:
            print(
                f"gpuprice: cannot write{where}: {exc.strerror or exc} (is GPUPRICE_HOME writable, with free space?)",
                file=sys.stderr,
            )
        raise SystemExit(2) from None
    except (OverflowError, RecursionError) as exc:  # a number or a nesting no input should have
        print(f"gpuprice: input out of range: {_first_line(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    except Exception as exc:  # usage errors (unknown option, bad type, missing argument)
        if isinstance(exc, _click_exceptions()):
            message = str(cast(Any, exc).format_message())  # a click.ClickException (either copy)
            print(f"gpuprice: {' '.join(message.split())}", file=sys.stderr)
            raise SystemExit(2) from None
        full = full_disk_message(exc, Path(_home()))  # DuckDB's, SQLite's or Dagster's (its storage)
        if full:
            print(f"gpuprice: {full}", file=sys.stderr)
            raise SystemExit(2) from None
        hint = _STORAGE_ERRORS.get(type(exc).__name__) if type(exc).__module__.startswith("_duckdb") else None
        if hint:  # a file DuckDB cannot open or write, or memory it cannot have: one line
            print(f"gpuprice: {_first_line(exc)} ({hint})", file=sys.stderr)
            raise SystemExit(2) from None
        raise
    return 0


# DuckDB's errors about the files and memory under it, not about gpuprice's logic, with a hint.
_STORAGE_ERRORS = {
    "IOException": "is GPUPRICE_HOME writable, with free space, and GPUPRICE_WAREHOUSE's catalog reachable?",
    "PermissionException": "is GPUPRICE_HOME writable?",
    "OutOfMemoryException": "not enough memory for this input; make it smaller",
}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _home() -> str:
    from gpuprice.settings import Settings

    try:
        return str(Settings.from_env().home)
    except BadInput:
        return "GPUPRICE_HOME"


def console_main() -> None:
    """The ``gpuprice`` console script."""
    main()


if __name__ == "__main__":
    console_main()
