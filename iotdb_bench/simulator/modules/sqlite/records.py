"""The sqlite module's record of expected answers: a table of its own in the same file, so it travels
with the data."""

from __future__ import annotations

import sqlite3

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.sqlite.options import SqliteRole


class SqliteRecords(SqliteRole, RecordsRole):
    def store_record(self, text: str) -> None:
        self.module.conn.execute(f"CREATE TABLE IF NOT EXISTS {RECORD_NAME} (tables TEXT PRIMARY KEY, record TEXT NOT NULL)")
        self.module.conn.execute(f"INSERT OR REPLACE INTO {RECORD_NAME} (tables, record) VALUES (?, ?)", (self.record_key(), text))

    def stored_record(self) -> str | None:
        try:
            row = self.module.conn.execute(f"SELECT record FROM {RECORD_NAME} WHERE tables = ?", (self.record_key(),)).fetchone()
        except sqlite3.OperationalError:  # no such table: nothing recorded here
            return None
        return row[0] if row else None
