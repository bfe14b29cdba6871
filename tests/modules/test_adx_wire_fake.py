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

import base64
import csv
import datetime as dt
import gzip
import io
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import pytest
from fake_http_service import FakeServiceHandler, serving

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.modules import azure_data_explorer as adx
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import rows_per_query
from tests.read_side import check_read_side

DATABASE = "iotbench"


@dataclass
class FakeKustoState:
    tables: dict[str, list[list[str]]] = field(default_factory=dict)  # name -> CSV rows
    mgmt: list[tuple[str, str]] = field(default_factory=list)  # (database, command)
    queries: list[tuple[str, str]] = field(default_factory=list)  # (database, KQL)
    streaming: list[dict] = field(default_factory=list)  # one per streaming ingest request
    blobs: dict[str, bytes] = field(default_factory=dict)
    messages: list[dict] = field(default_factory=list)  # decoded queue messages
    pending: list[tuple[float, str, list[list[str]]]] = field(default_factory=list)  # (due, table, rows)
    ingest_delay_s: float = 0.0
    base_url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ingest_due(self) -> None:
        now = time.time()
        for _due, table, rows in [p for p in self.pending if p[0] <= now]:
            self.tables.setdefault(table, []).extend(rows)
        self.pending = [p for p in self.pending if p[0] > now]


def _v1(columns: list[str], rows: list[list]) -> dict:
    return {"Tables": [{"TableName": "Table_0", "Columns": [{"ColumnName": c, "DataType": "String", "ColumnType": "string"} for c in columns],
                        "Rows": rows}]}


def _v2(columns: list[tuple[str, str]], rows: list[list]) -> list[dict]:
    return [
        {"FrameType": "DataSetHeader", "IsProgressive": False, "Version": "v2.0"},
        {"FrameType": "DataTable", "TableId": 1, "TableKind": "PrimaryResult", "TableName": "PrimaryResult",
         "Columns": [{"ColumnName": name, "ColumnType": kind} for name, kind in columns], "Rows": rows},
        {"FrameType": "DataSetCompletion", "HasErrors": False, "Cancelled": False},
    ]


class FakeKustoHandler(FakeServiceHandler):
    state: FakeKustoState

    def _handle(self, method: str) -> None:
        url, params, raw = self.read_request()
        with self.state.lock:
            self.state.ingest_due()
            if url.path == "/v1/rest/mgmt":
                body = json.loads(raw)
                return self.send_json(200, self._mgmt(body["db"], body["csl"]))
            if url.path == "/v2/rest/query":
                body = json.loads(raw)
                return self.send_json(200, self._query(body["db"], body["csl"]))
            if url.path.startswith("/v1/rest/ingest/"):
                return self._stream(url.path, params, raw)
            if method == "PUT" and url.path.startswith("/tempstorage/"):
                self.state.blobs[unquote(url.path[len("/tempstorage/"):])] = raw
                return self.send(201, b"", {"ETag": '"0x1"', "Last-Modified": "Sun, 22 Nov 2026 10:00:00 GMT",
                                               "x-ms-request-server-encrypted": "true"})
            if method == "POST" and url.path == "/readyforaggregation-secured/messages":
                return self._enqueue(raw)
        self.send_json(404, {"error": {"code": "NotFound", "message": f"fake has no route for {method} {url.path}"}})

    # -- engine --------------------------------------------------------------------------------
    def _mgmt(self, database: str, command: str):
        state = self.state
        state.mgmt.append((database, command))
        if command == ".get ingestion resources":
            root = state.base_url
            resources = [("SecuredReadyForAggregationQueue", f"{root}/readyforaggregation-secured?sv=fake"),
                         ("FailedIngestionsQueue", f"{root}/failedingestions?sv=fake"),
                         ("SuccessfulIngestionsQueue", f"{root}/successfulingestions?sv=fake"),
                         ("TempStorage", f"{root}/tempstorage?sv=fake"),
                         ("IngestionsStatusTable", f"{root}/ingestionsstatus?sv=fake")]
            return _v1(["ResourceTypeName", "StorageRoot"], [list(r) for r in resources])
        if command == ".show version":  # the engine's documented columns
            return _v1(["BuildVersion", "BuildTime", "ServiceType", "ProductVersion"],
                       [["1.0.9064.18720", "2026-10-01T00:00:00Z", "Engine", "KustoMain_2026.10.01"]])
        if command == ".get kusto identity token":
            return _v1(["AuthorizationContext"], [["fake-authorization-context"]])
        if match := re.match(r"\.drop table (\w+) ifexists$", command):
            state.tables.pop(match.group(1), None)
        elif match := re.match(r"\.create-merge table (\w+) \(", command):
            state.tables.setdefault(match.group(1), [])
        elif match := re.match(r"\.show table (\w+) details$", command):
            return _v1(["TableName", "TotalExtentSize"], [[match.group(1), 40 * len(state.tables.get(match.group(1), []))]])
        elif match := re.match(r"\.show tables \| where TableName == '(\w+)'$", command):
            return _v1(["TableName"], [[match.group(1)]] if match.group(1) in state.tables else [])
        elif match := re.match(rf"\.set-or-replace {adx.RECORD_NAME} <\| {adx.RECORD_NAME} \| where tables != @'((?:[^']|'')*)' "
                               r"\| union \(datatable\(tables: string, part: int, record: string\) \[(.*)\]\)$", command, re.S):
            key, values = _verbatim(match.group(1)), re.findall(r"@'((?:[^']|'')*)', (\d+), @'((?:[^']|'')*)'", match.group(2), re.S)
            kept = [row for row in state.tables[adx.RECORD_NAME] if row[0] != key]
            state.tables[adx.RECORD_NAME] = kept + [[_verbatim(k), int(part), _verbatim(text)] for k, part, text in values]
        return _v1(["Result"], [])

    def _query(self, database: str, kql: str):
        state = self.state
        state.queries.append((database, kql))
        if kql == "print ok = 1":
            return _v2([("ok", "int")], [[1]])
        table = kql.split("|")[0].strip()
        if table not in state.tables:
            return _v2([("error", "string")], [{"OneApiErrors": [{"error": {"code": "SEM0100", "message": f"'{table}' not found"}}]}])
        result = kql_result(state, kql)
        if result is None:
            return _v2([("error", "string")], [{"OneApiErrors": [{"error": {"code": "SEM0001", "message": "the fake does not know this query"}}]}])
        return _v2(*result)

    def _stream(self, path: str, params: dict, raw: bytes):
        _, _, _, _, database, table = path.split("/")
        data = gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw
        rows = list(csv.reader(io.StringIO(data.decode())))
        self.state.streaming.append({"database": database, "table": table, "params": params, "rows": rows,
                                     "content_encoding": self.headers.get("Content-Encoding")})
        self.state.tables.setdefault(table, []).extend(rows)
        self.send_json(200, _v1(["ConsumedRecordsCount"], [[len(rows)]]))

    # -- queued ingestion: Azure Storage -------------------------------------------------------
    def _enqueue(self, raw: bytes):
        text = re.search(rb"<MessageText>(.*)</MessageText>", raw, re.S).group(1)
        message = json.loads(base64.b64decode(text))
        self.state.messages.append(message)
        blob_name = unquote(urlsplit(message["BlobPath"]).path.split("/tempstorage/", 1)[1])
        rows = list(csv.reader(io.StringIO(gzip.decompress(self.state.blobs[blob_name]).decode())))
        self.state.pending.append((time.time() + self.state.ingest_delay_s, message["TableName"], rows))
        now = "Sun, 22 Nov 2026 10:00:00 GMT"
        body = (f"<?xml version=\"1.0\" encoding=\"utf-8\"?><QueueMessagesList><QueueMessage><MessageId>{uuid.uuid4()}</MessageId>"
                f"<InsertionTime>{now}</InsertionTime><ExpirationTime>{now}</ExpirationTime><PopReceipt>fake</PopReceipt>"
                f"<TimeNextVisible>{now}</TimeNextVisible></QueueMessage></QueueMessagesList>").encode()
        self.send(201, body, {"Content-Type": "application/xml"})



def _verbatim(text: str) -> str:
    return text.replace("''", "'")


def _ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).timestamp() * 1000 + 0.5)


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def kql_result(state: FakeKustoState, kql: str) -> tuple[list, list] | None:
    """(columns, rows) of one of the module's KQL queries, computed from the stored CSV rows."""
    if match := re.fullmatch(rf"{adx.RECORD_NAME} \| where tables == @'((?:[^']|'')*)' \| order by part asc \| project record", kql):
        parts = sorted((row[1], row[2]) for row in state.tables[adx.RECORD_NAME] if row[0] == _verbatim(match.group(1)))
        return [("record", "string")], [[text] for _, text in parts]
    table = kql.split("|")[0].strip()
    if kql == f"{table} | count":  # the collector's count of each table (rows of any shape)
        return [("Count", "long")], [[len(state.tables[table])]]
    readings = [(_ms(ts), device, float(value)) for ts, device, _sequence, value in state.tables[table]]
    if match := re.fullmatch(re.escape(adx.SCAN.format(tables=table, device="DEVICE")).replace("DEVICE", "(.+)"), kql):
        return [("ms", "long")], [[ts] for ts, device, _ in sorted(readings) if device == match.group(1)]
    if kql == adx.DEVICES.format(tables=table):
        return [("device_id", "string")], [[device] for device in sorted({device for _, device, _ in readings})]
    name = next((name for name, query in adx.QUERIES.items() if query == kql), None)
    values = [value for _, _, value in readings]
    stats = [("min_temperature", "real"), ("avg_temperature", "real"), ("max_temperature", "real")]
    if name == "count-events":
        return [("Count", "long")], [[len(readings)]]
    if name == "temperature-min-max":
        return [stats[0], stats[2]], [[min(values, default=None), max(values, default=None)]]
    if name == "temperature-stats":
        return stats, [[min(values, default=None), sum(values) / len(values) if values else None, max(values, default=None)]]
    if name in ("temperature-stats-per-device", "newest-per-device", "device-downsample"):
        groups: dict = {}
        for ts, device, value in readings:
            if name == "device-downsample":
                if device != "w000000-d000000" or not 1_767_225_600_000 <= ts < 1_767_229_200_000:
                    continue
                groups.setdefault(ts - ts % 60_000, []).append((ts, value))
            else:
                groups.setdefault(device, []).append((ts, value))
        if name == "newest-per-device":
            return ([("device_id", "string"), ("timestamp", "datetime"), ("temperature", "real")],
                    [[device, _iso(max(group)[0]), max(group)[1]] for device, group in sorted(groups.items())])
        key = ("timestamp", "datetime") if name == "device-downsample" else ("device_id", "string")
        return [key, *stats], [[_iso(k) if name == "device-downsample" else k, min(v for _, v in g), sum(v for _, v in g) / len(g),
                                max(v for _, v in g)] for k, g in sorted(groups.items())]
    return None


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
        adx_module.setup()
        from iotdb_bench.simulator.events import EventGenerator

        for batch in EventGenerator(1, 0, 10).batches(0, 300, 100):
            adx_module.insert_batch(adx_module.prepare_batch(batch))
        ended = time.time()
        # Acknowledged, not yet stored: that is what queued ingestion means.
        assert adx_module.count() == 0
        wait = adx_module.wait_for_count(300, ended)
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
        adx_module.setup()
        from iotdb_bench.simulator.events import EventGenerator

        adx_module.insert_batch(adx_module.prepare_batch(EventGenerator(1, 0, 10).batch(0, 50)))
        started = time.time()
        wait = adx_module.wait_for_count(50, started)
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
