"""TSBS's IoT query types in InfluxQL, from TSBS's influx target (cmd/tsbs_generate_queries/databases/
influx/iot.go), made exact where its text departs from the types' semantics (simulator/queries/tsbs_iot.py),
and the type InfluxQL cannot answer exactly, refused with the reason (the types that group trucks by
their tags: tsbs_iot_grouped.py).

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
the newest is), windows are [start, end) in milliseconds (TSBS: (start, end] in seconds), the raw
selects name two fields, as a row lacks at most one (TSBS's null field), and avg-daily-driving-duration's
hours are `floor(periods / 6)` (TSBS's SQL divides integers, its InfluxQL `count / 6` does not).
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

TRUCK_TAGS = ("name", "fleet", "driver", "model", "device_version")  # TSBS's string tags of a truck (its capacities are fields)
EVERY_TIME = "time >= 0 AND time < '2262-01-01T00:00:00Z'"
Series = dict[str, Any]  # one series of an InfluxQL answer: name, tags, columns, values
Row = tuple[Any, ...]

REFUSED = (
    ("avg-daily-driving-session", "a session counts on the day it starts, and a day whose session does not end is a row of its own "
                                  "(a null mean); InfluxQL's elapsed() stamps a session with its end and has no row for one that does not "
                                  "end (TSBS's text: difference() and elapsed() through an INTO measurement, a write)"),
)

def series_statement(query: IotQuery, parameters: Parameters) -> str:
    """The first call: the series of the trucks the execution reads (of its fleet, its truck, or all)."""
    measurement = "diagnostics" if query.name == "low-fuel" else "readings"
    if not (query.fleet or query.trucks):
        return f'SHOW SERIES FROM "{measurement}"'
    chosen = f"\"fleet\" = '{parameters['fleet']}'" if query.fleet else names_condition(parameters["trucks"])
    return f'SHOW SERIES FROM "{measurement}" WHERE {chosen}'


def truck_tags(series: Sequence[Series]) -> dict[str, dict[str, str]]:
    """Each truck's tags, from the keys of its series that carry all of them (TSBS's values need no escaping)."""
    found = {}
    for one in series:
        for [key] in one.get("values", []):
            tags = dict(part.split("=", 1) for part in key.split(",")[1:])
            if len(tags) == len(TRUCK_TAGS):
                found[tags["name"]] = tags
    return found


def statement(query: IotQuery, parameters: Parameters, trucks: Sequence[str]) -> str:
    """The second call: the InfluxQL of one execution over these trucks (over every named row when the
    type reads all the data)."""
    if query.name == "avg-daily-driving-duration":  # per truck and UTC day its driving periods // 6, averaged over its days
        # Without a time range GROUP BY time(...) stops at now(): each names the range of every event the generator makes.
        means = f'SELECT mean("velocity") AS "mv" FROM "readings" WHERE "name" != \'\' AND {EVERY_TIME} GROUP BY time(10m), "name" fill(none)'
        days = f'SELECT count("mv") AS "periods" FROM ({means}) WHERE "mv" > {DRIVING_VELOCITY} AND {EVERY_TIME} GROUP BY time(1d), "name" fill(none)'
        return f'SELECT mean("hours") FROM (SELECT floor("periods" / 6) AS "hours" FROM ({days})) GROUP BY "name"'
    names = names_condition(trucks)
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


def conversion(query: IotQuery, tags_of: dict[str, dict[str, str]]) -> Callable[[Sequence[Series]], list[Row]]:
    """How the answer's series (one per truck) become the common form's rows: its tags the type
    answers (name and driver; avg-daily-driving-duration's fleet first), then its values (longitude and
    latitude, the fuel state, the hours, or none)."""
    keys = ("fleet", "name", "driver") if query.name == "avg-daily-driving-duration" else ("name", "driver")
    values = {"last-loc": slice(1, 3), "single-last-loc": slice(1, 3), "low-fuel": slice(1, 2), "avg-daily-driving-duration": slice(1, 2)}

    def rows(series: Sequence[Series]) -> list[Row]:
        found = []
        for one in series:
            tags = tags_of.get(one["tags"]["name"], {"name": one["tags"]["name"]})
            found += [(*(tags.get(key) for key in keys), *row[values.get(query.name, slice(0, 0))]) for row in one["values"]]
        return found

    return rows


def names_condition(trucks: Sequence[str]) -> str:
    """The trucks by name: a nameless point (its null name tag) is none of them."""
    return "(" + " or ".join(f"\"name\" = '{name}'" for name in trucks) + ")"
