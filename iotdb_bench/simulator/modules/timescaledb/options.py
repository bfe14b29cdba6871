"""The timescaledb module's options: PostgreSQL's, and the hypertables' own."""

from __future__ import annotations

import re

from pydantic import Field

from iotdb_bench.simulator.modules.postgres.options import PostgresOptions

INTERVAL = re.compile(r"^\s*\d+\s*(microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?|months?|years?)\s*$", re.I)


class TimescaleOptions(PostgresOptions):
    chunk_interval: str = Field("1 day", description="chunk_time_interval of the hypertables, e.g. '6 hours', '1 day'")
    create_extension: bool = Field(True, description="run CREATE EXTENSION timescaledb when it is missing")
    restart_timestamps_each_step: bool = False
    compression_policy: str = Field("", description="compress chunks older than this interval (e.g. '1 hour') in the background, "
                                    "segmented by device_id; needs a Timescale-License build of TimescaleDB")
