"""Azure Data Explorer (Kusto) through azure-kusto-data and azure-kusto-ingest.

Ingestion (`ingestion` option):
- `queued` (default, "batch" in the seed tool): each call uploads a gzipped CSV blob and posts an
  ingestion message to the cluster's queue. The call returns once the message is queued: the rows
  appear in the table minutes later (the table's ingestion batching policy decides when), so the
  figures of a queued run are *acknowledged* inserts/s. `wait_for_count` measures, separately, how
  long after the run the table really holds every event (bounded by `ingestion_wait_s`).
- `streaming`: each call posts the gzipped CSV to the cluster's streaming-ingest endpoint; the
  table gets the streaming ingestion policy. Rows are queryable when the call returns.
Single inserts (no --batch) send one event per call in either mode (expensive for queued).

Credentials (`auth`): `application_key` (default) signs in as an Azure AD application with
`client_id`, `client_secret` and `tenant_id`, given as `${ADX_...}` references so they come from the
environment (a Kubernetes Secret on the cluster platform); `application_token` uses a token
acquired elsewhere; `none` is for an unauthenticated http:// endpoint (the local Kusto emulator).

Kusto has no primary keys: `--primary-key db` (the default) and `none` mean the same, other modes
are rejected. Event timestamps are stored as `datetime`.

Reading back: device-downsample summarizes `by bin(timestamp, 1m)`; scans use the streaming query
API (`execute_streaming_query`: the v2 response parsed as it arrives, rows taken a page at a time).
The record of expected answers is a table of its own, `iotbench_expected` (tables, part, record):
string values are limited (1 MB by default), so the JSON is split into parts.
"""

from __future__ import annotations

import gzip
import io
import logging
import time
from collections.abc import Iterator
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer, with_times
from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Location
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query, timestamp_pages
from iotdb_bench.simulator.report import IngestionWait
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME, PrimaryKey

log = logging.getLogger("azure_data_explorer")


def _kql_datetime(ms: int) -> str:
    return f"datetime({np.datetime_as_string(np.datetime64(ms, 'ms'), timezone='UTC')})"


# Kusto types of each kind of column of the shapes (simulator/shapes.py).
COLUMN_TYPES = {"timestamp": "datetime", "device": "string", "sensor": "int", "sequence": "long", "float": "real",
                "int16": "int", "int32": "int", "text": "string"}
CSV_MAPPING = "events_csv_mapping"

# The five queries in KQL. newest-per-device uses arg_max, which needs no partition operator
# (the seed tool's `partition by` variant failed on large clusters: at most 64 partitions).
QUERIES = {
    "count-events": f"{SINGLE_TABLE_NAME} | count",
    "temperature-min-max": f"{SINGLE_TABLE_NAME} | summarize min(temperature), max(temperature)",
    "temperature-stats": f"{SINGLE_TABLE_NAME} | summarize min(temperature), avg(temperature), max(temperature)",
    "temperature-stats-per-device": (
        f"{SINGLE_TABLE_NAME} | summarize min(temperature), avg(temperature), max(temperature) by device_id"
    ),
    "newest-per-device": f"{SINGLE_TABLE_NAME} | summarize arg_max(timestamp, temperature) by device_id",
    "device-downsample": (
        f"{SINGLE_TABLE_NAME} | where device_id == '{DOWNSAMPLE_DEVICE}' and timestamp >= {_kql_datetime(DOWNSAMPLE_START_MS)} "
        f"and timestamp < {_kql_datetime(DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS)} "
        "| summarize min(temperature), avg(temperature), max(temperature) by bin(timestamp, 1m) | order by timestamp asc"
    ),
}
TIME_COLUMNS = {"newest-per-device": (1,), "device-downsample": (0,)}
SCAN = "{tables} | where device_id == '{device}' | order by timestamp asc | project ms = tolong((timestamp - datetime(1970-01-01)) / 1ms)"
DEVICES = "{tables} | distinct device_id"
RECORD_PART_CHARS = 500_000


class AdxOptions(ModuleOptions):
    cluster_uri: str = Field(pattern=r"^https?://", description="engine URI, e.g. https://mycluster.westeurope.kusto.windows.net")
    database: str = Field(min_length=1)
    auth: Literal["application_key", "application_token", "none"] = "application_key"
    client_id: str | None = None
    client_secret: str | None = None
    tenant_id: str | None = None
    application_token: str | None = None
    ingestion: Literal["queued", "streaming"] = "queued"
    flush_immediately: bool = Field(False, description="queued: ask the service to skip its aggregation (ingests sooner)")
    batching_max_seconds: int | None = Field(
        None, ge=10, le=1800, description="queued: the tables' ingestion batching time (service default 5 minutes)"
    )
    ingestion_wait_s: float = Field(600, ge=0, description="longest wait for queued rows to appear after a run")
    ingestion_poll_s: float = Field(5, gt=0)


class Module(OneClassModule):
    Options = AdxOptions
    options: AdxOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True,
        location=Location.managed, drivers=("azure-kusto-data", "azure-kusto-ingest"),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._client = None
        self._ingest = None
        self._properties: dict[str, Any] = {}

    def validate(self) -> None:
        self.validate_workload()
        if self.spec.primary_key not in self.capabilities.primary_keys and self.layout.has_key:
            raise ModuleError(
                f"module 'azure_data_explorer' does not support --primary-key {self.spec.primary_key.value}: Kusto tables have no "
                "primary key (use db or none, which mean the same)"
            )
        options = self.options
        if options.auth == "application_key":
            missing = [name for name in ("client_id", "client_secret", "tenant_id") if not getattr(options, name)]
            if missing:
                raise ModuleError(f"auth application_key needs the options {', '.join(missing)} (e.g. client_secret: \"${{ADX_CLIENT_SECRET}}\")")
        elif options.auth == "application_token" and not options.application_token:
            raise ModuleError("auth application_token needs the option application_token (e.g. \"${ADX_TOKEN}\")")
        elif options.auth == "none" and not options.cluster_uri.startswith("http://"):
            raise ModuleError("auth none is only for an unauthenticated http:// endpoint such as the Kusto emulator")

    # -- lifecycle -------------------------------------------------------------------------
    def connection_string(self):
        """A fresh connection string builder (the ingest clients rewrite the one they are given)."""
        from azure.kusto.data import KustoConnectionStringBuilder as Builder

        options = self.options
        if options.auth == "application_key":
            return Builder.with_aad_application_key_authentication(options.cluster_uri, options.client_id, options.client_secret, options.tenant_id)
        if options.auth == "application_token":
            return Builder.with_aad_application_token_authentication(options.cluster_uri, options.application_token)
        return Builder.with_no_authentication(options.cluster_uri)

    def connect(self) -> None:
        from azure.kusto.data import KustoClient
        from azure.kusto.data.data_format import DataFormat
        from azure.kusto.ingest import IngestionProperties, KustoStreamingIngestClient, QueuedIngestClient

        self._client = KustoClient(self.connection_string())
        try:
            self._client.execute_query(self.options.database, "print ok = 1")
        except Exception as error:
            raise ModuleError(f"cannot connect to Azure Data Explorer at {self._address()}: {_reason(error)}") from None
        if self.spec.task == "insert":
            ingest_class = KustoStreamingIngestClient if self.options.ingestion == "streaming" else QueuedIngestClient
            self._ingest = ingest_class(self.connection_string())
            self._properties = {
                table: IngestionProperties(
                    self.options.database, table, data_format=DataFormat.CSV, ingestion_mapping_reference=CSV_MAPPING,
                    flush_immediately=self.options.flush_immediately,
                )
                for table in self.spec.table_names
            }

    def _address(self) -> str:
        parts = urlsplit(self.options.cluster_uri)
        return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"

    def close(self) -> None:
        for client in (self._ingest, self._client):
            if client is not None:
                client.close()
        self._ingest = self._client = None

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        for statement in self.setup_commands():
            self._mgmt(statement)

    def setup_commands(self) -> list[str]:
        columns = ", ".join(f"{column.name}: {COLUMN_TYPES[column.kind]}" for column in self.layout.columns)
        mapping = ", ".join(f'{{"column": "{column.name}", "Properties": {{"Ordinal": "{i}"}}}}' for i, column in enumerate(self.layout.columns))
        commands = []
        for table in self.spec.table_names:
            if self.spec.clean:
                commands.append(f".drop table {table} ifexists")
            commands.append(f".create-merge table {table} ({columns})")
            commands.append(f".create-or-alter table {table} ingestion csv mapping '{CSV_MAPPING}' '[{mapping}]'")
            if self.options.ingestion == "streaming":
                commands.append(f".alter table {table} policy streamingingestion enable")
            elif self.options.batching_max_seconds:
                span = time.strftime("%H:%M:%S", time.gmtime(self.options.batching_max_seconds))
                commands.append(
                    f".alter table {table} policy ingestionbatching "
                    f"'{{\"MaximumBatchingTimeSpan\": \"{span}\", \"MaximumNumberOfItems\": 500, \"MaximumRawDataSizeMB\": 1024}}'"
                )
        return commands

    def server_version(self) -> str | None:
        row = self._mgmt(".show version").primary_results[0][0]
        return f"{row['ServiceType'] or 'Kusto'} {row['BuildVersion']}"

    def count(self) -> int:
        return sum(int(self._rows(f"{table} | count")[0][0]) for table in self.spec.table_names)

    def storage_bytes(self) -> int | None:
        return sum(int(self._mgmt(f".show table {table} details").primary_results[0][0]["TotalExtentSize"] or 0) for table in self.spec.table_names)

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait:
        """Queued rows appear minutes after the run: count until they are all there (bounded)."""
        return self.count_until(expected, run_ended_at, self.options.ingestion_wait_s, self.options.ingestion_poll_s)

    def batch_kind(self) -> str:
        return f"{self.options.ingestion} ingestion"

    def notes(self) -> list[str]:
        notes = ["Kusto indexes every column itself: --schema light's secondary index does not apply"] if self.layout.indexed else []
        if self.options.ingestion == "queued":
            notes.append("queued ingestion: inserts/s counts acknowledged events; the time until they are stored is reported separately")
        return notes

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> list[tuple[str, bytes, int]]:
        prepared = []
        for table, part in self.per_table(batch):
            csv = self._csv(part)
            prepared.append((table, gzip.compress(csv, compresslevel=1), len(csv)))
        return prepared

    def insert_batch(self, prepared: list[tuple[str, bytes, int]]) -> None:
        from azure.kusto.ingest import StreamDescriptor

        for table, compressed, size in prepared:
            descriptor = StreamDescriptor(io.BytesIO(compressed), is_compressed=True, size=size)
            self._ingest.ingest_from_stream(descriptor, self._properties[table])

    def prepare_single(self, batch: EventBatch) -> list[list[tuple[str, bytes, int]]]:
        return [self.prepare_batch(batch.select(slice(i, i + 1))) for i in range(len(batch))]

    def _csv(self, batch: EventBatch) -> bytes:
        """Header-less CSV rows in the table's column order; ids and texts are generated, so nothing needs quoting."""
        rows = self.layout.python_rows(batch, timestamp=_iso_times)
        return "".join(",".join(map(_csv_value, row)) + "\n" for row in rows).encode()

    def insert_single(self, item: list[tuple[str, bytes, int]]) -> None:
        self.insert_batch(item)

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        """The record's parts replace the ones of the same tables; records of other tables stay."""
        key = _kql_string(self.record_key())
        parts = [text[i : i + RECORD_PART_CHARS] for i in range(0, len(text), RECORD_PART_CHARS)] or [""]
        values = ", ".join(f"{key}, {i}, {_kql_string(part)}" for i, part in enumerate(parts))
        self._mgmt(f".create-merge table {RECORD_NAME} (tables: string, part: int, record: string)")
        self._mgmt(f".set-or-replace {RECORD_NAME} <| {RECORD_NAME} | where tables != {key} "
                   f"| union (datatable(tables: string, part: int, record: string) [{values}])")

    def stored_record(self) -> str | None:
        if not self._mgmt(f".show tables | where TableName == '{RECORD_NAME}'").primary_results[0].rows_count:
            return None
        rows = self._rows(f"{RECORD_NAME} | where tables == {_kql_string(self.record_key())} | order by part asc | project record")
        return "".join(row[0] for row in rows) if rows else None

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        return {name: self._query(name, kql) for name, kql in QUERIES.items()}

    def _query(self, name: str, kql: str) -> Query:
        convert = with_times(*TIME_COLUMNS.get(name, ()))
        return lambda: Answer(self._rows(kql), lambda rows: convert([row.to_list() for row in rows]))

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        return sorted(row[0] for row in self._rows(DEVICES.format(tables=self._union())))

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        kql = SCAN.format(tables=self._union(), device=device)
        response = self._client.execute_streaming_query(self.options.database, kql)
        yield from timestamp_pages((row[0] for row in next(response.iter_primary_results())), page_size)

    def _union(self) -> str:
        tables = self.spec.table_names
        return tables[0] if len(tables) == 1 else f"union {', '.join(tables)}"

    def _rows(self, kql: str) -> list:
        from azure.kusto.data import ClientRequestProperties

        properties = None
        if self.spec.task == "query" and self.spec.query_timeout:
            properties = ClientRequestProperties()
            properties.set_option(ClientRequestProperties.request_timeout_option_name, _timespan(self.spec.query_timeout))
        return list(self._client.execute_query(self.options.database, kql, properties).primary_results[0])

    def _mgmt(self, command: str):
        return self._client.execute_mgmt(self.options.database, command)


def _iso_times(timestamp_ms: np.ndarray) -> list[str]:
    return np.datetime_as_string(timestamp_ms.astype("datetime64[ms]"), timezone="UTC").tolist()


def _csv_value(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _kql_string(text: str) -> str:
    """A KQL verbatim string literal (quotes doubled)."""
    return "@'" + text.replace("'", "''") + "'"


def _timespan(seconds: float):
    import datetime as dt

    return dt.timedelta(seconds=seconds)


def _reason(error: Exception) -> str:
    return one_line(error.__cause__ or error, limit=300)
