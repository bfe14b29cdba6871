"""The mongodb module's schema and counting: one collection per table (a time series collection
bucketed by device, or a plain one; TSBS's shapes: by host or truck, tsbs.py), the query and shape indexes,
`count_documents`, and storage from `$collStats`."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.modules.base import SchemaRole
from iotdb_bench.simulator.modules.mongodb import tsbs
from iotdb_bench.simulator.modules.mongodb.options import INDEXES, META_FIELD, TIME_FIELD, MongodbRole


class MongodbSchema(MongodbRole, SchemaRole):
    def setup(self) -> None:
        db, collections = self.module.db, self.module.collections
        existing = set(db.list_collection_names())
        for name in self.spec.table_names:
            if self.spec.clean and name in existing:
                db.drop_collection(name)
                existing.discard(name)
            if name not in existing:
                if self.module.timeseries:
                    db.create_collection(name, timeseries=self._timeseries_options(), check_exists=False)
                else:
                    db.create_collection(name, check_exists=False)
            indexes = list(INDEXES) if self.options.create_indices else []
            indexes += [tsbs.index(self.spec.shape)] if self.spec.tsbs else [[(field, 1)] for field in self.layout.indexed]  # light: val1
            for keys in indexes:
                collections[name].create_index(keys, name=f"{name}_{'_'.join(field for field, _ in keys)}")

    def _timeseries_options(self) -> dict[str, Any]:
        """Buckets per device (per host or truck: its tags, for TSBS's shapes); seed 002's shapes have no device to bucket by."""
        if self.spec.tsbs:
            return {"timeField": tsbs.TIME_FIELD, "metaField": tsbs.META_FIELD, "granularity": self.options.granularity}
        timeseries = {"timeField": TIME_FIELD, "granularity": self.options.granularity}
        if self.layout.has("device"):
            timeseries["metaField"] = META_FIELD
        return timeseries

    def server_version(self) -> str:
        return f"MongoDB {self.module.client.server_info()['version']}"  # the buildInfo command

    def count(self) -> int:
        return sum(collection.count_documents({}) for collection in self.module.collections.values())

    def storage_bytes(self) -> int | None:
        total = 0
        for collection in self.module.collections.values():
            for stats in collection.aggregate([{"$collStats": {"storageStats": {}}}]):
                storage = stats.get("storageStats", {})
                total += int(storage.get("storageSize", 0)) + int(storage.get("totalIndexSize", 0))
        return total
