"""The mongodb module's write path: documents encoded to BSON before the timed call (NumPy for the
default shape, pymongo one by one for the others, TSBS's rows as tsbs.py lays them out) and sent as RawBSONDocuments, a batch with
`insert_many(ordered=False)`, a single event with `insert_one`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.modules.mongodb import tsbs
from iotdb_bench.simulator.modules.mongodb.options import DEFAULT_COLUMNS, MongodbRole
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import bson_events
from iotdb_bench.simulator.workload.events import CLIENT_KEY_WIDTH, EventBatch

if TYPE_CHECKING:
    import numpy as np



class MongodbWriter(MongodbRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        self._tsbs = tsbs.TsbsDocuments(self.spec.seed, self.spec.all_devices, self.spec.shape) if self.spec.tsbs else None

    def prepare_batch(self, batch: EventBatch) -> list[tuple[str, list[Any]]]:
        return [(table, self._documents(table, part)) for table, part in self.per_table(batch)]

    def _documents(self, table: str, batch: EventBatch) -> list[Any]:
        from bson.raw_bson import RawBSONDocument

        if self._tsbs is not None:
            return [RawBSONDocument(document) for document in self._tsbs.encoded(table, batch)]
        keys = batch.client_key if self._with_key else None
        default_shape = self.layout.names == DEFAULT_COLUMNS
        encoded = bson_events.encode(batch, keys) if default_shape else None
        if encoded is None:
            encoded = self._encoded_one_by_one(batch, keys)
        return [RawBSONDocument(document) for document in encoded]

    def _encoded_one_by_one(self, batch: EventBatch, keys: np.ndarray | None) -> list[bytes]:
        """Documents of any shape (simulator/workload/shapes.py), encoded by pymongo one by one: dates, int64
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

    def insert_batch(self, prepared: list[tuple[str, list[Any]]]) -> None:
        collections = self.module.collections
        for table, documents in prepared:
            collections[table].insert_many(documents, ordered=False)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, Any]]:
        return self.rows_per_table(batch, self._documents)

    def insert_single(self, item: tuple[str, Any]) -> None:
        table, document = item
        self.module.collections[table].insert_one(document)
