"""TSBS's IoT queries in SQL (its cmd/tsbs_generate_queries/databases/timescaledb/iot.go, without
--timescale-use-json, the default), in the dialects of tsbs_sql.py: TimescaleDB's is TSBS's text
(buckets written in seconds), PostgreSQL's buckets with date_bin, SQLite's reads epoch milliseconds,
joins each truck's newest row on its max(time) where TSBS uses LATERAL (the tool writes one row per
truck and time), divides daily-activity's sum by 144.0 (PostgreSQL's sum of integers / 144 is a
numeric with its fraction; SQLite's would drop it) and takes a session's length as stop - start
(SQLite has no age()). MySQL's and MariaDB's join as SQLite's (no LATERAL), divide TSBS's integers
with DIV (their `/` keeps the fraction) and take a session's length in microseconds. What differs
is the Dialect's (lateral, integer_division, keeps_fraction, session_length).

Each query's rows are turned into the common form of simulator/queries/tsbs_iot.py after the timed
call: days as epoch milliseconds, a session's length in seconds.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.checks.answers import epoch_ms, with_times
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_iot import (
    ACTIVE_STATUS,
    DRIVING_VELOCITY,
    HIGH_LOAD,
    LONG_DAILY_PERIODS,
    LONG_DRIVING_PERIODS,
    LOW_FUEL,
    PERIODS_PER_DAY,
    SESSION_VELOCITY,
    STATIONARY_VELOCITY,
    IotQuery,
)
from iotdb_bench.simulator.wire.tsbs_sql import Dialect

TEN_MINUTES, DAY = 600, 86_400
_NAME_DRIVER = "t.name AS name, t.driver AS driver"


def _newest(dialect: Dialect, table: str, columns: str, alias: str) -> str:
    """Each truck's newest row of `table` (these columns), joined to `tags t` as `alias`."""
    if not dialect.lateral:
        selected = ", ".join(f"{alias}.{column.strip()}" for column in columns.split(","))
        return (f"{selected} FROM tags t JOIN {table} {alias} ON {alias}.tags_id = t.id AND {alias}.time = "
                f"(SELECT max(time) FROM {table} WHERE tags_id = t.id)")
    return (f"{alias}.* FROM tags t INNER JOIN LATERAL (SELECT {columns} FROM {table} {alias} WHERE {alias}.tags_id=t.id "
            f"ORDER BY time DESC LIMIT 1) {alias} ON true")


def _lateral(dialect: Dialect) -> str:
    """TSBS's LATERAL before a subquery that reads nothing of the tables before it (else a plain join)."""
    return "LATERAL " if dialect.lateral else ""


def _seconds(value: Any) -> float | None:
    """A session's length: an interval (PostgreSQL's age()) or seconds."""
    if value is None:
        return None
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


def _sessions(rows: Sequence[Any]) -> list[tuple]:
    return [(row[0], epoch_ms(row[1]), _seconds(row[2])) for row in rows]


def iot(query: IotQuery, parameters: Parameters, dialect: Dialect) -> tuple[str, Callable[[Sequence[Any]], list[tuple]]]:
    """The statement of one execution, and the conversion of its rows to the common form."""
    bucket, literal, plain = dialect.bucket, dialect.literal, with_times()
    fleet = f"t.fleet = '{parameters['fleet']}'" if query.fleet else ""
    window: Window = parameters["window"] if query.window_ms else Window(0, 0)
    between = f"time >= {literal(window.start_ms)} AND time < {literal(window.end_ms)}"
    name = query.name
    if name in ("last-loc", "single-last-loc"):
        trucks = ",".join(f"'{truck}'" for truck in parameters["trucks"]) if query.trucks else ""
        where = fleet if query.fleet else f"t.name IN ({trucks})"
        return f"SELECT {_NAME_DRIVER}, {_newest(dialect, 'readings', 'longitude, latitude', 'r')} WHERE t.name IS NOT NULL AND {where}", plain
    if name == "low-fuel":
        return (f"SELECT {_NAME_DRIVER}, {_newest(dialect, 'diagnostics', 'fuel_state', 'd')} WHERE t.name IS NOT NULL "
                f"AND d.fuel_state < {LOW_FUEL} AND {fleet}"), plain
    if name == "high-load":
        return (f"SELECT {_NAME_DRIVER}, {_newest(dialect, 'diagnostics', 'current_load', 'd')} WHERE t.name IS NOT NULL "
                f"AND d.current_load/t.load_capacity > {HIGH_LOAD} AND {fleet}"), plain
    if name == "stationary-trucks":
        return (f"SELECT {_NAME_DRIVER} FROM tags t INNER JOIN readings r ON r.tags_id = t.id WHERE {between} AND t.name IS NOT NULL "
                f"AND {fleet} GROUP BY 1, 2 HAVING avg(r.velocity) < {STATIONARY_VELOCITY}"), plain
    if name in ("long-driving-sessions", "long-daily-sessions"):
        periods = LONG_DRIVING_PERIODS if name == "long-driving-sessions" else LONG_DAILY_PERIODS
        return (f"SELECT {_NAME_DRIVER} FROM tags t INNER JOIN {_lateral(dialect)}(SELECT {bucket(TEN_MINUTES, 'time')} AS ten_minutes, tags_id "
                f"FROM readings WHERE {between} GROUP BY ten_minutes, tags_id HAVING avg(velocity) > {DRIVING_VELOCITY} "
                f"ORDER BY ten_minutes, tags_id) AS r ON t.id = r.tags_id WHERE t.name IS NOT NULL AND {fleet} GROUP BY name, driver "
                f"HAVING count(r.ten_minutes) > {periods}"), plain
    if name == "avg-vs-projected-fuel-consumption":
        moving = (f"INNER JOIN readings r ON r.tags_id = t.id AND r.velocity > {DRIVING_VELOCITY}" if not dialect.lateral else
                  f"INNER JOIN LATERAL(SELECT tags_id, fuel_consumption FROM readings r WHERE r.tags_id = t.id AND velocity > {DRIVING_VELOCITY}) "
                  "r ON true")
        return ("SELECT t.fleet AS fleet, avg(r.fuel_consumption) AS avg_fuel_consumption, avg(t.nominal_fuel_consumption) AS "
                f"projected_fuel_consumption FROM tags t {moving} WHERE t.fleet IS NOT NULL AND t.nominal_fuel_consumption IS NOT NULL "
                "AND t.name IS NOT NULL GROUP BY fleet"), plain
    if name == "avg-daily-driving-duration":
        return (f"WITH ten_minute_driving_sessions AS (SELECT {bucket(TEN_MINUTES, 'time')} AS ten_minutes, tags_id FROM readings r "
                f"GROUP BY tags_id, ten_minutes HAVING avg(velocity) > {DRIVING_VELOCITY}), daily_total_session AS (SELECT "
                f"{bucket(DAY, 'ten_minutes')} AS day, tags_id, count(*) {dialect.integer_division} 6 AS hours FROM ten_minute_driving_sessions GROUP BY day, tags_id) "
                "SELECT t.fleet AS fleet, t.name AS name, t.driver AS driver, avg(d.hours) AS avg_daily_hours FROM daily_total_session d "
                "INNER JOIN tags t ON t.id = d.tags_id GROUP BY fleet, name, driver"), plain
    if name == "avg-daily-driving-session":
        return (f"WITH driver_status AS (SELECT tags_id, {bucket(TEN_MINUTES, 'time')} AS ten_minutes, avg(velocity) > {SESSION_VELOCITY} "
                "AS driving FROM readings GROUP BY tags_id, ten_minutes ORDER BY tags_id, ten_minutes), driver_status_change AS (SELECT "
                "tags_id, ten_minutes AS start, lead(ten_minutes) OVER (PARTITION BY tags_id ORDER BY ten_minutes) AS stop, driving FROM "
                "(SELECT tags_id, ten_minutes, driving, lag(driving) OVER (PARTITION BY tags_id ORDER BY ten_minutes) AS prev_driving FROM "
                f"driver_status) x WHERE x.driving <> x.prev_driving) SELECT t.name AS name, {bucket(DAY, 'start')} AS day, {dialect.session_length} "
                "AS duration FROM tags t INNER JOIN driver_status_change d ON t.id = d.tags_id WHERE t.name IS NOT NULL AND d.driving = "
                "true GROUP BY name, day ORDER BY name, day"), _sessions
    if name == "avg-load":
        return ("SELECT t.fleet AS fleet, t.model AS model, t.load_capacity AS load_capacity, avg(d.avg_load / t.load_capacity) AS "
                "avg_load_percentage FROM tags t INNER JOIN (SELECT tags_id, avg(current_load) AS avg_load FROM diagnostics d GROUP BY "
                "tags_id) d ON t.id = d.tags_id WHERE t.name IS NOT NULL GROUP BY fleet, model, load_capacity"), plain
    if name == "daily-activity":
        return (f"SELECT t.fleet AS fleet, t.model AS model, y.day, sum(y.ten_mins_per_day) / {dialect.keeps_fraction(PERIODS_PER_DAY)} AS daily_activity FROM tags t "
                f"INNER JOIN (SELECT {bucket(DAY, 'time')} AS day, {bucket(TEN_MINUTES, 'time')} AS ten_minutes, tags_id, count(*) AS "
                f"ten_mins_per_day FROM diagnostics GROUP BY day, ten_minutes, tags_id HAVING avg(status) < {ACTIVE_STATUS}) y ON "
                "y.tags_id = t.id WHERE t.name IS NOT NULL GROUP BY fleet, model, y.day ORDER BY y.day"), with_times(2)
    return (f"WITH breakdown_per_truck_per_ten_minutes AS (SELECT {bucket(TEN_MINUTES, 'time')} AS ten_minutes, tags_id, "
            f"count(status = 0) {dialect.integer_division} count(*) >= 0.5 AS broken_down FROM diagnostics GROUP BY ten_minutes, tags_id), breakdowns_per_truck AS "
            "(SELECT ten_minutes, tags_id, broken_down, lead(broken_down) OVER (PARTITION BY tags_id ORDER BY ten_minutes) AS "
            "next_broken_down FROM breakdown_per_truck_per_ten_minutes) SELECT t.model AS model, count(*) FROM tags t INNER JOIN "
            "breakdowns_per_truck b ON t.id = b.tags_id WHERE t.name IS NOT NULL AND broken_down = false AND next_broken_down = true "
            "GROUP BY model"), plain
