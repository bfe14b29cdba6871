"""benchmarks/tsbs_side_by_side.py: bad input in one line, and one tiny round on PostgreSQL beside
TSBS's own loader and query runner (when ../shared/vendor/tsbs/build.sh has built them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.postgres
SCRIPT = "benchmarks/tsbs_side_by_side.py"
TSBS_BIN = Path(os.environ.get("TSBS_BIN", "/var/cache/tsbs-37fced7/bin"))


def run(*options: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *options], cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PGPASSWORD": os.environ.get("PGPASSWORD", "postgres")})


@pytest.mark.parametrize(("options", "message"), [
    (["--databases", "mongo"], "unknown database mongo (of timescaledb, postgres, questdb"),
    (["--time-range", "6x"], "--time-range: '6x' is not a duration like 10s"),
    (["--drawn-executions", "0"], "--rounds, --executions, --drawn-executions, --hosts and --batch must be at least 1"),
])
def test_bad_input_is_one_line_and_exit_2(options, message):
    done = run(*options)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_one_round_on_postgresql_beside_tsbs_loads_and_queries_the_same_data_size():
    if not (TSBS_BIN / "tsbs_load_timescaledb").exists():
        pytest.skip(f"TSBS is not built in {TSBS_BIN} (../shared/vendor/tsbs/build.sh builds it)")
    done = run("--databases", "postgres", "--rounds", "1", "--workers", "1", "--hosts", "10", "--time-range", "10m",
               "--queries", "single-groupby-1-1-1,high-cpu-1", "--executions", "3", "--drawn-executions", "4", "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    [load] = result["loads"]
    assert (load["database"], load["workers"], load["points"]) == ("postgres", 1, 10 * 60 * 10)  # 10 hosts x 60 steps x 10 fields, each side
    assert load["tool_points_per_s"] == pytest.approx(10 * load["tool_rows_per_s"]) and load["tsbs_points_per_s"] > 0
    assert load["ratios"] == [pytest.approx(load["tool_points_per_s"] / load["tsbs_points_per_s"])]
    query, drawn = result["queries"]
    assert query["query"] == "single-groupby-1-1-1" and query["tool_p50_ms"] > 0 and query["tsbs_p50_ms"] > 0
    assert query["p50_ms_ratios"] == [pytest.approx(query["tool_p50_ms"] / query["tsbs_p50_ms"])]
    # high-cpu-1's rows depend on the host drawn: it runs --drawn-executions times on both sides
    assert (query["executions"], drawn["query"], drawn["executions"]) == (3, "high-cpu-1", 4) and drawn["tsbs_p50_ms"] > 0
    assert "Ours / TSBS" in done.stdout and result["failed"] == {}
    with psycopg.connect(host="127.0.0.1", user="postgres", password=os.environ.get("PGPASSWORD", "postgres"), dbname="postgres") as conn:
        left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'tsbs_side%'").fetchall()
    assert left == []  # both sides' databases dropped at the end
