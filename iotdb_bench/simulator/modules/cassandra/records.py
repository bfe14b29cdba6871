"""The cassandra module's record of expected answers: a table of its own in the keyspace, written and
read at the verification count's consistency."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.cassandra.options import DDL_TIMEOUT_S, CassandraRole


class CassandraRecords(CassandraRole, RecordsRole):
    def store_record(self, text: str) -> None:
        table = f"{self.options.keyspace}.{RECORD_NAME}"
        self.module.session.execute(f"CREATE TABLE IF NOT EXISTS {table} (tables text PRIMARY KEY, record text)", timeout=DDL_TIMEOUT_S)
        self.module.session.execute(self._record_statement(f"INSERT INTO {table} (tables, record) VALUES (%s, %s)"), (self.record_key(), text))

    def _record_statement(self, cql: str) -> Any:
        """The record is written and read at the verification count's consistency, not the inserts'
        (a consistency_level the cluster cannot give must fail the inserts, not the bookkeeping)."""
        from cassandra import ConsistencyLevel
        from cassandra.query import SimpleStatement

        return SimpleStatement(cql, consistency_level=ConsistencyLevel.name_to_value[self.options.count_consistency_level])

    def stored_record(self) -> str | None:
        exists = self.module.session.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
            (self.options.keyspace, RECORD_NAME)).one()
        if exists is None:
            return None
        row = self.module.session.execute(self._record_statement(f"SELECT record FROM {self.options.keyspace}.{RECORD_NAME} WHERE tables = %s"),
                                    (self.record_key(),)).one()
        return row[0] if row else None
