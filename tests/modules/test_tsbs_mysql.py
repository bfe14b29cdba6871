"""TSBS's three use cases on the real MariaDB (tests/tsbs_story.py): TSBS has no MySQL target, so its
TimescaleDB target's layout in MariaDB's SQL (a tags table and a table per measurement, DATETIME(3)
times in UTC, DOUBLE fields, the measurements' own tags as JSON, IoT's nulls as NULL, TSBS's
indexes), TSBS's rows and points, every DevOps and IoT type answered `ok`, changed rows found. The
shipped `mysql-local` target (values lists) on scripts/servers/start-mariadb.sh's server, whose one
database holds one story at a time: each is inserted when a test first needs it; the suite drops the
tables at the end."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from iotdb_bench.simulator.spec import TSBS_TABLES
from tests.conftest import run_cli
from tests.modules.test_mysql import DATABASE, HOST, PASSWORD, PORT, USER, connect
from tests.tsbs_story import (
    DATA,
    DEVOPS_STORY,
    HOSTS,
    INSERTS,
    TRUCKS,
    TSBS_ROWS,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    check_changed_rows_are_found,
    check_iot_changed_rows_are_found,
)

pytestmark = pytest.mark.mysql

ENV = {"MYSQL_HOST": HOST, "MYSQL_PORT": str(PORT), "MYSQL_USER": USER, "MYSQL_DATABASE": DATABASE, "MYSQL_PASSWORD": PASSWORD}


def sql(statement: str, *params) -> list[tuple]:
    with connect() as conn, conn.cursor() as cursor:
        cursor.execute(statement, params or None)
        return list(cursor.fetchall())


@pytest.fixture(scope="module")
def stories(tmp_path_factory):
    """`stories(name)`: a folder to run the CLI in once the story's data (cpu, devops, iot) is the
    database's; the tables are dropped afterwards."""
    import pymysql

    try:
        connect().close()
    except pymysql.err.OperationalError as error:
        pytest.fail(f"MariaDB is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-mariadb.sh")
    folder, loaded = tmp_path_factory.mktemp("tsbs-mysql"), []

    def load(name: str):
        if loaded != [name]:
            args, check = INSERTS[name]
            check(run(folder)("insert", *args))
            loaded[:] = [name]
        return folder

    yield load
    sql(f"DROP TABLE IF EXISTS {', '.join(sorted({table for tables in TSBS_TABLES.values() for table in tables} | {'tags'}))}")


def run(folder):
    return lambda *args: run_cli([args[0], "--target", "mysql-local", *args[1:]], folder, env=ENV)


def change_cpu(story_data=DATA):
    """How check_changed_rows_are_found changes a cpu row."""

    def change(host: int, step: int, value: float) -> None:
        time = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=int(story_data.time_of(step)))  # DATETIME(3) in UTC
        assert sql("SELECT count(*) FROM cpu WHERE tags_id = %s AND time = %s", host + 1, time) == [(1,)]
        sql("UPDATE cpu SET usage_user = %s WHERE tags_id = %s AND time = %s", value, host + 1, time)

    return change


def test_tsbs_layout_and_every_query_type_answered_right(stories):
    folder = stories("cpu")
    start = dt.datetime(2016, 1, 1)
    assert sql("SELECT count(*), count(DISTINCT tags_id), min(time), max(time) FROM cpu") == [
        (TSBS_ROWS, HOSTS, start, start + dt.timedelta(milliseconds=DATA.time_of(DATA.steps - 1) - DATA.start_ms))]
    columns = sql("SELECT column_name, column_type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'cpu' "
                  "ORDER BY ordinal_position")
    assert columns[:3] == [("time", "datetime(3)"), ("tags_id", "int(11)"), ("usage_user", "double")]
    assert columns[-1][0] == "additional_tags" and len(columns) == 13
    indexes = sql("SELECT table_name, index_name, group_concat(column_name ORDER BY seq_in_index) FROM information_schema.statistics "
                  "WHERE table_schema = DATABASE() AND table_name IN ('cpu', 'tags') GROUP BY table_name, index_name")
    assert sorted(indexes) == [("cpu", "cpu_tags_id_time", "tags_id,time"), ("cpu", "cpu_time", "time"), ("tags", "PRIMARY", "id"),
                               ("tags", "tags_hostname", "hostname"),
                               ("tags", "uniq1", "hostname,region,datacenter,rack,os,arch,team,service,service_version,service_environment")]
    assert sql("SELECT count(*), min(id), max(id) FROM tags") == [(HOSTS, 1, HOSTS)]
    assert sql("SELECT hostname FROM tags WHERE id = 1") == [("host_0",)]
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(stories):
    check_changed_rows_are_found(run(stories("cpu")), change_cpu())


def test_devops_layout_own_tags_and_the_devops_types_over_its_cpu(stories):
    folder, story = stories("devops"), DEVOPS_STORY
    tables = {name for (name,) in sql("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")}
    assert set(TSBS_TABLES["tsbs-devops"]) | {"tags"} <= tables
    # diskio's `reads` (a keyword in MySQL's SQL) and the other fields as DOUBLE; every host's row of every step.
    columns = sql("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'diskio' "
                  "ORDER BY ordinal_position")
    assert columns[2] == ("reads", "double") and columns[-1][0] == "additional_tags"
    assert sql("SELECT count(*) FROM redis") == [(story.tsbs_rows // story.tables,)]
    [(own_tags,)] = sql("SELECT additional_tags FROM nginx LIMIT 1")
    assert json.loads(own_tags).keys() == {"port", "server"}
    assert sql("SELECT count(*) FROM cpu WHERE additional_tags IS NOT NULL") == [(0,)]
    assert sql("SELECT min(total = free + used) FROM disk") == [(1,)]
    assert_every_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"), story=story)  # no --queries: the data's own, DevOps's 15
    check_changed_rows_are_found(run(folder), change_cpu(story.data), story=story)


def test_iot_layout_nulls_and_every_iot_type_answered_right(stories):
    folder = stories("iot")
    assert sql("SELECT count(*), count(DISTINCT name) FROM tags") == [(TRUCKS, TRUCKS)]
    columns = sql("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'diagnostics' "
                  "ORDER BY ordinal_position")
    assert columns == [("time", "datetime"), ("tags_id", "int"), ("fuel_state", "double"), ("current_load", "double"), ("status", "double"),
                       ("additional_tags", "longtext")]  # MariaDB's JSON
    [(nameless, null_velocity, rows)] = sql("SELECT sum(tags_id IS NULL), sum(velocity IS NULL), count(*) FROM readings")
    assert 0 < nameless < rows * 0.01 and 0.005 < null_velocity / rows < 0.03  # TSBS's null name (0.1%) and fields (9% of rows, one of 7)
    assert_every_iot_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"))  # no --queries: the data's own, IoT's 13


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(stories):
    check_iot_changed_rows_are_found(run(stories("iot")), sql)
