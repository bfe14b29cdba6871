"""The sqlite module's read side: the six queries (device-downsample buckets epoch milliseconds by
the minute), TSBS's query types on TSBS's layout, scans stepped a page at a time, and the visibility probe's look-up of one event."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.base import Query, ReaderRole
from iotdb_bench.simulator.modules.sqlite.options import SqliteRole
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.wire import tsbs_sql
from iotdb_bench.simulator.wire.tsbs_queries import tsbs_queries
from iotdb_bench.simulator.workload.events import EventBatch


class SqliteReader(SqliteRole, ReaderRole):
    def marker_visible(self, marker: EventBatch) -> bool:
        table, device, sequence = self.marker_key(marker)
        statement = f"SELECT 1 FROM {table} WHERE device_id = ? AND sequence_number = ? LIMIT 1"
        return self.module.conn.execute(statement, (device, sequence)).fetchone() is not None

    def queries(self) -> dict[str, Query]:
        def query(name: str, statement: str) -> Query:
            return lambda: Answer(self._fetch(statement))

        statements = {**sql_common.QUERIES, "device-downsample": sql_common.downsample_query(
            "timestamp - timestamp % 60000", str(sql_common.DOWNSAMPLE_START_MS), str(sql_common.DOWNSAMPLE_END_MS))}
        return {name: query(name, statement) for name, statement in sql_common.over_tables(statements, self.spec.table_names).items()}

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's query types of the data's use case over TSBS's layout, in SQLite's words
        (simulator/wire/tsbs_sql.py, tsbs_iot_sql.py)."""
        return tsbs_queries(self.spec, tsbs_sql.SQLITE, self._fetch)

    def text_query(self, language: str, text: str) -> Query:
        return lambda: Answer(self._fetch(text))

    def check_text(self, language: str, text: str) -> None:
        self.module.conn.execute(f"EXPLAIN {text}").fetchall()  # compiles the statement, runs none of it

    def _fetch(self, statement: str) -> list[tuple[Any, ...]]:
        return self.module.conn.execute(statement).fetchall()

    def scan_reads_whole_table(self) -> bool:
        return sql_common.scan_reads_whole_table(self.options.primary_key_constraint, self.options.create_indices)

    def scan_devices(self) -> list[str]:
        return [row[0] for row in self.module.conn.execute(sql_common.devices_statement(self.spec.table_names))]

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # SQLite steps the statement as rows are fetched: a page at a time, nothing read ahead.
        statement, binds = sql_common.scan_statement(self.spec.table_names, "timestamp", "?")
        cursor = self.module.conn.execute(statement, (device,) * binds)
        try:
            while rows := cursor.fetchmany(page_size):
                yield np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        finally:
            cursor.close()
