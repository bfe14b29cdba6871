"""The clickhouse module's schema and queries for current ClickHouse servers, run on a current
ClickHouse engine: chDB (`chdb-core`, ClickHouse 26.9 embedded in the test process).

No current ClickHouse server installs here (Debian ships 18.16, which the other suite uses), so this
is where the module's SQL for newer servers meets a real engine: the CREATE TABLE it writes for the
version chDB reports (DateTime64(3), LowCardinality), the six queries with their answers checked
against the generated events, and the async_insert settings it sends. The native protocol itself is
covered by the suite against the real 18.16 server.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, MINUTE_MS
from iotdb_bench.simulator.modules.clickhouse import ClickhouseOptions, ServerDialect
from iotdb_bench.simulator.workload.events import EventBatch, EventGenerator
from iotdb_bench.simulator.workload.shapes import layout
from tests import factories

pytestmark = pytest.mark.chdb

WORKERS, DEVICES, EVENTS = 2, 5, 600


@pytest.fixture
def engine():
    from chdb import session

    current = session.Session()
    yield current
    current.close()


def query(engine, statement: str) -> list[list]:
    return json.loads(engine.query(statement, "JSONCompact").bytes())["data"]


def engine_version(engine) -> tuple[int, int]:
    (version,), = query(engine, "SELECT version()")
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def events() -> EventBatch:
    batches = [EventGenerator(1, worker, DEVICES).batch(0, EVENTS) for worker in range(WORKERS)]
    return EventBatch(*(np.concatenate([getattr(b, field) for b in batches]) for field in
                        ("timestamp_ms", "device_index", "device_id", "sequence_number", "temperature")))


def load(engine, dialect: ServerDialect, batch: EventBatch) -> None:
    engine.query("CREATE DATABASE IF NOT EXISTS iotbench")
    engine.query("DROP TABLE IF EXISTS iotbench.events")
    engine.query(dialect.create_table("iotbench.events", layout(factories.spec(module="clickhouse"))))
    rows = ", ".join(f"({t}, '{d}', {s}, {v!r})" for t, d, s, v in batch.rows())
    timestamp = "fromUnixTimestamp64Milli(ts)" if dialect.datetime64 else "ts"
    engine.query(f"INSERT INTO iotbench.events SELECT {timestamp}, d, s, v FROM values('ts Int64, d String, s Int64, v Float64', {rows})")


@pytest.mark.parametrize("options", [{}, {"timestamp_type": "Int64", "device_type": "String"}], ids=["auto", "forced-old-types"])
def test_schema_and_queries_on_a_current_engine(engine, options):
    version = engine_version(engine)
    assert version >= ServerDialect.DATETIME64_SINCE
    dialect = ServerDialect.for_server(version, ClickhouseOptions(**options))
    batch = events()
    load(engine, dialect, batch)

    expected_types = [["DateTime64(3, 'UTC')", "LowCardinality(String)"], ["Int64", "String"]][bool(options)]
    types = query(engine, "SELECT type FROM system.columns WHERE database = 'iotbench' AND table = 'events' ORDER BY position")
    assert [t for (t,) in types] == [*expected_types, "Int64", "Float64"]

    queries = dialect.queries("iotbench.events")
    assert query(engine, queries["count-events"]) == [[len(batch)]]
    assert query(engine, queries["temperature-min-max"]) == [[batch.temperature.min(), batch.temperature.max()]]
    (low, mean, high), = query(engine, queries["temperature-stats"])
    assert (low, high) == (batch.temperature.min(), batch.temperature.max()) and mean == pytest.approx(batch.temperature.mean())

    devices = batch.device_id.astype(str)
    per_device = {device: (low, mean, high) for device, low, mean, high in query(engine, queries["temperature-stats-per-device"])}
    assert sorted(per_device) == sorted(set(devices.tolist()))
    newest = {device: (stamp, temperature) for device, stamp, temperature in query(engine, queries["newest-per-device"])}
    for device in per_device:
        mine = devices == device
        last = np.flatnonzero(mine)[np.argmax(batch.timestamp_ms[mine])]
        assert per_device[device][::2] == (batch.temperature[mine].min(), batch.temperature[mine].max())
        stamp, temperature = newest[device]
        # JSONCompact shows Int64 as text: the epoch milliseconds, whatever the column's type.
        assert (int(stamp), temperature) == (int(batch.timestamp_ms[last]), batch.temperature[last])

    # The read side's SQL: the downsample device's minutes, and a scan in time order, in epoch ms.
    mine = devices == DOWNSAMPLE_DEVICE
    minutes = batch.timestamp_ms[mine] // MINUTE_MS * MINUTE_MS
    downsample = query(engine, queries["device-downsample"])
    assert [int(minute) for minute, *_ in downsample] == sorted(set(minutes.tolist()))
    assert [(low, high) for _, low, _, high in downsample] == [
        (batch.temperature[mine][minutes == m].min(), batch.temperature[mine][minutes == m].max()) for m in sorted(set(minutes.tolist()))]
    scanned = query(engine, dialect.scan("iotbench.events").replace("%(device)s", f"'{DOWNSAMPLE_DEVICE}'"))
    assert [int(ms) for (ms,) in scanned] == sorted(batch.timestamp_ms[mine].tolist())


def test_async_insert_settings_exist_on_a_current_engine(engine):
    dialect = ServerDialect.for_server(engine_version(engine), ClickhouseOptions(async_insert=True))
    assert dialect.datetime64 and dialect.low_cardinality
    # The settings the module sends with async_insert; an unknown setting would be an error here.
    assert query(engine, "SELECT 1 SETTINGS async_insert = 1, wait_for_async_insert = 0") == [[1]]
