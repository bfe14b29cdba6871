"""ArangoDB through python-arango: one document collection per events table.

Collections are created with `shard_count` (numberOfShards), `replication_factor` and `sync`
(waitForSync, which also makes every write request wait for the disk). Single inserts are one
`POST /_api/document/{collection}` each; batches go through the document batch API
(`POST /_api/document` with an array, the default, `batch_api=document`) or the bulk import API
(`POST /_api/import`, `batch_api=import`, all-or-nothing per request).

Primary keys: `client` sends the event's content key as `_key` (`key_order=time` puts the timestamp
first: keys sorted by time instead of clustered by device, seed 004's two orders), `db` lets ArangoDB
generate keys (its "traditional" generator), `uuid` uses ArangoDB's uuid key generator. Every
document has a key, so `sql` and `none` do not apply (seed 002's keyless slim shape gets generated
keys). Timestamps are stored as epoch milliseconds. Shapes (simulator/workload/shapes.py): each column is a
document attribute; light's index on val1 is a persistent index.

Reading back: the six queries in AQL, and scans through streaming AQL cursors (`stream: true`,
results produced as the cursor is read, a batch of `--page-size` documents per fetch). The record of
expected answers is a document in a collection of its own, `iotbench_expected`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.modules.arangodb.options import ArangoOptions
from iotdb_bench.simulator.modules.arangodb.queries import DEVICES, QUERIES, SCAN
from iotdb_bench.simulator.modules.arangodb.reader import ArangodbReader
from iotdb_bench.simulator.modules.arangodb.records import ArangodbRecords
from iotdb_bench.simulator.modules.arangodb.schema import ArangodbSchema
from iotdb_bench.simulator.modules.arangodb.writer import ArangodbWriter
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, played_by
from iotdb_bench.simulator.spec import PrimaryKey, RunSpec

__all__ = ["DEVICES", "QUERIES", "SCAN", "ArangoOptions", "Module"]


class Module(DatabaseModule):
    Options = ArangoOptions
    options: ArangoOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.client, PrimaryKey.uuid}),
        measurements=True, sensors=True, drivers=("python-arango",),
    )
    schema, writer, reader, records = played_by(ArangodbSchema, ArangodbWriter, ArangodbReader, ArangodbRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self.db: Any = None  # python-arango's database, shared by the roles

    def validate(self) -> None:
        self.validate_workload()
        self.check_query_indices(self.options.create_indices)
        if self.options.key_order != "device" and self.spec.primary_key is not PrimaryKey.client:
            raise ModuleError("module 'arangodb': key_order orders the client's keys: it needs --primary-key client")
        if self.spec.primary_key not in self.capabilities.primary_keys and self.layout.has_key:
            raise ModuleError(
                f"module 'arangodb' does not support --primary-key {self.spec.primary_key.value}: every ArangoDB document has "
                "a _key; use db (ArangoDB generates it), client (the event's key as _key) or uuid (ArangoDB's uuid generator)"
            )

    def batch_kind(self) -> str:
        return "import API" if self.options.batch_api == "import" else "document batch API"

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        return self.url_address(self.options.url.split(",")[0].strip(), 8529)

    def connect(self) -> None:
        from arango.client import ArangoClient
        from arango.http import DefaultHTTPClient

        client = ArangoClient(
            hosts=self.options.url,
            http_client=DefaultHTTPClient(request_timeout=self.options.request_timeout, retry_attempts=1, backoff_factor=0.2),
        )
        try:
            self.db = client.db(self.options.database, username=self.options.username, password=self.options.password or "", verify=True)
        except Exception as error:
            reason = one_line(getattr(error, "error_message", None) or error)
            raise ModuleError(f"cannot connect to ArangoDB at {self._address()}: {reason}") from None

    def _address(self) -> str:
        first = urlsplit(self.options.url.split(",")[0].strip())
        default_port = 443 if first.scheme == "https" else 8529
        return f"{first.hostname}:{first.port or default_port}"

    def close(self) -> None:
        self.db = None
