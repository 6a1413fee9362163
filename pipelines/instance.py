"""The Dagster instance the CLI records its runs in: the one under ``$GPUPRICE_HOME/dagster``.

``make dev`` starts the UI with ``DAGSTER_HOME`` set to the same folder, so every run of
``gpuprice run`` / ``gpuprice backfill`` and its materializations show in the UI.

That instance limits the warehouse pool to one step at a time, and a step holds its slot until
its run ends. A CLI run killed mid-step (Ctrl-C twice, SIGKILL, a lost machine) would hold the
slot for ever, since no daemon watches CLI runs; so before each run the CLI marks its own runs
whose process is gone as failed and frees their slots, as Dagster's run monitoring would.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import dagster as dg

from gpuprice.errors import BadInput

DAGSTER_SUBFOLDER = "dagster"
_INSTANCE_TEMPLATE = Path(__file__).with_name("dagster.yaml")
LAUNCHED_BY_TAG = "gpuprice/launched_by"
PID_TAG = "gpuprice/pid"
HOST_TAG = "gpuprice/host"
_UNFINISHED = [dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


def dagster_home(home: Path) -> Path:
    """The instance folder, with the project's dagster.yaml: written when it is missing and
    written again whenever the template (pipelines/dagster.yaml) differs, so a changed template
    reaches every existing home (edit the template, not the copy)."""
    folder = home / DAGSTER_SUBFOLDER
    config = folder / "dagster.yaml"
    template = _INSTANCE_TEMPLATE.read_bytes()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not config.exists() or config.read_bytes() != template:
            tmp = config.with_name(f".{config.name}.tmp")
            tmp.write_bytes(template)
            os.replace(tmp, config)  # a starting daemon never reads half a file
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise BadInput(
            f"cannot write the Dagster instance folder {folder}: {exc.strerror or exc};"
            " make it writable or set GPUPRICE_HOME to a writable folder"
        ) from None
    return folder


def main() -> None:
    """``python -m gpuprice.pipelines.instance``: prepare ``$GPUPRICE_HOME/dagster`` and print it
    (``make dev`` sets DAGSTER_HOME to it)."""
    from gpuprice.settings import Settings

    try:
        print(dagster_home(Settings.from_env().ensure_home()))
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def cli_instance(home: Path) -> dg.DagsterInstance:
    """The persistent instance under ``home`` (its dagster.yaml, Dagster's own storages), cleared
    of slots held by dead CLI runs."""
    instance = dg.DagsterInstance.from_config(str(dagster_home(home)))
    release_abandoned_runs(instance)
    return instance


def cli_run_tags() -> dict[str, str]:
    """Tags that let a later CLI run tell whether this run's process is still alive."""
    return {LAUNCHED_BY_TAG: "cli", PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def release_abandoned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Fail and free the slots of CLI runs on this host whose process has exited; their ids."""
    released = []
    runs = instance.get_runs(
        filters=dg.RunsFilter(
            statuses=_UNFINISHED, tags={LAUNCHED_BY_TAG: "cli", HOST_TAG: socket.gethostname()}
        )
    )
    for run in runs:
        pid = run.tags.get(PID_TAG, "")
        if pid.isdigit() and int(pid) != os.getpid() and _process_alive(int(pid)):
            continue
        instance.report_run_failed(run, message="the gpuprice process running it exited before it finished")
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        released.append(run.run_id)
    return released


if __name__ == "__main__":
    main()
