"""Every command, fed bad input: exit 2 (3 for a page without prices) and exactly one line on
stderr naming the problem; never a traceback, nothing on stdout.

The cases are data: argv, the substrings the one line must contain, extra environment, and
which GPUPRICE_HOME to use ("published": a small warehouse and its analytics copy, so errors come
from the input and not from a missing warehouse; "empty": nothing run yet). Placeholders:
``{files}`` is a folder of prepared bad files. Every command of the table must exist (the
registry refuses to start without one). The count and the share of clean errors go to
reliability.json.
"""

from __future__ import annotations

import datetime as dt
import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from faults.tally import Tally

TALLY = Tally("bad_inputs")
TODAY = dt.datetime.now(dt.UTC).date()
DAY = dt.date(2026, 10, 6)


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    expect: tuple[str, ...]  # each must appear in the error line (case-insensitive)
    env: tuple[tuple[str, str], ...] = ()
    home: str = "published"  # published | empty
    code: int = 2

    @property
    def command(self) -> str:
        return self.argv[0] if self.argv else "-"

    @property
    def label(self) -> str:
        shown = " ".join(a if len(a) < 40 else a[:37] + "..." for a in self.argv)
        env = " ".join(f"{k}=..{v[-18:]}" for k, v in self.env)
        return f"{env} {shown}".strip()


def case(
    *argv: str,
    expect: str | tuple[str, ...],
    env: dict[str, str] | None = None,
    home: str = "published",
    code: int = 2,
) -> Case:
    expected = (expect,) if isinstance(expect, str) else expect
    return Case(tuple(argv), expected, tuple((env or {}).items()), home, code)


F = "{files}"
MODEL = ("--model", "meta-llama/Llama-3.1-8B")
# Valid commands up to the bad option each case appends.
FIT_FULL = ("fit", *MODEL, "--method", "full")
FIT_LORA = ("fit", *MODEL, "--method", "lora")
ESTIMATE_H100 = ("estimate", *MODEL, "--method", "lora", "--gpu", "h100-sxm")
RANK = ("rank", "--workload", "llama-3.1-8b-lora")


def fit_config(name: str) -> tuple[str, ...]:
    """A LoRA fit of the prepared config file ``name``."""
    return ("fit", "--config", f"{F}/{name}", "--method", "lora")


def workloads_file(name: str) -> dict[str, str]:
    """The environment that makes the prepared file ``name`` the workload catalog."""
    return {"GPUPRICE_WORKLOADS": f"{F}/{name}"}


CASES: list[Case] = [
    # --- run ------------------------------------------------------------------------------------
    case("run", "--date", "2026-13-01", expect="2026-13-01"),
    case("run", "--date", "yesterday", expect="yesterday"),
    case("run", "--date", "2026-02-30", expect="2026-02-30"),
    case("run", "--date", "", expect="--date"),
    case(
        "run", "--date", "2025-04-30", expect="first snapshot date 2025-05-01"
    ),  # before the first partition
    case("run", "--date", "2999-01-01", expect="2999-01-01"),
    case("run", "--date", "06/10/2026", expect="06/10/2026"),
    case("run", "--source", "web", expect="web"),
    case("run", "--source", "live", "--date", "2025-06-01", expect="2025-06-01"),
    case("run", "--providers", "lamdba", expect="lamdba"),
    case("run", "--providers", ",", expect="--providers"),
    case("run", "--providers", "runpod,../etc", expect="../etc"),
    case("run", "--providers", "/etc/passwd", expect="/etc/passwd"),
    case("run", "--bogus", expect="--bogus"),
    case(
        "run",
        "--date",
        DAY.isoformat(),
        expect="missing-archive",
        env={"GPUPRICE_ARCHIVE": f"{F}/missing-archive"},
    ),
    case(
        "run",
        "--date",
        DAY.isoformat(),
        expect="GPUPRICE_ARCHIVE",
        env={"GPUPRICE_ARCHIVE": f"{F}/config-truncated.json"},
    ),
    case(
        "run",
        "--date",
        DAY.isoformat(),
        expect="GPUPRICE_HOME",
        env={"GPUPRICE_HOME": f"{F}/config-truncated.json"},
    ),
    case(
        "run",
        "--date",
        DAY.isoformat(),
        expect=("GPUPRICE_HOME", "config-truncated.json/home"),
        env={"GPUPRICE_HOME": f"{F}/config-truncated.json/home"},
    ),  # cannot be created: a file is in the way
    # --- sql --------------------------------------------------------------------------------------
    case("sql", "DROP TABLE price_snapshots", expect="read-only"),
    case("sql", "SELEC 1", expect="SELEC"),
    case("sql", "SELECT * FROM no_such_table", expect="no_such_table"),
    case("sql", "", expect="empty"),
    case("sql", "   ;  ", expect="empty"),
    case("sql", "SELECT 1", "--format", "xml", expect="xml"),
    case("sql", "COPY price_snapshots TO '/tmp/gpuprice-leak.csv'", expect="COPY"),
    case("sql", "SELECT * FROM read_csv('/etc/passwd')", expect="refused"),
    case("sql", "ATTACH '/tmp/other.duckdb' AS other", expect="ATTACH"),
    case("sql", expect="query"),
    case("sql", "SELECT 1", expect="gpuprice run", home="empty"),
    # --- parse ------------------------------------------------------------------------------------
    case("parse", "lamdba", f"{F}/captcha.html", expect="lamdba"),
    case("parse", "../../etc/passwd", f"{F}/captcha.html", expect="../../etc/passwd"),
    case("parse", "lambda", f"{F}/missing.html", expect="missing.html"),
    case("parse", "lambda", f"{F}/adir", expect="adir"),
    case("parse", "lambda", f"{F}/captcha.html", "--observed-on", "2026-99-01", expect="2026-99-01"),
    case("parse", "lambda", f"{F}/corrupt.html.gz", expect="corrupt.html.gz"),
    case("parse", "lambda", f"{F}/captcha.html", expect=("lambda", "no price structure"), code=3),
    case("parse", "runpod", f"{F}/config-truncated.json", expect=("runpod", "JSON"), code=3),
    case("parse", expect="provider"),
    case("parse", "lambda", expect="file"),
    # --- import-observations ------------------------------------------------------------------------
    case("import-observations", f"{F}/missing.csv", expect="missing.csv"),
    case("import-observations", f"{F}/adir", expect="adir"),
    case("import-observations", f"{F}/batch-bad-header.csv", expect=("batch-bad-header.csv", "provider")),
    case("import-observations", f"{F}/empty.csv", expect="empty.csv"),
    case("import-observations", f"{F}/binary.csv", expect="binary.csv"),
    case("import-observations", f"{F}/observations-bad-row.csv", expect="observations-bad-row.csv"),
    case("import-observations", expect="file"),
    case(
        "import-observations",
        f"{F}/observations-ok.csv",
        expect="config-truncated.json/home",
        env={"GPUPRICE_HOME": f"{F}/config-truncated.json/home"},
    ),
    # --- report -----------------------------------------------------------------------------------
    case("report", "--week", "2026-W60", expect="2026-W60"),
    case("report", "--week", "lastweek", expect="lastweek"),
    case("report", "--week", "2026-13", expect="2026-13"),
    case("report", "--workload", "nope", expect="nope"),
    case("report", expect="analytics.duckdb", home="empty"),
    case("report", expect=("workloads-syntax.yaml", "line"), env=workloads_file("workloads-syntax.yaml")),
    # --- fit --------------------------------------------------------------------------------------
    case("fit", "--model", "no/such-model", "--method", "lora", expect="no/such-model"),
    case("fit", *MODEL, expect="--method"),
    case("fit", "--method", "lora", expect="--model"),
    case("fit", *MODEL, "--params-b", "70", "--method", "lora", expect="--params-b 70 disagrees"),
    case("fit", "--params-b", "-5", "--method", "full", expect="-5"),
    case("fit", "--params-b", "0", "--method", "full", expect="--params-b"),
    case("fit", "--params-b", "1e12", "--method", "full", expect="--params-b"),
    case("fit", "--params-b", "seven", "--method", "full", expect="seven"),
    case("fit", "--params-b", "inf", "--method", "full", expect="inf"),
    case(*FIT_FULL, "--seq-len", "0", expect="seq-len"),
    case(*FIT_FULL, "--seq-len", "100000000000", expect="seq-len"),
    case(*FIT_FULL, "--seq-len", "2k", expect="2k"),
    case(*FIT_FULL, "--gpus", "0", expect="gpus"),
    case(*FIT_FULL, "--gpus", "-8", expect="gpus"),
    case(*FIT_FULL, "--micro-batch", "0", expect="micro-batch"),
    case(*FIT_LORA, "--lora-rank", "0", expect="lora-rank"),
    case("fit", *MODEL, "--method", "finetune", expect="finetune"),
    case(*FIT_FULL, "--optimizer", "adam", expect="adam"),
    case(*FIT_FULL, "--precision", "fp8", expect="fp8"),
    case(*FIT_FULL, "--sharding", "zero4", expect="zero4"),
    case(*FIT_LORA, "--lora-targets", "everything", expect="everything"),
    case(*FIT_FULL, "--margin", "5", expect="margin"),
    case(*FIT_FULL, "--gpu", "h100", expect="h100"),
    case(*FIT_FULL, "--gpu", "../../etc/passwd", expect="../../etc/passwd"),
    case(*fit_config("missing.json"), expect="missing.json"),
    case(*fit_config("adir"), expect="adir"),
    case(*fit_config("config-truncated.json"), expect=("config-truncated.json", "line")),
    case(*fit_config("config-not-json.json"), expect="config-not-json.json"),
    case(*fit_config("config-no-hidden.json"), expect="config-no-hidden.json"),
    case(*fit_config("config-list.json"), expect="config-list.json"),
    case(*fit_config("config-negative.json"), expect="config-negative.json"),
    case(*fit_config("binary.csv"), expect="binary.csv"),
    case("fit", "--batch", f"{F}/missing.csv", expect="missing.csv"),
    case("fit", "--batch", f"{F}/adir", expect="adir"),
    case("fit", "--batch", f"{F}/batch-bad-cell.csv", expect=("batch-bad-cell.csv", "line 3", "abc")),
    case("fit", "--batch", f"{F}/batch-bad-header.csv", expect=("batch-bad-header.csv", "modle")),
    case("fit", "--batch", f"{F}/batch-ragged.csv", expect=("batch-ragged.csv", "line 3")),
    case(
        "fit",
        "--batch",
        f"{F}/batch-bad-model.csv",
        expect=("batch-bad-model.csv", "line 2", "no/such-model"),
    ),
    case("fit", "--batch", f"{F}/empty.csv", expect="empty.csv"),
    case("fit", "--batch", f"{F}/binary.csv", expect="binary.csv"),
    case("fit", "--bogus", expect="--bogus"),
    # --- plan -------------------------------------------------------------------------------------
    case("plan", "--params-b", "-5", expect="-5"),
    case("plan", "--params-b", "0", expect="--params-b"),
    case("plan", "--params-b", "abc", expect="abc"),
    case("plan", "--params-b", "1e15", expect="--params-b"),
    case("plan", "--params-b", "nan", expect="nan"),
    case("plan", expect="--params-b"),
    case("plan", "--model", "no/such-model", expect="no/such-model"),
    # --- estimate -----------------------------------------------------------------------------------
    case("estimate", *MODEL, "--method", "lora", "--tokens", "1e9", expect="--gpu"),
    case("estimate", *MODEL, "--method", "lora", "--gpu", "h100", "--tokens", "1e9", expect="h100"),
    case(*ESTIMATE_H100, "--tokens", "10^12", expect="10^12"),
    case(*ESTIMATE_H100, "--tokens", "0", expect="--tokens"),
    case(*ESTIMATE_H100, "--tokens", "-1e9", expect="--tokens"),
    case(*ESTIMATE_H100, "--hours", "-3", expect="--hours"),
    case(*ESTIMATE_H100, "--tokens", "1e9", "--hours", "3", expect="--tokens"),
    case(*ESTIMATE_H100, expect="--tokens"),
    case(*ESTIMATE_H100, "--tokens", "1e9", "--usd-per-gpu-hour", "-2", expect="--usd-per-gpu-hour"),
    case(*ESTIMATE_H100, "--tokens", "1e9", "--gpus", "0", expect="gpus"),
    case(
        "estimate",
        "--params-b",
        "-5",
        "--method",
        "lora",
        "--gpu",
        "h100-sxm",
        "--tokens",
        "1e9",
        expect="-5",
    ),
    case(
        "estimate",
        "--batch",
        f"{F}/batch-bad-cell.csv",
        "--gpu",
        "h100-sxm",
        "--tokens",
        "1e9",
        expect=("batch-bad-cell.csv", "line 3"),
    ),
    # --- workloads --------------------------------------------------------------------------------
    case("workloads", expect=("workloads-syntax.yaml", "line"), env=workloads_file("workloads-syntax.yaml")),
    case(
        "workloads",
        expect=("workloads-bad-field.yaml", "line 6", "seq_len"),
        env=workloads_file("workloads-bad-field.yaml"),
    ),
    case(
        "workloads",
        expect=("workloads-unknown-field.yaml", "line 5", "checkpoint_every"),
        env=workloads_file("workloads-unknown-field.yaml"),
    ),
    case(
        "workloads",
        expect=("workloads-bad-model.yaml", "line 3", "model"),
        env=workloads_file("workloads-bad-model.yaml"),
    ),
    case("workloads", expect="missing.yaml", env=workloads_file("missing.yaml")),
    case("workloads", expect="adir", env=workloads_file("adir")),
    case("workloads", expect="empty.csv", env=workloads_file("empty.csv")),
    case("workloads", "--bogus", expect="--bogus"),
    # --- rank -------------------------------------------------------------------------------------
    case("rank", "--workload", "nope", expect="nope"),
    case("rank", expect="--workload"),
    case(*RANK, "--date", "2026-13-01", expect="2026-13-01"),
    case(*RANK, "--top", "0", expect="--top"),
    case(*RANK, "--top", "-1", expect="--top"),
    case(*RANK, "--top", "abc", expect="abc"),
    case(*RANK, "--format", "xml", expect="xml"),
    case(*RANK, expect="analytics.duckdb", home="empty"),
    case(*RANK, expect=("workloads-syntax.yaml", "line"), env=workloads_file("workloads-syntax.yaml")),
    # --- the program itself -------------------------------------------------------------------------
    case("no-such-command", expect="no-such-command"),
]

# ---------------------------------------------------------------------------------------------
# Prepared bad files and homes
# ---------------------------------------------------------------------------------------------

WORKLOAD_HEAD = "workloads:\n  - name: my-run\n    model: meta-llama/Llama-3.1-8B\n    method: lora\n"
BAD_FILES: dict[str, bytes | str] = {
    "captcha.html": "<html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>",
    "corrupt.html.gz": b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"this is not deflate data",
    "config-truncated.json": '{"model_type": "llama", "hidden_size": 4096,\n "num_hidden_layers": ',
    "config-not-json.json": "model_type = llama\nhidden_size = 4096\n",
    "config-no-hidden.json": '{"model_type": "llama", "num_hidden_layers": 32}',
    "config-list.json": '[{"hidden_size": 4096}]',
    "config-negative.json": '{"model_type": "llama", "hidden_size": -4096, "num_hidden_layers": 32,'
    ' "num_attention_heads": 32, "intermediate_size": 14336, "vocab_size": 128256}',
    "batch-bad-cell.csv": "model,method,seq_len\nmeta-llama/Llama-3.1-8B,lora,2048\nmeta-llama/Llama-3.1-8B,lora,abc\n",
    "batch-bad-header.csv": "modle,method\nmeta-llama/Llama-3.1-8B,lora\n",
    "batch-ragged.csv": "model,method\nmeta-llama/Llama-3.1-8B,lora\nmeta-llama/Llama-3.1-8B,lora,2048,extra\n",
    "batch-bad-model.csv": "model,method\nno/such-model,lora\n",
    "observations-bad-row.csv": "provider,gpu,gpu_count,tier,usd_per_gpu_hour,observed_on,source_url\n"
    "lambda,h100-sxm,one,on_demand,abc,2026-13-45,https://example.com\n",
    "observations-ok.csv": "provider,gpu,gpu_count,tier,usd_per_gpu_hour,observed_on,source_url\n"
    "lambda,H100 SXM,1,on_demand,2.99,2026-10-01,https://lambda.ai/pricing\n",
    "empty.csv": "",
    "binary.csv": bytes(range(256)) * 4,
    "workloads-syntax.yaml": WORKLOAD_HEAD + "    tokens: [1e9\n    seq_len: 2048\n",
    "workloads-bad-field.yaml": WORKLOAD_HEAD + "    tokens: 100_000_000\n    seq_len: -4\n"
    "    checkpoint_interval_tokens: 10_000_000\n",
    "workloads-unknown-field.yaml": WORKLOAD_HEAD + "    checkpoint_every: 10\n    tokens: 100_000_000\n"
    "    checkpoint_interval_tokens: 10_000_000\n",
    "workloads-bad-model.yaml": "workloads:\n  - name: my-run\n    model: no/such-model\n    method: lora\n"
    "    tokens: 100_000_000\n    checkpoint_interval_tokens: 10_000_000\n",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bad-files")
    for name, content in BAD_FILES.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        (folder / name).write_bytes(data)
    (folder / "adir").mkdir()
    assert gzip.decompress(gzip.compress(b"x")) == b"x"  # the corrupt .gz above is the only broken one
    return folder


@pytest.fixture(scope="module")
def published_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse with one provider's snapshot of DAY and its published analytics copy."""
    from conftest import make_offer
    from gpuprice.warehouse.connection import connect_writer
    from gpuprice.warehouse.publish import publish_analytics_copy
    from gpuprice.warehouse.writes import record_provider_run, replace_snapshot_partition

    home = tmp_path_factory.mktemp("published") / "home"
    home.mkdir()
    offers = [make_offer(sku=f"gpu_{n}x_h100_sxm", gpu_count=n, usd_per_gpu_hour=2.99) for n in (1, 2, 8)]
    con = connect_writer(home / "warehouse.duckdb")
    try:
        replace_snapshot_partition(
            con,
            provider="lambda",
            snapshot_date=DAY,
            offers=offers,
            source="archive",
            raw_sha256=None,
            parser_version=None,
        )
        record_provider_run(
            con,
            provider="lambda",
            snapshot_date=DAY,
            source="archive",
            status="success",
            offers=len(offers),
            report=None,
            error=None,
            started_at=dt.datetime.now(dt.UTC),
        )
        publish_analytics_copy(con, home / "warehouse.duckdb", home / "analytics.duckdb")
    finally:
        con.close()
    return home


@pytest.fixture(scope="module", autouse=True)
def _write_tally() -> Iterator[None]:
    yield
    TALLY.notes["commands_covered"] = sorted({c.command for c in CASES})
    TALLY.write()


# ---------------------------------------------------------------------------------------------
# The table, run in process
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", CASES, ids=[c.label for c in CASES])
def test_bad_input_gets_one_clean_line(
    bad: Case, cli, files: Path, published_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = published_home if bad.home == "published" else tmp_path / "empty-home"
    monkeypatch.setenv("GPUPRICE_HOME", str(home))
    monkeypatch.delenv("GPUPRICE_ARCHIVE", raising=False)
    monkeypatch.delenv("GPUPRICE_WORKLOADS", raising=False)
    for key, value in bad.env:
        monkeypatch.setenv(key, value.replace(F, str(files)))
    argv = [a.replace(F, str(files)) for a in bad.argv]

    result = cli(*argv)
    lines = [line for line in result.err.splitlines() if line.strip()]
    clean = (
        result.code == bad.code
        and len(lines) == 1
        and "Traceback" not in result.err
        and all(e.lower() in lines[0].lower() for e in bad.expect)
        and result.out == ""
    )
    TALLY.inputs_tried += 1
    TALLY.inputs_clean += int(clean)
    TALLY.by_command[bad.command] += 1

    assert "Traceback" not in result.err, result.err
    assert result.code == bad.code, result
    assert len(lines) == 1, result.err
    for expected in bad.expect:
        assert expected.lower() in lines[0].lower(), (expected, lines[0])
    assert result.out == "", result.out
    if bad.home == "empty":  # a refused command leaves no warehouse behind
        assert not (home / "warehouse.duckdb").exists()


def test_the_table_covers_every_command_of_the_contract():
    contract = {
        "run",
        "sql",
        "parse",
        "import-observations",
        "fit",
        "plan",
        "estimate",
        "workloads",
        "rank",
        "report",
    }
    covered = {c.command for c in CASES}
    assert contract <= covered
    assert len(CASES) >= 100
