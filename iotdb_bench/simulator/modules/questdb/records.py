"""The questdb module's record of expected answers: a table of its own, `iotbench_expected` (not
partitioned, hence not WAL: a written record is visible at once), one row per saved version."""

from __future__ import annotations

import time

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.questdb.options import QuestdbRole
from iotdb_bench.simulator.wire.pg_values import first_value


class QuestdbRecords(QuestdbRole, RecordsRole):
    def store_record(self, text: str) -> None:
        # Versions instead of an UPDATE: the newest row is the record (QuestDB updates rows in place
        # only on tables with a designated timestamp).
        self.module.conn.execute(f"CREATE TABLE IF NOT EXISTS {RECORD_NAME} (tables VARCHAR, version LONG, record VARCHAR)")
        self.module.conn.execute(f"INSERT INTO {RECORD_NAME} VALUES (%s, %s, %s)", (self.record_key(), time.time_ns(), text))

    def stored_record(self) -> str | None:
        if not first_value(self.module.conn, "SELECT count() FROM tables() WHERE table_name = %s", (RECORD_NAME,)):
            return None
        row = self.module.conn.execute(f"SELECT record FROM {RECORD_NAME} WHERE tables = %s ORDER BY version DESC LIMIT 1",
                                       (self.record_key(),)).fetchone()
        return row[0] if row else None
