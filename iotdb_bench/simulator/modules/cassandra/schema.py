"""The cassandra module's schema and counting: the keyspace, one table per run table (a partition
per device, newest first) or TSBS's layout (tsbs_series.py), the shape's secondary index, counts at
the verification's consistency, and the tables' disk space (storage.py)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from iotdb_bench.simulator.modules.base import SchemaRole
from iotdb_bench.simulator.modules.cassandra import storage, tsbs_iot_series, tsbs_series
from iotdb_bench.simulator.modules.cassandra.options import COLUMN_TYPES, DDL_TIMEOUT_S, CassandraRole
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.workload.tsbs import USE_CASES


class CassandraSchema(CassandraRole, SchemaRole):
    def setup(self) -> None:
        keyspace = self.options.keyspace
        self.module.session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
            f"{{'class': 'SimpleStrategy', 'replication_factor': {self.options.replication_factor}}}",
            timeout=DDL_TIMEOUT_S,
        )
        for table in self.tables:
            if self.spec.clean:
                self.module.session.execute(f"DROP TABLE IF EXISTS {keyspace}.{table}", timeout=DDL_TIMEOUT_S)
            self.module.session.execute(self.create_table_statement(table), timeout=DDL_TIMEOUT_S)
            for statement in self.index_statements(table):
                self.module.session.execute(statement, timeout=DDL_TIMEOUT_S)

    @property
    def tables(self) -> list[str]:
        """The CQL tables of the run: its own, or TSBS's series tables its fields fill for a TSBS shape."""
        return tsbs_series.tables_of(USE_CASES[self.spec.shape]) if self.spec.tsbs else list(self.spec.table_names)

    def create_table_statement(self, table: str) -> str:
        if self.spec.tsbs:
            return tsbs_series.create_statement(self.options.keyspace, table)
        columns = ", ".join(f"{column.name} {COLUMN_TYPES[column.kind]}" for column in self.layout.columns)
        if self.layout.shape != "events":
            key = "text" if self.spec.primary_key is PrimaryKey.client else "uuid"
            return f"CREATE TABLE IF NOT EXISTS {self.options.keyspace}.{table} (id {key} PRIMARY KEY, {columns})"
        return (
            f"CREATE TABLE IF NOT EXISTS {self.options.keyspace}.{table} ({columns}, "
            "PRIMARY KEY ((device_id), timestamp, sequence_number)"
            ") WITH CLUSTERING ORDER BY (timestamp DESC, sequence_number DESC)"
        )

    def server_version(self) -> str:
        row = self.module.session.execute("SELECT release_version FROM system.local", timeout=DDL_TIMEOUT_S).one()
        return f"Cassandra {row[0]}"

    def index_statements(self, table: str) -> list[str]:
        """The shape's secondary index (light: val1), a Cassandra secondary index."""
        return [f"CREATE INDEX IF NOT EXISTS {table}_{name} ON {self.options.keyspace}.{table} ({name})" for name in self.layout.indexed]

    def count(self) -> int:
        """Rows stored; in TSBS's layout a row is a point in each of its fields' series, so the points of each
        measurement's first field (counted per partition on the server: `GROUP BY series_id`); IoT's rows,
        which may lack any one field, from the times of two (tsbs_iot_series.py)."""
        from cassandra import ConsistencyLevel
        from cassandra.query import SimpleStatement

        consistency = ConsistencyLevel.name_to_value[self.options.count_consistency_level]
        if self.spec.shape == "tsbs-iot":
            return tsbs_iot_series.count_rows(self.module.session, self.options.keyspace, consistency, self.options.count_timeout)
        if self.spec.tsbs:  # every measurement's first field is an integer: its series are in series_bigint
            firsts = {f"{one.name}#{one.field_names[0]}" for one in USE_CASES[self.spec.shape].measurements}
            statement = SimpleStatement(f"SELECT series_id, count(*) FROM {self.options.keyspace}.{tsbs_series.TABLE} GROUP BY series_id",
                                        consistency_level=consistency, fetch_size=5000)
            return sum(count for series, count in self.module.session.execute(statement, timeout=self.options.count_timeout)
                       if tsbs_series.measurement_and_field(series) in firsts)
        total = 0
        for table in self.tables:
            statement = SimpleStatement(f"SELECT count(*) FROM {self.options.keyspace}.{table}", consistency_level=consistency)
            total += self.module.session.execute(statement, timeout=self.options.count_timeout).one()[0]
        return total

    def storage_bytes(self) -> int | None:
        if self.local_folders is not None:
            return storage.folder_bytes(self.local_folders)
        return storage.disk_usage_bytes(self.module.session, self.options.keyspace, self.tables)

    @cached_property
    def local_folders(self) -> list[Path] | None:
        """The tables' data folders, when the server keeps them on this machine."""
        return storage.table_folders(self.module.session, self.options.keyspace, self.tables)

    def storage_note(self) -> str:
        """Where the storage figure comes from (storage.py), for the run's notes."""
        where = ("the tables' SSTable files in the server's data folder, on this machine" if self.local_folders is not None
                 else "Cassandra's system_views.disk_usage (live SSTables, whole MiB rounded up)")
        return f"storage: {where}; rows still in memtables (not flushed yet) are not counted"
