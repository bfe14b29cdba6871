"""TSBS's cpu-only data and DevOps query types on the real MariaDB (tests/tsbs_story.py): TSBS has no
MySQL target, so its TimescaleDB target's layout in MariaDB's SQL (tags and cpu tables, DATETIME(3)
times in UTC, DOUBLE fields, TSBS's indexes), TSBS's rows and points, every type answered `ok`,
changed rows found. The shipped `mysql-local` target (values lists) on scripts/servers/start-mariadb.sh's
server; the suite drops its tables at the end."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.conftest import run_cli
from tests.modules.test_mysql import DATABASE, HOST, PASSWORD, PORT, USER, connect
from tests.tsbs_story import DATA, HOSTS, INSERT, TSBS_ROWS, assert_every_type_answers_ok, assert_inserted, check_changed_rows_are_found

pytestmark = pytest.mark.mysql

ENV = {"MYSQL_HOST": HOST, "MYSQL_PORT": str(PORT), "MYSQL_USER": USER, "MYSQL_DATABASE": DATABASE, "MYSQL_PASSWORD": PASSWORD}


def sql(statement: str, *params) -> list[tuple]:
    with connect() as conn, conn.cursor() as cursor:
        cursor.execute(statement, params or None)
        return list(cursor.fetchall())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder to run the CLI in once the story's data is inserted; the tables are dropped afterwards."""
    import pymysql

    try:
        connect().close()
    except pymysql.err.OperationalError as error:
        pytest.fail(f"MariaDB is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-mariadb.sh")
    folder = tmp_path_factory.mktemp("tsbs-mysql")
    assert_inserted(run(folder)("insert", *INSERT))
    yield folder
    sql("DROP TABLE IF EXISTS cpu, tags")


def run(folder):
    return lambda *args: run_cli([args[0], "--target", "mysql-local", *args[1:]], folder, env=ENV)


def test_tsbs_layout_and_every_query_type_answered_right(folder):
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


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(folder):
    def change(host: int, step: int, value: float) -> None:
        time = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=int(DATA.time_of(step)))  # DATETIME(3) in UTC
        assert sql("SELECT count(*) FROM cpu WHERE tags_id = %s AND time = %s", host + 1, time) == [(1,)]
        sql("UPDATE cpu SET usage_user = %s WHERE tags_id = %s AND time = %s", value, host + 1, time)

    check_changed_rows_are_found(run(folder), change)
