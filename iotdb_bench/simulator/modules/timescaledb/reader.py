"""The timescaledb module's read side: PostgreSQL's queries and scans, device-downsample and TSBS's
query types bucketed with TimescaleDB's own `time_bucket` (TSBS's TimescaleDB queries as they are)."""

from __future__ import annotations

from iotdb_bench.simulator.modules.postgres.reader import PostgresReader
from iotdb_bench.simulator.wire import tsbs_sql


class TimescaleReader(PostgresReader):
    tsbs_dialect = tsbs_sql.TIMESCALEDB

    def downsample_statement(self) -> str:
        return super().downsample_statement().replace("date_trunc('minute', timestamp)", "time_bucket('1 minute', timestamp)")
