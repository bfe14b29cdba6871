"""The arangodb module's write path: a batch through the document batch API (`insert_many`) or the
bulk import API (all-or-nothing per request), a single event as one document insert; with
--primary-key client the event's content key is the `_key` (led by device or by time)."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.modules.arangodb.options import ArangodbRole
from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.workload.events import EventBatch


class ArangodbWriter(ArangodbRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        # waitForSync per request only when asked: false would not override a collection's true anyway.
        self._sync = True if self.options.sync else None

    def prepare_batch(self, batch: EventBatch) -> list[tuple[str, list[dict[str, Any]]]]:
        return [(table, self._documents(part)) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: list[tuple[str, list[dict[str, Any]]]]) -> None:
        for name, documents in prepared:
            collection = self.module.db.collection(name)
            if self.options.batch_api == "import":
                outcome = collection.import_bulk(documents, halt_on_error=True, details=True, sync=self._sync)
                if outcome.get("created") != len(documents):
                    raise RuntimeError(f"bulk import into {name} created {outcome.get('created')} of {len(documents)} documents: {outcome.get('details')}")
            else:
                collection.insert_many(documents, sync=self._sync, raise_on_document_error=True)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, dict[str, Any]]]:
        return list(zip(self.table_of_each(batch), self._documents(batch)))

    def insert_single(self, item: tuple[str, dict[str, Any]]) -> None:
        name, document = item
        self.module.db.collection(name).insert(document, sync=self._sync, silent=True)

    def _documents(self, batch: EventBatch) -> list[dict[str, Any]]:
        columns = {column.name: column.python(batch) for column in self.layout.columns}
        if self._with_key:
            keys = batch.time_first_key if self.options.key_order == "time" else batch.client_key
            columns["_key"] = keys.astype(f"U{keys.dtype.itemsize}").tolist()
        names = list(columns)
        return [dict(zip(names, values)) for values in zip(*columns.values())]
