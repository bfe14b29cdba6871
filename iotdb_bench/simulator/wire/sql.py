"""SQL shared by the relational modules: the event columns and the five queries in portable SQL."""

from __future__ import annotations

import re

from iotdb_bench.simulator.checks.answers import Answer, with_times
from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, MINUTE_MS
from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_START_MS as DOWNSAMPLE_START_MS  # re-exported beside DOWNSAMPLE_END_MS
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME
from iotdb_bench.simulator.workload.shapes import Layout

EVENT_COLUMNS = ("timestamp", "device_id", "sequence_number", "temperature")

# The queries of the seed tool. Each one fetches all its rows. newest-per-device uses a window
# function, which every SQL database here runs; PostgreSQL-only shortcuts are opt-in variants.
QUERIES = {
    "count-events": f"SELECT count(*) FROM {SINGLE_TABLE_NAME}",
    "temperature-min-max": f"SELECT min(temperature), max(temperature) FROM {SINGLE_TABLE_NAME}",
    "temperature-stats": f"SELECT min(temperature), avg(temperature), max(temperature) FROM {SINGLE_TABLE_NAME}",
    "temperature-stats-per-device": (
        f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {SINGLE_TABLE_NAME} GROUP BY device_id"
    ),
    "newest-per-device": (
        "SELECT device_id, timestamp, temperature FROM ("
        "SELECT device_id, timestamp, temperature, "
        "row_number() OVER (PARTITION BY device_id ORDER BY timestamp DESC) AS newest "
        f"FROM {SINGLE_TABLE_NAME}) ranked WHERE newest = 1"
    ),
}

# The columns of each query's rows that are timestamps (converted to epoch ms for the answer check).
TIME_COLUMNS = {"newest-per-device": (1,), "device-downsample": (0,)}
DOWNSAMPLE_END_MS = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS


def downsample_query(minute: str, start: str, end: str) -> str:
    """device-downsample (seed 003's read-latency query): min, avg and max per minute of one device's
    readings within one hour. `minute` buckets `timestamp` per minute; `start` and `end` are the
    hour's bounds as literals of the dialect."""
    return (f"SELECT {minute} AS minute, min(temperature), avg(temperature), max(temperature) FROM {SINGLE_TABLE_NAME} "
            f"WHERE device_id = '{DOWNSAMPLE_DEVICE}' AND timestamp >= {start} AND timestamp < {end} GROUP BY 1 ORDER BY 1")


def over_tables(statements: dict[str, str], tables: list[str]) -> dict[str, str]:
    """The queries over the run's tables: with several, each reads the union of them all."""
    if tables == [SINGLE_TABLE_NAME]:
        return statements
    union = " UNION ALL ".join(f"SELECT timestamp, device_id, temperature FROM {table}" for table in tables)
    return {name: statement.replace(f"FROM {SINGLE_TABLE_NAME}", f"FROM ({union}) all_tables")
            for name, statement in statements.items()}


_DEVICE_FIRST_KEY = re.compile(r"^\s*PRIMARY\s+KEY\s*\(\s*device_id\b", re.IGNORECASE)


def scan_reads_whole_table(constraint: str | None, create_indices: bool) -> bool:
    """Whether `scan_statement` finds a device's readings only by reading every row: neither the key
    (the user's primary_key_constraint) nor the query indices (create_indices: device_id first) lead with
    the device."""
    return not create_indices and not (constraint and _DEVICE_FIRST_KEY.match(constraint))


def scan_statement(tables: list[str], timestamp_ms: str, placeholder: str) -> tuple[str, int]:
    """Every reading (epoch ms, value) of one device in timestamp order, over the run's tables; returns
    the statement and how many times the device id is bound."""
    parts = [f"SELECT {timestamp_ms} AS ms, temperature FROM {table} WHERE device_id = {placeholder}" for table in tables]
    if len(parts) == 1:
        return f"{parts[0]} ORDER BY timestamp", 1
    return f"SELECT ms, temperature FROM ({' UNION ALL '.join(parts)}) readings ORDER BY ms", len(parts)


def devices_statement(tables: list[str]) -> str:
    return " UNION ".join(f"SELECT DISTINCT device_id FROM {table}" for table in tables) + " ORDER BY 1"


def answer(query: str, rows) -> Answer:
    """A SQL query's rows as an answer (timestamp columns converted after the timed call)."""
    columns = TIME_COLUMNS.get(query.split(" (")[0])
    return Answer(rows, with_times(*columns) if columns else None)


# Indices the seed tool used for the query test: on temperature, and on device and temperature.
INDEX_STATEMENTS = (
    f"CREATE INDEX IF NOT EXISTS {SINGLE_TABLE_NAME}_temperature ON {{table}} (temperature)",
    f"CREATE INDEX IF NOT EXISTS {SINGLE_TABLE_NAME}_device_temperature ON {{table}} (device_id, temperature)",
)


def index_statements(table: str) -> list[str]:
    return [statement.replace(f"{SINGLE_TABLE_NAME}_", f"{table}_").format(table=table) for statement in INDEX_STATEMENTS]


def shape_index_statements(table: str, layout: Layout) -> list[str]:
    """The shape's own secondary indices (light: one on val1), created with the table."""
    return [f"CREATE INDEX IF NOT EXISTS {table}_{name} ON {table} ({name})" for name in layout.indexed]


def create_table_statement(table: str, key_column: str | None, layout: Layout, column_types: dict, constraint: str | None) -> str:
    """CREATE TABLE for the run's shape: the key column (None: no key), every column NOT NULL, and the
    key constraint (the user's, or PRIMARY KEY (id) when there is a key column)."""
    constraint = constraint or (None if key_column is None else "PRIMARY KEY (id)")
    parts = [key_column] if key_column else []
    parts += [f"{column.name} {column_types[column.kind]} NOT NULL" for column in layout.columns]
    if constraint:
        parts.append(constraint)
    return f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(parts)})"


def table_setup_statements(table: str, create_table: str, clean: bool, create_indices: bool, layout: Layout) -> list[str]:
    """What sets one table up, in order: dropped when `clean`, created, the query indices when asked
    for, the shape's own indices."""
    return [*([f"DROP TABLE IF EXISTS {table}"] if clean else []), create_table,
            *(index_statements(table) if create_indices else []), *shape_index_statements(table, layout)]


def insert_statement(table: str, columns: tuple[str, ...], rows: int, placeholder: str) -> str:
    """INSERT with a VALUES list of `rows` tuples of placeholders."""
    one_row = "(" + ", ".join([placeholder] * len(columns)) + ")"
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES " + ", ".join([one_row] * rows)
