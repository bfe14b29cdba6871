"""TSBS's IoT query types on VictoriaMetrics: TSBS's victoriametrics target has none. MetricsQL answers
nine exactly (below); avg-vs-projected-fuel-consumption, avg-daily-driving-session, daily-activity and
breakdown-frequency are refused, each with the reason (the capabilities' tsbs_queries_refused).

A truck's rows are samples of a series per field, `readings_velocity{name=..., fleet=..., driver=...,
model=..., device_version=...}`; TSBS's null tags put some of its rows in series that lack one of
those labels (or its name), its null fields leave a row's value out of a field's series, and the
tags TSBS writes as fields (the capacities) are series of their own. MetricsQL's rollups read one
series' samples in a window ending at each step: they do not see rows, only samples.

last-loc, single-last-loc, low-fuel and high-load read each truck's newest row: one instant query over
all the data. Every row has its load or its fuel capacity, so the newest row's time is the newest of
those series' `tlast_over_time` (`max by (name)`); a field's value there is the `last_over_time` of
the truck's series of that field whose `tlast_over_time` equals it (the label set of the newest row),
and none where that row's is null. low-fuel keeps the fuel states below 0.1, high-load the loads whose
share of the truck's capacity (`max by (name)` of its load_capacity series) is above 0.9, last-loc
returns the fleet's (or the truck's) trucks with rows, their longitude and latitude where the newest
row has them; the trucks and drivers from the series with the fleet's label (or the truck's name).

avg-load is one instant query over all the data (`{window}`, connection.py): each truck's mean load
(`sum by (name)` of its series' sums over their counts: its rows in every label set, a nameless row in
none) over its capacity (`max by (name)` of its load_capacity series), joined by name
(`group_left`) to the fleet and model of the truck's series that carry them, averaged per fleet and
model; beside it, per fleet and model, the capacity. Both in one answer, told apart by a label.

stationary-trucks is one instant query evaluated at the window's last millisecond, whose lookbehind
is the window's length: each truck's mean velocity over its rows in [start, end) (`sum by (name)` over
`count by (name)`, as avg-load's), below 1, joined by name to the drivers of the series with the
drawn fleet's label over all the data (a lookbehind from the newest time a sample can have back to
before the oldest, through a negative offset): a truck is of the fleet whose label some of its series
carry, whatever its rows in the window lack.

long-driving-sessions and long-daily-sessions are one instant query each, evaluated at the window's
last millisecond: per truck the sum of 1 or 0 (its mean velocity above 1) over the window's 10-minute
periods, above 22 or 60, the drivers of the fleet joined as stationary-trucks'. The whole periods are
a subquery stepping their starts (`[<whole>:10m]`, offset so that its last step is the last whole
period's start; each period's mean from `[600000ms] offset -599999ms`, i.e. [p, p + 10 min)); the
window's partial first and last periods each an expression of its own, its lookbehind the part inside
the window; the parts are summed per truck (`sum by (name)` of their `union`, told apart by a label).

avg-daily-driving-duration is two instant queries. The first finds the data's first and last
velocity times; the second, evaluated at the last day's start, averages per truck over the days
(`[<days>d:1d]`, a subquery whose steps are UTC midnights) floor(driving periods / 6), the days
without one left out (`> 0`): the day's 10-minute periods are a subquery `[1d:10m]` shifted forward by
a day less 10 minutes (its steps are the day's 144 period starts), each period's mean velocity
(as avg-load's) read from `[10m] offset -599999ms` ([t, t + 10 min) in milliseconds), `> bool 1`. Its
fleet and driver are joined by name as above. VictoriaMetrics evaluates the inner subquery over the
whole range: beyond 694 days of data it passes -search.maxPointsSubqueryPerTimeseries (100,000) and
the server refuses the query.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.modules.victoriametrics.durations import metricsql_ms
from iotdb_bench.simulator.queries.parameters import Window
from iotdb_bench.simulator.queries.tsbs_iot import (
    DAY_MS,
    DRIVING_VELOCITY,
    HIGH_LOAD,
    LONG_DAILY_PERIODS,
    LONG_DRIVING_PERIODS,
    LOW_FUEL,
    STATIONARY_VELOCITY,
    TEN_MINUTES_MS,
)


def _mean_by_truck(metric: str, window: str) -> str:
    """Each truck's mean of `metric` over its samples in the window, whatever the label sets its rows are in."""
    selector = f'{metric}{{name!=""}}{window}'
    return f"(sum by (name) (sum_over_time({selector})) / sum by (name) (count_over_time({selector})))"


COLUMN_LABEL = "iotbench_column"
_ALL = "[{window}]"
_DAY_S, _PERIOD_S = DAY_MS // 1000, 600
_CAPACITY_PAIR = ("load_capacity", "fuel_capacity")  # a row lacks one at most (its null tag)
_SHARES = f'{_mean_by_truck("diagnostics_current_load", _ALL)} / on (name) max by (name) (max_over_time(diagnostics_load_capacity{{name!=""}}{_ALL}))'
_VELOCITY = 'readings_velocity{name!=""}'
DATA_RANGE = (f'union(label_set(min(tfirst_over_time({_VELOCITY}{_ALL})), "{COLUMN_LABEL}", "first"), '
              f'label_set(max(tlast_over_time({_VELOCITY}{_ALL})), "{COLUMN_LABEL}", "last"))')
_GROUPS = f'group by (name, fleet, model) (count_over_time({{__name__=~"diagnostics_.+", name!="", fleet!="", model!=""}}{_ALL}))'
AVG_LOAD = (f'union(label_set(max by (fleet, model) (max_over_time(diagnostics_load_capacity{{name!="", fleet!="", model!=""}}{_ALL})), '
            f'"{COLUMN_LABEL}", "load_capacity"), '
            f'label_set(avg by (fleet, model) ({_SHARES} * on (name) group_left (fleet, model) {_GROUPS}), "{COLUMN_LABEL}", "share"))')


def avg_load_rows(series: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(fleet, model, load capacity, mean load share) per fleet and model, from AVG_LOAD's answer."""
    groups: dict[tuple[str, str], dict[str, float]] = {}
    for one in series:
        labels = one["metric"]
        groups.setdefault((labels["fleet"], labels["model"]), {})[labels[COLUMN_LABEL]] = float(one["value"][1])
    return [(*key, found.get("load_capacity"), found.get("share")) for key, found in sorted(groups.items())]


def stationary_trucks(fleet: str, window: Window, oldest_ms: int, newest_ms: int) -> dict[str, str]:
    """The instant query's parameters: the trucks of `fleet` whose mean velocity in the window is below
    1, over data from `oldest_ms` that reaches `newest_ms` at the latest."""
    at_ms, length_ms = window.end_ms - 1, window.end_ms - window.start_ms
    mean = _mean_by_truck("readings_velocity", f"[{metricsql_ms(length_ms)}]")
    every = f"[{metricsql_ms(newest_ms - oldest_ms + DAY_MS)}] offset {metricsql_ms(at_ms - newest_ms)}"
    drivers = f'group by (name, driver) (count_over_time({{__name__=~"readings_.+", name!="", driver!="", fleet="{fleet}"}}{every}))'
    return {"query": f"({mean} < {STATIONARY_VELOCITY}) * on (name) group_left (driver) {drivers}", "time": f"{at_ms / 1000:.3f}", "nocache": "1"}


def long_sessions(query: str, fleet: str, window: Window, oldest_ms: int, newest_ms: int) -> dict[str, str]:
    """The instant query's parameters: the trucks of `fleet` that drove (a mean velocity above 1) in more
    than 22 (long-driving-sessions) or 60 (long-daily-sessions) of the window's 10-minute periods."""
    at_ms, period = window.end_ms - 1, TEN_MINUTES_MS
    first, last = -(-window.start_ms // period) * period, window.end_ms // period * period  # the whole periods: [first, last)

    def driving(start_ms: int, end_ms: int) -> str:  # 1 or 0 per truck with velocities in [start, end), read at `at_ms`
        shift = f" offset {metricsql_ms(at_ms - (end_ms - 1))}" if end_ms - 1 != at_ms else ""
        return f'{_mean_by_truck("readings_velocity", f"[{metricsql_ms(end_ms - start_ms)}]{shift}")} > bool {DRIVING_VELOCITY}'

    parts = {}
    if first < last:  # a subquery whose steps are the whole periods' starts, each period's mean over [p, p + 10 min)
        whole = f'{_mean_by_truck("readings_velocity", f"[{metricsql_ms(period)}] offset {metricsql_ms(1 - period)}")} > bool {DRIVING_VELOCITY}'
        parts["whole"] = f"sum_over_time(({whole})[{metricsql_ms(last - first)}:{metricsql_ms(period)}] offset {metricsql_ms(at_ms - (last - period))})"
    if window.start_ms < min(first, window.end_ms):
        parts["first"] = driving(window.start_ms, min(first, window.end_ms))
    if max(last, window.start_ms) < window.end_ms and last >= first:
        parts["last"] = driving(max(last, window.start_ms), window.end_ms)
    counted = "sum by (name) (union(" + ", ".join(f'label_set({expression}, "{COLUMN_LABEL}", "{name}")' for name, expression in parts.items()) + "))"
    every = f"[{metricsql_ms(newest_ms - oldest_ms + DAY_MS)}] offset {metricsql_ms(at_ms - newest_ms)}"
    drivers = f'group by (name, driver) (count_over_time({{__name__=~"readings_.+", name!="", driver!="", fleet="{fleet}"}}{every}))'
    more_than = LONG_DRIVING_PERIODS if query == "long-driving-sessions" else LONG_DAILY_PERIODS
    return {"query": f"({counted} > {more_than}) * on (name) group_left (driver) {drivers}", "time": f"{at_ms / 1000:.3f}", "nocache": "1"}


def daily_driving_duration(found: Sequence[dict[str, Any]]) -> dict[str, str] | None:
    """The second query's parameters, from DATA_RANGE's answer (None: no data)."""
    ends = {one["metric"][COLUMN_LABEL]: float(one["value"][1]) for one in found}
    if len(ends) < 2:
        return None
    first_day, last_day = int(ends["first"] // _DAY_S * _DAY_S), int(ends["last"] // _DAY_S * _DAY_S)
    driving = f'{_mean_by_truck("readings_velocity", f"[{_PERIOD_S}s] offset -{_PERIOD_S * 1000 - 1}ms")} > bool {DRIVING_VELOCITY}'
    hours = f"floor((sum_over_time(({driving})[1d:{_PERIOD_S}s] offset -{_DAY_S - _PERIOD_S}s) > 0) / 6)"  # TSBS's integer division
    ahead = int(ends["last"]) + 1 - last_day
    tags = (f'group by (name, fleet, driver) (count_over_time({{__name__=~"readings_.+", name!="", fleet!="", driver!=""}}'
            f'[{ahead + last_day - first_day + 1}s] offset -{ahead}s))')
    days = (last_day - first_day) // _DAY_S + 1
    return {"query": f"avg_over_time(({hours})[{days}d:1d]) * on (name) group_left (fleet, driver) {tags}", "time": str(last_day), "nocache": "1"}


def duration_rows(series: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(fleet, name, driver, mean daily hours) of each truck of the answer."""
    return sorted((one["metric"]["fleet"], one["metric"]["name"], one["metric"]["driver"], float(one["value"][1])) for one in series)


def newest_rows(query: str, chosen: str) -> str:
    """The instant query (over all the data, `{window}`) of last-loc, single-last-loc, low-fuel or
    high-load, for the trucks `chosen` (`fleet="East"` or `name="truck_3"`)."""
    measurement = "diagnostics" if query in ("low-fuel", "high-load") else "readings"
    # Each truck's newest row's time: every row has its load or its fuel capacity.
    newest = f'max by (name) (tlast_over_time({{__name__=~"{measurement}_({"|".join(_CAPACITY_PAIR)})", name!=""}}{_ALL}))'

    def at_newest(field: str) -> str:  # the field's value in the truck's newest row, none where that row's is null
        series = f'{measurement}_{field}{{name!=""}}{_ALL}'
        return f"max by (name) (last_over_time({series}) and (tlast_over_time({series}) == on (name) group_left {newest}))"

    drivers = f'group by (name, driver) (count_over_time({{__name__=~"{measurement}_.+", {chosen}, name!="", driver!=""}}{_ALL}))'
    if query == "low-fuel":
        return f"(({at_newest('fuel_state')}) < {LOW_FUEL}) * on (name) group_left (driver) {drivers}"
    if query == "high-load":
        load, capacity = at_newest("current_load"), f'max by (name) (max_over_time(diagnostics_load_capacity{{name!=""}}{_ALL}))'
        return f"(({load}) and on (name) (({load}) / on (name) {capacity} > {HIGH_LOAD})) * on (name) group_left (driver) {drivers}"
    located = ", ".join(f'label_set(({at_newest(field)}) and on (name) {drivers}, "{COLUMN_LABEL}", "{field}")' for field in ("longitude", "latitude"))
    return f'union(label_set({drivers}, "{COLUMN_LABEL}", "truck"), {located})'


def newest_conversion(query: str) -> Callable[[Sequence[dict[str, Any]]], list[tuple[Any, ...]]]:
    """(name, driver, value) per truck of low-fuel's and high-load's answers; (name, driver, longitude,
    latitude) per truck with readings of last-loc's, a value its newest row lacks None."""
    if query in ("low-fuel", "high-load"):
        return lambda series: sorted((one["metric"]["name"], one["metric"]["driver"], float(one["value"][1])) for one in series)

    def located(series: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
        trucks = {one["metric"]["name"]: one["metric"]["driver"] for one in series if one["metric"][COLUMN_LABEL] == "truck"}
        values = {(one["metric"]["name"], one["metric"][COLUMN_LABEL]): float(one["value"][1]) for one in series}
        return sorted((name, driver, values.get((name, "longitude")), values.get((name, "latitude"))) for name, driver in trucks.items())

    return located


def truck_rows(series: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(name, driver) of each truck of the answer."""
    return sorted((one["metric"]["name"], one["metric"]["driver"]) for one in series)


_ROWS = ("it counts the rows of 10-minute periods, and MetricsQL counts a series' samples: TSBS's null fields and tags leave every "
         "field out of some rows, and a row counted by its load or fuel capacity needs the two series' samples paired row by row, "
         "which MetricsQL does only at a subquery's steps")
REFUSED = (
    ("avg-vs-projected-fuel-consumption", "it averages the fuel consumption of the rows whose velocity is above 1, a condition on "
                                          "another field of the same row: MetricsQL compares two series' samples only at the steps of a "
                                          "subquery, not row by row"),
    ("avg-daily-driving-session", "it measures driving sessions from one change of a 10-minute period's state to the next: MetricsQL "
                                  "has no function that pairs a change with the next one"),
    ("daily-activity", _ROWS),
    ("breakdown-frequency", _ROWS),
)
