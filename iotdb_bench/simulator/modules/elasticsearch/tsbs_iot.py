"""TSBS's 13 IoT query types as Elasticsearch/OpenSearch searches over the `readings` and `diagnostics`
indices (tsbs_layout.py), with the semantics of simulator/queries/tsbs_iot.py (TSBS's TimescaleDB text,
cmd/tsbs_generate_queries/databases/timescaledb/iot.go; TSBS has no IoT queries for a search engine).

The documents carry their truck's tags, and TSBS's null tags leave one out of some of them. The
trucks' tags (TimescaleDB's `tags` table) are a composite aggregation over both indices by all eight
tags: a document without one of them is in no bucket, so each truck is its one combination (a truck
is missing only if none of its documents carries all eight; about 1% of them lack one). The rows are
then grouped by `name` alone and joined to their truck's tags here, so a row whose fleet or model is
null still counts for its truck, and a row without a name (TSBS's nulled name) for none, as TSBS's
SQL joins them.

Every answer is exact: composite aggregations paged with after_key, never `terms` (approximate over
several shards); per truck or per truck and epoch-aligned 10-minute period (a composite
`date_histogram` source) the rows (doc_count), and `sum` and `value_count` of one field: a mean is
compared as sum against count (a null field is no value, as SQL's avg skips it); the newest row is a
`top_hits` of size 1, newest first. What SQL does with window functions over the periods (TSBS's
lag/lead: a breakdown's turn; a session's changes: simulator/queries/tsbs_iot_periods.py) is done here over the periods fetched, in time order, as are the
HAVING tests and the groups by the trucks' tags.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.elasticsearch.tsbs_queries import composite_buckets
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
from iotdb_bench.simulator.queries.tsbs_iot_periods import breakdown_frequency, daily_activity, daily_sessions
from iotdb_bench.simulator.workload.tsbs.iot import TAGS

READINGS, DIAGNOSTICS = "readings", "diagnostics"
TAG_NAMES = tuple(name for name, _ in TAGS)
Search = Callable[[dict[str, Any], str], dict[str, Any]]  # a search request's body and its indices -> its answer
Trucks = dict[str, dict[str, Any]]  # a truck's name -> its eight tags
Period = tuple[int, int, float, int]  # (period start in epoch ms, rows, sum and count of a field's values)
Rows = list[tuple[Any, ...]]


class IotSearches:
    def __init__(self, search: Search, page: int):
        self.search, self.page = search, page

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

    # -- the requests ------------------------------------------------------------------------------
    def _buckets(self, indices: str, sources: list[dict[str, Any]], sub_aggregations: dict[str, Any],
                 query: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return list(composite_buckets(functools.partial(self._search_of, indices), sources, sub_aggregations, self.page, query))

    def _search_of(self, indices: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.search(body, indices)

    def _trucks(self, query: dict[str, Any] | None = None) -> Trucks:
        """The trucks' tags (TimescaleDB's tags table): the combinations of all eight in the documents."""
        sources = [{name: {"terms": {"field": name}}} for name in TAG_NAMES]
        return {bucket["key"]["name"]: bucket["key"] for bucket in self._buckets(f"{READINGS},{DIAGNOSTICS}", sources, {}, query)}

    def _chosen(self, parameters: Parameters, kind: IotQuery) -> Trucks:
        """The trucks an execution draws: a fleet's, or the trucks named."""
        if kind.trucks:
            return self._trucks({"terms": {"name": list(parameters["trucks"])}})
        return self._trucks({"term": {"fleet": parameters["fleet"]}})

    def _newest(self, index: str, trucks: Trucks, fields: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """Each truck's newest document of `index` (these fields; a null one absent), for those that have one."""
        if not trucks:
            return {}
        newest = {"newest": {"top_hits": {"size": 1, "sort": [{"time": {"order": "desc"}}], "_source": list(fields)}}}
        buckets = self._buckets(index, [{"name": {"terms": {"field": "name"}}}], newest, {"terms": {"name": sorted(trucks)}})
        return {bucket["key"]["name"]: bucket["newest"]["hits"]["hits"][0]["_source"] for bucket in buckets}

    def _per_truck(self, index: str, field: str, query: dict[str, Any] | None = None) -> dict[str, tuple[int, float, int]]:
        """Per truck: its rows, and the sum and count of the field's values in them."""
        buckets = self._buckets(index, [{"name": {"terms": {"field": "name"}}}], _sum_and_count(field), query)
        return {bucket["key"]["name"]: (bucket["doc_count"], bucket["sum"]["value"], bucket["count"]["value"]) for bucket in buckets}

    def _periods(self, index: str, field: str, query: dict[str, Any] | None = None) -> dict[str, list[Period]]:
        """Per truck, its 10-minute periods with rows in time order: (start, rows, sum and count of the field's values)."""
        sources = [{"name": {"terms": {"field": "name"}}}, {"period": {"date_histogram": {"field": "time", "fixed_interval": "10m"}}}]
        periods: dict[str, list[Period]] = {}
        for bucket in self._buckets(index, sources, _sum_and_count(field), query):
            periods.setdefault(bucket["key"]["name"], []).append(
                (bucket["key"]["period"], bucket["doc_count"], bucket["sum"]["value"], bucket["count"]["value"]))
        return periods

    # -- the trucks' newest rows -------------------------------------------------------------------
    def _last_locations(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        newest = self._newest(READINGS, trucks, ("longitude", "latitude"))
        return [(name, trucks[name]["driver"], row.get("longitude"), row.get("latitude")) for name, row in newest.items()]

    def _low_fuel(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        newest = self._newest(DIAGNOSTICS, trucks, ("fuel_state",))
        return [(name, trucks[name]["driver"], row["fuel_state"]) for name, row in newest.items()
                if row.get("fuel_state") is not None and row["fuel_state"] < LOW_FUEL]

    def _high_load(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        newest = self._newest(DIAGNOSTICS, trucks, ("current_load",))
        return [(name, trucks[name]["driver"], row["current_load"]) for name, row in newest.items()
                if row.get("current_load") is not None and row["current_load"] / trucks[name]["load_capacity"] > HIGH_LOAD]

    # -- windows of a fleet's readings -------------------------------------------------------------
    def _window(self, parameters: Parameters, trucks: Trucks) -> dict[str, Any]:
        window: Window = parameters["window"]
        return {"bool": {"filter": [{"range": {"time": {"gte": window.start_ms, "lt": window.end_ms}}}, {"terms": {"name": sorted(trucks)}}]}}

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
                if sum(1 for _, _, total, count in found if _driving(total, count, DRIVING_VELOCITY)) > more_than]

    # -- the whole data ----------------------------------------------------------------------------
    def _fuel_consumption(self) -> Rows:
        trucks = self._trucks()
        moving = self._per_truck(READINGS, "fuel_consumption", {"range": {"velocity": {"gt": DRIVING_VELOCITY}}})
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
                if _driving(total, count, DRIVING_VELOCITY):
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


def _sum_and_count(field: str) -> dict[str, Any]:
    return {"sum": {"sum": {"field": field}}, "count": {"value_count": {"field": field}}}


def _driving(total: float, count: int, above: float) -> bool:
    """Whether a period's mean is above `above` (no value: its mean is null, not above)."""
    return bool(count) and total > above * count
