"""TSBS's SQL for the relational modules: the layout of TSBS's TimescaleDB target (a `tags` table of
the hosts' or trucks' tags, a table per measurement with time, tags_id, the fields and
`additional_tags` JSON) and the text of its DevOps queries (its
cmd/tsbs_generate_queries/databases/timescaledb/devops.go with --timescale-use-tags, the default),
in four dialects: TimescaleDB (time_bucket), PostgreSQL (date_trunc and date_bin in place of TSBS's
to_timestamp(extract(epoch)::int) arithmetic, which rounds sub-second times), SQLite (epoch
milliseconds; lastpoint without DISTINCT ON and LATERAL), MySQL and MariaDB (TSBS has no target for
them: DATETIME(3) in the session's UTC, buckets by TIMESTAMPDIFF, which UNIX_TIMESTAMP's 2038 limit
does not reach; lastpoint as SQLite's). The IoT queries are tsbs_iot_sql.py's.

Each query's rows are turned into the common form of simulator/queries/tsbs_devops.py after the
timed call: times as epoch milliseconds, hosts by name (the tool fills `tags` itself: host_i has id
i + 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer, Rows, epoch_ms, with_times
from iotdb_bench.simulator.queries.parameters import Parameters, Window, iso_ms
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, LATEST_MINUTES, DevopsQuery
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_name
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS, UseCase

# Columns of `SELECT *` from tags, then from cpu: where lastpoint's and high-cpu's values are.
_TAG_COLUMNS = 1 + len(TAG_NAMES)
_CPU_FIELDS_AT = 2  # time, tags_id, then the fields


@dataclass(frozen=True)
class Dialect:
    name: str
    bucket: Callable[[int, str], str]  # an expression bucketing a time column by so many seconds
    literal: Callable[[int], str]  # a time literal for epoch milliseconds
    types: dict[str, str]  # the column types of the layout: time, tags_id, field, text, float (a tag), json, id
    lastpoint: str
    placeholder: str
    keep_existing: Callable[[str], str]  # an INSERT that leaves an existing row as it is
    quote: str = '"'  # around an identifier that is also a keyword (`time` in an index)
    # What TSBS's IoT text needs beside (tsbs_iot_sql.py): whether LATERAL joins exist (else each truck's
    # newest row joined on its max(time), a plain derived table); the operator dividing integers into
    # an integer (PostgreSQL's and SQLite's `/`); a divisor literal that keeps the fraction of a sum of
    # integers; the mean length of driving sessions from `start` to `stop`, an interval or seconds.
    lateral: bool = True
    integer_division: str = "/"
    keeps_fraction: Callable[[int], str] = str
    session_length: str = "avg(age(stop, start))"


_PG_LASTPOINT = ("SELECT DISTINCT ON (t.hostname) * FROM tags t INNER JOIN LATERAL(SELECT * FROM cpu c WHERE c.tags_id = t.id "
                 "ORDER BY time DESC LIMIT 1) AS b ON true ORDER BY t.hostname, b.time DESC")
_PG_TYPES = {"time": "timestamptz", "tags_id": "integer", "field": "DOUBLE PRECISION", "text": "TEXT", "float": "FLOAT", "json": "JSONB",
             "id": "SERIAL PRIMARY KEY"}


def _pg_literal(ms: int) -> str:
    return f"'{iso_ms(ms)[:-1].replace('T', ' ')} +0000'"  # TSBS's "2006-01-02 15:04:05.999999 -0700"


def _pg_bucket(seconds: int, column: str) -> str:
    """date_trunc where a unit is the bucket, else date_bin from TimescaleDB's origin (a Monday, 2000-01-03)."""
    units = {60: "minute", 3600: "hour", 86_400: "day"}
    if seconds in units:
        return f"date_trunc('{units[seconds]}', {column})"
    return f"date_bin('{seconds} seconds', {column}, TIMESTAMPTZ '2000-01-03 00:00:00+00')"


def _on_conflict_do_nothing(insert: str) -> str:
    return f"{insert} ON CONFLICT DO NOTHING"


TIMESCALEDB = Dialect("timescaledb", lambda seconds, column: f"time_bucket('{seconds} seconds', {column})", _pg_literal, _PG_TYPES, _PG_LASTPOINT,
                      "%s", _on_conflict_do_nothing)
POSTGRES = Dialect("postgres", _pg_bucket, _pg_literal, _PG_TYPES, _PG_LASTPOINT, "%s", _on_conflict_do_nothing)
# Each host's newest row joined to its tags, where there is no DISTINCT ON or LATERAL.
_JOIN_LASTPOINT = ("SELECT * FROM tags t JOIN cpu c ON c.tags_id = t.id AND c.time = (SELECT max(time) FROM cpu WHERE tags_id = t.id) "
                   "ORDER BY t.hostname")
SQLITE = Dialect("sqlite", lambda seconds, column: f"{column} / {seconds * 1000} * {seconds * 1000}", str,
                 {"time": "INTEGER", "tags_id": "INTEGER", "field": "REAL", "text": "TEXT", "float": "REAL", "json": "TEXT", "id": "INTEGER PRIMARY KEY"},
                 _JOIN_LASTPOINT, "?", lambda insert: insert.replace("INSERT", "INSERT OR IGNORE", 1), lateral=False,
                 keeps_fraction=lambda divisor: f"{divisor}.0", session_length="avg(stop - start) / 1000.0")


def _mysql_bucket(seconds: int, column: str) -> str:
    """The minute, hour, day or other span of seconds of a DATETIME column: whole units since the
    epoch, added back to it."""
    epoch = "TIMESTAMP'1970-01-01 00:00:00'"
    units = {60: "MINUTE", 3600: "HOUR", 86_400: "DAY"}
    if seconds in units:
        return f"TIMESTAMPADD({units[seconds]}, TIMESTAMPDIFF({units[seconds]}, {epoch}, {column}), {epoch})"
    return f"TIMESTAMPADD(SECOND, TIMESTAMPDIFF(SECOND, {epoch}, {column}) DIV {seconds} * {seconds}, {epoch})"


# VARCHAR, not TEXT: the unique index on all ten tags needs lengths (10 x 64 utf8mb4 characters fit InnoDB's 3072 bytes).
# Its `/` keeps fractions (to the session's div_precision_increment, which the module sets to 30
# digits), DIV drops them; a session's length in microseconds, divided into seconds.
MYSQL = Dialect("mysql", _mysql_bucket, lambda ms: f"'{iso_ms(ms)[:-1].replace('T', ' ')}'",
                {"time": "DATETIME(3)", "tags_id": "INT", "field": "DOUBLE", "text": "VARCHAR(64)", "float": "DOUBLE", "json": "JSON",
                 "id": "INT PRIMARY KEY"},
                _JOIN_LASTPOINT, "%s", lambda insert: insert.replace("INSERT", "INSERT IGNORE", 1), quote="`", lateral=False,
                integer_division="DIV", session_length="avg(TIMESTAMPDIFF(MICROSECOND, start, stop)) / 1000000")


def setup_statements(dialect: Dialect, clean: bool, shape: str) -> list[str]:
    """The tags table and a table per measurement with TSBS's indexes (its defaults: --partition-index,
    --time-index); dropped first when `clean`."""
    use_case = USE_CASES[shape]
    types = dialect.types
    tables = [measurement.name for measurement in use_case.measurements]
    tags = ", ".join(f"{name} {types[kind]}" for name, kind in use_case.tags)
    names = [name for name, _ in use_case.tags]
    time = f"{dialect.quote}time{dialect.quote}"
    statements = [*(f"DROP TABLE IF EXISTS {table}" for table in [*tables, "tags"] if clean),
                  f"CREATE TABLE IF NOT EXISTS tags (id {types['id']}, {tags})",
                  f"CREATE UNIQUE INDEX IF NOT EXISTS uniq1 ON tags ({', '.join(names)})",
                  f"CREATE INDEX IF NOT EXISTS tags_{names[0]} ON tags ({names[0]})"]
    for measurement in use_case.measurements:
        table = measurement.name
        # quoted: some of devops' fields are keywords (MySQL's `reads`)
        fields = ", ".join(f"{dialect.quote}{name}{dialect.quote} {types['field']}" for name in measurement.field_names)
        statements += [f"CREATE TABLE IF NOT EXISTS {table} (time {types['time']}, tags_id {types['tags_id']}, {fields}, "
                       f"additional_tags {types['json']} DEFAULT NULL)",
                       f"CREATE INDEX IF NOT EXISTS {table}_tags_id_time ON {table} (tags_id, {time} DESC)",
                       f"CREATE INDEX IF NOT EXISTS {table}_time ON {table} ({time} DESC)"]
    return statements


def insert_tags(dialect: Dialect, shape: str) -> str:
    """The INSERT of one entity's tags (its id first) that leaves an existing row as it is."""
    names = [name for name, _ in USE_CASES[shape].tags]
    insert = f"INSERT INTO tags (id, {', '.join(names)}) VALUES ({', '.join([dialect.placeholder] * (1 + len(names)))})"
    return dialect.keep_existing(insert)


def tag_rows(seed: int, entities: int, use_case: UseCase) -> list[tuple]:
    """(id, tags...) of every host or truck of the run: entity i has id i + 1."""
    return [(index + 1, *tags) for index, tags in enumerate(use_case.tag_rows(seed, 0, entities))]


def devops(query: DevopsQuery, parameters: Parameters, dialect: Dialect) -> tuple[str, Callable[[Sequence[Any]], list[tuple]]]:
    """The statement of one execution, and the conversion of its rows to the common form."""
    window: Window = parameters["window"] if query.window_ms else Window(0, 0)  # lastpoint has none
    hosts = ""
    if query.hosts:
        names = ",".join(f"'{name}'" for name in parameters["hosts"])
        hosts = f"tags_id IN (SELECT id FROM tags WHERE hostname IN ({names}))"
    family, literal = query.family, dialect.literal

    def bucket(seconds: int) -> str:
        return dialect.bucket(seconds, "time")

    if family in ("single-groupby", "cpu-max-all"):
        unit, seconds = ("minute", 60) if family == "single-groupby" else ("hour", 3600)
        maxima = ", ".join(f"max({name}) as max_{name}" for name in query.fields)
        order = f"{unit} ASC" if family == "single-groupby" else unit
        return (f"SELECT {bucket(seconds)} AS {unit}, {maxima} FROM cpu WHERE {hosts} AND time >= {literal(window.start_ms)} "
                f"AND time < {literal(window.end_ms)} GROUP BY {unit} ORDER BY {order}"), with_times(0)
    if family == "double-groupby":
        means = ", ".join(f"avg({name}) as mean_{name}" for name in query.fields)
        return (f"WITH cpu_avg AS (SELECT {bucket(3600)} as hour, tags_id, {means} FROM cpu WHERE time >= {literal(window.start_ms)} "
                f"AND time < {literal(window.end_ms)} GROUP BY 1, 2) SELECT hour, tags.hostname, "
                f"{', '.join(f'mean_{name}' for name in query.fields)} FROM cpu_avg JOIN tags ON cpu_avg.tags_id = tags.id "
                "ORDER BY hour, tags.hostname"), with_times(0)
    if family == "high-cpu":
        return (f"SELECT * FROM cpu WHERE usage_user > {HIGH_CPU_THRESHOLD:.1f} and time >= {literal(window.start_ms)} "
                f"AND time < {literal(window.end_ms)}" + (f" AND {hosts}" if hosts else "")), _high_cpu_rows
    if family == "lastpoint":
        return dialect.lastpoint, _last_points
    return (f"SELECT {bucket(60)} AS minute, max(usage_user) FROM cpu WHERE time < {literal(window.end_ms)} GROUP BY minute "
            f"ORDER BY minute DESC LIMIT {LATEST_MINUTES}"), with_times(0)


def answer(render: Callable[[Any, Parameters, Dialect], tuple[str, Callable[[Sequence[Any]], list[tuple]]]], query: Any, parameters: Parameters,
           dialect: Dialect, fetch: Callable[[str], Rows]) -> Callable[[], Answer]:
    """The query of one execution: `render` makes its statement and conversion (`devops`, or
    tsbs_iot_sql.iot), `fetch` runs the statement and returns its rows."""
    statement, convert = render(query, parameters, dialect)
    return lambda: Answer(fetch(statement), convert)


def _high_cpu_rows(rows: Sequence[Any]) -> list[tuple]:
    """`SELECT * FROM cpu` rows as (time, host, fields...)."""
    end = _CPU_FIELDS_AT + len(CPU_FIELDS)
    return [(epoch_ms(row[0]), host_name(int(row[1]) - 1), *row[_CPU_FIELDS_AT:end]) for row in rows]


def _last_points(rows: Sequence[Any]) -> list[tuple]:
    """`SELECT * FROM tags JOIN cpu` rows as (host, time, fields...)."""
    first = _TAG_COLUMNS + _CPU_FIELDS_AT
    return [(row[1], epoch_ms(row[_TAG_COLUMNS]), *row[first : first + len(CPU_FIELDS)]) for row in rows]
