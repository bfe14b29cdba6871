"""The postgres module's record of expected answers: a table of its own, `iotbench_expected`."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.postgres.options import PostgresRole
from iotdb_bench.simulator.wire.pg_values import first_value


class PostgresRecords(PostgresRole, RecordsRole):
    def store_record(self, text: str) -> None:
        conn = self.module.conn
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {RECORD_NAME} (tables TEXT PRIMARY KEY, record TEXT NOT NULL)")
            cursor.execute(f"INSERT INTO {RECORD_NAME} (tables, record) VALUES (%s, %s) "
                           "ON CONFLICT (tables) DO UPDATE SET record = EXCLUDED.record", (self.record_key(), text))
        if not conn.autocommit:
            conn.commit()

    def stored_record(self) -> str | None:
        conn = self.module.conn
        with conn.cursor() as cursor:
            found = first_value(cursor, "SELECT to_regclass(%s)", (RECORD_NAME,))
            row = cursor.execute(f"SELECT record FROM {RECORD_NAME} WHERE tables = %s", (self.record_key(),)).fetchone() if found else None
        if not conn.autocommit:
            conn.commit()
        return row[0] if row else None
