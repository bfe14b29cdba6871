"""The iotdb module against the real Apache IoTDB 2.0.1-beta of scripts/servers/start-iotdb.sh.

End to end through the CLI (local platform) in both data models, with the stored points read back
by the test itself through the driver's Session; plus the module's own pieces (schema made in
setup, the tablets' encoding against the driver's). Every test uses the suite's own databases
(tree root.<name>, table <name>), deleted at the end. Each database is made with one data region
group: a data region reserves a buffer of the DataNode's direct memory for its write-ahead log (8
MiB on the test server, 32 by default), and the test server has 256 MiB of it.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from iotdb_bench.simulator.modules.iotdb import Module
from iotdb_bench.simulator.modules.iotdb.tablets import encoded_tablet_class
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EventGenerator
from tests.conftest import WORKLOAD_OPTIONS, assert_verified, downsample_minutes, rows_per_query, verified_workload_run
from tests.read_side import check_read_side

pytestmark = pytest.mark.iotdb

HOST = os.environ.get("IOTDB_HOST", "127.0.0.1")
PORT = int(os.environ.get("IOTDB_PORT", "6667"))
DATABASE = f"iotbench_test_{os.getpid()}"
DEVICES = 10  # the CLI's default devices per worker

CONFIG = """\
platform: local
targets:
  iotdb:
    module: iotdb
    host: {host}
    port: {port}
    user: root
    password: root
    database: {database}
    data_region_groups: 1
"""


def session(model: str = "tree"):
    from iotdb.Session import Session

    opened = Session.init_from_node_urls([f"{HOST}:{PORT}"], user="root", password="root", zone_id="UTC")
    if model == "table":
        opened.sql_dialect = "table"
    opened.open(False)
    return opened


def fetch(opened, statement: str) -> list[list]:
    with opened.execute_query_statement(statement) as data:
        return data.todf().to_numpy().tolist()


@pytest.fixture(scope="module")
def iotdb():
    """Sessions in both dialects; fails (never skips) when IoTDB is down; deletes the suite's databases."""
    from iotdb.utils.exception import IoTDBConnectionException

    try:
        tree, table = session("tree"), session("table")
    except IoTDBConnectionException as error:
        pytest.fail(f"IoTDB is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-iotdb.sh")
    yield tree, table
    if fetch(tree, f"SHOW DATABASES root.{DATABASE}"):
        tree.execute_non_query_statement(f"DELETE DATABASE root.{DATABASE}")
    table.execute_non_query_statement(f"DROP DATABASE IF EXISTS {DATABASE}")
    tree.close()
    table.close()


@pytest.fixture
def run(cli, tmp_path, iotdb):
    """`run("insert", ..., model="table")`: the CLI against the suite's database in one data model."""

    def invoke(*args: str, model: str = "tree", port: int = PORT):
        (tmp_path / "config.yaml").write_text(CONFIG.format(host=HOST, port=port, database=DATABASE))
        return cli(args[0], "--config", "config.yaml", "--target", "iotdb", "--platform", "local",
                   "--extra-option", f"model={model}", *args[1:], timeout=300)

    return invoke


def generated(worker: int, device: int, events: int) -> list[list]:
    """(time ms, sequence_number, temperature) the generator gives one device of a worker, in time order."""
    batch = EventGenerator(1, worker, DEVICES).batch(0, events)
    mine = batch.device_index == device
    return [list(row) for row in zip(batch.timestamp_ms[mine].tolist(), batch.sequence_number[mine].tolist(), batch.temperature[mine].tolist())]


def tree_points(tree, table: str, device: str) -> list[list]:
    rows = fetch(tree, f"SELECT sequence_number, temperature FROM root.{DATABASE}.{table}.`{device}` ALIGN BY DEVICE")
    return [[time, sequence, temperature] for time, _, sequence, temperature in rows]


def table_points(table_session, table: str, device: str) -> list[list]:
    rows = fetch(table_session, f"SELECT time, sequence_number, temperature FROM {DATABASE}.{table} WHERE device_id = '{device}' ORDER BY time")
    return [[int(time.value // 1_000_000), sequence, temperature] for time, sequence, temperature in rows]


def test_tree_batches_are_aligned_tablets_with_the_generated_points(run, iotdb):
    tree, _ = iotdb
    reports = assert_verified(run("insert", "-w", "1,4", "-r", "1", "--batch", "1000", "--num-inserts", "2000"), [2000, 8000])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [2, 8]  # one insert_aligned_tablets call per batch
    assert tree_points(tree, "events", "w000003-d000007") == generated(3, 7, 2000)
    devices = fetch(tree, f"SHOW DEVICES root.{DATABASE}.events.*")
    assert len(devices) == 4 * DEVICES
    assert {str(aligned).lower() for _, aligned, *_ in devices} == {"true"}


def test_tree_single_inserts_one_and_four_workers(run, iotdb):
    tree, _ = iotdb
    reports = assert_verified(run("insert", "-w", "1,4", "-r", "1", "--num-inserts", "200"), [200, 800])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [200, 800]  # one insert_aligned_record per event
    assert tree_points(tree, "events", "w000002-d000004") == generated(2, 4, 200)


def test_table_model_batches_and_single_inserts(run, iotdb):
    _, table_session = iotdb
    reports = assert_verified(run("insert", "-w", "1,4", "-r", "1", "--batch", "1000", "--num-inserts", "2000", model="table"), [2000, 8000])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [2, 8]  # one tablet per batch (one table)
    assert table_points(table_session, "events", "w000001-d000009") == generated(1, 9, 2000)
    per_device = fetch(table_session, f"SELECT device_id, count(*) FROM {DATABASE}.events GROUP BY device_id")
    assert len(per_device) == 4 * DEVICES and {count for _, count in per_device} == {2000 // DEVICES}

    assert_verified(run("insert", "-w", "1,4", "-r", "1", "--num-inserts", "150", model="table"), [150, 600])
    assert table_points(table_session, "events", "w000003-d000000") == generated(3, 0, 150)


@pytest.mark.parametrize("model", ["tree", "table"])
def test_storage_is_iotdbs_accounting_of_the_fresh_database(run, iotdb, model):
    """A clean run starts from a new database (IoTDB would keep deleted series in its files): the size
    grows from (about) nothing, and a second clean run of the same events reports the same size again."""
    sizes = []
    for _ in range(2):
        [report] = assert_verified(run("insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "20000", model=model), [40000])
        sizes.append((report["server"]["storage_bytes_at_start"], report["server"]["storage_bytes"]))
        assert any("TsFileSize of database" in note for note in report["notes"])
    (first_before, first), (second_before, second) = sizes
    assert first_before < 5_000 and second_before < 5_000 < first  # at most the setup's one point before the run
    assert abs(second - first) <= 0.05 * first  # the first run's data was deleted, not kept beside the second's


@pytest.mark.parametrize("model", ["tree", "table"])
def test_multiple_tables_keep_each_device_in_one_table(run, iotdb, model):
    tree, table_session = iotdb
    assert_verified(run("insert", "-w", "4", "-r", "1", "--batch", "500", "--num-inserts", "2000", "--tables", "multiple", model=model), [8000])
    per_device = 4 * 2000 // DEVICES
    for table in range(4):
        devices = len(range(table, DEVICES, 4))  # device index modulo 4
        if model == "tree":
            counted = fetch(tree, f"SELECT count(temperature) FROM root.{DATABASE}.events{table}.* GROUP BY LEVEL = 2")[0][0]
        else:
            counted = fetch(table_session, f"SELECT count(*) FROM {DATABASE}.events{table}")[0][0]
        assert counted == devices * per_device
    points = tree_points(tree, "events2", "w000001-d000006") if model == "tree" else table_points(table_session, "events2", "w000001-d000006")
    assert points == generated(1, 6, 2000)


@pytest.mark.parametrize("model", ["tree", "table"])
def test_queries_return_one_row_per_device(run, model):
    assert_verified(run("insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000", "--devices-per-worker", "5",
                        "--prefill", "2000", model=model), [8000])
    result = run("query", "-w", "1", "-r", "2", model=model)
    # Every answer checked against the record, prefill included (1,000 + 3,000 events of 5 devices per worker).
    assert result.query_rows() == rows_per_query(2 * 5, downsample_minutes(4000, 5))


@pytest.mark.parametrize("model", ["tree", "table"])
def test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(run, iotdb, model):
    tree, table_session = iotdb
    assert_verified(run("insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000", model=model), [6000])

    def first_and_last(device: str) -> tuple[int, int]:
        points = tree_points(tree, "events", device) if model == "tree" else table_points(table_session, "events", device)
        return points[0][0], points[-1][0]

    def change(device, value):  # a point of the same series and time replaces the stored one
        first, _ = first_and_last(device)
        if model == "tree":
            tree.execute_non_query_statement(f"INSERT INTO root.{DATABASE}.events.`{device}`(timestamp, temperature) ALIGNED VALUES ({first}, {value})")
        else:
            table_session.execute_non_query_statement(f"INSERT INTO {DATABASE}.events(time, device_id, temperature) VALUES ({first}, '{device}', {value})")

    def delete(device):
        _, newest = first_and_last(device)
        if model == "tree":
            tree.execute_non_query_statement(f"DELETE FROM root.{DATABASE}.events.`{device}`.* WHERE time = {newest}")
        else:
            table_session.execute_non_query_statement(f"DELETE FROM {DATABASE}.events WHERE device_id = '{device}' AND time = {newest}")

    check_read_side(lambda task, *args: run(task, "-r", "1", *args, model=model), change, delete, 3000)


def test_steps_keep_the_data_and_add_up(run):
    # --steps continues each worker's stream where the last step ended; only the first step cleans.
    result = run("insert", "-w", "2", "-r", "1", "--batch", "100", "--num-inserts", "200", "--steps", "2")
    assert result.code == 0, result.stderr
    verifications = [entry["report"]["verification"] for entry in result.results()["runs"]]
    assert [(v["count_before"], v["counted"]) for v in verifications] == [(0, 400), (400, 800)]
    assert all(v["ok"] for v in verifications)


@pytest.mark.parametrize(("args", "message"), [
    (("--primary-key", "client"), "has no key column"),
    (("--primary-key", "uuid"), "has no key column"),
    (("--extra-option", "model=graph"), "model"),
    (("--extra-option", "database=no-dashes"), "database"),
])
def test_refused_up_front_in_one_line(run, args, message):
    result = run("insert", "-w", "1", "-r", "1", "--num-inserts", "10", *args)
    assert result.code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def module_for(model: str, workers: int = 3, clean: bool = True) -> Module:
    spec = RunSpec(run_id="iotdb-test", task="insert", target="iotdb", module="iotdb", workers=workers, batch=1000, clean=clean,
                   tables="multiple", connection={"host": HOST, "port": PORT, "database": DATABASE, "model": model, "data_region_groups": 1})
    return Module(spec)


def test_setup_creates_every_device_before_the_first_insert(iotdb):
    tree, _ = iotdb
    module = module_for("tree")
    module.connect()
    try:
        module.schema.setup()
        assert module.schema.count() == 0
        devices = sorted(device for device, *_ in fetch(tree, f"SHOW DEVICES root.{DATABASE}.events1.*"))
        assert devices == sorted(f"root.{DATABASE}.events1.`w{w:06d}-d{d:06d}`" for w in range(3) for d in (1, 5, 9))
        # Without clean the existing devices stay and only the missing ones are created.
        module.close()
        module = module_for("tree", workers=4, clean=False)
        module.connect()
        module.schema.setup()
        assert len(fetch(tree, f"SHOW DEVICES root.{DATABASE}.events1.*")) == 4 * 3
    finally:
        module.close()


@pytest.mark.parametrize("model", ["tree", "table"])
def test_tablets_encode_like_the_driver(model):
    """The tablets made in prepare_batch carry exactly the bytes the driver's NumpyTablet would send."""
    from iotdb.utils.NumpyTablet import NumpyTablet

    module = module_for(model)
    batch = EventGenerator(7, 2, 6).batch(123, 500)
    for tablet in module.writer.prepare_batch(batch):
        values = tablet.get_values()
        if model == "table":
            values = [batch.device_id[np.isin(batch.timestamp_ms, tablet.get_timestamps())].astype(str), *values[1:]]
        reference = NumpyTablet(tablet.get_insert_target_name(), tablet.get_measurements(), tablet.get_data_types(), values,
                                tablet.get_timestamps(), column_types=tablet.get_column_categories())
        assert tablet.get_binary_values() == reference.get_binary_values()
        assert tablet.get_binary_timestamps() == reference.get_binary_timestamps()


def test_unsorted_table_tablet_keeps_rows_together():
    """A tablet whose events are not in time order is sorted with every column, device ids included."""
    from iotdb.utils.IoTDBConstants import TSDataType

    devices = np.array([b"b", b"a", b"c"], dtype="S1")
    tablet = encoded_tablet_class()("t", ["device_id", "v"], [TSDataType.STRING, TSDataType.INT64],
                                    [devices, np.array([2, 1, 3], dtype=">i8")], np.array([20, 10, 30], dtype=">i8"))
    assert tablet.get_timestamps().tolist() == [10, 20, 30]
    assert tablet.get_binary_values() == b"".join(len(d).to_bytes(4, "big") + d for d in (b"a", b"b", b"c")) + np.array([1, 2, 3], ">i8").tobytes()


# -- workloads (issue 10) ------------------------------------------------------------------------

# Both data models: the tree for some options, the table model for the others.
WORKLOAD_MODELS = {"measurements": "tree", "duration": "tree", "random": "table", "late": "table"}


def stored_counts(iotdb, model: str, measurement: str) -> int:
    tree, table_session = iotdb
    if model == "tree":
        return int(fetch(tree, f"SELECT count({measurement}) FROM root.{DATABASE}.events.** GROUP BY LEVEL = 1")[0][0])
    return int(fetch(table_session, f"SELECT count({measurement}) FROM {DATABASE}.events")[0][0])


def sequence_numbers(iotdb, model: str, worker: str) -> list[int]:
    tree, table_session = iotdb
    if model == "tree":
        rows = fetch(tree, f"SELECT sequence_number FROM root.{DATABASE}.events.* ALIGN BY DEVICE")
        return sorted(int(sequence) for _, device, sequence in rows if f"`{worker}-" in device)
    # Rows of the table a --clean dropped come back as times without values in IoTDB 2.0.1: not counted.
    rows = fetch(table_session, f"SELECT sequence_number FROM {DATABASE}.events WHERE device_id LIKE '{worker}-%' AND sequence_number IS NOT NULL")
    return sorted(int(row[0]) for row in rows)


@pytest.mark.parametrize("workload", sorted(WORKLOAD_MODELS))
def test_workload_options(run, iotdb, workload):
    model = WORKLOAD_MODELS[workload]
    report = verified_workload_run(run("insert", "-w", "2", "-r", "1", *WORKLOAD_OPTIONS[workload], model=model))
    counted = report["verification"]["counted"]
    assert stored_counts(iotdb, model, "temperature") == counted
    if workload == "measurements":  # four data points per row: temperature and m1..m3
        assert stored_counts(iotdb, model, "m3") == counted
        assert report["figures"]["values_per_event"] == 4
        assert any("an event is one row with 4 measured values" in note for note in report["notes"])
    if workload != "duration":  # every worker's sequence numbers once each, late ones included
        for worker in ("w000000", "w000001"):
            assert sequence_numbers(iotdb, model, worker) == list(range(1000))


@pytest.mark.parametrize("model", ["tree", "table"])
def test_sensors_are_devices_of_their_own_and_single_inserts_keep_them(run, iotdb, model):
    tree, table_session = iotdb
    verified_workload_run(run("insert", "-w", "2", "-r", "1", "--sensors", "3", "--measurements", "2", "--num-inserts", "60",
                              "--devices-per-worker", "4", model=model))
    if model == "tree":
        devices = [device for device, *_ in fetch(tree, f"SHOW DEVICES root.{DATABASE}.events.**")]
        assert len(devices) == 2 * 4 * 3 and all(device.rsplit(".", 1)[1] in ("s0", "s1", "s2") for device in devices)
    else:
        assert len(fetch(table_session, f"SELECT DISTINCT device_id, sensor FROM {DATABASE}.events")) == 2 * 4 * 3
    assert stored_counts(iotdb, model, "m1") == 120


@pytest.mark.parametrize(("args", "message"), [
    (("--schema", "light"), "module 'iotdb' does not support --schema light: IoTDB stores series of devices"),
])
def test_workloads_iotdb_cannot_store_are_refused_in_one_line(run, args, message):
    result = run("insert", "-w", "1", "-r", "1", "--num-inserts", "10", *args)
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
