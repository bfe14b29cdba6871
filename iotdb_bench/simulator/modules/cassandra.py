"""Apache Cassandra and YugabyteDB YCQL, through the DataStax Python driver (CQL native protocol).

Table design, one partition per device and its rows clustered newest first:
    PRIMARY KEY ((device_id), timestamp, sequence_number)
    WITH CLUSTERING ORDER BY (timestamp DESC, sequence_number DESC)
Cassandra generates no keys, so the natural key is the only key: --primary-key db (the default)
and none both mean it; client, sql and uuid are refused.

Insert modes:
- single (no --batch): one prepared INSERT per event, each waiting for its acknowledgement;
- batch: the events of a batch are grouped per device and each group goes out as one UNLOGGED
  batch, a single-partition mutation; a batch of N events becomes one request per device in it.
`max_sync_calls` = 1 sends one request at a time; above 1 that many requests stay in flight
(execute_async) and each request's latency is reported from its callback.

Writes are upserts of the natural key, so retrying a timed-out or refused write is safe: timeouts,
unavailable replicas and overloaded coordinators are retried up to `max_retries` times.

Shapes (simulator/shapes.py): `events` as above, with `sensor` and the measurements m1.. as regular
columns; `light` and `large` rows have a key `id`: a uuid made by Cassandra (`uuid()` in the INSERT,
--primary-key db or uuid; a timed-out write is then not retried, it might have been stored) or the
client's key (text); each row is its own partition, a batch one UNLOGGED multi-partition batch; light's
secondary index is a Cassandra secondary index on val1. `slim` (no key at all) cannot be a CQL table.

Reading back: device-downsample groups by `floor(timestamp, 1m)` on the server (Cassandra 4+); with
`per_device_queries=client` (YugabyteDB YCQL) the readings of the hour are fetched and bucketed per
minute on the client, inside the timed query. Scans read one partition at a time in ascending
timestamp order (the reverse of the clustering order), paged with the driver's fetch size. The
record of expected answers is a table of its own in the keyspace, `iotbench_expected`.
"""

from __future__ import annotations

import itertools
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from iotdb_bench.simulator.answers import Answer, epoch_ms, with_times
from iotdb_bench.simulator.capabilities import Capabilities
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, DatabaseModule, ModuleError, ModuleOptions, Query
from iotdb_bench.simulator.retry import RetriesExhausted, Retry
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME, PrimaryKey

log = logging.getLogger("cassandra")

ConsistencyName = Literal["ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE"]
# CQL types of each kind of column of the shapes (simulator/shapes.py).
COLUMN_TYPES = {"timestamp": "timestamp", "device": "text", "sensor": "smallint", "sequence": "bigint", "float": "double",
                "int16": "smallint", "int32": "int", "text": "text"}
# The light and large shapes have a key column: a uuid Cassandra makes (uuid() in the INSERT) or the client's key.
KEYED_SHAPE_KEYS = frozenset({PrimaryKey.db, PrimaryKey.uuid, PrimaryKey.client})
QUERY_FETCH_SIZE = 5000
DOWNSAMPLE_END_MS = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS
DDL_TIMEOUT_S = 120.0
# The driver leaves Nagle's algorithm on: with delayed ACKs every small request then waits ~40 ms.
NO_DELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


class CassandraOptions(ModuleOptions):
    contact_points: list[str] = Field(["127.0.0.1"], description="hosts, a list or a comma-separated string")
    port: int = Field(9042, ge=1, le=65535)
    username: str | None = Field(None, description="enables PlainTextAuthProvider")
    password: str | None = None
    keyspace: str = Field("iotbench", pattern=r"^[A-Za-z][A-Za-z0-9_]{0,47}$")
    replication_factor: int = Field(1, ge=1, description="SimpleStrategy; only used when the keyspace is created")
    consistency_level: ConsistencyName = "LOCAL_QUORUM"
    count_consistency_level: ConsistencyName = Field("ALL", description="for the verification count")
    max_sync_calls: int = Field(1, ge=1, description="requests in flight; 1 = each request waits")
    request_timeout: float = Field(60.0, gt=0, description="client-side seconds per request")
    connect_timeout: float = Field(10.0, gt=0)
    count_timeout: float = Field(600.0, gt=0, description="seconds for SELECT count(*) of the verification")
    max_retries: int = Field(3, ge=0)
    max_rows_per_batch: int = Field(0, ge=0, description="split one device's rows into batches of this size; 0 = no split")
    per_device_queries: Literal["server", "client"] = Field(
        "server", description="server: GROUP BY / PER PARTITION LIMIT; client: one query per device (YugabyteDB YCQL)"
    )
    local_dc: str | None = None
    protocol_version: int | None = Field(None, ge=3, le=5, description="default: negotiated")

    @field_validator("consistency_level", "count_consistency_level", mode="before")
    @classmethod
    def _upper_case(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("contact_points", mode="before")
    @classmethod
    def _split_hosts(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [host.strip() for host in value.split(",")]
        if isinstance(value, list) and not [host for host in value if host]:
            raise ValueError("at least one contact point is needed")
        return [host for host in value if host] if isinstance(value, list) else value


@dataclass(frozen=True)
class _Request:
    """One CQL request of a batch: an UNLOGGED batch holding one device's events."""

    statement: Any
    events: int


class InsertFailed(RuntimeError):
    """An insert failed for good (after its retries); for async requests, raised on the worker's thread."""


class Module(DatabaseModule):
    Options = CassandraOptions
    options: CassandraOptions
    capabilities = Capabilities(
        # Every CQL table needs a primary key, so seed 002's keyless slim table cannot be made here.
        shapes=frozenset({"events", "light", "large"}), primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}),
        measurements=True, sensors=True, markers=True, drivers=("cassandra-driver",),
        # Batch requests are marked here, one latency per CQL request, in both sync and async mode.
        marks_own_calls=True,
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._cluster = None
        self._session = None
        self._inserts: dict[str, Any] = {}  # table -> prepared INSERT
        self._scans: dict[str, Any] = {}  # table -> prepared scan of one device
        self._in_flight = _InFlight(self.options.max_sync_calls)
        # uuid() makes a new key on every attempt: a write that timed out may have been stored, so it is
        # not sent again (refusals that guarantee nothing was written still are).
        self._idempotent = self.layout.shape == "events" or spec.primary_key is PrimaryKey.client
        retryable = _is_retryable if self._idempotent else _is_refusal
        self.retry = Retry(self.options.max_retries, retryable, first_delay_s=0.05, max_delay_s=2.0)

    def validate(self) -> None:
        self.validate_workload()
        key = self.spec.primary_key
        if self.layout.shape == "events" and key not in self.capabilities.primary_keys:
            raise ModuleError(
                f"module 'cassandra' keys events by their natural key ((device_id), timestamp, sequence_number) and "
                f"cannot use --primary-key {key.value}; use --primary-key db (the default) or none"
            )
        if self.layout.has_key and self.layout.shape != "events" and key not in KEYED_SHAPE_KEYS:
            raise ModuleError(
                f"module 'cassandra' keys --schema {self.layout.shape} rows by a uuid (--primary-key db or uuid: uuid() in the INSERT) "
                f"or the client's key (client); --primary-key {key.value} does not apply"
            )
        if self.spec.task == "insert" and not self.spec.batch and self.options.max_sync_calls > 1:
            raise ModuleError(
                f"single inserts send one event at a time and wait for it; max_sync_calls={self.options.max_sync_calls} "
                "applies to batches: add --batch N, or --extra-option max_sync_calls=1"
            )

    def batch_kind(self) -> str:
        return "UNLOGGED batches per device"

    def insert_mode(self) -> str:
        mode = super().insert_mode()
        calls = self.options.max_sync_calls
        return f"{mode}, async, {calls} in flight" if calls > 1 else mode

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        return self.options.contact_points[0], self.options.port

    def connect(self) -> None:
        from cassandra import ConsistencyLevel, UnresolvableContactPoints
        from cassandra.auth import PlainTextAuthProvider
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
        from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

        options = self.options
        profile = ExecutionProfile(
            # Token awareness sends each single-partition batch straight to a replica of its device.
            load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=options.local_dc)),
            consistency_level=ConsistencyLevel.name_to_value[options.consistency_level],
            request_timeout=options.request_timeout,
        )
        extra = {"protocol_version": options.protocol_version} if options.protocol_version else {}
        auth = PlainTextAuthProvider(options.username, options.password or "") if options.username else None
        try:
            cluster = Cluster(
                options.contact_points, port=options.port, auth_provider=auth, connect_timeout=options.connect_timeout,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile}, sockopts=NO_DELAY, **extra,
            )
        except UnresolvableContactPoints:
            raise ModuleError(f"cannot connect to Cassandra at {self._addresses()}: no contact point resolves") from None
        try:
            self._session = cluster.connect()
        except NoHostAvailable as error:
            cluster.shutdown()
            reasons = "; ".join(sorted({_reason(problem) for problem in error.errors.values()})) or "no host available"
            raise ModuleError(f"cannot connect to Cassandra at {self._addresses()}: {reasons}") from None
        except Exception:
            cluster.shutdown()
            raise
        self._cluster = cluster
        log.info(
            "connected to %s (protocol v%d), consistency %s, %d request(s) in flight",
            self._addresses(), cluster.protocol_version, options.consistency_level, options.max_sync_calls,
        )

    def _addresses(self) -> str:
        return ", ".join(f"{host}:{self.options.port}" for host in self.options.contact_points)

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.shutdown()
        self._cluster = self._session = None
        self._inserts, self._scans = {}, {}

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        keyspace = self.options.keyspace
        self._session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
            f"{{'class': 'SimpleStrategy', 'replication_factor': {self.options.replication_factor}}}",
            timeout=DDL_TIMEOUT_S,
        )
        for table in self.spec.table_names:
            if self.spec.clean:
                self._session.execute(f"DROP TABLE IF EXISTS {keyspace}.{table}", timeout=DDL_TIMEOUT_S)
            self._session.execute(self.create_table_statement(table), timeout=DDL_TIMEOUT_S)
            for statement in self.index_statements(table):
                self._session.execute(statement, timeout=DDL_TIMEOUT_S)

    def create_table_statement(self, table: str) -> str:
        columns = ", ".join(f"{column.name} {COLUMN_TYPES[column.kind]}" for column in self.layout.columns)
        if self.layout.shape != "events":
            key = "text" if self.spec.primary_key is PrimaryKey.client else "uuid"
            return f"CREATE TABLE IF NOT EXISTS {self.options.keyspace}.{table} (id {key} PRIMARY KEY, {columns})"
        return (
            f"CREATE TABLE IF NOT EXISTS {self.options.keyspace}.{table} ({columns}, "
            "PRIMARY KEY ((device_id), timestamp, sequence_number)"
            ") WITH CLUSTERING ORDER BY (timestamp DESC, sequence_number DESC)"
        )

    def server_version(self) -> str | None:
        row = self._session.execute("SELECT release_version FROM system.local", timeout=DDL_TIMEOUT_S).one()
        return f"Cassandra {row[0]}"

    def index_statements(self, table: str) -> list[str]:
        """The shape's secondary index (light: val1), a Cassandra secondary index."""
        return [f"CREATE INDEX IF NOT EXISTS {table}_{name} ON {self.options.keyspace}.{table} ({name})" for name in self.layout.indexed]

    def count(self) -> int:
        from cassandra import ConsistencyLevel
        from cassandra.query import SimpleStatement

        total = 0
        for table in self.spec.table_names:
            statement = SimpleStatement(
                f"SELECT count(*) FROM {self.options.keyspace}.{table}",
                consistency_level=ConsistencyLevel.name_to_value[self.options.count_consistency_level],
            )
            total += self._session.execute(statement, timeout=self.options.count_timeout).one()[0]
        return total

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> list[_Request]:
        from cassandra.query import BatchStatement, BatchType

        requests = []
        for table, part in self.per_table(batch):
            insert = self._insert_statement(table)
            for rows in self._device_groups(part):
                statement = BatchStatement(batch_type=BatchType.UNLOGGED)
                statement.is_idempotent = self._idempotent
                for row in rows:
                    statement.add(insert, row)
                requests.append(_Request(statement, len(rows)))
        return requests

    def _device_groups(self, batch: EventBatch) -> list[list[tuple]]:
        """The batch's rows grouped per device (one partition each), split at `max_rows_per_batch`. Rows
        of the light and large shapes are each their own partition: one group, split the same way."""
        if self.layout.shape != "events":
            rows = self._rows(batch)
            starts = [0, len(rows)]
        else:
            by_device = batch.select(np.argsort(batch.device_index, kind="stable"))
            rows = self._rows(by_device)
            starts = [0, *(np.flatnonzero(np.diff(by_device.device_index)) + 1).tolist(), len(rows)]
        limit = self.options.max_rows_per_batch
        groups = []
        for begin, end in itertools.pairwise(starts):
            step = limit or end - begin
            groups += [rows[first : min(first + step, end)] for first in range(begin, end, step)]
        return groups

    def insert_batch(self, prepared: list[_Request]) -> None:
        if self.options.max_sync_calls == 1:
            for request in prepared:
                done = self.hooks.begin_call(request.events)
                self._execute_with_retries(request.statement)
                done()
            return
        for request in prepared:
            self._in_flight.acquire()
            self._send(request, self.hooks.begin_call(request.events), attempt=0)

    def prepare_single(self, batch: EventBatch) -> list[Any]:
        inserts = {table: self._insert_statement(table) for table in self.spec.table_names}
        return [inserts[table].bind(row) for table, row in zip(self.table_of_each(batch), self._rows(batch))]

    def _rows(self, batch: EventBatch) -> list[tuple]:
        """Rows in the INSERT's column order (timestamps as epoch milliseconds; the key last, if the client's)."""
        return self.layout.python_rows(batch, key=batch.client_key if self.spec.primary_key is PrimaryKey.client else None)

    def insert_single(self, item: Any) -> None:
        done = self.hooks.begin_call(1)
        self._execute_with_retries(item)
        done()

    def flush(self) -> None:
        self._in_flight.wait_all()

    def _insert_statement(self, table: str) -> Any:
        statement = self._inserts.get(table)
        if statement is None:
            columns, values = list(self.layout.names), ["?"] * len(self.layout.names)
            if self.layout.shape != "events":  # keyed shapes: Cassandra's uuid(), or the client's key
                columns.append("id")
                values.append("?" if self.spec.primary_key is PrimaryKey.client else "uuid()")
            statement = self._session.prepare(
                f"INSERT INTO {self.options.keyspace}.{table} ({', '.join(columns)}) VALUES ({', '.join(values)})"
            )
            statement.is_idempotent = self._idempotent
            self._inserts[table] = statement
        return statement

    def _execute_with_retries(self, statement: Any) -> None:
        try:
            self.retry.call(lambda: self._session.execute(statement))
        except Exception as error:
            raise InsertFailed(f"insert failed: {_describe(error)}") from error

    # Asynchronous path: callbacks run on the driver's event loop thread and must not block.
    def _send(self, request: _Request, done: Callable[[], None], attempt: int) -> None:
        try:
            future = self._session.execute_async(request.statement)
            future.add_callbacks(
                self._on_success, self._on_failure, callback_args=(request, done), errback_args=(request, done, attempt)
            )
        except Exception as error:  # e.g. the session was shut down; the worker's thread sees it
            self._in_flight.release(error)

    def _on_success(self, _rows, request: _Request, done: Callable[[], None]) -> None:
        error = None
        try:
            done()
        except Exception as problem:
            error = problem
        self._in_flight.release(error)

    def _on_failure(self, error: Exception, request: _Request, done: Callable[[], None], attempt: int) -> None:
        try:
            pause = self.retry.pause(error, attempt)
        except RetriesExhausted:
            pause = None
        if pause is None:
            self._in_flight.release(error)
            return
        timer = threading.Timer(pause, self._send, args=(request, done, attempt + 1))
        timer.daemon = True
        timer.start()

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        table = f"{self.options.keyspace}.{RECORD_NAME}"
        self._session.execute(f"CREATE TABLE IF NOT EXISTS {table} (tables text PRIMARY KEY, record text)", timeout=DDL_TIMEOUT_S)
        self._session.execute(self._record_statement(f"INSERT INTO {table} (tables, record) VALUES (%s, %s)"), (self.record_key(), text))

    def _record_statement(self, cql: str):
        """The record is written and read at the verification count's consistency, not the inserts'
        (a consistency_level the cluster cannot give must fail the inserts, not the bookkeeping)."""
        from cassandra import ConsistencyLevel
        from cassandra.query import SimpleStatement

        return SimpleStatement(cql, consistency_level=ConsistencyLevel.name_to_value[self.options.count_consistency_level])

    def stored_record(self) -> str | None:
        exists = self._session.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
            (self.options.keyspace, RECORD_NAME)).one()
        if exists is None:
            return None
        row = self._session.execute(self._record_statement(f"SELECT record FROM {self.options.keyspace}.{RECORD_NAME} WHERE tables = %s"),
                                    (self.record_key(),)).one()
        return row[0] if row else None

    # -- queries ---------------------------------------------------------------------------
    def marker_visible(self, marker: EventBatch) -> bool:
        """The marker's row by its whole key, at the run's consistency level (ONE on a cluster may miss it)."""
        table, device, sequence = self.marker_key(marker)
        statement = f"SELECT sequence_number FROM {self.options.keyspace}.{table} WHERE device_id = %s AND timestamp = %s AND sequence_number = %s"
        return self._session.execute(statement, (device, int(marker.timestamp_ms[0]), sequence)).one() is not None

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

    def _timeout(self) -> float | None:
        return self.spec.query_timeout or None

    def _query(self, cql: str, times: tuple[int, ...] = ()) -> Query:
        def run() -> Answer:
            from cassandra.query import SimpleStatement

            result = self._session.execute(SimpleStatement(cql, fetch_size=QUERY_FETCH_SIZE), timeout=self._timeout())
            return Answer(list(result), with_times(*times))

        return run

    def _bucketed_on_client(self, cql: str) -> Query:
        """device-downsample where CQL cannot group by time (YugabyteDB YCQL): the hour's readings,
        bucketed per minute here, as part of the query's time."""

        def run() -> Answer:
            from cassandra.query import SimpleStatement

            buckets: dict[int, list[float]] = {}
            for timestamp, value in self._session.execute(SimpleStatement(cql, fetch_size=QUERY_FETCH_SIZE), timeout=self._timeout()):
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
            devices = [(row[0],) for row in self._session.execute(listing, timeout=self._timeout())]
            statement = self._session.prepare(cql)
            results = execute_concurrent_with_args(self._session, statement, devices, concurrency=32, raise_on_first_error=True)
            return Answer([row for _ok, rows in results for row in rows], with_times(*times))

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        from cassandra.query import SimpleStatement

        devices: set[str] = set()
        for table in self.spec.table_names:
            listing = SimpleStatement(f"SELECT DISTINCT device_id FROM {self.options.keyspace}.{table}", fetch_size=QUERY_FETCH_SIZE)
            devices.update(row[0] for row in self._session.execute(listing, timeout=self.options.count_timeout))
        return sorted(devices)

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # One partition per device: ascending timestamps are the clustering order reversed, which
        # Cassandra reads without sorting. A device lives in one table; the others return nothing.
        for table in self.spec.table_names:
            if table not in self._scans:
                self._scans[table] = self._session.prepare(
                    f"SELECT toUnixTimestamp(timestamp), temperature FROM {self.options.keyspace}.{table} "
                    "WHERE device_id = ? ORDER BY timestamp ASC")
            statement = self._scans[table].bind((device,))
            statement.fetch_size = page_size
            result = self._session.execute(statement, timeout=self.options.request_timeout)
            while True:
                rows = result.current_rows
                if rows:
                    yield np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
                if not result.has_more_pages:
                    break
                result.fetch_next_page()


class _InFlight:
    """Bounds the asynchronous requests in flight and keeps the first error for the worker's thread."""

    def __init__(self, limit: int):
        self._limit = limit
        self._count = 0
        self._error: Exception | None = None
        self._changed = threading.Condition()

    def acquire(self) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._count < self._limit or self._error is not None)
            self._raise_error()
            self._count += 1

    def release(self, error: Exception | None = None) -> None:
        with self._changed:
            self._count -= 1
            if error is not None and self._error is None:
                self._error = error
            self._changed.notify_all()

    def wait_all(self) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._count == 0)
            self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise InsertFailed(f"an asynchronous insert failed: {_describe(self._error)}") from self._error


def _is_retryable(error: Exception) -> bool:
    """Timeouts, missing replicas and overload; the driver wraps them in NoHostAvailable after
    its own policy tried the next host, so look inside."""
    from cassandra import OperationTimedOut, Unavailable, WriteTimeout
    from cassandra.cluster import NoHostAvailable
    from cassandra.protocol import OverloadedErrorMessage

    if isinstance(error, NoHostAvailable):
        return bool(error.errors) and all(_is_retryable(inner) for inner in error.errors.values())
    return isinstance(error, (WriteTimeout, OperationTimedOut, Unavailable, OverloadedErrorMessage))


def _is_refusal(error: Exception) -> bool:
    """Errors after which the write was certainly not applied: missing replicas, overload."""
    from cassandra import Unavailable
    from cassandra.cluster import NoHostAvailable
    from cassandra.protocol import OverloadedErrorMessage

    if isinstance(error, NoHostAvailable):
        return bool(error.errors) and all(_is_refusal(inner) for inner in error.errors.values())
    return isinstance(error, (Unavailable, OverloadedErrorMessage))


def _describe(error: Exception) -> str:
    """One line; the per-host errors of NoHostAvailable instead of its tuple repr."""
    from cassandra.cluster import NoHostAvailable

    if isinstance(error, NoHostAvailable) and error.errors:
        return "; ".join(f"{getattr(host, 'endpoint', host)}: {_describe(inner)}" for host, inner in error.errors.items())
    return one_line(error)


def _reason(error: Exception) -> str:
    """The useful end of a driver connection error ("... Last error: Connection refused")."""
    return one_line(error).rsplit("Last error: ", 1)[-1] or type(error).__name__
