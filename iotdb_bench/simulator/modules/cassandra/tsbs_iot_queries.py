"""TSBS's 13 IoT query types on TSBS's Cassandra layout (tsbs_iot_series.py), with the semantics of
simulator/queries/tsbs_iot.py (TSBS's TimescaleDB text, cmd/tsbs_generate_queries/databases/timescaledb/iot.go).

TSBS has no IoT queries for Cassandra; these run as its DevOps ones do here (tsbs_queries.py): one
request per partition (a truck's series of a field and day, each of its prefixes), `query_concurrency`
in flight, merged on the client inside the timed call. The trucks of a fleet, their drivers, models
and capacities come from the series index (TSBS's tags table: the tags in the series ids), read before
the first execution, outside the timed call. What each partition's request asks:

- a truck's newest row (last-loc, single-last-loc, low-fuel, high-load): the newest point
  (`ORDER BY time DESC LIMIT 1`) of two of the measurement's fields in each of the truck's series of
  its newest day; a row lacks at most one field, so the newest of them is the row's time, and a
  field whose newest point is older is null in that row;
- a mean per 10-minute period (stationary-trucks, the driving sessions and durations): `floor(time,
  10m), sum(value), count(value) ... GROUP BY series_id, floor(time, 10m)`, epoch-aligned as
  time_bucket, summed over the truck's series; a period that has readings but no velocity (TSBS's
  null field) is known from latitude's periods, which those rows have;
- avg-vs-projected-fuel-consumption: the times of velocity's points above 1 (`value > 1 ALLOW
  FILTERING`, within the partition) and fuel_consumption's points, joined by time on the client;
- avg-load: `sum(value), count(value)` of current_load per partition;
- daily-activity, breakdown-frequency: status's points and fuel_state's times: a period's rows are the
  times of both together (a row lacks at most one of them), its null statuses the rows without status.
Null fields are absent points: CQL's aggregates and the client's leave them out as SQL leaves out NULLs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer, epoch_ms
from iotdb_bench.simulator.modules.cassandra.tsbs_iot_series import FIELD_TABLES, IotIndex
from iotdb_bench.simulator.modules.cassandra.tsbs_queries import fetch_all
from iotdb_bench.simulator.modules.cassandra.tsbs_series import days_between
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_iot import (
    DRIVING_VELOCITY,
    HIGH_LOAD,
    LONG_DAILY_PERIODS,
    LONG_DRIVING_PERIODS,
    LOW_FUEL,
    STATIONARY_VELOCITY,
    TEN_MINUTES_MS,
    IotQuery,
)
from iotdb_bench.simulator.queries.tsbs_iot_periods import Period, breakdown_frequency, daily_activity, daily_driving_hours, daily_sessions, mean_load_shares
from iotdb_bench.simulator.workload.tsbs.iot import FLEETS

ALL_TIME = Window(-(1 << 62), 1 << 62)
Periods = dict[int, list[Any]]  # 10-minute period (epoch ms) -> [sum, count] of a field's points there
_STATEMENTS = {
    "periods": "SELECT floor(time, 10m), sum(value), count(value) FROM {table} WHERE series_id = ? AND time >= ? AND time < ? "
               "GROUP BY series_id, floor(time, 10m)",
    "points": "SELECT toUnixTimestamp(time), value FROM {table} WHERE series_id = ?",
    "times": "SELECT toUnixTimestamp(time) FROM {table} WHERE series_id = ?",
    "above": "SELECT toUnixTimestamp(time) FROM {table} WHERE series_id = ? AND value > ? ALLOW FILTERING",
    "total": "SELECT sum(value), count(value) FROM {table} WHERE series_id = ?",
    "newest": "SELECT toUnixTimestamp(time), value FROM {table} WHERE series_id = ? ORDER BY time DESC LIMIT 1",
}


class IotQueries:
    def __init__(self, session: Any, keyspace: str, concurrency: int, index_timeout: float, planned: IotIndex | None = None):
        """`planned`: the series of a run still writing them (a mixed run's); else the database's are read."""
        self.session, self.keyspace, self.concurrency, self.index_timeout = session, keyspace, concurrency, index_timeout
        self._planned = planned is not None
        self._index: IotIndex | None = planned
        self._prepared: dict[tuple[str, str], Any] = {}

    def query(self, kind: IotQuery, parameters: Parameters) -> Callable[[], Answer]:
        """One execution: the series index read (untimed) and the query to time."""
        asked: tuple[str, ...] = parameters["trucks"] if kind.trucks else ()
        index = self._series(asked)
        window: Window = parameters["window"] if kind.window_ms else ALL_TIME

        def trucks() -> list[str]:
            if kind.trucks:
                return [truck for truck in asked if truck in index.tags]
            return index.of_fleet(parameters["fleet"]) if kind.fleet else index.trucks

        answers: dict[str, Callable[[], list[tuple[Any, ...]]]] = {
            "last-loc": lambda: self._last_locations(index, trucks()), "single-last-loc": lambda: self._last_locations(index, trucks()),
            "low-fuel": lambda: self._low_fuel(index, trucks()), "high-load": lambda: self._high_load(index, trucks()),
            "stationary-trucks": lambda: self._stationary(index, trucks(), window),
            "long-driving-sessions": lambda: self._long_sessions(index, trucks(), window, LONG_DRIVING_PERIODS),
            "long-daily-sessions": lambda: self._long_sessions(index, trucks(), window, LONG_DAILY_PERIODS),
            "avg-vs-projected-fuel-consumption": lambda: self._fuel_consumption(index, trucks()),
            "avg-daily-driving-duration": lambda: self._driving_duration(index, trucks()),
            "avg-daily-driving-session": lambda: self._driving_sessions(index, trucks()), "avg-load": lambda: self._load(index, trucks()),
            "daily-activity": lambda: self._activity(index, trucks()), "breakdown-frequency": lambda: self._breakdowns(index, trucks())}
        answer = answers[kind.name]
        return lambda: Answer(answer())

    def _series(self, trucks: Sequence[str]) -> IotIndex:
        """TSBS's client-side index: read once, and again when it does not know a truck asked for."""
        from cassandra.query import SimpleStatement

        if self._index is None or not (self._planned or self._index.knows(trucks)):
            names = []
            for table in sorted(set(FIELD_TABLES.values())):
                listing = SimpleStatement(f"SELECT DISTINCT series_id FROM {self.keyspace}.{table}", fetch_size=5000)
                names += [row[0] for row in self.session.execute(listing, timeout=self.index_timeout)]
            self._index = IotIndex.of(names)
        return self._index

    def _statement(self, kind: str, field_name: str) -> Any:
        key = (kind, FIELD_TABLES[field_name])
        if key not in self._prepared:
            self._prepared[key] = self.session.prepare(_STATEMENTS[kind].format(table=f"{self.keyspace}.{key[1]}"))
        return self._prepared[key]

    def _fetch(self, kind: str, field_name: str, partitions: list[tuple[str, str]], *extra: Any) -> dict[str, list[Any]]:
        """Per truck, the rows of its partitions (truck, series id) of one field, one request each."""
        statement = self._statement(kind, field_name)
        rows: dict[str, list[Any]] = {}
        for (truck, _), found in zip(partitions, fetch_all(self.session, [(statement, (name, *extra)) for _, name in partitions], self.concurrency)):
            rows.setdefault(truck, []).extend(found)
        return rows

    def _of(self, index: IotIndex, trucks: list[str], field_name: str, window: Window = ALL_TIME) -> list[tuple[str, str]]:
        """(truck, series id) of the trucks' partitions of a field with days in the window."""
        days = days_between(window.start_ms, window.end_ms)
        return [(truck, name) for truck in trucks for name, _ in index.partitions(truck, field_name, days)]

    def _periods(self, index: IotIndex, trucks: list[str], field_name: str, window: Window = ALL_TIME) -> dict[str, Periods]:
        """Per truck and 10-minute period of the window, the [sum, count] of the field's points, over all its series."""
        periods: dict[str, Periods] = {truck: {} for truck in trucks}
        for truck, rows in self._fetch("periods", field_name, self._of(index, trucks, field_name, window), window.start_ms, window.end_ms).items():
            for bucket, total, count in rows:
                cell = periods[truck].setdefault(epoch_ms(bucket), [0, 0])
                cell[0] += total
                cell[1] += count
        return periods

    # -- each truck's newest row -------------------------------------------------------------------
    def _newest(self, index: IotIndex, trucks: list[str], fields: tuple[str, str]) -> dict[str, list[Any]]:
        """Each truck's newest row of the measurement of `fields` (two of its fields): those fields' values there, None where null."""
        requests: list[tuple[str, int, str]] = []  # (truck, field position, series id)
        for truck in trucks:
            series = [(position, name, day) for position, field_name in enumerate(fields) for name, day in index.partitions(truck, field_name)]
            if series:
                last = max(day for _, _, day in series)
                requests += [(truck, position, name) for position, name, day in series if day == last]
        newest: dict[str, list[Any]] = {}  # truck -> per field its newest (time, value)
        for field_position, field_name in enumerate(fields):
            chosen = [(truck, name) for truck, position, name in requests if position == field_position]
            for truck, points in self._fetch("newest", field_name, chosen).items():
                if points:
                    newest.setdefault(truck, [None, None])[field_position] = max(points)
        rows = {}
        for truck, points in newest.items():
            last = max(point[0] for point in points if point is not None)
            rows[truck] = [point[1] if point is not None and point[0] == last else None for point in points]
        return rows

    def _last_locations(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        return [(truck, index.tags[truck].get("driver"), longitude, latitude)
                for truck, (latitude, longitude) in self._newest(index, trucks, ("latitude", "longitude")).items()]

    def _low_fuel(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        return [(truck, index.tags[truck].get("driver"), fuel) for truck, (fuel, _) in self._newest(index, trucks, ("fuel_state", "current_load")).items()
                if fuel is not None and fuel < LOW_FUEL]

    def _high_load(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        return [(truck, index.tags[truck].get("driver"), load) for truck, (_, load) in self._newest(index, trucks, ("fuel_state", "current_load")).items()
                if load is not None and load / _number(index, truck, "load_capacity") > HIGH_LOAD]

    # -- windows of readings -----------------------------------------------------------------------
    def _stationary(self, index: IotIndex, trucks: list[str], window: Window) -> list[tuple[Any, ...]]:
        answer = []
        for truck, periods in self._periods(index, trucks, "velocity", window).items():
            total, count = sum(cell[0] for cell in periods.values()), sum(cell[1] for cell in periods.values())
            if count and total < STATIONARY_VELOCITY * count:
                answer.append((truck, index.tags[truck].get("driver")))
        return answer

    def _long_sessions(self, index: IotIndex, trucks: list[str], window: Window, more_than: int) -> list[tuple[Any, ...]]:
        return [(truck, index.tags[truck].get("driver")) for truck, periods in self._periods(index, trucks, "velocity", window).items()
                if len(_driving(periods, DRIVING_VELOCITY)) > more_than]

    # -- the whole data ----------------------------------------------------------------------------
    def _fuel_consumption(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        """Per fleet, over the readings above velocity 1: the mean fuel consumption (summed in tenths, exact:
        one decimal) and the trucks' nominal one."""
        moving = self._fetch("above", "velocity", self._of(index, trucks, "velocity"), float(DRIVING_VELOCITY))
        fuel = self._fetch("points", "fuel_consumption", self._of(index, trucks, "fuel_consumption"))
        fleets = {fleet: [0, 0, 0, 0.0] for fleet in FLEETS}  # fuel tenths, fuel count, moving rows, nominal sum
        for truck in trucks:
            times = {row[0] for row in moving.get(truck, [])}
            sums = fleets[index.tags[truck]["fleet"]]
            consumed = [value for time, value in fuel.get(truck, []) if time in times]
            sums[0] += sum(round(value * 10) for value in consumed)
            sums[1] += len(consumed)
            sums[2] += len(times)
            sums[3] += len(times) * _number(index, truck, "nominal_fuel_consumption")
        return [(fleet, tenths / 10 / count if count else None, nominal / rows) for fleet, (tenths, count, rows, nominal) in fleets.items() if rows]

    def _driving_duration(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        answer = []
        for truck, periods in self._periods(index, trucks, "velocity").items():
            hours = daily_driving_hours((period, 0, total, count) for period, (total, count) in periods.items())
            if hours is not None:
                tags = index.tags[truck]
                answer.append((tags.get("fleet"), truck, tags.get("driver"), hours))
        return answer

    def _driving_sessions(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        """Per truck and day, the mean length of its sessions; a period with readings but no velocity (known from
        latitude's periods) is neither driving nor not, and no change."""
        velocity, rows = self._periods(index, trucks, "velocity"), self._periods(index, trucks, "latitude")
        return [(truck, day, seconds) for truck in trucks
                for day, seconds in daily_sessions([(period, 0, *velocity[truck].get(period, (0, 0))) for period in set(velocity[truck]) | set(rows[truck])])]

    def _load(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        """Per fleet, model and capacity, the mean over the trucks with diagnostics of their mean load's share of it."""
        totals = self._fetch("total", "current_load", self._of(index, trucks, "current_load"))
        return mean_load_shares((index.tags[truck].get("fleet"), index.tags[truck].get("model"), _number(index, truck, "load_capacity"),
                                 sum(row[0] for row in totals.get(truck, [])), sum(row[1] for row in totals.get(truck, [])))
                                for truck in trucks
                                # a truck with a diagnostics row (each has fuel_state or current_load)
                                if any(index.partitions(truck, field_name) for field_name in ("fuel_state", "current_load")))

    def _status_periods(self, index: IotIndex, trucks: list[str]) -> dict[str, list[Period]]:
        """Per truck its 10-minute periods with diagnostics: (start, rows, statuses' sum, statuses)."""
        status = self._fetch("points", "status", self._of(index, trucks, "status"))
        fuel = self._fetch("times", "fuel_state", self._of(index, trucks, "fuel_state"))
        periods: dict[str, dict[int, list[int]]] = {}
        for truck in trucks:
            cells = periods.setdefault(truck, {})
            for time in {row[0] for row in status.get(truck, [])} | {row[0] for row in fuel.get(truck, [])}:
                cells.setdefault(time - time % TEN_MINUTES_MS, [0, 0, 0])[0] += 1
            for time, value in status.get(truck, []):
                cell = cells[time - time % TEN_MINUTES_MS]
                cell[1] += value
                cell[2] += 1
        return {truck: [(period, rows, total, count) for period, (rows, total, count) in cells.items()] for truck, cells in periods.items()}

    def _activity(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        return daily_activity((index.tags[truck].get("fleet"), index.tags[truck].get("model"), periods)
                              for truck, periods in self._status_periods(index, trucks).items())

    def _breakdowns(self, index: IotIndex, trucks: list[str]) -> list[tuple[Any, ...]]:
        return breakdown_frequency((index.tags[truck].get("model"), periods) for truck, periods in self._status_periods(index, trucks).items())


def _driving(periods: Periods, above: float) -> list[int]:
    """The periods whose mean is above `above` (a period is there only with points)."""
    return [period for period, (total, count) in periods.items() if count and total > above * count]


def _number(index: IotIndex, truck: str, tag: str) -> float:
    return float(index.tags[truck][tag])
