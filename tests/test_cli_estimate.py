"""gpuprice estimate / workloads / rank, called exactly as the contract writes them."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import pytest

from conftest import D1, make_offer

# seed-guide.md section 4: (model options, config, hours, GPUs, $/GPU-hour, GPU-hours, cost).
GUIDE_ROWS = [
    (["--params-b", "70", "--method", "qlora"], "a100-80gb-sxm", 1, 0.92, 10, 10, 9.20),
    (["--params-b", "70", "--method", "qlora"], "h100-sxm", 1, 2.32, 10, 10, 23.20),
    (["--params-b", "70", "--method", "lora"], "b200", 1, 4.61, 24, 24, 110.64),
    (["--params-b", "70", "--method", "lora"], "h200-sxm", 2, 3.07, 12, 24, 73.68),
    (
        ["--params-b", "70", "--method", "full", "--optimizer", "adamw8bit"],
        "h200-sxm",
        8,
        3.07,
        21,
        168,
        515.76,
    ),
    (["--params-b", "70", "--method", "full"], "b200", 8, 4.61, 21, 168, 774.48),
]
CONTRACT_ESTIMATE = {"tokens_per_sec_per_gpu", "mfu", "hours", "gpu_hours", "cost_usd"}
CONTRACT_RANK = {
    "rank",
    "provider",
    "gpu",
    "gpu_count",
    "tier",
    "community",
    "usd_per_gpu_hour",
    "per_gpu_gb",
    "hours",
    "run_cost_usd",
    "cost_per_checkpoint_usd",
    "total_cost_usd",
    "price_basis",
    "observed_on",
    "price_age_days",
    "warnings",
}


@pytest.fixture(autouse=True)
def _no_user_workloads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUPRICE_WORKLOADS", raising=False)


def one_line_error(res, code: int = 2) -> str:
    assert res.code == code, (res.out, res.err)
    assert len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err
    return res.err


# ----------------------------------------------------------------------------- estimate
@pytest.mark.parametrize(("model", "gpu", "gpus", "price", "hours", "gpu_hours", "cost"), GUIDE_ROWS)
def test_estimate_hours_reproduces_the_guide_table(
    cli, home, model, gpu, gpus, price, hours, gpu_hours, cost
) -> None:
    res = cli(
        "estimate",
        *model,
        "--gpu",
        gpu,
        "--gpus",
        str(gpus),
        "--hours",
        str(hours),
        "--usd-per-gpu-hour",
        str(price),
        "--json",
    )
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert set(out) >= CONTRACT_ESTIMATE
    assert (out["hours"], out["gpu_hours"], out["cost_usd"]) == (hours, gpu_hours, cost)
    assert out["tokens"] == pytest.approx(out["tokens_per_sec_per_gpu"] * gpus * hours * 3600, rel=1e-4)


def test_estimate_tokens_gives_hours(cli, home) -> None:
    res = cli(
        "estimate",
        "--model",
        "meta-llama/Llama-3.1-8B",
        "--method",
        "qlora",
        "--gpu",
        "a100-80gb-sxm",
        "--tokens",
        "100000000",
        "--usd-per-gpu-hour",
        "1.29",
        "--json",
    )
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["hours"] == pytest.approx(1e8 / (out["tokens_per_sec_per_gpu"] * 3600), rel=1e-3)
    assert out["cost_usd"] == pytest.approx(out["hours"] * 1.29, abs=0.01)
    assert 0.15 < out["mfu"] < 0.6 and out["grad_checkpointing"] is True and out["fits"] is True
    with_suffix = json.loads(
        cli(
            "estimate",
            "--model",
            "meta-llama/Llama-3.1-8B",
            "--method",
            "qlora",
            "--gpu",
            "a100-80gb-sxm",
            "--tokens",
            "100M",
            "--json",
        ).out
    )
    assert with_suffix["hours"] == out["hours"]
    no_price = json.loads(
        cli("estimate", "--params-b", "7", "--method", "lora", "--gpu", "l40s", "--hours", "2", "--json").out
    )
    assert no_price["cost_usd"] is None and no_price["gpu_hours"] == 2


def test_estimate_more_gpus_is_faster_in_wall_time(cli, home) -> None:
    args = (
        "--model",
        "meta-llama/Llama-3.1-8B",
        "--method",
        "full",
        "--gpu",
        "h100-sxm",
        "--tokens",
        "1e9",
        "--micro-batch",
        "2",
        "--grad-checkpointing",
        "--json",
    )
    one = json.loads(cli("estimate", *args).out)
    eight = json.loads(cli("estimate", *args, "--gpus", "8", "--sharding", "zero3").out)
    assert eight["hours"] < one["hours"] / 6


def test_estimate_table_output(cli, home) -> None:
    res = cli(
        "estimate",
        "--params-b",
        "13",
        "--method",
        "qlora",
        "--gpu",
        "rtx-4090",
        "--hours",
        "5",
        "--usd-per-gpu-hour",
        "0.69",
    )
    assert res.code == 0, res.err
    assert "tokens/s per GPU" in res.out and "$3.45" in res.out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--params-b", "7", "--method", "lora", "--hours", "1"], "--gpu"),
        (["--params-b", "7", "--method", "lora", "--gpu", "h100", "--hours", "1"], "h100-sxm"),
        (["--params-b", "7", "--method", "lora", "--gpu", "h100-sxm"], "--tokens"),
        (
            ["--params-b", "7", "--method", "lora", "--gpu", "h100-sxm", "--tokens", "1e6", "--hours", "1"],
            "--hours",
        ),
        (["--params-b", "7", "--method", "lora", "--gpu", "h100-sxm", "--hours", "0"], "--hours"),
        (["--params-b", "7", "--method", "lora", "--gpu", "h100-sxm", "--tokens", "10^12"], "10^12"),
        (["--params-b", "7", "--method", "lora", "--gpu", "h100-sxm", "--hours", "nan"], "nan"),
        (
            [
                "--params-b",
                "7",
                "--method",
                "lora",
                "--gpu",
                "h100-sxm",
                "--hours",
                "1",
                "--usd-per-gpu-hour",
                "-2",
            ],
            "price",
        ),
        (["--params-b", "7", "--method", "dora", "--gpu", "h100-sxm", "--hours", "1"], "dora"),
        (
            ["--model", "meta-llama/Llama-9", "--method", "lora", "--gpu", "h100-sxm", "--hours", "1"],
            "Llama-9",
        ),
    ],
)
def test_estimate_bad_input(cli, home, args, fragment) -> None:
    assert fragment in one_line_error(cli("estimate", *args))


def test_estimate_batch(cli, home, tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(
        "model,method,gpu,gpus,hours,tokens,usd_per_gpu_hour\n"
        "meta-llama/Llama-3.1-8B,qlora,a100-80gb-sxm,1,10,,0.92\n"
        "meta-llama/Llama-3.1-70B,full,h200-sxm,8,21,,3.07\n"
        "meta-llama/Llama-3.1-8B,lora,l40s,1,,5e7,\n"
    )
    res = cli("estimate", "--batch", str(path))
    assert res.code == 0, res.err
    lines = [json.loads(line) for line in res.out.splitlines()]
    assert [line["cost_usd"] for line in lines] == [9.20, 515.76, None]
    assert lines[2]["hours"] == pytest.approx(5e7 / (lines[2]["tokens_per_sec_per_gpu"] * 3600), rel=1e-3)
    # Command-line values fill what the file leaves out.
    res = cli("estimate", "--batch", str(path), "--usd-per-gpu-hour", "1.0")
    assert json.loads(res.out.splitlines()[2])["cost_usd"] is not None
    path.write_text("model,method,gpu,hours\nmeta-llama/Llama-3.1-8B,lora,h100-sxm,ten\n")
    err = one_line_error(cli("estimate", "--batch", str(path)))
    assert "line 2" in err and "ten" in err
    # a column that is no option (a measured value, a note) is ignored with a note; a near-miss is an error
    path.write_text("model,method,gpu,hours,colour\nmeta-llama/Llama-3.1-8B,lora,h100-sxm,1,red\n")
    ignored = cli("estimate", "--batch", str(path))
    assert ignored.code == 0 and "ignoring columns that are not options: colour" in ignored.err
    path.write_text("model,method,gpu,hour\nmeta-llama/Llama-3.1-8B,lora,h100-sxm,1\n")
    err = one_line_error(cli("estimate", "--batch", str(path)))
    assert "hour" in err and "hours" in err


def test_estimate_node_network_sets_the_fabric_between_nodes(cli, home, tmp_path: Path) -> None:
    # Llama-2-70B full fine-tuning, ZeRO-3 over 4 A100 nodes: a slower network between the nodes
    # means a larger communication share and fewer tokens/s; inside one node it changes nothing.
    # (DeepSpeed's ZeRO++ blog measured the same 138B job at 100/200/400/800 Gbps per node:
    # tests/test_throughput_multinode.py scores the model on those runs.)
    job = ["--model", "meta-llama/Llama-2-70b-hf", "--method", "full", "--sharding", "zero3"]
    job += ["--grad-checkpointing", "--seq-len", "8192", "--gpu", "a100-80gb-sxm", "--tokens", "1B"]
    job += ["--usd-per-gpu-hour", "2", "--json"]

    def run(*extra: str) -> dict:
        result = cli("estimate", *job, *extra)
        assert result.code == 0, result.err
        return json.loads(result.out)

    default, slow, fast = (
        run("--gpus", "32"),
        run("--gpus", "32", "--node-network-gbps", "100"),
        run("--gpus", "32", "--node-network-gbps", "3200"),
    )
    assert default["node_network_gbps"] is None and slow["node_network_gbps"] == 100.0
    assert slow["tokens_per_sec_per_gpu"] < default["tokens_per_sec_per_gpu"] < fast["tokens_per_sec_per_gpu"]
    assert slow["communication_share"] > default["communication_share"] > fast["communication_share"]
    assert slow["hours"] > default["hours"] and slow["cost_usd"] > default["cost_usd"]
    one_node = run("--gpus", "8")
    assert (
        run("--gpus", "8", "--node-network-gbps", "100")["tokens_per_sec_per_gpu"]
        == one_node["tokens_per_sec_per_gpu"]
    )
    # a batch column, and a value that is no network
    path = tmp_path / "runs.csv"
    path.write_text(
        "model,method,sharding,grad_checkpointing,seq_len,gpu,gpus,tokens,node_network_gbps\n"
        "meta-llama/Llama-2-70b-hf,full,zero3,true,8192,a100-80gb-sxm,32,1B,100\n"
    )
    row = json.loads(cli("estimate", "--batch", str(path)).out)
    assert row["tokens_per_sec_per_gpu"] == slow["tokens_per_sec_per_gpu"]
    bad = cli("estimate", *job, "--gpus", "32", "--node-network-gbps", "0")
    assert bad.code == 2 and "--node-network-gbps 0 is no network between nodes" in one_line_error(bad)


# ----------------------------------------------------------------------------- workloads
def test_workloads_lists_the_catalog(cli, home) -> None:
    res = cli("workloads", "--json")
    assert res.code == 0, res.err
    workloads = {w["name"]: w for w in json.loads(res.out)}
    assert "llama-3.1-70b-qlora" in workloads
    assert workloads["llama-3.1-70b-qlora"]["method"] == "qlora"
    assert "storage_usd_per_gb_month" in workloads["llama-3.1-8b-lora"]["cost_terms"]
    table = cli("workloads")
    assert table.code == 0 and "llama-3.1-8b-continued-pretraining" in table.out


def test_workloads_reports_a_broken_user_file(
    cli, home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "workloads:\n  - name: x\n    model: meta-llama/Llama-3.1-8B\n    method: lora\n    tokens: many\n"
        "    checkpoint_interval_hours: 1\n"
    )
    monkeypatch.setenv("GPUPRICE_WORKLOADS", str(path))
    err = one_line_error(cli("workloads"))
    assert str(path) in err and "line 5" in err and "tokens" in err


# ----------------------------------------------------------------------------- rank
@pytest.fixture
def published(home: Path) -> Path:
    from gpuprice.settings import Settings
    from gpuprice.warehouse.connection import connect_writer
    from gpuprice.warehouse.publish import publish_analytics_copy
    from gpuprice.warehouse.writes import record_provider_run, replace_snapshot_partition

    con = connect_writer(Settings.from_env().warehouse_path)
    offers = [
        make_offer(),
        make_offer(sku="gpu_1x_a100", gpu="a100-80gb-sxm", gpu_raw="A100 80GB", usd_per_gpu_hour=1.29),
        make_offer(sku="gpu_8x_h100", gpu_count=8, usd_per_gpu_hour=2.99),
        make_offer(sku="gpu_1x_mystery", gpu="unknown", gpu_raw="Mystery 9000", usd_per_gpu_hour=0.5),
    ]
    replace_snapshot_partition(
        con,
        provider="lambda",
        snapshot_date=D1,
        source="archive",
        raw_sha256=None,
        parser_version=None,
        offers=offers,
    )
    import datetime as dt

    record_provider_run(
        con,
        provider="lambda",
        snapshot_date=D1,
        source="archive",
        status="success",
        offers=4,
        report=None,
        error=None,
        started_at=dt.datetime.now(dt.UTC),
    )
    publish_analytics_copy(con, Settings.from_env().warehouse_path, Settings.from_env().analytics_path)
    con.close()
    return home


def test_rank_json_contract(cli, published) -> None:
    res = cli("rank", "--workload", "llama-3.1-70b-qlora", "--date", D1.isoformat(), "--format", "json")
    assert res.code == 0, res.err
    rows = json.loads(res.out)
    assert rows and all(set(r) >= CONTRACT_RANK for r in rows)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    costs = [r["cost_per_checkpoint_usd"] for r in rows]
    assert costs == sorted(costs)
    assert {r["gpu"] for r in rows} <= {"h100-sxm", "a100-80gb-sxm"}
    assert all(isinstance(r["warnings"], list) for r in rows)
    eight = next(r for r in rows if r["gpu_count"] == 8)
    # 70B in 4 bits at micro-batch 1 fits one 80 GB card (the catalog's one verdict): no sharding,
    # and renting the whole node is marked.
    assert eight["sharding"] == "none" and any(w.startswith("whole-node:") for w in eight["warnings"])
    small = json.loads(
        cli("rank", "--workload", "llama-3.1-8b-qlora", "--date", D1.isoformat(), "--format", "json").out
    )
    eight = next(r for r in small if r["gpu_count"] == 8)
    assert any(w.startswith("whole-node:") for w in eight["warnings"])


def test_rank_top_csv_and_table(cli, published) -> None:
    res = cli(
        "rank", "--workload", "llama-3.1-8b-lora", "--date", D1.isoformat(), "--top", "2", "--format", "csv"
    )
    assert res.code == 0, res.err
    rows = list(csv.DictReader(io.StringIO(res.out)))
    assert len(rows) == 2 and rows[0]["rank"] == "1"
    assert "\r" not in res.out and res.out.count("\n") == 3
    table = cli("rank", "--workload", "llama-3.1-8b-lora", "--date", D1.isoformat())
    assert table.code == 0 and "lambda" in table.out


def test_rank_nothing_fits_is_not_an_error(cli, published) -> None:
    res = cli("rank", "--workload", "llama-3.1-70b-full-adamw", "--date", D1.isoformat(), "--format", "json")
    assert res.code == 0, res.err
    rows = json.loads(res.out)
    assert all(r["gpu_count"] >= 8 for r in rows)  # only whole nodes can combine for a 70B full fine-tune


def test_rank_bad_input(cli, home, published) -> None:
    err = one_line_error(cli("rank", "--workload", "llama-3.1-70b-qlroa"))
    assert "llama-3.1-70b-qlora" in err
    assert "2026-02-30" in one_line_error(
        cli("rank", "--workload", "llama-3.1-8b-lora", "--date", "2026-02-30")
    )
    assert "yaml" in one_line_error(cli("rank", "--workload", "llama-3.1-8b-lora", "--format", "yaml"))
    assert "--top" in one_line_error(cli("rank", "--workload", "llama-3.1-8b-lora", "--top", "0"))
    assert "abc" in one_line_error(cli("rank", "--workload", "llama-3.1-8b-lora", "--top", "abc"))


def test_rank_old_prices_only_with_include_stale(cli, published) -> None:
    """Lambda's page of D1 is 20 days old on D1 + 20: not current, so nothing is ranked (stderr says
    which provider is too old and by how much); --include-stale shows it last, marked."""
    import datetime as dt

    later = (D1 + dt.timedelta(days=20)).isoformat()
    res = cli("rank", "--workload", "llama-3.1-8b-lora", "--date", later, "--format", "json")
    assert res.code == 0 and json.loads(res.out) == []
    assert "older than 14 days (lambda 20 days)" in res.err and "--include-stale" in res.err
    shown = json.loads(
        cli(
            "rank", "--workload", "llama-3.1-8b-lora", "--date", later, "--format", "json", "--include-stale"
        ).out
    )
    assert shown and all(r["price_age_days"] == 20 and "price_age" in r["excluded_by"] for r in shown)
    assert all(any(w.startswith("stale-price:") for w in r["warnings"]) for r in shown)
    assert [r["rank"] for r in shown] == list(range(1, len(shown) + 1))
    wider = cli(
        "rank",
        "--workload",
        "llama-3.1-8b-lora",
        "--date",
        later,
        "--format",
        "json",
        "--max-price-age-days",
        "30",
    )
    assert [r["price_age_days"] for r in json.loads(wider.out)][:1] == [20]
    for bad in ("-1", "abc", "1.5", "nan"):
        assert bad in one_line_error(
            cli("rank", "--workload", "llama-3.1-8b-lora", "--max-price-age-days", bad)
        )


def test_rank_without_a_warehouse(cli, home) -> None:
    err = one_line_error(cli("rank", "--workload", "llama-3.1-8b-lora"))
    assert "warehouse at" in err and "gpuprice run" in err


# ----------------------------------------------------------------------------- rank any job (issue 14)
JOB = (
    "--model",
    "meta-llama/Llama-3.1-8B",
    "--method",
    "lora",
    "--micro-batch",
    "4",
    "--grad-checkpointing",
    "--tokens",
    "100M",
)


def _rank_json(cli, *args: str) -> list[dict]:
    res = cli("rank", *args, "--date", D1.isoformat(), "--format", "json")
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_rank_an_ad_hoc_job_with_total_cost(cli, published) -> None:
    rows = _rank_json(cli, *JOB)
    assert rows and all(
        set(r) >= CONTRACT_RANK | {"total_cost_usd", "price_basis", "observed_on"} for r in rows
    )
    costs = [r["cost_per_checkpoint_usd"] for r in rows]
    assert costs == sorted(costs)
    for r in rows:
        terms = r["cost_terms"]
        assert r["total_cost_usd"] == pytest.approx(terms["total_usd"], abs=0.01)
        assert r["total_cost_usd"] > r["run_cost_usd"]  # start-up and download are paid too
        assert r["cost_per_checkpoint_usd"] == pytest.approx(
            r["total_cost_usd"] / terms["checkpoints"], abs=0.01
        )
        assert r["observed_on"] == D1.isoformat()


def test_ad_hoc_job_ranks_like_the_same_job_in_yaml(cli, published, tmp_path, monkeypatch) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "workloads:\n  - name: mine\n    model: meta-llama/Llama-3.1-8B\n    method: lora\n    micro_batch: 4\n"
        "    grad_checkpointing: true\n    tokens: 100M\n    deadline_hours: 30\n    tier: on_demand\n"
    )
    monkeypatch.setenv("GPUPRICE_WORKLOADS", str(path))
    from_yaml = _rank_json(cli, "--workload", "mine")
    ad_hoc = _rank_json(cli, *JOB, "--deadline-hours", "30", "--tier", "on_demand")
    assert from_yaml and [{**r, "workload": None} for r in from_yaml] == [
        {**r, "workload": None} for r in ad_hoc
    ]


def test_limits_exclude_offers_unless_asked(cli, published) -> None:
    every = _rank_json(cli, *JOB, "--include-infeasible")
    walls = sorted(r["cost_terms"]["wall_hours"] for r in every)
    cut = (walls[0] + walls[-1]) / 2
    on_time = _rank_json(cli, *JOB, "--deadline-hours", f"{cut:.3f}")
    assert on_time and all(r["cost_terms"]["wall_hours"] <= cut for r in on_time)
    assert len(on_time) < len(every)
    marked = _rank_json(cli, *JOB, "--deadline-hours", f"{cut:.3f}", "--include-infeasible")
    assert len(marked) == len(every)
    flags = [bool(r["excluded_by"]) for r in marked]
    assert flags == sorted(flags)  # within-limit offers first
    late = [r for r in marked if r["excluded_by"]]
    assert all(
        r["excluded_by"] == ["deadline"] and any(w.startswith("deadline-missed") for w in r["warnings"])
        for r in late
    )
    assert all(r["gpu_count"] <= 1 for r in _rank_json(cli, *JOB, "--max-gpus", "1"))
    cheapest = min(r["total_cost_usd"] for r in every)
    assert all(
        r["total_cost_usd"] <= cheapest + 0.5
        for r in _rank_json(cli, *JOB, "--budget-usd", f"{cheapest + 0.5}")
    )
    # A catalog workload takes the same limits.
    capped = _rank_json(cli, "--workload", "llama-3.1-8b-lora", "--max-gpus", "1")
    assert capped and all(r["gpu_count"] == 1 for r in capped)


def test_empty_results_say_why_and_stay_well_formed(cli, published) -> None:
    res = cli("rank", *JOB, "--deadline-hours", "0.01", "--date", D1.isoformat(), "--format", "json")
    assert res.code == 0 and json.loads(res.out) == []
    assert "deadline" in res.err and "--include-infeasible" in res.err
    res = cli("rank", *JOB, "--budget-usd", "0.01", "--date", D1.isoformat(), "--format", "csv")
    assert res.code == 0 and "budget" in res.err
    header = next(csv.reader(io.StringIO(res.out)))
    assert {"total_cost_usd", "cost_per_checkpoint_usd", "gpu_usd", "rework_usd", "storage_usd"} <= set(
        header
    )
    res = cli("rank", *JOB, "--date", "2020-01-01")
    assert res.code == 0 and "no scraped snapshot on or before 2020-01-01" in res.err
    res = cli("rank", *JOB, "--tier", "spot", "--date", D1.isoformat(), "--format", "json")
    assert res.code == 0 and json.loads(res.out) == [] and "spot" in res.err
    res = cli("rank", "--params-b", "2000", "--method", "full", "--tokens", "1B", "--date", D1.isoformat())
    assert res.code == 0 and "nothing fits" in res.err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((*JOB, "--tier", "spto"), "on_demand, spot, reserved"),
        ((*JOB, "--providers", "lamda"), "lambda"),
        ((*JOB[:-2], "--tokens", "lots"), "'lots'"),
        ((*JOB[:-2],), "--tokens"),
        ((*JOB, "--deadline-hours", "-3"), "--deadline-hours"),
        ((*JOB, "--max-gpus", "1.5"), "--max-gpus"),
        ((*JOB, "--budget-usd", "x"), "--budget-usd"),
        (("--model", "meta-llama/Llama-3.1-8B", "--method", "lorra", "--tokens", "1B"), "full, lora, qlora"),
        (("--method", "lora", "--tokens", "1B"), "--workload"),
        (("--workload", "llama-3.1-8b-lora", "--model", "meta-llama/Llama-3.1-8B"), "not both"),
    ],
)
def test_rank_job_bad_input(cli, published, args, fragment) -> None:
    assert fragment in one_line_error(cli("rank", *args, "--date", D1.isoformat()))


def test_estimate_prices_from_the_market(cli, published) -> None:
    args = ("estimate", "--gpu", "h100-sxm", "--params-b", "8", "--method", "full", "--tokens", "2B")
    out = json.loads(cli(*args, "--gpus", "8", "--sharding", "zero3", "--date", D1.isoformat(), "--json").out)
    assert set(out) >= CONTRACT_ESTIMATE and out["fits"] is True
    assert out["price_source"] == "market" and out["usd_per_gpu_hour"] == 2.99
    assert out["offer"]["provider"] == "lambda" and out["offer"]["sku"] == "gpu_8x_h100"
    assert out["offer"]["observed_on"] == D1.isoformat()
    assert out["cost_usd"] == pytest.approx(out["gpu_hours"] * 2.99, abs=0.01)
    text = cli(*args, "--gpus", "8", "--date", D1.isoformat())
    assert text.code == 0 and "lambda gpu_8x_h100" in text.out and "NOT a runnable setup" in text.out
    unfit = json.loads(cli(*args, "--gpus", "8", "--date", D1.isoformat(), "--json").out)
    assert unfit["fits"] is False and unfit["cost_note"].startswith("does not fit")
    none = json.loads(
        cli(*args, "--gpus", "4", "--sharding", "zero3", "--date", D1.isoformat(), "--json").out
    )
    assert none["cost_usd"] is None and "no list price" in none["cost_note"]
    # Without --date: the newest snapshot date (D1), as rank and history; 20 days later the page
    # is too old to be a market price: named, not used.
    newest = json.loads(cli(*args, "--gpus", "8", "--sharding", "zero3", "--json").out)
    assert newest["offer"]["price_age_days"] == 0 and newest["usd_per_gpu_hour"] == 2.99
    later = (D1 + dt.timedelta(days=20)).isoformat()
    old = json.loads(cli(*args, "--gpus", "8", "--sharding", "zero3", "--date", later, "--json").out)
    assert old["cost_usd"] is None and old["offer"] is None
    assert "no current list price" in old["cost_note"] and "20 days old" in old["cost_note"]


def test_estimate_batch_accepts_the_framework_columns(cli, home, tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(
        "model,method,gpu,gpus,sharding,hours,framework,compile,activation_checkpointing,memory_metric\n"
        "meta-llama/Llama-3.1-8B,full,h100-sxm,8,fsdp,10,torchtitan,true,selective,reserved\n"
        "meta-llama/Llama-3.1-8B,full,h100-sxm,8,fsdp,10,hf,,selective,reserved\n"
    )
    res = cli("estimate", "--batch", str(path))
    assert res.code == 0, res.err
    titan, hf = (json.loads(line) for line in res.out.splitlines())
    assert (titan["framework"], titan["compile"], titan["activation_checkpointing"]) == (
        "torchtitan",
        True,
        "selective",
    )
    assert titan["memory_metric"] == hf["memory_metric"] == "reserved"
    assert titan["per_gpu_gb"] < hf["per_gpu_gb"]  # FSDP2's fp32 shards are the master copy
    assert titan["tokens_per_sec_per_gpu"] > hf["tokens_per_sec_per_gpu"]  # compiled kernels


@pytest.mark.parametrize("columns", [100, 80])
def test_rank_table_fits_the_terminal(cli, published, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    table = cli("rank", "--workload", "llama-3.1-8b-qlora", "--date", D1.isoformat())
    assert table.code == 0, table.err
    lines = table.out.splitlines()
    assert max(len(line) for line in lines) <= columns, table.out
    header = next(line for line in lines if line.lstrip().startswith("#"))
    for always in ("provider", "GPUs", "tier", "total $", "$/checkpoint"):
        assert always in header
    assert "--wide shows every column" in " ".join(table.out.split())  # what was left out is named
    wide = cli("rank", "--workload", "llama-3.1-8b-qlora", "--date", D1.isoformat(), "--wide")
    assert max(len(line) for line in wide.out.splitlines()) > columns
    assert "tok/s/GPU" in wide.out and "--wide shows" not in wide.out


@pytest.mark.parametrize("columns", [100, 80])
def test_workloads_table_fits_the_terminal(cli, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    res = cli("workloads")
    assert res.code == 0, res.err
    assert max(len(line) for line in res.out.splitlines()) <= columns, res.out
    assert "llama-3.1-8b-continued-pretraining" in res.out  # names are never cut


# ------------------------------------------------------------------ the throughput error band
def test_rank_shows_the_throughput_band_as_hours_and_cost(cli, published) -> None:
    """Every ranked offer carries hours_band / cost_band around its hours and total cost, taken from
    the one band rule (models/throughput_band.py) for its method and GPU; CSV adds the ends last."""
    from gpuprice.models.throughput_band import gpu_speed_band

    rows = _rank_json(cli, "--workload", "llama-3.1-8b-lora", "--date", D1.isoformat())
    assert rows
    for row in rows:
        hours, cost = row["hours_band"], row["cost_band"]
        assert hours["low"] < row["hours"] < hours["high"], row
        assert cost["low"] < row["total_cost_usd"] < cost["high"], row
        short, long = gpu_speed_band("lora", row["gpu"]).hours(row["hours"])
        assert hours == pytest.approx({"low": short, "high": long}, abs=1e-3)
    res = cli("rank", "--workload", "llama-3.1-8b-lora", "--date", D1.isoformat(), "--format", "csv")
    table = list(csv.reader(io.StringIO(res.out)))
    assert table[0][-4:] == ["hours_low", "hours_high", "total_cost_low_usd", "total_cost_high_usd"]
    assert float(table[1][-2]) == rows[0]["cost_band"]["low"]
    wide = cli("rank", "--workload", "llama-3.1-8b-lora", "--date", D1.isoformat(), "--wide")
    low, high = rows[0]["cost_band"]["low"], rows[0]["cost_band"]["high"]
    assert "total $ band" in wide.out and f"{low:,.2f}-{high:,.2f}" in wide.out


def test_estimate_and_rank_give_one_band(cli, published) -> None:
    """The same method on the same GPU: estimate's hours band is the same fraction of its hours as
    rank's, and its cost band is the run cost at those hours."""
    rank_row = next(
        r
        for r in _rank_json(cli, "--workload", "llama-3.1-8b-lora", "--date", D1.isoformat())
        if r["gpu"] == "a100-80gb-sxm" and r["gpu_count"] == 1
    )
    res = cli(
        "estimate", "--model", "meta-llama/Llama-3.1-8B", "--method", "lora", "--gpu", "a100-80gb-sxm",
        "--tokens", "100M", "--usd-per-gpu-hour", "2", "--json",
    )  # fmt: skip
    assert res.code == 0, res.err
    est = json.loads(res.out)
    for answer in (est, rank_row):
        band = answer["hours_band"]
        answer["ratios"] = (band["low"] / answer["hours"], band["high"] / answer["hours"])
    assert est["ratios"] == pytest.approx(rank_row["ratios"], rel=1e-3)
    assert est["ratios"][0] < 1 < est["ratios"][1]
    assert est["cost_band"] == pytest.approx(
        {"low": 2 * est["hours_band"]["low"], "high": 2 * est["hours_band"]["high"]}, abs=0.01
    )
    fast = est["tokens_per_sec_band"]["high"] / est["tokens_per_sec_per_gpu"]
    assert est["ratios"][0] == pytest.approx(1 / fast, rel=1e-3)
    given_hours = json.loads(
        cli(
            "estimate", "--params-b", "8", "--method", "lora", "--gpu", "a100-80gb-sxm", "--hours", "3",
            "--usd-per-gpu-hour", "2", "--json",
        ).out
    )  # fmt: skip
    assert given_hours["hours_band"] is None and given_hours["cost_band"] is None
    assert given_hours["tokens_band"]["low"] < given_hours["tokens"] < given_hours["tokens_band"]["high"]


def test_a_borrowed_efficiency_widens_hours_and_cost(cli, home) -> None:
    """A GPU whose family borrows an efficiency gets a wider hours band than a measured family."""
    spans = {}
    for gpu in ("a100-80gb-sxm", "rtx-4090"):
        res = cli(
            "estimate", "--params-b", "1", "--method", "lora", "--gpu", gpu, "--tokens", "1e8",
            "--usd-per-gpu-hour", "1", "--json",
        )  # fmt: skip
        est = json.loads(res.out)
        spans[gpu] = (est["hours_band"]["high"] - est["hours_band"]["low"]) / est["hours"]
        assert ("borrowed_efficiency_from" in est["tokens_per_sec_band"]) == (gpu == "rtx-4090")
    assert spans["rtx-4090"] > spans["a100-80gb-sxm"] + 0.2
