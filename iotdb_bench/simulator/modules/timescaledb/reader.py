"""The timescaledb module's read side: PostgreSQL's queries and scans, device-downsample bucketed with
TimescaleDB's own `time_bucket`."""

from __future__ import annotations

from iotdb_bench.simulator.modules.postgres.reader import PostgresReader


class TimescaleReader(PostgresReader):
    def downsample_statement(self) -> str:
        return super().downsample_statement().replace("date_trunc('minute', timestamp)", "time_bucket('1 minute', timestamp)")
