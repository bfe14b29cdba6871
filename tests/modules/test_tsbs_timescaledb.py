"""TSBS's three use cases on the real TimescaleDB (tests/tsbs_story.py): TSBS's TimescaleDB target's
layout (hypertables of 12-hour chunks without TimescaleDB's default indexes, one per measurement),
TSBS's rows and points, every type answered `ok` in TSBS's own SQL, changed rows found. Each story runs
in a database of its own on the server of scripts/servers/start-timescaledb.sh."""

from __future__ import annotations

import psycopg
import pytest

from iotdb_bench.simulator.spec import TSBS_TABLES
from tests.conftest import dedicated_database, pg_connect, run_cli
from tests.modules.test_timescaledb import timescaledb_env
from tests.tsbs_story import (
    DATA,
    DEVOPS_STORY,
    HOSTS,
    INSERT,
    IOT_INSERT,
    TSBS_ROWS,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    assert_inserted,
    assert_iot_inserted,
    check_iot_changed_rows_are_found,
    check_pg_changed_rows_are_found,
    pg_rows,
)

pytestmark = pytest.mark.timescaledb

DATABASE, DEVOPS_DATABASE, IOT_DATABASE = "iotbench_tsbs", "iotbench_tsbs_devops", "iotbench_tsbs_iot"


def inserted(tmp_path_factory, database: str, args: list[str], check):
    """(PG* settings, a folder to run the CLI in) once a story's data is inserted, for the module's tests."""
    env = timescaledb_env()
    try:
        pg_connect(env).close()
    except psycopg.OperationalError as error:
        pytest.fail(f"TimescaleDB is not reachable ({error}); start it with scripts/servers/start-timescaledb.sh")
    env = dedicated_database(env, database)
    folder = tmp_path_factory.mktemp(database)
    check(run_cli(["insert", "--target", "timescaledb-local", *args], folder, env=target_env(env, database)))
    return env, folder, database


@pytest.fixture(scope="module")
def timescale(tmp_path_factory):
    return inserted(tmp_path_factory, DATABASE, INSERT, assert_inserted)


@pytest.fixture(scope="module")
def devops(tmp_path_factory):
    return inserted(tmp_path_factory, DEVOPS_DATABASE, DEVOPS_STORY.insert, lambda result: assert_inserted(result, DEVOPS_STORY))


@pytest.fixture(scope="module")
def iot(tmp_path_factory):
    return inserted(tmp_path_factory, IOT_DATABASE, IOT_INSERT, assert_iot_inserted)


def target_env(env, database: str) -> dict[str, str]:
    """The shipped `timescaledb-local` target, pointed at the story's database."""
    return {"TIMESCALEDB_HOST": env["PGHOST"], "TIMESCALEDB_PORT": env["PGPORT"], "TIMESCALEDB_DATABASE": database,
            "PGPASSWORD": env["PGPASSWORD"], "PGUSER": env["PGUSER"]}


def run(story):
    env, folder, database = story
    return lambda *args: run_cli([args[0], "--target", "timescaledb-local", *args[1:]], folder, env=target_env(env, database))


def sql(story, statement: str, *params) -> list[tuple]:
    env, _, database = story
    return pg_rows(env, database, statement, *params)


def hypertables(story) -> list[tuple]:
    return sql(story, "SELECT h.hypertable_name, d.column_name, d.time_interval::text, h.num_chunks FROM timescaledb_information.hypertables h "
                      "JOIN timescaledb_information.dimensions d USING (hypertable_schema, hypertable_name) ORDER BY 1")


def test_tsbs_layout_and_every_query_type_answered_right(timescale):
    assert sql(timescale, "SELECT count(*), count(DISTINCT tags_id) FROM cpu") == [(TSBS_ROWS, HOSTS)]
    # A hypertable on time of 12-hour chunks (TSBS's --chunk-time): 13 hours from midnight are two chunks.
    assert hypertables(timescale) == [("cpu", "time", "12:00:00", 2)]
    # TSBS's indexes only (create_default_indexes => FALSE): no time index of TimescaleDB's own.
    assert {name for (name,) in sql(timescale, "SELECT indexname FROM pg_indexes WHERE tablename = 'cpu'")} == {"cpu_tags_id_time", "cpu_time"}
    assert sql(timescale, "SELECT hostname FROM tags WHERE id = 1") == [("host_0",)]
    assert sql(timescale, "SELECT min(time) = to_timestamp(%s / 1000.0) FROM cpu", DATA.start_ms) == [(True,)]
    assert_every_type_answers_ok(run(timescale)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(timescale):
    env, _, database = timescale
    check_pg_changed_rows_are_found(run(timescale), env, database)


def test_devops_hypertables_and_the_devops_types_over_its_cpu(devops):
    assert hypertables(devops) == [(table, "time", "12:00:00", 2) for table in sorted(TSBS_TABLES["tsbs-devops"])]
    assert sql(devops, "SELECT count(*), count(DISTINCT additional_tags->>'server') FROM redis") == [(DEVOPS_STORY.tsbs_rows // 9, HOSTS)]
    assert_every_type_answers_ok(run(devops)("query", "-w", "2", "-r", "2"), DEVOPS_STORY)  # no --queries: the data's own, DevOps's 15
    env, _, database = devops
    check_pg_changed_rows_are_found(run(devops), env, database, DEVOPS_STORY)


def test_iot_hypertables_nulls_and_every_iot_type_answered_right(iot):
    assert hypertables(iot) == [("diagnostics", "time", "12:00:00", 3), ("readings", "time", "12:00:00", 3)]
    [(nameless, null_load, rows)] = sql(iot, "SELECT count(*) FILTER (WHERE tags_id IS NULL), count(*) FILTER (WHERE current_load IS NULL), "
                                             "count(*) FROM diagnostics")
    assert 0 < nameless < rows * 0.01 and 0.02 < null_load / rows < 0.05  # one of 3 fields of 9% of the rows (2 of 7 draws)
    assert_every_iot_type_answers_ok(run(iot)("query", "-w", "2", "-r", "2"))


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iot):
    check_iot_changed_rows_are_found(run(iot), lambda statement: sql(iot, statement))
