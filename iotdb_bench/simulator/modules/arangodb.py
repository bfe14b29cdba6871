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
keys). Timestamps are stored as epoch milliseconds. Shapes (simulator/shapes.py): each column is a
document attribute; light's index on val1 is a persistent index.

Primary keys: `client` sends the event's content key as `_key`, `db` lets ArangoDB generate keys
(its "traditional" generator), `uuid` uses ArangoDB's uuid key generator. Every document has a
key, so `sql` and `none` do not apply. Timestamps are stored as epoch milliseconds.

Reading back: the six queries in AQL, and scans through streaming AQL cursors (`stream: true`,
results produced as the cursor is read, a batch of `--page-size` documents per fetch). The record of
expected answers is a document in a collection of its own, `iotbench_expected`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer
from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME, PrimaryKey

# The six queries in AQL, over the single-table collection like the SQL ones.
QUERIES = {
    "count-events": f"FOR e IN {SINGLE_TABLE_NAME} COLLECT WITH COUNT INTO total RETURN total",
    "temperature-min-max": (
        f"FOR e IN {SINGLE_TABLE_NAME} COLLECT AGGREGATE low = MIN(e.temperature), high = MAX(e.temperature) "
        "RETURN {min: low, max: high}"
    ),
    "temperature-stats": (
        f"FOR e IN {SINGLE_TABLE_NAME} COLLECT AGGREGATE low = MIN(e.temperature), mean = AVG(e.temperature), "
        "high = MAX(e.temperature) RETURN {min: low, avg: mean, max: high}"
    ),
    "temperature-stats-per-device": (
        f"FOR e IN {SINGLE_TABLE_NAME} COLLECT device = e.device_id AGGREGATE low = MIN(e.temperature), "
        "mean = AVG(e.temperature), high = MAX(e.temperature) RETURN {device_id: device, min: low, avg: mean, max: high}"
    ),
    # Arrays compare element by element, so the maximum [timestamp, temperature] is the newest reading.
    "newest-per-device": (
        f"FOR e IN {SINGLE_TABLE_NAME} COLLECT device = e.device_id AGGREGATE newest = MAX([e.timestamp, e.temperature]) "
        "RETURN {device_id: device, timestamp: newest[0], temperature: newest[1]}"
    ),
    "device-downsample": (
        f"FOR e IN {SINGLE_TABLE_NAME} FILTER e.device_id == '{DOWNSAMPLE_DEVICE}' AND e.timestamp >= {DOWNSAMPLE_START_MS} "
        f"AND e.timestamp < {DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS} "
        f"COLLECT minute = e.timestamp - e.timestamp % {MINUTE_MS} AGGREGATE low = MIN(e.temperature), "
        "mean = AVG(e.temperature), high = MAX(e.temperature) SORT minute RETURN {minute: minute, min: low, avg: mean, max: high}"
    ),
}
# The fields of each query's result documents, in the order of the common answer form.
ANSWER_FIELDS = {
    "temperature-min-max": ("min", "max"),
    "temperature-stats": ("min", "avg", "max"),
    "temperature-stats-per-device": ("device_id", "min", "avg", "max"),
    "newest-per-device": ("device_id", "timestamp", "temperature"),
    "device-downsample": ("minute", "min", "avg", "max"),
}
SCAN = "FOR e IN @@collection FILTER e.device_id == @device SORT e.timestamp RETURN [e.timestamp, e.temperature]"
DEVICES = "FOR e IN @@collection COLLECT device = e.device_id RETURN device"

# `none`: seed 002's slim shape has no key of its own; ArangoDB still gives each document a generated _key.
KEY_GENERATORS = {PrimaryKey.db: "traditional", PrimaryKey.client: "traditional", PrimaryKey.uuid: "uuid", PrimaryKey.none: "traditional"}
CURSOR_BATCH_SIZE = 10_000


class ArangoOptions(ModuleOptions):
    url: str = Field("http://127.0.0.1:8529", description="coordinator URL(s), comma-separated")
    username: str = "root"
    password: str | None = None
    database: str = "_system"
    shard_count: int | None = Field(None, ge=1)
    replication_factor: int = Field(1, ge=1)
    sync: bool = Field(False, description="waitForSync on the collections and every write")
    batch_api: Literal["document", "import"] = "document"
    create_indices: bool = False
    request_timeout: float = Field(120, gt=0)
    key_order: Literal["device", "time"] = Field("device", description="--primary-key client: _key led by the device id, or by the timestamp")


class Module(OneClassModule):
    Options = ArangoOptions
    options: ArangoOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.client, PrimaryKey.uuid}),
        measurements=True, sensors=True, drivers=("python-arango",),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._db = None
        self._with_key = spec.primary_key is PrimaryKey.client
        # waitForSync per request only when asked: false would not override a collection's true anyway.
        self._sync = True if self.options.sync else None

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
        from arango import ArangoClient
        from arango.http import DefaultHTTPClient

        client = ArangoClient(
            hosts=self.options.url,
            http_client=DefaultHTTPClient(request_timeout=self.options.request_timeout, retry_attempts=1, backoff_factor=0.2),
        )
        try:
            self._db = client.db(self.options.database, username=self.options.username, password=self.options.password or "", verify=True)
        except Exception as error:
            reason = one_line(getattr(error, "error_message", None) or error)
            raise ModuleError(f"cannot connect to ArangoDB at {self._address()}: {reason}") from None

    def _address(self) -> str:
        first = urlsplit(self.options.url.split(",")[0].strip())
        default_port = 443 if first.scheme == "https" else 8529
        return f"{first.hostname}:{first.port or default_port}"

    def close(self) -> None:
        self._db = None

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        for name in self.spec.table_names:
            if self.spec.clean:
                self._db.delete_collection(name, ignore_missing=True)
            if not self._db.has_collection(name):
                self._db.create_collection(
                    name,
                    sync=self.options.sync,
                    shard_count=self.options.shard_count,
                    replication_factor=self.options.replication_factor,
                    key_generator=KEY_GENERATORS[self.spec.primary_key],
                    user_keys=self._with_key,
                )
            indices = [["temperature"], ["device_id", "temperature"]] if self.options.create_indices else []
            for fields in indices + [[column] for column in self.layout.indexed]:
                self._db.collection(name).add_index({"type": "persistent", "fields": fields, "name": f"{name}_{'_'.join(fields)}"})

    def server_version(self) -> str | None:
        details = self._db.version(details=True)
        return f"ArangoDB {details['version']}" + (f" ({details['license']})" if details.get("license") else "")

    def count(self) -> int:
        return sum(self._db.collection(name).count() for name in self.spec.table_names)

    def storage_bytes(self) -> int | None:
        total = 0
        for name in self.spec.table_names:
            figures = self._db.collection(name).statistics()
            total += int(figures.get("documents_size") or 0) + int((figures.get("indexes") or {}).get("size") or 0)
        return total

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> list[tuple[str, list[dict]]]:
        return [(table, self._documents(part)) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: list[tuple[str, list[dict]]]) -> None:
        for name, documents in prepared:
            collection = self._db.collection(name)
            if self.options.batch_api == "import":
                outcome = collection.import_bulk(documents, halt_on_error=True, details=True, sync=self._sync)
                if outcome.get("created") != len(documents):
                    raise RuntimeError(f"bulk import into {name} created {outcome.get('created')} of {len(documents)} documents: {outcome.get('details')}")
            else:
                collection.insert_many(documents, sync=self._sync, raise_on_document_error=True)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, dict]]:
        return list(zip(self.table_of_each(batch), self._documents(batch)))

    def insert_single(self, item: tuple[str, dict]) -> None:
        name, document = item
        self._db.collection(name).insert(document, sync=self._sync, silent=True)

    def _documents(self, batch: EventBatch) -> list[dict]:
        columns = {column.name: column.python(batch) for column in self.layout.columns}
        if self._with_key:
            keys = batch.time_first_key if self.options.key_order == "time" else batch.client_key
            columns["_key"] = keys.astype(f"U{keys.dtype.itemsize}").tolist()
        names = list(columns)
        return [dict(zip(names, values)) for values in zip(*columns.values())]

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        if not self._db.has_collection(RECORD_NAME):
            self._db.create_collection(RECORD_NAME, user_keys=True, replication_factor=self.options.replication_factor)
        self._db.collection(RECORD_NAME).insert({"_key": self.record_key(), "record": text}, overwrite=True, sync=True)

    def stored_record(self) -> str | None:
        if not self._db.has_collection(RECORD_NAME):
            return None
        document = self._db.collection(RECORD_NAME).get(self.record_key())
        return document["record"] if document else None

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        return {name: self._query(name, aql) for name, aql in QUERIES.items()}

    def _query(self, name: str, aql: str) -> Query:
        fields = ANSWER_FIELDS.get(name)

        def rows(documents: list) -> list[tuple]:
            return [tuple(document[field] for field in fields) if fields else (document,) for document in documents]

        def run() -> Answer:
            options: dict[str, Any] = {"batch_size": CURSOR_BATCH_SIZE}
            if self.spec.query_timeout:
                options["max_runtime"] = self.spec.query_timeout
            cursor = self._db.aql.execute(aql, **options)
            try:
                return Answer(list(cursor), rows)
            except BaseException:
                cursor.close(ignore_missing=True)  # a drained cursor is gone already; a broken one is freed
                raise

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        devices: set[str] = set()
        for name in self.spec.table_names:
            devices.update(self._db.aql.execute(DEVICES, bind_vars={"@collection": name}, batch_size=CURSOR_BATCH_SIZE))
        return sorted(devices)

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device lives in one collection; the others return nothing.
        for name in self.spec.table_names:
            cursor = self._db.aql.execute(SCAN, bind_vars={"@collection": name, "device": device}, batch_size=page_size, stream=True)
            try:
                while True:
                    batch = cursor.batch()
                    if batch:
                        yield np.fromiter((reading[0] for reading in batch), dtype=np.int64, count=len(batch))
                        batch.clear()
                    if not cursor.has_more():
                        break
                    cursor.fetch()
            finally:
                cursor.close(ignore_missing=True)
