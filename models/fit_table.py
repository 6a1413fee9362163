"""The memory-fit table the warehouse stores: every workload x GPU x count x strategy."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from gpuprice.models.catalog import load_gpu_catalog
from gpuprice.models.choices import SWEEP_STRATEGIES
from gpuprice.models.memory import fit_sweep
from gpuprice.models.workloads import Workload

# Counts providers sell: single nodes of 1-8 GPUs, and whole 8-GPU nodes for multi-node runs.
GPU_COUNTS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def memory_fit_table(
    workloads: Sequence[Workload],
    gpu_counts: Sequence[int] = GPU_COUNTS,
    strategies: Sequence[str] = SWEEP_STRATEGIES,
) -> pd.DataFrame:
    """One vectorised sweep; columns as the warehouse table ``memory_fit`` (without computed_at).

    Each workload only at the GPU counts its limits allow (``max_gpus``, ``max_nodes`` whole
    nodes): a 4-node job is never told it fits "512x a10 · zero3"."""
    catalog = load_gpu_catalog()
    # Each card's usable 1e9 bytes (an "80 GB" A100 holds 85.9e9): what the predicted peaks count.
    memory = dict(zip(catalog["slug"].astype(str), catalog["usable_memory_gb"].astype(float)))
    sweep = fit_sweep([w.setup() for w in workloads], memory, gpu_counts, strategies)
    names = pd.Series([w.name for w in workloads])
    index = sweep["setup_index"].to_numpy()
    limits = pd.Series([w.gpu_limit for w in workloads]).iloc[index].to_numpy()
    sweep.insert(0, "workload", names.iloc[index].to_numpy())
    within = sweep["gpu_count"].to_numpy() <= limits
    return sweep.loc[within].drop(columns=["setup_index"]).reset_index(drop=True)
