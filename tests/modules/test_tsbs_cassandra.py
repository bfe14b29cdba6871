"""TSBS's cpu-only, devops and iot data and its DevOps and IoT query types on the real Cassandra 5 (tests/tsbs_story.py):
TSBS's Cassandra layout (a partition per series and day in `series_bigint`, devops' float fields in
`series_double`), TSBS's rows and points, every type answered `ok`, changed points found; and the
storage figure, read from the server's data folder (the server runs on this machine) and from
Cassandra's own accounting. One throwaway keyspace: the devops story replaces the cpu-only story's
tables once its tests are done (Cassandra's schema changes are slow; a keyspace of its own would be one more);
the IoT story, smaller than the others' (its section says why), has a keyspace of its own: its tables have the same names."""

from __future__ import annotations

import contextlib
import os
import time

import numpy as np
import pytest

from iotdb_bench.simulator.modules.cassandra import Module, storage
from iotdb_bench.simulator.modules.cassandra.tsbs_iot_series import IotIndex
from iotdb_bench.simulator.modules.cassandra.tsbs_series import DOUBLES, TABLE, SeriesIndex
from iotdb_bench.simulator.spec import TSBS_IOT_QUERIES, TSBS_START_MS, RunSpec
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.generator import TsbsGenerator
from iotdb_bench.simulator.workload.tsbs.hosts import host_tags
from iotdb_bench.simulator.workload.tsbs.iot import IOT, truck_tags
from iotdb_bench.simulator.workload.tsbs.iot_rows import IotRows
from tests.conftest import run_cli
from tests.modules.test_cassandra import HOST, PORT, live_session
from tests.tsbs_story import (
    CPU_ONLY,
    DATA,
    DEVOPS_STORY_60S,
    HOSTS,
    INSERT,
    TSBS_POINTS,
    Story,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    assert_inserted,
    assert_iot_inserted,
    check_changed_rows_are_found,
    check_iot_changes_found,
)

pytestmark = [pytest.mark.cassandra, pytest.mark.slow]

CONFIG = """\
platform: local
targets:
  cassandra:
    module: cassandra
    contact_points: {host}
    port: {port}
    keyspace: {keyspace}
    replication_factor: 1
"""
FIELDS = 10
CHANGED_VALUE = 101  # TSBS's values are whole numbers: series_bigint holds no 100.5


@contextlib.contextmanager
def inserted(tmp_path_factory, name: str, insert: list[str]):
    """(session, keyspace, a folder to run the CLI in, the insert's result) in a throwaway keyspace of its own."""
    cluster, session = live_session()
    keyspace = f"iotbench_{name}_{os.getpid()}"
    folder = tmp_path_factory.mktemp(name)
    (folder / "config.yaml").write_text(CONFIG.format(host=HOST, port=PORT, keyspace=keyspace))
    try:
        yield session, keyspace, folder, run(folder)("insert", *insert)
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
        cluster.shutdown()


@pytest.fixture(scope="module")
def cassandra(tmp_path_factory):
    """(session, keyspace, a folder to run the CLI in, the insert's report) once the story's data is inserted."""
    with inserted(tmp_path_factory, "tsbs", INSERT) as (session, keyspace, folder, result):
        assert_inserted(result)
        yield session, keyspace, folder, result.results()["runs"][0]["report"]


def run(folder):
    return lambda *args: run_cli([args[0], "--config", "config.yaml", "--target", "cassandra", "--platform", "local", *args[1:]], folder)


def test_tsbs_layout_and_every_query_type_answered_right(cassandra):
    session, keyspace, folder, report = cassandra
    columns = {(row.column_name, row.type, row.kind) for row in session.execute(
        "SELECT column_name, type, kind FROM system_schema.columns WHERE keyspace_name = %s AND table_name = %s", (keyspace, TABLE))}
    assert columns == {("series_id", "text", "partition_key"), ("time", "timestamp", "clustering"), ("value", "bigint", "regular")}
    # A partition per host, field and day (13 hours from midnight: one day), a point per row and field.
    series = [row.series_id for row in session.execute(f"SELECT DISTINCT series_id FROM {keyspace}.{TABLE}")]
    assert len(series) == HOSTS * FIELDS
    assert session.execute(f"SELECT count(*) FROM {keyspace}.{TABLE}", timeout=120).one()[0] == TSBS_POINTS
    [host_0_user] = [name for name in series if name.startswith("cpu,hostname=host_0,") and name.endswith("#usage_user#2016-01-01")]
    assert host_0_user.count(",") == 10 and ",service_environment=" in host_0_user  # the ten tags, in TSBS's order
    # A mixed run's queries name the partitions from what the run writes: the very ones the writer made.
    planned = SeriesIndex.planned(DATA.seed, HOSTS, DATA.start_ms, DATA.end_ms)
    assert SeriesIndex.of(series) == planned and len(planned.hosts) == HOSTS
    first = session.execute(f"SELECT time, value FROM {keyspace}.{TABLE} WHERE series_id = %s LIMIT 1", (host_0_user,)).one()
    expected = TsbsGenerator(RunSpec.model_validate(report["spec"]), 0).rows(0, 1)
    assert (round(first.time.timestamp() * 1000), first.value) == (DATA.start_ms, expected.temperature[0])
    assert report["insert_mode"] == "UNLOGGED batches per series and day, size 1000"
    assert report["notes"] == ["storage: the tables' SSTable files in the server's data folder, on this machine; "
                               "rows still in memtables (not flushed yet) are not counted"]
    assert report["server"]["storage_bytes_at_start"] == 0  # an empty table has no SSTable
    assert 0 <= report["server"]["storage_bytes"] < 100 * TSBS_POINTS
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def change_usage_user(session, keyspace: str, story: Story):
    """How check_changed_rows_are_found changes a cpu row: its usage_user point, by its series' key."""
    series = {row.series_id.split(",", 2)[1]: row.series_id.split("#")[0]
              for row in session.execute(f"SELECT DISTINCT series_id FROM {keyspace}.{TABLE}") if row.series_id.startswith("cpu,")}

    def change(host: int, step: int, value: float) -> None:
        key = f"{series[f'hostname=host_{host}']}#usage_user#2016-01-01"
        session.execute(f"UPDATE {keyspace}.{TABLE} SET value = %s WHERE series_id = %s AND time = %s", (int(value), key, story.data.time_of(step)))

    return change


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(cassandra):
    session, keyspace, folder, _ = cassandra
    check_changed_rows_are_found(run(folder), change_usage_user(session, keyspace, CPU_ONLY), CHANGED_VALUE)


def test_storage_counts_the_flushed_sstables_and_grows_with_the_data(cassandra):
    """The module's figure against the folder and Cassandra's own accounting: Cassandra writes SSTables
    only when it flushes, which the test makes it do every half second (memtable_flush_period_in_ms)."""
    session, keyspace, _, _ = cassandra
    spec = RunSpec(run_id="storage", task="insert", target="cassandra", module="cassandra", workers=1, batch=1000, shape="tsbs-cpu",
                   devices=5, time_range_ms=7_200_000, num_inserts=0, primary_key="none",
                   connection={"contact_points": HOST, "port": PORT, "keyspace": f"{keyspace}_storage"})
    module = Module(spec)
    module.connect()
    try:
        module.schema.setup()
        assert module.schema.storage_bytes() == 0
        session.execute(f"ALTER TABLE {keyspace}_storage.{TABLE} WITH memtable_flush_period_in_ms = 500")
        generator, sizes = TsbsGenerator(spec, 0), []
        for half in range(2):  # the first hour, then the second
            module.writer.insert_batch(module.writer.prepare_batch(generator.rows(half * 1800, 1800)))
            sizes.append(flushed_size(module, above=sizes[-1] if sizes else 0))
        assert module.schema.count() == 3600
        assert 0 < sizes[0] < sizes[1] < 100 * 3600 * FIELDS
        local = module.schema.local_folders
        assert local is not None and storage.folder_bytes(local) == sizes[1]
        # Cassandra's own figure: the same files, in whole MiB rounded up.
        own = storage.disk_usage_bytes(session, f"{keyspace}_storage", [TABLE])
        assert sizes[1] <= own < sizes[1] + storage.MIB
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}_storage", timeout=120)
        module.close()


def flushed_size(module: Module, above: int) -> int:
    """The storage figure once it has grown above `above` and two reads a second apart agree."""
    deadline, last = time.monotonic() + 60, -1
    while time.monotonic() < deadline:
        size = module.schema.storage_bytes() or 0
        if size > above and size == last:
            return size
        last = size
        time.sleep(1)
    raise AssertionError(f"the tables' SSTables did not grow above {above} bytes within 60 s (last {last})")


def test_devops_measurements_as_tsbs_loads_them_and_the_devops_types_over_its_cpu(cassandra):
    """Last in the file: the devops story's insert replaces the cpu-only story's tables in the keyspace. The
    story at 60 s steps (DEVOPS_STORY_60S): every series, window and query type of the 30 s one, half its points."""
    session, keyspace, folder, _ = cassandra
    assert_inserted(run(folder)("insert", *DEVOPS_STORY_60S.insert), DEVOPS_STORY_60S)
    assert {row.table_name for row in session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,))} >= {TABLE, DOUBLES}
    assert {(row.column_name, row.type) for row in session.execute(
        "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = %s AND table_name = %s", (keyspace, DOUBLES))} == {
        ("series_id", "text"), ("time", "timestamp"), ("value", "double")}
    # A partition per host, measurement and field (13 hours: one day); the float64 fields (mem's percentages) in series_double.
    series = {table: [row.series_id for row in session.execute(f"SELECT DISTINCT series_id FROM {keyspace}.{table}")] for table in (TABLE, DOUBLES)}
    measurements = USE_CASES["tsbs-devops"].measurements
    floats = {f"{one.name}#{name}" for one in measurements for name, integer in zip(one.field_names, one.integer_fields) if not integer}
    assert sorted({name.split(",", 1)[0] + "#" + name.split("#")[1] for name in series[DOUBLES]}) == sorted(floats) == [
        "mem#available_percent", "mem#buffered_percent", "mem#used_percent"]
    assert len(series[TABLE]) + len(series[DOUBLES]) == HOSTS * USE_CASES["tsbs-devops"].fields_per_step
    points = sum(session.execute(f"SELECT count(*) FROM {keyspace}.{table}", timeout=120).one()[0] for table in (TABLE, DOUBLES))
    assert points == DEVOPS_STORY_60S.tsbs_points
    # The measurement's own tags after the host's, in TSBS's order: diskio's serial, nginx's port and server.
    tags = ",".join(f"{name}={value}" for name, value in zip(("hostname", "region"), host_tags(DEVOPS_STORY_60S.data.seed, 2, 1)[0]))
    [diskio] = [name for name in series[TABLE] if name.startswith(f"diskio,{tags},") and "#reads#" in name]
    [nginx] = [name for name in series[TABLE] if name.startswith(f"nginx,{tags},") and "#accepts#" in name]
    assert diskio.split("#")[0].split(",")[-1].startswith("serial=") and [part.split("=")[0] for part in nginx.split("#")[0].split(",")[-2:]] == [
        "port", "server"]
    fractions = [row.value for row in session.execute(f"SELECT value FROM {keyspace}.{DOUBLES} LIMIT 200")]
    assert any(value != int(value) for value in fractions)
    assert_every_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"), story=DEVOPS_STORY_60S)  # no --queries: the data's own
    check_changed_rows_are_found(run(folder), change_usage_user(session, keyspace, DEVOPS_STORY_60S), CHANGED_VALUE, story=DEVOPS_STORY_60S)


# -- IoT: a smaller story than tests/tsbs_story.py's (Cassandra writes each value as a point: its 3.3 million
# would take minutes here). Four trucks over 26 hours (two days) at 10-minute steps: a row per period,
# so TSBS's null fields leave periods without a velocity or a status, and every tag is nulled in some row.
IOT_STORY = TsbsData(shape="tsbs-iot", seed=1, hosts=4, start_ms=TSBS_START_MS, interval_ms=600_000, steps=26 * 6)
# With a query client beside the workers: the 13 IoT types run while the trucks are written, then idle.
IOT_STORY_INSERT = ["--schema", "tsbs-iot", "--devices", "4", "--time-range", "26h", "--interval", "10m", "-w", "2", "-r", "1", "--batch", "200",
                    "--query-workers", "1"]


@pytest.fixture(scope="module")
def iot(tmp_path_factory):
    """(session, keyspace, a folder to run the CLI in) once the IoT story's data is inserted, in a keyspace of its own."""
    with inserted(tmp_path_factory, "tsbs_iot", IOT_STORY_INSERT) as (session, keyspace, folder, result):
        assert_iot_inserted(result, IOT_STORY)
        # The mixed run's queries: a request per partition of the series being written, none failing.
        mixed = result.results()["runs"][0]["report"]["queries_under_ingest"]
        assert set(mixed) == set(TSBS_IOT_QUERIES)
        assert all(not figures["errors"] and figures["idle"]["calls"] == 3 for figures in mixed.values()), mixed
        yield session, keyspace, folder


def iot_series(session, keyspace: str) -> dict[str, list[str]]:
    return {table: [row.series_id for row in session.execute(f"SELECT DISTINCT series_id FROM {keyspace}.{table}")] for table in (TABLE, DOUBLES)}


def test_iot_series_with_tsbs_nulls_and_every_iot_type_answered_right(iot):
    session, keyspace, folder = iot
    series = iot_series(session, keyspace)
    # status, TSBS's one int64 field, in series_bigint; the nine float64 fields in series_double.
    assert {name.split("#")[1] for name in series[TABLE]} == {"status"}
    assert {name.split("#")[1] for name in series[DOUBLES]} == {
        "latitude", "longitude", "elevation", "velocity", "heading", "grade", "fuel_consumption", "fuel_state", "current_load"}
    prefixes = {name.split("#")[0] for names in series.values() for name in names}
    # truck_0's own series: the eight tags in TSBS's order, the capacities as their shortest text ...
    name, fleet, driver, model, version, load, fuel, nominal = truck_tags(IOT_STORY.seed, 0, 1)[0]
    assert (f"readings,name={name},fleet={fleet},driver={driver},model={model},device_version={version},"
            f"load_capacity={load:g},fuel_capacity={fuel:g},nominal_fuel_consumption={nominal:g}") in prefixes
    # ... and TSBS's null tags left out of their rows' series ids: nameless rows (no truck's), rows without a fleet.
    tags = [dict(pair.split("=") for pair in prefix.split(",")[1:]) for prefix in prefixes]
    assert any("name" not in each for each in tags) and any("name" in each and "fleet" not in each for each in tags)
    assert all(len(each) >= len(IOT.tags) - 1 for each in tags)
    # TSBS's null fields are no point: the points stored are the fields written less the rows' null ones.
    rows = IotRows(IOT_STORY.seed, IOT_STORY.hosts)
    nulls = 0
    for measurement, one in enumerate(IOT.measurements):
        positions = rows.position(np.arange(IOT_STORY.steps)[:, None], measurement, np.arange(IOT_STORY.hosts)[None, :]).ravel()
        nulls += int(np.count_nonzero(rows.null_field(positions[rows.exists(positions)], len(one.field_names)) >= 0))
    points = sum(session.execute(f"SELECT count(*) FROM {keyspace}.{table}", timeout=120).one()[0] for table in (TABLE, DOUBLES))
    assert nulls > 0 and points == IOT_STORY.points - nulls
    # A mixed run's queries read the series the run writes: every truck's stored series are among those planned.
    stored, planned = IotIndex.of(series[TABLE] + series[DOUBLES]), IotIndex.planned(IOT_STORY.seed, IOT_STORY.hosts, IOT_STORY.start_ms, IOT_STORY.end_ms)
    assert stored.trucks == planned.trucks == [f"truck_{truck}" for truck in range(IOT_STORY.hosts)]
    assert all(set(found) <= set(planned.series[key]) for key, found in stored.series.items())
    assert_every_iot_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"), data=IOT_STORY)  # no --queries: the data's own, all 13


def change_iot_rows(session, keyspace: str) -> None:
    """tests/tsbs_story.py's IOT_CHANGES in TSBS's Cassandra layout: the row found among the truck's series (each
    of its prefixes), the point upserted in that row's series: truck_0's newest load, truck_1's newest
    longitude, truck_2's first fuel consumption at a velocity above 1."""
    series = iot_series(session, keyspace)[DOUBLES]
    changes = (("truck_0", ("fuel_state", "current_load"), max, None, "current_load", 1_000_000.0),
               ("truck_1", ("latitude", "longitude"), max, None, "longitude", 200.0),
               ("truck_2", ("velocity",), min, 1.0, "fuel_consumption", 1000.0))
    for truck, fields, pick, above, changed, value in changes:
        mine = [name for name in series if f",name={truck}," in name and name.split("#")[1] in fields]
        points = [(row.time, name) for name in mine for row in session.execute(f"SELECT time, value FROM {keyspace}.{DOUBLES} WHERE series_id = %s", (name,))
                  if above is None or row.value > above]
        at, found = pick(points)
        prefix, _, day = found.split("#")
        session.execute(f"UPDATE {keyspace}.{DOUBLES} SET value = %s WHERE series_id = %s AND time = %s", (value, f"{prefix}#{changed}#{day}", at))


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iot):
    session, keyspace, folder = iot
    change_iot_rows(session, keyspace)
    check_iot_changes_found(run(folder), IOT_STORY)
