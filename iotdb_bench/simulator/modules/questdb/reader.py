"""The questdb module's read side over the PostgreSQL wire protocol: the six queries (device-downsample
with `SAMPLE BY 1m ALIGN TO CALENDAR`, newest-per-device with `LATEST ON`), TSBS's DevOps query types
on TSBS's layout (tsbs.py) and its IoT types (tsbs_iot.py), scans streamed with
psycopg's `Cursor.stream()` and grouped into pages on the client, and the visibility probe's look-up."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer, with_times
from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import Query, ReaderRole, timestamp_pages
from iotdb_bench.simulator.modules.questdb import tsbs, tsbs_iot
from iotdb_bench.simulator.modules.questdb.options import QuestdbRole
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS
from iotdb_bench.simulator.queries.tsbs_iot import IOT
from iotdb_bench.simulator.spec import TSBS_IOT_QUERIES, default_queries
from iotdb_bench.simulator.wire.pg_values import received
from iotdb_bench.simulator.workload.events import EventBatch


class QuestdbReader(QuestdbRole, ReaderRole):
    def marker_visible(self, marker: EventBatch) -> bool:
        """The marker's row, found in its own microsecond of the designated timestamp: visible once QuestDB
        has applied the write-ahead log that holds it (acknowledged earlier)."""
        table, device, sequence = self.marker_key(marker)
        micros = int(marker.timestamp_ms[0]) * 1000
        statement = f"SELECT 1 FROM {table} WHERE timestamp = cast({micros} as timestamp) AND device_id = %s AND sequence_number = %s LIMIT 1"
        return self.module.conn.execute(statement, (device, sequence)).fetchone() is not None

    def queries(self) -> dict[str, Query]:
        events = self._events()
        return {
            "count-events": self._query(f"SELECT count() FROM {events}"),
            "temperature-min-max": self._query(f"SELECT min(temperature), max(temperature) FROM {events}"),
            "temperature-stats": self._query(f"SELECT min(temperature), avg(temperature), max(temperature) FROM {events}"),
            "temperature-stats-per-device": self._query(
                f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {events} GROUP BY device_id"),
            # LATEST ON walks each device's rows backwards from the newest partition; a device always
            # writes to the same table, so the union of the tables' answers is the answer.
            "newest-per-device": self._query(" UNION ALL ".join(
                f"(SELECT device_id, timestamp, temperature FROM {table} LATEST ON timestamp PARTITION BY device_id)"
                for table in self.spec.table_names), times=(1,)),
            # SAMPLE BY buckets the rows by their designated timestamp; minutes without readings give no row.
            "device-downsample": self._query(
                f"SELECT timestamp, min(temperature), avg(temperature), max(temperature) FROM {self._downsample_table()} "
                f"WHERE device_id = '{DOWNSAMPLE_DEVICE}' AND timestamp >= '{_iso(DOWNSAMPLE_START_MS)}' "
                f"AND timestamp < '{_iso(DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS)}' SAMPLE BY 1m ALIGN TO CALENDAR",
                times=(0,)),
        }

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's query types of the data's use case over TSBS's layout, in QuestDB's SQL: the DevOps types
        (tsbs.py), the IoT types (tsbs_iot.py)."""
        if not self.spec.tsbs:
            return {}
        if default_queries(self.spec.shape) == TSBS_IOT_QUERIES:
            return {name: functools.partial(tsbs.answer, tsbs_iot.iot, query, literal=_literal, fetch=self._received) for name, query in IOT.items()}
        return {name: functools.partial(tsbs.answer, tsbs.devops, query, literal=_literal, fetch=self._received) for name, query in DEVOPS.items()}

    def _received(self, statement: str) -> Callable[[], list[tuple[Any, ...]]]:
        """A statement's answer, decoded into rows when called."""
        return received(self.module.conn.execute(statement))

    def _downsample_table(self) -> str:
        """The table the downsample device writes to (a device always writes to the same table)."""
        return self.spec.table_names[0]

    def _events(self) -> str:
        """The run's events as one relation: the table, or the union of the tables."""
        tables = self.spec.table_names
        if len(tables) == 1:
            return tables[0]
        return "(" + " UNION ALL ".join(f"SELECT device_id, timestamp, temperature FROM {table}" for table in tables) + ")"

    def text_query(self, language: str, text: str) -> Query:
        return self._query(text)

    def check_text(self, language: str, text: str) -> None:
        self.module.conn.execute(f"EXPLAIN {text}").fetchall()  # plans the statement, runs none of it

    def _query(self, statement: str, times: tuple[int, ...] = ()) -> Query:
        return lambda: Answer(self._received(statement), with_times(*times) if times else None)

    def scan_devices(self) -> list[str]:
        statement = " UNION ".join(f"SELECT DISTINCT device_id FROM {table}" for table in self.spec.table_names)
        return sorted(row[0] for row in self.module.conn.execute(statement).fetchall())

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device always writes to the same table, but which one is the generator's business: the
        # union of the tables (the others hold none of its rows). TIMESTAMP::long is microseconds.
        tables = self.spec.table_names
        source = tables[0] if len(tables) == 1 else "(" + " UNION ALL ".join(f"SELECT timestamp, device_id FROM {t}" for t in tables) + ")"
        statement = f"SELECT timestamp::long / 1000 FROM {source} WHERE device_id = %s ORDER BY timestamp"
        with self.module.conn.cursor() as cursor:
            yield from timestamp_pages((ms for (ms,) in cursor.stream(statement, (device,))), page_size)


def _iso(ms: int) -> str:
    """A QuestDB timestamp literal (UTC) for epoch milliseconds."""
    return np.datetime_as_string(np.datetime64(ms, "ms"), timezone="UTC")


def _literal(ms: int) -> str:
    return f"'{_iso(ms)}'"
