"""The victoriametrics module end to end through the CLI, against the real VictoriaMetrics of
scripts/servers/start-victoriametrics.sh (and, for the flag checks, a second real instance started
here with other flags). The tests read what was stored through the export API themselves."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from iotdb_bench.simulator.modules.victoriametrics.schema import retention_seconds
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS, EventGenerator
from tests.conftest import WORKLOAD_OPTIONS, assert_verified, downsample_minutes, rows_per_query, verified_workload_run
from tests.read_side import AFFECTED_BY_CHANGE, CHANGED_DEVICE, CHANGED_VALUE, assert_scan_ok, assert_wrong, report_page, scan_row

pytestmark = pytest.mark.victoriametrics

URL = os.environ.get("VICTORIAMETRICS_URL", "http://127.0.0.1:8428")
BINARY = "/usr/bin/victoria-metrics"  # Debian's package, installed by scripts/servers/start-victoriametrics.sh
UNUSED_PORT = 8499

CONFIG = """\
platform: local
targets:
  vm:
    module: victoriametrics
    url: {url}
"""


@pytest.fixture
def victoriametrics(tmp_path):
    """A config with a `vm` target in the test folder; fails (never skips) without the server."""
    try:
        httpx.get(f"{URL}/health", timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"VictoriaMetrics is not reachable at {URL} ({error}); start it with scripts/servers/start-victoriametrics.sh")
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=URL))
    return URL


def run(cli, *args):
    return cli(*args, "--config", "config.yaml", "--target", "vm", "--platform", "local", timeout=300)


def exported(name_regex: str) -> dict[tuple[str, str], tuple[list, list]]:
    """Every stored series whose name matches, as (metric name, device_id) -> (values, timestamps in ms)."""
    httpx.get(f"{URL}/internal/force_flush", timeout=30).raise_for_status()
    response = httpx.post(f"{URL}/api/v1/export", data={"match[]": f'{{__name__=~"{name_regex}"}}'}, timeout=60)
    response.raise_for_status()
    series: dict[tuple[str, str], tuple[list, list]] = {}
    for line in response.text.splitlines():
        item = json.loads(line)
        values, timestamps = series.setdefault((item["metric"]["__name__"], item["metric"]["device_id"]), ([], []))
        values += item["values"]
        timestamps += item["timestamps"]
    return series


def samples(series: dict) -> int:
    return sum(len(values) for values, _ in series.values())


def expected_series(worker: int, count: int, device: int, devices: int = 10) -> tuple[list, list, list]:
    """(temperatures, timestamps, sequence numbers) one device of a worker sent, in time order."""
    batch = EventGenerator(1, worker, devices).batch(0, count)
    mine = batch.device_index == device
    return batch.temperature[mine].tolist(), batch.timestamp_ms[mine].tolist(), batch.sequence_number[mine].tolist()


def in_time_order(values: list, timestamps: list) -> tuple[list, list]:
    order = np.argsort(timestamps, kind="stable")
    return [values[i] for i in order], [timestamps[i] for i in order]


def test_import_batches_one_and_four_workers_then_the_five_queries(cli, victoriametrics):
    reports = assert_verified(run(cli, "insert", "-w", "1,4", "-r", "1", "--batch", "1000", "--num-inserts", "3000"), [3000, 12000])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [3, 12]  # one request per batch
    assert reports[0]["insert_mode"] == "/api/v1/import request, size 1000"
    assert all(r["ingestion"]["reached"] for r in reports)
    assert reports[1]["server"]["counters_at_end"]["events_inserted_server_wide"] - \
        reports[1]["server"]["counters_at_start"]["events_inserted_server_wide"] == 12000

    series = exported("events_.*")
    assert {name for name, _ in series} == {"events_temperature"}  # sequence numbers are not stored by default
    assert len(series) == 40 and samples(series) == 12000  # one series per device
    for worker, device in ((0, 0), (3, 7)):
        temperatures, timestamps, _ = expected_series(worker, 3000, device)
        assert in_time_order(*series[("events_temperature", f"w{worker:06d}-d{device:06d}")]) == (temperatures, timestamps)

    result = run(cli, "query", "-w", "1", "-r", "2")
    assert result.query_rows() == rows_per_query(40, downsample_minutes(3000))  # every answer checked and right


def test_scan_and_answers_then_a_sample_added_behind_the_tools_back(cli, victoriametrics):
    assert_verified(run(cli, "insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000"), [6000])
    assert_scan_ok(run(cli, "scan", "-w", "2", "-r", "1", "--page-size", "64"), 6000, 20)
    assert run(cli, "query", "-w", "2", "-r", "1").query_rows() == rows_per_query(20, downsample_minutes(3000))

    # VictoriaMetrics cannot change or delete one sample: one more is written, 1 ms after the device's
    # first (in the downsample hour, not its newest), with a value above anything generated.
    line = {"metric": {"__name__": "events_temperature", "device_id": CHANGED_DEVICE}, "values": [CHANGED_VALUE],
            "timestamps": [TIME_ORIGIN_MS + 1]}
    httpx.post(f"{URL}/api/v1/import", content=json.dumps(line), timeout=30).raise_for_status()
    queried = run(cli, "query", "-r", "1")
    answers = assert_wrong(queried, AFFECTED_BY_CHANGE | {"count-events"})
    assert answers["count-events"][1] == "count is 6001, expected 6000"
    assert answers["temperature-min-max"][1].startswith(f"max is {CHANGED_VALUE}, expected ")
    assert answers["device-downsample"][1].startswith("minute 2026-01-01T00:00:00.000Z (1767225600000): ")
    assert "WRONG: count is 6001, expected 6000" in report_page(queried)
    scan = run(cli, "scan", "-w", "2", "-r", "1")
    problem = f"device {CHANGED_DEVICE}: read 301 readings, expected 300"
    assert scan.code == 1 and scan_row(scan)["check"] == "FAILED" and problem in scan_row(scan)["problem"]


def test_line_protocol_with_sequence_numbers_into_four_tables(cli, victoriametrics):
    result = run(cli, "insert", "-w", "1,4", "-r", "1", "--batch", "500", "--num-inserts", "2000", "--tables", "multiple",
                 "--extra-option", "ingestion=influx", "--extra-option", "store_sequence_number=true")
    reports = assert_verified(result, [2000, 8000])
    assert reports[0]["insert_mode"] == "line protocol request, size 500"
    series = exported("events[0-3]_.*")
    assert samples(series) == 2 * 8000  # two samples per event
    for (name, device), _ in series.items():
        table = name.split("_")[0]
        assert table == f"events{int(device[-6:]) % 4}", (name, device)  # a device stays in one table
    temperatures, timestamps, sequence_numbers = expected_series(2, 2000, 5)
    assert in_time_order(*series[("events1_temperature", "w000002-d000005")]) == (temperatures, timestamps)
    assert in_time_order(*series[("events1_sequence_number", "w000002-d000005")]) == ([float(n) for n in sequence_numbers], timestamps)


@pytest.mark.parametrize("ingestion", ["import", "influx"])
def test_single_inserts_one_and_four_workers(cli, victoriametrics, ingestion):
    reports = assert_verified(run(cli, "insert", "-w", "1,4", "-r", "1", "--num-inserts", "120", "--extra-option", f"ingestion={ingestion}",
                                  "--extra-option", "store_sequence_number=true"), [120, 480])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [120, 480]  # one request per event
    series = exported("events_.*")
    assert samples(series) == 2 * 480
    temperatures, timestamps, sequence_numbers = expected_series(1, 120, 3)
    assert in_time_order(*series[("events_temperature", "w000001-d000003")]) == (temperatures, timestamps)
    assert in_time_order(*series[("events_sequence_number", "w000001-d000003")]) == ([float(n) for n in sequence_numbers], timestamps)


def test_no_clean_and_steps_continue_the_series(cli, victoriametrics):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "300"), [300])
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "200", "--steps", "2")
    assert result.code == 0, result.stderr
    verifications = [run["report"]["verification"] for run in result.results()["runs"]]
    assert [(v["count_before"], v["counted"]) for v in verifications] == [(0, 200), (200, 400)]
    temperatures, timestamps, _ = expected_series(0, 400, 4)
    assert in_time_order(*exported("events_temperature")[("events_temperature", "w000000-d000004")]) == (temperatures, timestamps)


def test_query_timeout_is_reported_per_query(cli, victoriametrics):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "2000"), [2000])
    result = run(cli, "query", "-w", "1", "-r", "1", "--query-timeout", "0.000001")
    assert result.code == 0, result.stderr  # the collector's count is not bound by the query timeout
    summary = result.results()["queries"]
    assert len(summary) == 6  # device-downsample, a range query, too
    assert all(row["errors"] == ["MetricsQL query timed out"] for row in summary), summary


@pytest.fixture
def second_server(tmp_path) -> Iterator:
    """Starts another real VictoriaMetrics with the flags a test gives, on a free port; stops it after."""
    started: list[subprocess.Popen] = []

    def start(*flags: str) -> str:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        data = tmp_path / f"vm-{port}"
        process = subprocess.Popen([BINARY, f"-storageDataPath={data}", f"-httpListenAddr=127.0.0.1:{port}", "-loggerLevel=ERROR", *flags],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 30
        while True:
            try:
                httpx.get(f"{url}/health", timeout=2).raise_for_status()
                return url
            except httpx.HTTPError:
                if time.time() > deadline or process.poll() is not None:
                    pytest.fail(f"{BINARY} did not start on port {port}")
                time.sleep(0.1)

    assert shutil.which(BINARY), f"{BINARY} is missing: scripts/servers/start-victoriametrics.sh installs it"
    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=30)


def test_a_retention_shorter_than_the_data_is_refused(cli, tmp_path, second_server):
    url = second_server()  # the default retention: one month
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=url))
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "100")
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"VictoriaMetrics at 127.0.0.1:{url.rsplit(':', 1)[1]} keeps samples for -retentionPeriod=1" in lines[0]
    assert "start it with -retentionPeriod=100y" in lines[0]


def test_deduplication_is_refused(cli, tmp_path, second_server):
    url = second_server("-retentionPeriod=100y", "-dedup.minScrapeInterval=1s")
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=url))
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "100")
    assert result.code == 1
    assert "deduplicates samples (-dedup.minScrapeInterval=1s)" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_retention_values_as_victoriametrics_reads_them():
    assert retention_seconds("1") == 31 * 86_400  # a bare number counts months
    assert retention_seconds("100y") == 100 * 365 * 86_400
    assert retention_seconds("2w") == 14 * 86_400
    assert retention_seconds("36h") == 36 * 3600
    assert retention_seconds("soon") is None


@pytest.mark.parametrize("mode", ["sql", "client", "uuid"])
def test_key_modes_are_refused(cli, victoriametrics, mode):
    result = run(cli, "insert", "-w", "1", "--primary-key", mode)
    assert result.code == 2
    assert f"does not support --primary-key {mode}: a sample is identified by its series and time only" in result.stderr
    assert "Traceback" not in result.stderr


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize("workload", sorted(set(WORKLOAD_OPTIONS) - {"light"}))
def test_workload_options(cli, victoriametrics, workload):
    ingestion = "influx" if workload == "random" else "import"
    report = verified_workload_run(run(cli, "insert", "-w", "2", "-r", "1", *WORKLOAD_OPTIONS[workload], "--extra-option", f"ingestion={ingestion}",
                                       "--extra-option", "store_sequence_number=true"))
    counted = report["verification"]["counted"]
    series = exported("events_.*")
    by_name = {name: sum(len(values) for (found, _), (values, _) in series.items() if found == name) for name, _ in series}
    measures = ["temperature", "m1", "m2", "m3"] if workload == "measurements" else ["temperature"]
    assert by_name == {f"events_{name}": counted for name in [*measures, "sequence_number"]}  # a series per device and value
    if workload != "duration":  # every worker's sequence numbers once each, late ones included
        for worker in ("w000000", "w000001"):
            numbers = [n for (name, device), (values, _) in series.items() if name == "events_sequence_number" and device.startswith(worker)
                       for n in values]
            assert sorted(numbers) == list(range(1000))


def test_sensors_are_a_label_and_single_inserts_keep_them(cli, victoriametrics):
    verified_workload_run(run(cli, "insert", "-w", "2", "-r", "1", "--sensors", "3", "--num-inserts", "60", "--devices-per-worker", "4"))
    httpx.get(f"{URL}/internal/force_flush", timeout=30).raise_for_status()
    response = httpx.post(f"{URL}/api/v1/export", data={"match[]": '{__name__="events_temperature"}'}, timeout=60)
    labels = {(item["metric"]["device_id"], item["metric"]["sensor"]) for item in map(json.loads, response.text.splitlines())}
    assert len(labels) == 2 * 4 * 3


@pytest.mark.parametrize(("args", "message"), [
    (("--schema", "light"), "module 'victoriametrics' does not support --schema light: a metrics store keeps numeric samples"),
])
def test_workloads_a_metrics_store_cannot_hold_are_refused_in_one_line(cli, victoriametrics, args, message):
    result = run(cli, "insert", "-w", "1", "-r", "1", "--num-inserts", "10", *args)
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
