"""The timescaledb module's options: PostgreSQL's, and the hypertables' own."""

from __future__ import annotations

import re

from pydantic import Field

from iotdb_bench.simulator.modules.postgres.options import PostgresOptions

INTERVAL = re.compile(r"^\s*\d+\s*(microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?|months?|years?)\s*$", re.I)


class TimescaleOptions(PostgresOptions):
    chunk_interval: str = Field("", description="chunk_time_interval of the hypertables, e.g. '6 hours', '1 day' [default: 1 day; "
                                "TSBS's shapes: 12 hours, TSBS's --chunk-time]")
    create_extension: bool = Field(True, description="run CREATE EXTENSION timescaledb when it is missing")
    restart_timestamps_each_step: bool = False
    compression_policy: str = Field("", description="compress chunks older than this interval (e.g. '1 hour') in the background, "
                                    "segmented by device_id; needs a Timescale-License build of TimescaleDB")

    def chosen_chunk_interval(self, tsbs: bool) -> str:
        """`chunk_interval`, or its default: TSBS's loader's 12 hours for TSBS's shapes, a day for the others."""
        return self.chunk_interval or ("12 hours" if tsbs else "1 day")
