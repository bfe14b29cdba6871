"""The iotdb module's record of expected answers, beside the tables: tree root.<database>.iotbench_expected
(TEXT series `tables` and `record`, one point per table layout), table <database>.iotbench_expected."""

from __future__ import annotations

import zlib

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.iotdb.connection import literal
from iotdb_bench.simulator.modules.iotdb.options import IotdbRole


class IotdbRecords(IotdbRole, RecordsRole):
    def store_record(self, text: str) -> None:
        connection = self.module.connection
        key = self.record_key()
        if self.module.series.tree:  # one point per table layout, at a time of its own
            connection.session.insert_str_record(self._record_device(), _record_time(key), ["tables", "record"], [key, text])
            return
        connection.statement(f"CREATE DATABASE IF NOT EXISTS {self.options.database}")
        connection.statement(f"CREATE TABLE IF NOT EXISTS {self.options.database}.{RECORD_NAME} (tables STRING TAG, record STRING FIELD)")
        connection.statement(f"INSERT INTO {self.options.database}.{RECORD_NAME}(time, tables, record) VALUES (0, {literal(key)}, {literal(text)})")

    def stored_record(self) -> str | None:
        from iotdb.utils.exception import StatementExecutionException

        key = self.record_key()
        if self.module.series.tree:
            statement = f"SELECT record FROM {self._record_device()} WHERE time = {_record_time(key)}"
        else:
            statement = f"SELECT record FROM {self.options.database}.{RECORD_NAME} WHERE tables = {literal(key)}"
        try:
            rows = self.module.connection.fetch(statement)
        except StatementExecutionException:  # no such table or series: nothing recorded here
            return None
        return str(rows[0][-1]) if rows else None

    def _record_device(self) -> str:
        return f"root.{self.options.database}.{RECORD_NAME}"


def _record_time(key: str) -> int:
    """The time of a table layout's record point in the tree model (stable across processes)."""
    return zlib.crc32(key.encode())
