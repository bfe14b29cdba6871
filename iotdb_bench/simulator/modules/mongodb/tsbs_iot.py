"""TSBS's 13 IoT query types as aggregation pipelines over the `readings` and `diagnostics` collections
(tsbs.py's documents), with the semantics of simulator/queries/tsbs_iot.py (TSBS's TimescaleDB text,
cmd/tsbs_generate_queries/databases/timescaledb/iot.go). TSBS has no IoT queries for MongoDB (nor IoT data:
its mongo serializer takes string tags only, and the trucks' capacities are numbers).

A document carries its truck's tags, and TSBS's null tags leave one out of some of them. The trucks' tags
(TimescaleDB's `tags` table) are the distinct `tags` documents of both collections (`$group` on the
metaField) that hold all eight: each truck is its one combination (a truck is missing only if none of its
documents carries all eight; about 1% lack one). The rows are then grouped by `tags.name` alone and joined to
their truck's tags here, so a row whose fleet or model is null still counts for its truck, and a row
without a name (TSBS's nulled name: its group's key has no name) for none, as TSBS's SQL joins them.

Only simple stages ($match, $sort, $group), MongoDB 5.0+'s: a truck's newest row is MongoDB's documented
"last point" pattern ($sort on name and time, newest first, then `$first` per name); per truck or per truck
and epoch-aligned 10-minute period (`$dateTrunc` with `binSize: 10`, whose bins start at MongoDB's
reference date 2000-01-01T00:00:00Z, a multiple of 10 minutes after the epoch) the rows (`$sum: 1`), and
the `$sum` and the count of one field's values (`$isNumber`: a missing field, TSBS's null, is no value, as
SQL's avg skips a null): a mean is compared as sum against count. What SQL does with window functions over
the periods (TSBS's lag/lead: a session's changes, a breakdown's turn: simulator/queries/tsbs_iot_periods.py)
is done here over the periods fetched, as are the HAVING tests and the groups by the trucks' tags, inside
the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer, epoch_ms
from iotdb_bench.simulator.modules.mongodb.tsbs import FIELDS, META_FIELD, TIME_FIELD
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_iot import (
    DAY_MS,
    DRIVING_VELOCITY,
    HIGH_LOAD,
    LONG_DAILY_PERIODS,
    LONG_DRIVING_PERIODS,
    LOW_FUEL,
    STATIONARY_VELOCITY,
    IotQuery,
)
from iotdb_bench.simulator.queries.tsbs_iot_periods import Period, breakdown_frequency, daily_activity, daily_sessions
from iotdb_bench.simulator.workload.tsbs.iot import TAGS

READINGS, DIAGNOSTICS = "readings", "diagnostics"
NAME, FLEET = f"{META_FIELD}.name", f"{META_FIELD}.fleet"
TAG_COUNT = len(TAGS)
PERIOD = {"$dateTrunc": {"date": f"${TIME_FIELD}", "unit": "minute", "binSize": 10}}  # epoch-aligned 10 minutes
Aggregate = Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]  # a collection and a pipeline -> its result documents
Trucks = dict[str, dict[str, Any]]  # a truck's name -> its eight tags
Rows = list[tuple[Any, ...]]


class IotPipelines:
    def __init__(self, aggregate: Aggregate):
        self.aggregate = aggregate

    def query(self, kind: IotQuery, parameters: Parameters) -> Callable[[], Answer]:
        answers: dict[str, Callable[[], Rows]] = {
            "last-loc": lambda: self._last_locations(parameters, kind), "single-last-loc": lambda: self._last_locations(parameters, kind),
            "low-fuel": lambda: self._low_fuel(parameters, kind), "high-load": lambda: self._high_load(parameters, kind),
            "stationary-trucks": lambda: self._stationary(parameters, kind),
            "long-driving-sessions": lambda: self._long_sessions(parameters, kind, LONG_DRIVING_PERIODS),
            "long-daily-sessions": lambda: self._long_sessions(parameters, kind, LONG_DAILY_PERIODS),
            "avg-vs-projected-fuel-consumption": self._fuel_consumption, "avg-daily-driving-duration": self._driving_duration,
            "avg-daily-driving-session": self._driving_sessions, "avg-load": self._load, "daily-activity": self._activity,
            "breakdown-frequency": self._breakdowns}
        rows = answers[kind.name]
        return lambda: Answer(rows())

    # -- the pipelines -----------------------------------------------------------------------------
    def _trucks(self, match: dict[str, Any] | None = None) -> Trucks:
        """The trucks' tags (TimescaleDB's tags table): the distinct tags documents that hold all eight."""
        stages = [*([{"$match": match}] if match else []), {"$group": {"_id": f"${META_FIELD}"}}]
        return {group["_id"]["name"]: group["_id"] for collection in (READINGS, DIAGNOSTICS)
                for group in self.aggregate(collection, stages) if len(group["_id"]) == TAG_COUNT}

    def _chosen(self, parameters: Parameters, kind: IotQuery) -> Trucks:
        """The trucks an execution draws: a fleet's, or the trucks named."""
        return self._trucks({NAME: {"$in": list(parameters["trucks"])}} if kind.trucks else {FLEET: parameters["fleet"]})

    def _newest(self, collection: str, trucks: Trucks) -> dict[str, dict[str, Any]]:
        """Each truck's newest document's fields (a null one absent), for those that have one."""
        if not trucks:
            return {}
        stages: list[dict[str, Any]] = [{"$match": {NAME: {"$in": sorted(trucks)}}}, {"$sort": {NAME: 1, TIME_FIELD: -1}},
                  {"$group": {"_id": f"${NAME}", FIELDS: {"$first": f"${FIELDS}"}}}]
        return {newest["_id"]: newest[FIELDS] for newest in self.aggregate(collection, stages)}

    def _figures(self, collection: str, field: str, key: Any, match: dict[str, Any] | None) -> list[tuple[Any, int, float, int]]:
        """Per group of `key`: its rows, and the sum and count of the field's values in them."""
        value = f"${FIELDS}.{field}"
        group = {"_id": key, "rows": {"$sum": 1}, "sum": {"$sum": value}, "count": {"$sum": {"$cond": [{"$isNumber": value}, 1, 0]}}}
        stages = [*([{"$match": match}] if match else []), {"$group": group}]
        return [(found["_id"], found["rows"], found["sum"], found["count"]) for found in self.aggregate(collection, stages)]

    def _per_truck(self, collection: str, field: str, match: dict[str, Any] | None = None) -> dict[str, tuple[int, float, int]]:
        """Per named truck: its rows, and the sum and count of the field's values in them."""
        return {name: (rows, total, count) for name, rows, total, count in self._figures(collection, field, f"${NAME}", match) if name is not None}

    def _periods(self, collection: str, field: str, match: dict[str, Any] | None = None) -> dict[str, list[Period]]:
        """Per named truck, its 10-minute periods with rows: (start, rows, sum and count of the field's values)."""
        periods: dict[str, list[Period]] = {}
        for key, rows, total, count in self._figures(collection, field, {"name": f"${NAME}", "period": PERIOD}, match):
            if "name" in key:  # a nameless row's group: MongoDB leaves the missing name out of the key
                periods.setdefault(key["name"], []).append((epoch_ms(key["period"]), rows, total, count))
        return periods

    # -- the trucks' newest rows -------------------------------------------------------------------
    def _last_locations(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        return [(name, trucks[name]["driver"], fields.get("longitude"), fields.get("latitude"))
                for name, fields in self._newest(READINGS, trucks).items()]

    def _low_fuel(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        return [(name, trucks[name]["driver"], fields["fuel_state"]) for name, fields in self._newest(DIAGNOSTICS, trucks).items()
                if fields.get("fuel_state") is not None and fields["fuel_state"] < LOW_FUEL]

    def _high_load(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        return [(name, trucks[name]["driver"], fields["current_load"]) for name, fields in self._newest(DIAGNOSTICS, trucks).items()
                if fields.get("current_load") is not None and fields["current_load"] / trucks[name]["load_capacity"] > HIGH_LOAD]

    # -- windows of a fleet's readings -------------------------------------------------------------
    def _window(self, parameters: Parameters, trucks: Trucks) -> dict[str, Any]:
        from bson.datetime_ms import DatetimeMS

        window: Window = parameters["window"]
        return {NAME: {"$in": sorted(trucks)}, TIME_FIELD: {"$gte": DatetimeMS(window.start_ms), "$lt": DatetimeMS(window.end_ms)}}

    def _stationary(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        if not trucks:
            return []
        velocity = self._per_truck(READINGS, "velocity", self._window(parameters, trucks))
        return [(name, trucks[name]["driver"]) for name, (_, total, count) in velocity.items() if count and total < STATIONARY_VELOCITY * count]

    def _long_sessions(self, parameters: Parameters, kind: IotQuery, more_than: int) -> Rows:
        trucks = self._chosen(parameters, kind)
        if not trucks:
            return []
        periods = self._periods(READINGS, "velocity", self._window(parameters, trucks))
        return [(name, trucks[name]["driver"]) for name, found in periods.items()
                if sum(1 for _, _, total, count in found if _driving(total, count)) > more_than]

    # -- the whole data ----------------------------------------------------------------------------
    def _fuel_consumption(self) -> Rows:
        trucks = self._trucks()
        moving = self._per_truck(READINGS, "fuel_consumption", {f"{FIELDS}.velocity": {"$gt": DRIVING_VELOCITY}})
        fleets: dict[str, list[float]] = {}  # fleet -> [fuel sum, fuel count, rows, nominal sum]
        for name, (rows, total, count) in moving.items():
            if name in trucks:
                sums = fleets.setdefault(trucks[name]["fleet"], [0.0, 0.0, 0.0, 0.0])
                for position, value in enumerate((total, count, rows, rows * trucks[name]["nominal_fuel_consumption"])):
                    sums[position] += value
        return [(fleet, total / count if count else None, nominal / rows) for fleet, (total, count, rows, nominal) in fleets.items() if rows]

    def _driving_duration(self) -> Rows:
        trucks = self._trucks()
        answer = []
        for name, periods in self._periods(READINGS, "velocity").items():
            if name not in trucks:
                continue
            days: dict[int, int] = {}
            for period, _, total, count in periods:
                if _driving(total, count):
                    days[period - period % DAY_MS] = days.get(period - period % DAY_MS, 0) + 1
            if days:
                hours = [driving // 6 for driving in days.values()]  # TSBS divides integers
                answer.append((trucks[name]["fleet"], name, trucks[name]["driver"], sum(hours) / len(hours)))
        return answer

    def _driving_sessions(self) -> Rows:
        trucks = self._trucks()
        return [(name, day, seconds) for name, periods in self._periods(READINGS, "velocity").items() if name in trucks
                for day, seconds in daily_sessions(periods)]

    def _load(self) -> Rows:
        trucks = self._trucks()
        groups: dict[tuple[str, str, float], list[float]] = {}
        for name, (_, total, count) in self._per_truck(DIAGNOSTICS, "current_load").items():
            if name in trucks:
                tags = trucks[name]
                shares = groups.setdefault((tags["fleet"], tags["model"], tags["load_capacity"]), [])
                if count:
                    shares.append(total / count / tags["load_capacity"])
        return [(*group, sum(shares) / len(shares) if shares else None) for group, shares in groups.items()]

    def _activity(self) -> Rows:
        trucks = self._trucks()
        return daily_activity((trucks[name]["fleet"], trucks[name]["model"], periods)
                              for name, periods in self._periods(DIAGNOSTICS, "status").items() if name in trucks)

    def _breakdowns(self) -> Rows:
        trucks = self._trucks()
        return breakdown_frequency((trucks[name]["model"], periods) for name, periods in self._periods(DIAGNOSTICS, "status").items()
                                   if name in trucks)


def _driving(total: float, count: int) -> bool:
    """Whether a period's mean velocity is above 1 (no value: its mean is null, not above)."""
    return bool(count) and total > DRIVING_VELOCITY * count
