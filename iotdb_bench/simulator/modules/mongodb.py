"""MongoDB (seed 002's "dedicated platforms") through the official driver, pymongo.

Collections (`collection_type`): a time series collection (the default; MongoDB 5.0+) with
`timeField: timestamp` and `metaField: device_id`, so MongoDB stores each device's readings in
buckets; or a plain collection. One collection per table (`events`, `events0`..`events3`).

Documents: `timestamp` (BSON date, ms), `device_id` (string), `sequence_number` (int64),
`temperature` (double); other workloads (simulator/shapes.py) add `sensor` and the measurements
`m1`.. as fields, or are seed 002's shapes (`value`; `val1`, `val2` with an index on `val1`; `text`,
`i1`..`i8`), whose time series collections have no metaField (no device); those documents are
encoded by pymongo one by one. They are encoded to BSON with NumPy before the timed call
(simulator/wire/bson_events.py) and handed to pymongo as RawBSONDocuments, which it sends as they
are. Without an `_id` the server generates one (`--primary-key db`); `--primary-key client` sends
the event's key as `_id` (plain collections: a time series collection has no unique index on `_id`).

Inserts: batches with `insert_many(ordered=False)` (the server may apply the documents in any order,
and one failed document does not stop the others), single events with `insert_one`, both
with the collection's write concern (`w`, `journal`). Queries are aggregation pipelines (QUERIES;
device-downsample groups on `$dateTrunc`, MongoDB 5.0+); the count check is `count_documents({})`.
Scans are `find` per device sorted by timestamp, read a driver batch (`--page-size`) at a time. The
record of expected answers is a document of the collection `iotbench_expected`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer, epoch_ms
from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, No
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import CLIENT_KEY_WIDTH, EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME, PrimaryKey
from iotdb_bench.simulator.wire import bson_events

log = logging.getLogger("mongodb")

TIME_FIELD, META_FIELD = "timestamp", "device_id"

# The five queries as aggregation pipelines over the `events` collection.
QUERIES: dict[str, list[dict]] = {
    "count-events": [{"$count": "events"}],
    "temperature-min-max": [{"$group": {"_id": None, "min": {"$min": "$temperature"}, "max": {"$max": "$temperature"}}}],
    "temperature-stats": [
        {"$group": {"_id": None, "min": {"$min": "$temperature"}, "avg": {"$avg": "$temperature"}, "max": {"$max": "$temperature"}}}
    ],
    "temperature-stats-per-device": [
        {"$group": {"_id": "$device_id", "min": {"$min": "$temperature"}, "avg": {"$avg": "$temperature"}, "max": {"$max": "$temperature"}}}
    ],
    # Newest first within each device, then the first document of each group: MongoDB's documented
    # "last point" pattern, which an index on (device_id, timestamp) turns into one seek per device.
    "newest-per-device": [
        {"$sort": {"device_id": 1, "timestamp": -1}},
        {"$group": {"_id": "$device_id", "timestamp": {"$first": "$timestamp"}, "temperature": {"$first": "$temperature"}}},
    ],
}

# The fields of each query's result documents, in the order of the common answer form (simulator/answers.py).
ANSWER_FIELDS = {
    "count-events": ("events",),
    "temperature-min-max": ("min", "max"),
    "temperature-stats": ("min", "avg", "max"),
    "temperature-stats-per-device": ("_id", "min", "avg", "max"),
    "newest-per-device": ("_id", "timestamp", "temperature"),
    "device-downsample": ("_id", "min", "avg", "max"),
}
TIME_FIELDS = {"newest-per-device": 1, "device-downsample": 0}


def pipelines() -> dict[str, list[dict]]:
    """The five pipelines and device-downsample, whose hour bounds are BSON dates (the driver's type:
    built here, so that bson is imported only when queries run)."""
    from bson.datetime_ms import DatetimeMS

    hour = {"$gte": DatetimeMS(DOWNSAMPLE_START_MS), "$lt": DatetimeMS(DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS)}
    return {**QUERIES, "device-downsample": [
        {"$match": {"device_id": DOWNSAMPLE_DEVICE, "timestamp": hour}},
        {"$group": {"_id": {"$dateTrunc": {"date": "$timestamp", "unit": "minute"}},
                    "min": {"$min": "$temperature"}, "avg": {"$avg": "$temperature"}, "max": {"$max": "$temperature"}}},
        {"$sort": {"_id": 1}},
    ]}


# The default shape's fields: the ones simulator/wire/bson_events.py encodes a batch at a time.
DEFAULT_COLUMNS = (TIME_FIELD, META_FIELD, "sequence_number", "temperature")

# Indices of the seed tool's query test (create_indices), as on the SQL databases.
INDEXES = ([("temperature", 1)], [("device_id", 1), ("temperature", 1)])


class MongodbOptions(ModuleOptions):
    uri: str = Field("mongodb://127.0.0.1:27017", pattern=r"^mongodb(\+srv)?://", description="connection string, without credentials")
    username: str | None = None
    password: str | None = Field(None, description='reference it as "${MONGODB_PASSWORD}"')
    auth_source: str = "admin"
    database: str = Field("iotbench", min_length=1)
    collection_type: Literal["timeseries", "plain"] = "timeseries"
    granularity: Literal["seconds", "minutes", "hours"] = Field("seconds", description="time series bucketing (each device reports about every second)")
    w: str = Field("1", pattern=r"^(majority|\d+)$", description="write concern: acknowledged by this many members, or majority")
    journal: bool = Field(False, description="acknowledge writes once they are in the on-disk journal")
    create_indices: bool = False
    timeout_s: float = Field(30, gt=0, description="server selection and socket timeout")


class Module(OneClassModule):
    Options = MongodbOptions
    options: MongodbOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.client}), measurements=True, sensors=True,
        transactions=No("single inserts here are separate writes (multi-document transactions need a replica set)"), drivers=("pymongo",),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._client = None
        self._db = None
        self._collections: dict[str, Any] = {}
        self._with_key = spec.primary_key is PrimaryKey.client

    def validate(self) -> None:
        self.validate_workload()
        self.check_query_indices(self.options.create_indices)
        if self.spec.primary_key not in self.capabilities.primary_keys and self.layout.has_key:
            raise ModuleError(
                f"module 'mongodb' does not support --primary-key {self.spec.primary_key.value}: every document has an _id; use db "
                "(generated by the server) or client (the event's key as _id)"
            )
        if self.spec.primary_key is PrimaryKey.client and self.options.collection_type == "timeseries":
            raise ModuleError("module 'mongodb': --primary-key client needs collection_type=plain (a time series collection has no unique _id)")

    def batch_kind(self) -> str:
        return "insert_many, unordered"

    def insert_mode(self) -> str:
        return f"{super().insert_mode()}, {'time series' if self._timeseries else 'plain'} collection"

    @property
    def _timeseries(self) -> bool:
        return self.options.collection_type == "timeseries"

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        if self.options.uri.startswith("mongodb+srv://"):
            return None  # the hosts come from DNS records
        first = urlsplit(self.options.uri).netloc.rsplit("@", 1)[-1].split(",")[0]
        return self.url_address(first, 27017)

    def connect(self) -> None:
        from pymongo import MongoClient
        from pymongo.errors import OperationFailure, PyMongoError
        from pymongo.write_concern import WriteConcern

        options = self.options
        timeout_ms = int(options.timeout_s * 1000)
        credentials = {"username": options.username, "password": options.password, "authSource": options.auth_source} if options.username else {}
        self._client = MongoClient(options.uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms, socketTimeoutMS=timeout_ms,
                                   appname="iotdb-bench", **credentials)
        try:
            version = self._client.server_info()["version"]
        except OperationFailure as error:
            self.close()
            if error.code == 18:
                raise ModuleError(f"MongoDB at {self._address()} refused the credentials of user '{options.username}'") from None
            raise ModuleError(f"MongoDB at {self._address()}: {one_line(error.details.get('errmsg') if error.details else error)}") from None
        except PyMongoError as error:
            self.close()
            raise ModuleError(f"cannot connect to MongoDB at {self._address()}: {_reason(error)}") from None
        log.info("connected to MongoDB %s at %s", version, self._address())
        if self._timeseries and int(version.split(".")[0]) < 5:
            self.close()
            raise ModuleError(f"MongoDB {version} at {self._address()} has no time series collections (5.0+): use collection_type=plain")
        concern = WriteConcern(w=int(options.w) if options.w.isdigit() else options.w, j=options.journal or None)
        self._db = self._client.get_database(options.database, write_concern=concern)
        self._collections = {name: self._db.get_collection(name) for name in self.spec.table_names}

    def _address(self) -> str:
        first = urlsplit(self.options.uri).netloc.rsplit("@", 1)[-1].split(",")[0]
        return first if ":" in first else f"{first}:27017"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()  # ends the client's sessions on the server (endSessions)
        self._client = self._db = None
        self._collections = {}

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        existing = set(self._db.list_collection_names())
        for name in self.spec.table_names:
            if self.spec.clean and name in existing:
                self._db.drop_collection(name)
                existing.discard(name)
            if name not in existing:
                if self._timeseries:
                    timeseries = {"timeField": TIME_FIELD, "granularity": self.options.granularity}
                    if self.layout.has("device"):  # seed 002's shapes have no device to bucket by
                        timeseries["metaField"] = META_FIELD
                    self._db.create_collection(name, timeseries=timeseries, check_exists=False)
                else:
                    self._db.create_collection(name, check_exists=False)
            indexes = list(INDEXES) if self.options.create_indices else []
            for keys in indexes + [[(field, 1)] for field in self.layout.indexed]:  # light: val1
                self._collections[name].create_index(keys, name=f"{name}_{'_'.join(field for field, _ in keys)}")

    def server_version(self) -> str | None:
        return f"MongoDB {self._client.server_info()['version']}"  # the buildInfo command

    def count(self) -> int:
        return sum(collection.count_documents({}) for collection in self._collections.values())

    def storage_bytes(self) -> int | None:
        total = 0
        for collection in self._collections.values():
            for stats in collection.aggregate([{"$collStats": {"storageStats": {}}}]):
                storage = stats.get("storageStats", {})
                total += int(storage.get("storageSize", 0)) + int(storage.get("totalIndexSize", 0))
        return total

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> list[tuple[str, list]]:
        return [(table, self._documents(part)) for table, part in self.per_table(batch)]

    def _documents(self, batch: EventBatch) -> list:
        from bson.raw_bson import RawBSONDocument

        keys = batch.client_key if self._with_key else None
        default_shape = self.layout.names == DEFAULT_COLUMNS
        encoded = bson_events.encode(batch, keys) if default_shape else None
        if encoded is None:
            encoded = self._encoded_one_by_one(batch, keys)
        return [RawBSONDocument(document) for document in encoded]

    def _encoded_one_by_one(self, batch: EventBatch, keys) -> list[bytes]:
        """Documents of any shape (simulator/shapes.py), encoded by pymongo one by one: dates, int64
        sequence numbers, the other values as they are."""
        from bson import encode
        from bson.datetime_ms import DatetimeMS
        from bson.int64 import Int64

        convert = {"timestamp": DatetimeMS, "sequence": Int64}
        names = self.layout.names
        converters = [convert.get(column.kind) for column in self.layout.columns]
        documents = [{name: (value if to is None else to(value)) for name, to, value in zip(names, converters, row)}
                     for row in self.layout.python_rows(batch)]
        if keys is not None:
            documents = [{"_id": key, **document} for key, document in zip(keys.astype(f"U{CLIENT_KEY_WIDTH}").tolist(), documents)]
        return [encode(document) for document in documents]

    def insert_batch(self, prepared: list[tuple[str, list]]) -> None:
        for table, documents in prepared:
            self._collections[table].insert_many(documents, ordered=False)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, Any]]:
        return list(zip(self.table_of_each(batch), self._documents(batch)))

    def insert_single(self, item: tuple[str, Any]) -> None:
        table, document = item
        self._collections[table].insert_one(document)

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        return {name: self._query(name, pipeline) for name, pipeline in pipelines().items()}

    def _query(self, name: str, pipeline: list[dict]) -> Query:
        def rows(documents: list[dict]) -> list[tuple]:
            found = [[document.get(field) for field in ANSWER_FIELDS[name]] for document in documents]
            if name in TIME_FIELDS:
                for row in found:
                    row[TIME_FIELDS[name]] = epoch_ms(row[TIME_FIELDS[name]])
            return [tuple(row) for row in found] or ([(0,)] if name == "count-events" else [])  # $count of nothing: no document

        def run() -> Answer:
            limit = {"maxTimeMS": int(self.spec.query_timeout * 1000)} if self.spec.task == "query" and self.spec.query_timeout else {}
            return Answer(list(self._db.get_collection(SINGLE_TABLE_NAME).aggregate(pipeline, allowDiskUse=True, **limit)), rows)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        devices: set[str] = set()
        for collection in self._collections.values():
            devices.update(group["_id"] for group in collection.aggregate([{"$group": {"_id": "$device_id"}}], allowDiskUse=True))
        return sorted(devices)

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        """The device's documents sorted by timestamp; each driver batch (find, then getMore) is a page."""
        for collection in self._collections.values():  # a device lives in one collection
            cursor = collection.find({"device_id": device}, {"_id": 0, "timestamp": 1}, sort=[("timestamp", 1)], batch_size=page_size)
            with cursor:
                page: list[int] = []
                for document in cursor:
                    page.append(epoch_ms(document["timestamp"]))
                    if len(page) == page_size:
                        yield np.array(page, dtype=np.int64)
                        page = []
                if page:
                    yield np.array(page, dtype=np.int64)

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        self._db.get_collection(RECORD_NAME).replace_one({"_id": self.record_key()}, {"record": text}, upsert=True)

    def stored_record(self) -> str | None:
        found = self._db.get_collection(RECORD_NAME).find_one({"_id": self.record_key()})
        return None if found is None else found["record"]


def _reason(error: BaseException) -> str:
    """pymongo's server selection errors list every server tried, with a topology description: the first reason."""
    return one_line(str(error).split(", Timeout:")[0], limit=300)
