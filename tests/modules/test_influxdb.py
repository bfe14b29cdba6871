"""The influxdb module end to end through the CLI, against the real InfluxDB 1.8.10 of
scripts/servers/start-influxdb.sh (v2-compatible write and Flux APIs, databases through the 1.x API)."""

from __future__ import annotations

import os

import httpx
import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.modules.influxdb import InfluxServerError
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EventGenerator
from tests.conftest import WORKLOAD_OPTIONS, assert_verified, downsample_minutes, rows_per_query, verified_workload_run
from tests.read_side import check_read_side

pytestmark = pytest.mark.influxdb

URL = os.environ.get("INFLUXDB_URL", "http://127.0.0.1:8086")
DATABASE = os.environ.get("INFLUXDB_DB", "bench")
UNUSED_PORT = 8099

CONFIG = """\
platform: local
targets:
  influx:
    module: influxdb
    url: {url}
    token: "-"
    org: "-"
    bucket: {database}/autogen
"""


@pytest.fixture
def influx(tmp_path):
    """Writes a config with an `influx` target into the test folder; fails (never skips) without the server."""
    try:
        httpx.get(f"{URL}/ping", timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"InfluxDB is not reachable at {URL} ({error}); start it with scripts/servers/start-influxdb.sh")
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=URL, database=DATABASE))
    return URL


def run(cli, *args):
    return cli(*args, "--config", "config.yaml", "--target", "influx", "--platform", "local", timeout=300)


def influxql(statement: str) -> list[list]:
    """Rows of the first series of an InfluxQL answer (the 1.x query API)."""
    answer = httpx.post(f"{URL}/query", data={"q": statement, "db": DATABASE}, timeout=30).json()["results"][0]
    assert "error" not in answer, answer
    series = answer.get("series") or [{"values": []}]
    return series[0]["values"]


def points(measurement: str) -> list[list]:
    """(time in ms, device_id, sequence_number, temperature) of every point, by time then device."""
    answer = httpx.post(f"{URL}/query", timeout=30, data={
        "q": f'SELECT device_id, sequence_number, temperature FROM "{measurement}"', "db": DATABASE, "epoch": "ms"}).json()
    series = answer["results"][0].get("series") or [{"values": []}]
    return sorted(series[0]["values"])


def test_batch_writes_then_the_six_flux_queries(cli, influx):
    reports = assert_verified(run(cli, "insert", "-w", "1,4", "-r", "1", "--batch", "1000", "--num-inserts", "2000"), [2000, 8000])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [2, 8]  # one write call per batch

    # The stored points are exactly the generated ones: ms timestamps, tag, integer and float fields.
    stored = [p for p in points("events") if p[1].startswith("w000000-")]
    expected = EventGenerator(1, 0, 10).batch(0, 2000)
    assert stored == [list(row) for row in zip(expected.timestamp_ms.tolist(), expected.device_id.astype("U15").tolist(),
                                                expected.sequence_number.tolist(), expected.temperature.tolist())]
    assert influxql('SHOW FIELD KEYS FROM "events"') == [["sequence_number", "integer"], ["temperature", "float"]]
    assert influxql('SHOW TAG KEYS FROM "events"') == [["device_id"]]

    result = run(cli, "query", "-w", "1", "-r", "2")
    assert result.query_rows() == rows_per_query(40, downsample_minutes(2000))  # every answer checked and right


def test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(cli, influx):
    assert_verified(run(cli, "insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000"), [6000])

    def time_of(selector: str, device: str) -> int:
        answer = httpx.post(f"{URL}/query", timeout=30, data={
            "q": f"SELECT {selector}(temperature) FROM \"events\" WHERE device_id = '{device}'", "db": DATABASE, "epoch": "ms"}).json()
        return answer["results"][0]["series"][0]["values"][0][0]

    def change(device, value):  # a point of the same series and time replaces the stored value
        line = f"events,device_id={device} temperature={value} {time_of('first', device)}"
        response = httpx.post(f"{URL}/write", params={"db": DATABASE, "precision": "ms"}, content=line, timeout=30)
        assert response.status_code == 204, response.text

    def delete(device):
        newest = time_of("last", device)
        influxql(f"DELETE FROM \"events\" WHERE device_id = '{device}' AND time >= {newest}ms AND time <= {newest}ms")

    check_read_side(lambda task, *args: run(cli, task, "-r", "1", *args), change, delete, 3000)


def test_single_writes_into_four_measurements(cli, influx):
    reports = assert_verified(run(cli, "insert", "-w", "4", "-r", "1", "--num-inserts", "250", "--tables", "multiple"), [1000])
    assert reports[0]["figures"]["latency"]["calls"] == 1000  # one write call per event
    total = 0
    for table in range(4):
        rows = points(f"events{table}")
        total += len(rows)
        assert rows, f"events{table} is empty"
        assert all(int(device[-6:]) % 4 == table for _, device, _, _ in rows)  # a device stays in one measurement
    assert total == 1000


def test_batch_writes_into_four_measurements_one_worker(cli, influx):
    reports = assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "500", "--num-inserts", "2000",
                                  "--tables", "multiple", "--primary-key", "none"), [2000])
    assert reports[0]["figures"]["latency"]["calls"] == 4
    assert sorted(len(points(f"events{t}")) for t in range(4)) == [400, 400, 600, 600]  # devices 0-9 modulo 4: 3, 3, 2, 2 devices


def test_gzipped_batch_writes(cli, influx):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "2000",
                        "--extra-option", "enable_gzip=true"), [2000])
    expected = EventGenerator(1, 0, 10).batch(0, 2000)
    assert sorted(sequence for _, _, sequence, _ in points("events")) == expected.sequence_number.tolist()


def test_single_writes_one_worker_and_no_clean_keeps_the_data(cli, influx):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--num-inserts", "300"), [300])
    # --steps continues each worker's stream where the last step ended: the points add up.
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "200", "--steps", "2")
    assert result.code == 0, result.stderr
    verifications = [run["report"]["verification"] for run in result.results()["runs"]]
    assert [(v["count_before"], v["counted"]) for v in verifications] == [(0, 200), (200, 400)]
    assert all(v["ok"] for v in verifications)


def test_v1_compat_forced_and_buckets_api_missing_on_influxdb_1(cli, influx):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "2000",
                        "--extra-option", "v1_compat=true"), [2000])
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "1000", "--extra-option", "v1_compat=false")
    assert result.code == 1
    assert "no buckets API" in result.stderr and "v1_compat: true" in result.stderr


def test_query_timeout_is_reported_per_query(cli, influx):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "2000"), [2000])
    result = run(cli, "query", "-w", "1", "-r", "1", "--query-timeout", "0.000001")
    assert result.code == 0, result.stderr  # the collector's count is not bound by the query timeout
    summary = result.results()["queries"]
    assert len(summary) == 6  # the five canonical queries and device-downsample
    assert all(row["errors"] == ["Flux query timed out"] for row in summary), summary


def test_rejected_primary_key_modes(cli, influx):
    for mode in ("sql", "client", "uuid"):
        result = run(cli, "insert", "-w", "1", "--primary-key", mode)
        assert result.code == 2
        assert f"does not support --primary-key {mode} (supported: db, none)" in result.stderr
        assert "Traceback" not in result.stderr


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize("workload", sorted(WORKLOAD_OPTIONS))
def test_workload_options(cli, influx, workload):
    report = verified_workload_run(run(cli, "insert", "-w", "2", "-r", "1", *WORKLOAD_OPTIONS[workload]))
    counted = report["verification"]["counted"]
    if workload == "light":  # the indexed column is a tag (InfluxDB indexes tags only), beside the device
        assert influxql('SHOW TAG KEYS FROM "events"') == [["device_id"], ["val1"]]
        assert influxql('SHOW FIELD KEYS FROM "events"') == [["val2", "integer"]]
        assert influxql('SELECT count(val2) FROM "events"')[0][1] == counted
        return
    assert influxql('SELECT count(temperature) FROM "events"')[0][1] == counted
    if workload == "measurements":
        assert influxql('SHOW FIELD KEYS FROM "events"') == [["m1", "float"], ["m2", "float"], ["m3", "float"],
                                                           ["sequence_number", "integer"], ["temperature", "float"]]
    elif workload != "duration":  # every worker's sequence numbers once each, late ones included
        stored = points("events")
        for worker in ("w000000", "w000001"):
            assert sorted(p[2] for p in stored if p[1].startswith(worker)) == list(range(1000))


def test_a_refused_write_fails_with_the_servers_reason(influx):
    spec = RunSpec(run_id="refused", task="insert", target="influx", module="influxdb", workers=1, batch=1000,
                   extra={"url": URL, "token": "-", "org": "-", "bucket": "iotbench_no_such_database/autogen"})
    module = module_class("influxdb")(spec)
    module.connect()  # no setup: the database is not made
    try:
        with pytest.raises(InfluxServerError, match='write failed with 404: database not found: "iotbench_no_such_database"') as refused:
            module.writer.insert_batch(module.writer.prepare_batch(EventGenerator(1, 0, 10).batch(0, 1000)))
    finally:
        module.close()
    assert refused.value.status == 404


def test_a_run_querys_answer_is_decoded_after_its_call_and_an_error_is_raised_in_it(influx):
    spec = RunSpec(run_id="decoded-later", task="query", target="influx", module="influxdb", workers=1,
                   extra={"url": URL, "token": "-", "org": "-", "bucket": "bench/autogen"})
    module = module_class("influxdb")(spec)
    module.connect()
    try:
        connection = module.connection
        received = connection.influxql_series_received('SELECT count(x) FROM "iotbench_nothing_here"; SHOW DATABASES')
        # The timed call returned the answer undecoded; a statement that fails (InfluxDB answers 200
        # with the error in the JSON) fails in the call, so a failed query is never timed as answered.
        with pytest.raises(InfluxServerError, match="failed with 200: mixing aggregate and non-aggregate"):
            connection.influxql_series_received('SELECT mean(x), x FROM "events"')
    finally:
        module.close()
    assert received() == []  # decodes with the connection closed: the first statement's series (none)
