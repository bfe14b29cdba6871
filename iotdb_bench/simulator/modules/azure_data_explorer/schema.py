"""The azure_data_explorer module's schema and counting: the tables, their CSV mapping and ingestion
policy (streaming, or queued batching), counts and extent sizes, and the bounded wait for queued
rows to be stored after a run."""

from __future__ import annotations

import time

from iotdb_bench.simulator.modules.azure_data_explorer.options import COLUMN_TYPES, CSV_MAPPING, AdxRole
from iotdb_bench.simulator.modules.base import SchemaRole, count_until
from iotdb_bench.simulator.report import IngestionWait


class AdxSchema(AdxRole, SchemaRole):
    def setup(self) -> None:
        for statement in self.setup_commands():
            self.module.mgmt(statement)

    def setup_commands(self) -> list[str]:
        columns = ", ".join(f"{column.name}: {COLUMN_TYPES[column.kind]}" for column in self.layout.columns)
        mapping = ", ".join(f'{{"column": "{column.name}", "Properties": {{"Ordinal": "{i}"}}}}' for i, column in enumerate(self.layout.columns))
        commands = []
        for table in self.spec.table_names:
            if self.spec.clean:
                commands.append(f".drop table {table} ifexists")
            commands.append(f".create-merge table {table} ({columns})")
            commands.append(f".create-or-alter table {table} ingestion csv mapping '{CSV_MAPPING}' '[{mapping}]'")
            if self.options.ingestion == "streaming":
                commands.append(f".alter table {table} policy streamingingestion enable")
            elif self.options.batching_max_seconds:
                span = time.strftime("%H:%M:%S", time.gmtime(self.options.batching_max_seconds))
                commands.append(
                    f".alter table {table} policy ingestionbatching "
                    f"'{{\"MaximumBatchingTimeSpan\": \"{span}\", \"MaximumNumberOfItems\": 500, \"MaximumRawDataSizeMB\": 1024}}'"
                )
        return commands

    def server_version(self) -> str:
        row = self.module.mgmt(".show version").primary_results[0][0]
        return f"{row['ServiceType'] or 'Kusto'} {row['BuildVersion']}"

    def count(self) -> int:
        return sum(int(self.module.rows(f"{table} | count")[0][0]) for table in self.spec.table_names)

    def storage_bytes(self) -> int | None:
        return sum(int(self.module.mgmt(f".show table {table} details").primary_results[0][0]["TotalExtentSize"] or 0)
                   for table in self.spec.table_names)

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait:
        """Queued rows appear minutes after the run: count until they are all there (bounded)."""
        return count_until(self.count, expected, run_ended_at, self.options.ingestion_wait_s, self.options.ingestion_poll_s)
