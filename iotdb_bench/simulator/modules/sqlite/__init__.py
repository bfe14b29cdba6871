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

The roles: schema.py (tables, counts, size, the log's checkpoint), writer.py (transactions of
inserts), reader.py (queries, scans, the visibility look-up), records.py; options.py their options and base class.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Location, Pace
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, connected, played_by
from iotdb_bench.simulator.modules.sqlite.options import SqliteOptions
from iotdb_bench.simulator.modules.sqlite.reader import SqliteReader
from iotdb_bench.simulator.modules.sqlite.records import SqliteRecords
from iotdb_bench.simulator.modules.sqlite.schema import SqliteSchema
from iotdb_bench.simulator.modules.sqlite.writer import SqliteWriter
from iotdb_bench.simulator.spec import TSBS_TABLES, RunSpec

__all__ = ["Module", "SqliteOptions"]


class Module(DatabaseModule):
    Options = SqliteOptions
    options: SqliteOptions
    capabilities = Capabilities(
        pace=Pace(btree=True),
        shapes=ALL_SHAPES, tsbs_shapes=frozenset(TSBS_TABLES), measurements=True, sensors=True, transactions=True, markers=True,
        # SQLite runs inside the worker processes: their CPU is the database's work too.
        location=Location.embedded, query_languages=("sql/sqlite", "sql"),
    )
    schema, writer, reader, records = played_by(SqliteSchema, SqliteWriter, SqliteReader, SqliteRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self._conn: sqlite3.Connection | None = None  # shared by the roles (`conn`)

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection `connect()` opened, as the roles use it."""
        return connected(self._conn, self.spec.module)

    def validate(self) -> None:
        super().validate()
        self.check_query_indices(self.options.create_indices)
        self.check_tsbs_layout_options({"primary_key_constraint": self.options.primary_key_constraint})

    def batch_kind(self) -> str:
        return "values lists" if self.options.use_values_lists else "single-row INSERTs in one transaction"

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        path = Path(self.options.path)
        if not path.parent.exists():
            raise ModuleError(f"cannot open SQLite database {path}: folder {path.parent} does not exist")
        if self.spec.task in ("query", "scan") and not path.is_file():
            raise ModuleError(f"there is no SQLite database {path} to read: run insert first")
        self._conn = sqlite3.connect(path, timeout=self.options.busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False)
        try:
            if self.spec.task == "insert":  # the journal mode is the file's: a reader leaves it as the writer set it
                self.conn.execute(f"PRAGMA journal_mode = {self.options.journal_mode}")
            self.conn.execute(f"PRAGMA synchronous = {self.options.synchronous}")
            self.conn.execute(f"PRAGMA busy_timeout = {self.options.busy_timeout_ms}")
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads the header: is it a database at all?
        except sqlite3.DatabaseError as error:  # e.g. "file is not a database"
            self.close()
            raise ModuleError(f"cannot open SQLite database {path}: {error}") from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
