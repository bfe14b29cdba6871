"""The mysql module's read side: the six queries (device-downsample buckets with TIMESTAMPDIFF in
minutes), TSBS's DevOps and IoT query types on TSBS's layout (simulator/wire/tsbs_sql.py's MySQL dialect),
scans through an unbuffered cursor (SSCursor: rows stream from the server as they are fetched), and the visibility probe's look-up of one event; each reads a fresh snapshot."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.base import Query, ReaderRole
from iotdb_bench.simulator.modules.mysql.options import MysqlRole
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.wire import tsbs_sql
from iotdb_bench.simulator.wire.tsbs_queries import tsbs_queries
from iotdb_bench.simulator.workload.events import EventBatch


class MysqlReader(MysqlRole, ReaderRole):
    def marker_visible(self, marker: EventBatch) -> bool:
        table, device, sequence = self.marker_key(marker)
        self.module.fresh_snapshot()
        with self.module.conn.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {table} WHERE device_id = %s AND sequence_number = %s LIMIT 1", (device, sequence))
            return cursor.fetchone() is not None

    def queries(self) -> dict[str, Query]:
        epoch = "'1970-01-01 00:00:00'"
        statements = {**sql_common.QUERIES, "device-downsample": sql_common.downsample_query(
            f"TIMESTAMPDIFF(MINUTE, {epoch}, timestamp) * 60000", _datetime(sql_common.DOWNSAMPLE_START_MS),
            _datetime(sql_common.DOWNSAMPLE_END_MS))}
        return {name: self._query(name, statement) for name, statement in sql_common.over_tables(statements, self.spec.table_names).items()}

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's query types of the data's use case over TSBS's layout, in MySQL's and MariaDB's words
        (simulator/wire/tsbs_sql.py, tsbs_iot_sql.py)."""
        return tsbs_queries(self.spec, tsbs_sql.MYSQL, self._fetch)

    def _query(self, name: str, statement: str) -> Query:
        return lambda: sql_common.answer(name, self._fetch(statement))

    def text_query(self, language: str, text: str) -> Query:
        return lambda: Answer(self._fetch(text))

    def check_text(self, language: str, text: str) -> None:
        self._fetch(f"EXPLAIN {text}")  # plans the statement, runs none of it

    def _fetch(self, statement: str) -> list[tuple[Any, ...]]:
        """Every row of a statement, from a fresh snapshot."""
        self.module.fresh_snapshot()
        with self.module.conn.cursor() as cursor:
            cursor.execute(statement)
            return list(cursor.fetchall())

    def scan_reads_whole_table(self) -> bool:
        return sql_common.scan_reads_whole_table(self.options.primary_key_constraint, self.options.create_indices)

    def scan_devices(self) -> list[str]:
        self.module.fresh_snapshot()
        with self.module.conn.cursor() as cursor:
            cursor.execute(sql_common.devices_statement(self.spec.table_names))
            return [row[0] for row in cursor.fetchall()]

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        import pymysql.cursors

        self.module.fresh_snapshot()
        milliseconds = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', timestamp) DIV 1000"
        statement, binds = sql_common.scan_statement(self.spec.table_names, milliseconds, "%s")
        with self.module.conn.cursor(pymysql.cursors.SSCursor) as cursor:
            cursor.execute(statement, (device,) * binds)
            while rows := cursor.fetchmany(page_size):
                yield np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))


def _datetime(ms: int) -> str:
    """A DATETIME literal (UTC, the session's time zone) for epoch milliseconds."""
    return "'" + np.datetime_as_string(np.datetime64(ms, "ms")).replace("T", " ") + "'"
