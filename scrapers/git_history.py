"""Read a git repository's history with the ``git`` program: one commit per day, files, blobs.

A price catalog kept in version control (SkyPilot's catalog repository re-commits clouds' price
CSVs every few hours) is years of dated prices. This module only reads git: which commit was the
last one of each day (UTC, by commit time), which files a commit's tree holds, and the content
of a blob. It runs ``git`` as a subprocess (no git library is a dependency); a URL is cloned
once, bare, into a folder the caller names (the network is only used then).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

_GIT_ENV = {
    # Never prompt for credentials or open an editor; the same output whatever the user's config.
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}


class GitHistoryError(ValueError):
    """The path is not a readable git repository (or git failed on it): one line for the user."""


@dataclass(frozen=True)
class DayCommit:
    """The last commit of one UTC day (by commit time) that touched the watched paths."""

    day: dt.date
    commit: str
    committed_at: dt.datetime


def _run(args: list[str], *, cwd: Path | None = None, timeout: float | None = None) -> str:
    env = {**os.environ, **_GIT_ENV}
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise GitHistoryError(
            "the git program is not installed (needed to read a catalog's history)"
        ) from None
    except subprocess.TimeoutExpired:
        raise GitHistoryError(f"git {args[0]} took longer than {timeout:.0f} s") from None
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        raise GitHistoryError(f"git {args[0]}: {message}")
    return done.stdout


def _midnight(day: dt.date) -> str:
    """The start of ``day`` in UTC as git's date options read it (a bare date would mean "now")."""
    return f"{day.isoformat()} 00:00:00 +0000"


def git_dir(path: Path) -> Path:
    """The repository's git directory (a work tree's .git or a bare repository), or GitHistoryError."""
    if not path.exists():
        raise GitHistoryError(f"{path}: no such folder")
    if not path.is_dir():
        raise GitHistoryError(f"{path}: not a folder, so not a git repository")
    try:
        # --absolute-git-dir works for a work tree and for a bare clone alike.
        out = _run(["-C", str(path), "rev-parse", "--absolute-git-dir"], timeout=60)
    except GitHistoryError:
        raise GitHistoryError(f"{path}: not a git repository (git rev-parse found no .git)") from None
    found = Path(out.strip())
    # A folder inside some other repository is not the catalog repository the user meant.
    top = path.resolve()
    if found != top and found.parent != top:
        raise GitHistoryError(f"{path}: not a git repository (it lies inside the repository {found.parent})")
    try:
        _run(["--git-dir", str(found), "rev-parse", "--verify", "--quiet", "HEAD^{commit}"], timeout=60)
    except GitHistoryError:
        raise GitHistoryError(f"{path}: a git repository without any commit") from None
    return found


def last_commit_per_day(
    repo: Path,
    *,
    paths: tuple[str, ...],
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> list[DayCommit]:
    """Per UTC day, the latest commit (first-parent history of HEAD) that touched ``paths``.

    The tree of that commit holds every watched file as it stood at the end of the day. Days
    are those of the commit time (when the commit entered the repository), in UTC.
    """
    args = ["--git-dir", str(repo), "log", "--first-parent", "--format=%H %ct"]
    # git's own date filter with a day of margin (time zones); the exact filter is below.
    if since is not None:
        args.append(f"--since={_midnight(since - dt.timedelta(days=1))}")
    if until is not None:
        args.append(f"--until={_midnight(until + dt.timedelta(days=2))}")
    args += ["HEAD", "--", *paths]
    best: dict[dt.date, DayCommit] = {}
    for line in _run(args).splitlines():
        commit, _, stamp = line.partition(" ")
        if not stamp:
            continue
        at = dt.datetime.fromtimestamp(int(stamp), dt.UTC)
        day = at.date()
        if (since is not None and day < since) or (until is not None and day > until):
            continue
        known = best.get(day)
        # git log lists the newest first; a later commit time wins (rebased histories are not sorted).
        if known is None or at > known.committed_at:
            best[day] = DayCommit(day=day, commit=commit, committed_at=at)
    return [best[d] for d in sorted(best)]


def tree_files(repo: Path, commit: str, prefix: str) -> dict[str, str]:
    """``{path: blob id}`` of every file under ``prefix`` in the commit's tree."""
    out = _run(["--git-dir", str(repo), "ls-tree", "-r", "--full-tree", commit, "--", prefix])
    files: dict[str, str] = {}
    for line in out.splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            files[path] = parts[2]
    return files


class BlobReader:
    """Blob contents through one long-lived ``git cat-file --batch`` process (a context manager)."""

    def __init__(self, repo: Path) -> None:
        self._repo = repo
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> BlobReader:
        self._proc = subprocess.Popen(
            ["git", "--git-dir", str(self._repo), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **_GIT_ENV},
        )
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()

    def read(self, blob: str) -> bytes:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise RuntimeError("BlobReader used outside its with-block")
        proc.stdin.write(blob.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().decode().split()
        if len(header) != 3 or header[1] != "blob":
            raise GitHistoryError(f"git cat-file: blob {blob} is missing from the repository")
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # the newline after each object
        return data


def clone_or_update(url: str, dest: Path, *, since: dt.date | None = None) -> Path:
    """A bare clone of ``url`` in ``dest`` (history from ``since`` on when given), fetched again
    when it already exists. Only this touches the network."""
    # A bare date means "at the current time of day" to git: give midnight UTC, a day early.
    depth = [f"--shallow-since={_midnight(since - dt.timedelta(days=1))}"] if since is not None else []
    if (dest / "HEAD").exists():
        _run(["--git-dir", str(dest), "fetch", "--quiet", *depth, "origin", "+HEAD:HEAD"], timeout=3600)
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    if partial.exists():
        import shutil

        shutil.rmtree(partial)
    _run(["clone", "--quiet", "--bare", "--single-branch", *depth, url, str(partial)], timeout=3600)
    partial.rename(dest)  # a clone cut short never looks like a finished one
    return dest


def is_url(text: str) -> bool:
    return "://" in text or (text.startswith("git@") and ":" in text)
