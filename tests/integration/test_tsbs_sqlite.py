"""TSBS's cpu-only data and DevOps query types on SQLite (tests/tsbs_story.py): TSBS's rows and points,
its layout in the file, every type answered `ok`, changed rows found; the time range continued by
--steps; the tool's queries refused on TSBS's data."""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import run_cli
from tests.tsbs_story import DATA, HOSTS, INSERT, TSBS_ROWS, assert_every_type_answers_ok, assert_inserted, check_changed_rows_are_found

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder whose SQLite file holds the story's data, inserted once for the module's tests."""
    folder = tmp_path_factory.mktemp("tsbs-sqlite")
    assert_inserted(run_cli(["insert", "--target", "sqlite", *INSERT], folder))
    return folder


def run(folder):
    return lambda *args: run_cli([args[0], "--target", "sqlite", *args[1:]], folder)


def sql(folder, statement: str, params=()) -> list[tuple]:
    with sqlite3.connect(folder / "iotdb-bench.sqlite3") as db:
        return db.execute(statement, params).fetchall()


def test_tsbs_layout_and_every_query_type_answered_right(folder):
    assert sql(folder, "SELECT count(*), count(DISTINCT tags_id), min(time), max(time) FROM cpu") == [(TSBS_ROWS, HOSTS, DATA.start_ms, DATA.time_of(DATA.steps - 1))]
    assert sql(folder, "SELECT id, hostname FROM tags ORDER BY id LIMIT 2") == [(1, "host_0"), (2, "host_1")]
    indexes = {name for (name,) in sql(folder, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('cpu', 'tags')")}
    assert {"cpu_tags_id_time", "cpu_time", "uniq1", "tags_hostname"} <= indexes
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))
    refused = run(folder)("query", "-r", "1")
    assert refused.code == 1 and "Traceback" not in refused.stderr
    assert "query refused: the data in cpu was written with --schema tsbs-cpu; the query count-events reads data written with --schema events" in refused.stderr


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(folder):
    def change(host, step, value):
        sql(folder, "UPDATE cpu SET usage_user = ? WHERE tags_id = ? AND time = ?", (value, host + 1, DATA.time_of(step)))

    check_changed_rows_are_found(run(folder), change)


def test_steps_continue_the_time_range_and_the_walks(cli, tmp_path):
    result = cli("insert", "--target", "sqlite", "--schema", "tsbs-cpu", "--devices", "5", "--time-range", "1h", "-w", "2", "--steps", "2",
                 "-r", "1", "--batch", "500")
    assert [run["report"]["verification"]["counted"] for run in result.results()["runs"]] == [1800, 3600], result.stderr
    assert sql(tmp_path, "SELECT count(*), max(time) FROM cpu") == [(3600, DATA.start_ms + 2 * 3_600_000 - 10_000)]
    assert cli("query", "--target", "sqlite", "-r", "2", "--queries", "lastpoint,single-groupby-5-1-1,double-groupby-all").query_rows() == {
        "lastpoint": 5, "single-groupby-5-1-1": 61, "double-groupby-all": 10}
