"""SQLite, the embedded default: zero setup, one file, writers serialised by SQLite's own lock.

WAL journal and a busy timeout let concurrent workers wait for the write lock instead of failing;
batches take the lock up front (BEGIN IMMEDIATE) so two writers never deadlock on an upgrade.
Timestamps are stored as integer epoch milliseconds. `synchronous` and `journal_mode` are SQLite's
durability settings (seed 004 ran SQLite with both off). With --commit-interval, single inserts go
into a transaction (BEGIN IMMEDIATE) that holds the write lock until the worker commits it. The
record of expected answers is a table of its own in the same file (`iotbench_expected`), so it
travels with the data.

The write-ahead log grows while workers write at once (a checkpoint cannot restart it while another
writer is busy) and SQLite never shrinks the file by itself: the storage figure counts it as it is on
disk at the end of the run, and the collector then checkpoints it to zero bytes (TRUNCATE), as a
clean setup does before the run.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer
from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Location
from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import sql as sql_common

MAX_VARIABLES = 32_766


class SqliteOptions(ModuleOptions):
    path: str = "iotdb-bench.sqlite3"
    journal_mode: Literal["wal", "delete", "truncate", "memory", "off"] = "wal"
    synchronous: Literal["off", "normal", "full", "extra"] = "normal"
    busy_timeout_ms: int = Field(60_000, ge=0)
    use_values_lists: bool = False
    create_indices: bool = False
    primary_key_constraint: str | None = None


# Column types of each kind of column of the shapes (simulator/shapes.py): SQLite's storage classes.
COLUMN_TYPES = {"timestamp": "INTEGER", "device": "TEXT", "sensor": "INTEGER", "sequence": "INTEGER", "float": "REAL",
                "int16": "INTEGER", "int32": "INTEGER", "text": "TEXT"}


class Module(OneClassModule):
    Options = SqliteOptions
    options: SqliteOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, measurements=True, sensors=True, transactions=True, markers=True,
        # SQLite runs inside the worker processes: their CPU is the database's work too.
        location=Location.embedded,
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._conn: sqlite3.Connection | None = None
        self._in_transaction = False
        self._with_key = spec.primary_key is PrimaryKey.client
        self._columns = self.layout.names + (("id",) if self._with_key else ())
        self._single_statements = {table: sql_common.insert_statement(table, self._columns, 1, "?") for table in spec.table_names}

    def validate(self) -> None:
        super().validate()
        self.check_query_indices(self.options.create_indices)

    def batch_kind(self) -> str:
        return "values lists" if self.options.use_values_lists else "single-row INSERTs in one transaction"

    def connect(self) -> None:
        path = Path(self.options.path)
        if not path.parent.exists():
            raise ModuleError(f"cannot open SQLite database {path}: folder {path.parent} does not exist")
        if self.spec.task in ("query", "scan") and not path.is_file():
            raise ModuleError(f"there is no SQLite database {path} to read: run insert first")
        self._conn = sqlite3.connect(path, timeout=self.options.busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False)
        try:
            if self.spec.task == "insert":  # the journal mode is the file's: a reader leaves it as the writer set it
                self._conn.execute(f"PRAGMA journal_mode = {self.options.journal_mode}")
            self._conn.execute(f"PRAGMA synchronous = {self.options.synchronous}")
            self._conn.execute(f"PRAGMA busy_timeout = {self.options.busy_timeout_ms}")
            self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads the header: is it a database at all?
        except sqlite3.DatabaseError as error:  # e.g. "file is not a database"
            self.close()
            raise ModuleError(f"cannot open SQLite database {path}: {error}") from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def setup(self) -> None:
        for table in self.spec.table_names:
            if self.spec.clean:
                self._conn.execute(f"DROP TABLE IF EXISTS {table}")
            self._conn.execute(self.create_table_statement(table))
            if self.options.create_indices:
                for statement in sql_common.index_statements(table):
                    self._conn.execute(statement)
            for statement in sql_common.shape_index_statements(table, self.layout):
                self._conn.execute(statement)
        if self.spec.clean:
            self._truncate_wal()  # a log left by an earlier run that did not end cleanly starts over empty

    def tidy_after_run(self) -> None:
        self._truncate_wal()

    def _truncate_wal(self) -> None:
        """Copy the write-ahead log into the database and cut its file to zero bytes (waits, up to the
        busy timeout, for a writer still at work)."""
        if self.options.journal_mode == "wal":
            busy, _, _ = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy:
                raise ModuleError(f"SQLite database {self.options.path}: its write-ahead log could not be checkpointed (the database was busy)")

    def create_table_statement(self, table: str) -> str:
        key_column = {
            PrimaryKey.db: "id INTEGER",
            PrimaryKey.sql: "id INTEGER",
            PrimaryKey.client: "id TEXT",
            PrimaryKey.uuid: "id TEXT DEFAULT (lower(hex(randomblob(16))))",
            PrimaryKey.none: None,
        }[self.spec.primary_key]
        constraint = self.options.primary_key_constraint or (None if key_column is None else "PRIMARY KEY (id)")
        parts = [key_column] if key_column else []
        parts += [f"{column.name} {COLUMN_TYPES[column.kind]} NOT NULL" for column in self.layout.columns]
        if constraint:
            parts.append(constraint)
        return f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(parts)})"

    def missing_tables(self) -> list[str] | None:
        present = {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if present & {*self.spec.table_names, RECORD_NAME}:
            return []
        return list(self.spec.table_names)

    def count(self) -> int:
        try:
            return sum(self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in self.spec.table_names)
        except sqlite3.OperationalError as error:
            raise ModuleError(f"SQLite database {self.options.path}: {error}") from None

    def server_version(self) -> str | None:
        # Embedded: the library the Python process runs is the database engine.
        return f"SQLite {self._conn.execute('SELECT sqlite_version()').fetchone()[0]}"

    def server_counters(self) -> dict[str, int] | None:
        # SQLite keeps no insert statistics; the row count read by the database itself stands in.
        return {"rows": self.count()}

    def storage_bytes(self) -> int | None:
        """The pages in use (free pages of dropped tables left out) and the write-ahead log's file."""
        page_size = self._conn.execute("PRAGMA page_size").fetchone()[0]
        used_pages = self._conn.execute("PRAGMA page_count").fetchone()[0] - self._conn.execute("PRAGMA freelist_count").fetchone()[0]
        wal = 0
        with contextlib.suppress(FileNotFoundError):
            wal = os.path.getsize(f"{self.options.path}-wal")
        return page_size * used_pages + wal

    def prepare_batch(self, batch: EventBatch) -> Any:
        return [(table, self._rows(part)) for table, part in self.per_table(batch)]

    def _rows(self, batch: EventBatch) -> list[tuple]:
        return self.layout.python_rows(batch, key=batch.client_key if self._with_key else None)

    def insert_batch(self, prepared: Any) -> None:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for table, rows in prepared:
                if self.options.use_values_lists:
                    self._values_lists(table, rows)
                else:
                    self._conn.executemany(sql_common.insert_statement(table, self._columns, 1, "?"), rows)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def _values_lists(self, table: str, rows: list[tuple]) -> None:
        per_statement = MAX_VARIABLES // len(self._columns)
        for first in range(0, len(rows), per_statement):
            chunk = rows[first : first + per_statement]
            statement = sql_common.insert_statement(table, self._columns, len(chunk), "?")
            self._conn.execute(statement, [value for row in chunk for value in row])

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, tuple]]:
        return list(zip(self.table_of_each(batch), self._rows(batch)))

    def insert_single(self, item: tuple[str, tuple]) -> None:
        table, row = item
        if self.spec.commit_interval_s and not self._in_transaction:
            self._conn.execute("BEGIN IMMEDIATE")  # waits (busy timeout) while another worker's transaction is open
            self._in_transaction = True
        self._conn.execute(self._single_statements[table], row)

    def commit(self) -> None:
        if self._in_transaction:
            self._conn.execute("COMMIT")
            self._in_transaction = False

    def store_record(self, text: str) -> None:
        self._conn.execute(f"CREATE TABLE IF NOT EXISTS {RECORD_NAME} (tables TEXT PRIMARY KEY, record TEXT NOT NULL)")
        self._conn.execute(f"INSERT OR REPLACE INTO {RECORD_NAME} (tables, record) VALUES (?, ?)", (self.record_key(), text))

    def marker_visible(self, marker: EventBatch) -> bool:
        table, device, sequence = self.marker_key(marker)
        statement = f"SELECT 1 FROM {table} WHERE device_id = ? AND sequence_number = ? LIMIT 1"
        return self._conn.execute(statement, (device, sequence)).fetchone() is not None

    def stored_record(self) -> str | None:
        try:
            row = self._conn.execute(f"SELECT record FROM {RECORD_NAME} WHERE tables = ?", (self.record_key(),)).fetchone()
        except sqlite3.OperationalError:  # no such table: nothing recorded here
            return None
        return row[0] if row else None

    def queries(self) -> dict[str, Query]:
        def query(name: str, statement: str) -> Query:
            return lambda: Answer(self._conn.execute(statement).fetchall())

        statements = {**sql_common.QUERIES, "device-downsample": sql_common.downsample_query(
            "timestamp - timestamp % 60000", str(sql_common.DOWNSAMPLE_START_MS), str(sql_common.DOWNSAMPLE_END_MS))}
        return {name: query(name, statement) for name, statement in sql_common.over_tables(statements, self.spec.table_names).items()}

    def scan_devices(self) -> list[str]:
        return [row[0] for row in self._conn.execute(sql_common.devices_statement(self.spec.table_names))]

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # SQLite steps the statement as rows are fetched: a page at a time, nothing read ahead.
        statement, binds = sql_common.scan_statement(self.spec.table_names, "timestamp", "?")
        cursor = self._conn.execute(statement, (device,) * binds)
        try:
            while rows := cursor.fetchmany(page_size):
                yield np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        finally:
            cursor.close()
