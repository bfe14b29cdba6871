"""The cassandra module's write path: UNLOGGED batches per device (one request each), sync or with
`max_sync_calls` requests in flight (each marks its own start and end through the worker's hooks),
single prepared INSERTs, and retries of writes that are safe to send again. TSBS's shapes go into
TSBS's layout (tsbs_writes.py)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.modules.cassandra.options import CassandraRole
from iotdb_bench.simulator.modules.cassandra.tsbs_writes import TsbsBatch, TsbsWrites
from iotdb_bench.simulator.modules.cassandra.wording import describe
from iotdb_bench.simulator.retry import RetriesExhausted, Retry
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.workload.events import EventBatch


@dataclass(frozen=True)
class _Request:
    """One CQL request of a batch: an UNLOGGED batch holding one device's events."""

    statement: Any
    events: int


class InsertFailed(RuntimeError):
    """An insert failed for good (after its retries); for async requests, raised on the worker's thread."""


class CassandraWriter(CassandraRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._inserts: dict[str, Any] = {}  # table -> prepared INSERT
        self._tsbs_writes: TsbsWrites | None = None
        self._in_flight = _InFlight(self.options.max_sync_calls)
        # uuid() makes a new key on every attempt: a write that timed out may have been stored, so it is
        # not sent again (refusals that guarantee nothing was written still are).
        self._idempotent = self.layout.shape == "events" or self.spec.tsbs or self.spec.primary_key is PrimaryKey.client
        retryable = _is_retryable if self._idempotent else _is_refusal
        self.retry: Retry = Retry(self.options.max_retries, retryable, first_delay_s=0.05, max_delay_s=2.0)

    def forget_statements(self) -> None:
        """The session closed: its prepared statements go with it."""
        self._inserts = {}
        self._tsbs_writes = None

    @property
    def _tsbs(self) -> TsbsWrites:
        """TSBS's layout's writes (tsbs_writes.py), prepared on the session once it is open."""
        if self._tsbs_writes is None:
            self._tsbs_writes = TsbsWrites(self.module.session, self.options.keyspace, self.spec.seed, self.spec.shape)
        return self._tsbs_writes

    def prepare_batch(self, batch: EventBatch) -> list[_Request] | TsbsBatch:
        from cassandra.query import BatchStatement, BatchType

        if self.spec.tsbs:
            return self._tsbs.prepare(batch)
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

    def _device_groups(self, batch: EventBatch) -> list[list[tuple[Any, ...]]]:
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

    def insert_batch(self, prepared: list[_Request] | TsbsBatch) -> None:
        if isinstance(prepared, TsbsBatch):  # the batch's requests as one call
            done = self.hooks.begin_call(prepared.rows)
            try:
                self._tsbs.send(prepared.requests, self.options.max_sync_calls, self.retry)
            except Exception as error:
                raise InsertFailed(f"insert failed: {describe(error)}") from error
            done()
            return
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
        if self.spec.tsbs:
            return self._tsbs.rows(batch)
        inserts = {table: self._insert_statement(table) for table in self.spec.table_names}
        return [inserts[table].bind(row) for table, row in zip(self.table_of_each(batch), self._rows(batch))]

    def _rows(self, batch: EventBatch) -> list[tuple[Any, ...]]:
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
            statement = self.module.session.prepare(
                f"INSERT INTO {self.options.keyspace}.{table} ({', '.join(columns)}) VALUES ({', '.join(values)})"
            )
            statement.is_idempotent = self._idempotent
            self._inserts[table] = statement
        return statement

    def _execute_with_retries(self, statement: Any) -> None:
        try:
            self.retry.call(lambda: self.module.session.execute(statement))
        except Exception as error:
            raise InsertFailed(f"insert failed: {describe(error)}") from error

    # Asynchronous path: callbacks run on the driver's event loop thread and must not block.
    def _send(self, request: _Request, done: Callable[[], None], attempt: int) -> None:
        try:
            future = self.module.session.execute_async(request.statement)
            future.add_callbacks(
                self._on_success, self._on_failure, callback_args=(request, done), errback_args=(request, done, attempt)
            )
        except Exception as error:  # e.g. the session was shut down; the worker's thread sees it
            self._in_flight.release(error)

    def _on_success(self, _rows: Any, request: _Request, done: Callable[[], None]) -> None:
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
            raise InsertFailed(f"an asynchronous insert failed: {describe(self._error)}") from self._error


def _is_retryable(error: BaseException) -> bool:
    """Timeouts, missing replicas and overload; the driver wraps them in NoHostAvailable after
    its own policy tried the next host, so look inside."""
    from cassandra import OperationTimedOut, Unavailable, WriteTimeout
    from cassandra.cluster import NoHostAvailable
    from cassandra.protocol import OverloadedErrorMessage

    if isinstance(error, NoHostAvailable):
        return bool(error.errors) and all(_is_retryable(inner) for inner in error.errors.values())
    return isinstance(error, (WriteTimeout, OperationTimedOut, Unavailable, OverloadedErrorMessage))


def _is_refusal(error: BaseException) -> bool:
    """Errors after which the write was certainly not applied: missing replicas, overload."""
    from cassandra import Unavailable
    from cassandra.cluster import NoHostAvailable
    from cassandra.protocol import OverloadedErrorMessage

    if isinstance(error, NoHostAvailable):
        return bool(error.errors) and all(_is_refusal(inner) for inner in error.errors.values())
    return isinstance(error, (Unavailable, OverloadedErrorMessage))
