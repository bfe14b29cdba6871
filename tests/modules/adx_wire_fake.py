"""A FAKE Kusto service (Azure Data Explorer cannot run here): the REST wire format of the real
azure-kusto clients, queued ingestion with a delay, and the module's KQL answered from the stored
rows (see tests/modules/test_adx_wire_fake.py, and the contract suite's azure_data_explorer target)."""

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

from iotdb_bench.simulator.modules import azure_data_explorer as adx
from tests.modules.fake_http_service import FakeServiceHandler

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
