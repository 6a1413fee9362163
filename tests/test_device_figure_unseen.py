"""The figure the verdict judges, scored out of sample on the two unseen sources that report what
the card held beside the allocator's peak: fms-acceleration's nvidia-smi readings
(``tests/data/measured_device_gap_fms.csv``) and gpjt's reserved peaks (in its rows' notes).

The model's allocated peak is close on both; its allocator slack (fragmentation + context) is not:
the device and reserved figures run low. These tests pin that shortfall, which explains the
out-of-memory runs still judged to fit (``models/memory_calibration.md``, "The verdict's figure,
out of sample"); a change to the device figure must update them and that section together."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from gpuprice.models.calibration.memory_fit import Measured, select_rows
from gpuprice.models.calibration.memory_report import HOLDOUTS
from gpuprice.models.memory import GB, estimate_memory

DATA = Path(__file__).parent / "data"
MIB = 2**20


def _holdout(name_part: str) -> list[Measured]:
    (path,) = [p for name, p in HOLDOUTS.items() if name_part in name]
    return select_rows(path).measured


def _figure(m: Measured, metric: str) -> float:
    return estimate_memory(m.setup.model_copy(update={"memory_metric": metric, "margin": 0.0})).per_gpu_gb


def _fms_readings() -> dict[tuple[str, str, int, int], tuple[float, float]]:
    """(model, method, GPUs, micro-batch) -> (torch peak allocated GB, nvidia-smi GB)."""
    with (DATA / "measured_device_gap_fms.csv").open() as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {
            (r["model"], r["method"], int(r["num_gpus"]), int(r["micro_batch"])): (
                int(r["mem_peak_torch_mem_alloc_in_bytes"]) / GB,
                float(r["mem_nvidia_mem_reserved_mib"]) * MIB / GB,
            )
            for r in rows
        }


@pytest.fixture(scope="module")
def fms() -> list[tuple[Measured, float, float]]:
    readings = _fms_readings()
    runs = [
        (m, *readings[(m.row["model"], m.setup.method, m.setup.gpus, m.setup.micro_batch)])
        for m in _holdout("fms")
    ]
    assert len(runs) == len(readings) == 23  # every completed run has both readings
    return runs


def test_fms_holdout_rows_are_the_tables_allocated_peaks(fms):
    # The holdout's measured value is the same table's torch peak (GB), so the two files agree.
    for m, allocated_gb, _ in fms:
        assert m.gb == pytest.approx(allocated_gb, abs=0.01)


def test_fms_device_figure_runs_low_by_the_allocator_gap(fms):
    device = np.array([_figure(m, "device") for m, _, _ in fms])
    smi = np.array([s for _, _, s in fms])
    allocated = np.array([_figure(m, "allocated") for m, _, _ in fms])
    measured_allocated = np.array([a for _, a, _ in fms])
    errors = device / smi - 1
    # nvidia-smi sampled once a second (benchmark.py --log_nvidia_smi, memory_log_interval_secs 1),
    # minus the first reading, averaged over the GPUs: a lower bound of the device peak, and still
    # the device figure is below it: -9.5 % median, 22 of 23 within 20 %.
    assert -0.12 < np.median(errors) < -0.06
    assert np.mean(np.abs(errors) <= 0.20) >= 0.9
    # The tensors are counted: the allocated figure is within 3 % (median) of the torch peak.
    assert abs(np.median(allocated / measured_allocated - 1)) < 0.03
    # The shortfall is the gap above allocated: measured 3.8-20.0 GB (median 6.5), the model's
    # 1.9-5.5 GB (median 3.4: fragmentation x the pool + context), the smaller in 22 of 23.
    measured_gap = smi - measured_allocated
    model_gap = device - allocated
    assert np.median(measured_gap) > 1.5 * np.median(model_gap)
    assert np.sum(model_gap < measured_gap) >= 21


def test_fms_gap_is_larger_over_two_gpus(fms):
    gaps = {1: [], 2: []}
    for m, allocated_gb, smi_gb in fms:
        gaps[m.setup.gpus].append(smi_gb - allocated_gb)
    # FSDP over 2 GPUs (NCCL's buffers, the all-gather stream's pool) vs one GPU: 7.8 vs 5.5 GB.
    assert np.median(gaps[2]) > np.median(gaps[1]) + 1.0


def test_gpjt_reserved_figure_runs_low_under_zero3():
    # the default allocator's sweeps (PYTORCH_CUDA_ALLOC_CONF unset); the one run with expandable
    # segments is tested below
    runs = [m for m in _holdout("gpjt") if "with-expandable-segments" not in m.source]
    reserved, allocated, measured_reserved, measured_allocated, sharded_recompute = [], [], [], [], []
    for m in runs:
        found = re.search(r"memory active peak (\d+) MiB.*?reserved peak (\d+) MiB", m.row["notes"])
        assert found, m.row["notes"][-200:]
        measured_allocated.append(int(found[1]) * MIB / GB)
        measured_reserved.append(int(found[2]) * MIB / GB)
        reserved.append(_figure(m, "reserved"))
        allocated.append(_figure(m, "allocated"))
        sharded_recompute.append(m.setup.gpus == 8 and m.setup.activation_checkpointing == "full")
    reserved_errors = np.array(reserved) / np.array(measured_reserved) - 1
    allocated_errors = np.array(allocated) / np.array(measured_allocated) - 1
    assert len(runs) == 27
    # Allocated: -3.6 % median. Reserved (DeepSpeed ZeRO-3, no expandable segments: reserved
    # 1.07-1.57 x allocated): -19 % median; 8 GPUs with recomputation -17 to -39 %.
    assert abs(np.median(allocated_errors)) < 0.05
    assert -0.23 < np.median(reserved_errors) < -0.15
    assert np.all(reserved_errors[np.array(sharded_recompute)] < -0.15)
