"""Running gpuprice in process (for module-scoped fixtures, where capsys is not available)."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass


@dataclass
class RunResult:
    code: int
    out: str
    err: str

    def provider_lines(self) -> dict[str, str]:
        """The run's one line per provider ("<provider>  ok ..." / "<provider>  FAILED ..."), by provider."""
        from gpuprice.scrapers.offer import PROVIDERS

        lines = {}
        for line in self.out.splitlines():
            first = line.split(maxsplit=1)[0] if line.strip() else ""
            if first in PROVIDERS and (" ok " in line or " FAILED " in line):
                lines[first] = line
        return lines


@contextlib.contextmanager
def environment(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set (or, for None, remove) environment variables for the duration of the block."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def gpuprice(*args: str) -> RunResult:
    """`gpuprice ARGS...` through gpuprice.cli.main, with its exit code and both streams."""
    from gpuprice.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return RunResult(code, out.getvalue(), err.getvalue())
