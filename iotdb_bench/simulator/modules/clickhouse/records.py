"""The clickhouse module's record of expected answers: a table of its own, `<database>.iotbench_expected`,
one row per saved version (MergeTree has no UPDATE; the newest wins)."""

from __future__ import annotations

import time

import numpy as np

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.clickhouse.options import ClickhouseRole


class ClickhouseRecords(ClickhouseRole, RecordsRole):
    def store_record(self, text: str) -> None:
        execute = self.module.execute
        table = f"{self.options.database}.{RECORD_NAME}"
        execute(f"CREATE DATABASE IF NOT EXISTS {self.options.database}")
        execute(f"CREATE TABLE IF NOT EXISTS {table} (tables String, version UInt64, record String) "
                "ENGINE = MergeTree() ORDER BY (tables, version)")
        execute(f"INSERT INTO {table} (tables, version, record) VALUES",
                [np.array([self.record_key()], dtype=object), np.array([time.time_ns()], dtype=np.uint64), np.array([text], dtype=object)],
                columnar=True)

    def stored_record(self) -> str | None:
        table = f"{self.options.database}.{RECORD_NAME}"
        if not self.module.execute(f"EXISTS TABLE {table}", columnar=True)[0][0]:
            return None
        found = self.module.execute(f"SELECT record FROM {table} WHERE tables = %(tables)s ORDER BY version DESC LIMIT 1",
                                    {"tables": self.record_key()}, columnar=True)
        return str(found[0][0]) if found and len(found[0]) else None
