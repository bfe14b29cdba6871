"""TSBS's three use cases on SQLite (tests/tsbs_story.py): TSBS's rows and points in its layout in the
file, every query type answered `ok`, changed rows found; the time range continued by --steps; the
tool's queries refused on TSBS's data, and `query` alone running the data's own types."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.conftest import run_cli
from tests.tsbs_story import (
    DATA,
    DEVOPS_STORY,
    HOSTS,
    INSERT,
    IOT_INSERT,
    TRUCKS,
    TSBS_ROWS,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    assert_inserted,
    assert_iot_inserted,
    check_changed_rows_are_found,
    check_iot_changed_rows_are_found,
)

pytestmark = pytest.mark.slow


def inserted(tmp_path_factory, name: str, args: list[str], check) -> object:
    """A folder whose SQLite file holds a story's data, inserted once for the module's tests."""
    folder = tmp_path_factory.mktemp(name)
    check(run_cli(["insert", "--target", "sqlite", *args], folder))
    return folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return inserted(tmp_path_factory, "tsbs-sqlite", INSERT, assert_inserted)


@pytest.fixture(scope="module")
def devops_folder(tmp_path_factory):
    return inserted(tmp_path_factory, "tsbs-devops-sqlite", DEVOPS_STORY.insert, lambda result: assert_inserted(result, DEVOPS_STORY))


@pytest.fixture(scope="module")
def iot_folder(tmp_path_factory):
    return inserted(tmp_path_factory, "tsbs-iot-sqlite", IOT_INSERT, assert_iot_inserted)


def run(folder):
    return lambda *args: run_cli([args[0], "--target", "sqlite", *args[1:]], folder)


def sql(folder, statement: str, params=()) -> list[tuple]:
    with sqlite3.connect(folder / "iotdb-bench.sqlite3") as db:
        return db.execute(statement, params).fetchall()


def change_cpu(folder):
    return lambda host, step, value: sql(folder, "UPDATE cpu SET usage_user = ? WHERE tags_id = ? AND time = ?", (value, host + 1, DATA.time_of(step)))


def test_tsbs_layout_and_every_query_type_answered_right(folder):
    assert sql(folder, "SELECT count(*), count(DISTINCT tags_id), min(time), max(time) FROM cpu") == [(TSBS_ROWS, HOSTS, DATA.start_ms, DATA.time_of(DATA.steps - 1))]
    assert sql(folder, "SELECT id, hostname FROM tags ORDER BY id LIMIT 2") == [(1, "host_0"), (2, "host_1")]
    indexes = {name for (name,) in sql(folder, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('cpu', 'tags')")}
    assert {"cpu_tags_id_time", "cpu_time", "uniq1", "tags_hostname"} <= indexes
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))
    refused = run(folder)("query", "-r", "1", "--queries", "count-events")
    assert refused.code == 1 and "Traceback" not in refused.stderr
    assert ("query refused: the data in cpu was written with --schema tsbs-cpu; --schema tsbs-cpu is TSBS's data, which its use case's "
            "query types read (--queries tsbs-devops), not count-events") in refused.stderr


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(folder):
    check_changed_rows_are_found(run(folder), change_cpu(folder))


def test_steps_continue_the_time_range_and_the_walks(cli, tmp_path):
    result = cli("insert", "--target", "sqlite", "--schema", "tsbs-cpu", "--devices", "5", "--time-range", "1h", "-w", "2", "--steps", "2",
                 "-r", "1", "--batch", "500")
    assert [run["report"]["verification"]["counted"] for run in result.results()["runs"]] == [1800, 3600], result.stderr
    assert sql(tmp_path, "SELECT count(*), max(time) FROM cpu") == [(3600, DATA.start_ms + 2 * 3_600_000 - 10_000)]
    assert cli("query", "--target", "sqlite", "-r", "2", "--queries", "lastpoint,single-groupby-5-1-1,double-groupby-all").query_rows() == {
        "lastpoint": 5, "single-groupby-5-1-1": 61, "double-groupby-all": 10}


def test_devops_layout_and_the_devops_types_over_its_cpu(devops_folder):
    tables = {name for (name,) in sql(devops_folder, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"cpu", "diskio", "disk", "kernel", "mem", "net", "nginx", "postgresl", "redis", "tags"} <= tables
    assert sql(devops_folder, "SELECT count(*) FROM redis") == [(DEVOPS_STORY.tsbs_rows // 9,)]
    [(tags,)] = sql(devops_folder, "SELECT additional_tags FROM nginx LIMIT 1")
    assert json.loads(tags).keys() == {"port", "server"}
    assert sql(devops_folder, "SELECT count(*) FROM cpu WHERE additional_tags IS NOT NULL") == [(0,)]
    assert sql(devops_folder, "SELECT min(total = free + used) FROM disk") == [(1,)]
    assert_every_type_answers_ok(run(devops_folder)("query", "-w", "2", "-r", "2"), story=DEVOPS_STORY)  # no --queries: the data's own, DevOps's 15
    devops_data = DEVOPS_STORY.data
    check_changed_rows_are_found(run(devops_folder), lambda host, step, value: sql(
        devops_folder, "UPDATE cpu SET usage_user = ? WHERE tags_id = ? AND time = ?", (value, host + 1, devops_data.time_of(step))), story=DEVOPS_STORY)


def test_iot_layout_nulls_and_every_iot_type_answered_right(iot_folder):
    assert sql(iot_folder, "SELECT count(*), count(DISTINCT name) FROM tags") == [(TRUCKS, TRUCKS)]
    columns = [row[1] for row in sql(iot_folder, "PRAGMA table_info(diagnostics)")]
    assert columns == ["time", "tags_id", "fuel_state", "current_load", "status", "additional_tags"]
    [(nameless, null_velocity, rows)] = sql(iot_folder, "SELECT sum(tags_id IS NULL), sum(velocity IS NULL), count(*) FROM readings")
    assert 0 < nameless < rows * 0.01 and 0.005 < null_velocity / rows < 0.03  # TSBS's null name (0.1%) and fields (9% of rows, one of 7)
    assert_every_iot_type_answers_ok(run(iot_folder)("query", "-w", "2", "-r", "2"))  # no --queries: the data's own, IoT's 13
    refused = run(iot_folder)("query", "-r", "1", "--queries", "lastpoint")
    assert refused.code == 1 and "--schema tsbs-iot is TSBS's data, which its use case's query types read (--queries tsbs-iot), not lastpoint" in refused.stderr


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iot_folder):
    check_iot_changed_rows_are_found(run(iot_folder), lambda statement: sql(iot_folder, statement))
