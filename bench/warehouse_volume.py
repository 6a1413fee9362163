"""Figure: the warehouse at issue 38's volume, ~200 M rows (five years at all-region detail).

Two warehouses are generated with ``bench.volume_history`` (through ``connect_writer``, so they
carry the product's schema and views): five years at about ``rows`` rows and the same offers
over one year (its baseline). Then each standard query runs in a process of its own against
each warehouse, read-only through the product's views, so that its time **and its peak RSS**
are its own:

- ``latest_prices``: ``analytics.latest_prices`` (every provider's newest snapshot);
- ``price_history_one_gpu``: ``analytics.price_history WHERE gpu = 'h100-sxm'`` (one GPU's
  price periods);
- ``cheapest_by_gpu_one_date``: ``analytics.cheapest_by_gpu`` on the newest date;
- ``best_offer_per_workload``: the ranking's question over the warehouse: the offers in force on
  the newest date (``warehouse.queries.offers_as_of``: each offer once, at its cheapest region)
  ranked for every catalog workload by ``models.ranking.rank_offers``, the first of each kept
  (``top=1``: the whole ranking's first rows, only their output rows built).

A query process that runs past ``query_timeout_s`` is stopped and reported as not finished
(value = the timeout, marked). The size is a parameter: ``python -m bench.warehouse_volume
--rows 50M`` or ``BENCH_VOLUME_ROWS=50M make bench``; disk use is about 22 bytes a row (4.4 GB at
200 M) per warehouse and as much again for its copy, in a temporary folder removed at the end.

Kept and reused: with ``--workdir DIR`` (or ``BENCH_VOLUME_DIR``) the warehouses and their copies
stay in DIR, each finished step recorded beside them (``five_years.generated.json``,
``.published.json``, ``.appended.json``). A later run with the same parameters skips what is
recorded as done: it appends and publishes one more day on each kept history (the state brought
up to date the way a daily run would, with the code of that run) and queries again. Each long
step prints a progress line with the elapsed time and the load average.

Over ~400 lines: generating, publishing, appending and timing each query in its own process are
steps of one figure that resume from each other's records.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from bench.figures import Bound, Figure
from bench.sql_files import bench_sql, standard_query_params
from bench.synthetic_history import DEFAULT_END
from bench.volume_history import generate_volume_history, pool_sizes
from bench.warehouse_scale import append_day, one_day_of_offers
from gpuprice.warehouse.connection import PUBLISH_MEMORY_LIMIT

DEFAULT_ROWS = 200_000_000
FIVE_YEARS = 1826
ONE_YEAR = 365
QUERY_TARGET_MS = 1000.0  # issue 38: every standard query under 1 s at five years
PEAK_RSS_TARGET_MB = 2000.0
APPEND_PUBLISH_TARGET_S = 10.0  # issue 38: append + publish one day under 10 s at five years
APPEND_PUBLISH_RATIO = 1.5  # ... and within 1.5x of the same at one year
QUERIES = ("latest_prices", "price_history_one_gpu", "cheapest_by_gpu_one_date", "best_offer_per_workload")
ROWS_VAR = "BENCH_VOLUME_ROWS"
DIR_VAR = "BENCH_VOLUME_DIR"


def parse_count(text: str) -> int:
    """``200M``, ``1.5B``, ``40000000``."""
    text = text.strip().upper().replace("_", "").replace(",", "")
    scale = {"K": 1e3, "M": 1e6, "B": 1e9}.get(text[-1:], 1)
    number = float(text[:-1] if scale != 1 else text)
    if number <= 0:
        raise ValueError(f"row count must be positive: {text!r}")
    return int(number * scale)


# --- one query, in its own process -------------------------------------------------------------


def _run_query(name: str, path: Path, end: dt.date, repeats: int) -> dict[str, Any]:
    from gpuprice.warehouse.connection import connect_reader

    con = connect_reader(path)
    con.execute(bench_sql("quiet"))
    split: dict[str, list[float]] = {}  # parts of one run's time, where it has parts

    if name == "best_offer_per_workload":
        from gpuprice.models.ranking import rank_offers
        from gpuprice.models.workloads import BUILTIN_PATH, load_file
        from gpuprice.warehouse.queries import offers_as_of

        workloads = load_file(BUILTIN_PATH)
        split.update(offers_sql_ms=[], rank_ms=[], offers=[])

        def run() -> int:
            start = time.perf_counter()
            offers = offers_as_of(con, end)
            middle = time.perf_counter()
            ranked = rank_offers(offers, workloads, end, top=1)
            split["offers_sql_ms"].append((middle - start) * 1000)
            split["rank_ms"].append((time.perf_counter() - middle) * 1000)
            split["offers"].append(len(offers))
            return int((ranked["rank"] == 1).sum())
    else:
        sql, params = bench_sql(f"standard/{name}"), standard_query_params(end)[name]

        def run() -> int:
            return len(con.execute(sql, params).fetchdf())

    times = []
    result_rows = run()  # warm-up: the file's pages read once, as an analyst's session would
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return {
        "ms": statistics.median(times),
        "all_ms": [round(t, 1) for t in times],
        "result_rows": result_rows,
        **{k: round(statistics.median(v[1:] or v), 1) for k, v in split.items()},
    }


def _query_in_process(name: str, path: Path, end: dt.date, repeats: int, timeout_s: float) -> dict[str, Any]:
    # Started through bench/launch.py: the query's peak RSS is its own, not this process's.
    usage = path.with_suffix(f".{name}.json")
    command = [sys.executable, str(Path(__file__).with_name("launch.py")), str(usage)]
    command += [sys.executable, "-m", "bench.warehouse_volume", "--query", name, "--db", str(path)]
    command += ["--end", end.isoformat(), "--repeats", str(repeats)]
    # A session of its own: on a timeout the launcher *and* the query process under it are killed.
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return {"ms": timeout_s * 1000, "finished": False, "peak_rss_mb": None, "result_rows": None}
    done = subprocess.CompletedProcess(command, process.returncode, out, err)
    launched = json.loads(usage.read_text(encoding="utf-8"))
    if done.returncode != 0 or launched["returncode"] != 0:
        raise RuntimeError(f"query {name} on {path.name} failed: {done.stderr.strip()[-800:]}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    answer["finished"] = True
    answer["process_s"] = round(launched["wall_s"], 1)
    answer["peak_rss_mb"] = round(launched["max_rss_bytes"] / 2**20, 1)
    return answer


# --- the figure ----------------------------------------------------------------------------------

_STARTED = time.perf_counter()


def _progress(text: str) -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    elapsed = time.perf_counter() - _STARTED
    print(f"[bench] volume +{elapsed:.0f}s load {load:.1f}: {text}", file=sys.stderr, flush=True)


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _load() -> float:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else float("nan")


def analysts_copy(warehouse: Path) -> Path:
    return warehouse.with_suffix(".analytics.duckdb")


def _marker(path: Path, step: str) -> Path:
    """``five_years.generated.json``: what a finished step of a kept warehouse recorded."""
    return path.with_suffix(f".{step}.json")


def _write_marker(path: Path, step: str, record: dict[str, Any] | list[Any]) -> None:
    marker = _marker(path, step)
    tmp = marker.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, marker)


def _newest_date(con: duckdb.DuckDBPyConnection) -> dt.date:
    newest = con.execute(bench_sql("newest_date")).fetchall()[0][0]
    if newest is None:
        raise RuntimeError("the warehouse holds no snapshot")
    return newest


def _generated(path: Path, rows: int, days: int, pools: dict[str, int], end: dt.date) -> dict[str, Any]:
    """The warehouse of ``days`` days at about ``rows`` rows: generated, or kept from an earlier
    run in the same folder (its ``.generated.json`` says it was finished, with these parameters)."""
    from gpuprice.warehouse.connection import connect_writer

    wanted = {"rows_requested": rows, "days": days, "end": end.isoformat(), "pools": pools}
    marker = _marker(path, "generated")
    if marker.is_file() and path.is_file():
        kept: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
        differing = [k for k, v in wanted.items() if kept.get(k) != v]
        if differing:
            raise ValueError(
                f"{path} was generated with other {', '.join(differing)}: choose another --workdir or remove it"
            )
        _progress(f"{path.stem}: kept ({kept['rows']:,} rows, generated in {kept['generate_s']} s)")
        return kept
    for step in ("published", "appended"):  # a new history: what was done to an old one is void
        _marker(path, step).unlink(missing_ok=True)
    for stale in (path, path.with_suffix(".duckdb.wal"), analysts_copy(path)):
        stale.unlink(missing_ok=True)
    _progress(f"{path.stem}: generating {rows:,} rows over {days} days")
    con = connect_writer(path)
    try:
        con.execute(bench_sql("quiet"))
        start = time.perf_counter()
        load = _load()
        added = generate_volume_history(
            con, rows=rows, days=days, end=end, pools=pools, progress=lambda t: _progress(f"{path.stem}: {t}")
        )
        seconds = time.perf_counter() - start
        per_provider = dict(con.execute(bench_sql("rows_per_provider_on"), {"day": end}).fetchall())
    finally:
        con.close()
    built = {
        **wanted,
        "rows": added,
        "generate_s": round(seconds, 1),
        "generate_load": [load, _load()],
        "file_mb": round(path.stat().st_size / 1e6),
        "rows_on_newest_day": {k: int(v) for k, v in per_provider.items()},
        "generate_peak_rss_mb": _peak_rss_mb(),
    }
    _write_marker(path, "generated", built)
    _progress(f"{path.stem}: {added:,} rows in {seconds:.0f} s ({added / max(seconds, 1e-9):,.0f} rows/s)")
    return built


def _published(path: Path) -> dict[str, Any]:
    """The first publish of the analysts' copy, as ``gpuprice run`` does it
    (``publish_analytics_copy``; a first publish builds the copy whole), or the kept one."""
    from gpuprice.warehouse.connection import connect_writer
    from gpuprice.warehouse.publish import publish_analytics_copy

    marker = _marker(path, "published")
    if marker.is_file() and analysts_copy(path).is_file():
        kept: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
        _progress(f"{path.stem}: copy kept (built whole in {kept.get('publish_s')} s)")
        return kept
    _progress(f"{path.stem}: publishing the analysts' copy (built whole)")
    con = connect_writer(path)
    start = time.perf_counter()
    load = _load()
    record: dict[str, Any]
    try:
        con.execute(bench_sql("quiet"))
        copy = publish_analytics_copy(con, path, analysts_copy(path))
    except duckdb.Error as exc:  # the figure says so and the queries read the warehouse
        record = {
            "publish_error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}",
            "publish_failed_after_s": round(time.perf_counter() - start, 1),
        }
        _progress(f"{path.stem}: publish failed: {record['publish_error']}")
        return record  # not recorded: the next run tries again
    finally:
        con.close()
    record = {
        "publish_s": round(time.perf_counter() - start, 1),
        "publish_load": [load, _load()],
        "copy_mb": round(copy.stat().st_size / 1e6),
        "publish_peak_rss_mb": _peak_rss_mb(),
    }
    _write_marker(path, "published", record)
    _progress(f"{path.stem}: copy built whole in {record['publish_s']} s, {record['copy_mb']:,} MB")
    return record


def _append_and_publish(path: Path) -> dict[str, Any]:
    """The daily run's work on this history: the newest day's offers written again as the next
    day's (``replace_snapshot_partition`` per provider) and the copy published (an update of the
    copy the last publish left); the two times, and what the update rewrote. Each call adds a
    day, so a kept warehouse measured again grows by one day, as the product's would."""
    from gpuprice.warehouse import publish
    from gpuprice.warehouse.connection import connect_writer
    from gpuprice.warehouse.publish import publish_analytics_copy

    con = connect_writer(path)
    try:
        con.execute(bench_sql("quiet"))
        newest = _newest_date(con)
        offers = one_day_of_offers(con, newest)
        day = newest + dt.timedelta(days=1)
        load = _load()
        start = time.perf_counter()
        appended = append_day(con, day, offers)
        middle = time.perf_counter()
        publish_analytics_copy(con, path, analysts_copy(path))
        done = time.perf_counter()
    finally:
        con.close()
    delta = publish.last_delta
    _progress(
        f"{path.stem}: appended {appended:,} offers for {day} in {middle - start:.1f} s, "
        f"published in {done - middle:.1f} s"
    )
    record = {
        "appended_day": day.isoformat(),
        "appended_offers": appended,
        "append_s": round(middle - start, 2),
        "publish_day_s": round(done - middle, 2),
        "append_publish_s": round(done - start, 2),
        "append_publish_load": [load, _load()],
        "delta": dataclasses.asdict(delta) if delta is not None else {"built_whole": 1},
        # how the publish made the copy, where the product says ("in_place", "byte_copy", "whole")
        "publish_method": getattr(publish, "last_method", None),
        "copy_mb_after": round(analysts_copy(path).stat().st_size / 1e6),
        "process_peak_rss_mb": _peak_rss_mb(),
    }
    marker = _marker(path, "appended")
    history = json.loads(marker.read_text(encoding="utf-8")) if marker.is_file() else []
    _write_marker(path, "appended", [*history, record])
    return record


def _peak_of_steps(built: dict[str, Any]) -> float:
    """The highest peak RSS a step of this warehouse's build recorded (each step's process)."""
    keys = ("generate_peak_rss_mb", "publish_peak_rss_mb", "process_peak_rss_mb")
    return max(float(built[k]) for k in keys if built.get(k) is not None)


def _append_figures(long: dict[str, Any], short: dict[str, Any], scale: dict[str, Any]) -> list[Figure]:
    if "append_publish_s" not in long or "append_publish_s" not in short:
        return []  # no copy was published: nothing to update
    return [
        Figure(
            name="volume.append_and_publish_one_day_s",
            value=long["append_publish_s"],
            unit="s",
            baseline=f"same at {short['days']} days ({short['rows']:,} rows)",
            baseline_value=short["append_publish_s"],
            ratio_meaning=f"{long['days']}-day / {short['days']}-day time",
            target=(
                Bound(on="value", op="<=", limit=APPEND_PUBLISH_TARGET_S),
                Bound(on="ratio", op="<=", limit=APPEND_PUBLISH_RATIO),
            ),
            details=scale,
        ),
        Figure(
            name="volume.build_process_peak_rss_mb",
            value=max(_peak_of_steps(long), _peak_of_steps(short)),
            unit="MB",
            baseline="the publish step's memory cap (per connection)",
            baseline_value=float(PUBLISH_MEMORY_LIMIT.removesuffix("GB")) * 1000,
            ratio_meaning="highest peak RSS of the bench's build steps (generate, publish whole, append + publish) / the cap",
            target=(Bound(on="value", op="<=", limit=PEAK_RSS_TARGET_MB),),
            details=scale,
        ),
    ]


def _prepare(
    path: Path, rows: int, days: int, pools: dict[str, int], end: dt.date, publish: bool, appends: int
) -> dict[str, Any]:
    """Generate (or keep) the warehouse and, when publishing, build (or keep) its copy and run
    ``appends`` days of append + publish in a row (the last is the figure: the daily run's steady
    state; the others are in ``appends``). ``queried``: the file the queries read: the copy, or
    the warehouse itself when publishing is off or failed (its views then compute the derived
    series over the whole history)."""
    built = {**_generated(path, rows, days, pools, end), "queried": str(path)}
    if publish:
        built.update(_published(path))
        if "publish_error" not in built:
            runs = [_append_and_publish(path) for _ in range(max(appends, 1))]
            built.update(runs[-1], queried=str(analysts_copy(path)))
            built["appends"] = [
                {k: r[k] for k in ("appended_day", "append_s", "publish_day_s")} for r in runs
            ]
    return built


def measure(
    rows: int | None = None,
    *,
    repeats: int = 3,
    query_timeout_s: float = 600.0,
    end: dt.date = DEFAULT_END,
    workdir: Path | None = None,
    days: tuple[int, int] = (FIVE_YEARS, ONE_YEAR),
    publish: bool = True,
    appends: int = 1,
) -> list[Figure]:
    """The figures. Without ``workdir`` (or BENCH_VOLUME_DIR) the warehouses live in a temporary
    folder removed at the end; with it they are kept there, and a later run with the same
    parameters reuses them: it skips the generation and the first publish, appends and publishes
    one more day and queries again (the newer code measured on the same history)."""
    rows = rows or parse_count(os.environ.get(ROWS_VAR, str(DEFAULT_ROWS)))
    workdir = workdir or (Path(os.environ[DIR_VAR]) if os.environ.get(DIR_VAR) else None)
    long_days, short_days = days
    pools = pool_sizes(rows, long_days)
    folder = workdir if workdir is not None else Path(tempfile.mkdtemp(prefix="gpuprice-volume-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        # Each warehouse in a folder of its own, as a home holds one: a publish removes every
        # temp copy (.analytics-*.duckdb.tmp) in its folder as a killed run's leftovers, so a
        # publish of one history beside the other's running build deleted the build's copy.
        long_path, short_path = (folder / name / f"{name}.duckdb" for name in ("five_years", "one_year"))
        long_path.parent.mkdir(exist_ok=True)
        short_path.parent.mkdir(exist_ok=True)
        # both histories first (cheap), the one-year copy before the five-year one's long build
        _generated(long_path, rows, long_days, pools, end)
        short = _prepare(short_path, rows * short_days // long_days, short_days, pools, end, publish, appends)
        _progress(f"one year: {short}")
        long = _prepare(long_path, rows, long_days, pools, end, publish, appends)
        _progress(f"five years: {long}")
        scale = {"five_years": long, "one_year": short, "pools": pools, "repeats": repeats}
        figures = _append_figures(long, short, scale)
        for name in QUERIES:
            answers = {}
            for label, built in (("one_year", short), ("five_years", long)):
                queried = Path(built["queried"])
                newest = dt.date.fromisoformat(built.get("appended_day", end.isoformat()))
                answers[label] = _query_in_process(name, queried, newest, repeats, query_timeout_s)
                answers[label]["load"] = _load()
                _progress(f"{name} at {label}: {answers[label]}")
            five, one = answers["five_years"], answers["one_year"]
            figures.append(
                Figure(
                    name=f"volume.{name}_ms",
                    value=five["ms"],
                    unit="ms",
                    baseline=f"same query at {short_days} days ({short['rows']:,} rows)",
                    baseline_value=one["ms"],
                    ratio_meaning=f"{long_days}-day ({long['rows']:,} rows) / {short_days}-day time",
                    target=(Bound(on="value", op="<=", limit=QUERY_TARGET_MS),),
                    details={
                        **scale,
                        "one_year": {**short, "query": one},
                        "five_years": {**long, "query": five},
                    },
                )
            )
            rss = [a["peak_rss_mb"] for a in (five, one) if a.get("peak_rss_mb") is not None]
            if len(rss) < 2:  # a query that did not finish has no peak to report
                continue
            figures.append(
                Figure(
                    name=f"volume.{name}_peak_rss_mb",
                    value=five["peak_rss_mb"],
                    unit="MB",
                    baseline="the same query's process at one year",
                    baseline_value=one["peak_rss_mb"],
                    ratio_meaning="peak RSS at five years / at one year",
                    target=(Bound(on="value", op="<=", limit=PEAK_RSS_TARGET_MB),),
                    details={"finished": {"five_years": five["finished"], "one_year": one["finished"]}},
                )
            )
        return figures
    finally:
        if workdir is None:
            shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.warehouse_volume", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--rows", type=parse_count, default=None, help=f"five-year rows (default {DEFAULT_ROWS:,})"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per query process")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="keep the warehouses here and reuse them on the next run (default: a temporary folder, removed)",
    )
    parser.add_argument(
        "--appends",
        type=int,
        default=1,
        help="days appended and published in a row on each history; the last one is the figure",
    )
    parser.add_argument("--output", type=Path, default=None, help="also write the figures to this JSON file")
    parser.add_argument(
        "--no-publish", action="store_true", help="query the warehouse itself, without an analysts' copy"
    )
    parser.add_argument("--days", type=int, nargs=2, default=(FIVE_YEARS, ONE_YEAR), help=argparse.SUPPRESS)
    parser.add_argument("--query", choices=QUERIES, help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--end", type=dt.date.fromisoformat, default=DEFAULT_END, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.query:  # the child process of one query
        print(json.dumps(_run_query(args.query, args.db, args.end, args.repeats)))
        return 0
    figures = measure(
        args.rows,
        repeats=args.repeats,
        query_timeout_s=args.timeout,
        workdir=args.workdir,
        days=tuple(args.days),
        publish=not args.no_publish,
        appends=args.appends,
    )
    for figure in figures:
        print(figure.line(), flush=True)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        results = {
            "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            "figures": [figure.model_dump(mode="json") for figure in figures],
        }
        args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
