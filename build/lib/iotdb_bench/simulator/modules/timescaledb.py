"""TimescaleDB: the PostgreSQL module, with every events table turned into a hypertable.

Everything else (COPY, values lists, single inserts, retries, the queries, scans) is PostgreSQL's:
the queries stay the same SQL so TimescaleDB's figures sit beside PostgreSQL's unchanged, except
device-downsample, which buckets with TimescaleDB's own `time_bucket`.

TimescaleDB only accepts unique keys that contain the partitioning column, so the default primary
key is `(id, timestamp)` instead of `(id)`.

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

    # -- collector -------------------------------------------------------------------------
    def server_version(self) -> str | None:
        row = self.read_one("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'")
        extension = f"TimescaleDB {row[0]}" if row else "TimescaleDB extension not installed"
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
        super().setup()

    def after_create_table(self, cursor, table: str) -> None:
        cursor.execute(self.hypertable_statement(), (table, self.options.chunk_interval))

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
