"""The iotdb module's read side: the six queries in either model (tree: GROUP BY LEVEL, ALIGN BY
DEVICE, SELECT LAST and GROUP BY time on the device; table: SQL with last_by and date_bin), TSBS's
DevOps query types (tree model, tsbs_queries.py) and IoT ones (tsbs_iot.py), a query file's texts (tree
model, text_answers.py),
and scans of one device's points in time order, fetched a page at a time as DataFrames."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer, with_times
from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import Query, ReaderRole
from iotdb_bench.simulator.modules.iotdb import text_answers, tsbs_iot, tsbs_queries
from iotdb_bench.simulator.modules.iotdb.connection import literal
from iotdb_bench.simulator.modules.iotdb.options import IotdbRole
from iotdb_bench.simulator.modules.iotdb.series import device_of
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, DevopsQuery
from iotdb_bench.simulator.queries.tsbs_iot import IOT, IotQuery
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME

if TYPE_CHECKING:
    import pandas as pd



class IotdbReader(IotdbRole, ReaderRole):
    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        end = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS
        if self.module.series.tree:
            # The queries read the table `events`, as every module's do. GROUP BY LEVEL = 1 merges the
            # devices' series into one (the tree model has no other cross-series aggregate).
            series = f"root.{self.options.database}.{SINGLE_TABLE_NAME}.*"
            downsample_device = self.module.series.path(self.spec.table_names[0], DOWNSAMPLE_DEVICE.encode())
            return {
                "count-events": self._rows(f"SELECT count(temperature) FROM {series} GROUP BY LEVEL = 1"),
                "temperature-min-max": self._rows(f"SELECT min_value(temperature), max_value(temperature) FROM {series} GROUP BY LEVEL = 1"),
                "temperature-stats": self._rows(
                    f"SELECT min_value(temperature), avg(temperature), max_value(temperature) FROM {series} GROUP BY LEVEL = 1"),
                "temperature-stats-per-device": self._rows(
                    f"SELECT min_value(temperature), avg(temperature), max_value(temperature) FROM {series} ALIGN BY DEVICE", _per_device),
                # One row per series: the device's newest time and value (served from IoTDB's last cache).
                "newest-per-device": self._rows(f"SELECT LAST temperature FROM {series}", _last_points),
                # One row per minute of the hour, empty minutes as NaN: those are left out.
                "device-downsample": self._rows(
                    f"SELECT min_value(temperature), avg(temperature), max_value(temperature) FROM {downsample_device} "
                    f"GROUP BY ([{DOWNSAMPLE_START_MS}, {end}), 1m)", _minutes_with_readings),
            }
        table = SINGLE_TABLE_NAME
        return {
            "count-events": self._rows(f"SELECT count(*) FROM {table}"),
            "temperature-min-max": self._rows(f"SELECT min(temperature), max(temperature) FROM {table}"),
            "temperature-stats": self._rows(f"SELECT min(temperature), avg(temperature), max(temperature) FROM {table}"),
            "temperature-stats-per-device": self._rows(
                f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {table} GROUP BY device_id"),
            "newest-per-device": self._rows(f"SELECT device_id, last(time), last_by(temperature, time) FROM {table} GROUP BY device_id",
                                            with_times(1)),
            "device-downsample": self._rows(
                f"SELECT date_bin(1m, time) AS minute, min(temperature), avg(temperature), max(temperature) FROM {self.spec.table_names[0]} "
                f"WHERE device_id = '{DOWNSAMPLE_DEVICE}' AND time >= {DOWNSAMPLE_START_MS} AND time < {end} GROUP BY 1 ORDER BY 1",
                with_times(0)),
        }

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's DevOps query types in IoTDB's SQL on TSBS's layout (tsbs_queries.py), or on IoT data its IoT
        types (tsbs_iot.py)."""
        if not self.spec.tsbs:
            return {}
        if self.spec.shape == "tsbs-iot":
            return {name: self._iot_query(query) for name, query in IOT.items()}
        return {name: self._tsbs_query(query) for name, query in DEVOPS.items()}

    def _iot_query(self, query: IotQuery) -> Callable[[Parameters], Query]:
        """An execution's statements and the client's part of the answer, all timed (tsbs_iot.py)."""
        def fetch(statement: str) -> tuple[list[str], list[list[Any]]]:
            return self.module.connection.fetch_named(statement, timeout_s=self.spec.query_timeout)

        return lambda parameters: lambda: Answer(tsbs_iot.execute(query, parameters, self.options.database, fetch))

    def _tsbs_query(self, query: DevopsQuery) -> Callable[[Parameters], Query]:
        convert = tsbs_queries.conversion(query)

        def bind(parameters: Parameters) -> Query:
            statement = tsbs_queries.statement(query, parameters, self.options.database)
            return lambda: Answer(self.module.connection.fetch_named(statement, timeout_s=self.spec.query_timeout), convert)

        return bind

    def text_query(self, language: str, text: str) -> Query:
        """A query file's text (tree model) in the target's database, its answer as rows (text_answers.py)."""
        statement = text_answers.in_database(text, self.options.database)
        return lambda: Answer(self.module.connection.fetch_named(statement, timeout_s=self.spec.query_timeout), text_answers.rows)

    def check_text(self, language: str, text: str) -> None:
        self.module.connection.fetch(f"EXPLAIN {text_answers.in_database(text, self.options.database)}")  # planned, nothing read

    def _rows(self, statement: str, convert: Callable[[Sequence[Any]], list[tuple[Any, ...]]] | None = None) -> Query:
        def run() -> Answer:
            return Answer(self.module.connection.fetch(statement, timeout_s=self.spec.query_timeout), convert)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        connection = self.module.connection
        if self.module.series.tree:
            paths = [path for table in self.spec.table_names
                     for path in connection.column(f"SHOW DEVICES root.{self.options.database}.{table}.*", "Device")]
            return sorted({device_of(path) for path in paths})
        return sorted({str(device) for table in self.spec.table_names
                       for (device,) in connection.fetch(f"SELECT DISTINCT device_id FROM {table}")})

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device always writes to the same table; the others hold none of its points.
        for table in self.spec.table_names:
            if self.module.series.tree:
                statement = f"SELECT temperature FROM {self.module.series.path(table, device.encode())}"  # in time order
            else:
                statement = f"SELECT time FROM {table} WHERE device_id = {literal(device)} ORDER BY time"
            with self.module.connection.session.execute_query_statement(statement) as data:
                data.set_fetch_size(page_size)
                while data.has_next_df():
                    frame = data.next_df()
                    if frame is not None and len(frame):
                        yield _epoch_ms(frame.iloc[:, 0])


def _per_device(rows: Sequence[list[Any]]) -> list[tuple[Any, ...]]:
    """ALIGN BY DEVICE rows (path, min, avg, max) with the device id instead of its path."""
    return [(device_of(path), *values) for path, *values in rows]


def _last_points(rows: Sequence[list[Any]]) -> list[tuple[Any, ...]]:
    """SELECT LAST rows (time, series path, value as text, type) as (device id, time, value)."""
    return [(device_of(series.rsplit(".", 1)[0]), int(time), float(value)) for time, series, value, _ in rows]


def _minutes_with_readings(rows: Sequence[list[Any]]) -> list[tuple[Any, ...]]:
    """GROUP BY time rows (minute, min, avg, max), the minutes without readings (NaN or None) left out."""
    return [(int(minute), *values) for minute, *values in rows if values[0] is not None and not math.isnan(values[0])]


def _epoch_ms(column: pd.Series) -> np.ndarray:
    """A page's time column as int64 epoch ms: numbers in the tree model, timestamps in the table model."""
    times: np.ndarray = column.dt.as_unit("ms").astype("int64").to_numpy() if column.dtype.kind == "M" else column.to_numpy().astype(np.int64)
    return times
