"""TSBS's three use cases on the real PostgreSQL (tests/tsbs_story.py): TSBS's TimescaleDB layout as
plain tables, TSBS's rows and points, every type answered `ok`, changed rows found. Each story runs in
a database of its own."""

from __future__ import annotations

import pytest

from tests import tsbs_story as story
from tests.conftest import pg_env_or_fail

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture(scope="module")
def stories(tmp_path_factory):
    return story.PgStories(pg_env_or_fail(), "postgresql-local", tmp_path_factory.mktemp, lambda env, database: env)


def test_tsbs_layout_and_every_query_type_answered_right(stories):
    pg = stories("cpu")
    assert pg.sql("SELECT count(*), count(DISTINCT tags_id), min(time) = to_timestamp(%s / 1000.0) FROM cpu", story.DATA.start_ms) == [
        (story.TSBS_ROWS, story.HOSTS, True)]
    columns = pg.sql("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'cpu' ORDER BY ordinal_position")
    assert columns[:3] == [("time", "timestamp with time zone"), ("tags_id", "integer"), ("usage_user", "double precision")]
    assert columns[-1] == ("additional_tags", "jsonb") and len(columns) == 13
    assert {name for (name,) in pg.sql("SELECT indexname FROM pg_indexes WHERE tablename = 'cpu'")} == {"cpu_tags_id_time", "cpu_time"}
    assert pg.sql("SELECT count(*), min(id), max(id) FROM tags") == [(story.HOSTS, 1, story.HOSTS)]
    story.assert_every_type_answers_ok(pg.run("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(stories):
    pg = stories("cpu")
    story.check_pg_changed_rows_are_found(pg.run, pg.env, pg.database)


def test_devops_layout_own_tags_and_the_devops_types_over_its_cpu(stories):
    pg = stories("devops")
    assert pg.sql("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('cpu', 'diskio', 'disk', 'kernel', 'mem', 'net', "
                  "'nginx', 'postgresl', 'redis', 'tags')") == [(10,)]
    assert pg.sql("SELECT count(*), min(additional_tags->>'interface') FROM net") == [(story.DEVOPS_STORY.tsbs_rows // 9, "eth0")]
    assert pg.sql("SELECT bool_and(total = free + used), min(total) FROM disk") == [(True, 2.0**40)]
    story.assert_every_type_answers_ok(pg.run("query", "-w", "2", "-r", "2"), story=story.DEVOPS_STORY)  # no --queries: the data's own, DevOps's 15
    story.check_pg_changed_rows_are_found(pg.run, pg.env, pg.database, story.DEVOPS_STORY)


def test_iot_layout_nulls_and_every_iot_type_answered_right(stories):
    pg = stories("iot")
    columns = pg.sql("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'tags' ORDER BY ordinal_position")
    assert columns[1:3] == [("name", "text"), ("fleet", "text")] and columns[-1] == ("nominal_fuel_consumption", "double precision")
    [(nameless, null_velocity, rows)] = pg.sql("SELECT count(*) FILTER (WHERE tags_id IS NULL), count(*) FILTER (WHERE velocity IS NULL), "
                                               "count(*) FROM readings")
    assert 0 < nameless < rows * 0.01 and 0.005 < null_velocity / rows < 0.03
    story.assert_every_iot_type_answers_ok(pg.run("query", "-w", "2", "-r", "2"))


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(stories):
    pg = stories("iot")
    story.check_iot_changed_rows_are_found(pg.run, pg.sql)
