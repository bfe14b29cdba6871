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

Each role builds on PostgreSQL's (modules/postgres/): schema.py (extension, hypertables, sizes),
writer.py (restarted timestamps), reader.py (time_bucket); the record is PostgreSQL's as it is.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, cast

from iotdb_bench.simulator.modules import postgres
from iotdb_bench.simulator.modules.base import ModuleError, played_by
from iotdb_bench.simulator.modules.postgres.records import PostgresRecords
from iotdb_bench.simulator.modules.timescaledb.options import INTERVAL, TimescaleOptions
from iotdb_bench.simulator.modules.timescaledb.reader import TimescaleReader
from iotdb_bench.simulator.modules.timescaledb.schema import TimescaleSchema
from iotdb_bench.simulator.modules.timescaledb.writer import TimescaleWriter
from iotdb_bench.simulator.spec import PrimaryKey, RunSpec

__all__ = ["Module", "TimescaleOptions"]


class Module(postgres.Module):
    Options: ClassVar[type[TimescaleOptions]] = TimescaleOptions
    options: TimescaleOptions
    # PostgreSQL's abilities; a query file's TimescaleDB text first, else its PostgreSQL text.
    capabilities = dataclasses.replace(postgres.Module.capabilities, query_languages=("sql/timescaledb", "sql/postgresql", "sql"))
    # Its own schema, writer and reader; PostgreSQL's record as it is.
    schema, writer, reader, records = played_by(TimescaleSchema, TimescaleWriter, TimescaleReader, PostgresRecords)

    @classmethod
    def parse_options(cls, spec: RunSpec) -> TimescaleOptions:
        options = cast(TimescaleOptions, super().parse_options(spec))  # validated by cls.Options
        # TimescaleDB only accepts unique keys that contain the partitioning column.
        if spec.primary_key is not PrimaryKey.none and not options.primary_key_constraint:
            options = options.model_copy(update={"primary_key_constraint": "PRIMARY KEY (id, timestamp)"})
        return options

    def validate(self) -> None:
        super().validate()
        if not INTERVAL.match(self.options.chosen_chunk_interval(self.spec.tsbs)):
            raise ModuleError(f"chunk_interval '{self.options.chunk_interval}' is not an interval like '1 day' or '6 hours'")
        if self.options.compression_policy and not INTERVAL.match(self.options.compression_policy):
            raise ModuleError(f"compression_policy '{self.options.compression_policy}' is not an interval like '1 hour' or '1 day'")
