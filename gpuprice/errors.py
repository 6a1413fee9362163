"""Errors a user can act on: the CLI prints them as one line, never a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class BadInput(ValueError):
    """Bad user input: exit code 2, one line naming the bad value and the valid choices."""

    exit_code = 2


class StructureError(RuntimeError):
    """A page without a recognisable price structure: exit code 3."""

    exit_code = 3


def unknown_choice(kind: str, value: str, choices: Iterable[str], *, limit: int = 12) -> BadInput:
    """A BadInput for an unknown name, listing close matches (or the valid choices)."""
    options = sorted(set(choices))
    close = difflib.get_close_matches(value, options, n=5, cutoff=0.5)
    if close:
        hint = "did you mean " + ", ".join(close) + "?"
    else:
        shown = ", ".join(options[:limit]) + (", ..." if len(options) > limit else "")
        hint = f"valid: {shown}"
    return BadInput(f"unknown {kind} {value!r}; {hint}")


# The largest config, batch or workloads file read (a model config is a few KB; a batch of
# thousands of rows well under a MB): a larger one is refused before it is read.
MAX_INPUT_BYTES = 10_000_000


def read_text_input(path, kind: str, *, encoding: str = "utf-8", max_bytes: int = MAX_INPUT_BYTES) -> str:
    """A user-named text file's content; a missing, unreadable, oversized or not regular file
    (a device such as /dev/zero, a named pipe, a folder) is one BadInput line, at once.

    ``kind`` names the file in the message ("config", "batch", "workloads").
    """
    import os
    import stat

    try:
        info = os.stat(path)  # never opens it: a named pipe would block here, /dev/zero never end
    except FileNotFoundError:
        raise BadInput(f"{kind} file not found: {path}") from None
    except OSError as exc:
        raise BadInput(f"cannot read {kind} file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        what = (
            "a folder"
            if stat.S_ISDIR(info.st_mode)
            else "a named pipe"
            if stat.S_ISFIFO(info.st_mode)
            else "not a regular file"
        )
        raise BadInput(f"{kind} file {path} is {what}; give a regular file")
    if info.st_size > max_bytes:
        raise BadInput(f"{kind} file {path} is {info.st_size:,} bytes; at most {max_bytes:,} are read")
    try:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # swapped for a pipe since the stat: no wait
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise BadInput(f"{kind} file {path} is not a regular file; give a regular file")
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise BadInput(f"{kind} file not found: {path}") from None
    except OSError as exc:
        raise BadInput(f"cannot read {kind} file {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew since the stat
        raise BadInput(
            f"{kind} file {path} is larger than {max_bytes:,} bytes; at most {max_bytes:,} are read"
        )
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise BadInput(f"cannot read {kind} file {path}: {exc}") from None
