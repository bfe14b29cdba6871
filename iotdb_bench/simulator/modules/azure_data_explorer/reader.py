"""The azure_data_explorer module's read side: the KQL queries of queries.py, and scans through the
streaming query API (the v2 response parsed as it arrives, rows taken a page at a time)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer, with_times
from iotdb_bench.simulator.modules.azure_data_explorer.options import AdxRole
from iotdb_bench.simulator.modules.azure_data_explorer.queries import DEVICES, QUERIES, SCAN, TIME_COLUMNS
from iotdb_bench.simulator.modules.base import Query, ReaderRole, timestamp_pages


class AdxReader(AdxRole, ReaderRole):
    def queries(self) -> dict[str, Query]:
        return {name: self._query(name, kql) for name, kql in QUERIES.items()}

    def _query(self, name: str, kql: str) -> Query:
        convert = with_times(*TIME_COLUMNS.get(name, ()))
        return lambda: Answer(self.module.rows(kql), lambda rows: convert([row.to_list() for row in rows]))

    def scan_devices(self) -> list[str]:
        return sorted(row[0] for row in self.module.rows(DEVICES.format(tables=self._union())))

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        kql = SCAN.format(tables=self._union(), device=device)
        response = self.module.client.execute_streaming_query(self.options.database, kql)
        yield from timestamp_pages((row[0] for row in next(response.iter_primary_results())), page_size)

    def _union(self) -> str:
        tables = self.spec.table_names
        return tables[0] if len(tables) == 1 else f"union {', '.join(tables)}"
