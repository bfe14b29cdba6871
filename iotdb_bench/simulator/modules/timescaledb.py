"""TimescaleDB: the PostgreSQL module, with every events table turned into a hypertable.

Everything else (COPY, values lists, single inserts, retries, the queries, scans) is PostgreSQL's:
the queries stay the same SQL so TimescaleDB's figures sit beside PostgreSQL's unchanged, except
device-downsample, which buckets with TimescaleDB's own `time_bucket`.

TimescaleDB only accepts unique keys that contain the partitioning column, so the default primary
key is `(id, timestamp)` instead of `(id)`.

Storage is `hypertable_size()`: the hypertable with every chunk, their indexes and TOAST (the parent
table that pg_total_relation_size sees is empty).

`compression_policy` turns on TimescaleDB's native compression, which (like continuous aggregates,
time_bucket_gapfill and retention policies) is Timescale-License code: a server built with only its
Apache-2 part (`SHOW timescaledb.license` = apache) is refused in one line before anything changes.

`restart_timestamps_each_step=true` reproduces the seed tool's fill-level observation: each
`--steps` step starts its timestamps at the origin again, so every step writes into the chunks the
first step created (insert speed then degrades), instead of the realistic ever-increasing
timestamps that add new chunks (the default).
"""

from __future__ import annotations

import dataclasses
import re

from pydantic import Field

from iotdb_bench.simulator.events import EVENT_INTERVAL_MS, EventBatch
from iotdb_bench.simulator.modules import postgres
from iotdb_bench.simulator.modules.base import ModuleError
from iotdb_bench.simulator.spec import PrimaryKey

_INTERVAL = re.compile(r"^\s*\d+\s*(microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?|months?|years?)\s*$", re.I)


class TimescaleOptions(postgres.PostgresOptions):
    chunk_interval: str = Field("1 day", description="chunk_time_interval of the hypertables, e.g. '6 hours', '1 day'")
    create_extension: bool = Field(True, description="run CREATE EXTENSION timescaledb when it is missing")
    restart_timestamps_each_step: bool = False
    compression_policy: str = Field("", description="compress chunks older than this interval (e.g. '1 hour') in the background, "
                                    "segmented by device_id; needs a Timescale-License build of TimescaleDB")


class Module(postgres.Module):
    Options = TimescaleOptions
    options: TimescaleOptions

    def __init__(self, spec):
        super().__init__(spec)
        if spec.primary_key is not PrimaryKey.none and not self.options.primary_key_constraint:
            self.options = self.options.model_copy(update={"primary_key_constraint": "PRIMARY KEY (id, timestamp)"})
        # Each step's stream starts `stream_offset` events in; shifting by that much restarts its clock.
        self._timestamp_shift_ms = spec.stream_offset * EVENT_INTERVAL_MS if self.options.restart_timestamps_each_step else 0

    def validate(self) -> None:
        super().validate()
        if not _INTERVAL.match(self.options.chunk_interval):
            raise ModuleError(f"chunk_interval '{self.options.chunk_interval}' is not an interval like '1 day' or '6 hours'")
        if self.options.compression_policy and not _INTERVAL.match(self.options.compression_policy):
            raise ModuleError(f"compression_policy '{self.options.compression_policy}' is not an interval like '1 hour' or '1 day'")

    # -- collector -------------------------------------------------------------------------
    def server_version(self) -> str | None:
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
        self._conn.autocommit = True
        with self._conn.cursor() as cursor:
            installed = cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'timescaledb'").fetchone()
            if not installed and self.options.create_extension:
                try:
                    cursor.execute("CREATE EXTENSION IF NOT EXISTS timescaledb")
                except Exception as error:
                    host, port = self._address()
                    reason = " ".join(str(error).split())
                    raise ModuleError(f"TimescaleDB is not available on the PostgreSQL server at {host}:{port}: {reason}") from None
            self._refuse_unlicensed_features(cursor)
        super().setup()

    def _refuse_unlicensed_features(self, cursor) -> None:
        """Options that need Timescale-License code fail here, before any table changes, on a server that lacks it."""
        wanted = ["compression_policy (native compression)"] if self.options.compression_policy else []
        if not wanted:
            return
        row = cursor.execute("SELECT current_setting('timescaledb.license', true)").fetchone()
        license_name = row[0] if row else None
        if license_name != "timescale":
            host, port = self._address()
            raise ModuleError(
                f"{', '.join(wanted)} needs the Timescale-License build of TimescaleDB; the server at {host}:{port} runs "
                f"timescaledb.license = {license_name or 'unknown (the extension is not loaded)'} (the Apache-2 build has no compression, continuous aggregates, "
                "time_bucket_gapfill or retention policies)"
            )

    def after_create_table(self, cursor, table: str) -> None:
        cursor.execute(self.hypertable_statement(), (table, self.options.chunk_interval))
        if self.options.compression_policy:
            # The columns of a unique key must be segmentby or orderby columns of the compression.
            orderby = "timestamp, id" if self.spec.primary_key is not PrimaryKey.none else "timestamp"
            cursor.execute(f"ALTER TABLE {table} SET (timescaledb.compress, timescaledb.compress_segmentby = 'device_id', "
                           f"timescaledb.compress_orderby = '{orderby}')")
            cursor.execute("SELECT add_compression_policy(%s, %s::interval, if_not_exists => TRUE)", (table, self.options.compression_policy))

    def server_counters(self) -> dict[str, int] | None:
        """Rows inserted according to the server's statistics: a hypertable's rows go to its chunks."""
        with self._conn.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            row = cursor.execute(
                "SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = ANY(%s) "
                "OR relid IN (SELECT show_chunks(t::regclass) FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL)",
                (self.spec.table_names, self.spec.table_names),
            ).fetchone()
        if not self._conn.autocommit:
            self._conn.rollback()
        return {"rows_inserted": int(row[0])}

    def storage_bytes(self) -> int | None:
        # The parent table of a hypertable is empty: its rows, indexes and TOAST live in the chunks.
        with self._conn.cursor() as cursor:
            sizes = [cursor.execute("SELECT coalesce(hypertable_size(%s), pg_total_relation_size(%s))", (table, table)).fetchone()[0]
                     for table in self.spec.table_names]
        if not self._conn.autocommit:
            self._conn.rollback()
        return sum(size or 0 for size in sizes)

    @staticmethod
    def hypertable_statement() -> str:
        # if_not_exists: with --no-clean the table is already a hypertable.
        return (
            "SELECT create_hypertable(%s, 'timestamp', chunk_time_interval => %s::interval, if_not_exists => TRUE)"
        )

    def downsample_statement(self) -> str:
        return super().downsample_statement().replace("date_trunc('minute', timestamp)", "time_bucket('1 minute', timestamp)")

    # -- workers ---------------------------------------------------------------------------
    def stored_events(self, batch: EventBatch) -> EventBatch:
        return self._restarted(batch)

    def prepare_batch(self, batch: EventBatch):
        return super().prepare_batch(self._restarted(batch))

    def prepare_single(self, batch: EventBatch):
        return super().prepare_single(self._restarted(batch))

    def _restarted(self, batch: EventBatch) -> EventBatch:
        if not self._timestamp_shift_ms:
            return batch
        return dataclasses.replace(batch, timestamp_ms=batch.timestamp_ms - self._timestamp_shift_ms)
