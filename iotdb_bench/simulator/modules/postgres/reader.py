"""The postgres module's read side: the six queries (device-downsample with `date_trunc`), the
opt-in loose-index-scan variant of newest-per-device, TSBS's query types on TSBS's layout, scans through a server-side cursor (DECLARE /
FETCH, which CockroachDB and YugabyteDB YSQL also support) inside a read-only transaction, and the
visibility probe's look-up of one event."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.base import Query, ReaderRole
from iotdb_bench.simulator.modules.postgres.options import PostgresRole
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.spec import QUERY_VARIANTS
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.wire import tsbs_sql
from iotdb_bench.simulator.wire.pg_values import received
from iotdb_bench.simulator.wire.tsbs_queries import tsbs_queries
from iotdb_bench.simulator.workload.events import EventBatch

# Opt-in variant of newest-per-device (the seed tool's issue 7): walk the distinct device ids with
# a recursive CTE (a "loose index scan" on an index leading with device_id), then fetch each
# device's newest row. YugabyteDB runs the canonical window query out of temp space; this one is
# fast there. Reported under its own name so it is never mistaken for the canonical query.
NEWEST_PER_DEVICE_LOOSE_INDEX_SCAN = QUERY_VARIANTS[0]
LOOSE_INDEX_SCAN_NEWEST_PER_DEVICE = (
    "WITH RECURSIVE devices AS ("
    "(SELECT device_id FROM events ORDER BY device_id LIMIT 1) "
    "UNION ALL "
    "SELECT (SELECT e.device_id FROM events e WHERE e.device_id > devices.device_id ORDER BY e.device_id LIMIT 1) "
    "FROM devices WHERE devices.device_id IS NOT NULL) "
    "SELECT devices.device_id, newest.timestamp, newest.temperature FROM devices CROSS JOIN LATERAL ("
    "SELECT e.timestamp, e.temperature FROM events e WHERE e.device_id = devices.device_id "
    "ORDER BY e.timestamp DESC LIMIT 1) newest"
)


class PostgresReader(PostgresRole, ReaderRole):
    tsbs_dialect = tsbs_sql.POSTGRES

    def marker_visible(self, marker: EventBatch) -> bool:
        table, device, sequence = self.marker_key(marker)
        conn = self.module.conn
        with conn.cursor() as cursor:
            row = cursor.execute(f"SELECT 1 FROM {table} WHERE device_id = %s AND sequence_number = %s LIMIT 1", (device, sequence)).fetchone()
        if not conn.autocommit:
            conn.rollback()  # a new snapshot for the next look (and no session idle in a transaction)
        return row is not None

    def queries(self) -> dict[str, Query]:
        tables = self.spec.table_names
        statements = sql_common.over_tables({**sql_common.QUERIES, "device-downsample": self.downsample_statement()}, tables)
        if len(tables) == 1:  # offered beside the canonical query, never instead of it: it runs only when a run names it
            statements[NEWEST_PER_DEVICE_LOOSE_INDEX_SCAN] = LOOSE_INDEX_SCAN_NEWEST_PER_DEVICE
        return {name: self._query(name, statement) for name, statement in statements.items()}

    def downsample_statement(self) -> str:
        return sql_common.downsample_query("date_trunc('minute', timestamp)", _timestamptz(sql_common.DOWNSAMPLE_START_MS),
                                           _timestamptz(sql_common.DOWNSAMPLE_END_MS))

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's query types of the data's use case over TSBS's layout (simulator/wire/tsbs_sql.py,
        tsbs_iot_sql.py), in this module's dialect."""
        return tsbs_queries(self.spec, self.tsbs_dialect, self._received)

    def text_query(self, language: str, text: str) -> Query:
        return lambda: Answer(self._received(text))

    def check_text(self, language: str, text: str) -> None:
        self._received(f"EXPLAIN {text}")()  # plans the statement, runs none of it

    def _query(self, name: str, statement: str) -> Query:
        return lambda: sql_common.answer(name, self._received(statement))

    def _received(self, statement: str) -> Callable[[], list[tuple[Any, ...]]]:
        """A statement's answer, leaving no transaction open; decoded into rows when called."""
        conn = self.module.conn
        cursor = conn.cursor()
        try:
            cursor.execute(statement)
        except BaseException:
            cursor.close()
            raise
        if not conn.autocommit:
            conn.commit()
        return received(cursor)

    def scan_reads_whole_table(self) -> bool:
        return sql_common.scan_reads_whole_table(self.options.primary_key_constraint, self.options.create_indices)

    def scan_devices(self) -> list[str]:
        conn = self.module.conn
        with conn.cursor() as cursor:
            devices = [row[0] for row in cursor.execute(sql_common.devices_statement(self.spec.table_names))]
        if not conn.autocommit:
            conn.commit()
        return devices

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # extract(epoch ...) is numeric (exact) on PostgreSQL 14+: milliseconds as bigint, no datetime objects.
        statement, binds = sql_common.scan_statement(self.spec.table_names, "(extract(epoch FROM timestamp) * 1000)::bigint", "%s")
        conn = self.module.conn
        with conn.transaction(), conn.cursor(name="iotbench_scan") as cursor:
            cursor.execute(statement, (device,) * binds)
            while rows := cursor.fetchmany(page_size):
                yield np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))


def _timestamptz(ms: int) -> str:
    """A TIMESTAMPTZ literal for epoch milliseconds."""
    return f"'{np.datetime_as_string(np.datetime64(ms, 'ms'), timezone='UTC')}'::timestamptz"
