"""The azure_data_explorer module against a FAKE Kusto service: ADX cannot run on these machines
(its emulator is a container image only).

`FakeKusto` is a small HTTP server (http.server, in a thread of the test process) that speaks the
documented REST wire format the REAL azure-kusto-data / azure-kusto-ingest clients use:
- engine: `POST /v1/rest/mgmt` (management commands, v1 response), `POST /v2/rest/query` (KQL,
  v2 frames), `POST /v1/rest/ingest/{db}/{table}` (streaming ingestion of a gzipped CSV body);
- queued ingestion, the data-management side and its Azure Storage: `.get ingestion resources`
  points the client at this same server as blob container and queue, so the client's real
  `Put Blob` (azure-storage-blob) and `Put Message` (azure-storage-queue) requests arrive here.
  The fake ingests a queued blob only after `ingest_delay_s`, like the real service's batching,
  so the acknowledged-vs-stored difference and `wait_for_count` are exercised for real.
The client is pointed at the fake with `auth: none` over http (the mode the Kusto emulator uses);
the Azure AD sign-in of `auth: application_key` is not exercised (its connection string is checked
without network). KQL itself is not parsed: the fake knows the module's queries, scans and record
commands by their exact text (or pattern) and computes their results from the stored rows in Python
(`kql_result`), so answers and their check run end to end; any other query is refused.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.modules import azure_data_explorer as adx
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import rows_per_query
from tests.modules.adx_wire_fake import DATABASE, FakeKustoHandler, FakeKustoState
from tests.modules.fake_http_service import serving
from tests.read_side import check_read_side


@pytest.fixture
def fake_kusto():
    state = FakeKustoState()
    with serving(FakeKustoHandler, state) as state.base_url:
        yield state


CONFIG = """\
platform: local
targets:
  adx-fake:
    module: azure_data_explorer
    platform: local
    cluster_uri: "{url}"
    database: iotbench
    auth: none
"""


@pytest.fixture
def adx_cli(fake_kusto, tmp_path, cli):
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=fake_kusto.base_url))

    def run(task: str, *args: str):
        return cli(task, "--config", "config.yaml", "--target", "adx-fake", "-r", "1", *args, timeout=300)

    return fake_kusto, run


def module(url: str, **options) -> adx.Module:
    spec = RunSpec(run_id="t", task="insert", target="adx-fake", module="azure_data_explorer", workers=1,
                   connection={"cluster_uri": url, "database": DATABASE, "auth": "none", **options}, batch=100, num_inserts=300)
    return adx.Module(spec)


def test_adx_wire_fake_streaming_ingestion_end_to_end(adx_cli):
    state, run = adx_cli
    result = run("insert", "-w", "2", "--num-inserts", "120", "--batch", "40", "--tables", "multiple",
                 "--extra-option", "ingestion=streaming")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["verification"]["ok"] and report["verification"]["counted"] == 240
    assert report["conditions"]["server_version"] == "Engine 1.0.9064.18720"
    assert set(report["conditions"]["software"]["drivers"]) == {"azure-kusto-data", "azure-kusto-ingest"}
    # Tables, the CSV mapping and the streaming policy, in the management commands the client sent.
    commands = [command for database, command in state.mgmt]
    assert all(database == DATABASE for database, _ in state.mgmt)
    assert ".create-merge table events2 (timestamp: datetime, device_id: string, sequence_number: long, temperature: real)" in commands
    assert ".alter table events3 policy streamingingestion enable" in commands
    mapping = next(c for c in commands if c.startswith(".create-or-alter table events0 ingestion csv mapping"))
    columns = json.loads(mapping.split("'")[3])
    assert [(c["column"], c["Properties"]["Ordinal"]) for c in columns] == [("timestamp", "0"), ("device_id", "1"), ("sequence_number", "2"), ("temperature", "3")]
    # Each ingest request: gzipped CSV, the table's mapping, rows in column order with UTC timestamps.
    assert state.streaming and all(r["params"] == {"streamFormat": "csv", "mappingName": adx.CSV_MAPPING} for r in state.streaming)
    assert all(r["content_encoding"] == "gzip" and r["database"] == DATABASE for r in state.streaming)
    timestamp, device, sequence, temperature = state.streaming[0]["rows"][0]
    assert re.fullmatch(r"2026-01-01T\d\d:\d\d:\d\d\.\d{3}Z", timestamp) and re.fullmatch(r"w\d{6}-d\d{6}", device)
    assert int(sequence) >= 0 and 10 <= float(temperature) <= 30
    assert not state.messages and not state.blobs  # streaming never touches the queue


def test_adx_wire_fake_queued_ingestion_through_the_cli(adx_cli):
    # The fake ingests queued blobs at once here, so the run's own count verifies them.
    state, run = adx_cli
    result = run("insert", "-w", "2", "--num-inserts", "100", "--batch", "50")
    assert result.code == 0, result.stderr
    assert result.results()["runs"][0]["report"]["verification"]["counted"] == 200
    assert len(state.messages) == 4 and len(state.blobs) == 4 and not state.streaming
    assert {m["TableName"] for m in state.messages} == {"events"}


def test_adx_wire_fake_queued_rows_appearing_late_are_waited_for_and_reported(adx_cli):
    """Acknowledged is not stored: the collector waits (bounded) and the CLI says when rows arrived."""
    state, run = adx_cli
    state.ingest_delay_s = 2.0
    result = run("insert", "-w", "1", "--num-inserts", "100", "--batch", "50",
                 "--extra-option", "ingestion_poll_s=0.2", "--extra-option", "ingestion_wait_s=30")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["ingestion"]["reached"] is True and report["ingestion"]["seconds_after_run"] >= 1.0
    assert report["verification"]["ok"] is True and report["verification"]["counted"] == 100
    assert "queued ingestion" in result.stdout and "all 100 events stored" in result.stdout


def test_adx_wire_fake_single_streaming_inserts_one_request_per_event(adx_cli):
    state, run = adx_cli
    result = run("insert", "-w", "1", "--num-inserts", "15", "--extra-option", "ingestion=streaming")
    assert result.code == 0, result.stderr
    assert len(state.streaming) == 15 and all(len(r["rows"]) == 1 for r in state.streaming)


def test_adx_wire_fake_queued_ingestion_uploads_blobs_and_queues_messages(fake_kusto):
    fake_kusto.ingest_delay_s = 1.5
    adx_module = module(fake_kusto.base_url, flush_immediately=True, batching_max_seconds=30, ingestion_poll_s=0.2)
    adx_module.connect()
    try:
        adx_module.schema.setup()
        from iotdb_bench.simulator.workload.events import EventGenerator

        for batch in EventGenerator(1, 0, 10).batches(0, 300, 100):
            adx_module.writer.insert_batch(adx_module.writer.prepare_batch(batch))
        ended = time.time()
        # Acknowledged, not yet stored: that is what queued ingestion means.
        assert adx_module.schema.count() == 0
        wait = adx_module.schema.wait_for_count(300, ended)
    finally:
        adx_module.close()
    assert wait.reached and wait.counted == 300 and 1.0 <= wait.seconds_after_run <= 10
    assert len(fake_kusto.blobs) == 3 and len(fake_kusto.messages) == 3
    message = fake_kusto.messages[0]
    assert message["DatabaseName"] == DATABASE and message["TableName"] == "events" and message["FlushImmediately"] is True
    assert message["AdditionalProperties"]["format"] == "csv"
    assert message["AdditionalProperties"]["ingestionMappingReference"] == adx.CSV_MAPPING
    assert message["AdditionalProperties"]["authorizationContext"] == "fake-authorization-context"
    assert message["BlobPath"].startswith(f"{fake_kusto.base_url}/tempstorage/{DATABASE}__events__")
    assert message["RawDataSize"] > 0
    batching = next(c for _, c in fake_kusto.mgmt if "policy ingestionbatching" in c)
    assert json.loads(batching.split("'")[1])["MaximumBatchingTimeSpan"] == "00:00:30"


def test_adx_wire_fake_wait_for_count_gives_up_at_the_limit(fake_kusto):
    fake_kusto.ingest_delay_s = 60
    adx_module = module(fake_kusto.base_url, ingestion_wait_s=0.6, ingestion_poll_s=0.2)
    adx_module.connect()
    try:
        adx_module.schema.setup()
        from iotdb_bench.simulator.workload.events import EventGenerator

        adx_module.writer.insert_batch(adx_module.writer.prepare_batch(EventGenerator(1, 0, 10).batch(0, 50)))
        started = time.time()
        wait = adx_module.schema.wait_for_count(50, started)
    finally:
        adx_module.close()
    assert not wait.reached and wait.counted == 0 and wait.seconds_after_run is None
    assert 0.6 <= wait.waited_s < 5 and time.time() - started < 5


def test_adx_wire_fake_queries_send_the_kql(adx_cli):
    state, run = adx_cli
    assert run("insert", "-w", "2", "--num-inserts", "50", "--batch", "50", "--devices-per-worker", "6",
               "--extra-option", "ingestion=streaming").code == 0
    before = len(state.queries)
    result = run("query")
    assert result.code == 0, result.stderr
    reported = result.results()["runs"][0]["report"]["queries"]
    assert {name: figures["rows"] for name, figures in reported.items()} == rows_per_query(12)
    sent = [kql for database, kql in state.queries[before:] if database == DATABASE and kql != "print ok = 1"]
    assert sent[-6:] == list(adx.QUERIES.values())  # after the collector's own count and the record
    assert adx.QUERIES["newest-per-device"] == "events | summarize arg_max(timestamp, temperature) by device_id"


def test_adx_wire_fake_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(adx_cli):
    state, run = adx_cli
    assert run("insert", "-w", "2", "--num-inserts", "3000", "--batch", "1000", "--extra-option", "ingestion=streaming").code == 0
    assert [row[:2] for row in state.tables[adx.RECORD_NAME]] == [["last-insert", 0]]

    def readings(device):
        return sorted((row for row in state.tables["events"] if row[1] == device), key=lambda row: row[0])

    def change(device, value):
        with state.lock:
            readings(device)[0][3] = str(value)

    def delete(device):
        with state.lock:
            state.tables["events"].remove(readings(device)[-1])

    check_read_side(run, change, delete, 3000)
    # Scans stream each device's readings through the v2 query endpoint, in time order.
    assert any(kql.startswith("events | where device_id == 'w000001-d000009' | order by timestamp asc") for _, kql in state.queries)


def test_adx_application_key_credentials_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("ADX_CLIENT_ID", "app-id")
    monkeypatch.setenv("ADX_CLIENT_SECRET", "app-secret")
    monkeypatch.setenv("ADX_TENANT_ID", "tenant")
    spec = RunSpec(run_id="t", task="insert", target="adx", module="azure_data_explorer", workers=1, connection={
        "cluster_uri": "https://mycluster.westeurope.kusto.windows.net", "database": DATABASE,
        "client_id": "${ADX_CLIENT_ID}", "client_secret": "${ADX_CLIENT_SECRET}", "tenant_id": "${ADX_TENANT_ID}"})
    builder = adx.Module(spec).connection_string()
    assert builder.application_client_id == "app-id" and builder.application_key == "app-secret" and builder.authority_id == "tenant"
    assert "app-secret" not in spec.model_dump_json()  # the spec (a ConfigMap on Kubernetes) holds only the reference


def test_adx_missing_credentials_and_unsupported_keys_are_usage_errors(adx_cli, tmp_path):
    state, run = adx_cli
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=state.base_url).replace("auth: none", "auth: application_key"))
    result = run("insert", "-w", "1")
    assert result.code == 2 and "auth application_key needs the options client_id, client_secret, tenant_id" in result.stderr
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=state.base_url))
    result = run("insert", "-w", "1", "--primary-key", "client")
    assert result.code == 2 and "does not support --primary-key client: Kusto tables have no primary key" in result.stderr
    assert not state.mgmt and not state.queries


def test_adx_unreachable_names_host_and_port(cli, tmp_path):
    port = free_port()
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=f"http://127.0.0.1:{port}"))
    result = cli("insert", "--config", "config.yaml", "--target", "adx-fake", "-r", "1", "-w", "1", "--num-inserts", "5", timeout=300)
    assert result.code != 0
    assert f"cannot connect to Azure Data Explorer at 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "columns"), [
    (["--schema", "light"], "timestamp: datetime, val1: int, val2: int"),
    (["--schema", "large"], "timestamp: datetime, text: string, " + ", ".join(f"i{i}: int" for i in range(1, 9))),
    (["--measurements", "4", "--sensors", "2", "--order", "random", "--out-of-order", "0.05"],
     "timestamp: datetime, device_id: string, sensor: int, sequence_number: long, temperature: real, m1: real, m2: real, m3: real"),
])
def test_adx_wire_fake_shapes_are_table_columns_and_csv_rows(adx_cli, args, columns):
    state, run = adx_cli
    result = run("insert", "-w", "2", "--num-inserts", "100", "--batch", "50", "--extra-option", "ingestion=streaming", *args)
    assert result.code == 0, result.stderr
    assert result.results()["runs"][0]["report"]["verification"]["counted"] == 200
    assert f".create-merge table events ({columns})" in [command for _, command in state.mgmt]
    rows = [row for request in state.streaming for row in request["rows"]]
    assert len(rows) == 200 and all(len(row) == columns.count(":") for row in rows)
    if "large" in args:
        assert all(1 <= len(row[1]) <= 200 for row in rows)


def test_adx_wire_fake_duration(adx_cli):
    state, run = adx_cli
    result = run("insert", "-w", "2", "--duration", "2", "--batch", "50", "--extra-option", "ingestion=streaming")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["verification"]["ok"] and report["figures"]["events"] == len(state.tables["events"])
