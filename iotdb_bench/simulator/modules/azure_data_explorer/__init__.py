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

import datetime as dt
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Location
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.modules.azure_data_explorer.options import CSV_MAPPING, AdxOptions
from iotdb_bench.simulator.modules.azure_data_explorer.queries import DEVICES, QUERIES, SCAN
from iotdb_bench.simulator.modules.azure_data_explorer.reader import AdxReader
from iotdb_bench.simulator.modules.azure_data_explorer.records import AdxRecords
from iotdb_bench.simulator.modules.azure_data_explorer.schema import AdxSchema
from iotdb_bench.simulator.modules.azure_data_explorer.writer import AdxWriter
from iotdb_bench.simulator.modules.base import RECORD_NAME, DatabaseModule, ModuleError, played_by
from iotdb_bench.simulator.spec import PrimaryKey, RunSpec

if TYPE_CHECKING:
    from azure.kusto.data import KustoConnectionStringBuilder
    from azure.kusto.data.response import KustoResponseDataSet

log = logging.getLogger("azure_data_explorer")

__all__ = ["CSV_MAPPING", "DEVICES", "QUERIES", "RECORD_NAME", "SCAN", "AdxOptions", "Module"]


class Module(DatabaseModule):
    Options = AdxOptions
    options: AdxOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True,
        location=Location.managed, drivers=("azure-kusto-data", "azure-kusto-ingest"),
    )
    schema, writer, reader, records = played_by(AdxSchema, AdxWriter, AdxReader, AdxRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        # The connection, shared by the roles: the query client, and for an insert the ingest client
        # with each table's ingestion properties.
        self.client: Any = None
        self.ingest: Any = None
        self.ingestion_properties: dict[str, Any] = {}

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

    def batch_kind(self) -> str:
        return f"{self.options.ingestion} ingestion"

    def notes(self) -> list[str]:
        notes = ["Kusto indexes every column itself: --schema light's secondary index does not apply"] if self.layout.indexed else []
        if self.options.ingestion == "queued":
            notes.append("queued ingestion: inserts/s counts acknowledged events; the time until they are stored is reported separately")
        return notes

    # -- lifecycle -------------------------------------------------------------------------
    def connection_string(self) -> KustoConnectionStringBuilder:
        """A fresh connection string builder (the ingest clients rewrite the one they are given)."""
        from azure.kusto.data import KustoConnectionStringBuilder as Builder

        options = self.options  # validate() made sure the chosen auth's options are set
        if options.auth == "application_key":
            return Builder.with_aad_application_key_authentication(options.cluster_uri, options.client_id or "", options.client_secret or "",
                                                                   options.tenant_id or "")
        if options.auth == "application_token":
            return Builder.with_aad_application_token_authentication(options.cluster_uri, options.application_token or "")
        return Builder.with_no_authentication(options.cluster_uri)

    def connect(self) -> None:
        from azure.kusto.data import KustoClient
        from azure.kusto.data.data_format import DataFormat
        from azure.kusto.ingest import IngestionProperties, KustoStreamingIngestClient, QueuedIngestClient

        self.client = KustoClient(self.connection_string())
        try:
            self.client.execute_query(self.options.database, "print ok = 1")
        except Exception as error:
            raise ModuleError(f"cannot connect to Azure Data Explorer at {self._address()}: {_reason(error)}") from None
        if self.spec.task == "insert":
            ingest_class = KustoStreamingIngestClient if self.options.ingestion == "streaming" else QueuedIngestClient
            self.ingest = ingest_class(self.connection_string())
            self.ingestion_properties = {
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
        for client in (self.ingest, self.client):
            if client is not None:
                client.close()
        self.ingest = self.client = None

    # -- the connection's two calls, shared by the roles ---------------------------------------
    def rows(self, kql: str) -> list[Any]:
        """The primary result's rows of a KQL query (bounded by --query-timeout in a query run)."""
        from azure.kusto.data import ClientRequestProperties

        properties = None
        if self.spec.task == "query" and self.spec.query_timeout:
            properties = ClientRequestProperties()
            properties.set_option(ClientRequestProperties.request_timeout_option_name, _timespan(self.spec.query_timeout))
        return list(self.client.execute_query(self.options.database, kql, properties).primary_results[0])

    def mgmt(self, command: str) -> KustoResponseDataSet:
        """A management command's response."""
        response: KustoResponseDataSet = self.client.execute_mgmt(self.options.database, command)
        return response


def _timespan(seconds: float) -> dt.timedelta:
    return dt.timedelta(seconds=seconds)


def _reason(error: Exception) -> str:
    return one_line(error.__cause__ or error, limit=300)
