"""The arangodb module's record of expected answers: a document in a collection of its own,
`iotbench_expected`, written with waitForSync."""

from __future__ import annotations

from iotdb_bench.simulator.modules.arangodb.options import ArangodbRole
from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole


class ArangodbRecords(ArangodbRole, RecordsRole):
    def store_record(self, text: str) -> None:
        db = self.module.db
        if not db.has_collection(RECORD_NAME):
            db.create_collection(RECORD_NAME, user_keys=True, replication_factor=self.options.replication_factor)
        db.collection(RECORD_NAME).insert({"_key": self.record_key(), "record": text}, overwrite=True, sync=True)

    def stored_record(self) -> str | None:
        db = self.module.db
        if not db.has_collection(RECORD_NAME):
            return None
        document = db.collection(RECORD_NAME).get(self.record_key())
        return document["record"] if document else None
