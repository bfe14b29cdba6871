"""TSBS's three use cases on the real TimescaleDB (tests/tsbs_story.py): TSBS's TimescaleDB target's
layout (hypertables of 12-hour chunks without TimescaleDB's default indexes, one per measurement),
TSBS's rows and points, every type answered `ok` in TSBS's own SQL, changed rows found. Each story runs
in a database of its own on the server of scripts/servers/start-timescaledb.sh."""

from __future__ import annotations

import psycopg
import pytest

from iotdb_bench.simulator.spec import TSBS_TABLES
from tests import tsbs_story as story
from tests.conftest import pg_connect
from tests.modules.test_timescaledb import timescaledb_env

pytestmark = pytest.mark.timescaledb


@pytest.fixture(scope="module")
def stories(tmp_path_factory):
    env = timescaledb_env()
    try:
        pg_connect(env).close()
    except psycopg.OperationalError as error:
        pytest.fail(f"TimescaleDB is not reachable ({error}); start it with scripts/servers/start-timescaledb.sh")
    return story.PgStories(env, "timescaledb-local", tmp_path_factory.mktemp, target_env)


def target_env(env, database: str) -> dict[str, str]:
    """The shipped `timescaledb-local` target, pointed at the story's database."""
    return {"TIMESCALEDB_HOST": env["PGHOST"], "TIMESCALEDB_PORT": env["PGPORT"], "TIMESCALEDB_DATABASE": database,
            "PGPASSWORD": env["PGPASSWORD"], "PGUSER": env["PGUSER"]}


def hypertables(timescale) -> list[tuple]:
    return timescale.sql("SELECT h.hypertable_name, d.column_name, d.time_interval::text, h.num_chunks FROM timescaledb_information.hypertables h "
                         "JOIN timescaledb_information.dimensions d USING (hypertable_schema, hypertable_name) ORDER BY 1")


def test_tsbs_layout_and_every_query_type_answered_right(stories):
    timescale = stories("cpu")
    assert timescale.sql("SELECT count(*), count(DISTINCT tags_id) FROM cpu") == [(story.TSBS_ROWS, story.HOSTS)]
    # A hypertable on time of 12-hour chunks (TSBS's --chunk-time): 13 hours from midnight are two chunks.
    assert hypertables(timescale) == [("cpu", "time", "12:00:00", 2)]
    # TSBS's indexes only (create_default_indexes => FALSE): no time index of TimescaleDB's own.
    assert {name for (name,) in timescale.sql("SELECT indexname FROM pg_indexes WHERE tablename = 'cpu'")} == {"cpu_tags_id_time", "cpu_time"}
    assert timescale.sql("SELECT hostname FROM tags WHERE id = 1") == [("host_0",)]
    assert timescale.sql("SELECT min(time) = to_timestamp(%s / 1000.0) FROM cpu", story.DATA.start_ms) == [(True,)]
    story.assert_every_type_answers_ok(timescale.run("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(stories):
    timescale = stories("cpu")
    story.check_pg_changed_rows_are_found(timescale.run, timescale.env, timescale.database)


def test_devops_hypertables_and_the_devops_types_over_its_cpu(stories):
    timescale = stories("devops")
    assert hypertables(timescale) == [(table, "time", "12:00:00", 2) for table in sorted(TSBS_TABLES["tsbs-devops"])]
    assert timescale.sql("SELECT count(*), count(DISTINCT additional_tags->>'server') FROM redis") == [(story.DEVOPS_STORY.tsbs_rows // 9, story.HOSTS)]
    story.assert_every_type_answers_ok(timescale.run("query", "-w", "2", "-r", "2"), story=story.DEVOPS_STORY)  # no --queries: the data's own
    story.check_pg_changed_rows_are_found(timescale.run, timescale.env, timescale.database, story.DEVOPS_STORY)


def test_iot_hypertables_nulls_and_every_iot_type_answered_right(stories):
    timescale = stories("iot")
    assert hypertables(timescale) == [("diagnostics", "time", "12:00:00", 3), ("readings", "time", "12:00:00", 3)]
    [(nameless, null_load, rows)] = timescale.sql("SELECT count(*) FILTER (WHERE tags_id IS NULL), count(*) FILTER (WHERE current_load IS NULL), "
                                                  "count(*) FROM diagnostics")
    assert 0 < nameless < rows * 0.01 and 0.02 < null_load / rows < 0.05  # one of 3 fields of 9% of the rows (2 of 7 draws)
    story.assert_every_iot_type_answers_ok(timescale.run("query", "-w", "2", "-r", "2"))


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(stories):
    timescale = stories("iot")
    story.check_iot_changed_rows_are_found(timescale.run, timescale.sql)
