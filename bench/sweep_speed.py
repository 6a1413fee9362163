"""Figure 2: memory fit + cost ranking for 50 workloads x every offer of a day x GPU counts x strategies.

Inputs: the ten built-in workloads (``models/workloads.yaml``), each in five variants (sequence
length x1/x2/x4, micro-batch x2/x4), and every catalog-GPU offer of the sample archive's newest day
(each provider's newest page, parsed by the product's parsers).

* **product**: ``models.memory.fit_sweep`` over workloads x offers x counts x strategies (each offer
  is its own column of the sweep, with its GPU's memory), then ``models.ranking.rank_offers`` for the
  day (least complex fitting sharding, throughput, hours, cost per checkpoint, warnings).
* **plain loop**: the same numbers one configuration at a time through the scalar APIs:
  ``estimate_memory(workload.setup(gpus, sharding))`` per sweep configuration, and per ranked row
  ``predict_throughput`` + ``checkpoint_cost``. The loop runs over every ``loop_stride``-th offer
  (all workloads, counts and strategies of it) and every ranked row; its per-configuration time is
  scaled to the full sweep. Every number the loop computes is compared with the product's, and a
  disagreement aborts the figure: a speed-up of code that computes something else means nothing.

Over ~400 lines: the product's sweep, the plain loop and their number-by-number comparison are
one figure; apart, the comparison that guards the speed-up would sit away from both sides.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.figures import Bound, Figure, rate_figure
from bench.parse_speed import newest_pages
from gpuprice.models.architectures import resolve_model
from gpuprice.models.catalog import get_gpu, gpu_slugs, usable_memory_gb
from gpuprice.models.choices import GPUS_PER_NODE, SWEEP_STRATEGIES
from gpuprice.models.cost import checkpoint_cost, checkpoint_count
from gpuprice.models.fit_verdict import VERDICTS
from gpuprice.models.memory import estimate_memory, fit_sweep
from gpuprice.models.ranking import (
    DATA_PARALLEL_EFFICIENCY,
    MIN_USEFUL_RUN_HOURS,
    rank_offers,
)
from gpuprice.models.ranking import (
    STRATEGIES as RANKING_STRATEGIES,
)
from gpuprice.models.throughput import ModelShape, predict_frame, predict_throughput
from gpuprice.models.workloads import BUILTIN_PATH, Workload, load_file
from gpuprice.scrapers.archive import SAMPLE_ARCHIVE
from gpuprice.scrapers.offer import Offer, StructureMissing
from gpuprice.scrapers.registry import provider_parser
from gpuprice.warehouse.writes import offers_frame

CONFIGS_PER_S_TARGET = 1_000_000
SPEEDUP_TARGET = 50.0
GPU_COUNTS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
# (sequence length factor, micro-batch factor) of the five variants of each built-in workload
VARIANTS: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (4, 1), (1, 2), (1, 4))
THROUGHPUT_ROWS = 200_000  # the size tests/test_throughput.py once timed (a ranking's worth and more)
THROUGHPUT_LOOP_ROWS = 2_000
RELATIVE_TOLERANCE = 1e-9  # both paths run the same float64 formulas; only summation order may differ


class Disagreement(AssertionError):
    """The vectorised product and the plain loop computed different numbers."""


def workload_variants(base: list[Workload] | None = None) -> list[Workload]:
    """Five variants of each built-in workload (50 from the ten shipped)."""
    variants = []
    # The shipped file itself: a user's GPUPRICE_WORKLOADS must not change what is benchmarked.
    for workload in base if base is not None else load_file(BUILTIN_PATH):
        for index, (seq_factor, batch_factor) in enumerate(VARIANTS):
            data = workload.model_dump()
            data.update(
                name=f"{workload.name}-v{index}",
                seq_len=workload.seq_len * seq_factor,
                micro_batch=workload.micro_batch * batch_factor,
            )
            variants.append(Workload.model_validate(data))
    return variants


def sample_day(archive: Path = SAMPLE_ARCHIVE) -> tuple[dt.date, pd.DataFrame]:
    """The newest archive day as the warehouse would hold it: every parsed offer, catalog GPUs only."""
    pages = newest_pages(archive)
    offers: list[Offer] = []
    for page in pages:
        try:
            offers.extend(
                provider_parser(page.provider).parse(page.content, observed_on=page.page_date).offers
            )
        except StructureMissing:
            continue  # a provider whose page does not parse simply has no offers that day
    day = max(page.page_date for page in pages)
    frame = offers_frame(offers, snapshot_date=day, source="archive", raw_sha256=None, parser_version=None)
    frame = frame[frame["gpu"].isin(set(gpu_slugs()))].reset_index(drop=True)
    if frame.empty:
        raise ValueError(f"no offers with catalog GPUs in the newest pages of {archive}")
    return day, frame


def _timed_product(
    workloads: list[Workload], offers: pd.DataFrame, day: dt.date
) -> tuple[pd.DataFrame, pd.DataFrame, float, float]:
    """(sweep, ranking, seconds in fit_sweep, seconds in fit_sweep + rank_offers)."""
    start = time.perf_counter()
    memory = {f"offer{i}": usable_memory_gb(g) for i, g in enumerate(offers["gpu"])}
    sweep = fit_sweep([w.setup() for w in workloads], memory, GPU_COUNTS, SWEEP_STRATEGIES)
    swept = time.perf_counter()
    ranking = rank_offers(offers, workloads, day)
    done = time.perf_counter()
    return sweep, ranking, swept - start, done - start


def _loop_memory(
    workloads: list[Workload], offers: pd.DataFrame, offer_indexes: list[int]
) -> list[tuple[int, int, int, str, float, bool]]:
    """(workload index, offer index, count, strategy, per_gpu_gb, fits), one estimate at a time."""
    rows = []
    for w_index, workload in enumerate(workloads):
        for o_index in offer_indexes:
            gpu_memory = usable_memory_gb(offers["gpu"].iat[o_index])
            for count in GPU_COUNTS:
                for strategy in SWEEP_STRATEGIES:
                    estimate = estimate_memory(
                        workload.setup(gpus=count, sharding=strategy), card_gb=gpu_memory
                    )
                    rows.append(
                        (w_index, o_index, count, strategy, estimate.per_gpu_gb, estimate.fits(gpu_memory))
                    )
    return rows


def _plausible_memory(gpu: str, stated: object) -> float:
    """GB per GPU as the ranking reads an offer: its own figure when plausible, else the catalog's."""
    nominal = get_gpu(gpu).memory_gb
    value = float(stated) if isinstance(stated, (int, float)) and np.isfinite(stated) else np.nan
    return round(value if nominal * 0.5 <= value <= nominal * 2.0 else nominal, 1)


def _baseline(workload: Workload, gpu: str, memory_gb: float, counts: list[int]) -> tuple[int, float]:
    """The fewest GPUs of this type that hold the job and their cluster rate: per count the best
    verdict (fits before tight), then the least complex sharding, on the card's usable bytes."""
    capacity = usable_memory_gb(gpu, memory_gb)
    for count in counts:
        verdicts = [
            (
                VERDICTS.index(
                    estimate_memory(workload.setup(gpus=count, sharding=s)).verdict(capacity).verdict
                ),
                i,
            )
            for i, s in enumerate(RANKING_STRATEGIES)
        ]
        code, best = min(verdicts)
        if code < 2:  # fits or tight
            speed = _speed(workload, gpu, count, RANKING_STRATEGIES[best])
            return count, speed.tokens_per_sec_per_gpu * count
    raise Disagreement(f"{workload.name} on {gpu}: the loop finds no fitting GPU count")


def _speed(workload: Workload, gpu: str, gpus: int, sharding: str) -> Any:
    from gpuprice.models.memory_setup import keeps_scores

    setup = workload.setup(gpus=gpus, sharding=sharding)
    return predict_throughput(
        workload.arch(),
        workload.method,
        gpu,
        gpus=gpus,
        seq_len=workload.seq_len,
        micro_batch=workload.micro_batch,
        grad_checkpointing=workload.uses_checkpointing,
        precision=workload.precision,
        sharding=sharding,
        framework=setup.framework,
        keeps_scores=keeps_scores(setup),
        attention=setup.attention,  # SDPA with a padding mask / fp32 (models/throughput_attention.py)
        lora_targets=setup.lora_targets,
    )


def _loop_costs(
    workloads: list[Workload], ranking: pd.DataFrame, offers: pd.DataFrame
) -> list[tuple[float, float, float, float]]:
    """Per ranked row: (per_gpu_gb, hours, run cost, cost per checkpoint) from the scalar APIs, with
    the ranking's right-sizing rule (models.ranking: DATA_PARALLEL_EFFICIENCY, MIN_USEFUL_RUN_HOURS)."""
    by_name = {w.name: w for w in workloads}
    offer_counts = sorted({int(c) for c in offers["gpu_count"]})
    stated = {
        (str(p), str(k), str(g)): v
        for p, k, g, v in zip(
            offers["provider"], offers["sku"], offers["gpu"], offers["vram_gb"], strict=True
        )
    }
    baselines: dict[tuple[str, str, float], tuple[int, float]] = {}
    out = []
    for row in ranking.itertuples(index=False):
        workload = by_name[row.workload]
        gpus, sharding = int(row.gpu_count), str(row.sharding)
        memory = _plausible_memory(str(row.gpu), stated.get((str(row.provider), str(row.sku), str(row.gpu))))
        card = usable_memory_gb(str(row.gpu), memory)  # per_gpu_gb tops out at the card (memory.py)
        per_gpu_gb = estimate_memory(workload.setup(gpus=gpus, sharding=sharding), card_gb=card).per_gpu_gb
        key = (workload.name, str(row.gpu), memory)
        if key not in baselines:
            high = max(
                workload.min_nodes, min(workload.max_nodes, min(512, workload.gpu_limit) // GPUS_PER_NODE)
            )
            scale = range(workload.min_nodes, high + 1) if GPUS_PER_NODE in offer_counts and high > 1 else []
            counts = sorted({1, *offer_counts, *(n * GPUS_PER_NODE for n in scale)})
            baselines[key] = _baseline(workload, str(row.gpu), memory, counts)
        base_gpus, base_rate = baselines[key]
        rate = _speed(workload, str(row.gpu), gpus, sharding).tokens_per_sec_per_gpu * gpus
        tokens = workload.training_tokens
        if gpus > base_gpus:
            rate = min(rate, base_rate * DATA_PARALLEL_EFFICIENCY * gpus / base_gpus)
            floor = min(tokens / (base_rate * 3600.0), MIN_USEFUL_RUN_HOURS)
            hours = max(tokens / (rate * 3600.0), floor)
        else:
            hours = tokens / (rate * 3600.0)
        per_checkpoint = workload.tokens_per_checkpoint
        if per_checkpoint is not None:
            checkpoints = int(checkpoint_count(workload.training_tokens, per_checkpoint))
        else:
            checkpoints = int(checkpoint_count(hours, workload.checkpoint_interval_hours))
        cost = checkpoint_cost(
            gpus=gpus,
            usd_per_gpu_hour=float(row.usd_per_gpu_hour),
            compute_hours=hours,
            checkpoints=checkpoints,
            checkpoint_gb=workload.checkpoint_gb(),
            model_gb=workload.model_download_gb(),
            dataset_gb=workload.dataset_gb(),
            nodes=int(row.nodes),
            spot=row.tier == "spot",
            community=bool(row.community),
            terms=workload.cost_terms,
        )
        out.append((per_gpu_gb, hours, round(cost.gpu_usd, 2), cost.cost_per_checkpoint_usd))
    return out


def _check_close(name: str, loop: np.ndarray, product: np.ndarray, atol: float = 0.0) -> float:
    """Largest relative difference; raises Disagreement beyond the tolerance."""
    if loop.shape != product.shape:
        raise Disagreement(f"{name}: loop has {loop.shape} values, product {product.shape}")
    if not np.allclose(loop, product, rtol=RELATIVE_TOLERANCE, atol=atol):
        worst = int(np.argmax(np.abs(loop - product)))
        raise Disagreement(f"{name}: loop {loop[worst]!r} != product {product[worst]!r} (row {worst})")
    scale = np.maximum(np.abs(product), 1e-300)
    return float(np.max(np.abs(loop - product) / scale)) if loop.size else 0.0


def check_agreement(
    workloads: list[Workload],
    offers: pd.DataFrame,
    sweep: pd.DataFrame,
    ranking: pd.DataFrame,
    memory_rows: list[tuple[int, int, int, str, float, bool]],
    cost_rows: list[tuple[float, float, float, float]],
) -> dict[str, float]:
    """Compare every loop result with the product's; returns the largest relative differences."""
    n_offers, n_counts, n_strategies = len(offers), len(GPU_COUNTS), len(SWEEP_STRATEGIES)
    count_at = {c: i for i, c in enumerate(GPU_COUNTS)}
    strategy_at = {s: i for i, s in enumerate(SWEEP_STRATEGIES)}
    # fit_sweep row order: setup, then GPU column (offer), then count, then strategy
    positions = np.array(
        [
            ((w * n_offers + o) * n_counts + count_at[c]) * n_strategies + strategy_at[s]
            for w, o, c, s, _, _ in memory_rows
        ],
        dtype=np.int64,
    )
    per_gpu = sweep["per_gpu_gb"].to_numpy(dtype=float)[positions]
    fits = sweep["fits"].to_numpy(dtype=bool)[positions]
    loop_fits = np.array([r[5] for r in memory_rows], dtype=bool)
    if not np.array_equal(fits, loop_fits):
        worst = int(np.flatnonzero(fits != loop_fits)[0])
        raise Disagreement(
            f"fits: loop says {loop_fits[worst]}, fit_sweep {fits[worst]} for {memory_rows[worst][:4]}"
        )
    loop_cost = np.array(cost_rows, dtype=float).reshape(-1, 4)
    return {
        "sweep_per_gpu_gb": _check_close(
            "fit_sweep per_gpu_gb", np.array([r[4] for r in memory_rows]), per_gpu
        ),
        "ranking_per_gpu_gb": _check_close(
            "ranking per_gpu_gb", loop_cost[:, 0], ranking["per_gpu_gb"].to_numpy(dtype=float)
        ),
        "ranking_hours": _check_close(
            "ranking hours", loop_cost[:, 1], ranking["hours"].to_numpy(dtype=float)
        ),
        # run cost is rounded to cents on both sides; allow the half-cent a last-bit difference can flip
        "ranking_run_cost_usd": _check_close(
            "ranking run_cost_usd", loop_cost[:, 2], ranking["run_cost_usd"].to_numpy(dtype=float), atol=0.01
        ),
        "ranking_cost_per_checkpoint_usd": _check_close(
            "ranking cost_per_checkpoint_usd",
            loop_cost[:, 3],
            ranking["cost_per_checkpoint_usd"].to_numpy(dtype=float),
        ),
    }


def measure(
    repeats: int = 5,
    *,
    loop_stride: int = 5,
    workloads: list[Workload] | None = None,
    archive: Path = SAMPLE_ARCHIVE,
    throughput_rows: int = THROUGHPUT_ROWS,
) -> list[Figure]:
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    workloads = workloads if workloads is not None else workload_variants()
    day, offers = sample_day(archive)
    configs = len(workloads) * len(offers) * len(GPU_COUNTS) * len(SWEEP_STRATEGIES)

    _timed_product(workloads, offers, day)  # warm-up: catalogs, architecture cache, imports
    sweep_times, product_times = [], []
    for _ in range(repeats):
        sweep, ranking, sweep_s, product_s = _timed_product(workloads, offers, day)
        sweep_times.append(sweep_s)
        product_times.append(product_s)
    sweep_s, product_s = statistics.median(sweep_times), statistics.median(product_times)

    offer_indexes = list(range(0, len(offers), max(1, loop_stride)))
    start = time.perf_counter()
    memory_rows = _loop_memory(workloads, offers, offer_indexes)
    loop_memory_s = time.perf_counter() - start
    start = time.perf_counter()
    cost_rows = _loop_costs(workloads, ranking, offers)
    loop_cost_s = time.perf_counter() - start
    differences = check_agreement(workloads, offers, sweep, ranking, memory_rows, cost_rows)

    loop_memory_full_s = loop_memory_s / len(memory_rows) * configs  # scaled to every offer
    loop_s = loop_memory_full_s + loop_cost_s
    common = {
        "workloads": len(workloads),
        "offers": len(offers),
        "offer_date": day.isoformat(),
        "gpu_counts": list(GPU_COUNTS),
        "strategies": list(SWEEP_STRATEGIES),
        "configurations": configs,
        "ranked_rows": len(ranking),
        "loop_configurations_run": len(memory_rows),
        "loop_us_per_configuration": round(loop_memory_s / len(memory_rows) * 1e6, 2),
        "loop_ranked_rows_s": round(loop_cost_s, 4),
        "max_relative_difference": differences,
        "repeats": repeats,
    }
    return [
        rate_figure(
            "sweep.configs_per_s",
            configs,
            "configs/s",
            seconds=product_s,
            baseline="plain per-row Python loop",
            baseline_seconds=loop_s,
            ratio_meaning="speed-up of fit_sweep + rank_offers over the loop",
            target=(
                Bound(on="value", op=">=", limit=CONFIGS_PER_S_TARGET),
                Bound(on="ratio", op=">=", limit=SPEEDUP_TARGET),
            ),
            details={
                **common,
                "product_s": round(product_s, 4),
                "fit_sweep_s": round(sweep_s, 4),
                "rank_offers_s": round(max(product_s - sweep_s, 0.0), 4),
                "loop_s": round(loop_s, 3),
            },
        ),
        rate_figure(
            "sweep.memory_fit_configs_per_s",
            configs,
            "configs/s",
            seconds=sweep_s,
            baseline="estimate_memory per configuration",
            baseline_seconds=loop_memory_full_s,
            ratio_meaning="speed-up of fit_sweep alone over the loop",
            details={**common, "fit_sweep_s": round(sweep_s, 4), "loop_s": round(loop_memory_full_s, 3)},
        ),
        throughput_figure(throughput_rows, min(THROUGHPUT_LOOP_ROWS, throughput_rows)),
    ]


def mixed_throughput_frame(rows: int, shape: ModelShape, seed: int = 0) -> pd.DataFrame:
    """``rows`` random configurations of one model (GPUs, counts, methods, shardings mixed)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        dict(
            gpu=rng.choice(["h100-sxm", "a100-80gb-pcie", "l40s", "b200"], rows),
            gpus=rng.choice([1, 2, 8, 16], rows),
            method=rng.choice(["full", "lora", "qlora"], rows),
            seq_len=2048,
            micro_batch=2,
            grad_checkpointing=True,
            precision="bf16-mixed",
            sharding=rng.choice(["none", "zero3"], rows),
            n_params=shape.n_params,
            n_active_params=shape.n_active_params,
            layers=shape.layers,
            hidden=shape.hidden,
            attn_width=shape.attn_width,
        )
    )


def throughput_figure(rows: int = THROUGHPUT_ROWS, loop_rows: int = THROUGHPUT_LOOP_ROWS) -> Figure:
    """``predict_frame`` over ``rows`` mixed configurations vs ``predict_throughput`` one at a time.

    The loop runs the first ``loop_rows`` rows, its time is scaled to all rows, and its numbers
    must equal the frame's (else Disagreement).
    """
    shape = ModelShape.of(resolve_model("meta-llama/Llama-3.1-8B"))
    frame = mixed_throughput_frame(rows, shape)
    predict_frame(frame.head(100))  # warm-up
    start = time.perf_counter()
    out = predict_frame(frame)
    frame_s = time.perf_counter() - start
    head = frame.head(loop_rows)
    start = time.perf_counter()
    loop = [
        predict_throughput(
            shape,
            r.method,
            r.gpu,
            int(r.gpus),
            int(r.seq_len),
            int(r.micro_batch),
            True,
            r.precision,
            r.sharding,
        ).tokens_per_sec_per_gpu
        for r in head.itertuples()
    ]
    loop_s = (time.perf_counter() - start) / len(head) * rows
    difference = _check_close(
        "predict_frame tokens/s",
        np.array(loop),
        out["tokens_per_sec_per_gpu"].to_numpy(dtype=float)[: len(head)],
    )
    return rate_figure(
        "sweep.throughput_rows_per_s",
        rows,
        "rows/s",
        seconds=frame_s,
        baseline="predict_throughput per row",
        baseline_seconds=loop_s,
        ratio_meaning="speed-up of predict_frame over the loop",
        # The unit test this replaces asked for 200,000 rows in under a second.
        target=(Bound(on="value", op=">=", limit=rows / 1.0),),
        details={"rows": rows, "loop_rows": len(head), "max_relative_difference": difference},
    )
