"""TSBS's cpu-only data and DevOps query types on the real InfluxDB 1.8 of scripts/servers/start-influxdb.sh
(tests/tsbs_story.py): TSBS's influx layout (measurement cpu, the ten tags, integer fields), TSBS's rows
and points, every type answered `ok` in TSBS's InfluxQL, changed rows found, and the data's size as
InfluxDB accounts for it. Runs in a database of its own, dropped at the end."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import run_cli
from tests.tsbs_story import DATA, HOSTS, TSBS_ROWS, assert_every_type_answers_ok, check_changed_rows_are_found, insert_story, reachable_or_fail

pytestmark = pytest.mark.influxdb

URL = os.environ.get("INFLUXDB_URL", "http://127.0.0.1:8086")
DATABASE = f"iotbench_tsbs_{os.getpid()}"
# usage_user of the changed rows: a whole number (the fields are integers) above any walk's 100.
CHANGED_TO = 101


def influxql(statement: str, database: str | None = DATABASE) -> list[dict]:
    """The series of an InfluxQL answer, times in epoch milliseconds."""
    answer = httpx.post(f"{URL}/query", data={"q": statement, "epoch": "ms", **({"db": database} if database else {})}, timeout=60).json()
    result = answer["results"][0]
    assert "error" not in result, result
    return result.get("series", [])


@pytest.fixture(scope="module")
def influx(tmp_path_factory):
    """A folder to run the CLI in once the story's data is inserted, and the insert's run report."""
    reachable_or_fail(f"{URL}/ping", "InfluxDB", "start-influxdb.sh")
    folder = tmp_path_factory.mktemp("tsbs-influxdb")
    yield folder, insert_story(run(folder))
    influxql(f'DROP DATABASE "{DATABASE}"', database=None)


def run(folder: Path):
    return lambda *args: run_cli([args[0], "--target", "influxdb-local", *args[1:]], folder, env={"INFLUXDB_URL": URL, "INFLUXDB_DB": DATABASE})


def test_tsbs_layout_and_every_query_type_answered_right(influx):
    folder, _ = influx
    # TSBS's influx layout: measurement cpu, the ten tags of each host, the fields as integers.
    [keys] = influxql("SHOW TAG KEYS FROM cpu")
    assert sorted(key for [key] in keys["values"]) == sorted(TAG_NAMES)
    [fields] = influxql("SHOW FIELD KEYS FROM cpu")
    assert fields["values"] == sorted([name, "integer"] for name in CPU_FIELDS)
    [counted] = influxql("SELECT count(usage_user), count(usage_guest_nice) FROM cpu")
    assert counted["values"][0][1:] == [TSBS_ROWS, TSBS_ROWS]
    # host_3's first row: its tags as the tool draws them, at TSBS's start, every field a whole number in [0, 100].
    [first] = influxql("SELECT * FROM cpu WHERE hostname = 'host_3' LIMIT 1")
    row = dict(zip(first["columns"], first["values"][0]))
    assert row["time"] == DATA.start_ms
    assert tuple(row[name] for name in TAG_NAMES) == host_tags(DATA.seed, 3, 1)[0]
    assert all(isinstance(row[name], int) and 0 <= row[name] <= 100 for name in CPU_FIELDS)
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_storage_is_influxdbs_own_accounting_of_the_database(influx):
    """The size is possible: positive, grown by the run's data, not more than the files of the database's shards."""
    _, report = influx
    before, after = report["server"]["storage_bytes_at_start"], report["server"]["storage_bytes"]
    assert 0 <= before < after
    # Compactions change the files after a run: the module's figure and the files are compared now.
    module = module_class("influxdb")(RunSpec(run_id="storage", task="insert", target="influx", module="influxdb", workers=1,
                                              extra={"url": URL, "token": "-", "org": "-", "bucket": f"{DATABASE}/autogen"}))
    module.connect()
    try:
        now = module.schema.storage_bytes()
    finally:
        module.close()
    shards = [one["tags"] for one in influxql("SHOW STATS FOR 'shard'") if one["tags"]["database"] == DATABASE]
    files = sum(path.stat().st_size for tags in shards for folder in (tags["path"], tags["walPath"])
                for path in Path(folder).rglob("*") if path.is_file())
    assert now is not None and 0 < now <= files
    assert any(f"diskBytes of the shards of database {DATABASE}" in note for note in report["notes"])  # the run says what it measured


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(influx):
    folder, _ = influx
    tags = host_tags(DATA.seed, 0, HOSTS)

    def change(host: int, step: int, value: float) -> None:  # a point of the same series and time replaces the field
        line = "cpu," + ",".join(f"{name}={tag}" for name, tag in zip(TAG_NAMES, tags[host])) + f" usage_user={int(value)}i {DATA.time_of(step)}"
        response = httpx.post(f"{URL}/write", params={"db": DATABASE, "precision": "ms"}, content=line, timeout=30)
        assert response.status_code == 204, response.text

    check_changed_rows_are_found(run(folder), change, CHANGED_TO)
