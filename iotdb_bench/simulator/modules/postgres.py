"""PostgreSQL and its wire-compatible relatives (CockroachDB, YugabyteDB YSQL, TimescaleDB's base).

Insert modes:
- single (no --batch): one INSERT per event with autocommit, the durable-per-message case;
- batch, COPY (default): one binary COPY per batch, built with NumPy, committed on its own: into one
  table the COPY runs in autocommit (the server commits it; no BEGIN and COMMIT round trips), sent
  through the driver's libpq wrapper (simulator/wire/pg_copy_call.py: half the client CPU of its
  Copy objects); into several tables the batch's COPYs in one transaction;
- batch, values lists (`use_values_lists=true` or `batch_mode=values`): multi-row INSERTs, then COMMIT;
- batch, transaction (`batch_mode=transaction`): N single-row INSERTs pipelined, then one COMMIT.
Serialisation failures, deadlocks and CockroachDB's restart errors are retried a bounded number of times.

Reading back: the six queries (device-downsample with `date_trunc`), and scans through a server-side
cursor (DECLARE / FETCH, which CockroachDB and YugabyteDB YSQL also support) inside a read-only
transaction. The record of expected answers is a table of its own, `iotbench_expected`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, PrepareNext
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.spec import QUERY_VARIANTS, PrimaryKey
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.wire.pg_copy import CopyRowEncoder
from iotdb_bench.simulator.wire.pg_copy_call import copy_in

# SQLSTATEs worth retrying: serialization_failure, deadlock_detected.
RETRYABLE_SQLSTATES = {"40001", "40P01"}
BATCH_KINDS = {"copy": "COPY", "values": "values lists", "transaction": "single-row INSERTs in one transaction"}
MAX_BIND_PARAMETERS = 65_535

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


class PostgresOptions(ModuleOptions):
    connection_string: str = Field("", description="libpq connection string; PG* environment variables fill the gaps")
    password: str | None = None
    use_values_lists: bool = False
    batch_mode: Literal["copy", "values", "transaction"] | None = None
    copy_supported: bool = True
    primary_key_constraint: str | None = None
    install_extensions: str = ""
    create_indices: bool = False
    max_retries: int = Field(10, ge=0)
    session_statements: str = Field("", description="SQL run on every new connection, ';'-separated")
    connect_timeout: int = Field(10, ge=1)


# Column types of each kind of column of the shapes (simulator/shapes.py).
COLUMN_TYPES = {"timestamp": "TIMESTAMPTZ", "device": f"VARCHAR({DEVICE_ID_WIDTH})", "sensor": "SMALLINT", "sequence": "BIGINT",
                "float": "DOUBLE PRECISION", "int16": "SMALLINT", "int32": "INTEGER", "text": f"VARCHAR({TEXT_WIDTH})"}


class Module(OneClassModule):
    Options = PostgresOptions
    options: PostgresOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, measurements=True, sensors=True, transactions=True, markers=True, drivers=("psycopg", "psycopg-binary"),
        # COPY sends the rows before it waits for the server, which leaves time to prepare the next
        # batch (about 50 us per 1000 events against milliseconds of server work); the other batch
        # modes prepare it in a helper thread (see __init__).
        prepare_next=PrepareNext.during_call,
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._conn = None
        self.retry = Retry(self.options.max_retries, _is_retryable)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        self._columns = self.layout.names + (("id",) if self._with_key else ())
        self._copy_rows = CopyRowEncoder(self.layout, self._with_key)
        self._copy_statements = {
            table: f"COPY {table} ({', '.join(self._columns)}) FROM STDIN (FORMAT BINARY)" for table in self.spec.table_names
        }
        self._copy_statement_bytes = {table: statement.encode() for table, statement in self._copy_statements.items()}
        self._single_statements = {table: sql_common.insert_statement(table, self._columns, 1, "%s") for table in self.spec.table_names}
        if self.batch_mode != "copy":
            self.capabilities = dataclasses.replace(self.capabilities, prepare_next=PrepareNext.helper_thread)

    def validate(self) -> None:
        super().validate()
        self.check_query_indices(self.options.create_indices)
        if self.spec.batch and self.batch_mode == "copy" and not self.options.copy_supported:
            raise ModuleError(
                f"target '{self.spec.target}' does not support COPY; use --extra-option use_values_lists=true"
            )

    @property
    def batch_mode(self) -> str:
        if self.options.batch_mode:
            return self.options.batch_mode
        return "values" if self.options.use_values_lists else "copy"

    def batch_kind(self) -> str:
        return BATCH_KINDS[self.batch_mode]

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        import psycopg

        try:
            self._conn = psycopg.connect(
                self.options.connection_string,
                password=self.options.password or None,
                connect_timeout=self.options.connect_timeout,
                autocommit=True,
            )
        except psycopg.OperationalError as error:
            host, port = self._address()
            reason = one_line(str(error).strip().splitlines()[-1] if str(error).strip() else error)
            raise ModuleError(f"cannot connect to PostgreSQL at {host}:{port}: {reason}") from None
        with self._conn.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")
            for statement in filter(None, (s.strip() for s in self.options.session_statements.split(";"))):
                cursor.execute(statement)
            if self.spec.task == "query" and self.spec.query_timeout:
                cursor.execute(f"SET statement_timeout = {int(self.spec.query_timeout * 1000)}")
        # Batches are one transaction each; single inserts, and COPY batches that are one statement,
        # commit by themselves (autocommit); with --commit-interval the worker commits single inserts.
        self._conn.autocommit = (not self.spec.batch and not self.spec.commit_interval_s) or (bool(self.spec.batch) and self._one_copy_per_batch)

    @property
    def _one_copy_per_batch(self) -> bool:
        return self.batch_mode == "copy" and len(self.spec.table_names) == 1

    def _address(self) -> tuple[str, str]:
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(self.options.connection_string)
        return (
            str(params.get("host") or os.environ.get("PGHOST", "localhost")),
            str(params.get("port") or os.environ.get("PGPORT", "5432")),
        )

    def server_address(self) -> tuple[str, int] | None:
        host, port = self._address()
        host = host.split(",")[0]
        # A Unix-socket folder: the server listens on the socket file named after the port.
        return (f"{host}/.s.PGSQL.{port}" if host.startswith("/") else host), int(port.split(",")[0])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        self._conn.autocommit = True
        with self._conn.cursor() as cursor:
            for extension in filter(None, (e.strip() for e in self.options.install_extensions.split(","))):
                cursor.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}")
            for table in self.spec.table_names:
                if self.spec.clean:
                    cursor.execute(f"DROP TABLE IF EXISTS {table}")
                cursor.execute(self.create_table_statement(table))
                if self.options.create_indices:
                    for statement in sql_common.index_statements(table):
                        cursor.execute(statement)
                for statement in sql_common.shape_index_statements(table, self.layout):
                    cursor.execute(statement)
                self.after_create_table(cursor, table)

    def after_create_table(self, cursor, table: str) -> None:
        """Hook for relatives that turn the table into something more (TimescaleDB hypertables)."""

    def create_table_statement(self, table: str) -> str:
        key_column = {
            PrimaryKey.db: "id BIGSERIAL",
            PrimaryKey.sql: f"id BIGINT GENERATED ALWAYS AS IDENTITY (CACHE {max(self.spec.batch, 1)})",
            PrimaryKey.client: f"id VARCHAR({CLIENT_KEY_WIDTH})",
            PrimaryKey.uuid: "id UUID DEFAULT gen_random_uuid()",
            PrimaryKey.none: None,
        }[self.spec.primary_key]
        default_constraint = None if key_column is None else "PRIMARY KEY (id)"
        constraint = self.options.primary_key_constraint or default_constraint
        parts = [key_column] if key_column else []
        parts += [f"{column.name} {COLUMN_TYPES[column.kind]} NOT NULL" for column in self.layout.columns]
        if constraint:
            parts.append(constraint)
        return f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(parts)})"

    def missing_tables(self) -> list[str] | None:
        import psycopg

        names = [*self.spec.table_names, RECORD_NAME]
        try:
            with self._conn.cursor() as cursor:
                found = cursor.execute(f"SELECT {', '.join(['to_regclass(%s) IS NOT NULL'] * len(names))}", names).fetchone()
        except psycopg.Error:  # a wire-compatible server without to_regclass: its queries will say it
            return None
        finally:
            if not self._conn.autocommit:
                self._conn.rollback()
        return [] if any(found) else list(self.spec.table_names)

    def count(self) -> int:
        with self._conn.cursor() as cursor:
            return sum(cursor.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in self.spec.table_names)

    def server_version(self) -> str | None:
        # version() rather than server_version: wire-compatible servers name themselves there.
        return str(self.read_one("SELECT version()")[0])

    def read_one(self, statement: str) -> tuple | None:
        """One row of a read-only statement, leaving no transaction open (batch mode turns autocommit off)."""
        with self._conn.cursor() as cursor:
            row = cursor.execute(statement).fetchone()
        if not self._conn.autocommit:
            self._conn.rollback()
        return row

    def server_counters(self) -> dict[str, int] | None:
        """Rows inserted into the run's tables according to the server's statistics."""
        with self._conn.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            row = cursor.execute(
                "SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = ANY(%s)",
                (self.spec.table_names,),
            ).fetchone()
        return {"rows_inserted": int(row[0])}

    def storage_bytes(self) -> int | None:
        with self._conn.cursor() as cursor:
            return sum(
                cursor.execute("SELECT pg_total_relation_size(%s)", (table,)).fetchone()[0] or 0
                for table in self.spec.table_names
            )

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> Any:
        encode = self._copy_rows.encode if self.batch_mode == "copy" else self._row_params
        return [(table, encode(part)) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: Any) -> None:
        if self._one_copy_per_batch and self._conn.autocommit:
            [(table, buffer)] = prepared
            self.retry.call(lambda: copy_in(self._conn, self._copy_statement_bytes[table], buffer, self.hooks.while_waiting))
            return
        insert = {"copy": self._copy, "values": self._values_lists, "transaction": self._transaction}[self.batch_mode]

        def transaction() -> None:
            with self._conn.cursor() as cursor:
                for table, payload in prepared:
                    insert(cursor, table, payload)
            if not self._conn.autocommit:
                self._conn.commit()

        self.retry.call(transaction, before_retry=self._conn.rollback)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, tuple]]:
        return list(zip(self.table_of_each(batch), self._row_params(batch)))

    def insert_single(self, item: tuple[str, tuple]) -> None:
        table, row = item
        statement = self._single_statements[table]
        if self._conn.autocommit:
            self.retry.call(lambda: self._conn.execute(statement, row))
        else:  # inside the --commit-interval transaction: a failed statement spoils it, nothing to retry
            self._conn.execute(statement, row)

    def commit(self) -> None:
        self._conn.commit()

    def _row_params(self, batch: EventBatch) -> list[tuple]:
        return self.layout.python_rows(batch, timestamp=_datetimes, key=batch.client_key if self._with_key else None)

    def _copy(self, cursor, table: str, buffer: bytes) -> None:
        with cursor.copy(self._copy_statements[table]) as copy:
            copy.write(buffer)
            self.hooks.while_waiting()

    def _values_lists(self, cursor, table: str, rows: list[tuple]) -> None:
        per_statement = MAX_BIND_PARAMETERS // len(self._columns)
        for first in range(0, len(rows), per_statement):
            chunk = rows[first : first + per_statement]
            statement = sql_common.insert_statement(table, self._columns, len(chunk), "%s")
            cursor.execute(statement, [value for row in chunk for value in row])

    def _transaction(self, cursor, table: str, rows: list[tuple]) -> None:
        cursor.executemany(sql_common.insert_statement(table, self._columns, 1, "%s"), rows)

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        with self._conn.cursor() as cursor:
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {RECORD_NAME} (tables TEXT PRIMARY KEY, record TEXT NOT NULL)")
            cursor.execute(f"INSERT INTO {RECORD_NAME} (tables, record) VALUES (%s, %s) "
                           "ON CONFLICT (tables) DO UPDATE SET record = EXCLUDED.record", (self.record_key(), text))
        if not self._conn.autocommit:
            self._conn.commit()

    def stored_record(self) -> str | None:
        with self._conn.cursor() as cursor:
            found = cursor.execute("SELECT to_regclass(%s)", (RECORD_NAME,)).fetchone()[0]
            row = cursor.execute(f"SELECT record FROM {RECORD_NAME} WHERE tables = %s", (self.record_key(),)).fetchone() if found else None
        if not self._conn.autocommit:
            self._conn.commit()
        return row[0] if row else None

    def marker_visible(self, marker: EventBatch) -> bool:
        table, device, sequence = self.marker_key(marker)
        with self._conn.cursor() as cursor:
            row = cursor.execute(f"SELECT 1 FROM {table} WHERE device_id = %s AND sequence_number = %s LIMIT 1", (device, sequence)).fetchone()
        if not self._conn.autocommit:
            self._conn.rollback()  # a new snapshot for the next look (and no session idle in a transaction)
        return row is not None

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        tables = self.spec.table_names
        statements = sql_common.over_tables({**sql_common.QUERIES, "device-downsample": self.downsample_statement()}, tables)
        if len(tables) == 1:  # offered beside the canonical query, never instead of it: it runs only when a run names it
            statements[NEWEST_PER_DEVICE_LOOSE_INDEX_SCAN] = LOOSE_INDEX_SCAN_NEWEST_PER_DEVICE
        return {name: self._query(name, statement) for name, statement in statements.items()}

    def downsample_statement(self) -> str:
        return sql_common.downsample_query("date_trunc('minute', timestamp)", _timestamptz(sql_common.DOWNSAMPLE_START_MS),
                                           _timestamptz(sql_common.DOWNSAMPLE_END_MS))

    def _query(self, name: str, statement: str) -> Query:
        def run():
            with self._conn.cursor() as cursor:
                rows = cursor.execute(statement).fetchall()
            if not self._conn.autocommit:
                self._conn.commit()
            return sql_common.answer(name, rows)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        with self._conn.cursor() as cursor:
            devices = [row[0] for row in cursor.execute(sql_common.devices_statement(self.spec.table_names))]
        if not self._conn.autocommit:
            self._conn.commit()
        return devices

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # extract(epoch ...) is numeric (exact) on PostgreSQL 14+: milliseconds as bigint, no datetime objects.
        statement, binds = sql_common.scan_statement(self.spec.table_names, "(extract(epoch FROM timestamp) * 1000)::bigint", "%s")
        with self._conn.transaction(), self._conn.cursor(name="iotbench_scan") as cursor:
            cursor.execute(statement, (device,) * binds)
            while rows := cursor.fetchmany(page_size):
                yield np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))


def _timestamptz(ms: int) -> str:
    """A TIMESTAMPTZ literal for epoch milliseconds."""
    return f"'{np.datetime_as_string(np.datetime64(ms, 'ms'), timezone='UTC')}'::timestamptz"


def _datetimes(timestamp_ms) -> list:
    return timestamp_ms.astype("datetime64[ms]").tolist()


def _is_retryable(error: BaseException) -> bool:
    """Serialisation failures, deadlocks and CockroachDB's restart errors: the transaction can run again."""
    import psycopg

    if not isinstance(error, psycopg.Error):
        return False
    message = str(error)
    return (
        getattr(error, "sqlstate", None) in RETRYABLE_SQLSTATES
        or "restart transaction" in message
        or "TransactionRetryWithProtoRefreshError" in message
    )
