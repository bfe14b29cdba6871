"""The victoriametrics module's read side: the six queries as MetricsQL (instant queries whose window
covers every time an event can have; device-downsample a range query, step 1m, whose window at each
minute m is exactly [m, m + 1 min)), TSBS's DevOps query types that MetricsQL expresses
(tsbs_queries.py), a query file's texts as instant queries (promql_answers.py), and scans streaming
/api/v1/export a page per line."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import Query, ReaderRole
from iotdb_bench.simulator.modules.victoriametrics import promql_answers, tsbs_iot_queries, tsbs_queries
from iotdb_bench.simulator.modules.victoriametrics.options import DAY_S, FUTURE_LIMIT_S, VmRole
from iotdb_bench.simulator.modules.victoriametrics.series import selector
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, DevopsQuery
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS


class VmReader(VmRole, ReaderRole):
    def queries(self) -> dict[str, Query]:
        temperature = self.module.series.temperature
        series = selector(temperature)

        def over(function: str) -> str:
            return f"{function}({series}[{{window}}])"

        def named(**expressions: str) -> str:
            """Several results in one answer, each series labelled `stat` with its name."""
            return "union(" + ", ".join(f'label_set({expression}, "stat", "{name}")' for name, expression in expressions.items()) + ")"

        # Each minute m's window is (m + 59,999 ms - 1 min, m + 59,999 ms]: [m, m + 1 min) in milliseconds.
        device = '{__name__=~"' + "|".join(temperature) + f'", device_id="{DOWNSAMPLE_DEVICE}"}}'
        minute = {name: f"{name}_over_time({device}[1m] offset -59999ms)" for name in ("min", "avg", "max")}
        return {
            "count-events": self._query(f"sum({over('count_over_time')})", lambda result: [(round(value),) for (value,) in one_row(result)]),
            "temperature-min-max": self._query(named(min=f"min({over('min_over_time')})", max=f"max({over('max_over_time')})"),
                                               ordered("min", "max")),
            "temperature-stats": self._query(named(
                min=f"min({over('min_over_time')})",
                avg=f"sum({over('sum_over_time')}) / sum({over('count_over_time')})",
                max=f"max({over('max_over_time')})"), ordered("min", "avg", "max")),
            "temperature-stats-per-device": self._query(named(
                min=over("min_over_time"), avg=over("avg_over_time"), max=over("max_over_time")), ordered("min", "avg", "max", per_device=True)),
            # The newest sample of each series: its value and (tlast_over_time) its own time, in seconds.
            "newest-per-device": self._query(named(value=over("last_over_time"), time=over("tlast_over_time")),
                                             lambda result: [(d, round(t * 1000), v) for d, t, v in ordered("time", "value", per_device=True)(result)]),
            "device-downsample": self._range_query(named(**minute), DOWNSAMPLE_START_MS, DOWNSAMPLE_START_MS + (DOWNSAMPLE_MINUTES - 1) * MINUTE_MS),
        }

    def _query(self, expression: str, rows: Callable[[Sequence[dict[str, Any]]], list[tuple[Any, ...]]]) -> Query:
        def run() -> Answer:
            return Answer(self.module.connection.instant(expression, bounded=True), rows)

        return run

    def text_query(self, language: str, text: str) -> Query:
        """A query file's text, an instant query after the newest possible event (promql_answers.py)."""
        convert = promql_answers.conversion(text)
        return lambda: Answer(self.module.connection.answer(
            {"query": text, "time": f"{time.time() + FUTURE_LIMIT_S:.3f}", "nocache": "1"}, "/api/v1/query", bounded=True), convert)

    def check_text(self, language: str, text: str) -> None:
        """VictoriaMetrics has no EXPLAIN: the text is evaluated at the epoch's start, before any event
        (a text naming its own times with @ reads them), and refused in the server's words."""
        self.module.connection.answer({"query": text, "time": "0", "nocache": "1"}, "/api/v1/query", bounded=False)

    def _range_query(self, expression: str, start_ms: int, end_ms: int) -> Query:
        def run() -> Answer:
            params = {"query": expression, "start": f"{start_ms / 1000:.3f}", "end": f"{end_ms / 1000:.3f}", "step": "60s", "nocache": "1"}
            return Answer(self.module.connection.answer(params, "/api/v1/query_range", bounded=True), per_minute)

        return run

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's DevOps query types that MetricsQL expresses, in TSBS's MetricsQL made exact (tsbs_queries.py);
        on IoT data avg-load (tsbs_iot_queries.py)."""
        if not self.spec.tsbs:
            return {}
        if self.spec.shape == "tsbs-iot":  # the IoT types MetricsQL answers exactly (tsbs_iot_queries.py)
            newest = {name: self._newest_rows(name) for name in ("last-loc", "single-last-loc", "low-fuel", "high-load")}
            return {**newest, "stationary-trucks": self._stationary_trucks, "long-driving-sessions": self._long_sessions("long-driving-sessions"),
                    "long-daily-sessions": self._long_sessions("long-daily-sessions"),
                    "avg-daily-driving-duration": lambda _: self._daily_driving_duration,
                    "avg-load": lambda _: lambda: Answer(self.module.connection.instant(
                        tsbs_iot_queries.AVG_LOAD, bounded=True, since_ms=self.module.series.oldest_ms), tsbs_iot_queries.avg_load_rows)}
        refused = {name for name, _ in tsbs_queries.REFUSED}
        return {name: self._metricsql(query) for name, query in DEVOPS.items() if name not in refused}

    def _stationary_trucks(self, parameters: Parameters) -> Query:
        newest_ms = round((time.time() + FUTURE_LIMIT_S) * 1000)
        params = tsbs_iot_queries.stationary_trucks(parameters["fleet"], parameters["window"], self.module.series.oldest_ms, newest_ms)
        return lambda: Answer(self.module.connection.answer(dict(params), "/api/v1/query", bounded=True), tsbs_iot_queries.truck_rows)

    def _newest_rows(self, query: str) -> Callable[[Parameters], Query]:
        convert = tsbs_iot_queries.newest_conversion(query)

        def bind(parameters: Parameters) -> Query:
            chosen = f'name="{parameters["trucks"][0]}"' if query == "single-last-loc" else f'fleet="{parameters["fleet"]}"'
            expression = tsbs_iot_queries.newest_rows(query, chosen)
            return lambda: Answer(self.module.connection.instant(expression, bounded=True, since_ms=self.module.series.oldest_ms), convert)

        return bind

    def _long_sessions(self, query: str) -> Callable[[Parameters], Query]:
        def bind(parameters: Parameters) -> Query:
            newest_ms = round((time.time() + FUTURE_LIMIT_S) * 1000)
            params = tsbs_iot_queries.long_sessions(query, parameters["fleet"], parameters["window"], self.module.series.oldest_ms, newest_ms)
            return lambda: Answer(self.module.connection.answer(dict(params), "/api/v1/query", bounded=True), tsbs_iot_queries.truck_rows)

        return bind

    def _daily_driving_duration(self) -> Answer:
        """Both queries timed: the data's range, then the days' driving hours over it."""
        connection = self.module.connection
        params = tsbs_iot_queries.daily_driving_duration(connection.instant(tsbs_iot_queries.DATA_RANGE, bounded=True, since_ms=self.module.series.oldest_ms))
        return Answer(connection.answer(params, "/api/v1/query", bounded=True) if params else [], tsbs_iot_queries.duration_rows)

    def _metricsql(self, query: DevopsQuery) -> Callable[[Parameters], Query]:
        convert = tsbs_queries.conversion(query)

        def bind(parameters: Parameters) -> Query:
            planned = tsbs_queries.requests(query, parameters)

            def run() -> Answer:
                connection, series = self.module.connection, []
                if planned.whole:
                    expression, start, end, step = planned.whole
                    series += connection.answer({"query": expression, "start": _seconds(start), "end": _seconds(end), "step": _seconds(step),
                                                 "nocache": "1"}, "/api/v1/query_range", bounded=True)
                if planned.partial:
                    expression, at = planned.partial
                    series += connection.answer({"query": expression, "time": _seconds(at), "nocache": "1"}, "/api/v1/query", bounded=True)
                return Answer(series, convert)

            return run

        return bind

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        connection = self.module.connection
        connection.flush()
        params = {"match[]": selector(self.module.series.temperature), "start": str(TIME_ORIGIN_MS // 1000 - DAY_S),
                  "end": f"{time.time() + FUTURE_LIMIT_S:.0f}"}
        # The series API, not label values: those may still list the labels of deleted series.
        answer = connection.request("listing the devices", "GET", "/api/v1/series", params=params).json()
        return sorted({series["device_id"] for series in answer["data"]})

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device is one series (a device always writes to the same table): one line per page.
        selected = '{__name__=~"' + "|".join(self.module.series.temperature) + f'", device_id="{device}"}}'
        for line in self.module.connection.export(selected, page_size):
            yield np.array(line["timestamps"], dtype=np.int64)


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}"


def ordered(*names: str, per_device: bool = False) -> Callable[[Sequence[dict[str, Any]]], list[tuple[Any, ...]]]:
    """The `stat`-labelled results as rows with the stats in the order of `names` (the common form),
    one row in all, or one per device (device id first)."""

    def convert(result: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
        groups: dict[str, dict[str, float]] = {}
        for series in result:
            key = series["metric"].get("device_id", "") if per_device else ""
            groups.setdefault(key, {})[series["metric"]["stat"]] = float(series["value"][1])
        rows = [tuple(stats.get(name) for name in names) for stats in (groups[key] for key in sorted(groups))]
        return [(key, *row) for key, row in zip(sorted(groups), rows)] if per_device else rows

    return convert


def per_minute(result: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """A range query's `stat`-labelled series (min, avg, max) as rows (minute ms, min, avg, max)."""
    minutes: dict[int, dict[str, float]] = {}
    for series in result:
        for at, value in series["values"]:
            minutes.setdefault(round(float(at) * 1000), {})[series["metric"]["stat"]] = float(value)
    return [(minute, stats.get("min"), stats.get("avg"), stats.get("max")) for minute, stats in sorted(minutes.items())]


def one_row(result: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The `stat`-labelled results of a global aggregation as one row (none when there is no data)."""
    values = {series["metric"].get("stat", "value"): float(series["value"][1]) for series in result}
    return [tuple(values[name] for name in sorted(values))] if values else []
