"""TSBS's IoT query types (its cmd/tsbs_generate_queries/uses/iot/ and the TimescaleDB target's SQL,
databases/timescaledb/iot.go), with the parameters each execution draws and the answer it must give.

    last-loc, single-last-loc        each truck's newest location (of a random fleet; one random truck)
    low-fuel, high-load              the trucks of a random fleet whose newest fuel state is below 0.1,
                                     whose newest load is above 90% of their capacity
    stationary-trucks                the trucks of a random fleet whose mean velocity in a random
                                     10 minutes is below 1
    long-driving-sessions            the trucks of a random fleet that drove (mean velocity above 1)
    long-daily-sessions              in more than 22 of the 10-minute periods of a random 4 hours;
                                     in more than 60 of a random 24 hours
    avg-vs-projected-fuel-consumption  per fleet, the mean fuel consumption of the readings above a
                                     velocity of 1, and the trucks' nominal one over the same rows
    avg-daily-driving-duration       per truck, the mean over its days of the hours it drove (its
                                     driving 10-minute periods // 6: TSBS divides integers)
    avg-daily-driving-session        per truck and day, the mean length of its driving sessions (a
                                     session: from a 10-minute period whose mean velocity goes above 5
                                     to the next change)
    avg-load                         per fleet and model, the mean over the trucks of their mean load
                                     as a share of their capacity
    daily-activity                   per fleet, model and day, the rows of the 10-minute periods whose
                                     mean status is below 1, / 144
    breakdown-frequency              per model, how often a truck's 10-minute period turns "broken
                                     down": TSBS's SQL tests count(status = 0) / count(*) >= 0.5 in
                                     integers, true when no status of the period is null, and that
                                     is what its answers, and so the tool's checks, mean

Every query joins the `tags` table, so a row whose name tag is null (TSBS's zeroed tag, which its
loader ties to no truck) is in no answer; a null field is left out of aggregates as SQL does. The
answers are in the common form of simulator/checks/answers.py, recomputed from the seed (the
values, and which rows TSBS writes: simulator/workload/tsbs/series.py's TruckRows). Periods are
epoch-aligned 10 minutes and UTC days, as time_bucket makes them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from iotdb_bench.simulator.checks.answers import AVERAGE, COUNT, DURATION, EXACT, KEY, TIME_KEY, Columns
from iotdb_bench.simulator.queries.parameters import Kind, Parameters, RandomChoice, RandomEntities, RandomWindow, Window, Written
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.iot import FLEETS, truck_tags
from iotdb_bench.simulator.workload.tsbs.series import TruckRows

TEN_MINUTES_MS, DAY_MS, HOUR_MS = 600_000, 86_400_000, 3_600_000
# TSBS's thresholds (uses/iot/ and the TimescaleDB queries).
LOW_FUEL, HIGH_LOAD = 0.1, 0.9
STATIONARY_VELOCITY, DRIVING_VELOCITY, SESSION_VELOCITY = 1, 1, 5
LONG_DRIVING_PERIODS, LONG_DAILY_PERIODS = 22, 60  # tenMinutePeriods(5, 4h), tenMinutePeriods(35, 24h)
ACTIVE_STATUS = 1  # daily-activity: periods whose mean status is below it
PERIODS_PER_DAY = 144
# The fields of the two measurements (simulator/workload/tsbs/iot.py).
LATITUDE, LONGITUDE, VELOCITY, FUEL_CONSUMPTION = 0, 1, 3, 6
FUEL_STATE, CURRENT_LOAD, STATUS = 0, 1, 2
READINGS, DIAGNOSTICS = 0, 1
_NAME_DRIVER = (("name", KEY), ("driver", KEY))


@dataclass(frozen=True)
class IotQuery:
    """One IoT query type: its answer's columns and what it draws per execution."""

    name: str
    columns: Columns
    fleet: bool = False
    trucks: int = 0
    window_ms: int = 0

    @property
    def parameters(self) -> tuple[Kind, ...]:
        kinds: list[Kind] = [RandomChoice("fleet", FLEETS)] if self.fleet else []
        kinds += [RandomEntities("trucks", self.trucks)] if self.trucks else []
        kinds += [RandomWindow("window", self.window_ms)] if self.window_ms else []
        return tuple(kinds)


IOT = {query.name: query for query in (
    IotQuery("last-loc", (*_NAME_DRIVER, ("longitude", EXACT), ("latitude", EXACT)), fleet=True),
    IotQuery("single-last-loc", (*_NAME_DRIVER, ("longitude", EXACT), ("latitude", EXACT)), trucks=1),
    IotQuery("low-fuel", (*_NAME_DRIVER, ("fuel_state", EXACT)), fleet=True),
    IotQuery("high-load", (*_NAME_DRIVER, ("current_load", EXACT)), fleet=True),
    IotQuery("stationary-trucks", _NAME_DRIVER, fleet=True, window_ms=10 * 60_000),
    IotQuery("long-driving-sessions", _NAME_DRIVER, fleet=True, window_ms=4 * HOUR_MS),
    IotQuery("long-daily-sessions", _NAME_DRIVER, fleet=True, window_ms=24 * HOUR_MS),
    IotQuery("avg-vs-projected-fuel-consumption", (("fleet", KEY), ("avg_fuel_consumption", AVERAGE), ("projected_fuel_consumption", AVERAGE))),
    IotQuery("avg-daily-driving-duration", (("fleet", KEY), ("name", KEY), ("driver", KEY), ("avg_daily_hours", AVERAGE))),
    IotQuery("avg-daily-driving-session", (("name", KEY), ("day", TIME_KEY), ("duration s", DURATION))),
    IotQuery("avg-load", (("fleet", KEY), ("model", KEY), ("load_capacity", EXACT), ("avg_load_percentage", AVERAGE))),
    IotQuery("daily-activity", (("fleet", KEY), ("model", KEY), ("day", TIME_KEY), ("daily_activity", AVERAGE))),
    IotQuery("breakdown-frequency", (("model", KEY), ("count", COUNT))),
)}


def written(data: TsbsData) -> Written:
    """What the IoT queries draw from: the trucks and the time range written."""
    return Written("truck", data.hosts, data.start_ms, data.end_ms)


def _value(value: float) -> float | None:
    return None if math.isnan(value) else value


def daily_sessions(periods: list[tuple[int, int, float, int]]) -> list[tuple[int, float | None]]:
    """avg-daily-driving-session of one truck, from its 10-minute periods with rows in time order (start,
    rows, sum and count of its velocities): per day a driving session starts in, the mean length in
    seconds of those that end (None: none does). A period drives when its mean velocity is above 5 (null
    without a velocity); a session runs from a change (driving <> lag(driving): false when either is
    null) to the next one (TSBS's lead)."""
    status = [(period, None if not count else total > SESSION_VELOCITY * count) for period, _, total, count in periods]
    changes = [(period, driving) for (period, driving), (_, before) in zip(status[1:], status[:-1])
               if driving is not None and before is not None and driving != before]
    lengths: dict[int, list[float]] = {}
    for (start, driving), after in zip(changes, [*changes[1:], None]):
        if driving:
            day = lengths.setdefault(start - start % DAY_MS, [])
            if after is not None:
                day.append((after[0] - start) / 1000)
    return [(day, sum(found) / len(found) if found else None) for day, found in lengths.items()]


@dataclass
class _Periods:
    """Per 10-minute period (epoch ms) and truck: rows there, and the sum and count of one field's non-null values."""

    trucks: int
    rows: dict[int, np.ndarray] = field(default_factory=dict)
    sums: dict[int, np.ndarray] = field(default_factory=dict)
    counts: dict[int, np.ndarray] = field(default_factory=dict)

    def add(self, times: np.ndarray, values: np.ndarray, present: np.ndarray) -> None:
        """Rows (steps, trucks) of one field at these times."""
        periods = times - times % TEN_MINUTES_MS
        for period in np.unique(periods).tolist():
            at = periods == period
            there, found = present[at], present[at] & ~np.isnan(values[at])
            for into, part in ((self.rows, there.sum(axis=0)), (self.counts, found.sum(axis=0)),
                               (self.sums, np.where(found, values[at], 0.0).sum(axis=0))):
                into[period] = into[period] + part if period in into else part

    def of_truck(self, truck: int) -> list[tuple[int, int, float, int]]:
        """(period, rows, sum, count) of one truck's periods with rows, in time order."""
        return [(period, int(self.rows[period][truck]), float(self.sums[period][truck]), int(self.counts[period][truck]))
                for period in sorted(self.rows) if self.rows[period][truck]]


@dataclass
class _Whole:
    """What the queries over all the data read, made in one pass: velocity and status per period and
    truck; per fleet, over the readings above velocity 1, the fuel consumption (its sum in tenths,
    exact: one decimal) and count, the rows and their trucks' nominal consumption; each truck's load
    (sum, count) and diagnostics rows."""

    velocity: _Periods
    status: _Periods
    fuel_tenths: np.ndarray
    fuel_count: np.ndarray
    moving_rows: np.ndarray
    nominal_sum: np.ndarray
    load_sum: np.ndarray
    load_count: np.ndarray
    diagnostics_rows: np.ndarray


class IotAnswers:
    """The expected answers of the IoT queries over the data a record describes."""

    def __init__(self, data: TsbsData):
        self.data = data
        self.rows = TruckRows(data)
        self.tags = truck_tags(data.seed, 0, data.hosts)  # name, fleet, driver, model, version, load, fuel capacity, nominal
        self._whole: _Whole | None = None

    def expected(self, query: str, parameters: Parameters) -> tuple[Columns, list[tuple]]:
        answers: dict[str, Callable[[Parameters], list[tuple]]] = {
            "last-loc": self._last_locations, "single-last-loc": self._last_locations, "low-fuel": self._low_fuel,
            "high-load": self._high_load, "stationary-trucks": self._stationary,
            "long-driving-sessions": lambda parameters: self._long_sessions(parameters, LONG_DRIVING_PERIODS),
            "long-daily-sessions": lambda parameters: self._long_sessions(parameters, LONG_DAILY_PERIODS),
            "avg-vs-projected-fuel-consumption": lambda _: self._fuel_consumption(), "avg-daily-driving-duration": lambda _: self._driving_duration(),
            "avg-daily-driving-session": lambda _: self._driving_sessions(), "avg-load": lambda _: self._load(),
            "daily-activity": lambda _: self._activity(), "breakdown-frequency": lambda _: self._breakdowns()}
        return IOT[query].columns, answers[query](parameters)

    # -- the trucks' newest rows -----------------------------------------------------------------
    def _chosen(self, parameters: Parameters) -> np.ndarray:
        if "trucks" in parameters.values:
            return np.array([int(name.removeprefix("truck_")) for name in parameters["trucks"]], dtype=np.int64)
        return np.array([index for index, tags in enumerate(self.tags) if tags[1] == parameters["fleet"]], dtype=np.int64)

    def _newest(self, trucks: np.ndarray, measurement: int) -> dict[int, np.ndarray]:
        """Each truck's newest row of the measurement (its values), for the trucks that have one."""
        found: dict[int, np.ndarray] = {}
        end, span = self.data.steps, 64
        while end > 0 and len(found) < len(trucks):
            left = np.array([truck for truck in trucks.tolist() if truck not in found], dtype=np.int64)
            newest: dict[int, np.ndarray] = {}
            for _, parts in self.rows.blocks(left, range(max(0, end - span), end)):
                values, present = parts[measurement]
                for step, truck in zip(*np.nonzero(present)):
                    newest[int(left[truck])] = values[step, truck]  # later steps come later: the newest stays
            found.update(newest)
            end, span = max(0, end - span), span * 2
        return found

    def _last_locations(self, parameters: Parameters) -> list[tuple]:
        newest = self._newest(self._chosen(parameters), READINGS)
        return [(*self.tags[truck][0:3:2], _value(values[LONGITUDE]), _value(values[LATITUDE])) for truck, values in newest.items()]

    def _low_fuel(self, parameters: Parameters) -> list[tuple]:
        newest = self._newest(self._chosen(parameters), DIAGNOSTICS)
        return [(*self.tags[truck][0:3:2], float(values[FUEL_STATE])) for truck, values in newest.items() if values[FUEL_STATE] < LOW_FUEL]

    def _high_load(self, parameters: Parameters) -> list[tuple]:
        newest = self._newest(self._chosen(parameters), DIAGNOSTICS)
        return [(*self.tags[truck][0:3:2], float(values[CURRENT_LOAD])) for truck, values in newest.items()
                if values[CURRENT_LOAD] / self.tags[truck][5] > HIGH_LOAD]

    # -- windows of a fleet's readings -------------------------------------------------------------
    def _window_periods(self, parameters: Parameters) -> tuple[np.ndarray, _Periods]:
        trucks = self._chosen(parameters)
        window: Window = parameters["window"]
        periods = _Periods(len(trucks))
        for block, parts in self.rows.blocks(trucks, self.data.steps_between(window.start_ms, window.end_ms)):
            values, present = parts[READINGS]
            periods.add(self.data.time_of(np.arange(block.start, block.stop, dtype=np.int64)), values[:, :, VELOCITY], present)
        return trucks, periods

    def _stationary(self, parameters: Parameters) -> list[tuple]:
        trucks, periods = self._window_periods(parameters)
        counts = sum(periods.counts.values(), np.zeros(len(trucks), dtype=np.int64))
        sums = sum(periods.sums.values(), np.zeros(len(trucks)))
        return [self.tags[truck][0:3:2] for index, truck in enumerate(trucks.tolist())
                if counts[index] and sums[index] < STATIONARY_VELOCITY * counts[index]]

    def _long_sessions(self, parameters: Parameters, more_than: int) -> list[tuple]:
        trucks, periods = self._window_periods(parameters)
        driving = sum((np.where(periods.counts[period] > 0, periods.sums[period] > DRIVING_VELOCITY * periods.counts[period], False)
                       for period in periods.rows), np.zeros(len(trucks), dtype=np.int64))
        return [self.tags[truck][0:3:2] for index, truck in enumerate(trucks.tolist()) if driving[index] > more_than]

    # -- the whole data ----------------------------------------------------------------------------
    def _aggregates(self) -> _Whole:
        """`_Whole`, made once per check (the queries over all the data have no parameters)."""
        if self._whole is not None:
            return self._whole
        trucks = np.arange(self.data.hosts, dtype=np.int64)
        fleets = np.array([FLEETS.index(tags[1]) for tags in self.tags], dtype=np.int64)
        nominal = np.array([tags[7] for tags in self.tags])
        whole = _Whole(_Periods(len(trucks)), _Periods(len(trucks)), *(np.zeros(len(FLEETS)) for _ in range(4)),
                       *(np.zeros(len(trucks)) for _ in range(3)))

        def per_fleet(per_truck: np.ndarray) -> np.ndarray:
            return np.bincount(fleets, weights=per_truck, minlength=len(FLEETS))

        for block, parts in self.rows.blocks(trucks, range(self.data.steps)):
            times = self.data.time_of(np.arange(block.start, block.stop, dtype=np.int64))
            (readings, read), (diagnostics, diagnosed) = parts
            whole.velocity.add(times, readings[:, :, VELOCITY], read)
            whole.status.add(times, diagnostics[:, :, STATUS], diagnosed)
            moving = read & (readings[:, :, VELOCITY] > DRIVING_VELOCITY)  # NaN compares false: a null velocity is not above 1
            fuel = readings[:, :, FUEL_CONSUMPTION]
            with_fuel = moving & ~np.isnan(fuel)
            whole.fuel_tenths += per_fleet(np.where(with_fuel, np.rint(fuel * 10), 0.0).sum(axis=0))
            whole.fuel_count += per_fleet(with_fuel.sum(axis=0))
            whole.moving_rows += per_fleet(moving.sum(axis=0))
            whole.nominal_sum += per_fleet(moving.sum(axis=0) * nominal)
            load = diagnostics[:, :, CURRENT_LOAD]
            loaded = diagnosed & ~np.isnan(load)
            whole.load_sum += np.where(loaded, load, 0.0).sum(axis=0)
            whole.load_count += loaded.sum(axis=0)
            whole.diagnostics_rows += diagnosed.sum(axis=0)
        self._whole = whole
        return whole

    def _fuel_consumption(self) -> list[tuple]:
        whole = self._aggregates()
        return [(fleet, whole.fuel_tenths[index] / 10 / whole.fuel_count[index] if whole.fuel_count[index] else None,
                 whole.nominal_sum[index] / whole.moving_rows[index]) for index, fleet in enumerate(FLEETS) if whole.moving_rows[index]]

    def _driving_duration(self) -> list[tuple]:
        velocity = self._aggregates().velocity
        answer = []
        for truck, tags in enumerate(self.tags):
            days: dict[int, int] = {}
            for period, _, total, count in velocity.of_truck(truck):
                if count and total > DRIVING_VELOCITY * count:
                    days[period - period % DAY_MS] = days.get(period - period % DAY_MS, 0) + 1
            if days:
                hours = [periods // 6 for periods in days.values()]
                answer.append((tags[1], tags[0], tags[2], sum(hours) / len(hours)))
        return answer

    def _driving_sessions(self) -> list[tuple]:
        velocity = self._aggregates().velocity
        answer = []
        for truck, tags in enumerate(self.tags):
            answer += [(tags[0], day, seconds) for day, seconds in daily_sessions(velocity.of_truck(truck))]
        return answer

    def _load(self) -> list[tuple]:
        whole = self._aggregates()
        total, count, rows = whole.load_sum, whole.load_count, whole.diagnostics_rows
        groups: dict[tuple[str, str, float], list[float]] = {}
        for truck, tags in enumerate(self.tags):
            if rows[truck]:
                shares = groups.setdefault((tags[1], tags[3], tags[5]), [])
                if count[truck]:
                    shares.append(total[truck] / count[truck] / tags[5])
        return [(*group, sum(shares) / len(shares) if shares else None) for group, shares in groups.items()]

    def _activity(self) -> list[tuple]:
        status = self._aggregates().status
        days: dict[tuple[str, str, int], int] = {}
        for truck, tags in enumerate(self.tags):
            for period, rows, total, count in status.of_truck(truck):
                if count and total < ACTIVE_STATUS * count:
                    key = (tags[1], tags[3], period - period % DAY_MS)
                    days[key] = days.get(key, 0) + rows
        return [(*key, rows / PERIODS_PER_DAY) for key, rows in days.items()]

    def _breakdowns(self) -> list[tuple]:
        status = self._aggregates().status
        models: dict[str, int] = {}
        for truck, tags in enumerate(self.tags):
            broken = [count == rows for _, rows, _, count in status.of_truck(truck)]
            turns = sum(1 for now, then in itertools.pairwise(broken) if not now and then)
            if turns:
                models[tags[3]] = models.get(tags[3], 0) + turns
        return list(models.items())
