"""TSBS's cpu-only, devops and iot data and its DevOps and IoT query types on the real QuestDB
(tests/tsbs_story.py): TSBS's questdb target's tables (what tsbs_load_questdb's ILP lines make: the tags
as SYMBOL, the fields as LONG, mem's percentages and IoT's floats DOUBLE, the designated `timestamp`,
WAL, DAY partitions), TSBS's rows and points, every type answered `ok` in QuestDB's SQL, changed rows
found. The shipped `questdb-local` target on scripts/servers/start-questdb.sh's server; the suite drops
its tables at the end."""

from __future__ import annotations

import datetime as dt
import time

import psycopg
import pytest

from iotdb_bench.simulator.spec import TSBS_TABLES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import run_cli
from tests.modules.test_questdb import HOST, HTTP_PORT, PG_PORT, connect, rows, table_info
from tests.tsbs_story import (
    DATA,
    DEVOPS_STORY,
    HOSTS,
    INSERT,
    IOT_DATA,
    IOT_INSERT,
    TRUCKS,
    TSBS_ROWS,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    assert_inserted,
    assert_iot_inserted,
    check_changed_rows_are_found,
    check_iot_changes_found,
)

pytestmark = pytest.mark.questdb

ENV = {"QUESTDB_HOST": HOST, "QUESTDB_HTTP_PORT": str(HTTP_PORT), "QUESTDB_PG_PORT": str(PG_PORT)}
# The columns tsbs_load_questdb's lines make QuestDB create (seen on this server with TSBS 37fced7's loader).
TSBS_COLUMNS = [*((name, "SYMBOL") for name in TAG_NAMES), *((name, "LONG") for name in CPU_FIELDS), ("timestamp", "TIMESTAMP")]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder to run the CLI in once the story's data is inserted; the table is dropped afterwards."""
    try:
        connect().close()
    except psycopg.OperationalError as error:
        pytest.fail(f"QuestDB is not reachable at {HOST}:{PG_PORT} ({error}); start it with scripts/servers/start-questdb.sh")
    folder = tmp_path_factory.mktemp("tsbs-questdb")
    assert_inserted(run(folder)("insert", *INSERT))
    yield folder
    with connect() as conn:
        conn.execute("DROP TABLE IF EXISTS cpu")


def run(folder):
    return lambda *args: run_cli([args[0], "--target", "questdb-local", *args[1:]], folder, env=ENV)


def at(step: int) -> dt.datetime:
    """The designated timestamp of a step, as QuestDB returns it (a naive datetime in UTC)."""
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=int(DATA.time_of(step)))


def test_tsbs_layout_and_every_query_type_answered_right(folder):
    assert rows('SELECT "column", type FROM table_columns(\'cpu\')') == TSBS_COLUMNS
    assert table_info("cpu") == ("timestamp", "DAY", True, False)
    assert rows("SELECT count(), count_distinct(hostname), min(timestamp), max(timestamp) FROM cpu") == [
        (TSBS_ROWS, HOSTS, at(0), at(DATA.steps - 1))]
    # Every row carries its host's tags, as TSBS's lines do.
    stored_tags = rows(f"SELECT DISTINCT {', '.join(TAG_NAMES)} FROM cpu ORDER BY hostname")
    assert sorted(stored_tags) == sorted(host_tags(DATA.seed, 0, HOSTS))
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(folder):
    def change(host: int, step: int, value: float) -> None:
        where = f"hostname = 'host_{host}' AND timestamp = %s"
        with connect() as conn:
            conn.execute(f"UPDATE cpu SET usage_user = %s WHERE {where}", (value, at(step)))
            # UPDATE on a WAL table is applied asynchronously: wait until it shows.
            deadline = time.monotonic() + 30
            while conn.execute(f"SELECT usage_user FROM cpu WHERE {where}", (at(step),)).fetchall() != [(value,)]:
                assert time.monotonic() < deadline, "QuestDB did not apply the UPDATE within 30 s"
                time.sleep(0.05)

    check_changed_rows_are_found(run(folder), change, value=101)  # LONG fields: a whole number above 100


def test_devops_tables_rows_and_the_devops_types_over_its_cpu(folder):
    """Runs last: its insert replaces the cpu-only story's `cpu` with devops data."""
    try:
        assert_inserted(run(folder)("insert", *DEVOPS_STORY.insert), DEVOPS_STORY)
        per_table = DEVOPS_STORY.tsbs_rows // len(TSBS_TABLES["tsbs-devops"])
        for table in TSBS_TABLES["tsbs-devops"]:
            assert rows(f"SELECT count(), count_distinct(hostname) FROM {table}") == [(per_table, HOSTS)], table
        assert rows('SELECT "column", type FROM table_columns(\'diskio\')')[len(TAG_NAMES):len(TAG_NAMES) + 2] == [("serial", "SYMBOL"), ("reads", "LONG")]
        assert [row for row in rows('SELECT "column", type FROM table_columns(\'mem\')') if row[1] == "DOUBLE"] == [
            ("used_percent", "DOUBLE"), ("available_percent", "DOUBLE"), ("buffered_percent", "DOUBLE")]
        assert rows("SELECT count() FROM mem WHERE used_percent <> 100.0 * used / total") == [(0,)]
        assert_every_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"), story=DEVOPS_STORY)  # no --queries: the data's own
    finally:
        with connect() as conn:
            for table in TSBS_TABLES["tsbs-devops"]:
                conn.execute(f"DROP TABLE IF EXISTS {table}")


@pytest.mark.parametrize("shape", ["tsbs-devops", "tsbs-iot"])
def test_devops_and_iot_need_batches_the_module_encodes(tmp_path, shape):
    result = run(tmp_path)("insert", "--schema", shape, "--devices", "2", "--time-range", "1m", "-r", "1")
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: module 'questdb': --schema {shape} is written as batches the module encodes: it needs --batch and batch_encoding numpy"]


def test_iot_refuses_dedup(tmp_path):
    result = run(tmp_path)("insert", "--schema", "tsbs-iot", "--devices", "2", "--time-range", "1m", "-r", "1", "--batch", "10", "--extra-option", "dedup=true")
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        "error: module 'questdb': dedup with --schema tsbs-iot: TSBS writes some rows without their truck's name, and such rows of "
        "different trucks at the same time would replace each other"]


# -- IoT -------------------------------------------------------------------------------------------
# The columns tsbs_load_questdb makes QuestDB create from `tsbs_generate_data --use-case=iot --format=questdb`
# (seen on this server with TSBS 37fced7's loader): the string tags SYMBOL, the capacities (tags TSBS writes
# as fields) and the fields DOUBLE, but status (TSBS's int64) LONG.
IOT_TAGS = [("name", "SYMBOL"), ("fleet", "SYMBOL"), ("driver", "SYMBOL"), ("model", "SYMBOL"), ("device_version", "SYMBOL"),
            ("load_capacity", "DOUBLE"), ("fuel_capacity", "DOUBLE"), ("nominal_fuel_consumption", "DOUBLE")]
IOT_COLUMNS = {"readings": [*IOT_TAGS, *((name, "DOUBLE") for name in ("latitude", "longitude", "elevation", "velocity", "heading", "grade",
                                                                      "fuel_consumption")), ("timestamp", "TIMESTAMP")],
               "diagnostics": [*IOT_TAGS, ("fuel_state", "DOUBLE"), ("current_load", "DOUBLE"), ("status", "LONG"), ("timestamp", "TIMESTAMP")]}


@pytest.fixture(scope="module")
def iot_folder(tmp_path_factory):
    """A folder to run the CLI in once the IoT story's data is inserted; its tables are dropped afterwards."""
    folder = tmp_path_factory.mktemp("tsbs-questdb-iot")
    assert_iot_inserted(run(folder)("insert", *IOT_INSERT))
    yield folder
    with connect() as conn:
        for table in TSBS_TABLES["tsbs-iot"]:
            conn.execute(f"DROP TABLE IF EXISTS {table}")


def test_iot_tables_with_tsbs_nulls_and_every_iot_type_answered_right(iot_folder):
    for table, measurement_rows in zip(TSBS_TABLES["tsbs-iot"], IOT_DATA.rows_per_measurement(), strict=True):
        assert rows(f'SELECT "column", type FROM table_columns(\'{table}\')') == IOT_COLUMNS[table]
        assert table_info(table) == ("timestamp", "DAY", True, False)
        assert rows(f"SELECT count() FROM {table}") == [(measurement_rows,)]
    # TSBS's nulls, stored as nulls: a nameless row (its null name tag), a null fleet, a field left out of some rows.
    [(nameless, fleetless, loadless, rows_there)] = rows("SELECT sum(CASE WHEN name IS NULL THEN 1 ELSE 0 END), "
                                                          "sum(CASE WHEN fleet IS NULL THEN 1 ELSE 0 END), "
                                                          "sum(CASE WHEN current_load IS NULL THEN 1 ELSE 0 END), count() FROM diagnostics")
    assert 0 < nameless < rows_there * 0.01 and 0 < fleetless < rows_there * 0.01 and 0.02 < loadless / rows_there < 0.05
    assert rows("SELECT count_distinct(name) FROM readings") == [(TRUCKS,)]
    assert_every_iot_type_answers_ok(run(iot_folder)("query", "-w", "2", "-r", "2"))  # no --queries: the data's own, all 13


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iot_folder):
    """tests/tsbs_story.py's IOT_CHANGES made on QuestDB: the row is found first (QuestDB's UPDATE of a WAL
    table takes no join), then updated, and the test waits until the update is applied."""
    changes = (("diagnostics", "current_load", 1_000_000, "truck_0", "max", ""), ("readings", "longitude", 200, "truck_1", "max", ""),
               ("readings", "fuel_consumption", 1000, "truck_2", "min", " AND velocity > 1"))
    with connect() as conn:
        for table, field, value, truck, pick, moving in changes:
            where = f"name = '{truck}' AND timestamp = %s"
            [(at,)] = conn.execute(f"SELECT {pick}(timestamp) FROM {table} WHERE name = '{truck}'{moving}").fetchall()
            conn.execute(f"UPDATE {table} SET {field} = %s WHERE {where}", (value, at))
            deadline = time.monotonic() + 30
            while conn.execute(f"SELECT {field} FROM {table} WHERE {where}", (at,)).fetchall() != [(value,)]:
                assert time.monotonic() < deadline, "QuestDB did not apply the UPDATE within 30 s"
                time.sleep(0.05)
    check_iot_changes_found(run(iot_folder))
