"""The cassandra module against the real Cassandra 5 started by scripts/servers/start-cassandra.sh.

End to end through the CLI on the local platform (collector and worker processes, a config file
pointing at 127.0.0.1), plus the module's own pieces (per-device grouping, async latency reports)
on a live session. Every test uses one throwaway keyspace, dropped at the end.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from iotdb_bench.simulator.modules.cassandra import InsertFailed, Module
from iotdb_bench.simulator.roles import WorkerHooks
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EventGenerator
from tests.conftest import WORKLOAD_OPTIONS, downsample_minutes, rows_per_query, verified_workload_run
from tests.read_side import check_read_side

pytestmark = pytest.mark.cassandra

HOST = os.environ.get("CASSANDRA_HOST", "127.0.0.1")
PORT = int(os.environ.get("CASSANDRA_PORT", "9042"))
EVENTS = 2000  # per worker; Cassandra shares two busy cores with everything else here
DEVICES = 10  # the CLI's default devices per worker


def live_session():
    """(cluster, session) of the test server; fails (never skips) when Cassandra is down."""
    from cassandra.cluster import Cluster, NoHostAvailable

    cluster = Cluster([HOST], port=PORT, connect_timeout=5)
    try:
        return cluster, cluster.connect()
    except NoHostAvailable as error:
        cluster.shutdown()
        pytest.fail(f"Cassandra is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-cassandra.sh")


@pytest.fixture(scope="module")
def cassandra():
    """A live session and a fresh keyspace name."""
    cluster, session = live_session()
    keyspace = f"iotbench_test_{os.getpid()}"
    yield session, keyspace
    session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
    cluster.shutdown()


@pytest.fixture
def run(cli, tmp_path, cassandra):
    """`run("insert", ...)`: the CLI with a config whose target `cassandra` points at the test server."""
    _, keyspace = cassandra

    def invoke(*args: str, port: int = PORT):
        config = write_config(tmp_path, keyspace, port)
        return cli(args[0], "--config", str(config), "--target", "cassandra", "--platform", "local", *args[1:])

    return invoke


def write_config(folder: Path, keyspace: str, port: int) -> Path:
    path = folder / "cassandra-test.yaml"
    path.write_text(
        "platform: local\n"
        "targets:\n"
        "  cassandra:\n"
        "    module: cassandra\n"
        f"    contact_points: {HOST}\n"
        f"    port: {port}\n"
        f"    keyspace: {keyspace}\n"
        "    replication_factor: 1\n"
        "    max_sync_calls: 1\n"
    )
    return path


def insert_reports(result, worker_counts: list[int], prefill: int = 0) -> list[dict]:
    assert result.code == 0, result.stderr
    runs = result.results()["runs"]
    assert [r["workers"] for r in runs] == worker_counts
    for entry in runs:
        verification = entry["report"]["verification"]
        assert verification["ok"] is True, verification
        assert verification["prefilled"] == prefill
        assert verification["counted"] == entry["workers"] * EVENTS + prefill
        assert entry["report"]["figures"]["events"] == entry["workers"] * EVENTS
    return [entry["report"] for entry in runs]


def newest_row(session, keyspace: str, table: str, device: str):
    return session.execute(
        f"SELECT timestamp, sequence_number, temperature FROM {keyspace}.{table} WHERE device_id = %s LIMIT 1", (device,)
    ).one()


def expected_newest(worker: int, device: int, events: int = EVENTS, devices: int = DEVICES):
    """The last event the generator gives this worker's device in a stream of `events`."""
    batch = EventGenerator(1, worker, devices).batch(0, events)
    last = max(i for i in range(events) if batch.device_index[i] == device)
    return int(batch.timestamp_ms[last]), int(batch.sequence_number[last]), float(batch.temperature[last])


def as_tuple(row) -> tuple[int, int, float]:
    from cassandra.util import datetime_from_timestamp

    assert row is not None
    epoch = datetime_from_timestamp(0)
    return round((row.timestamp - epoch).total_seconds() * 1000), row.sequence_number, row.temperature


def test_sync_single_inserts_store_every_event(run, cassandra):
    session, keyspace = cassandra
    reports = insert_reports(run("insert", "-w", "1,4", "-r", "1", "--num-inserts", str(EVENTS)), [1, 4])
    for workers, report in zip([1, 4], reports):
        latency = report["figures"]["latency"]
        assert latency["calls"] == workers * EVENTS  # one request per event
        assert 0 < latency["p50_ms"] <= latency["max_ms"]
        assert report["figures"]["retries"] == 0
    # The last run's data: the newest row of a device is the generator's last event for it.
    assert as_tuple(newest_row(session, keyspace, "events", "w000003-d000007")) == expected_newest(3, 7)


def test_sync_batches_send_one_request_per_device(run):
    result = run("insert", "-w", "1,4", "-r", "1", "--num-inserts", str(EVENTS), "--batch", "500", "--prefill", "1000")
    for workers, report in zip([1, 4], insert_reports(result, [1, 4], prefill=1000)):
        # 4 timed batches of 500 events per worker, each split into one UNLOGGED batch per device
        assert report["figures"]["latency"]["calls"] == workers * 4 * DEVICES


def test_async_batches_with_eight_requests_in_flight(run):
    result = run("insert", "-w", "1,4", "-r", "1", "--num-inserts", str(EVENTS), "--batch", "200",
                 "--extra-option", "max_sync_calls=8")
    for workers, report in zip([1, 4], insert_reports(result, [1, 4])):
        latency = report["figures"]["latency"]
        assert latency["calls"] == workers * (EVENTS // 200) * DEVICES  # each reported from its callback
        assert 0 < latency["p50_ms"] <= latency["p99_ms"] <= latency["max_ms"]
        assert sum(report["figures"]["per_second"]) == workers * EVENTS


def test_multiple_tables_keep_each_device_in_one_table(run, cassandra):
    session, keyspace = cassandra
    result = run("insert", "-w", "4", "-r", "1", "--num-inserts", str(EVENTS), "--batch", "500", "--tables", "multiple",
                 "--extra-option", "max_sync_calls=8")
    insert_reports(result, [4])
    per_device = 4 * EVENTS // DEVICES  # events of one device index, over the four workers
    devices_per_table = [len(range(t, DEVICES, 4)) for t in range(4)]  # device index modulo 4
    counts = [session.execute(f"SELECT count(*) FROM {keyspace}.events{t}").one()[0] for t in range(4)]
    assert counts == [n * per_device for n in devices_per_table]
    assert as_tuple(newest_row(session, keyspace, "events2", "w000001-d000006")) == expected_newest(1, 6)


@pytest.mark.parametrize("per_device_queries", ["server", "client"])
def test_queries_return_one_row_per_device(run, per_device_queries):
    devices = 5
    inserted = run("insert", "-w", "2", "-r", "1", "--num-inserts", str(EVENTS), "--batch", "1000",
                   "--devices-per-worker", str(devices), "--extra-option", "max_sync_calls=4")
    insert_reports(inserted, [2])
    result = run("query", "-w", "1", "-r", "2", "--extra-option", f"per_device_queries={per_device_queries}")
    assert result.query_rows() == rows_per_query(2 * devices, downsample_minutes(EVENTS, devices))  # every answer checked and right
    assert all(figures["executions"] == 2 for figures in result.results()["runs"][0]["report"]["queries"].values())


def test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(run, cassandra):
    session, keyspace = cassandra
    insert_reports(run("insert", "-w", "2", "-r", "1", "--num-inserts", str(EVENTS), "--batch", "1000"), [2])

    def reading(device: str, order: str):
        return session.execute(f"SELECT timestamp, sequence_number FROM {keyspace}.events WHERE device_id = %s "
                               f"ORDER BY timestamp {order} LIMIT 1", (device,)).one()

    def change(device, value):
        first = reading(device, "ASC")
        session.execute(f"UPDATE {keyspace}.events SET temperature = %s WHERE device_id = %s AND timestamp = %s AND sequence_number = %s",
                        (value, device, first.timestamp, first.sequence_number))

    def delete(device):
        newest = reading(device, "DESC")
        session.execute(f"DELETE FROM {keyspace}.events WHERE device_id = %s AND timestamp = %s AND sequence_number = %s",
                        (device, newest.timestamp, newest.sequence_number))

    check_read_side(lambda task, *args: run(task, "-r", "1", *args), change, delete, EVENTS)


def test_failed_async_insert_fails_the_run(run):
    # A single node cannot give consistency TWO: the server refuses every write, in the callbacks.
    result = run("insert", "-w", "1", "-r", "1", "--num-inserts", "1000", "--batch", "100", "--extra-option", "max_sync_calls=8",
                 "--extra-option", "consistency_level=TWO", "--extra-option", "max_retries=1")
    assert result.code == 1
    assert "an asynchronous insert failed" in result.stderr
    # The driver reports the refusal itself, or (when its retry policy moved on) that no host could take it.
    assert "Cannot achieve consistency level TWO" in result.stderr or "Unable to complete the operation" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (("--primary-key", "client"), "natural key"),
        (("--primary-key", "uuid"), "natural key"),
        (("--extra-option", "max_sync_calls=8"), "single inserts"),  # async needs --batch
        (("--extra-option", "consistency_level=SOME"), "consistency_level"),
    ],
)
def test_unsupported_modes_are_refused_up_front(run, args, message):
    result = run("insert", "-w", "1", "-r", "1", "--num-inserts", "10", *args)
    assert result.code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def module_for(keyspace: str, **options: str) -> Module:
    spec = RunSpec(
        run_id="cassandra-test", task="insert", target="cassandra", module="cassandra", workers=1, batch=1000,
        connection={"contact_points": HOST, "port": PORT, "keyspace": keyspace}, extra=options,
    )
    return Module(spec)


def test_batch_is_grouped_per_device_and_split_at_max_rows():
    module = module_for("unused", max_rows_per_batch="30")
    batch = EventGenerator(1, 0, DEVICES).batch(0, 1000)
    groups = module.writer._device_groups(batch)
    assert all(len({row[1] for row in group}) == 1 for group in groups)  # one partition per request
    assert [len(group) for group in groups] == [30, 30, 30, 10] * DEVICES
    assert sorted(row[2] for group in groups for row in group) == list(range(1000))


def test_async_calls_report_their_latency_and_flush_waits(cassandra):
    _, keyspace = cassandra
    module = module_for(keyspace, max_sync_calls="8", max_rows_per_batch="25")
    reports: list[tuple[int, float]] = []
    module.connect()
    try:
        module.schema.setup()
        def begin_call(events: int):  # the worker's timer stands here: a call's events and its length
            began = time.perf_counter()
            return lambda: reports.append((events, time.perf_counter() - began))

        module.bind(WorkerHooks(begin_call=begin_call))
        writer = module.writer
        for start in (0, 1000):
            writer.insert_batch(writer.prepare_batch(EventGenerator(1, 0, DEVICES).batch(start, 1000)))
        writer.flush()
        assert len(reports) == 2 * 40 and sum(events for events, _ in reports) == 2000
        assert all(seconds > 0 for _, seconds in reports)
        assert module.schema.count() == 2000
    finally:
        module.close()


def test_async_error_surfaces_on_flush(cassandra):
    _, keyspace = cassandra
    module = module_for(keyspace, max_sync_calls="8", consistency_level="TWO", max_retries="0")
    module.connect()
    try:
        module.schema.setup()
        prepared = module.writer.prepare_batch(EventGenerator(1, 0, 2).batch(0, 10))
        with pytest.raises(InsertFailed, match="consistency level TWO"):
            module.writer.insert_batch(prepared)
            module.writer.flush()
    finally:
        module.close()


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize("workload", sorted(WORKLOAD_OPTIONS))
def test_workload_options(run, cassandra, workload):
    session, keyspace = cassandra
    report = verified_workload_run(run("insert", "-w", "2", "-r", "1", *WORKLOAD_OPTIONS[workload]))
    assert session.execute(f"SELECT count(*) FROM {keyspace}.events", timeout=60).one()[0] == report["verification"]["counted"]
    names = {row.column_name: row.kind for row in session.execute(
        "SELECT column_name, kind FROM system_schema.columns WHERE keyspace_name = %s AND table_name = 'events'", (keyspace,))}
    if workload == "light":  # a uuid key made by Cassandra, and a secondary index on val1
        assert names == {"id": "partition_key", "timestamp": "regular", "val1": "regular", "val2": "regular"}
        indexes = [row.index_name for row in session.execute(
            "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s AND table_name = 'events'", (keyspace,))]
        assert indexes == ["events_val1"]
        assert session.execute(f"SELECT count(*) FROM {keyspace}.events WHERE val1 >= 1000 AND val1 <= 3000 ALLOW FILTERING",
                               timeout=60).one()[0] == report["verification"]["counted"]
    elif workload == "measurements":
        assert {"temperature", "m1", "m2", "m3"} <= set(names) and names["device_id"] == "partition_key"
    else:  # sequence numbers: each once per device partition, none missing below a worker's highest but late ones
        rows = list(session.execute(f"SELECT device_id, sequence_number FROM {keyspace}.events", timeout=60))
        assert len({(row.device_id, row.sequence_number) for row in rows}) == len(rows)
        if workload != "duration":
            for worker in ("w000000", "w000001"):
                assert sorted(row.sequence_number for row in rows if row.device_id.startswith(worker)) == list(range(1000))

