"""TSBS's 13 IoT query types over a document store whose documents carry their truck's tags (TSBS's null
tags and fields absent from some of them), with the semantics of tsbs_iot.py: Elasticsearch's and MongoDB's
readers (modules/elasticsearch/tsbs_iot.py, modules/mongodb/tsbs_iot.py) ask their store, exactly, for

- the trucks' tags (TimescaleDB's `tags` table): the combinations of all eight tags in the documents (of
  a fleet, of the trucks named, or all), a truck's name -> its tags;
- each truck's newest document of a measurement: its fields (a null one absent);
- per truck, or per truck and epoch-aligned 10-minute period, the rows of a selection and the sum and
  count of one field's values there (a null field is no value, as SQL's avg skips it);

and the rest is done here, on the client, in the timed call: the rows grouped by name are joined to their
truck's tags (a row whose fleet is null still counts for its truck, a nameless row for none, as TSBS's SQL
joins them), a mean is compared as sum against count, the HAVING tests, the groups by the trucks' tags, and
what SQL does with window functions over the periods (tsbs_iot_periods.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_iot import (
    DRIVING_VELOCITY,
    HIGH_LOAD,
    LONG_DAILY_PERIODS,
    LONG_DRIVING_PERIODS,
    LOW_FUEL,
    STATIONARY_VELOCITY,
    IotQuery,
)
from iotdb_bench.simulator.queries.tsbs_iot_periods import (
    Period,
    breakdown_frequency,
    daily_activity,
    daily_driving_hours,
    daily_sessions,
    mean_load_shares,
)
from iotdb_bench.simulator.workload.tsbs.iot import DIAGNOSTICS as IOT_DIAGNOSTICS
from iotdb_bench.simulator.workload.tsbs.iot import READINGS as IOT_READINGS

READINGS, DIAGNOSTICS = IOT_READINGS.name, IOT_DIAGNOSTICS.name  # the collections (indices) of the measurements
Trucks = dict[str, dict[str, Any]]  # a truck's name -> its eight tags
Figures = tuple[int, float, int]  # rows, and the sum and count of a field's values in them
Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class Selection:
    """The rows a request reads: of these trucks (None: all), in this window (None: all time), with this
    field above this value (None: any)."""

    trucks: tuple[str, ...] | None = None
    window: Window | None = None
    above: tuple[str, float] | None = None


class IotOverDocuments(ABC):
    """The 13 types from the exact figures a store gives (its subclass's requests)."""

    @abstractmethod
    def trucks(self, fleet: str | None = None, names: Sequence[str] | None = None) -> Trucks:
        """The trucks' tags: all, a fleet's, or those of the trucks named."""

    @abstractmethod
    def newest(self, measurement: str, trucks: Trucks, fields: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """Each truck's newest document of the measurement: these fields (a null one absent), for the trucks that have one."""

    @abstractmethod
    def per_truck(self, measurement: str, field: str, selection: Selection) -> dict[str, Figures]:
        """Per named truck: its rows of the selection, and the sum and count of the field's values in them."""

    @abstractmethod
    def periods(self, measurement: str, field: str, selection: Selection) -> dict[str, list[Period]]:
        """Per named truck, its 10-minute periods with rows of the selection: (start, rows, sum and count of the field's values)."""

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

    def _chosen(self, parameters: Parameters, kind: IotQuery) -> Trucks:
        """The trucks an execution draws: a fleet's, or the trucks named."""
        return self.trucks(names=parameters["trucks"]) if kind.trucks else self.trucks(fleet=parameters["fleet"])

    # -- the trucks' newest rows -------------------------------------------------------------------
    def _last_locations(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        newest = self.newest(READINGS, trucks, ("longitude", "latitude"))
        return [(name, trucks[name]["driver"], row.get("longitude"), row.get("latitude")) for name, row in newest.items()]

    def _low_fuel(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        newest = self.newest(DIAGNOSTICS, trucks, ("fuel_state",))
        return [(name, trucks[name]["driver"], row["fuel_state"]) for name, row in newest.items()
                if row.get("fuel_state") is not None and row["fuel_state"] < LOW_FUEL]

    def _high_load(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        newest = self.newest(DIAGNOSTICS, trucks, ("current_load",))
        return [(name, trucks[name]["driver"], row["current_load"]) for name, row in newest.items()
                if row.get("current_load") is not None and row["current_load"] / trucks[name]["load_capacity"] > HIGH_LOAD]

    # -- windows of a fleet's readings -------------------------------------------------------------
    def _stationary(self, parameters: Parameters, kind: IotQuery) -> Rows:
        trucks = self._chosen(parameters, kind)
        if not trucks:
            return []
        velocity = self.per_truck(READINGS, "velocity", Selection(tuple(sorted(trucks)), parameters["window"]))
        return [(name, trucks[name]["driver"]) for name, (_, total, count) in velocity.items() if count and total < STATIONARY_VELOCITY * count]

    def _long_sessions(self, parameters: Parameters, kind: IotQuery, more_than: int) -> Rows:
        trucks = self._chosen(parameters, kind)
        if not trucks:
            return []
        periods = self.periods(READINGS, "velocity", Selection(tuple(sorted(trucks)), parameters["window"]))
        return [(name, trucks[name]["driver"]) for name, found in periods.items()
                if sum(1 for _, _, total, count in found if _driving(total, count)) > more_than]

    # -- the whole data ----------------------------------------------------------------------------
    def _fuel_consumption(self) -> Rows:
        trucks = self.trucks()
        moving = self.per_truck(READINGS, "fuel_consumption", Selection(above=("velocity", DRIVING_VELOCITY)))
        fleets: dict[str, list[float]] = {}  # fleet -> [fuel sum, fuel count, rows, nominal sum]
        for name, (rows, total, count) in moving.items():
            if name in trucks:
                sums = fleets.setdefault(trucks[name]["fleet"], [0.0, 0.0, 0.0, 0.0])
                for position, value in enumerate((total, count, rows, rows * trucks[name]["nominal_fuel_consumption"])):
                    sums[position] += value
        return [(fleet, total / count if count else None, nominal / rows) for fleet, (total, count, rows, nominal) in fleets.items() if rows]

    def _driving_duration(self) -> Rows:
        trucks = self.trucks()
        hours = {name: daily_driving_hours(periods) for name, periods in self.periods(READINGS, "velocity", Selection()).items() if name in trucks}
        return [(trucks[name]["fleet"], name, trucks[name]["driver"], mean) for name, mean in hours.items() if mean is not None]

    def _driving_sessions(self) -> Rows:
        trucks = self.trucks()
        return [(name, day, seconds) for name, periods in self.periods(READINGS, "velocity", Selection()).items() if name in trucks
                for day, seconds in daily_sessions(periods)]

    def _load(self) -> Rows:
        trucks = self.trucks()
        return mean_load_shares((trucks[name]["fleet"], trucks[name]["model"], trucks[name]["load_capacity"], total, count)
                                for name, (_, total, count) in self.per_truck(DIAGNOSTICS, "current_load", Selection()).items() if name in trucks)

    def _activity(self) -> Rows:
        trucks = self.trucks()
        return daily_activity((trucks[name]["fleet"], trucks[name]["model"], periods)
                              for name, periods in self.periods(DIAGNOSTICS, "status", Selection()).items() if name in trucks)

    def _breakdowns(self) -> Rows:
        trucks = self.trucks()
        return breakdown_frequency((trucks[name]["model"], periods) for name, periods in self.periods(DIAGNOSTICS, "status", Selection()).items()
                                   if name in trucks)


def _driving(total: float, count: int) -> bool:
    """Whether a period's mean velocity is above 1 (no value: its mean is null, not above)."""
    return bool(count) and total > DRIVING_VELOCITY * count
