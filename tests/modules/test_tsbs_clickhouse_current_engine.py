"""TSBS's clickhouse target as the clickhouse module writes it for current servers, on a current
ClickHouse engine: chDB (ClickHouse 26.9 embedded in the test process; no current server installs
here, test_tsbs_clickhouse.py runs the story on the real 18.16).

The tables the module creates for the version chDB reports (created_at DateTime64(3, 'UTC')), the
story's rows as the module's INSERT columns, every one of the 15 DevOps types' statements for the
executions the tool draws, each answer checked as the tool checks it; then two rows changed, and
exactly the executions that read them answer wrong. And TSBS's devops tables, a table per measurement;
and its IoT story (tests/tsbs_story.py: 20 trucks over 26 hours, TSBS's missing, late and null rows),
every one of the 13 IoT types' statements (TSBS's TimescaleDB text translated, tsbs_iot.py) right,
then the story's changes, and exactly the executions that read them wrong.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iotdb_bench.simulator.checks.answers import Answer, difference
from iotdb_bench.simulator.modules.clickhouse import ClickhouseOptions, ServerDialect, tsbs_iot
from iotdb_bench.simulator.modules.clickhouse.tsbs import TsbsTables
from iotdb_bench.simulator.queries.parameters import ParameterDraws
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, DevopsAnswers, written
from iotdb_bench.simulator.queries.tsbs_iot import IOT, IotAnswers
from iotdb_bench.simulator.queries.tsbs_iot import written as iot_written
from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES, TSBS_IOT_QUERIES, RunSpec
from iotdb_bench.simulator.workload.shapes import generator, table_layouts
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.modules.test_clickhouse_current_engine import engine_version
from tests.modules.test_tsbs_clickhouse import iot_mutation
from tests.tsbs_story import (
    CHANGED,
    CHANGED_VALUE,
    CPU_ONLY,
    DATA,
    HOSTS,
    IOT_CHANGES,
    IOT_DATA,
    QUERY_SEED,
    TRUCKS,
    TSBS_ROWS,
    iot_readers_of_the_changes,
    reads,
)

pytestmark = pytest.mark.chdb

SPEC = RunSpec(run_id="tsbs", task="insert", target="ch", module="clickhouse", workers=1, batch=10_000, shape="tsbs-cpu", devices=HOSTS,
               time_range_ms=DATA.steps * DATA.interval_ms, primary_key="none", num_inserts=0)
EXECUTIONS = 3


@pytest.fixture(scope="module")
def loaded():
    """(a chDB session, the dialect, the tables) with the story's rows loaded as the module sends them."""
    from chdb import session

    engine = session.Session()
    dialect = ServerDialect.for_server(engine_version(engine), ClickhouseOptions())
    tables = TsbsTables("iotbench", table_layouts(SPEC))
    engine.query("CREATE DATABASE IF NOT EXISTS iotbench")
    for statement in tables.create_statements(dialect):
        engine.query(statement)
    tag_statement, tag_columns = tables.tag_insert(SPEC.seed, range(1, HOSTS + 1))
    insert(engine, tag_statement, tag_columns)
    for batch in generator(SPEC, 0).batches(0, TSBS_ROWS, SPEC.batch):
        insert(engine, tables.row_insert("cpu"), tables.row_columns("cpu", batch), time_column=0)
    yield engine, dialect, tables
    engine.close()


def insert(engine, statement: str, columns: list[np.ndarray], time_column: int | None = None) -> None:
    """An INSERT of the driver's columns, through a DataFrame (chDB's Python() table function)."""
    import pandas as pd

    names = statement.split("(", 1)[1].split(")", 1)[0].split(", ")
    frame = pd.DataFrame({name: column.astype(str) if column.dtype.kind == "S" else column  # noqa: F841 (Python(frame) reads it by name)
                          for name, column in zip(names, columns, strict=True)})
    select = ", ".join(f"fromUnixTimestamp64Milli({name}, 'UTC')" if index == time_column else name for index, name in enumerate(names))
    engine.query(f"{statement.removesuffix(' VALUES')} SELECT {select} FROM Python(frame)")


def rows(engine, statement: str) -> list[list]:
    text = engine.query(f"{statement} SETTINGS output_format_json_quote_64bit_integers = 0", "JSONCompact").bytes()
    return json.loads(text)["data"]


def wrong_executions(engine, dialect, tables) -> set[tuple[str, int]]:
    """(type, execution) of every execution whose answer differs from the expected one."""
    draws, answers, wrong = ParameterDraws(7, 0, written(DATA)), DevopsAnswers(DATA), set()
    for name in TSBS_DEVOPS_QUERIES:
        for execution in range(EXECUTIONS):
            parameters = draws.draw(name, execution, DEVOPS[name].parameters)
            statement, convert = tables.devops(DEVOPS[name], parameters, dialect)
            columns, expected = answers.expected(name, parameters)
            if difference(columns, Answer(rows(engine, statement), convert).normalised(), expected) is not None:
                wrong.add((name, execution))
    return wrong


def test_tables_for_a_current_server(loaded):
    engine, dialect, _ = loaded
    assert dialect.datetime64
    columns = rows(engine, "SELECT name, type FROM system.columns WHERE database = 'iotbench' AND table = 'cpu' ORDER BY position")
    assert columns == [["created_date", "Date"], ["created_at", "DateTime64(3, 'UTC')"], ["time", "String"], ["tags_id", "UInt32"],
                       *([name, "Nullable(Float64)"] for name in CPU_FIELDS), ["additional_tags", "String"]]
    assert rows(engine, "SELECT count(), uniqExact(tags_id), toUnixTimestamp64Milli(min(created_at)), toString(min(created_date)) FROM iotbench.cpu") == [
        [TSBS_ROWS, HOSTS, DATA.start_ms, "2016-01-01"]]


def test_every_type_answers_right_and_changed_rows_make_exactly_their_readers_wrong(loaded):
    engine, dialect, tables = loaded
    assert wrong_executions(engine, dialect, tables) == set()
    for host, step in CHANGED:
        engine.query(f"ALTER TABLE {tables.cpu} UPDATE usage_user = {CHANGED_VALUE} WHERE tags_id = {host + 1} "
                     f"AND created_at = fromUnixTimestamp64Milli({DATA.time_of(step)}, 'UTC') SETTINGS mutations_sync = 1")
    draws = ParameterDraws(7, 0, written(DATA))
    readers = {(name, execution) for name in TSBS_DEVOPS_QUERIES for execution in range(EXECUTIONS)
               if any(reads(CPU_ONLY, name, draws.draw(name, execution, DEVOPS[name].parameters), host, step) for host, step in CHANGED)}
    assert {name for name, _ in readers} >= {"lastpoint", "double-groupby-all", "high-cpu-all"}
    assert wrong_executions(engine, dialect, tables) == readers


def test_devops_tables_and_rows_for_a_current_server(loaded):
    """TSBS's devops data (2 hosts, 10 steps) in a database of its own: a table per measurement with its
    fields, every row inserted, the measurement's own tags as TSBS's loader writes them."""
    engine, dialect, _ = loaded
    spec = RunSpec(run_id="devops", task="insert", target="ch", module="clickhouse", workers=1, batch=1000, shape="tsbs-devops", devices=2,
                   time_range_ms=10 * DATA.interval_ms, primary_key="none", num_inserts=0)
    tables = TsbsTables("iotbench_devops", table_layouts(spec))
    engine.query("CREATE DATABASE IF NOT EXISTS iotbench_devops")
    for statement in tables.create_statements(dialect):
        engine.query(statement)
    for batch in generator(spec, 0).batches(0, 2 * 10 * 9, spec.batch):
        for index, part in batch.split_by_table(len(spec.table_names)):
            table = spec.table_names[index]
            insert(engine, tables.row_insert(table), tables.row_columns(table, part), time_column=0)
    for measurement in USE_CASES["tsbs-devops"].measurements:
        columns = rows(engine, f"SELECT name FROM system.columns WHERE database = 'iotbench_devops' AND table = '{measurement.name}' ORDER BY position")
        assert [name for [name] in columns] == ["created_date", "created_at", "time", "tags_id", *measurement.field_names, "additional_tags"]
        [[count, own_tags]] = rows(engine, f"SELECT count(), any(additional_tags) FROM iotbench_devops.{measurement.name}")
        assert count == 2 * 10 and sorted(json.loads(own_tags) if own_tags else []) == sorted(name for name, _ in measurement.own_tags)


IOT_SPEC = RunSpec(run_id="tsbs-iot", task="insert", target="ch", module="clickhouse", workers=1, batch=10_000, shape="tsbs-iot", devices=TRUCKS,
                   time_range_ms=IOT_DATA.steps * IOT_DATA.interval_ms, primary_key="none", num_inserts=0)


@pytest.fixture(scope="module")
def iot_loaded(loaded):
    """(the chDB session, the dialect, the IoT tables) with the IoT story's rows loaded as the module sends them."""
    engine, dialect, _ = loaded
    tables = TsbsTables("iotbench_iot", table_layouts(IOT_SPEC))
    engine.query("CREATE DATABASE IF NOT EXISTS iotbench_iot")
    for statement in tables.create_statements(dialect):
        engine.query(statement)
    insert(engine, *tables.tag_insert(IOT_SPEC.seed, range(1, TRUCKS + 1)))
    rows = generator(IOT_SPEC, 0)
    for batch in rows.batches(0, rows.total, IOT_SPEC.batch):
        for index, part in batch.split_by_table(len(IOT_SPEC.table_names)):
            table = IOT_SPEC.table_names[index]
            insert(engine, tables.row_insert(table), tables.row_columns(table, part), time_column=0)
    return engine, dialect, tables


def iot_wrong_executions(engine, dialect, tables) -> set[tuple[str, int]]:
    """(type, execution) of every IoT execution (worker 0, QUERY_SEED) whose answer differs from the expected one."""
    draws, answers, wrong = ParameterDraws(QUERY_SEED, 0, iot_written(IOT_DATA)), IotAnswers(IOT_DATA), set()
    for name in TSBS_IOT_QUERIES:
        for execution in range(EXECUTIONS):
            parameters = draws.draw(name, execution, IOT[name].parameters)
            columns, expected = answers.expected(name, parameters)
            if difference(columns, Answer(rows(engine, tsbs_iot.iot(tables, IOT[name], parameters, dialect))).normalised(), expected) is not None:
                wrong.add((name, execution))
    return wrong


def test_iot_rows_nulls_and_every_iot_type_right_then_changed_rows_make_exactly_their_readers_wrong(iot_loaded):
    engine, dialect, tables = iot_loaded
    [[count, nameless, nulls, nans]] = rows(engine, "SELECT count(), countIf(tags_id = 0), countIf(isNull(velocity)), countIf(isNaN(velocity)) "
                                                    "FROM iotbench_iot.readings")
    assert count + rows(engine, "SELECT count() FROM iotbench_iot.diagnostics")[0][0] == IOT_DATA.rows
    assert nameless > 0 and nulls > 0 and nans == 0
    assert rows(engine, "SELECT toTypeName(load_capacity), count() FROM iotbench_iot.tags GROUP BY 1") == [["Nullable(Float32)", TRUCKS]]
    assert iot_wrong_executions(engine, dialect, tables) == set()
    for statement in IOT_CHANGES:
        mutation, _, _ = iot_mutation(statement, "iotbench_iot", dialect.as_ms("created_at"), lambda select: rows(engine, select)[0][0])
        engine.query(f"{mutation} SETTINGS mutations_sync = 1")
    assert iot_wrong_executions(engine, dialect, tables) == iot_readers_of_the_changes(EXECUTIONS)
