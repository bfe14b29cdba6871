"""TSBS's three use cases on the real ClickHouse (tests/tsbs_story.py; Debian's 18.16, native
protocol): TSBS's clickhouse target's tables (tags, and a table per measurement sorted by (tags_id,
created_at) in a plain MergeTree; created_at Int64 epoch milliseconds on this server; IoT's trucks'
tags, NULL fields and a nulled name as tags_id 0), TSBS's rows and points, every DevOps type and
every IoT type (TSBS's TimescaleDB text translated) answered `ok`, changed rows found. What current
servers get is checked on chDB (test_tsbs_clickhouse_current_engine.py). Each story works in its own
database, dropped at the end."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import run_cli
from tests.modules.test_clickhouse import CONFIG, HOST, PORT, mutate
from tests.tsbs_story import (
    CPU_ONLY,
    DATA,
    DEVOPS_STORY,
    HOSTS,
    IOT_INSERT,
    TRUCKS,
    TSBS_ROWS,
    Story,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    assert_inserted,
    assert_iot_inserted,
    check_changed_rows_are_found,
    check_iot_changed_rows_are_found,
)

pytestmark = pytest.mark.clickhouse

DATABASE = "iotbench_tsbs"
DEVOPS_DATABASE = "iotbench_tsbs_devops"
IOT_DATABASE = "iotbench_tsbs_iot"


@pytest.fixture(scope="module")
def client():
    """A client of the test server; the stories' databases are dropped at the end."""
    from clickhouse_driver import Client
    from clickhouse_driver.errors import NetworkError

    client = Client(host=HOST, port=PORT, connect_timeout=5)
    try:
        client.execute("SELECT 1")
    except (NetworkError, OSError) as error:
        pytest.fail(f"ClickHouse is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-clickhouse.sh")
    yield client
    for database in (DATABASE, DEVOPS_DATABASE, IOT_DATABASE):
        client.execute(f"DROP DATABASE IF EXISTS {database}")
    client.disconnect()


def inserted(tmp_path_factory, story: Story, database: str, *options: str):
    """A folder to run the CLI in on `database`, once the story's data is inserted there (`options`
    after the story's own)."""
    folder = tmp_path_factory.mktemp(f"{story.shape}-clickhouse")
    (folder / "config.yaml").write_text(CONFIG.format(host=HOST, port=PORT, database=database))
    assert_inserted(run(folder)("insert", *story.insert, *options), story)
    return folder


@pytest.fixture(scope="module")
def clickhouse(client, tmp_path_factory):
    """(a client of the test server, a folder to run the CLI in) once the cpu-only story's data is inserted."""
    return client, inserted(tmp_path_factory, CPU_ONLY, DATABASE)


@pytest.fixture(scope="module")
def devops(client, tmp_path_factory):
    """The same with the devops story's data, in a database of its own; batches of 10,000 rows (TSBS's
    loader's default): a batch of 1,000 would be nine INSERTs of a hundred rows, a part each, which the
    18.16 server takes a minute to write and another to drop."""
    return client, inserted(tmp_path_factory, DEVOPS_STORY, DEVOPS_DATABASE, "--batch", "10000")


@pytest.fixture(scope="module")
def iot(client, tmp_path_factory):
    """The same with the IoT story's data, in batches of 10,000 rows (a part per table and batch)."""
    folder = tmp_path_factory.mktemp("tsbs-iot-clickhouse")
    (folder / "config.yaml").write_text(CONFIG.format(host=HOST, port=PORT, database=IOT_DATABASE))
    assert_iot_inserted(run(folder)("insert", *IOT_INSERT, "--batch", "10000"))
    return client, folder


def run(folder):
    return lambda *args: run_cli([args[0], "--config", "config.yaml", "--target", "clickhouse", "--platform", "local", *args[1:]], folder)


def test_tsbs_layout_and_every_query_type_answered_right(clickhouse):
    client, folder = clickhouse
    columns = client.execute(f"SELECT name, type FROM system.columns WHERE database = '{DATABASE}' AND table = 'cpu'")
    assert columns == [("created_date", "Date"), ("created_at", "Int64"), ("time", "String"), ("tags_id", "UInt32"),
                       *((name, "Nullable(Float64)") for name in CPU_FIELDS), ("additional_tags", "String")]
    tables = client.execute(f"SELECT name, engine, partition_key, sorting_key FROM system.tables WHERE database = '{DATABASE}' AND name IN ('cpu', 'tags') ORDER BY name")
    assert tables == [("cpu", "MergeTree", "toYYYYMM(created_date)", "tags_id, created_at"), ("tags", "MergeTree", "toYYYYMM(created_date)", "id")]
    assert client.execute(f"SELECT count(), uniqExact(tags_id), min(created_at), max(created_at), min(created_date) FROM {DATABASE}.cpu")[0][:4] == (
        TSBS_ROWS, HOSTS, DATA.start_ms, DATA.time_of(DATA.steps - 1))
    # TSBS's `time` text of the first row, and the UTC day the server derived for created_date.
    assert client.execute(f"SELECT time, toString(created_date) FROM {DATABASE}.cpu WHERE tags_id = 1 ORDER BY created_at LIMIT 1") == [
        ("2016-01-01 00:00:00.000 +0000", "2016-01-01")]
    tags = client.execute(f"SELECT id, {', '.join(TAG_NAMES)} FROM {DATABASE}.tags ORDER BY id")
    assert tags == [(index + 1, *row) for index, row in enumerate(host_tags(DATA.seed, 0, HOSTS))]
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def change_usage_user(client, database: str, story: Story):
    """How check_changed_rows_are_found changes a cpu row: a mutation, waited for."""
    table = f"{database}.cpu"

    def change(host: int, step: int, value: float) -> None:
        where = f"tags_id = {host + 1} AND created_at = {story.data.time_of(step)}"
        mutate(client, f"ALTER TABLE {table} UPDATE usage_user = {value} WHERE {where}", f"SELECT usage_user FROM {table} WHERE {where}", [(value,)])

    return change


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(clickhouse):
    client, folder = clickhouse
    check_changed_rows_are_found(run(folder), change_usage_user(client, DATABASE, CPU_ONLY))


def test_devops_measurements_as_tsbs_loads_them_and_the_devops_types_over_its_cpu(devops):
    client, folder = devops
    data = DEVOPS_STORY.data
    for measurement in USE_CASES["tsbs-devops"].measurements:
        # TSBS's columns, its fields Nullable(Float64); every host's row of every step.
        columns = client.execute(f"SELECT name, type FROM system.columns WHERE database = '{DEVOPS_DATABASE}' AND table = '{measurement.name}'")
        assert columns == [("created_date", "Date"), ("created_at", "Int64"), ("time", "String"), ("tags_id", "UInt32"),
                           *((name, "Nullable(Float64)") for name in measurement.field_names), ("additional_tags", "String")]
        table = f"{DEVOPS_DATABASE}.{measurement.name}"
        assert client.execute(f"SELECT count(), uniqExact(tags_id), min(created_at), max(created_at) FROM {table}")[0] == (
            HOSTS * data.steps, HOSTS, data.start_ms, data.time_of(data.steps - 1))
        # The measurement's own tags as TSBS's loader writes them: {"serial": "..."}, else ''.
        [(own_tags,)] = client.execute(f"SELECT DISTINCT additional_tags FROM {table} WHERE tags_id = 4")
        assert (sorted(json.loads(own_tags)) if own_tags else []) == sorted(name for name, _ in measurement.own_tags)
        if own_tags:
            assert own_tags.startswith('{"') and '": "' in own_tags
    # The rows' points: every field of every row, mem's percentages fractional, the other fields whole numbers.
    [(percent, whole)] = client.execute(f"SELECT countIf(used_percent != floor(used_percent)), countIf(used != floor(used)) FROM {DEVOPS_DATABASE}.mem")
    assert percent > 0 and whole == 0
    assert client.execute(f"SELECT count() FROM {DEVOPS_DATABASE}.tags") == [(HOSTS,)]
    assert_every_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"), story=DEVOPS_STORY)  # no --queries: the data's own
    check_changed_rows_are_found(run(folder), change_usage_user(client, DEVOPS_DATABASE, DEVOPS_STORY), story=DEVOPS_STORY)


def test_iot_layout_nulls_and_every_iot_type_answered_right(iot):
    client, folder = iot
    tags = client.execute(f"SELECT name, type FROM system.columns WHERE database = '{IOT_DATABASE}' AND table = 'tags'")
    assert tags[2:] == [("id", "UInt32"), *((name, "Nullable(String)") for name in ("name", "fleet", "driver", "model", "device_version")),
                        *((name, "Nullable(Float32)") for name in ("load_capacity", "fuel_capacity", "nominal_fuel_consumption"))]
    assert client.execute(f"SELECT count(), uniqExact(name) FROM {IOT_DATABASE}.tags") == [(TRUCKS, TRUCKS)]
    columns = client.execute(f"SELECT name FROM system.columns WHERE database = '{IOT_DATABASE}' AND table = 'diagnostics'")
    assert [name for (name,) in columns] == ["created_date", "created_at", "time", "tags_id", "fuel_state", "current_load", "status", "additional_tags"]
    # TSBS's nulled names (no truck: tags_id 0, which no tags row has) and null fields (NULL, not NaN).
    [(nameless, null_velocity, nan_velocity, rows)] = client.execute(
        f"SELECT countIf(tags_id = 0), countIf(isNull(velocity)), countIf(isNaN(velocity)), count() FROM {IOT_DATABASE}.readings")
    assert 0 < nameless < rows * 0.01 and 0.005 < null_velocity / rows < 0.03 and nan_velocity == 0
    assert_every_iot_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"))  # no --queries: the data's own, IoT's 13


_IOT_CHANGE = re.compile(r"UPDATE (\w+) SET (\w+) = (\d+) WHERE tags_id = (\d+) AND time = \(SELECT (max|min)\(time\) FROM \w+ WHERE (.+)\)")


def iot_mutation(statement: str, database: str, ms: str, scalar: Callable[[str], int]) -> tuple[str, str, float]:
    """One of tests/tsbs_story.py's IOT_CHANGES (an UPDATE of the newest or first row of a condition) as a
    ClickHouse mutation: (the ALTER TABLE ... UPDATE, the SELECT of the changed value, the value).
    `ms`: created_at as epoch milliseconds; `scalar` runs a SELECT of one number."""
    table, column, value, tags_id, which, condition = _IOT_CHANGE.fullmatch(statement).groups()
    qualified = f"{database}.{table}"
    row = f"tags_id = {tags_id} AND {ms} = {scalar(f'SELECT {which}({ms}) FROM {qualified} WHERE {condition}')}"
    return f"ALTER TABLE {qualified} UPDATE {column} = {value} WHERE {row}", f"SELECT {column} FROM {qualified} WHERE {row}", float(value)


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iot):
    client, folder = iot

    def execute(statement: str) -> None:
        mutation, changed, value = iot_mutation(statement, IOT_DATABASE, "created_at", lambda select: client.execute(select)[0][0])
        mutate(client, mutation, changed, [(value,)])

    check_iot_changed_rows_are_found(run(folder), execute)
