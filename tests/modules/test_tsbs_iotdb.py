"""TSBS's cpu-only and devops data and DevOps query types on the real Apache IoTDB 2.0.1-beta of
scripts/servers/start-iotdb.sh (tests/tsbs_story.py): the layout of benchANT's TSBS IoTDB target (an
aligned device per host and measurement, cpu-only's fields INT32, devops' INT64 and DOUBLE, the host's
tags as tags), TSBS's rows and points, every type answered `ok` in IoTDB's SQL, changed rows found, a
batch of TSBS's order written as one tablet per host in one call, and the data's size as IoTDB accounts
for it and as its files say. Runs in a database of its own (one data region group, as
tests/modules/test_iotdb.py explains), which the devops story then replaces, deleted at the end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.generator import TsbsGenerator
from iotdb_bench.simulator.workload.tsbs.hosts import host_tags
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
    assert_every_type_answers_ok,
    assert_inserted,
    check_changed_rows_are_found,
    insert_story,
)

pytestmark = pytest.mark.iotdb

DATABASE = f"iotbench_tsbs_{os.getpid()}"
OPTIONS = ["--extra-option", f"database={DATABASE}", "--extra-option", "data_region_groups=1"]
CHANGED_TO = 101  # usage_user of the changed rows: a whole number (INT32) above any walk's 100
# The DataNode's folder of the server of scripts/servers/start-iotdb.sh, when it runs here.
DATA_DIR = Path(os.environ.get("IOTDB_DATA_DIR", "/tmp/iotbench-servers/iotdb-6667/data/datanode"))


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


def run(folder: Path):
    return lambda *args: run_cli([args[0], "--target", "iotdb-local", *args[1:], *OPTIONS], folder, env={"IOTDB_HOST": HOST, "IOTDB_PORT": str(PORT)})


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

