"""TSBS's IoT query types in QuestDB 9's SQL. TSBS has no questdb IoT queries: these are its
TimescaleDB target's (cmd/tsbs_generate_queries/databases/timescaledb/iot.go, simulator/wire/tsbs_iot_sql.py)
on TSBS's questdb layout, with the semantics of simulator/queries/tsbs_iot.py.

TSBS's questdb layout has no tags table: every row carries its truck's tags (SYMBOL, the capacities
DOUBLE), and TSBS's null tags leave one out of some rows. The queries' `tags` stand in for TimescaleDB's
tags table: each truck's newest row that carries all eight tags (`LATEST ON ... PARTITION BY name`,
of readings and of diagnostics), so a row whose fleet or model is null still counts for its truck, and
a row without a name (TSBS ties it to no truck) joins none. A truck is missing from `tags` only if none
of its rows carries all its tags (each row lacks one with a chance of about 1%).

Translated, not copied: TimescaleDB's LATERAL newest row is `LATEST ON` (its WHERE applies before it, so
the threshold tests go outside), time_bucket is `SAMPLE BY 10m ALIGN TO CALENDAR` (epoch-aligned, as
time_bucket) and timestamp_floor('d', ...), HAVING (QuestDB has none) an outer WHERE, a CASE of
aggregates (which a SAMPLE BY does not take) a CASE a level above them, a boolean's
lag()/lead() (QuestDB's take numbers and times) an INT that is 1, 0, or null where the period's mean is
null, and `x.driving <> x.prev_driving`, which a null leaves false in SQL, says IS NOT NULL (QuestDB's
null INT compares as a number). A session's length is stop - start in seconds.
"""

from __future__ import annotations

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
from iotdb_bench.simulator.workload.tsbs.iot import TAGS

_TAG_LIST = ", ".join(name for name, _ in TAGS)
_ALL_TAGS = " AND ".join(f"{name} IS NOT NULL" for name, _ in TAGS)
TAGS_CTE = "WITH tags AS ({}) ".format(" UNION ".join(
    f"(SELECT {_TAG_LIST} FROM {table} WHERE {_ALL_TAGS} LATEST ON timestamp PARTITION BY name)" for table in ("readings", "diagnostics")))
TEN_MINUTES = "SAMPLE BY 10m ALIGN TO CALENDAR"


def _newest(table: str, fields: tuple[str, ...], where: str) -> str:
    """Each named truck's newest row of `table` (these fields) as `n`, joined to its tags `t`, and `where`."""
    return (f"{TAGS_CTE}SELECT t.name, t.driver, {', '.join(f'n.{field}' for field in fields)} FROM (SELECT name, {', '.join(fields)} "
            f"FROM {table} LATEST ON timestamp PARTITION BY name) n JOIN tags t ON n.name = t.name WHERE {where}")


def _sessions(rows: Sequence[Any]) -> list[tuple[Any, ...]]:
    return [(name, epoch_ms(day), None if seconds is None else float(seconds)) for name, day, seconds in rows]


def iot(query: IotQuery, parameters: Parameters, literal: Callable[[int], str]) -> tuple[str, Callable[[Sequence[Any]], list[tuple[Any, ...]]]]:
    """The statement of one execution, and the conversion of its rows to the common form."""
    plain = with_times()
    fleet = f"t.fleet = '{parameters['fleet']}'" if query.fleet else ""
    window: Window = parameters["window"] if query.window_ms else Window(0, 0)
    between = f"timestamp >= {literal(window.start_ms)} AND timestamp < {literal(window.end_ms)}"
    name = query.name
    if name in ("last-loc", "single-last-loc"):
        where = fleet if query.fleet else "t.name IN ({})".format(", ".join(f"'{truck}'" for truck in parameters["trucks"]))
        return _newest("readings", ("longitude", "latitude"), where), plain
    if name == "low-fuel":
        return _newest("diagnostics", ("fuel_state",), f"{fleet} AND n.fuel_state < {LOW_FUEL}"), plain
    if name == "high-load":
        return _newest("diagnostics", ("current_load",), f"{fleet} AND n.current_load / t.load_capacity > {HIGH_LOAD}"), plain
    if name == "stationary-trucks":
        return (f"{TAGS_CTE}SELECT name, driver FROM (SELECT t.name name, t.driver driver, avg(r.velocity) velocity FROM (SELECT name, "
                f"velocity FROM readings WHERE {between}) r JOIN tags t ON r.name = t.name WHERE {fleet} GROUP BY t.name, t.driver) "
                f"WHERE velocity < {STATIONARY_VELOCITY}"), plain
    if name in ("long-driving-sessions", "long-daily-sessions"):
        more_than = LONG_DRIVING_PERIODS if name == "long-driving-sessions" else LONG_DAILY_PERIODS
        return (f"{TAGS_CTE}SELECT name, driver FROM (SELECT t.name name, t.driver driver, count() periods FROM (SELECT timestamp, name, "
                f"avg(velocity) velocity FROM readings WHERE {between} {TEN_MINUTES}) r JOIN tags t ON r.name = t.name "
                f"WHERE r.velocity > {DRIVING_VELOCITY} AND {fleet} GROUP BY t.name, t.driver) WHERE periods > {more_than}"), plain
    if name == "avg-vs-projected-fuel-consumption":
        return (f"{TAGS_CTE}SELECT t.fleet, avg(r.fuel_consumption), avg(t.nominal_fuel_consumption) FROM (SELECT name, fuel_consumption "
                f"FROM readings WHERE velocity > {DRIVING_VELOCITY}) r JOIN tags t ON r.name = t.name GROUP BY t.fleet"), plain
    if name == "avg-daily-driving-duration":
        return (f"{TAGS_CTE}SELECT t.fleet, t.name, t.driver, avg(d.hours) FROM (SELECT day, name, count() / 6 hours FROM (SELECT "
                f"timestamp_floor('d', timestamp) day, name FROM (SELECT timestamp, name, avg(velocity) velocity FROM readings {TEN_MINUTES}) "
                f"WHERE velocity > {DRIVING_VELOCITY}) GROUP BY day, name) d JOIN tags t ON d.name = t.name GROUP BY t.fleet, t.name, t.driver"), plain
    if name == "avg-daily-driving-session":
        status = (f"SELECT timestamp, name, CASE WHEN velocity > {SESSION_VELOCITY} THEN 1 WHEN velocity <= {SESSION_VELOCITY} THEN 0 END "
                  f"driving FROM (SELECT timestamp, name, avg(velocity) velocity FROM readings {TEN_MINUTES})")
        changes = (f"SELECT name, timestamp, driving FROM (SELECT name, timestamp, driving, lag(driving) OVER (PARTITION BY name ORDER BY "
                   f"timestamp) before FROM ({status})) WHERE driving IS NOT NULL AND before IS NOT NULL AND driving <> before")
        sessions = f"SELECT name, timestamp start, lead(timestamp) OVER (PARTITION BY name ORDER BY timestamp) stop, driving FROM ({changes})"
        return (f"{TAGS_CTE}SELECT t.name, timestamp_floor('d', s.start) day, avg(datediff('s', s.start, s.stop)) FROM ({sessions}) s "
                "JOIN tags t ON s.name = t.name WHERE s.driving = 1 GROUP BY t.name, day"), _sessions
    if name == "avg-load":
        return (f"{TAGS_CTE}SELECT t.fleet, t.model, t.load_capacity, avg(d.load / t.load_capacity) FROM (SELECT name, avg(current_load) load "
                "FROM diagnostics) d JOIN tags t ON d.name = t.name GROUP BY t.fleet, t.model, t.load_capacity"), plain
    if name == "daily-activity":
        statuses = f"SELECT timestamp, name, count() rows, avg(status) status FROM diagnostics {TEN_MINUTES}"
        return (f"{TAGS_CTE}SELECT t.fleet, t.model, timestamp_floor('d', y.timestamp) day, sum(y.rows) / {PERIODS_PER_DAY}.0 FROM "
                f"({statuses}) y JOIN tags t ON y.name = t.name WHERE y.status < {ACTIVE_STATUS} GROUP BY t.fleet, t.model, day"), with_times(2)
    # breakdown-frequency: TSBS's count(status = 0) / count(*) >= 0.5 in integers is 1 when no status of the period is null.
    periods = (f"SELECT timestamp, name, CASE WHEN statuses = rows THEN 1 ELSE 0 END broken FROM (SELECT timestamp, name, count(status) "
               f"statuses, count() rows FROM diagnostics {TEN_MINUTES})")
    turns = f"SELECT name, broken, lead(broken) OVER (PARTITION BY name ORDER BY timestamp) next FROM ({periods})"
    return (f"{TAGS_CTE}SELECT t.model, count() FROM ({turns}) b JOIN tags t ON b.name = t.name WHERE b.broken = 0 AND b.next = 1 "
            "GROUP BY t.model"), plain
