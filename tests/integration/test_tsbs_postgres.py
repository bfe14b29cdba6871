"""TSBS's cpu-only data and DevOps query types on the real PostgreSQL (tests/tsbs_story.py): TSBS's
TimescaleDB layout as plain tables, TSBS's rows and points, every type answered `ok`, changed rows
found. Runs in a database of its own."""

from __future__ import annotations

import pytest

from tests.conftest import dedicated_database, pg_env_or_fail, run_cli
from tests.tsbs_story import DATA, HOSTS, INSERT, TSBS_ROWS, assert_every_type_answers_ok, assert_inserted, check_pg_changed_rows_are_found, pg_rows

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DATABASE = "iotbench_tsbs"


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    """(PG* settings, a folder to run the CLI in) once the story's data is inserted, for the module's tests."""
    env = dedicated_database(pg_env_or_fail(), DATABASE)
    folder = tmp_path_factory.mktemp("tsbs-postgres")
    assert_inserted(run_cli(["insert", "--target", "postgresql-local", *INSERT], folder, env=env))
    return env, folder


def run(pg):
    env, folder = pg
    return lambda *args: run_cli([args[0], "--target", "postgresql-local", *args[1:]], folder, env=env)


def sql(env, statement: str, *params) -> list[tuple]:
    return pg_rows(env, DATABASE, statement, *params)


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
