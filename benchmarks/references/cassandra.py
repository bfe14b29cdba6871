"""Cassandra: the DataStax driver's execute_async, a batch's events grouped per device, each group one
UNLOGGED batch of a prepared INSERT (one single-partition mutation per request), at most 120 requests
in flight per process (the tool's `cassandra_async`), consistency LOCAL_QUORUM, Nagle off. The table
is shaped as the tool's cassandra module makes it (a partition per device, rows clustered newest
first) in keyspace ref_bench (SimpleStrategy, replication factor 1). Done when every request has been
acknowledged (flush() waits for the last ones); the rows are countable then (count at ALL)."""

from __future__ import annotations

import os
import socket
import threading

from ._events import DEVICES, Events

TARGET = "cassandra-local"
CONTRACT = "every UNLOGGED batch acknowledged at LOCAL_QUORUM (120 in flight); countable then (timed until the last acknowledgement, the count checks)"
COUNTABLE_WHEN_ACKNOWLEDGED = True
KEYSPACE, TABLE = "ref_bench", "ref_events"
IN_FLIGHT = 120
CREATE_TABLE = (
    f"CREATE TABLE {KEYSPACE}.{TABLE} (timestamp timestamp, device_id text, sequence_number bigint, temperature double, "
    "PRIMARY KEY ((device_id), timestamp, sequence_number)) WITH CLUSTERING ORDER BY (timestamp DESC, sequence_number DESC)"
)
INSERT = f"INSERT INTO {KEYSPACE}.{TABLE} (timestamp, device_id, sequence_number, temperature) VALUES (?, ?, ?, ?)"
DDL_TIMEOUT_S = 120.0


def _session():
    from cassandra import ConsistencyLevel
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile

    profile = ExecutionProfile(consistency_level=ConsistencyLevel.LOCAL_QUORUM, request_timeout=60.0)
    cluster = Cluster([os.environ.get("CASSANDRA_HOST", "127.0.0.1")], port=int(os.environ.get("CASSANDRA_PORT", "9042")),
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, sockopts=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    return cluster, cluster.connect()


def reset() -> None:
    cluster, session = _session()
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
                    timeout=DDL_TIMEOUT_S)
    session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{TABLE}", timeout=DDL_TIMEOUT_S)
    session.execute(CREATE_TABLE, timeout=DDL_TIMEOUT_S)
    cluster.shutdown()


def drop() -> None:
    cluster, session = _session()
    session.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}", timeout=DDL_TIMEOUT_S)
    cluster.shutdown()


_counting = []  # count()'s session


def count() -> int:
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    if not _counting:  # a session takes a second or so to open: once
        _counting.append(_session()[1])
    statement = SimpleStatement(f"SELECT count(*) FROM {KEYSPACE}.{TABLE}", consistency_level=ConsistencyLevel.ALL)
    return int(_counting[0].execute(statement, timeout=600.0).one()[0])


class Writer:
    def __init__(self, worker: int, batch: int):
        self.events = Events(worker, batch)
        self.cluster, self.session = _session()
        self.insert = self.session.prepare(INSERT)
        self.devices = self.events.devices.tolist()
        self.in_flight, self.error = 0, None
        self.changed = threading.Condition()

    def body(self, index: int) -> list:
        """One UNLOGGED batch per device of the batch (its rows bound to the prepared INSERT)."""
        from cassandra.query import BatchStatement, BatchType

        times, device, sequence, values = self.events.columns(index)
        statements = []
        for d in range(DEVICES):
            mine = device == d
            statement = BatchStatement(batch_type=BatchType.UNLOGGED)
            name = self.devices[d]
            for row in zip(times[mine].tolist(), sequence[mine].tolist(), values[mine].tolist()):
                statement.add(self.insert, (row[0], name, row[1], row[2]))
            statements.append(statement)
        return statements

    def send(self, body: list) -> None:
        for statement in body:
            with self.changed:
                self.changed.wait_for(lambda: self.in_flight < IN_FLIGHT or self.error is not None)
                self._raise()
                self.in_flight += 1
            self.session.execute_async(statement).add_callbacks(self._done, self._done)

    def flush(self) -> None:
        with self.changed:
            self.changed.wait_for(lambda: self.in_flight == 0)
            self._raise()

    def _done(self, result) -> None:  # on the driver's event loop thread: rows, or the error
        with self.changed:
            self.in_flight -= 1
            if isinstance(result, BaseException) and self.error is None:
                self.error = result
            self.changed.notify_all()

    def _raise(self) -> None:
        if self.error is not None:
            raise SystemExit(f"a Cassandra write failed: {self.error!r}")

