"""TSBS's IoT query types on IoTDB's tree model, over the module's layout (series.py: an aligned device per
truck and measurement, root.<database>.readings.truck_<i>, the truck's eight tags as tags of the device's
first field), with the semantics of simulator/queries/tsbs_iot.py (TSBS's TimescaleDB SQL,
cmd/tsbs_generate_queries/databases/timescaledb/iot.go). TSBS has no IoTDB IoT queries.

An execution runs IoTDB's statements and puts their rows together on the client, all of it timed:
- the trucks and their tags: `SHOW TIMESERIES root.<database>.<measurement>.*.<first field>`, with
  `WHERE TAGS(fleet) = ...` (or the drawn truck's name) where the type draws one: TimescaleDB's join with
  `tags`. The rows TSBS writes without a name are in root.<database>.<measurement>.unnamed.truck_<i>,
  which `.*` never reaches: a row TSBS ties to no truck is in no answer, as in SQL;
- a truck's newest row (TSBS's LATERAL ... ORDER BY time DESC LIMIT 1): `SELECT LAST *` gives each
  field's newest value that is not null, with its time; the row's time is the newest of them, and a field
  whose newest value is older was null in that row;
- aggregates per truck (`ALIGN BY DEVICE`), per truck and epoch-aligned 10 minutes (`GROUP BY ([start,
  end), 10m)` over the window, or over the data's whole range, read first with min_time and max_time of
  every field), mean tests as sum against count (whole numbers: exact), TSBS's rows of a period
  `count_time(*)` (a statement alone: IoTDB takes it with no other aggregate);
- what IoTDB's SQL has no words for, on the client from those exact figures: the join with the tags and
  the grouping by fleet or model, days of the periods, TSBS's integer division (driving periods // 6),
  and its lag() and lead() over a truck's periods (driving sessions, breakdowns).
IoTDB leaves nulls out of aggregates and compares none, as SQL does, so TSBS's null fields count as
TSBS's text counts them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.modules.iotdb.connection import literal
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
from iotdb_bench.simulator.queries.tsbs_iot_periods import breakdown_frequency, daily_activity, daily_driving_hours, daily_sessions, mean_load_shares
from iotdb_bench.simulator.workload.tsbs.iot import DIAGNOSTICS, READINGS
from iotdb_bench.simulator.workload.tsbs.usecases import Measurement

Row = tuple[Any, ...]
Fetch = Callable[[str], tuple[list[str], list[list[Any]]]]  # a statement's column names and rows (IotdbConnection.fetch_named)
Tags = dict[str, str]
Periods = dict[str, list[tuple[int, int, Any, int]]]  # device -> its periods with rows: (period, rows, sum, count)
# The types that read diagnostics; the others read readings.
_OF_DIAGNOSTICS = ("low-fuel", "high-load", "avg-load", "daily-activity", "breakdown-frequency")


def execute(query: IotQuery, parameters: Parameters, database: str, fetch: Fetch) -> list[Row]:
    """One execution's statements and the answer's rows in the common form of simulator/queries/tsbs_iot.py."""
    measurement = DIAGNOSTICS if query.name in _OF_DIAGNOSTICS else READINGS
    trucks = _trucks(query, parameters, database, measurement, fetch)
    if not trucks:
        return []
    name = query.name
    devices = ", ".join(trucks) if query.fleet or query.trucks else f"root.{database}.{measurement.name}.*"
    if name in ("last-loc", "single-last-loc", "low-fuel", "high-load"):
        return _newest_rows(name, trucks, _newest(fetch(f"SELECT LAST * FROM {devices}")[1]))
    if query.window_ms:
        return _in_window(name, parameters["window"], trucks, devices, fetch)
    if name == "avg-vs-projected-fuel-consumption":
        moving = _per_device(fetch(f"SELECT count(velocity), sum(fuel_consumption), count(fuel_consumption) FROM {devices} "
                                   f"WHERE velocity > {DRIVING_VELOCITY} ALIGN BY DEVICE")[1])
        return _fuel_consumption(trucks, moving)
    if name == "avg-load":
        loads = _per_device(fetch(f"SELECT sum(current_load), count(current_load) FROM {devices} ALIGN BY DEVICE")[1])
        return _load(trucks, loads, _per_device(fetch(f"SELECT count_time(*) FROM {devices} ALIGN BY DEVICE")[1]))
    return _over_periods(name, measurement, trucks, devices, fetch)


def _in_window(name: str, window: Window, trucks: dict[str, Tags], devices: str, fetch: Fetch) -> list[Row]:
    """stationary-trucks, long-driving-sessions and long-daily-sessions: the fleet's mean velocities in the window."""
    between = f"WHERE time >= {window.start_ms} AND time < {window.end_ms}"
    if name == "stationary-trucks":
        found = _per_device(fetch(f"SELECT sum(velocity), count(velocity) FROM {devices} {between} ALIGN BY DEVICE")[1])
        return [_name_driver(trucks[device]) for device, (total, count) in found.items()
                if device in trucks and count and total < STATIONARY_VELOCITY * count]
    more_than = LONG_DRIVING_PERIODS if name == "long-driving-sessions" else LONG_DAILY_PERIODS
    periods = _periods(fetch, "sum(velocity), count(velocity)", devices, (window.start_ms, window.end_ms), between)
    return [_name_driver(trucks[device]) for device, found in periods.items() if device in trucks
            and sum(1 for _, (total, count) in found if count and total > DRIVING_VELOCITY * count) > more_than]


def _over_periods(name: str, measurement: Measurement, trucks: dict[str, Tags], devices: str, fetch: Fetch) -> list[Row]:
    """The types over every truck's 10-minute periods of all the data: velocity's (avg-daily-driving-duration and
    -session) or status' (daily-activity, breakdown-frequency)."""
    span = _data_range(fetch, measurement.field_names, devices)
    if span is None:
        return []
    field = "status" if measurement is DIAGNOSTICS else "velocity"
    stats = _periods(fetch, f"sum({field}), count({field})", devices, span)
    if name == "avg-daily-driving-duration":
        return _driving_duration(trucks, stats)
    counted = {device: dict(found) for device, found in _periods(fetch, "count_time(*)", devices, span).items()}
    # Per truck its periods with rows, in time order: TSBS's GROUP BY tags_id, ten_minutes.
    periods: Periods = {device: [(period, counted[device][period][0], total, count) for period, (total, count) in found if counted[device][period][0]]
                        for device, found in stats.items() if device in trucks}
    if name == "avg-daily-driving-session":
        return [(trucks[device]["name"], day, seconds) for device, found in periods.items() for day, seconds in daily_sessions(found)]
    if name == "daily-activity":
        return daily_activity((trucks[device].get("fleet"), trucks[device].get("model"), found) for device, found in periods.items())
    return breakdown_frequency((trucks[device].get("model"), found) for device, found in periods.items())


# -- the trucks and their tags -----------------------------------------------------------------------
def _trucks(query: IotQuery, parameters: Parameters, database: str, measurement: Measurement, fetch: Fetch) -> dict[str, Tags]:
    """The trucks the type reads (those of the drawn fleet or names, or all) with a name tag: device path -> tags."""
    names = set(parameters["trucks"]) if query.trucks else None
    condition = (f" WHERE TAGS(fleet) = {literal(parameters['fleet'])}" if query.fleet else
                 f" WHERE TAGS(name) = {literal(next(iter(names)))}" if names and len(names) == 1 else "")
    columns, rows = fetch(f"SHOW TIMESERIES root.{database}.{measurement.name}.*.{measurement.field_names[0]}{condition}")
    path, tags = columns.index("Timeseries"), columns.index("Tags")
    found = {str(row[path]).rsplit(".", 1)[0]: json.loads(row[tags]) if isinstance(row[tags], str) and row[tags] else {} for row in rows}
    return {device: truck for device, truck in found.items() if truck.get("name") is not None and (names is None or truck["name"] in names)}


def _name_driver(tags: Tags) -> Row:
    return tags["name"], tags.get("driver")


def _number(tags: Tags, name: str) -> float | None:
    """A tag that holds a number (a capacity, the nominal fuel consumption)."""
    value = tags.get(name)
    return None if value is None else float(value)


# -- the newest rows ---------------------------------------------------------------------------------
def _newest(rows: Sequence[list[Any]]) -> dict[str, dict[str, Any]]:
    """SELECT LAST rows (time, series path, value as text, type) as each device's newest row: the values of the
    fields whose newest value is at the device's newest time (the others were null there)."""
    devices: dict[str, tuple[int, dict[str, Any]]] = {}
    for time, path, value, kind in rows:
        device, field = str(path).rsplit(".", 1)
        newest, fields = devices.get(device, (int(time), {}))
        if int(time) > newest:
            newest, fields = int(time), {}
        if int(time) == newest:
            fields[field] = int(value) if kind in ("INT32", "INT64") else float(value)
        devices[device] = (newest, fields)
    return {device: fields for device, (_, fields) in devices.items()}


def _newest_rows(name: str, trucks: dict[str, Tags], newest: dict[str, dict[str, Any]]) -> list[Row]:
    answer = []
    for device, fields in newest.items():
        tags = trucks.get(device)
        if tags is None:
            continue
        if name in ("last-loc", "single-last-loc"):
            answer.append((*_name_driver(tags), fields.get("longitude"), fields.get("latitude")))
        elif name == "low-fuel":
            if (fuel := fields.get("fuel_state")) is not None and fuel < LOW_FUEL:
                answer.append((*_name_driver(tags), fuel))
        elif (load := fields.get("current_load")) is not None and (capacity := _number(tags, "load_capacity")) and load / capacity > HIGH_LOAD:
            answer.append((*_name_driver(tags), load))
    return answer


# -- aggregates --------------------------------------------------------------------------------------
def _per_device(rows: Sequence[list[Any]]) -> dict[str, list[Any]]:
    """ALIGN BY DEVICE rows (device, aggregates...) by device."""
    return {str(device): values for device, *values in rows}


def _data_range(fetch: Fetch, fields: Sequence[str], devices: str) -> tuple[int, int] | None:
    """The first and last times of the devices' rows (every field's first and last time: a row has one at least)."""
    _, rows = fetch(f"SELECT {', '.join(f'min_time({field})' for field in fields)}, {', '.join(f'max_time({field})' for field in fields)} "
                    f"FROM {devices} GROUP BY LEVEL = 2")
    row = rows[0] if rows else []
    firsts, lasts = (_present(row[: len(fields)]), _present(row[len(fields) :]))
    return (min(firsts), max(lasts) + 1) if firsts and lasts else None


def _present(values: Sequence[Any]) -> list[int]:
    return [int(value) for value in values if value is not None and value == value]  # NaN: a field without rows


def _periods(fetch: Fetch, aggregates: str, devices: str, span: tuple[int, int], where: str = "") -> dict[str, list[tuple[int, list[Any]]]]:
    """Per device its 10-minute periods (epoch-aligned, over `span` widened to whole periods) in time order with the
    aggregates' values: `GROUP BY` lists every period of every device, the empty ones too."""
    start, end = span[0] - span[0] % TEN_MINUTES_MS, -(-span[1] // TEN_MINUTES_MS) * TEN_MINUTES_MS
    _, rows = fetch(f"SELECT {aggregates} FROM {devices} {where} GROUP BY ([{start}, {end}), 10m) ALIGN BY DEVICE")
    found: dict[str, list[tuple[int, list[Any]]]] = {}
    for period, device, *values in rows:
        found.setdefault(str(device), []).append((int(period), values))
    return found


def _fuel_consumption(trucks: dict[str, Tags], moving: dict[str, list[Any]]) -> list[Row]:
    """Per fleet the mean fuel consumption of the rows above velocity 1, and the mean nominal one of their trucks over those rows."""
    fleets: dict[str, list[float]] = {}  # rows, nominal x rows, fuel sum, fuel count
    for device, (rows, fuel, fuels) in moving.items():
        tags = trucks.get(device, {})
        nominal = _number(tags, "nominal_fuel_consumption")
        if not rows or tags.get("fleet") is None or nominal is None:
            continue
        figures = fleets.setdefault(tags["fleet"], [0, 0.0, 0.0, 0])
        figures[0] += rows
        figures[1] += nominal * rows
        figures[2] += fuel if fuels else 0.0
        figures[3] += fuels
    return [(fleet, fuel / fuels if fuels else None, nominal / rows) for fleet, (rows, nominal, fuel, fuels) in fleets.items()]


def _load(trucks: dict[str, Tags], loads: dict[str, list[Any]], rows: dict[str, list[Any]]) -> list[Row]:
    """Per fleet, model and capacity, the mean over its trucks with rows of their mean load / capacity."""
    return mean_load_shares((tags.get("fleet"), tags.get("model"), _number(tags, "load_capacity"), *loads.get(device, [None, 0]))
                            for device, tags in trucks.items() if rows.get(device, [0])[0])


def _driving_duration(trucks: dict[str, Tags], stats: dict[str, list[tuple[int, list[Any]]]]) -> list[Row]:
    """Per truck the mean over its days of its driving periods // 6 (TSBS's integer division: whole hours)."""
    answer = []
    for device, found in stats.items():
        tags = trucks.get(device)
        if tags is None:
            continue
        hours = daily_driving_hours((period, 0, total, count) for period, (total, count) in found)
        if hours is not None:
            answer.append((tags.get("fleet"), tags["name"], tags.get("driver"), hours))
    return answer
