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
  the newest date (``warehouse.queries.offers_as_of``) ranked for every catalog workload by
  ``models.ranking.rank_offers`` (each offer at its cheapest region), the first of each kept.

A query process that runs past ``query_timeout_s`` is stopped and reported as not finished
(value = the timeout, marked). The size is a parameter: ``python -m bench.warehouse_volume
--rows 50M`` or ``BENCH_VOLUME_ROWS=50M make bench``; disk use is about 22 bytes a row (4.4 GB at
200 M) in a temporary folder removed at the end (``--workdir`` or ``BENCH_VOLUME_DIR`` chooses
where).
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
            ranked = rank_offers(offers, workloads, end)
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


def _progress(text: str) -> None:
    print(f"[bench] volume: {text}", file=sys.stderr, flush=True)


def analysts_copy(warehouse: Path) -> Path:
    return warehouse.with_suffix(".analytics.duckdb")


def _build(
    path: Path, rows: int, days: int, pools: dict[str, int], end: dt.date, publish: bool
) -> dict[str, Any]:
    """Generate the warehouse, then publish the analysts' copy from it as ``gpuprice run`` does
    (``publish_analytics_copy``; a first publish builds the copy whole). ``queried``: the file
    the queries read: the copy, or the warehouse itself when publishing is off or failed (its
    views then compute the derived series over the whole history)."""
    from gpuprice.warehouse.connection import connect_writer
    from gpuprice.warehouse.publish import publish_analytics_copy

    con = connect_writer(path)
    try:
        con.execute(bench_sql("quiet"))
        start = time.perf_counter()
        added = generate_volume_history(
            con, rows=rows, days=days, end=end, pools=pools, progress=lambda t: _progress(f"{path.stem}: {t}")
        )
        seconds = time.perf_counter() - start
        per_provider = dict(con.execute(bench_sql("rows_per_provider_on"), {"day": end}).fetchall())
        built: dict[str, Any] = {
            "rows": added,
            "days": days,
            "generate_s": round(seconds, 1),
            "file_mb": round(path.stat().st_size / 1e6),
            "rows_on_newest_day": {k: int(v) for k, v in per_provider.items()},
            "queried": str(path),
        }
        if publish:
            _progress(f"{path.stem}: {added:,} rows in {seconds:.0f} s; publishing the analysts' copy")
            start = time.perf_counter()
            try:
                copy = publish_analytics_copy(con, path, analysts_copy(path))
            except duckdb.Error as exc:  # the figure says so and the queries read the warehouse
                built["publish_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                built["publish_failed_after_s"] = round(time.perf_counter() - start, 1)
                _progress(f"{path.stem}: publish failed: {built['publish_error']}")
            else:
                built["publish_s"] = round(time.perf_counter() - start, 1)
                built["copy_mb"] = round(copy.stat().st_size / 1e6)
                built["queried"] = str(copy)
                built.update(_append_and_publish(con, path, end))
    finally:
        con.close()
    return built


def _append_and_publish(con: duckdb.DuckDBPyConnection, path: Path, end: dt.date) -> dict[str, Any]:
    """The daily run's work on this history: the newest day's offers written again as the next
    day's (``replace_snapshot_partition`` per provider) and the copy published (an update of the
    copy just built); the two times, and what the update rewrote."""
    from gpuprice.warehouse import publish
    from gpuprice.warehouse.publish import publish_analytics_copy

    offers = one_day_of_offers(con, end)
    day = end + dt.timedelta(days=1)
    start = time.perf_counter()
    appended = append_day(con, day, offers)
    middle = time.perf_counter()
    publish_analytics_copy(con, path, analysts_copy(path))
    done = time.perf_counter()
    delta = publish.last_delta
    _progress(
        f"{path.stem}: appended {appended:,} offers in {middle - start:.1f} s, published in {done - middle:.1f} s"
    )
    return {
        "appended_offers": appended,
        "append_s": round(middle - start, 2),
        "publish_day_s": round(done - middle, 2),
        "append_publish_s": round(done - start, 2),
        "delta": dataclasses.asdict(delta) if delta is not None else {"built_whole": 1},
        "process_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


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
            value=long["process_peak_rss_mb"],
            unit="MB",
            baseline="the publish step's memory cap (per connection)",
            baseline_value=float(PUBLISH_MEMORY_LIMIT.removesuffix("GB")) * 1000,
            ratio_meaning="peak RSS of the bench process (both histories generated, published, updated) / the cap",
            target=(Bound(on="value", op="<=", limit=PEAK_RSS_TARGET_MB),),
            details=scale,
        ),
    ]


def measure(
    rows: int | None = None,
    *,
    repeats: int = 3,
    query_timeout_s: float = 600.0,
    end: dt.date = DEFAULT_END,
    workdir: Path | None = None,
    days: tuple[int, int] = (FIVE_YEARS, ONE_YEAR),
    publish: bool = True,
) -> list[Figure]:
    rows = rows or parse_count(os.environ.get(ROWS_VAR, str(DEFAULT_ROWS)))
    workdir = workdir or (Path(os.environ[DIR_VAR]) if os.environ.get(DIR_VAR) else None)
    long_days, short_days = days
    pools = pool_sizes(rows, long_days)
    tmp = Path(tempfile.mkdtemp(prefix="gpuprice-volume-", dir=workdir))
    try:
        long_path, short_path = tmp / "five_years.duckdb", tmp / "one_year.duckdb"
        long = _build(long_path, rows, long_days, pools, end, publish)
        _progress(f"five years: {long}")
        short = _build(short_path, rows * short_days // long_days, short_days, pools, end, publish)
        _progress(f"one year: {short}")
        scale = {"five_years": long, "one_year": short, "pools": pools, "repeats": repeats}
        figures = _append_figures(long, short, scale)
        for name in QUERIES:
            answers = {}
            for label, built in (("one_year", short), ("five_years", long)):
                answers[label] = _query_in_process(
                    name, Path(built["queried"]), end, repeats, query_timeout_s
                )
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
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.warehouse_volume", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--rows", type=parse_count, default=None, help=f"five-year rows (default {DEFAULT_ROWS:,})"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per query process")
    parser.add_argument("--workdir", type=Path, default=None)
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
    )
    for figure in figures:
        print(figure.line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
