"""Where the tests find real captured pages: ``<repo root>/../shared/realpages`` (see its SOURCES.md).

Those pages and responses were served by the providers and kept by public projects; they are
never copied into this repository. A fresh clone has no ``../shared``: tests that read a capture
skip, saying so, and the project's own fixtures in the same structures still run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
REALPAGES = REPO.parent / "shared" / "realpages"
MISSING_REASON = f"real captures not present at {REALPAGES} (a fresh clone has no ../shared)"


def real_capture(provider: str, name: str) -> bytes:
    """The bytes of ``<realpages>/<provider>/<name>``; skips the test when the folder is absent."""
    path = REALPAGES / provider / name
    if not REALPAGES.is_dir():
        pytest.skip(MISSING_REASON)
    if not path.is_file():
        pytest.skip(f"real capture {path} not present")
    return path.read_bytes()


def all_real_captures() -> list[tuple[str, Path]]:
    """(provider, path) of every capture present; empty on a fresh clone."""
    if not REALPAGES.is_dir():
        return []
    return sorted(
        (folder.name, path)
        for folder in REALPAGES.iterdir()
        if folder.is_dir()
        for path in folder.iterdir()
        if path.is_file()
    )
