"""The throughput error band (issue 33): per method, from runs whose source family the constants
never saw, widened on GPUs whose family borrows another family's efficiency."""

from __future__ import annotations

import json

import pytest

from gpuprice.models.calibration.throughput_band_table import EXCLUDED_FAMILIES, borrowed_family_widening
from gpuprice.models.throughput_band import BAND_PATH, band_for_gpu, throughput_band
from gpuprice.models.throughput_parameters import CALIBRATED_PARAMETERS


def test_each_fine_tuning_method_has_its_own_band_from_enough_runs() -> None:
    bands = json.loads(BAND_PATH.read_text(encoding="utf-8"))["bands"]
    for method in ("full", "lora", "qlora"):
        band = throughput_band(1000.0, method=method)
        assert band["runs_like"] == method and band["runs"] >= 12, method
        assert band["low_pct"] == pytest.approx(100 * bands[method]["low"], abs=0.05)
    assert throughput_band(1000.0, pretraining=True)["runs_like"] == "pretrain"
    assert throughput_band(1000.0, method="unknown")["runs_like"] == "finetune"


def test_a_borrowed_gpu_family_gets_a_wider_band_than_a_measured_one() -> None:
    assert CALIBRATED_PARAMETERS.borrowed_from("ampere_datacenter") is None
    assert CALIBRATED_PARAMETERS.borrowed_from("geforce") == "ampere_datacenter"
    assert CALIBRATED_PARAMETERS.borrowed_from("turing") == "ampere_datacenter"  # via workstation Ampere
    measured = band_for_gpu(1000.0, "lora", "a100-80gb-sxm")
    borrowed = band_for_gpu(1000.0, "lora", "rtx-4090")
    assert "borrowed_efficiency_from" not in measured
    assert borrowed["borrowed_efficiency_from"] == "ampere_datacenter"
    assert borrowed["low"] < measured["low"] < 1000.0 < measured["high"] < borrowed["high"]
    assert borrowed["widened_pct"] == pytest.approx(100 * borrowed_family_widening(), abs=0.05)
    assert 0.05 < borrowed_family_widening() < 0.5  # Ampere vs Hopper efficiencies, not a free knob


def test_families_left_out_of_the_band_say_why() -> None:
    shipped = json.loads(BAND_PATH.read_text(encoding="utf-8"))
    assert shipped["excluded_families"] == EXCLUDED_FAMILIES
    assert all(len(reason) > 40 for reason in EXCLUDED_FAMILIES.values())
    assert "family" in shipped["validation"] and "holdout" in shipped["validation"]
