"""The cassandra module's read side: the six queries (device-downsample grouped by `floor(timestamp,
1m)` on the server, or bucketed on the client for YugabyteDB YCQL), TSBS's DevOps and IoT query types
on TSBS's layout (tsbs_queries.py, tsbs_iot_queries.py), the scan of one partition at a time in ascending time order, and the
visibility probe's look-up of one row by its whole key."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer, epoch_ms, with_times
from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import DatabaseModule, Query, ReaderRole
from iotdb_bench.simulator.modules.cassandra.options import DOWNSAMPLE_END_MS, QUERY_FETCH_SIZE, CassandraRole
from iotdb_bench.simulator.modules.cassandra.tsbs_iot_queries import IotQueries
from iotdb_bench.simulator.modules.cassandra.tsbs_iot_series import IotIndex
from iotdb_bench.simulator.modules.cassandra.tsbs_queries import TsbsQueries
from iotdb_bench.simulator.modules.cassandra.tsbs_series import SeriesIndex
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, DevopsQuery
from iotdb_bench.simulator.queries.tsbs_iot import IOT, IotQuery
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs.data import TsbsData


class CassandraReader(CassandraRole, ReaderRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._scans: dict[str, Any] = {}  # table -> prepared scan of one device
        self._tsbs_queries: TsbsQueries | None = None
        self._iot_queries: IotQueries | None = None

    def forget_statements(self) -> None:
        """The session closed: its prepared statements go with it."""
        self._scans = {}
        self._tsbs_queries = None
        self._iot_queries = None

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's DevOps or IoT query types over TSBS's layout (tsbs_queries.py, tsbs_iot_queries.py)."""
        if not self.spec.tsbs:
            return {}
        if self.spec.shape == "tsbs-iot":
            return {name: functools.partial(self._iot_query, kind) for name, kind in IOT.items()}
        return {name: functools.partial(self._tsbs_query, kind) for name, kind in DEVOPS.items()}

    def _tsbs_query(self, kind: DevopsQuery, parameters: Parameters) -> Query:
        return self._tsbs.query(kind, parameters)

    def _iot_query(self, kind: IotQuery, parameters: Parameters) -> Query:
        return self._iot.query(kind, parameters)

    def _planned(self) -> TsbsData | None:
        """A mixed run's query client reads the series the run is writing (None: the database's)."""
        return TsbsData.of(self.spec) if self.spec.task == "insert" else None

    @property
    def _tsbs(self) -> TsbsQueries:
        if self._tsbs_queries is None:
            data = self._planned()
            planned = SeriesIndex.planned(data.seed, data.hosts, data.start_ms, data.end_ms) if data else None
            self._tsbs_queries = TsbsQueries(self.module.session, self.options.keyspace, self.options.query_concurrency,
                                             self.options.count_timeout, planned)
        return self._tsbs_queries

    @property
    def _iot(self) -> IotQueries:
        if self._iot_queries is None:
            data = self._planned()
            planned = IotIndex.planned(data.seed, data.hosts, data.start_ms, data.end_ms) if data else None
            self._iot_queries = IotQueries(self.module.session, self.options.keyspace, self.options.query_concurrency,
                                           self.options.count_timeout, planned)
        return self._iot_queries

    def marker_visible(self, marker: EventBatch) -> bool:
        """The marker's row by its whole key, at the run's consistency level (ONE on a cluster may miss it)."""
        table, device, sequence = self.marker_key(marker)
        statement = f"SELECT sequence_number FROM {self.options.keyspace}.{table} WHERE device_id = %s AND timestamp = %s AND sequence_number = %s"
        return self.module.session.execute(statement, (device, int(marker.timestamp_ms[0]), sequence)).one() is not None

    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        table = f"{self.options.keyspace}.{SINGLE_TABLE_NAME}"
        hour = f"device_id = '{DOWNSAMPLE_DEVICE}' AND timestamp >= {DOWNSAMPLE_START_MS} AND timestamp < {DOWNSAMPLE_END_MS}"
        whole_table = {
            "count-events": f"SELECT count(*) FROM {table}",
            "temperature-min-max": f"SELECT min(temperature), max(temperature) FROM {table}",
            "temperature-stats": f"SELECT min(temperature), avg(temperature), max(temperature) FROM {table}",
        }
        queries: dict[str, Query] = {name: self._query(statement) for name, statement in whole_table.items()}
        if self.options.per_device_queries == "server":
            queries["temperature-stats-per-device"] = self._query(
                f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {table} GROUP BY device_id"
            )
            queries["newest-per-device"] = self._query(
                f"SELECT device_id, timestamp, temperature FROM {table} PER PARTITION LIMIT 1", times=(1,)
            )
            queries["device-downsample"] = self._query(
                f"SELECT floor(timestamp, 1m), min(temperature), avg(temperature), max(temperature) FROM {table} "
                f"WHERE {hour} GROUP BY device_id, floor(timestamp, 1m)", times=(0,)
            )
        else:
            queries["temperature-stats-per-device"] = self._per_device_query(
                f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {table} WHERE device_id = ?"
            )
            queries["newest-per-device"] = self._per_device_query(
                f"SELECT device_id, timestamp, temperature FROM {table} WHERE device_id = ? LIMIT 1", times=(1,)
            )
            queries["device-downsample"] = self._bucketed_on_client(f"SELECT timestamp, temperature FROM {table} WHERE {hour}")
        return queries

    def text_query(self, language: str, text: str) -> Query:
        self._in_keyspace()  # untimed: a query file names the tables as the user sees them (`events`)
        return self._query(text)

    def check_text(self, language: str, text: str) -> None:
        self._in_keyspace()
        self.module.session.prepare(text)  # parsed and checked against the schema, run none of it

    def _in_keyspace(self) -> None:
        if self.module.session.keyspace != self.options.keyspace:
            self.module.session.set_keyspace(self.options.keyspace)

    def _timeout(self) -> float | None:
        return self.spec.query_timeout or None

    def _query(self, cql: str, times: tuple[int, ...] = ()) -> Query:
        def run() -> Answer:
            from cassandra.query import SimpleStatement

            result = self.module.session.execute(SimpleStatement(cql, fetch_size=QUERY_FETCH_SIZE), timeout=self._timeout())
            return Answer(list(result), with_times(*times))

        return run

    def _bucketed_on_client(self, cql: str) -> Query:
        """device-downsample where CQL cannot group by time (YugabyteDB YCQL): the hour's readings,
        bucketed per minute here, as part of the query's time."""

        def run() -> Answer:
            from cassandra.query import SimpleStatement

            buckets: dict[int, list[float]] = {}
            for timestamp, value in self.module.session.execute(SimpleStatement(cql, fetch_size=QUERY_FETCH_SIZE), timeout=self._timeout()):
                minute = epoch_ms(timestamp) // MINUTE_MS * MINUTE_MS
                bucket = buckets.setdefault(minute, [value, 0.0, value, 0])
                bucket[0], bucket[1], bucket[2], bucket[3] = min(bucket[0], value), bucket[1] + value, max(bucket[2], value), bucket[3] + 1
            return Answer([(minute, low, total / count, high) for minute, (low, total, high, count) in sorted(buckets.items())])

        return run

    def _per_device_query(self, cql: str, times: tuple[int, ...] = ()) -> Query:
        """Lists the partitions (SELECT DISTINCT), then runs `cql` once per device, concurrently."""

        def run() -> Answer:
            from cassandra.concurrent import execute_concurrent_with_args
            from cassandra.query import SimpleStatement

            table = f"{self.options.keyspace}.{SINGLE_TABLE_NAME}"
            listing = SimpleStatement(f"SELECT DISTINCT device_id FROM {table}", fetch_size=QUERY_FETCH_SIZE)
            devices = [(row[0],) for row in self.module.session.execute(listing, timeout=self._timeout())]
            statement = self.module.session.prepare(cql)
            results = execute_concurrent_with_args(self.module.session, statement, devices, concurrency=32, raise_on_first_error=True)
            return Answer([row for _ok, rows in results for row in rows], with_times(*times))

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        from cassandra.query import SimpleStatement

        devices: set[str] = set()
        for table in self.spec.table_names:
            listing = SimpleStatement(f"SELECT DISTINCT device_id FROM {self.options.keyspace}.{table}", fetch_size=QUERY_FETCH_SIZE)
            devices.update(row[0] for row in self.module.session.execute(listing, timeout=self.options.count_timeout))
        return sorted(devices)

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # One partition per device: ascending timestamps are the clustering order reversed, which
        # Cassandra reads without sorting. A device lives in one table; the others return nothing.
        for table in self.spec.table_names:
            if table not in self._scans:
                self._scans[table] = self.module.session.prepare(
                    f"SELECT toUnixTimestamp(timestamp), temperature FROM {self.options.keyspace}.{table} "
                    "WHERE device_id = ? ORDER BY timestamp ASC")
            statement = self._scans[table].bind((device,))
            statement.fetch_size = page_size
            result = self.module.session.execute(statement, timeout=self.options.request_timeout)
            while True:
                rows = result.current_rows
                if rows:
                    yield np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
                if not result.has_more_pages:
                    break
                result.fetch_next_page()
