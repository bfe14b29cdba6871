"""The postgres module's schema and counting: extensions, one table per run table (with the query
indices when asked) or TSBS's layout, counts, the server's own insert statistics and the tables' size."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotdb_bench.simulator.modules.base import RECORD_NAME, SchemaRole
from iotdb_bench.simulator.modules.postgres.options import COLUMN_TYPES, PostgresRole
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.wire import tsbs_sql
from iotdb_bench.simulator.wire.pg_values import NoRow, first_value
from iotdb_bench.simulator.workload.events import CLIENT_KEY_WIDTH
from iotdb_bench.simulator.workload.tsbs import USE_CASES

if TYPE_CHECKING:
    from psycopg import Cursor
    from psycopg.rows import TupleRow



class PostgresSchema(PostgresRole, SchemaRole):
    def setup(self) -> None:
        conn = self.module.conn
        conn.autocommit = True
        with conn.cursor() as cursor:
            for extension in filter(None, (e.strip() for e in self.options.install_extensions.split(","))):
                cursor.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}")
            if self.spec.tsbs:
                self.setup_tsbs(cursor)
                return
            for table in self.spec.table_names:
                for statement in sql_common.table_setup_statements(table, self.create_table_statement(table), self.spec.clean,
                                                                   self.options.create_indices, self.layout):
                    cursor.execute(statement)
                self.after_create_table(cursor, table)

    def setup_tsbs(self, cursor: Cursor[TupleRow]) -> None:
        """TSBS's layout (its TimescaleDB target's tags table and a table per measurement,
        simulator/wire/tsbs_sql.py), and every host's or truck's tags: the run's rows refer to them by tags_id."""
        for statement in tsbs_sql.setup_statements(tsbs_sql.POSTGRES, self.spec.clean, self.spec.shape):
            cursor.execute(statement)
        for table in self.spec.table_names:
            self.after_create_table(cursor, table)
        cursor.executemany(tsbs_sql.insert_tags(tsbs_sql.POSTGRES, self.spec.shape),
                           tsbs_sql.tag_rows(self.spec.seed, self.spec.all_devices, USE_CASES[self.spec.shape]))

    def after_create_table(self, cursor: Cursor[TupleRow], table: str) -> None:
        """Hook for relatives that turn the table into something more (TimescaleDB hypertables)."""

    def create_table_statement(self, table: str) -> str:
        key_column = {
            PrimaryKey.db: "id BIGSERIAL",
            PrimaryKey.sql: f"id BIGINT GENERATED ALWAYS AS IDENTITY (CACHE {max(self.spec.batch, 1)})",
            PrimaryKey.client: f"id VARCHAR({CLIENT_KEY_WIDTH})",
            PrimaryKey.uuid: "id UUID DEFAULT gen_random_uuid()",
            PrimaryKey.none: None,
        }[self.spec.primary_key]
        return sql_common.create_table_statement(table, key_column, self.layout, COLUMN_TYPES, self.options.primary_key_constraint)

    def missing_tables(self) -> list[str] | None:
        import psycopg

        conn = self.module.conn
        names = [*self.spec.table_names, RECORD_NAME]
        try:
            with conn.cursor() as cursor:
                found = cursor.execute(f"SELECT {', '.join(['to_regclass(%s) IS NOT NULL'] * len(names))}", names).fetchone()
        except psycopg.Error:  # a wire-compatible server without to_regclass: its queries will say it
            return None
        finally:
            if not conn.autocommit:
                conn.rollback()
        return [] if found and any(found) else list(self.spec.table_names)

    def count(self) -> int:
        with self.module.conn.cursor() as cursor:
            return sum(int(first_value(cursor, f"SELECT count(*) FROM {table}")) for table in self.spec.table_names)

    def server_version(self) -> str:
        # version() rather than server_version: wire-compatible servers name themselves there.
        row = self.read_one("SELECT version()")
        if row is None:
            raise NoRow("the server returned no row for SELECT version()")
        return str(row[0])

    def read_one(self, statement: str) -> TupleRow | None:
        """One row of a read-only statement, leaving no transaction open (batch mode turns autocommit off)."""
        conn = self.module.conn
        with conn.cursor() as cursor:
            row = cursor.execute(statement).fetchone()
        if not conn.autocommit:
            conn.rollback()
        return row

    def server_counters(self) -> dict[str, int] | None:
        """Rows inserted into the run's tables according to the server's statistics."""
        with self.module.conn.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            inserted = first_value(cursor, "SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = ANY(%s)",
                                   (self.spec.table_names,))
        return {"rows_inserted": int(inserted)}

    def storage_bytes(self) -> int | None:
        with self.module.conn.cursor() as cursor:
            return sum(int(first_value(cursor, "SELECT pg_total_relation_size(%s)", (table,)) or 0) for table in self.spec.table_names)

