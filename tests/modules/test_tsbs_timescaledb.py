"""TSBS's cpu-only data and DevOps query types on the real TimescaleDB (tests/tsbs_story.py): TSBS's
TimescaleDB target's layout (a hypertable of 12-hour chunks without TimescaleDB's default indexes),
TSBS's rows and points, every type answered `ok` in TSBS's own SQL, changed rows found. Runs in a
database of its own on the server of scripts/servers/start-timescaledb.sh."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import dedicated_database, pg_connect, run_cli
from tests.modules.test_timescaledb import timescaledb_env
from tests.tsbs_story import DATA, HOSTS, INSERT, TSBS_ROWS, assert_every_type_answers_ok, assert_inserted, check_pg_changed_rows_are_found, pg_rows

pytestmark = pytest.mark.timescaledb

DATABASE = "iotbench_tsbs"


@pytest.fixture(scope="module")
def timescale(tmp_path_factory):
    """(PG* settings, a folder to run the CLI in) once the story's data is inserted, for the module's tests."""
    env = timescaledb_env()
    try:
        pg_connect(env).close()
    except psycopg.OperationalError as error:
        pytest.fail(f"TimescaleDB is not reachable ({error}); start it with scripts/servers/start-timescaledb.sh")
    env = dedicated_database(env, DATABASE)
    folder = tmp_path_factory.mktemp("tsbs-timescaledb")
    assert_inserted(run_cli(["insert", "--target", "timescaledb-local", *INSERT], folder, env=target_env(env)))
    return env, folder


def target_env(env) -> dict[str, str]:
    """The shipped `timescaledb-local` target, pointed at the suite's database."""
    return {"TIMESCALEDB_HOST": env["PGHOST"], "TIMESCALEDB_PORT": env["PGPORT"], "TIMESCALEDB_DATABASE": DATABASE,
            "PGPASSWORD": env["PGPASSWORD"], "PGUSER": env["PGUSER"]}


def run(timescale):
    env, folder = timescale
    return lambda *args: run_cli([args[0], "--target", "timescaledb-local", *args[1:]], folder, env=target_env(env))


def sql(env, statement: str, *params) -> list[tuple]:
    return pg_rows(env, DATABASE, statement, *params)


def test_tsbs_layout_and_every_query_type_answered_right(timescale):
    env, _ = timescale
    assert sql(env, "SELECT count(*), count(DISTINCT tags_id) FROM cpu") == [(TSBS_ROWS, HOSTS)]
    # A hypertable on time of 12-hour chunks (TSBS's --chunk-time): 13 hours from midnight are two chunks.
    assert sql(env, "SELECT d.column_name, d.time_interval::text, h.num_chunks FROM timescaledb_information.hypertables h "
                    "JOIN timescaledb_information.dimensions d USING (hypertable_schema, hypertable_name) WHERE h.hypertable_name = 'cpu'") == [
        ("time", "12:00:00", 2)]
    # TSBS's indexes only (create_default_indexes => FALSE): no time index of TimescaleDB's own.
    assert {name for (name,) in sql(env, "SELECT indexname FROM pg_indexes WHERE tablename = 'cpu'")} == {"cpu_tags_id_time", "cpu_time"}
    assert sql(env, "SELECT hostname FROM tags WHERE id = 1") == [("host_0",)]
    assert sql(env, "SELECT min(time) = to_timestamp(%s / 1000.0) FROM cpu", DATA.start_ms) == [(True,)]
    assert_every_type_answers_ok(run(timescale)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(timescale):
    check_pg_changed_rows_are_found(run(timescale), timescale[0], DATABASE)
