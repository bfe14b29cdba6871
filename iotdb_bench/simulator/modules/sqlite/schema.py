"""The sqlite module's schema and counting: one table per run table (and the query indices when asked)
or TSBS's layout,
counts, the file's size, and the write-ahead log cut back to nothing after a run."""

from __future__ import annotations

import contextlib
import os
import sqlite3

from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, SchemaRole
from iotdb_bench.simulator.modules.sqlite.options import COLUMN_TYPES, SqliteRole
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.wire import tsbs_sql
from iotdb_bench.simulator.workload.tsbs import USE_CASES


class SqliteSchema(SqliteRole, SchemaRole):
    def setup(self) -> None:
        conn = self.module.conn
        if self.spec.tsbs:  # TSBS's layout (as its TimescaleDB target's) and every host's or truck's tags
            for statement in tsbs_sql.setup_statements(tsbs_sql.SQLITE, self.spec.clean, self.spec.shape):
                conn.execute(statement)
            conn.execute("BEGIN IMMEDIATE")  # one transaction, not one per host (the connection autocommits)
            conn.executemany(tsbs_sql.insert_tags(tsbs_sql.SQLITE, self.spec.shape),
                             tsbs_sql.tag_rows(self.spec.seed, self.spec.all_devices, USE_CASES[self.spec.shape]))
            conn.execute("COMMIT")
        for table in () if self.spec.tsbs else self.spec.table_names:
            for statement in sql_common.table_setup_statements(table, self.create_table_statement(table), self.spec.clean,
                                                               self.options.create_indices, self.layout):
                conn.execute(statement)
        if self.spec.clean:
            self._truncate_wal()  # a log left by an earlier run that did not end cleanly starts over empty

    def tidy_after_run(self) -> None:
        self._truncate_wal()

    def _truncate_wal(self) -> None:
        """Copy the write-ahead log into the database and cut its file to zero bytes (waits, up to the
        busy timeout, for a writer still at work)."""
        if self.options.journal_mode == "wal":
            busy, _, _ = self.module.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
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
        return sql_common.create_table_statement(table, key_column, self.layout, COLUMN_TYPES, self.options.primary_key_constraint)

    def missing_tables(self) -> list[str] | None:
        present = {row[0] for row in self.module.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if present & {*self.spec.table_names, RECORD_NAME}:
            return []
        return list(self.spec.table_names)

    def count(self) -> int:
        try:
            return sum(self.module.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in self.spec.table_names)
        except sqlite3.OperationalError as error:
            raise ModuleError(f"SQLite database {self.options.path}: {error}") from None

    def server_version(self) -> str:
        # Embedded: the library the Python process runs is the database engine.
        return f"SQLite {self.module.conn.execute('SELECT sqlite_version()').fetchone()[0]}"

    def server_counters(self) -> dict[str, int] | None:
        # SQLite keeps no insert statistics; the row count read by the database itself stands in.
        return {"rows": self.count()}

    def storage_bytes(self) -> int | None:
        """The pages in use (free pages of dropped tables left out) and the write-ahead log's file."""
        conn = self.module.conn
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        used_pages = int(conn.execute("PRAGMA page_count").fetchone()[0]) - int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        wal = 0
        with contextlib.suppress(FileNotFoundError):
            wal = os.path.getsize(f"{self.options.path}-wal")
        return page_size * used_pages + wal
