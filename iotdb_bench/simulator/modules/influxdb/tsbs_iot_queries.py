"""TSBS's IoT query types in InfluxQL, from TSBS's influx target (cmd/tsbs_generate_queries/databases/
influx/iot.go), made exact where its text departs from the types' semantics (simulator/queries/tsbs_iot.py),
and the types InfluxQL cannot answer exactly, refused with the reason.

TSBS writes a truck's tags on every point, and its null tags leave one out of some points: such a
point is in a series of its own (a truck's rows with a null fleet tag are not `"fleet" = 'East'`), and
InfluxQL has no join to find the truck's tags on its other points. InfluxDB's series index stands in
for TSBS's tags table: each execution first reads the series of the measurement (`SHOW SERIES ...
WHERE "fleet" = '...'`, or the truck's name), whose keys carry all five tags of each truck, and takes
the trucks' names and drivers from there; its query then selects those trucks by name (`GROUP BY
"name"` gathers a truck's series, a nameless point is in none) instead of by fleet. Both calls are the
timed query.

Where TSBS's text differs from the semantics: the newest row is `ORDER BY time DESC LIMIT 1` of every
row (TSBS's last-loc takes the oldest, its low-fuel the newest row below the threshold, not whether
the newest is), windows are [start, end) in milliseconds (TSBS: (start, end] in seconds), and the raw
selects name two fields, as a row lacks at most one (TSBS's null field).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.queries.parameters import Parameters, Window, iso_ms
from iotdb_bench.simulator.queries.tsbs_iot import (
    DRIVING_VELOCITY,
    LONG_DAILY_PERIODS,
    LONG_DRIVING_PERIODS,
    LOW_FUEL,
    STATIONARY_VELOCITY,
    IotQuery,
)

Series = dict[str, Any]  # one series of an InfluxQL answer: name, tags, columns, values
Row = tuple[Any, ...]

_NO_COUNT = ("InfluxQL counts a field's values, not points, and TSBS's null fields leave every field out of some rows: the rows of a "
             "10-minute period, which this type reads, cannot be counted")
_NO_JOIN = ("it groups every row by the truck's {what}, and TSBS's null tags leave that out of some points, which InfluxQL (without "
            "joins) cannot take from the truck's other points")
REFUSED = (
    ("high-load", "it compares a truck's newest load with its load capacity, a field TSBS's null tags leave out of some points, which "
                  "InfluxQL (without joins) cannot take from the truck's other points"),
    ("avg-vs-projected-fuel-consumption", _NO_JOIN.format(what="fleet and its nominal fuel consumption")),
    ("avg-daily-driving-duration", "TSBS's hours are whole (count / 6 in integers), and InfluxQL divides counts as floats"),
    ("avg-daily-driving-session", "InfluxQL has no window over a truck's periods that finds where its driving starts and stops and "
                                  "measures from one change to the next (TSBS's text writes an INTO measurement instead)"),
    ("avg-load", _NO_JOIN.format(what="fleet and model")),
    ("daily-activity", _NO_COUNT),
    ("breakdown-frequency", _NO_COUNT),
)


def series_statement(query: IotQuery, parameters: Parameters) -> str:
    """The first call: the series of the trucks the execution reads (of its fleet, or its truck)."""
    measurement = "diagnostics" if query.name == "low-fuel" else "readings"
    chosen = f"\"fleet\" = '{parameters['fleet']}'" if query.fleet else _names(parameters["trucks"])
    return f'SHOW SERIES FROM "{measurement}" WHERE {chosen}'


def drivers(series: Sequence[Series]) -> dict[str, str]:
    """Each truck's driver, from the keys of its series that carry both tags (TSBS's values need no escaping)."""
    found = {}
    for one in series:
        for [key] in one.get("values", []):
            tags = dict(part.split("=", 1) for part in key.split(",")[1:])
            if "name" in tags and "driver" in tags:
                found[tags["name"]] = tags["driver"]
    return found


def statement(query: IotQuery, parameters: Parameters, trucks: Sequence[str]) -> str:
    """The second call: the InfluxQL of one execution over these trucks."""
    names = _names(trucks)
    if query.name in ("last-loc", "single-last-loc"):
        return f'SELECT "longitude", "latitude" FROM "readings" WHERE {names} GROUP BY "name" ORDER BY time DESC LIMIT 1'
    if query.name == "low-fuel":
        newest = f'SELECT "fuel_state", "current_load" FROM "diagnostics" WHERE {names} GROUP BY "name" ORDER BY time DESC LIMIT 1'
        return f'SELECT "fuel_state" FROM ({newest}) WHERE "fuel_state" < {LOW_FUEL} GROUP BY "name" ORDER BY time DESC'
    window: Window = parameters["window"]
    inside = f"{names} AND time >= '{iso_ms(window.start_ms)}' AND time < '{iso_ms(window.end_ms)}'"
    if query.name == "stationary-trucks":
        means = f'SELECT mean("velocity") AS "mean_velocity" FROM "readings" WHERE {inside} GROUP BY "name"'
        return f'SELECT "mean_velocity" FROM ({means}) WHERE "mean_velocity" < {STATIONARY_VELOCITY} GROUP BY "name"'
    periods = LONG_DRIVING_PERIODS if query.name == "long-driving-sessions" else LONG_DAILY_PERIODS
    means = f'SELECT mean("velocity") AS "mean_velocity" FROM "readings" WHERE {inside} GROUP BY time(10m), "name"'
    driving = f'SELECT count("mean_velocity") AS "ten_min" FROM ({means}) WHERE "mean_velocity" > {DRIVING_VELOCITY} GROUP BY "name"'
    return f'SELECT "ten_min" FROM ({driving}) WHERE "ten_min" > {periods} GROUP BY "name"'


def conversion(query: IotQuery, driver_of: dict[str, str]) -> Callable[[Sequence[Series]], list[Row]]:
    """How the answer's series (one per truck) become the common form's rows: (name, driver, the
    values the type answers: longitude and latitude, the fuel state, or none)."""
    values = {"last-loc": slice(1, 3), "single-last-loc": slice(1, 3), "low-fuel": slice(1, 2)}.get(query.name, slice(0, 0))

    def rows(series: Sequence[Series]) -> list[Row]:
        found = []
        for one in series:
            name = one["tags"]["name"]
            found += [(name, driver_of.get(name), *row[values]) for row in one["values"]]
        return found

    return rows


def _names(trucks: Sequence[str]) -> str:
    return "(" + " or ".join(f"\"name\" = '{name}'" for name in trucks) + ")"
