"""TSBS's IoT query types in ClickHouse's SQL, over TSBS's clickhouse layout (tsbs.py).

TSBS has no IoT queries for ClickHouse: these are its TimescaleDB ones (cmd/tsbs_generate_queries/
databases/timescaledb/iot.go) translated, for the 18.16 server Debian ships and current ones alike:
- each truck's newest row (TSBS's LATERAL ... ORDER BY time DESC LIMIT 1) is the row at its
  max(created_at), as the DevOps lastpoint finds it (the tool writes one row per truck and time);
- the aggregates over readings or diagnostics are made per tags_id first, then joined with the
  tags (a hash join of the small table), as TSBS's clickhouse DevOps queries do; grouping by
  tags_id is grouping by TSBS's (name, driver), a truck's name being its own;
- TSBS's lag() and lead() (avg-daily-driving-session, breakdown-frequency) are a truck's periods
  as a sorted array, the change or the next period found by index: servers before 21 have no window
  functions;
- periods and days are epoch milliseconds (intDiv, as time_bucket aligns them), a session's length
  in seconds.
ClickHouse skips NULLs in aggregates and a comparison with NULL is NULL, as in PostgreSQL, so TSBS's
null fields count as TSBS's text counts them; its integer division `count(status = 0) / count(*)`
is intDiv. A row whose name TSBS nulled (tags_id 0) meets no tags row: the joins leave it out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.clickhouse.tsbs import TsbsTables, literal
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_iot import (
    ACTIVE_STATUS,
    DAY_MS,
    DRIVING_VELOCITY,
    HIGH_LOAD,
    LONG_DAILY_PERIODS,
    LONG_DRIVING_PERIODS,
    LOW_FUEL,
    PERIODS_PER_DAY,
    SESSION_VELOCITY,
    STATIONARY_VELOCITY,
    TEN_MINUTES_MS,
    IotQuery,
)

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.clickhouse.dialect import ServerDialect


def answer(tables: TsbsTables, query: IotQuery, parameters: Parameters, dialect: ServerDialect,
           fetch: Callable[[str], Sequence[Any]]) -> Callable[[], Answer]:
    """The query of one execution: `fetch` runs the rendered statement and returns its rows."""
    statement = iot(tables, query, parameters, dialect)
    return lambda: Answer(fetch(statement))


def iot(tables: TsbsTables, query: IotQuery, parameters: Parameters, dialect: ServerDialect) -> str:
    """The statement of one execution; its rows are in the common form of simulator/queries/tsbs_iot.py."""
    readings, diagnostics, tags = tables.measurements["readings"], tables.measurements["diagnostics"], tables.tags
    ms, at = dialect.as_ms("created_at"), literal(dialect)
    ten_minutes, day = (f"intDiv({ms}, {span}) * {span}" for span in (TEN_MINUTES_MS, DAY_MS))
    window: Window = parameters["window"] if query.window_ms else Window(0, 0)
    between = f"created_at >= {at(window.start_ms)} AND created_at < {at(window.end_ms)}"
    named = "name IS NOT NULL"
    if query.fleet:
        named += f" AND fleet = '{parameters['fleet']}'"
    if query.trucks:
        named += " AND name IN ({})".format(",".join(f"'{truck}'" for truck in parameters["trucks"]))
    chosen = f"tags_id IN (SELECT id FROM {tags} WHERE {named})"

    def trucks(columns: str, where: str = named) -> str:
        """The tags rows to join (`columns` beside the id, as tags_id), those of a name (and the fleet or trucks drawn)."""
        return f"(SELECT id AS tags_id, {columns} FROM {tags}{f' WHERE {where}' if where else ''}) AS t"

    def newest(table: str, columns: str) -> str:
        """The chosen trucks' newest row of `table` (these columns), by tags_id."""
        return (f"(SELECT tags_id, {columns} FROM {table} WHERE (tags_id, created_at) IN (SELECT tags_id, max(created_at) FROM {table} "
                f"WHERE {chosen} GROUP BY tags_id)) AS newest")

    name = query.name
    if name in ("last-loc", "single-last-loc"):
        return f"SELECT name, driver, longitude, latitude FROM {newest(readings, 'longitude, latitude')} INNER JOIN {trucks('name, driver')} USING (tags_id)"
    if name == "low-fuel":
        return (f"SELECT name, driver, fuel_state FROM {newest(diagnostics, 'fuel_state')} INNER JOIN {trucks('name, driver')} USING (tags_id) "
                f"WHERE fuel_state < {LOW_FUEL}")
    if name == "high-load":
        return (f"SELECT name, driver, current_load FROM {newest(diagnostics, 'current_load')} INNER JOIN {trucks('name, driver, load_capacity')} "
                f"USING (tags_id) WHERE current_load / load_capacity > {HIGH_LOAD}")
    if name == "stationary-trucks":
        return (f"SELECT name, driver FROM (SELECT tags_id, avg(velocity) AS mean_velocity FROM {readings} WHERE {chosen} AND {between} "
                f"GROUP BY tags_id) AS r INNER JOIN {trucks('name, driver')} USING (tags_id) WHERE mean_velocity < {STATIONARY_VELOCITY}")
    if name in ("long-driving-sessions", "long-daily-sessions"):
        periods = LONG_DRIVING_PERIODS if name == "long-driving-sessions" else LONG_DAILY_PERIODS
        return (f"SELECT name, driver FROM (SELECT tags_id, count() AS driving_periods FROM (SELECT {ten_minutes} AS ten_minutes, tags_id "
                f"FROM {readings} WHERE {chosen} AND {between} GROUP BY ten_minutes, tags_id HAVING avg(velocity) > {DRIVING_VELOCITY}) "
                f"GROUP BY tags_id) AS r INNER JOIN {trucks('name, driver')} USING (tags_id) WHERE driving_periods > {periods}")
    if name == "avg-vs-projected-fuel-consumption":
        return (f"SELECT fleet, avg(fuel_consumption) AS avg_fuel_consumption, avg(nominal_fuel_consumption) AS projected_fuel_consumption "
                f"FROM (SELECT tags_id, fuel_consumption FROM {readings} WHERE velocity > {DRIVING_VELOCITY}) AS r INNER JOIN "
                f"{trucks('fleet, nominal_fuel_consumption', 'fleet IS NOT NULL AND nominal_fuel_consumption IS NOT NULL AND name IS NOT NULL')} "
                "USING (tags_id) GROUP BY fleet")
    if name == "avg-daily-driving-duration":  # TSBS's text has no name IS NOT NULL here
        return (f"SELECT fleet, name, driver, avg(hours) AS avg_daily_hours FROM (SELECT intDiv(ten_minutes, {DAY_MS}) * {DAY_MS} AS day, "
                f"tags_id, intDiv(count(), 6) AS hours FROM (SELECT {ten_minutes} AS ten_minutes, tags_id FROM {readings} GROUP BY tags_id, "
                f"ten_minutes HAVING avg(velocity) > {DRIVING_VELOCITY}) GROUP BY day, tags_id) AS d INNER JOIN {trucks('fleet, name, driver', '')} "
                "USING (tags_id) GROUP BY fleet, name, driver")
    if name == "avg-daily-driving-session":
        # Per truck: its periods in time order with `driving` (NULL where no velocity), the indexes where
        # it differs from the period before (TSBS's driving <> lag(driving)), and per change (start,
        # seconds to the next change or NULL: TSBS's lead, driving).
        return ("SELECT name, day, avg(seconds) AS duration FROM (SELECT tags_id, intDiv(tupleElement(session, 1), "
                f"{DAY_MS}) * {DAY_MS} AS day, tupleElement(session, 2) AS seconds FROM (SELECT tags_id, arraySort(groupArray((ten_minutes, "
                "driving))) AS status, arrayFilter(i -> ifNull(i > 1 AND tupleElement(status[i], 2) != tupleElement(status[i - 1], 2), 0), "
                "arrayEnumerate(status)) AS changes, arrayMap(k -> (tupleElement(status[changes[k]], 1), if(k < length(changes), "
                "(tupleElement(status[changes[k + 1]], 1) - tupleElement(status[changes[k]], 1)) / 1000, NULL), tupleElement(status[changes[k]], 2)), "
                f"arrayEnumerate(changes)) AS sessions FROM (SELECT tags_id, {ten_minutes} AS ten_minutes, avg(velocity) > {SESSION_VELOCITY} AS "
                f"driving FROM {readings} GROUP BY tags_id, ten_minutes) GROUP BY tags_id) ARRAY JOIN sessions AS session WHERE "
                f"tupleElement(session, 3) = 1) AS d INNER JOIN {trucks('name')} USING (tags_id) GROUP BY name, day ORDER BY name, day")
    if name == "avg-load":
        return (f"SELECT fleet, model, load_capacity, avg(avg_load / load_capacity) AS avg_load_percentage FROM (SELECT tags_id, "
                f"avg(current_load) AS avg_load FROM {diagnostics} GROUP BY tags_id) AS d INNER JOIN {trucks('fleet, model, load_capacity')} "
                "USING (tags_id) GROUP BY fleet, model, load_capacity")
    if name == "daily-activity":
        return (f"SELECT fleet, model, day, sum(ten_mins_per_day) / {PERIODS_PER_DAY} AS daily_activity FROM (SELECT {day} AS day, "
                f"{ten_minutes} AS ten_minutes, tags_id, count() AS ten_mins_per_day FROM {diagnostics} GROUP BY day, ten_minutes, tags_id "
                f"HAVING avg(status) < {ACTIVE_STATUS}) AS y INNER JOIN {trucks('fleet, model')} USING (tags_id) GROUP BY fleet, model, day "
                "ORDER BY day")
    # breakdown-frequency: per truck, the periods not broken down whose next period is (TSBS's lead).
    return ("SELECT model, sum(truck_breakdowns) AS breakdowns FROM (SELECT tags_id, arraySort(groupArray((ten_minutes, broken_down))) AS periods, "
            "arraySum(arrayMap(i -> i < length(periods) AND tupleElement(periods[i], 2) = 0 AND tupleElement(periods[i + 1], 2) = 1, "
            f"arrayEnumerate(periods))) AS truck_breakdowns FROM (SELECT {ten_minutes} AS ten_minutes, tags_id, intDiv(count(status = 0), count()) "
            f">= 0.5 AS broken_down FROM {diagnostics} GROUP BY ten_minutes, tags_id) GROUP BY tags_id) AS b INNER JOIN {trucks('model')} "
            "USING (tags_id) GROUP BY model HAVING breakdowns > 0")
