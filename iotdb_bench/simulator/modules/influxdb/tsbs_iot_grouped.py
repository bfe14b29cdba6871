"""TSBS's IoT query types that group trucks by their tags or compare a row with the truck's capacity,
in InfluxQL made exact: high-load, avg-vs-projected-fuel-consumption, avg-load, daily-activity and
breakdown-frequency (the other types: tsbs_iot_queries.py).

TSBS's null tags leave a tag out of some of a truck's points (its fleet, model or a capacity, which
TSBS writes as a field), and InfluxQL has no join to take it from the truck's other points. So an
execution first reads the series index (`SHOW SERIES`, whose keys carry the five string tags of each
truck, as tsbs_iot_queries.py does), then runs one statement per group of trucks (a fleet, a fleet
and model, a model), each selecting its trucks by name: the grouping is the statements', the
aggregates InfluxDB's. Every call of an execution is its timed query:
- high-load: the capacities of the fleet's trucks (`max("load_capacity")`, a value every point of a
  truck has but those with that null tag), then per capacity the newest rows whose load / capacity
  is above 0.9;
- avg-vs-projected-fuel-consumption: per fleet the mean fuel consumption of the rows with a velocity
  above 1, and the nominal consumption of the same rows as a sum over the trucks' models (each
  model's nominal, read with the series, times its trucks' moving rows) over their count;
- avg-load: per fleet and model the mean over its trucks of mean load / capacity;
- daily-activity, breakdown-frequency: they count the rows of a truck's 10-minute periods, and
  InfluxQL counts a field's values: a row may lack any field (a null field) and one capacity (a
  null tag), but has its load or its fuel capacity, so its rows are count(load) + count(fuel) -
  count(load + fuel) (a sum is null unless both are there; the sums a subquery beside the measurement,
  the counts the measurement's own). `fill(0)` makes a missing count 0, over
  the time range of the data, read with the series (the first and last capacities' times).
  breakdown-frequency's "broken down" (every status of the period there, TSBS's integer test) is
  ceil(d / (d + 1)) = 0 for d = rows - statuses, its turns `difference()` = -1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.influxdb.tsbs_iot_queries import names_condition, truck_tags
from iotdb_bench.simulator.queries.parameters import Parameters, iso_ms
from iotdb_bench.simulator.queries.tsbs_iot import ACTIVE_STATUS, DRIVING_VELOCITY, HIGH_LOAD, PERIODS_PER_DAY, IotQuery

Series = dict[str, Any]  # one series of an InfluxQL answer: name, tags, columns, values
Row = tuple[Any, ...]
Call = Callable[[Sequence[str]], list[list[Series]]]  # statements in one request -> each one's series
GROUPED = ("high-load", "avg-vs-projected-fuel-consumption", "avg-load", "daily-activity", "breakdown-frequency")
_CAPACITIES = ("load_capacity", "fuel_capacity")  # every row has one of them at least


def execute(query: IotQuery, parameters: Parameters, call: Call) -> Answer:
    """One execution: its calls, and the answer's rows in the common form of simulator/queries/tsbs_iot.py."""
    if query.name == "high-load":
        return _high_load(parameters, call)
    if query.name == "avg-vs-projected-fuel-consumption":  # with the series, each truck's nominal consumption
        [listing, nominal] = call(['SHOW SERIES FROM "readings"', 'SELECT max("nominal_fuel_consumption") FROM "readings" WHERE "name" != \'\' GROUP BY "name"'])
        return _fuel_consumption(truck_tags(listing), _per_name(nominal), call)
    # with the series, the data's time range: the first and last times of the capacities, one of which every row has
    [listing, *found] = call(['SHOW SERIES FROM "diagnostics"', *(f'SELECT {selector}("{field}") FROM "diagnostics"'
                                                                 for selector in ("first", "last") for field in _CAPACITIES)])
    tags_of = truck_tags(listing)
    if query.name == "avg-load":
        groups = _groups(tags_of, ("fleet", "model"))
        return _answer(call([_avg_load(names) for names in groups.values()]), groups, lambda row: (row[1], row[2]))
    times = [row[0] for one in found for series in one for row in series["values"]]
    if not times:
        return Answer([], lambda _: [])
    during = f"time >= '{iso_ms(min(times))}' AND time <= '{iso_ms(max(times))}'"
    if query.name == "daily-activity":
        groups = _groups(tags_of, ("fleet", "model"))
        return _answer(call([_daily_activity(names, during) for names in groups.values()]), groups, lambda row: (row[0], row[1]), every_row=True)
    groups = _groups(tags_of, ("model",))
    return _answer(call([_breakdowns(names, during) for names in groups.values()]), groups, lambda row: (row[1],), nonzero=True)


def _high_load(parameters: Parameters, call: Call) -> Answer:
    [listing] = call([f"SHOW SERIES FROM \"diagnostics\" WHERE \"fleet\" = '{parameters['fleet']}'"])
    tags_of = truck_tags(listing)
    if not tags_of:
        return Answer([], lambda _: [])
    [capacities] = call([f'SELECT max("load_capacity") FROM "diagnostics" WHERE {names_condition(sorted(tags_of))} GROUP BY "name"'])
    by_capacity: dict[float, list[str]] = {}
    for name, capacity in _per_name(capacities).items():
        by_capacity.setdefault(capacity, []).append(name)
    statements = []
    for capacity, names in by_capacity.items():
        newest = f'SELECT "current_load", "fuel_state" FROM "diagnostics" WHERE {names_condition(names)} GROUP BY "name" ORDER BY time DESC LIMIT 1'
        statements.append(f'SELECT "current_load" FROM ({newest}) WHERE "current_load" / {capacity!r} > {HIGH_LOAD} GROUP BY "name" ORDER BY time DESC')
    answers = call(statements) if statements else []
    return Answer(answers, lambda found: [(one["tags"]["name"], tags_of[one["tags"]["name"]]["driver"], row[1])
                                          for series in found for one in series for row in one["values"]])


def _fuel_consumption(tags_of: dict[str, dict[str, str]], nominal: dict[str, float], call: Call) -> Answer:
    """Per fleet: the mean fuel consumption of its moving rows, and their nominal one (a subquery per model's nominal)."""
    fleets: dict[str, dict[float, list[str]]] = {}  # per fleet, its trucks per nominal consumption
    for name, tags in sorted(tags_of.items()):
        if name in nominal:
            fleets.setdefault(tags["fleet"], {}).setdefault(nominal[name], []).append(name)
    statements = []
    for per_nominal in fleets.values():
        names = [name for trucks in per_nominal.values() for name in trucks]
        statements.append(f'SELECT mean("fuel_consumption") FROM "readings" WHERE {names_condition(names)} AND "velocity" > {DRIVING_VELOCITY}')
        sources = ", ".join(f'(SELECT count("velocity") * {value!r} AS "nominal", count("velocity") AS "rows" FROM "readings" '
                            f'WHERE {names_condition(trucks)} AND "velocity" > {DRIVING_VELOCITY})' for value, trucks in per_nominal.items())
        statements.append(f'SELECT sum("nominal") / sum("rows") FROM {sources}')

    def rows(found: Sequence[list[Series]]) -> list[Row]:
        answer = []
        for at, fleet in enumerate(fleets):
            fuel, projected = _single(found[2 * at]), _single(found[2 * at + 1])
            if projected is not None:  # a fleet without moving rows is no row
                answer.append((fleet, fuel, projected))
        return answer

    return Answer(call(statements), rows)


def _avg_load(names: Sequence[str]) -> str:
    shares = (f'SELECT mean("current_load") / max("load_capacity") AS "share", max("load_capacity") AS "capacity" FROM "diagnostics" '
              f'WHERE {names_condition(names)} GROUP BY "name"')
    return f'SELECT max("capacity"), mean("share") FROM ({shares})'


def _periods(trucks: Sequence[str], during: str) -> str:
    """Per truck and 10-minute period of the data's time range: its rows, its statuses and their sum (0 where none)."""
    names = names_condition(trucks)
    both = f'SELECT "{_CAPACITIES[0]}" + "{_CAPACITIES[1]}" AS "both" FROM "diagnostics" WHERE {names} AND {during}'
    return (f'SELECT count("{_CAPACITIES[0]}") + count("{_CAPACITIES[1]}") - count("both") AS "rows", count("status") AS "statuses", '
            f'sum("status") AS "status_sum" FROM "diagnostics", ({both}) WHERE {names} AND {during} GROUP BY time(10m), "name" fill(0)')

def _daily_activity(names: Sequence[str], during: str) -> str:
    inactive = f'"statuses" > 0 AND "status_sum" < {ACTIVE_STATUS} * "statuses"'
    return f'SELECT sum("rows") / {PERIODS_PER_DAY} FROM ({_periods(names, during)}) WHERE {inactive} AND {during} GROUP BY time(1d) fill(none)'


def _breakdowns(names: Sequence[str], during: str) -> str:
    running = f'SELECT ceil(("rows" - "statuses") / ("rows" - "statuses" + 1)) AS "running" FROM ({_periods(names, during)}) WHERE "rows" > 0 GROUP BY "name"'
    return f'SELECT count("turn") FROM (SELECT difference("running") AS "turn" FROM ({running}) GROUP BY "name") WHERE "turn" < 0'


def _groups(tags_of: dict[str, dict[str, str]], keys: tuple[str, ...]) -> dict[tuple[str, ...], list[str]]:
    """The trucks' names per value of their tags `keys`."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for name in sorted(tags_of):
        groups.setdefault(tuple(tags_of[name][key] for key in keys), []).append(name)
    return groups


def _answer(answers: list[list[Series]], groups: dict[tuple[str, ...], list[str]], values: Callable[[list[Any]], Row],
            every_row: bool = False, nonzero: bool = False) -> Answer:
    """A statement per group: its key, then `values(row)` of its (one, or `every_row`) rows; `nonzero`: a
    count of 0 (or none) is no row."""

    def rows(found: Sequence[list[Series]]) -> list[Row]:
        answer = []
        for key, series in zip(groups, found):
            for row in [row for one in series for row in one["values"]][: None if every_row else 1]:
                if not nonzero or row[1]:
                    answer.append((*key, *values(row)))
        return answer

    return Answer(answers, rows)


def _per_name(series: list[Series]) -> dict[str, Any]:
    """The value of an aggregate per truck (GROUP BY "name")."""
    return {one["tags"]["name"]: one["values"][0][1] for one in series}


def _single(series: list[Series]) -> Any:
    return series[0]["values"][0][1] if series else None

