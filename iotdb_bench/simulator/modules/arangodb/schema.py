"""The arangodb module's schema and counting: one document collection per table (shards, replication,
waitForSync, the key generator), persistent indexes, counts and storage from the collections' figures."""

from __future__ import annotations

from iotdb_bench.simulator.modules.arangodb.options import KEY_GENERATORS, ArangodbRole
from iotdb_bench.simulator.modules.base import SchemaRole
from iotdb_bench.simulator.spec import PrimaryKey


class ArangodbSchema(ArangodbRole, SchemaRole):
    def setup(self) -> None:
        db = self.module.db
        for name in self.spec.table_names:
            if self.spec.clean:
                db.delete_collection(name, ignore_missing=True)
            if not db.has_collection(name):
                db.create_collection(
                    name,
                    sync=self.options.sync,
                    shard_count=self.options.shard_count,
                    replication_factor=self.options.replication_factor,
                    key_generator=KEY_GENERATORS[self.spec.primary_key],
                    user_keys=self.spec.primary_key is PrimaryKey.client,
                )
            indices = [["temperature"], ["device_id", "temperature"]] if self.options.create_indices else []
            for fields in indices + [[column] for column in self.layout.indexed]:
                db.collection(name).add_index({"type": "persistent", "fields": fields, "name": f"{name}_{'_'.join(fields)}"})

    def server_version(self) -> str:
        details = self.module.db.version(details=True)
        return f"ArangoDB {details['version']}" + (f" ({details['license']})" if details.get("license") else "")

    def count(self) -> int:
        return sum(self.module.db.collection(name).count() for name in self.spec.table_names)

    def storage_bytes(self) -> int | None:
        total = 0
        for name in self.spec.table_names:
            figures = self.module.db.collection(name).statistics()
            total += int(figures.get("documents_size") or 0) + int((figures.get("indexes") or {}).get("size") or 0)
        return total
