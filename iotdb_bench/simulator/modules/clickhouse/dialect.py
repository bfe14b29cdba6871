"""What the ClickHouse server's version offers, and the SQL the clickhouse module writes for it."""

from __future__ import annotations

from dataclasses import dataclass

from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import ModuleError
from iotdb_bench.simulator.modules.clickhouse.options import ClickhouseOptions
from iotdb_bench.simulator.workload.shapes import Layout

# ClickHouse types of the shapes' kinds of column (timestamp and device: as the dialect says).
COLUMN_TYPES = {"sensor": "Int16", "sequence": "Int64", "float": "Float64", "int16": "Int16", "int32": "Int32", "text": "String"}


@dataclass(frozen=True)
class ServerDialect:
    """What the server's version offers, and the SQL the module writes for it."""

    version: tuple[int, int]
    datetime64: bool  # DateTime64(3): timestamps as milliseconds; else Int64 epoch ms
    low_cardinality: bool  # LowCardinality(String) for device ids

    # Releases that brought the features (ClickHouse's changelog).
    DATETIME64_SINCE = (20, 1)
    LOW_CARDINALITY_SINCE = (19, 9)  # allowed without allow_experimental_low_cardinality_type
    ASYNC_INSERT_SINCE = (21, 11)

    @classmethod
    def for_server(cls, version: tuple[int, int], options: ClickhouseOptions) -> ServerDialect:
        has_datetime64, has_low_cardinality = version >= cls.DATETIME64_SINCE, version >= cls.LOW_CARDINALITY_SINCE
        shown = ".".join(map(str, version))
        if options.timestamp_type == "DateTime64" and not has_datetime64:
            raise ModuleError(f"ClickHouse {shown} has no DateTime64 (it came in {'.'.join(map(str, cls.DATETIME64_SINCE))}); use timestamp_type: Int64 or auto")
        if options.device_type == "LowCardinality" and not has_low_cardinality:
            raise ModuleError(f"ClickHouse {shown} allows LowCardinality only as an experimental feature; use device_type: String or auto")
        if options.async_insert and version < cls.ASYNC_INSERT_SINCE:
            raise ModuleError(f"ClickHouse {shown} has no async_insert (it came in {'.'.join(map(str, cls.ASYNC_INSERT_SINCE))}); remove the option async_insert")
        return cls(
            version=version,
            datetime64=options.timestamp_type == "DateTime64" or (options.timestamp_type == "auto" and has_datetime64),
            low_cardinality=options.device_type == "LowCardinality" or (options.device_type == "auto" and has_low_cardinality),
        )

    def create_table(self, qualified_table: str, layout: Layout) -> str:
        types = {**COLUMN_TYPES, "timestamp": "DateTime64(3, 'UTC')" if self.datetime64 else "Int64",
                 "device": "LowCardinality(String)" if self.low_cardinality else "String"}
        columns = ", ".join(f"{column.name} {types[column.kind]}" for column in layout.columns)
        order = "(device_id, timestamp)" if layout.has("device") else "(timestamp)"
        return (f"CREATE TABLE IF NOT EXISTS {qualified_table} ({columns}) ENGINE = MergeTree() "
                f"PARTITION BY toYYYYMM({self.as_datetime('timestamp')}) ORDER BY {order}")

    def as_datetime(self, column: str) -> str:
        """An expression of DateTime (seconds) for the stored timestamp column."""
        return column if self.datetime64 else f"toDateTime(intDiv({column}, 1000))"

    def as_ms(self, column: str) -> str:
        """An expression of Int64 epoch milliseconds for the stored timestamp column."""
        return f"toUnixTimestamp64Milli({column})" if self.datetime64 else column

    def queries(self, qualified_table: str) -> dict[str, str]:
        table, ms = qualified_table, self.as_ms("timestamp")
        end = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS
        return {
            "count-events": f"SELECT count() FROM {table}",
            "temperature-min-max": f"SELECT min(temperature), max(temperature) FROM {table}",
            "temperature-stats": f"SELECT min(temperature), avg(temperature), max(temperature) FROM {table}",
            "temperature-stats-per-device": f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {table} GROUP BY device_id",
            # argMax: the temperature of the row with the largest timestamp, per device, in one pass.
            "newest-per-device": f"SELECT device_id, max({ms}), argMax(temperature, timestamp) FROM {table} GROUP BY device_id",
            "device-downsample": (f"SELECT intDiv({ms}, {MINUTE_MS}) * {MINUTE_MS} AS minute, min(temperature), avg(temperature), "
                                  f"max(temperature) FROM {table} WHERE device_id = '{DOWNSAMPLE_DEVICE}' AND {ms} >= {DOWNSAMPLE_START_MS} "
                                  f"AND {ms} < {end} GROUP BY minute ORDER BY minute"),
        }

    def scan(self, qualified_table: str) -> str:
        """Every reading's epoch milliseconds of the device `%(device)s`, in time order (the sorting key's order)."""
        return f"SELECT {self.as_ms('timestamp')} FROM {qualified_table} WHERE device_id = %(device)s ORDER BY timestamp"
