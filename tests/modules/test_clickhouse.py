"""The clickhouse module against the real ClickHouse of scripts/servers/start-clickhouse.sh (Debian's
18.16, native protocol on 19000).

End to end through the CLI (local platform), with the stored rows read back by the test itself
through clickhouse-driver; what the module writes for newer servers (DateTime64, LowCardinality,
async_insert) is checked on the dialect it picks by version, and refused on this old server in one
line. The suite works in its own database, dropped at the end.
"""

from __future__ import annotations

import os
import time

import pytest

from iotdb_bench.simulator.modules.base import ModuleError
from iotdb_bench.simulator.modules.clickhouse import ClickhouseOptions, ServerDialect
from iotdb_bench.simulator.workload.events import EventGenerator
from iotdb_bench.simulator.workload.shapes import layout
from tests import factories
from tests.conftest import WORKLOAD_OPTIONS, assert_verified, downsample_minutes, rows_per_query, verified_workload_run
from tests.read_side import check_read_side

pytestmark = pytest.mark.clickhouse

HOST = os.environ.get("CLICKHOUSE_HOST", "127.0.0.1")
PORT = int(os.environ.get("CLICKHOUSE_PORT", "19000"))
DATABASE = f"iotbench_test_{os.getpid()}"
DEVICES = 10

CONFIG = """\
platform: local
targets:
  clickhouse:
    module: clickhouse
    host: {host}
    port: {port}
    user: default
    database: {database}
"""


@pytest.fixture(scope="module")
def clickhouse():
    """A client of the test server; fails (never skips) when it is down; drops the suite's database."""
    from clickhouse_driver import Client
    from clickhouse_driver.errors import NetworkError

    client = Client(host=HOST, port=PORT, connect_timeout=5)
    try:
        client.execute("SELECT 1")
    except (NetworkError, OSError) as error:
        pytest.fail(f"ClickHouse is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-clickhouse.sh")
    yield client
    client.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
    client.disconnect()


@pytest.fixture
def run(cli, tmp_path, clickhouse):
    def invoke(*args: str, port: int = PORT):
        (tmp_path / "config.yaml").write_text(CONFIG.format(host=HOST, port=port, database=DATABASE))
        return cli(args[0], "--config", "config.yaml", "--target", "clickhouse", "--platform", "local", *args[1:], timeout=300)

    return invoke


def stored(client, table: str, device: str) -> list[tuple]:
    return client.execute(f"SELECT timestamp, sequence_number, temperature FROM {DATABASE}.{table} WHERE device_id = %(d)s ORDER BY timestamp",
                          {"d": device})


def generated(worker: int, device: int, events: int) -> list[tuple]:
    batch = EventGenerator(1, worker, DEVICES).batch(0, events)
    mine = batch.device_index == device
    return list(zip(batch.timestamp_ms[mine].tolist(), batch.sequence_number[mine].tolist(), batch.temperature[mine].tolist()))


def test_columnar_batches_store_the_generated_rows(run, clickhouse):
    reports = assert_verified(run("insert", "-w", "1,4", "-r", "1", "--batch", "1000", "--num-inserts", "2000"), [2000, 8000])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [2, 8]  # one INSERT per batch
    assert all(r["server"]["storage_bytes"] > 0 for r in reports)
    assert stored(clickhouse, "events", "w000002-d000005") == generated(2, 5, 2000)
    # On 18.16 the module adapts: epoch milliseconds in Int64, plain String device ids, sorted by device then time.
    columns = clickhouse.execute(f"SELECT name, type FROM system.columns WHERE database = '{DATABASE}' AND table = 'events'")
    assert columns == [("timestamp", "Int64"), ("device_id", "String"), ("sequence_number", "Int64"), ("temperature", "Float64")]
    (engine, sorting_key), = clickhouse.execute(f"SELECT engine, sorting_key FROM system.tables WHERE database = '{DATABASE}' AND name = 'events'")
    assert (engine, sorting_key) == ("MergeTree", "device_id, timestamp")
    assert any("Int64 epoch milliseconds" in note for note in reports[0]["notes"])


def test_single_inserts_one_and_four_workers(run, clickhouse):
    reports = assert_verified(run("insert", "-w", "1,4", "-r", "1", "--num-inserts", "150"), [150, 600])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [150, 600]
    assert stored(clickhouse, "events", "w000003-d000001") == generated(3, 1, 150)


def test_multiple_tables_keep_each_device_in_one_table(run, clickhouse):
    assert_verified(run("insert", "-w", "4", "-r", "1", "--batch", "500", "--num-inserts", "2000", "--tables", "multiple"), [8000])
    per_device = 2000 // DEVICES  # events of one device id (one worker's device)
    for table in range(4):
        devices = clickhouse.execute(f"SELECT DISTINCT device_id FROM {DATABASE}.events{table}")
        assert {int(device[-6:]) % 4 for (device,) in devices} == {table}
        assert clickhouse.execute(f"SELECT count() FROM {DATABASE}.events{table}")[0][0] == len(devices) * per_device
    assert stored(clickhouse, "events1", "w000000-d000005") == generated(0, 5, 2000)


def test_queries_return_one_row_per_device_and_steps_add_up(run, clickhouse):
    result = run("insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "2000", "--devices-per-worker", "5", "--steps", "2")
    assert result.code == 0, result.stderr
    verifications = [entry["report"]["verification"] for entry in result.results()["runs"]]
    assert [(v["count_before"], v["counted"], v["ok"]) for v in verifications] == [(0, 4000, True), (4000, 8000, True)]
    # Every answer checked against the record the two steps left (device-downsample: 4,000 events of 5 devices).
    assert run("query", "-w", "1", "-r", "2").query_rows() == rows_per_query(2 * 5, downsample_minutes(4000, 5))
    # argMax gives each device's newest temperature: the generator's last event of the device.
    newest = {device: (stamp, temperature) for device, stamp, temperature in clickhouse.execute(
        f"SELECT device_id, max(timestamp), argMax(temperature, timestamp) FROM {DATABASE}.events GROUP BY device_id")}
    batch = EventGenerator(1, 1, 5).batch(0, 4000)
    last = max(i for i in range(4000) if batch.device_index[i] == 3)
    assert newest["w000001-d000003"] == (batch.timestamp_ms[last], batch.temperature[last])


def mutate(clickhouse, statement: str, visible: str, expected) -> None:
    """ALTER TABLE ... UPDATE/DELETE are mutations, applied in the background: wait until `visible` shows them."""
    clickhouse.execute(statement)
    deadline = time.monotonic() + 60
    while clickhouse.execute(visible) != expected:
        assert time.monotonic() < deadline, f"the mutation '{statement}' did not show within 60 s"
        time.sleep(0.1)


def test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(run, clickhouse):
    assert_verified(run("insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000"), [6000])
    table = f"{DATABASE}.events"

    def change(device, value):
        first = clickhouse.execute(f"SELECT min(timestamp) FROM {table} WHERE device_id = '{device}'")[0][0]
        mutate(clickhouse, f"ALTER TABLE {table} UPDATE temperature = {value} WHERE device_id = '{device}' AND timestamp = {first}",
               f"SELECT max(temperature) FROM {table} WHERE device_id = '{device}'", [(value,)])

    def delete(device):
        newest = clickhouse.execute(f"SELECT max(timestamp) FROM {table} WHERE device_id = '{device}'")[0][0]
        mutate(clickhouse, f"ALTER TABLE {table} DELETE WHERE device_id = '{device}' AND timestamp = {newest}",
               f"SELECT count() FROM {table}", [(5999,)])

    check_read_side(lambda task, *args: run(task, "-r", "1", *args), change, delete, 3000)


@pytest.mark.parametrize(("option", "message"), [
    ("async_insert=true", "ClickHouse 18.16 has no async_insert (it came in 21.11)"),
    ("timestamp_type=DateTime64", "ClickHouse 18.16 has no DateTime64"),
    ("device_type=LowCardinality", "allows LowCardinality only as an experimental feature"),
])
def test_features_of_newer_servers_are_refused_on_18_16_in_one_line(run, option, message):
    result = run("insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "100", "--extra-option", option)
    assert result.code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("--primary-key", "client"), "has no unique key"),
    (("--primary-key", "sql"), "has no unique key"),
    (("--extra-option", "timestamp_type=DateTime"), "timestamp_type"),
])
def test_refused_up_front(run, args, message):
    result = run("insert", "-w", "1", "-r", "1", "--num-inserts", "10", *args)
    assert result.code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def dialect(version: tuple[int, int], **options) -> ServerDialect:
    return ServerDialect.for_server(version, ClickhouseOptions(**options))


def test_the_schema_follows_the_server_version():
    old, current = dialect((18, 16)), dialect((24, 8), async_insert=True)
    events = layout(factories.spec(module="clickhouse"))
    assert "timestamp Int64, device_id String" in old.create_table("db.events", events)
    assert "PARTITION BY toYYYYMM(toDateTime(intDiv(timestamp, 1000)))" in old.create_table("db.events", events)
    assert "timestamp DateTime64(3, 'UTC'), device_id LowCardinality(String)" in current.create_table("db.events", events)
    assert "PARTITION BY toYYYYMM(timestamp) ORDER BY (device_id, timestamp)" in current.create_table("db.events", events)
    assert "Int64" in dialect((24, 8), timestamp_type="Int64").create_table("t", events)
    assert dialect((19, 9)).low_cardinality and not dialect((19, 8)).low_cardinality
    assert dialect((21, 11), async_insert=True)
    with pytest.raises(ModuleError, match=r"21\.10 has no async_insert"):
        dialect((21, 10), async_insert=True)


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize("workload", sorted(WORKLOAD_OPTIONS))
def test_workload_options(run, clickhouse, workload):
    report = verified_workload_run(run("insert", "-w", "2", "-r", "1", *WORKLOAD_OPTIONS[workload]))
    counted = report["verification"]["counted"]
    assert clickhouse.execute(f"SELECT count() FROM {DATABASE}.events")[0][0] == counted
    columns = [name for name, _ in clickhouse.execute(f"SELECT name, type FROM system.columns WHERE database = '{DATABASE}' AND table = 'events'")]
    if workload == "light":
        assert columns == ["timestamp", "val1", "val2"]
        assert clickhouse.execute(f"SELECT min(val1) >= 1000, max(val2) <= 3000 FROM {DATABASE}.events")[0] == (1, 1)
        return
    if workload == "measurements":  # four values per row: temperature and m1..m3
        assert columns == ["timestamp", "device_id", "sequence_number", "temperature", "m1", "m2", "m3"]
        assert clickhouse.execute(f"SELECT countIf(m3 = 0) FROM {DATABASE}.events")[0][0] < counted
    if workload != "duration":  # every worker's sequence numbers once each, late ones included
        for worker in ("w000000", "w000001"):
            numbers = clickhouse.execute(f"SELECT sequence_number FROM {DATABASE}.events WHERE startsWith(device_id, '{worker}') ORDER BY sequence_number")
            assert [n for (n,) in numbers] == list(range(1000))


def test_sensors_single_inserts_and_large_shape(run, clickhouse):
    verified_workload_run(run("insert", "-w", "2", "-r", "1", "--sensors", "3", "--num-inserts", "60"))
    assert clickhouse.execute(f"SELECT uniqExact(device_id, sensor) FROM {DATABASE}.events")[0][0] == 2 * 10 * 3
    verified_workload_run(run("insert", "-w", "2", "-r", "1", "--schema", "large", "--batch", "100", "--num-inserts", "200"))
    assert clickhouse.execute(f"SELECT count(), max(length(text)) <= 200, min(i8) >= 1000 FROM {DATABASE}.events")[0] == (400, 1, 1)

