"""The cassandra module's schema and counting: the keyspace, one table per run table (a partition
per device, newest first), the shape's secondary index, counts at the verification's consistency."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import SchemaRole
from iotdb_bench.simulator.modules.cassandra.options import COLUMN_TYPES, DDL_TIMEOUT_S, CassandraRole
from iotdb_bench.simulator.spec import PrimaryKey


class CassandraSchema(CassandraRole, SchemaRole):
    def setup(self) -> None:
        keyspace = self.options.keyspace
        self.module.session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
            f"{{'class': 'SimpleStrategy', 'replication_factor': {self.options.replication_factor}}}",
            timeout=DDL_TIMEOUT_S,
        )
        for table in self.spec.table_names:
            if self.spec.clean:
                self.module.session.execute(f"DROP TABLE IF EXISTS {keyspace}.{table}", timeout=DDL_TIMEOUT_S)
            self.module.session.execute(self.create_table_statement(table), timeout=DDL_TIMEOUT_S)
            for statement in self.index_statements(table):
                self.module.session.execute(statement, timeout=DDL_TIMEOUT_S)

    def create_table_statement(self, table: str) -> str:
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
        from cassandra import ConsistencyLevel
        from cassandra.query import SimpleStatement

        total = 0
        for table in self.spec.table_names:
            statement = SimpleStatement(
                f"SELECT count(*) FROM {self.options.keyspace}.{table}",
                consistency_level=ConsistencyLevel.name_to_value[self.options.count_consistency_level],
            )
            total += self.module.session.execute(statement, timeout=self.options.count_timeout).one()[0]
        return total
