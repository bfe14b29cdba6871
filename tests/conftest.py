"""Shared test helpers: run the real CLI in a subprocess and read what it saved."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
from tests import cli_forkserver  # noqa: E402  (after the path: the repository's own package)

PLOTS_ENV = "IOTBENCH_PLOTS"  # see "Plots" below


def rows_per_query(devices: int, downsample_minutes: int = 1) -> dict[str, int]:
    """What the six queries return over `devices` devices: one row for the three global ones, one
    per device for two others, one per minute with readings for device-downsample."""
    return {"count-events": 1, "temperature-min-max": 1, "temperature-stats": 1,
            "temperature-stats-per-device": devices, "newest-per-device": devices, "device-downsample": downsample_minutes}


def downsample_minutes(events_per_worker: int, devices_per_worker: int = 10) -> int:
    """Minutes of the first hour with readings of the downsample device (worker 0's first device,
    which reports every devices_per_worker x 100 ms from the time origin)."""
    last_ms = (events_per_worker - 1) // devices_per_worker * devices_per_worker * 100
    return min(last_ms, 3_599_999) // 60_000 + 1


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str
    cwd: Path

    def results_folders(self) -> list[Path]:
        return sorted((self.cwd / "results").glob("*"))

    def verified_reports(self, counted_per_run: list[int]) -> list[dict]:
        """The run reports of a successful insert whose every run passed the count check with these counts."""
        assert self.code == 0, self.stderr
        reports = [run["report"] for run in self.results()["runs"]]
        assert [r["verification"]["counted"] for r in reports] == counted_per_run
        assert all(r["verification"]["ok"] and r["verification"]["expected"] == r["verification"]["counted"] for r in reports)
        return reports

    def query_rows(self) -> dict[str, int]:
        """Rows returned per query by a successful `query` command that recorded no query error and
        whose every answer was checked and right."""
        assert self.code == 0, self.stderr
        summary = {row["query"]: row for row in self.results()["queries"]}
        assert not any(row.get("errors") for row in summary.values()), summary
        assert {name: row["answer"] for name, row in summary.items()} == dict.fromkeys(summary, "ok"), summary
        return {name: row["rows"] for name, row in summary.items()}

    def answers(self) -> dict[str, tuple[str, str | None]]:
        """(verdict, detail) per query of a `query` command."""
        return {row["query"]: (row["answer"], row["answer_detail"]) for row in self.results()["queries"]}

    def results(self) -> dict:
        folders = self.results_folders()
        assert folders, f"no results folder; stderr: {self.stderr}"
        return json.loads((folders[-1] / "results.json").read_text())


# The workload options every real-server suite runs (issue 10): a shape with a key and an index, many
# measurements, random order, late data and a run by duration; small, for CI's sake.
WORKLOAD_OPTIONS = {
    "light": ["--schema", "light", "--batch", "500", "--num-inserts", "1000"],
    "measurements": ["--measurements", "4", "--batch", "500", "--num-inserts", "1000"],
    "random": ["--order", "random", "--batch", "500", "--num-inserts", "1000"],
    "late": ["--out-of-order", "0.05", "--max-lateness", "5", "--batch", "500", "--num-inserts", "1000"],
    "duration": ["--duration", "1.5", "--batch", "200"],  # ends by time: 1.5 s, above the 1-s short-phase limit
}


def verified_workload_run(result) -> dict:
    """The report of a one-run insert whose count check passed (any number of events: --duration)."""
    assert result.code == 0, result.stderr
    [run] = result.results()["runs"]
    report = run["report"]
    check = report["verification"]
    assert check["ok"] and check["counted"] == check["expected"] == check["count_before"] + check["inserted"], check
    assert check["inserted"] == report["figures"]["events"] > 0
    if report["spec"]["duration_s"]:
        assert report["spec"]["duration_s"] <= report["figures"]["duration_s"] < report["spec"]["duration_s"] + 5
    return report


def run_cli(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> CliResult:
    """`python run.py ARGS` exactly as a user types it, from `cwd` (forked from an interpreter that has
    imported the CLI already: tests/cli_forkserver.py)."""
    # the running test's plots setting wins over a copy of the environment a fixture made earlier
    full_env = {**os.environ, **(env or {}), PLOTS_ENV: os.environ.get(PLOTS_ENV, "1")}
    if cli_forkserver.wanted():
        return CliResult(*cli_forkserver.run(args, cwd, full_env, timeout), cwd)
    completed = subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full_env)
    return CliResult(completed.returncode, completed.stdout, completed.stderr, cwd)


@pytest.fixture
def cli(tmp_path):
    """Run the CLI in a fresh folder: `cli("insert", "--target", "sqlite", ...)`."""

    def invoke(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> CliResult:
        return run_cli(list(args), tmp_path, env=env, timeout=timeout)

    return invoke


def postgres_env() -> dict[str, str]:
    """Connection settings of the PostgreSQL started by scripts/servers/start-postgres.sh."""
    return {
        "PGHOST": os.environ.get("PGHOST", "127.0.0.1"),
        "PGPORT": os.environ.get("PGPORT", "5432"),
        "PGUSER": os.environ.get("PGUSER", "postgres"),
        "PGPASSWORD": os.environ.get("PGPASSWORD", "postgres"),
        "PGDATABASE": os.environ.get("PGDATABASE", "postgres"),
    }


def timescaledb_env() -> dict[str, str]:
    """Connection settings of the TimescaleDB started by scripts/servers/start-timescaledb.sh (a
    PostgreSQL of its own, on port 5433)."""
    return {**postgres_env(), "PGHOST": os.environ.get("TIMESCALEDB_HOST", "127.0.0.1"), "PGPORT": os.environ.get("TIMESCALEDB_PORT", "5433")}


@pytest.fixture
def pg_env():
    """PG* settings for the real PostgreSQL; fails (never skips) when the server is not reachable."""
    return pg_env_or_fail()


def pg_env_or_fail(env: dict[str, str] | None = None, server: str = "postgres") -> dict[str, str]:
    """PG* settings (default: the PostgreSQL's) of a server that answers; fails (never skips) when it
    does not, naming the script that starts it (scripts/servers/start-<server>.sh)."""
    import psycopg

    env = env or postgres_env()
    try:
        psycopg.connect(
            host=env["PGHOST"], port=env["PGPORT"], user=env["PGUSER"], password=env["PGPASSWORD"],
            dbname=env["PGDATABASE"], connect_timeout=5,
        ).close()
    except psycopg.OperationalError as error:
        pytest.fail(f"{server} at {env['PGHOST']}:{env['PGPORT']} is not reachable ({error}); start it with scripts/servers/start-{server}.sh")
    return env


def processes_with_env(tag: str) -> list[int]:
    """PIDs of live processes whose environment carries IOTB_TEST_TAG=tag (the CLI's children inherit it)."""
    needle = f"IOTB_TEST_TAG={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                status = (entry / "status").read_text()
                if "\nState:\tZ" not in status:
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def assert_verified(result: CliResult, counted_per_run: list[int]) -> list[dict]:
    """Shorthand for `result.verified_reports(...)` where the result is an expression."""
    return result.verified_reports(counted_per_run)


def pg_connect(env: dict[str, str], dbname: str | None = None):
    """An autocommit connection to the real PostgreSQL described by PG* settings."""
    import psycopg

    return psycopg.connect(host=env["PGHOST"], port=env["PGPORT"], user=env["PGUSER"], password=env["PGPASSWORD"],
                           dbname=dbname or env["PGDATABASE"], autocommit=True)


def dedicated_database(env: dict[str, str], name: str) -> dict[str, str]:
    """PG* settings for database `name`, created if missing and without event tables, so a suite never
    shares its `events` table with another suite's."""
    with pg_connect(env) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f"CREATE DATABASE {name}")
    with pg_connect(env, name) as conn:
        conn.execute("DROP TABLE IF EXISTS events, events0, events1, events2, events3")
    return {**env, "PGDATABASE": name}


# --- Suites side by side (scripts/test.sh runs the suites without the cluster under pytest-xdist) -----
# The suites of one server share its database and tables, so every test of a server goes to one
# xdist group (`--dist loadgroup`: one process, one after another, in file order); tests of no server
# are spread freely. A test of several servers goes with the first of them, unless it names its group
# (`xdist_group`): the server whose tables it shares with that server's suites.
SERVER_MARKERS = ("berkeleydb", "cassandra", "clickhouse", "elasticsearch", "influxdb", "iotdb", "kubernetes", "mysql",
                  "postgres", "questdb", "timescaledb", "victoriametrics")
# Tests that need the local Kubernetes or its helm binary (built with the cluster): scripts/test.sh
# runs them once the cluster is up, and the rest meanwhile.
CLUSTER_FOLDERS = ("kubernetes", "chart")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).parent.name in CLUSTER_FOLDERS:
            item.add_marker(pytest.mark.cluster)
        servers = sorted({marker.name for marker in item.iter_markers() if marker.name in SERVER_MARKERS})
        if servers and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(name=servers[0]))


# --- Plots: drawn only where a test checks them -------------------------------------------------------
# Drawing a run's PNG plots costs the CLI about 1.4 s of CPU, most of a small run's; the suite's
# hundreds of runs skip them (IOTBENCH_PLOTS=0, as scripted sweeps may), and the tests marked `plots`,
# which check them, draw them as a user's run does.
os.environ.setdefault(PLOTS_ENV, "0")

# A shell starts a background command with SIGINT ignored, and every CLI a test starts would inherit
# that: the Ctrl-C tests would test nothing but the shell. Caught again here, it is the default in the
# CLIs (a handler, unlike an ignored signal, does not survive exec).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _plots_where_checked(request, monkeypatch):
    if request.node.get_closest_marker("plots"):
        monkeypatch.setenv(PLOTS_ENV, "1")
