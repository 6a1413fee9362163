"""The throughput model over columns: the ranking's million-row sweep, one numpy pass per term.

:func:`predict_columns` looks the link bandwidth up once per distinct (GPU, count) and the
communication volume once per distinct (method, sharding, precision), then broadcasts them through
integer codes into one :class:`~gpuprice.models.throughput_core.Cases`; the same
:func:`~gpuprice.models.throughput_core.evaluate` as the scalar prediction does the rest.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from gpuprice.models.gpu_hardware import (
    FAMILY_CODE,
    GpuProfile,
    collective_busbw_gbs,
    fp32_share,
    gpu_profile,
)
from gpuprice.models.throughput_core import Cases, evaluate
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS, ThroughputParameters
from gpuprice.models.throughput_recipe import (
    SHARDED_STATES,
    check_config,
    comm_bytes_per_param,
    optimizer_step_bytes,
    precision_factor,
    step_comm_bytes_per_param,
)

FRAME_INPUT_COLUMNS = (
    "gpu",
    "gpus",
    "method",
    "seq_len",
    "micro_batch",
    "grad_checkpointing",
    "precision",
    "sharding",
    "n_params",
    "n_active_params",
    "layers",
    "hidden",
    "attn_width",
)


# Columns predict_frame passes on when present (cases_from_arrays reads them).
OPTIONAL_COLUMNS = (
    "compile",
    "grad_accum",
    "optimizer_bytes",
    "score_heads",
    "masked_heads",
    "mask_bytes",
    "fp32_attention",
    "adapter_bytes",
    "stream_bytes",
    "selective_flops",
    "unrouted_params",
)


FRAME_OUTPUT_COLUMNS = (
    "tokens_per_sec_per_gpu",
    "mfu",
    "hfu",
    "flops_per_token",
    "communication_share",
    "dequant_share",
)


def predict_frame(frame: pd.DataFrame, params: ThroughputParameters = CALIBRATED_PARAMETERS) -> pd.DataFrame:
    """Vectorised :func:`~gpuprice.models.throughput.predict_throughput` over a frame with
    FRAME_INPUT_COLUMNS (and optionally ``compile``: torch.compile or fused framework kernels,
    default False).

    Optional columns: ``grad_accum`` (micro-batches per optimizer step, default 1),
    ``optimizer_bytes`` (HBM bytes per parameter of one optimizer step, default foreach AdamW on
    the row's precision and sharding with hf's gradient clip:
    :func:`~gpuprice.models.throughput_recipe.optimizer_step_bytes`), ``score_heads``,
    ``masked_heads``, ``mask_bytes`` and ``fp32_attention`` (:mod:`~gpuprice.models.throughput_attention`),
    ``adapter_bytes`` (:mod:`~gpuprice.models.throughput_adapters`), ``stream_bytes``
    (:mod:`~gpuprice.models.throughput_fp32_stream`).
    Returns FRAME_OUTPUT_COLUMNS (tokens_per_sec_per_gpu, mfu, hfu, flops_per_token,
    communication_share, dequant_share) aligned with ``frame``.
    """
    missing = [c for c in FRAME_INPUT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"predict_frame: missing columns {missing}")
    names = [*FRAME_INPUT_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in frame.columns)]
    columns = {name: frame[name].to_numpy() for name in names}
    return pd.DataFrame(predict_columns(columns, params), index=frame.index)


def predict_columns(
    columns: Mapping[str, np.ndarray], params: ThroughputParameters = CALIBRATED_PARAMETERS
) -> dict[str, np.ndarray]:
    """:func:`predict_frame` on plain arrays (one per FRAME_INPUT_COLUMNS name, equal lengths).

    Link bandwidth is looked up once per distinct (GPU, count) and communication volume once per
    (method, sharding, precision), then broadcast: a million rows cost a few dozen numpy passes.
    """
    if len(columns["gpu"]) == 0:
        return {name: np.zeros(0) for name in FRAME_OUTPUT_COLUMNS}
    result = evaluate(cases_from_arrays(columns), params)
    return {name: getattr(result, name) for name in FRAME_OUTPUT_COLUMNS}


def _factorize(values: object) -> tuple[np.ndarray, list[str]]:
    """Integer codes and the distinct values (first-seen order) of one column."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object), sort=False)
    return codes, [str(u) for u in uniques]


def _link_bandwidth(
    gpu_codes: np.ndarray, profiles: list[GpuProfile], gpus: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's GPU count (float) and collective bus bandwidth (bytes/s), the bandwidth computed
    once per distinct (GPU, count) pair."""
    gpu_counts, count_codes = np.unique(np.asarray(gpus, dtype=np.int64), return_inverse=True)
    counts = gpu_counts.tolist()
    link_keys, link_codes = np.unique(
        gpu_codes.astype(np.int64) * len(counts) + count_codes, return_inverse=True
    )
    busbw_u = np.array(
        [
            collective_busbw_gbs(profiles[k // len(counts)], counts[k % len(counts)]) * 1e9
            for k in link_keys.tolist()
        ]
    )
    return gpu_counts[count_codes].astype(float), busbw_u[link_codes]


def _recipe_bytes(
    method: tuple[np.ndarray, list[str]],
    sharding: tuple[np.ndarray, list[str]],
    precision: tuple[np.ndarray, list[str]],
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's communication bytes per parameter per micro-batch and per optimizer step,
    computed once per distinct (method, sharding, precision)."""
    (method_codes, methods), (sharding_codes, shardings), (precision_codes, precisions) = (
        method,
        sharding,
        precision,
    )
    recipe = (method_codes.astype(np.int64) * len(shardings) + sharding_codes) * len(
        precisions
    ) + precision_codes
    recipe_keys, recipe_codes = np.unique(recipe, return_inverse=True)
    recipes = [
        (
            methods[k // (len(shardings) * len(precisions))],
            shardings[(k // len(precisions)) % len(shardings)],
            precisions[k % len(precisions)],
        )
        for k in recipe_keys.tolist()
    ]
    comm_u = np.array([comm_bytes_per_param(*r) for r in recipes])
    step_comm_u = np.array([step_comm_bytes_per_param(*r) for r in recipes])
    return comm_u[recipe_codes], step_comm_u[recipe_codes]


def _default_optimizer_bytes(
    sharding: tuple[np.ndarray, list[str]], precision: tuple[np.ndarray, list[str]]
) -> np.ndarray:
    """Each row's optimizer-step bytes per parameter when the frame gives none: predict_throughput's
    defaults (foreach AdamW, hf's gradient clip) for the row's precision and sharding, computed
    once per distinct pair."""
    (sharding_codes, shardings), (precision_codes, precisions) = sharding, precision
    table = np.array(
        [[optimizer_step_bytes("adamw", "foreach", p, "hf", s) for p in precisions] for s in shardings]
    )
    return table[sharding_codes, precision_codes]


def cases_from_arrays(columns: Mapping[str, np.ndarray]) -> Cases:
    """:class:`Cases` for non-empty FRAME_INPUT_COLUMNS arrays (plus the optional columns of
    :func:`predict_frame`); per-GPU and per-recipe values are computed once and broadcast."""
    size = len(columns["gpu"])
    gpu_codes, gpu_uniques = pd.factorize(np.asarray(columns["gpu"], dtype=object), sort=False)
    profiles = [gpu_profile(str(slug)) for slug in gpu_uniques]
    method = _factorize(columns["method"])
    precision_codes, precisions = precision = _factorize(columns["precision"])
    sharding_codes, shardings = sharding = _factorize(columns["sharding"])
    for method_name, sharding_name in ((m, s) for m in method[1] for s in shardings):
        check_config(method_name, sharding_name, 1, 1, 1)
    gpus, busbw = _link_bandwidth(gpu_codes, profiles, columns["gpus"])
    comm, step_comm = _recipe_bytes(method, sharding, precision)

    def per_gpu(values: list, dtype: type = float) -> np.ndarray:
        return np.asarray(values, dtype=dtype)[gpu_codes]

    def per_method(name: str) -> np.ndarray:
        return np.asarray([m == name for m in method[1]])[method[0]]

    def floats(name: str) -> np.ndarray:
        return np.broadcast_to(np.asarray(columns[name], dtype=float), (size,))

    def optional(name: str) -> np.ndarray | None:
        return floats(name) if name in columns else None

    return Cases(
        n_params=floats("n_params"),
        n_active=floats("n_active_params"),
        layers=floats("layers"),
        hidden=floats("hidden"),
        attn_width=floats("attn_width"),
        seq_len=floats("seq_len"),
        micro_batch=floats("micro_batch"),
        full=per_method("full"),
        qlora=per_method("qlora"),
        checkpointing=np.broadcast_to(np.asarray(columns["grad_checkpointing"], dtype=bool), (size,)),
        compiled=np.broadcast_to(np.asarray(columns.get("compile", False), dtype=bool), (size,)),
        precision_factor=np.where(
            per_method("qlora"),
            np.array([precision_factor(p, "qlora") for p in precisions])[precision_codes],
            np.array([precision_factor(p) for p in precisions])[precision_codes],
        ),
        fp32_share=per_gpu([fp32_share(p) for p in profiles]),
        peak_flops=per_gpu([p.peak_tflops * 1e12 for p in profiles]),
        has_fp8=per_gpu([p.has_fp8 for p in profiles], bool),
        memory_bw=per_gpu([p.memory_bandwidth_tbps * 1e12 for p in profiles]),
        family=per_gpu([FAMILY_CODE[p.family] for p in profiles], np.int64),
        gpus=gpus,
        busbw=busbw,
        comm_bytes_per_param=comm,
        score_heads=optional("score_heads"),
        masked_heads=optional("masked_heads"),
        adapter_bytes=optional("adapter_bytes"),
        stream_bytes=optional("stream_bytes"),
        selective_flops=optional("selective_flops"),
        unrouted_params=optional("unrouted_params"),
        mask_bytes=optional("mask_bytes"),
        fp32_attention=(
            np.broadcast_to(np.asarray(columns["fp32_attention"], dtype=bool), (size,))
            if "fp32_attention" in columns
            else None
        ),
        grad_accum=optional("grad_accum"),
        optimizer_bytes=(
            floats("optimizer_bytes")
            if "optimizer_bytes" in columns
            else _default_optimizer_bytes(sharding, precision)
        ),
        step_comm_bytes_per_param=step_comm,
        sharded_states=np.array([s in SHARDED_STATES for s in shardings], dtype=bool)[sharding_codes],
    )
