"""The mysql module's record of expected answers: a table of its own, `iotbench_expected`."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.mysql.options import MysqlRole


class MysqlRecords(MysqlRole, RecordsRole):
    def store_record(self, text: str) -> None:
        with self.module.conn.cursor() as cursor:
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {RECORD_NAME} (tables VARCHAR(255) NOT NULL PRIMARY KEY, record LONGTEXT NOT NULL)")
            cursor.execute(f"REPLACE INTO {RECORD_NAME} (tables, record) VALUES (%s, %s)", (self.record_key(), text))
        self.module.fresh_snapshot()

    def stored_record(self) -> str | None:
        self.module.fresh_snapshot()
        with self.module.conn.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = %s", (RECORD_NAME,))
            if not cursor.fetchone()[0]:
                return None
            cursor.execute(f"SELECT record FROM {RECORD_NAME} WHERE tables = %s", (self.record_key(),))
            row = cursor.fetchone()
        return row[0] if row else None
