"""The mongodb module's record of expected answers: a document of the collection `iotbench_expected`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.mongodb import Module


class MongodbRecords(Role, RecordsRole):
    module: Module

    def store_record(self, text: str) -> None:
        self.module.db.get_collection(RECORD_NAME).replace_one({"_id": self.record_key()}, {"record": text}, upsert=True)

    def stored_record(self) -> str | None:
        found = self.module.db.get_collection(RECORD_NAME).find_one({"_id": self.record_key()})
        return None if found is None else found["record"]
