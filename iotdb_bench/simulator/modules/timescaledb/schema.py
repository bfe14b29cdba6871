"""The timescaledb module's schema: PostgreSQL's, with the extension installed (and its version
reported), every table made a hypertable (and compressed by a policy when asked, on a build that has
it), inserts counted in the chunks, sizes from `hypertable_size()`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotdb_bench.simulator.modules.base import ModuleError
from iotdb_bench.simulator.modules.postgres.schema import PostgresSchema
from iotdb_bench.simulator.modules.timescaledb.options import TimescaleOptions
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire.pg_values import first_value

if TYPE_CHECKING:
    from psycopg import Cursor
    from psycopg.rows import TupleRow

    from iotdb_bench.simulator.modules.timescaledb import Module


class TimescaleSchema(PostgresSchema):
    module: Module
    options: TimescaleOptions

    def server_version(self) -> str:
        # Read before setup: in a fresh database the extension is only available; setup installs its default version.
        row = self.read_one("SELECT installed_version, default_version FROM pg_available_extensions WHERE name = 'timescaledb'")
        installed, default = row or (None, None)
        if installed or (default and self.options.create_extension):
            extension = f"TimescaleDB {installed or default}"
        elif default:
            extension = f"TimescaleDB {default} available, not installed"
        else:
            extension = "TimescaleDB extension not installed"
        return f"{super().server_version()}; {extension}"

    def setup(self) -> None:
        conn = self.module.conn
        conn.autocommit = True
        with conn.cursor() as cursor:
            installed = cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'timescaledb'").fetchone()
            if not installed and self.options.create_extension:
                try:
                    cursor.execute("CREATE EXTENSION IF NOT EXISTS timescaledb")
                except Exception as error:
                    host, port = self.module.address()
                    reason = " ".join(str(error).split())
                    raise ModuleError(f"TimescaleDB is not available on the PostgreSQL server at {host}:{port}: {reason}") from None
            self._refuse_unlicensed_features(cursor)
        super().setup()

    def _refuse_unlicensed_features(self, cursor: Cursor[TupleRow]) -> None:
        """Options that need Timescale-License code fail here, before any table changes, on a server that lacks it."""
        wanted = ["compression_policy (native compression)"] if self.options.compression_policy else []
        if not wanted:
            return
        row = cursor.execute("SELECT current_setting('timescaledb.license', true)").fetchone()
        license_name = row[0] if row else None
        if license_name != "timescale":
            host, port = self.module.address()
            raise ModuleError(
                f"{', '.join(wanted)} needs the Timescale-License build of TimescaleDB; the server at {host}:{port} runs "
                f"timescaledb.license = {license_name or 'unknown (the extension is not loaded)'} (the Apache-2 build has no compression, continuous aggregates, "
                "time_bucket_gapfill or retention policies)"
            )

    def after_create_table(self, cursor: Cursor[TupleRow], table: str) -> None:
        interval = self.options.chosen_chunk_interval(self.spec.tsbs)
        if self.spec.tsbs:  # TSBS's loader: its own indexes, none of TimescaleDB's defaults
            cursor.execute("SELECT create_hypertable(%s, 'time', chunk_time_interval => %s::interval, create_default_indexes => FALSE, "
                           "if_not_exists => TRUE)", (table, interval))
        else:
            cursor.execute(self.hypertable_statement(), (table, interval))
        if self.options.compression_policy:
            # The columns of a unique key must be segmentby or orderby columns of the compression.
            segmentby, orderby = ("tags_id", "time") if self.spec.tsbs else ("device_id", "timestamp")
            orderby += ", id" if self.spec.primary_key is not PrimaryKey.none else ""
            cursor.execute(f"ALTER TABLE {table} SET (timescaledb.compress, timescaledb.compress_segmentby = '{segmentby}', "
                           f"timescaledb.compress_orderby = '{orderby}')")
            cursor.execute("SELECT add_compression_policy(%s, %s::interval, if_not_exists => TRUE)", (table, self.options.compression_policy))

    def server_counters(self) -> dict[str, int] | None:
        """Rows inserted according to the server's statistics: a hypertable's rows go to its chunks."""
        conn = self.module.conn
        with conn.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            inserted = first_value(
                cursor,
                "SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = ANY(%s) "
                "OR relid IN (SELECT show_chunks(t::regclass) FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL)",
                (self.spec.table_names, self.spec.table_names),
            )
        if not conn.autocommit:
            conn.rollback()
        return {"rows_inserted": int(inserted)}

    def storage_bytes(self) -> int | None:
        # The parent table of a hypertable is empty: its rows, indexes and TOAST live in the chunks.
        conn = self.module.conn
        with conn.cursor() as cursor:
            sizes = [first_value(cursor, "SELECT coalesce(hypertable_size(%s), pg_total_relation_size(%s))", (table, table))
                     for table in self.spec.table_names]
        if not conn.autocommit:
            conn.rollback()
        return sum(int(size or 0) for size in sizes)

    @staticmethod
    def hypertable_statement() -> str:
        # if_not_exists: with --no-clean the table is already a hypertable.
        return (
            "SELECT create_hypertable(%s, 'timestamp', chunk_time_interval => %s::interval, if_not_exists => TRUE)"
        )
