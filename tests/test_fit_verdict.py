"""Capacity in bytes as sold, the three verdicts, the margin setting and the error band (issue 33)."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from gpuprice.errors import BadInput
from gpuprice.models.catalog import get_gpu, gpu_slugs, usable_memory_gb
from gpuprice.models.fit_verdict import check_margin, judge, planning_gb, verdict_codes
from gpuprice.models.memory_band import band_of
from gpuprice.models.ranking import rank_offers
from gpuprice.models.workloads import Workload

DAY = dt.date(2026, 11, 2)
MIB = 2**20


@pytest.mark.parametrize(
    ("slug", "mib"),
    [
        ("a100-80gb-sxm", 81920),  # "80 GB" = 80 GiB (nvidia-smi memory.total)
        ("a100-40gb", 40960),
        ("h100-sxm", 81920),  # sold as 80 GB: 80 GiB, like the A100 (nvidia-smi shows 81559 MiB)
        ("h100-pcie", 81920),
        ("a100-80gb-pcie", 81920),
        ("h200-sxm", 143771),
        ("b200", 183359),
        ("l40s", 46068),  # 48 GiB GDDR6 with ECC on
        ("rtx-4090", 24564),
    ],
)
def test_usable_capacity_is_the_cards_bytes(slug: str, mib: int) -> None:
    assert get_gpu(slug).usable_memory_gb == pytest.approx(mib * MIB / 1e9, abs=1e-3)


def test_every_card_has_a_cited_capacity_at_least_its_sold_figure_minus_ecc() -> None:
    for slug in gpu_slugs():
        spec = get_gpu(slug)
        assert spec.memory_source
        # GiB-sized parts: never below the sold GB less the 1/16 ECC carve-out, never above GiB
        assert spec.memory_gb * 0.93 <= spec.usable_memory_gb <= spec.memory_gb * 2**30 / 1e9 + 1e-3, slug
    assert usable_memory_gb("gh200", 144.0) == pytest.approx(144 / 96 * get_gpu("gh200").usable_memory_gb)


def test_three_verdicts_and_headroom() -> None:
    assert judge(60.0, 85.9, 0.2).verdict == "fits"  # 25.9 GB free >= 17.2
    tight = judge(75.0, 85.9, 0.2)
    assert tight.verdict == "tight" and tight.fits and tight.headroom_gb == pytest.approx(10.9)
    assert tight.warning() is not None and tight.warning().startswith("tight-fit: 10.9 GB headroom")
    over = judge(86.0, 85.9, 0.2)
    assert over.verdict == "does_not_fit" and not over.fits and over.warning() is None
    assert judge(85.9, 85.9, 0.0).verdict == "fits"  # margin 0 judges the peak alone
    codes = verdict_codes(np.array([60.0, 75.0, 86.0]), np.array([85.9] * 3), np.array([0.2] * 3))
    assert codes.tolist() == [0, 1, 2]
    assert planning_gb(80.0, 0.2) == pytest.approx(100.0)


def test_a_band_crossing_the_capacity_says_so() -> None:
    verdict = judge(80.0, 85.9, 0.0, band=(70.0, 95.0))
    assert verdict.band_crosses_capacity and "crosses the card's capacity" in verdict.note()
    assert not judge(60.0, 85.9, 0.0, band=(55.0, 65.0)).band_crosses_capacity


@pytest.mark.parametrize("margin", [-0.1, 0.95, float("nan")])
def test_margin_outside_zero_to_point_nine_is_bad_input(margin: float) -> None:
    with pytest.raises(BadInput, match=r"0 to 0\.9"):
        check_margin(margin)


def test_cli_margin_is_one_line_exit_2(cli) -> None:
    result = cli("fit", "--params-b", "7", "--method", "lora", "--margin", "1.2")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1 and "0 to 0.9" in result.err


def test_fit_json_shows_verdict_band_and_margin(cli) -> None:
    args = ("fit", "--model", "meta-llama/Llama-3.1-8B", "--method", "lora", "--micro-batch", "5")
    tight = json.loads(cli(*args, "--grad-checkpointing", "--gpu", "a100-40gb", "--json").out)
    assert tight["verdict"] == "tight" and tight["fits"] is True and tight["margin"] == 0.2
    assert tight["gpu_memory_gb"] == pytest.approx(42.95, abs=1e-3)
    # per_gpu_gb tops out at the card (the cached loss regions give way) and so does the band's top
    assert tight["band_gb"]["low"] < tight["per_gpu_gb"] <= tight["band_gb"]["high"] == 42.95
    roomy = json.loads(
        cli(*args, "--grad-checkpointing", "--gpu", "a100-40gb", "--margin", "0", "--json").out
    )
    assert roomy["verdict"] == "fits" and roomy["margin"] == 0


def test_estimate_json_carries_the_verdict_and_band(cli) -> None:
    result = cli(
        "estimate",
        "--model",
        "meta-llama/Llama-3.1-8B",
        "--method",
        "lora",
        "--gpu",
        "h100-sxm",
        "--tokens",
        "1B",
        "--usd-per-gpu-hour",
        "2",
        "--json",
    )
    data = json.loads(result.out)
    assert data["verdict"] == "fits" and data["margin"] == 0.2 and data["gpu_memory_gb"] == 85.899
    assert set(data["band_gb"]) == {"low", "high"}


def _offer(sku: str, gpu: str) -> dict[str, object]:
    return dict(
        snapshot_date=DAY,
        provider="lambda",
        sku=sku,
        gpu=gpu,
        gpu_raw=gpu,
        gpu_count=1,
        vram_gb=None,
        tier="on_demand",
        community=False,
        commitment_months=None,
        region=None,
        usd_per_gpu_hour=1.0,
        usd_per_instance_hour=1.0,
        available=True,
        effective_from=None,
        price_basis="list",
    )


def test_rank_keeps_tight_offers_with_a_warning_and_drops_what_does_not_fit() -> None:
    import pandas as pd

    def job(micro_batch: int) -> Workload:
        return Workload.model_validate(
            dict(
                name=f"mb{micro_batch}",
                model="meta-llama/Llama-3.1-8B",
                method="lora",
                micro_batch=micro_batch,
                grad_checkpointing=True,
                tokens=100e6,
                checkpoint_interval_tokens=10e6,
            )
        )

    offers = pd.DataFrame([_offer("a40", "a100-40gb"), _offer("a80", "a100-80gb-sxm")])
    ranked = rank_offers(offers, [job(5)], DAY)
    by_sku = {row["sku"]: row for row in ranked.to_dict(orient="records")}
    assert by_sku["a40"]["verdict"] == "tight" and by_sku["a80"]["verdict"] == "fits"
    assert any(w.startswith("tight-fit:") for w in by_sku["a40"]["warnings"])
    assert not any(w.startswith("tight-fit:") for w in by_sku["a80"]["warnings"])
    band = band_of("lora")
    assert by_sku["a80"]["band_high_gb"] == pytest.approx(by_sku["a80"]["per_gpu_gb"] * (1 + band.high))
    assert "a40" not in set(rank_offers(offers, [job(7)], DAY)["sku"])  # peak above the card


def test_batch_of_measured_runs_ignores_columns_that_are_no_options(cli, tmp_path) -> None:
    # A table of measured runs carries the measurement and its source; near-misses stay errors.
    rows = tmp_path / "measured.csv"
    rows.write_text(
        "model,method,seq_len,grad_checkpointing,attention,memory_metric,gpu,measured_gb,source\n"
        "Qwen/Qwen-7B,lora,2048,true,flash,reserved,a100-80gb-sxm,29.8,ms-swift Benchmark.md\n",
        encoding="utf-8",
    )
    for command in ("fit", "estimate"):
        extra = ("--tokens", "1B", "--usd-per-gpu-hour", "2") if command == "estimate" else ()
        result = cli(command, "--batch", str(rows), *extra)
        assert result.code == 0, result.err
        assert "ignoring columns that are not options: measured_gb, source" in result.err
        data = json.loads(result.out.splitlines()[0])
        assert data["verdict"] == "fits" and data["memory_metric"] == "reserved" and "band_gb" in data


def test_estimate_json_has_a_throughput_band(cli) -> None:
    args = ("estimate", "--model", "meta-llama/Llama-3.1-8B", "--method", "lora", "--gpu", "h100-sxm")
    data = json.loads(cli(*args, "--tokens", "1B", "--usd-per-gpu-hour", "2", "--json").out)
    band = data["tokens_per_sec_band"]
    assert band["low"] < data["tokens_per_sec_per_gpu"] < band["high"]
    assert band["validation"].startswith("out-of-sample")
