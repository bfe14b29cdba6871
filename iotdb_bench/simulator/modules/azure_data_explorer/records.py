"""The azure_data_explorer module's record of expected answers: a table of its own, `iotbench_expected`
(tables, part, record); string values are limited (1 MB by default), so the JSON is split into parts."""

from __future__ import annotations

from iotdb_bench.simulator.modules.azure_data_explorer.options import AdxRole
from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole

RECORD_PART_CHARS = 500_000


class AdxRecords(AdxRole, RecordsRole):
    def store_record(self, text: str) -> None:
        """The record's parts replace the ones of the same tables; records of other tables stay."""
        key = _kql_string(self.record_key())
        parts = [text[i : i + RECORD_PART_CHARS] for i in range(0, len(text), RECORD_PART_CHARS)] or [""]
        values = ", ".join(f"{key}, {i}, {_kql_string(part)}" for i, part in enumerate(parts))
        self.module.mgmt(f".create-merge table {RECORD_NAME} (tables: string, part: int, record: string)")
        self.module.mgmt(f".set-or-replace {RECORD_NAME} <| {RECORD_NAME} | where tables != {key} "
                         f"| union (datatable(tables: string, part: int, record: string) [{values}])")

    def stored_record(self) -> str | None:
        if not self.module.mgmt(f".show tables | where TableName == '{RECORD_NAME}'").primary_results[0].rows_count:
            return None
        rows = self.module.rows(f"{RECORD_NAME} | where tables == {_kql_string(self.record_key())} | order by part asc | project record")
        return "".join(row[0] for row in rows) if rows else None


def _kql_string(text: str) -> str:
    """A KQL verbatim string literal (quotes doubled)."""
    return "@'" + text.replace("'", "''") + "'"
