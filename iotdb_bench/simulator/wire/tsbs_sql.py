"""TSBS's SQL for the relational modules: the layout of TSBS's TimescaleDB target (a `tags` table, a
`cpu` table with tags_id and the fields) and the text of its DevOps queries (its
cmd/tsbs_generate_queries/databases/timescaledb/devops.go with --timescale-use-tags, the default),
in four dialects: TimescaleDB (time_bucket), PostgreSQL (date_trunc in place of TSBS's
to_timestamp(extract(epoch)::int) arithmetic, which rounds sub-second times), SQLite (epoch
milliseconds; lastpoint without DISTINCT ON and LATERAL), MySQL and MariaDB (TSBS has no target for
them: DATETIME(3) in the session's UTC, buckets by TIMESTAMPDIFF, which UNIX_TIMESTAMP's 2038 limit
does not reach; lastpoint as SQLite's).

Each query's rows are turned into the common form of simulator/queries/tsbs_devops.py after the
timed call: times as epoch milliseconds, hosts by name (the tool fills `tags` itself: host_i has id
i + 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer, epoch_ms, with_times
from iotdb_bench.simulator.queries.parameters import Parameters, Window, iso_ms
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, LATEST_MINUTES, DevopsQuery
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_name, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

TABLE = "cpu"
# Columns of `SELECT *` from tags, then from cpu: where lastpoint's and high-cpu's values are.
_TAG_COLUMNS = 1 + len(TAG_NAMES)
_CPU_FIELDS_AT = 2  # time, tags_id, then the fields


@dataclass(frozen=True)
class Dialect:
    name: str
    bucket: Callable[[int], str]  # an expression bucketing `time` by so many seconds
    literal: Callable[[int], str]  # a time literal for epoch milliseconds
    types: dict[str, str]  # the column types of the layout: time, tags_id, field, text, json, id
    lastpoint: str
    insert_tags: str  # INSERT of one host's tags that leaves an existing row as it is
    quote: str = '"'  # around an identifier that is also a keyword (`time` in an index)


_PG_LASTPOINT = ("SELECT DISTINCT ON (t.hostname) * FROM tags t INNER JOIN LATERAL(SELECT * FROM cpu c WHERE c.tags_id = t.id "
                 "ORDER BY time DESC LIMIT 1) AS b ON true ORDER BY t.hostname, b.time DESC")
_PG_TYPES = {"time": "timestamptz", "tags_id": "integer", "field": "DOUBLE PRECISION", "text": "TEXT", "json": "JSONB", "id": "SERIAL PRIMARY KEY"}
_TAG_PLACEHOLDERS = ", ".join(["{0}"] * (1 + len(TAG_NAMES)))
_TAG_INSERT = f"INSERT INTO tags (id, {', '.join(TAG_NAMES)}) VALUES ({_TAG_PLACEHOLDERS})"


def _pg_literal(ms: int) -> str:
    return f"'{iso_ms(ms)[:-1].replace('T', ' ')} +0000'"  # TSBS's "2006-01-02 15:04:05.999999 -0700"


TIMESCALEDB = Dialect("timescaledb", lambda seconds: f"time_bucket('{seconds} seconds', time)", _pg_literal, _PG_TYPES, _PG_LASTPOINT,
                      _TAG_INSERT.format("%s") + " ON CONFLICT DO NOTHING")
POSTGRES = Dialect("postgres", lambda seconds: f"date_trunc('{'minute' if seconds == 60 else 'hour'}', time)", _pg_literal, _PG_TYPES,
                   _PG_LASTPOINT, TIMESCALEDB.insert_tags)
# Each host's newest row joined to its tags, where there is no DISTINCT ON or LATERAL.
_JOIN_LASTPOINT = ("SELECT * FROM tags t JOIN cpu c ON c.tags_id = t.id AND c.time = (SELECT max(time) FROM cpu WHERE tags_id = t.id) "
                   "ORDER BY t.hostname")
SQLITE = Dialect("sqlite", lambda seconds: f"time / {seconds * 1000} * {seconds * 1000}", str,
                 {"time": "INTEGER", "tags_id": "INTEGER", "field": "REAL", "text": "TEXT", "json": "TEXT", "id": "INTEGER PRIMARY KEY"},
                 _JOIN_LASTPOINT, _TAG_INSERT.format("?").replace("INSERT", "INSERT OR IGNORE"))


def _mysql_bucket(seconds: int) -> str:
    """The minute or hour of `time` as a DATETIME: whole units since the epoch, added back to it."""
    unit, epoch = "MINUTE" if seconds == 60 else "HOUR", "TIMESTAMP'1970-01-01 00:00:00'"
    return f"TIMESTAMPADD({unit}, TIMESTAMPDIFF({unit}, {epoch}, time), {epoch})"


# VARCHAR, not TEXT: the unique index on all ten tags needs lengths (10 x 64 utf8mb4 characters fit InnoDB's 3072 bytes).
MYSQL = Dialect("mysql", _mysql_bucket, lambda ms: f"'{iso_ms(ms)[:-1].replace('T', ' ')}'",
                {"time": "DATETIME(3)", "tags_id": "INT", "field": "DOUBLE", "text": "VARCHAR(64)", "json": "JSON", "id": "INT PRIMARY KEY"},
                _JOIN_LASTPOINT, _TAG_INSERT.format("%s").replace("INSERT", "INSERT IGNORE"), quote="`")


def setup_statements(dialect: Dialect, clean: bool) -> list[str]:
    """The tags and cpu tables with TSBS's indexes (its defaults: --partition-index, --time-index);
    dropped first when `clean`."""
    types = dialect.types
    tags = ", ".join(f"{name} {types['text']}" for name in TAG_NAMES)
    fields = ", ".join(f"{name} {types['field']}" for name in CPU_FIELDS)
    return [*(["DROP TABLE IF EXISTS cpu", "DROP TABLE IF EXISTS tags"] if clean else []),
            f"CREATE TABLE IF NOT EXISTS tags (id {types['id']}, {tags})",
            f"CREATE UNIQUE INDEX IF NOT EXISTS uniq1 ON tags ({', '.join(TAG_NAMES)})",
            "CREATE INDEX IF NOT EXISTS tags_hostname ON tags (hostname)",
            f"CREATE TABLE IF NOT EXISTS cpu (time {types['time']}, tags_id {types['tags_id']}, {fields}, additional_tags {types['json']} DEFAULT NULL)",
            f"CREATE INDEX IF NOT EXISTS cpu_tags_id_time ON cpu (tags_id, {dialect.quote}time{dialect.quote} DESC)",
            f"CREATE INDEX IF NOT EXISTS cpu_time ON cpu ({dialect.quote}time{dialect.quote} DESC)"]


def tag_rows(seed: int, hosts: int) -> list[tuple]:
    """(id, tags...) of every host of the run: host_i has id i + 1."""
    return [(index + 1, *tags) for index, tags in enumerate(host_tags(seed, 0, hosts))]


def devops(query: DevopsQuery, parameters: Parameters, dialect: Dialect) -> tuple[str, Callable[[Sequence[Any]], list[tuple]]]:
    """The statement of one execution, and the conversion of its rows to the common form."""
    window: Window = parameters["window"] if query.window_ms else Window(0, 0)  # lastpoint has none
    hosts = ""
    if query.hosts:
        names = ",".join(f"'{name}'" for name in parameters["hosts"])
        hosts = f"tags_id IN (SELECT id FROM tags WHERE hostname IN ({names}))"
    family, bucket, literal = query.family, dialect.bucket, dialect.literal
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


def answer(query: DevopsQuery, parameters: Parameters, dialect: Dialect, fetch: Callable[[str], Sequence[Any]]) -> Callable[[], Answer]:
    """The query of one execution: `fetch` runs the rendered statement and returns its rows."""
    statement, convert = devops(query, parameters, dialect)
    return lambda: Answer(fetch(statement), convert)


def _high_cpu_rows(rows: Sequence[Any]) -> list[tuple]:
    """`SELECT * FROM cpu` rows as (time, host, fields...)."""
    end = _CPU_FIELDS_AT + len(CPU_FIELDS)
    return [(epoch_ms(row[0]), host_name(int(row[1]) - 1), *row[_CPU_FIELDS_AT:end]) for row in rows]


def _last_points(rows: Sequence[Any]) -> list[tuple]:
    """`SELECT * FROM tags JOIN cpu` rows as (host, time, fields...)."""
    first = _TAG_COLUMNS + _CPU_FIELDS_AT
    return [(row[1], epoch_ms(row[_TAG_COLUMNS]), *row[first : first + len(CPU_FIELDS)]) for row in rows]
