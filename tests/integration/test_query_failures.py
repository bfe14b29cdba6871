"""A query that fails or times out is recorded as such, and the other queries still run (real PostgreSQL).

Uses a database of its own so other suites sharing the server cannot change the data meanwhile.
"""

import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.conftest import postgres_env, run_cli

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

TEST_DATABASE = "iotbench_query_failures"


@pytest.fixture(scope="module")
def filled_db():
    """20 devices x 10,000 events, with the query indices (module scope: filled once)."""
    env = postgres_env()
    try:
        with psycopg.connect(host=env["PGHOST"], port=env["PGPORT"], user=env["PGUSER"], password=env["PGPASSWORD"],
                             dbname=env["PGDATABASE"], autocommit=True, connect_timeout=5) as db:
            if not db.execute("SELECT 1 FROM pg_database WHERE datname = %s", (TEST_DATABASE,)).fetchone():
                db.execute(f"CREATE DATABASE {TEST_DATABASE}")
    except psycopg.OperationalError as error:
        pytest.fail(f"PostgreSQL is not reachable ({error}); start it with scripts/servers/start-postgres.sh")
    env = {**env, "PGDATABASE": TEST_DATABASE}
    with tempfile.TemporaryDirectory() as folder:
        fill = run_cli(["insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--batch", "10000", "--num-inserts", "100000",
                        "--devices-per-worker", "10", "--extra-option", "create_indices=true"], Path(folder), env=env)
    assert fill.code == 0, fill.stderr
    return env


def by_query(result):
    return result.results()["runs"][0]["report"]["queries"]


def test_a_failing_query_is_recorded_and_the_others_run(cli, filled_db):
    # No temporary files allowed and little sort memory: only newest-per-device (a sort of every row) fails,
    # the way the original study saw YugabyteDB fail it ("temporary file size exceeds temp_file_limit").
    result = cli("query", "--target", "postgresql-local", "-w", "1", "-r", "2",
                 "--extra-option", "session_statements=SET work_mem = '64kB'; SET temp_file_limit = 0", env=filled_db)
    assert result.code == 0, result.stderr
    queries = by_query(result)
    failed = queries["newest-per-device"]
    assert failed["executions"] == 0 and failed["avg_s"] is None
    assert len(failed["errors"]) == 1 and "temp_file_limit" in failed["errors"][0]
    for name in ("count-events", "temperature-min-max", "temperature-stats", "temperature-stats-per-device"):
        assert queries[name]["executions"] == 2 and not queries[name]["errors"], name
    assert queries["count-events"]["rows"] == 1 and queries["temperature-stats-per-device"]["rows"] == 20
    assert "temp_file_limit" in result.stdout  # the errors column of the query table


def test_a_query_over_the_timeout_is_recorded_and_the_others_run(cli, filled_db):
    # newest-per-device sorts 200,000 rows (far above 50 ms); temperature-min-max reads one index entry at each end.
    result = cli("query", "--target", "postgresql-local", "-w", "1", "-r", "2", "--query-timeout", "0.05",
                 "--queries", "newest-per-device,temperature-min-max", env=filled_db)
    assert result.code == 0, result.stderr
    queries = by_query(result)
    assert queries["newest-per-device"]["executions"] == 0
    assert "statement timeout" in queries["newest-per-device"]["errors"][0]
    assert queries["temperature-min-max"]["executions"] == 2 and not queries["temperature-min-max"]["errors"]
    assert set(queries) == {"newest-per-device", "temperature-min-max"}
