"""The influxdb module's read side: the six Flux queries (device-downsample is `aggregateWindow(every:
1m)`, windows labelled by their start), TSBS's DevOps and IoT query types in TSBS's InfluxQL, a query file's
InfluxQL texts (influxql_answers.py), the scan of a
device's series streamed as CSV and cut into pages, and the visibility probe's look-up of a marker in
its own millisecond."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer, with_times
from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import Query, ReaderRole
from iotdb_bench.simulator.modules.influxdb import influxql_answers, tsbs_iot_grouped, tsbs_iot_queries, tsbs_queries
from iotdb_bench.simulator.modules.influxdb.options import RANGE, InfluxRole
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, DevopsQuery
from iotdb_bench.simulator.queries.tsbs_iot import IOT, IotQuery
from iotdb_bench.simulator.spec import TSBS_IOT_QUERIES, default_queries
from iotdb_bench.simulator.workload.events import EventBatch


class InfluxReader(InfluxRole, ReaderRole):
    def queries(self) -> dict[str, Query]:
        data = self._data()
        # Aggregates of one stream are combined into one row: union of the named values, then pivot.
        one_row = '|> group() |> pivot(rowKey: [], columnKey: ["_field"], valueColumn: "_value")'
        per_device = '|> group() |> pivot(rowKey: ["device_id"], columnKey: ["_field"], valueColumn: "_value")'
        every = 'data |> group() |> keep(columns: ["_value"])'
        by_device = 'data |> group(columns: ["device_id"]) |> keep(columns: ["device_id", "_value"])'
        hour = f"start: {_rfc3339(DOWNSAMPLE_START_MS)}, stop: {_rfc3339(DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS)}"
        minutes = (f'from(bucket: "{self.options.bucket}") |> range({hour})\n'
                   f'  |> filter(fn: (r) => {self._measurements()} and r._field == "temperature" and r.device_id == "{DOWNSAMPLE_DEVICE}")\n'
                   '  |> group() |> keep(columns: ["_start", "_stop", "_time", "_value"])')
        windows = ", ".join(f'hour |> aggregateWindow(every: 1m, fn: {name}, createEmpty: false, timeSrc: "_start") '
                            f'|> set(key: "_field", value: "{name}")' for name in ("min", "mean", "max"))
        return {
            "count-events": self._rows(f"{data}\ndata |> group() |> count()", ["_value"], total=True),
            "temperature-min-max": self._rows(
                f"{data}\nvalues = {every}\nunion(tables: [{_named(['min', 'max'], 'values')}]) {one_row}", ["min", "max"]),
            "temperature-stats": self._rows(
                f"{data}\nvalues = {every}\nunion(tables: [{_named(['min', 'mean', 'max'], 'values')}]) {one_row}", ["min", "mean", "max"]),
            "temperature-stats-per-device": self._rows(
                f"{data}\nbyDevice = {by_device}\nunion(tables: [{_named(['min', 'mean', 'max'], 'byDevice')}]) {per_device}",
                ["device_id", "min", "mean", "max"]),
            # A device always writes to the same measurement, so each series' last point is its newest event.
            "newest-per-device": self._rows(f'{data}\ndata |> last() |> group() |> keep(columns: ["device_id", "_time", "_value"])',
                                            ["device_id", "_time", "_value"], times=(1,)),
            "device-downsample": self._rows(
                f'hour = {minutes}\nunion(tables: [{windows}])\n'
                '  |> group() |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")',
                ["_time", "min", "mean", "max"], times=(0,)),
        }

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's query types of the data's use case in TSBS's InfluxQL, through the 1.x query API: the
        DevOps types (tsbs_queries.py), or the IoT types InfluxQL answers exactly (tsbs_iot_queries.py)."""
        if not self.spec.tsbs:
            return {}
        if default_queries(self.spec.shape) == TSBS_IOT_QUERIES:
            refused = {name for name, _ in tsbs_iot_queries.REFUSED}
            return {name: self._iot_influxql(query) for name, query in IOT.items() if name not in refused}
        return {name: self._influxql(query) for name, query in DEVOPS.items()}

    def _iot_influxql(self, query: IotQuery) -> Callable[[Parameters], Query]:
        if query.name in tsbs_iot_grouped.GROUPED:  # the series index, then a statement per group of trucks: every call timed
            return lambda parameters: lambda: tsbs_iot_grouped.execute(
                query, parameters, lambda statements: self.module.connection.influxql_statements(statements, bounded=True))

        def bind(parameters: Parameters) -> Query:
            listing = tsbs_iot_queries.series_statement(query, parameters)

            def run() -> Answer:  # both calls timed: the trucks' series, then the query over them
                tags_of = tsbs_iot_queries.truck_tags(self.module.connection.influxql_series(listing, bounded=True))
                convert = tsbs_iot_queries.conversion(query, tags_of)
                if not tags_of:
                    return Answer([], convert)
                statement = tsbs_iot_queries.statement(query, parameters, sorted(tags_of))
                return Answer(self.module.connection.influxql_series(statement, bounded=True), convert)

            return run

        return bind

    def _influxql(self, query: DevopsQuery) -> Callable[[Parameters], Query]:
        convert = tsbs_queries.conversion(query)

        def bind(parameters: Parameters) -> Query:
            statement = tsbs_queries.statement(query, parameters)
            return lambda: Answer(self.module.connection.influxql_series_received(statement), convert)

        return bind

    def text_query(self, language: str, text: str) -> Query:
        """A query file's InfluxQL text through the 1.x query API, its series as rows (influxql_answers.py)."""
        convert = influxql_answers.conversion(text)
        return lambda: Answer(self.module.connection.influxql_series_received(text), convert)

    def check_text(self, language: str, text: str) -> None:
        self.module.connection.influxql_series(f"EXPLAIN {text}")  # parsed and planned, nothing read

    def marker_visible(self, marker: EventBatch) -> bool:
        """The marker's point: its measurement, device tag and sequence number, in its own millisecond."""
        measurement, device, sequence = self.marker_key(marker)
        nanoseconds = int(marker.timestamp_ms[0]) * 1_000_000
        flux = (f'from(bucket: "{self.options.bucket}") |> range(start: time(v: {nanoseconds}), stop: time(v: {nanoseconds + 1_000_000}))\n'
                f'  |> filter(fn: (r) => r._measurement == "{measurement}" and r.device_id == "{device}" and r._field == "sequence_number")\n'
                f'  |> filter(fn: (r) => r._value == {sequence})')
        return any(table.records for table in self.module.connection.flux(flux))

    def _measurements(self) -> str:
        return "(" + " or ".join(f'r._measurement == "{name}"' for name in self.spec.table_names) + ")"

    def _data(self, device: str | None = None) -> str:
        """Flux binding `data`: the temperature values of the run's measurements (of one device)."""
        of_device = f' and r.device_id == "{device}"' if device else ""
        return (f'data = from(bucket: "{self.options.bucket}") |> {RANGE}\n'
                f'  |> filter(fn: (r) => {self._measurements()} and r._field == "temperature"{of_device})')

    def _rows(self, query: str, columns: list[str], times: tuple[int, ...] = (), total: bool = False) -> Query:
        """A Flux query whose records' `columns` are the answer's rows; `total`: one count, 0 when the
        query finds nothing (Flux returns no table at all then)."""

        def rows_of(tables: Sequence[Any]) -> list[tuple[Any, ...]]:
            rows = [tuple(record.values.get(column) for column in columns) for table in tables for record in table.records]
            return [(sum(row[0] for row in rows),)] if total else with_times(*times)(rows)

        def run() -> Answer:
            return Answer(self.module.connection.flux(query, bounded=True), rows_of)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        query = f'{self._data()}\ndata |> last() |> group() |> keep(columns: ["device_id"])'
        return sorted({record.values["device_id"] for table in self.module.connection.flux(query) for record in table.records})

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        """The device's series streamed as plain CSV (no annotations), read line by line and cut into pages."""
        query = f'{self._data(device)}\ndata |> keep(columns: ["_time", "_value"])'
        rows = self.module.connection.flux_csv(query)
        page: list[str] = []
        for row in rows:
            if len(row) < 5:  # a blank line between tables
                continue
            page.append(row[3][:-1])  # ",result,table,_time,_value": RFC 3339 UTC time without its Z
            if len(page) == page_size:
                yield _epoch_ms(page)
                page = []
        if page:
            yield _epoch_ms(page)


def _epoch_ms(times: list[str]) -> np.ndarray:
    return np.array(times, dtype="datetime64[ms]").astype(np.int64)


def _rfc3339(ms: int) -> str:
    return np.datetime_as_string(np.datetime64(ms, "ms"), timezone="UTC")


def _named(aggregates: list[str], stream: str) -> str:
    """`stream |> min() |> set(key: "_field", value: "min"), ...`: aggregates tagged with their name."""
    return ", ".join(f'{stream} |> {name}() |> set(key: "_field", value: "{name}")' for name in aggregates)
