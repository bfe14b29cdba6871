"""The clickhouse module's read side: the six queries in the server's dialect (answers fetched as
columns), TSBS's DevOps and IoT query types on TSBS's tables (tsbs.py, tsbs_iot.py), scans streamed block by block with `execute_iter`, and the visibility probe's look-up."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.base import Query, ReaderRole, timestamp_pages
from iotdb_bench.simulator.modules.clickhouse import tsbs_iot
from iotdb_bench.simulator.modules.clickhouse.options import ClickhouseRole
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS
from iotdb_bench.simulator.queries.tsbs_iot import IOT
from iotdb_bench.simulator.workload.events import EventBatch

# The release that brought the EXPLAIN statement (ClickHouse's changelog).
EXPLAIN_SINCE = (20, 6)


class ClickhouseReader(ClickhouseRole, ReaderRole):
    def marker_visible(self, marker: EventBatch) -> bool:
        """The marker's row: visible when the insert returned, or, with async_insert and no wait, once the
        server has flushed its insert buffer."""
        table, device, sequence = self.marker_key(marker)
        statement = f"SELECT 1 FROM {self.module.tables[table]} WHERE device_id = %(device)s AND sequence_number = %(sequence)s LIMIT 1"
        return bool(self.module.execute(statement, {"device": device, "sequence": sequence}))

    def queries(self) -> dict[str, Query]:
        tables = list(self.module.tables.values())
        # With --tables N, each query reads the union of the tables.
        source = tables[0] if len(tables) == 1 else "(" + " UNION ALL ".join(
            f"SELECT timestamp, device_id, temperature FROM {qualified}" for qualified in tables) + ")"
        return {name: self._rows(statement) for name, statement in self.module.server_dialect.queries(source).items()}

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's query types of the data's use case over TSBS's tables, in the server's dialect (tsbs.py, tsbs_iot.py)."""
        if not self.spec.tsbs:
            return {}
        dialect, tables = self.module.server_dialect, self.module.tsbs_tables
        if self.spec.shape == "tsbs-iot":
            return {name: functools.partial(tsbs_iot.answer, tables, query, dialect=dialect, fetch=self._fetch) for name, query in IOT.items()}
        return {name: functools.partial(tables.answer, query, dialect=dialect, fetch=self._fetch) for name, query in DEVOPS.items()}

    def _fetch(self, statement: str) -> list[tuple[Any, ...]]:
        """A statement's rows, fetched as columns (the client reads NumPy) and turned into rows."""
        return _rows_of_columns(self.module.execute(statement, columnar=True))

    def _rows(self, statement: str) -> Query:
        def run() -> Answer:
            # Columns (the client reads NumPy): turned into rows of Python values after the timed call.
            return Answer(self.module.execute(statement, columnar=True), _rows_of_columns)

        return run

    def text_query(self, language: str, text: str) -> Query:
        return lambda: Answer(self.module.execute(text, columnar=True, on=self.module.text_client()), _rows_of_columns)

    def check_text(self, language: str, text: str) -> None:
        """EXPLAIN analyses the statement (its tables and columns) and runs none of it; servers before it
        came (20.6) analyse it as a subquery of which no row is read."""
        statement = f"EXPLAIN {text}" if self.module.server_dialect.version >= EXPLAIN_SINCE else f"SELECT * FROM ({text}) LIMIT 0"
        self.module.execute(statement, on=self.module.text_client())

    def scan_devices(self) -> list[str]:
        statement = " UNION ALL ".join(f"SELECT DISTINCT device_id FROM {qualified}" for qualified in self.module.tables.values())
        columns = self.module.execute(statement, columnar=True)
        return sorted(set(columns[0].tolist())) if columns else []

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device always writes to the same table; the others hold none of its rows.
        for qualified in self.module.tables.values():
            rows = self.module.client.execute_iter(self.module.server_dialect.scan(qualified), {"device": device},
                                                   settings={"max_block_size": page_size})
            yield from timestamp_pages((row[0] for row in rows), page_size)


def _rows_of_columns(columns: Sequence[np.ndarray]) -> list[tuple[Any, ...]]:
    return list(zip(*(column.tolist() for column in columns)))
