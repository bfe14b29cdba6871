"""TSBS's cpu-only, devops and iot data and its DevOps and IoT query types on the real Apache IoTDB
2.0.1-beta of scripts/servers/start-iotdb.sh (tests/tsbs_story.py): the layout of benchANT's TSBS IoTDB
target (an aligned device per host and measurement, cpu-only's fields INT32, devops' INT64 and DOUBLE,
the host's tags as tags), TSBS's rows and points, every type answered `ok` in IoTDB's SQL, changed rows
found, a batch of TSBS's order written as one tablet per host in one call, and the data's size as IoTDB
accounts for it and as its files say. Runs in a database of its own (one data region group, as
tests/modules/test_iotdb.py explains), which the devops story then replaces, deleted at the end.

The IoT story (six trucks, two days: a small insert) in a database of its own: a
device per truck and measurement with the truck's tags, TSBS's null fields stored as nulls and its
nameless rows apart, exactly the rows the checker recomputes; all 13 IoT types `ok`, and the three
changed rows make exactly the types that read them WRONG. Its tablets' bytes are the driver's own
Tablet's, null bitmaps included."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.generator import TsbsGenerator
from iotdb_bench.simulator.workload.tsbs.hosts import host_tags
from iotdb_bench.simulator.workload.tsbs.iot import IOT as IOT_USE_CASE
from iotdb_bench.simulator.workload.tsbs.iot import truck_tags
from iotdb_bench.simulator.workload.tsbs.series import TruckRows
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import run_cli
from tests.modules.test_iotdb import HOST, PORT, fetch, session
from tests.tsbs_story import (
    CPU_ONLY,
    DATA,
    DEVOPS_STORY,
    HOSTS,
    TSBS_ROWS,
    Story,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    assert_inserted,
    assert_iot_inserted,
    check_changed_rows_are_found,
    check_iot_changes_found,
    insert_story,
    iot_story,
)

pytestmark = pytest.mark.iotdb

DATABASE = f"iotbench_tsbs_{os.getpid()}"
OPTIONS = ["--extra-option", f"database={DATABASE}", "--extra-option", "data_region_groups=1"]
CHANGED_TO = 101  # usage_user of the changed rows: a whole number (INT32) above any walk's 100
# The DataNode's folder of the server of scripts/servers/start-iotdb.sh, when it runs here.
# Where scripts/servers/start-iotdb.sh keeps the data (its IOTBENCH_STATE: scripts/cold-ci.sh moves it).
DATA_DIR = Path(os.environ.get("IOTDB_DATA_DIR") or Path(os.environ.get("IOTBENCH_STATE", "/tmp/iotbench-servers")) / "iotdb-6667/data/datanode")


@pytest.fixture(scope="module")
def iotdb(tmp_path_factory):
    """(a tree-model session, a folder to run the CLI in, the insert's run report) once the story's data is inserted."""
    from iotdb.utils.exception import IoTDBConnectionException

    try:
        tree = session("tree")
    except IoTDBConnectionException as error:
        pytest.fail(f"IoTDB is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-iotdb.sh")
    folder = tmp_path_factory.mktemp("tsbs-iotdb")
    yield tree, folder, insert_story(run(folder))
    if fetch(tree, f"SHOW DATABASES root.{DATABASE}"):
        tree.execute_non_query_statement(f"DELETE DATABASE root.{DATABASE}")
    tree.close()


def run(folder: Path, options: list[str] = OPTIONS):
    return lambda *args: run_cli([args[0], "--target", "iotdb-local", *args[1:], *options], folder, env={"IOTDB_HOST": HOST, "IOTDB_PORT": str(PORT)})


def test_tsbs_layout_and_every_query_type_answered_right(iotdb):
    tree, folder, _ = iotdb
    devices = fetch(tree, f"SHOW DEVICES root.{DATABASE}.cpu.*")
    assert sorted(device for device, *_ in devices) == sorted(f"root.{DATABASE}.cpu.host_{i}" for i in range(HOSTS))
    assert {str(aligned).lower() for _, aligned, *_ in devices} == {"true"}
    series = fetch(tree, f"SHOW TIMESERIES root.{DATABASE}.cpu.host_3.*")
    assert sorted((path.rsplit(".", 1)[1], kind) for path, _, _, kind, *_ in series) == sorted((name, "INT32") for name in CPU_FIELDS)
    # The host's ten tags are tags of its usage_user series, by which a host is found.
    [[path]] = [[row[0]] for row in fetch(tree, f"SHOW TIMESERIES root.{DATABASE}.cpu.** WHERE TAGS(`rack`)='{host_tags(DATA.seed, 3, 1)[0][3]}'")
                if row[0].startswith(f"root.{DATABASE}.cpu.host_3.")]
    assert path == f"root.{DATABASE}.cpu.host_3.usage_user"
    [[count]] = fetch(tree, f"SELECT count(usage_guest_nice) FROM root.{DATABASE}.cpu.** GROUP BY LEVEL = 1")
    assert count == TSBS_ROWS
    first = fetch(tree, f"SELECT * FROM root.{DATABASE}.cpu.host_3 LIMIT 1")
    assert first[0][0] == DATA.start_ms and all(0 <= value <= 100 for value in first[0][1:])
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_a_batch_of_tsbs_order_is_one_tablet_per_host_in_one_call():
    """1,000 rows of the story's hosts (1,000 // HOSTS steps): a tablet per host of that many rows, each a host's in
    time order (the tablets a batch of one timestamp across 1,000 hosts makes are one row each, docs/databases/iotdb.md)."""
    spec = RunSpec(run_id="tablets", task="insert", target="iotdb", module="iotdb", workers=1, batch=1000, shape="tsbs-cpu", devices=HOSTS,
                   primary_key="none", num_inserts=0, extra={"database": DATABASE})
    batch = TsbsGenerator(spec, 0).rows(0, 1000)
    tablets = module_class("iotdb")(spec).writer.prepare_batch(batch)
    assert [tablet.get_insert_target_name() for tablet in tablets] == [f"root.{DATABASE}.cpu.`host_{i}`" for i in range(HOSTS)]
    host_7 = tablets[7]
    steps = 1000 // HOSTS
    assert host_7.get_row_number() == steps and host_7.get_timestamps().tolist() == [DATA.time_of(step) for step in range(steps)]
    rows = batch.host == 7
    assert [column.tolist() for column in host_7.get_values()] == [batch.measurement(i)[rows].astype(int).tolist() for i in range(len(CPU_FIELDS))]


def test_storage_is_iotdbs_accounting_and_its_files(iotdb):
    """Both figures are possible: positive, grown by the run's data, IoTDB's own not more than the files."""
    _, _, report = iotdb
    before, after = report["server"]["storage_bytes_at_start"], report["server"]["storage_bytes"]
    assert 0 <= before < after
    figures = {}
    for data_dir in (None, DATA_DIR):
        spec = RunSpec(run_id="storage", task="insert", target="iotdb", module="iotdb", workers=1,
                       extra={"host": HOST, "port": str(PORT), "database": DATABASE, **({"data_dir": str(data_dir)} if data_dir else {})})
        module = module_class("iotdb")(spec)
        module.connect()
        try:
            figures[data_dir] = module.schema.storage_bytes()
        finally:
            module.close()
    accounted, files = figures[None], figures[DATA_DIR]
    assert accounted is not None and files is not None
    assert 0 < accounted <= files * 1.005  # SHOW REGIONS rounds to three significant digits
    assert any(f"TsFileSize of database root.{DATABASE}" in note for note in report["notes"])  # the run says what it measured


def change_usage_user(tree, story: Story):
    """How check_changed_rows_are_found changes a cpu row: a point of the same series and time replaces the stored one."""

    def change(host: int, step: int, value: float) -> None:
        time = story.data.time_of(step)
        tree.execute_non_query_statement(f"INSERT INTO root.{DATABASE}.cpu.host_{host}(time, usage_user) ALIGNED VALUES ({time}, {int(value)})")
        assert fetch(tree, f"SELECT usage_user FROM root.{DATABASE}.cpu.host_{host} WHERE time = {time}")[0][1] == int(value)

    return change


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iotdb):
    tree, folder, _ = iotdb
    check_changed_rows_are_found(run(folder), change_usage_user(tree, CPU_ONLY), CHANGED_TO)


def test_devops_measurements_as_tsbs_loads_them_and_the_devops_types_over_its_cpu(iotdb):
    """Last in the file: the devops story's insert replaces the cpu-only story's database."""
    tree, folder, _ = iotdb
    assert_inserted(run(folder)("insert", *DEVOPS_STORY.insert), DEVOPS_STORY)
    measurements = USE_CASES["tsbs-devops"].measurements
    names = {one.name for one in measurements}
    devices = [(device, aligned) for device, aligned, *_ in fetch(tree, f"SHOW DEVICES root.{DATABASE}.**") if device.split(".")[2] in names]
    assert sorted(device for device, _ in devices) == sorted(f"root.{DATABASE}.{one.name}.host_{i}" for one in measurements for i in range(HOSTS))
    assert {str(aligned).lower() for _, aligned in devices} == {"true"}
    for one in measurements:  # TSBS's serializer's types: int64 INT64, float64 DOUBLE
        series = fetch(tree, f"SHOW TIMESERIES root.{DATABASE}.{one.name}.host_3.*")
        assert sorted((path.rsplit(".", 1)[1], kind) for path, _, _, kind, *_ in series) == sorted(
            (name, "INT64" if integer else "DOUBLE") for name, integer in zip(one.field_names, one.integer_fields))
        [[count]] = fetch(tree, f"SELECT count({one.field_names[-1]}) FROM root.{DATABASE}.{one.name}.** GROUP BY LEVEL = 1")
        assert count == HOSTS * DEVOPS_STORY.data.steps
    # The measurement's own tags beside the host's, on its first field: nginx's port and server (SHOW TIMESERIES' Tags, JSON).
    [[path, tags]] = [[row[0], row[6]] for row in fetch(tree, f"SHOW TIMESERIES root.{DATABASE}.nginx.host_3.accepts")]
    assert path.endswith(".accepts") and '"server":"nginx_' in tags.replace(" ", "") and '"hostname":"host_3"' in tags.replace(" ", "")
    fractions = [row[1] for row in fetch(tree, f"SELECT used_percent FROM root.{DATABASE}.mem.host_3 LIMIT 50")]
    assert any(value != int(value) for value in fractions)
    assert_every_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"), story=DEVOPS_STORY)  # no --queries: the data's own
    check_changed_rows_are_found(run(folder), change_usage_user(tree, DEVOPS_STORY), CHANGED_TO, story=DEVOPS_STORY)



# -- IoT ---------------------------------------------------------------------------------------------
IOT_DATABASE = f"iotbench_tsbs_iot_{os.getpid()}"
IOT_ROOT = f"root.{IOT_DATABASE}"
IOT_DATA, IOT_INSERT = iot_story(6)
IOT_OPTIONS = ["--extra-option", f"database={IOT_DATABASE}", "--extra-option", "data_region_groups=1"]


@pytest.fixture(scope="module")
def iot(tmp_path_factory):
    """(a tree-model session, a folder to run the CLI in) once the IoT story's data is inserted, in a database of its own."""
    tree = session("tree")
    folder = tmp_path_factory.mktemp("tsbs-iot-iotdb")
    assert_iot_inserted(run(folder, IOT_OPTIONS)("insert", *IOT_INSERT), IOT_DATA)
    yield tree, folder
    if fetch(tree, f"SHOW DATABASES {IOT_ROOT}"):
        tree.execute_non_query_statement(f"DELETE DATABASE {IOT_ROOT}")
    tree.close()


def test_iot_devices_tags_nulls_and_every_iot_type_answered_right(iot):
    tree, folder = iot
    tag_names = [name for name, _ in IOT_USE_CASE.tags]
    truck_3 = dict(zip(tag_names, map(str, truck_tags(IOT_DATA.seed, 3, 1)[0])))
    # Per measurement the checker's rows: those tied to a truck (its name there), and each field's values that are not null.
    named, fields = [0, 0], [np.zeros(len(one.field_names), dtype=np.int64) for one in IOT_USE_CASE.measurements]
    for _, parts in TruckRows(IOT_DATA).blocks(np.arange(IOT_DATA.hosts), range(IOT_DATA.steps)):
        for index, (values, present) in enumerate(parts):
            named[index] += int(present.sum())
            fields[index] += (present[:, :, None] & ~np.isnan(values)).sum(axis=(0, 1))
    for index, measurement in enumerate(IOT_USE_CASE.measurements):
        where = f"{IOT_ROOT}.{measurement.name}"
        for devices in (f"{where}.*", f"{where}.unnamed.*"):
            found = fetch(tree, f"SHOW DEVICES {devices}")
            assert sorted(device for device, *_ in found) == sorted(f"{devices[:-1]}truck_{i}" for i in range(IOT_DATA.hosts))
            assert {str(aligned).lower() for _, aligned, *_ in found} == {"true"}
        # The truck's eight tags on the first field; its unnamed device's without the name.
        for device, tags in ((f"{where}.truck_3", truck_3), (f"{where}.unnamed.truck_3", {k: v for k, v in truck_3.items() if k != "name"})):
            [[found_tags]] = [[row[6]] for row in fetch(tree, f"SHOW TIMESERIES {device}.{measurement.field_names[0]}")]
            assert json.loads(found_tags) == tags
        rows = [sum(count for _, count in fetch(tree, f"SELECT count_time(*) FROM {devices} ALIGN BY DEVICE")) for devices in (f"{where}.*", f"{where}.**")]
        assert rows == [named[index], IOT_DATA.rows_per_measurement()[index]]  # the named rows, and with the unnamed all rows
        counts = fetch(tree, f"SELECT {', '.join(f'count({name})' for name in measurement.field_names)} FROM {where}.* GROUP BY LEVEL = 2")
        assert counts == [fields[index].tolist()] and all(count < named[index] for count in counts[0])  # TSBS's nulls are nulls
    assert_every_iot_type_answers_ok(run(folder, IOT_OPTIONS)("query", "-w", "2", "-r", "2"), data=IOT_DATA)  # no --queries: all 13


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iot):
    """tests/tsbs_story.py's IOT_CHANGES in IoTDB's words: a point at a row's time replaces the field's value there."""
    tree, folder = iot

    def newest(device: str) -> int:
        return max(int(time) for time, *_ in fetch(tree, f"SELECT LAST * FROM {device}"))

    def change(device: str, time: int, field: str, value: float) -> None:
        tree.execute_non_query_statement(f"INSERT INTO {device}(time, {field}) ALIGNED VALUES ({time}, {value})")

    change(f"{IOT_ROOT}.diagnostics.truck_0", newest(f"{IOT_ROOT}.diagnostics.truck_0"), "current_load", 1_000_000)
    change(f"{IOT_ROOT}.readings.truck_1", newest(f"{IOT_ROOT}.readings.truck_1"), "longitude", 200)
    [[moving, _]] = fetch(tree, f"SELECT velocity FROM {IOT_ROOT}.readings.truck_2 WHERE velocity > 1 LIMIT 1")
    change(f"{IOT_ROOT}.readings.truck_2", int(moving), "fuel_consumption", 1000)
    check_iot_changes_found(run(folder, IOT_OPTIONS), IOT_DATA)


def test_iot_tablets_are_the_drivers_with_tsbs_nulls_and_nameless_rows_apart():
    """A batch of IoT rows as tablets: per truck, measurement and whether TSBS kept its name, the rows in time order,
    their bytes (values, then the null bitmaps) those of the driver's own Tablet made from the rows with None for nulls;
    as records (tree_batch=records), each row's device and its nulls as None."""
    from iotdb.utils.Tablet import Tablet

    spec = RunSpec(run_id="tablets", task="insert", target="iotdb", module="iotdb", workers=1, batch=4000, shape="tsbs-iot",
                   devices=IOT_DATA.hosts, time_range_ms=IOT_DATA.steps * IOT_DATA.interval_ms, primary_key="none", num_inserts=0,
                   extra={"database": IOT_DATABASE})
    batch = next(TsbsGenerator(spec, 0).batches(0, 4000, 4000))  # the rows TSBS writes, as sent
    module = module_class("iotdb")(spec)
    tablets = module.writer.prepare_batch(batch)
    names = batch.table_index, batch.host, batch.null_tag == 0
    assert sorted(tablet.get_insert_target_name() for tablet in tablets) == sorted(
        f"{IOT_ROOT}.{spec.table_names[m]}.{'unnamed.' if unnamed else ''}`truck_{truck}`" for m, truck, unnamed in set(zip(*(part.tolist() for part in names))))
    assert any("unnamed" in tablet.get_insert_target_name() for tablet in tablets)
    with_nulls = 0
    for tablet in tablets:
        table, rest = tablet.get_insert_target_name().removeprefix(f"{IOT_ROOT}.").split(".", 1)
        truck = int(rest.rsplit("truck_", 1)[1].strip("`"))
        rows = (batch.table_index == spec.table_names.index(table)) & (batch.host == truck) & ((batch.null_tag == 0) == rest.startswith("unnamed"))
        part = batch.select(np.flatnonzero(rows)[np.argsort(batch.timestamp_ms[rows], kind="stable")])
        fields = module.series.fields[table]
        values = [[None if value != value else int(value) if kind == "INT64" else value for value, kind in zip(row, fields.type_names())]
                  for row in zip(*(part.measurement(i).tolist() for i in range(len(fields.names))))]
        expected = Tablet(tablet.get_insert_target_name(), fields.names, fields.types(), values, part.timestamp_ms.tolist())
        assert (tablet.get_binary_timestamps(), tablet.get_binary_values()) == (expected.get_binary_timestamps(), expected.get_binary_values())
        with_nulls += any(value is None for row in values for value in row)
    assert with_nulls  # bitmaps were compared
    # tree_batch=records: a record per row, in the batch's order, its nulls None (lists: the driver leaves them out).
    records = module_class("iotdb")(spec.model_copy(update={"extra": {**spec.extra, "tree_batch": "records"}})).writer.prepare_batch(batch)
    paths, times, _, _, rows = records
    assert times == batch.timestamp_ms.tolist()
    assert ["unnamed." in path for path in paths] == (batch.null_tag == 0).tolist()
    widths = [len(one.field_names) for one in IOT_USE_CASE.measurements]
    nulls = [[value != value for value in column[: widths[m]]] for m, column in zip(batch.table_index.tolist(), zip(*(batch.measurement(i).tolist() for i in range(7))))]
    assert [[value is None for value in row] for row in rows] == nulls and all(isinstance(row, list) for row in rows)
