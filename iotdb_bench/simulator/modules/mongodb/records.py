"""The mongodb module's record of expected answers: a document of the collection `iotbench_expected`."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.mongodb.options import MongodbRole


class MongodbRecords(MongodbRole, RecordsRole):
    def store_record(self, text: str) -> None:
        self.module.db.get_collection(RECORD_NAME).replace_one({"_id": self.record_key()}, {"record": text}, upsert=True)

    def stored_record(self) -> str | None:
        found = self.module.db.get_collection(RECORD_NAME).find_one({"_id": self.record_key()})
        return None if found is None else found["record"]
