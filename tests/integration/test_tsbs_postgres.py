"""TSBS's three use cases on the real PostgreSQL (tests/tsbs_story.py): TSBS's TimescaleDB layout as
plain tables, TSBS's rows and points, every type answered `ok`, changed rows found. Each story runs in
a database of its own."""

from __future__ import annotations

import pytest

from tests.conftest import dedicated_database, pg_env_or_fail, run_cli
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

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DATABASE, DEVOPS_DATABASE, IOT_DATABASE = "iotbench_tsbs", "iotbench_tsbs_devops", "iotbench_tsbs_iot"


def inserted(tmp_path_factory, database: str, args: list[str], check):
    """(PG* settings, a folder to run the CLI in) once a story's data is inserted, for the module's tests."""
    env = dedicated_database(pg_env_or_fail(), database)
    folder = tmp_path_factory.mktemp(database)
    check(run_cli(["insert", "--target", "postgresql-local", *args], folder, env=env))
    return env, folder


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    return inserted(tmp_path_factory, DATABASE, INSERT, assert_inserted)


@pytest.fixture(scope="module")
def devops(tmp_path_factory):
    return inserted(tmp_path_factory, DEVOPS_DATABASE, DEVOPS_STORY.insert, lambda result: assert_inserted(result, DEVOPS_STORY))


@pytest.fixture(scope="module")
def iot(tmp_path_factory):
    return inserted(tmp_path_factory, IOT_DATABASE, IOT_INSERT, assert_iot_inserted)


def run(pg):
    env, folder = pg
    return lambda *args: run_cli([args[0], "--target", "postgresql-local", *args[1:]], folder, env=env)


def sql(env, statement: str, *params, database: str = DATABASE) -> list[tuple]:
    return pg_rows(env, database, statement, *params)


def test_tsbs_layout_and_every_query_type_answered_right(pg):
    env, _ = pg
    assert sql(env, "SELECT count(*), count(DISTINCT tags_id), min(time) = to_timestamp(%s / 1000.0) FROM cpu", DATA.start_ms) == [(TSBS_ROWS, HOSTS, True)]
    columns = sql(env, "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'cpu' ORDER BY ordinal_position")
    assert columns[:3] == [("time", "timestamp with time zone"), ("tags_id", "integer"), ("usage_user", "double precision")]
    assert columns[-1] == ("additional_tags", "jsonb") and len(columns) == 13
    assert {name for (name,) in sql(env, "SELECT indexname FROM pg_indexes WHERE tablename = 'cpu'")} == {"cpu_tags_id_time", "cpu_time"}
    assert sql(env, "SELECT count(*), min(id), max(id) FROM tags") == [(HOSTS, 1, HOSTS)]
    assert_every_type_answers_ok(run(pg)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(pg):
    check_pg_changed_rows_are_found(run(pg), pg[0], DATABASE)


def test_devops_layout_own_tags_and_the_devops_types_over_its_cpu(devops):
    env, _ = devops
    assert sql(env, "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('cpu', 'diskio', 'disk', 'kernel', 'mem', 'net', "
                    "'nginx', 'postgresl', 'redis', 'tags')", database=DEVOPS_DATABASE) == [(10,)]
    assert sql(env, "SELECT count(*), min(additional_tags->>'interface') FROM net", database=DEVOPS_DATABASE) == [(DEVOPS_STORY.tsbs_rows // 9, "eth0")]
    assert sql(env, "SELECT bool_and(total = free + used), min(total) FROM disk", database=DEVOPS_DATABASE) == [(True, 2.0**40)]
    assert_every_type_answers_ok(run(devops)("query", "-w", "2", "-r", "2"), DEVOPS_STORY)  # no --queries: the data's own, DevOps's 15
    check_pg_changed_rows_are_found(run(devops), env, DEVOPS_DATABASE, DEVOPS_STORY)


def test_iot_layout_nulls_and_every_iot_type_answered_right(iot):
    env, _ = iot
    columns = sql(env, "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'tags' ORDER BY ordinal_position",
                  database=IOT_DATABASE)
    assert columns[1:3] == [("name", "text"), ("fleet", "text")] and columns[-1] == ("nominal_fuel_consumption", "double precision")
    [(nameless, null_velocity, rows)] = sql(env, "SELECT count(*) FILTER (WHERE tags_id IS NULL), count(*) FILTER (WHERE velocity IS NULL), "
                                                 "count(*) FROM readings", database=IOT_DATABASE)
    assert 0 < nameless < rows * 0.01 and 0.005 < null_velocity / rows < 0.03
    assert_every_iot_type_answers_ok(run(iot)("query", "-w", "2", "-r", "2"))


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iot):
    check_iot_changed_rows_are_found(run(iot), lambda statement: sql(iot[0], statement, database=IOT_DATABASE))
