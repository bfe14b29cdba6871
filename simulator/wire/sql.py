"""SQL shared by the relational modules: the event columns and the five queries in portable SQL."""

from __future__ import annotations

from simulator.shapes import Layout
from simulator.spec import SINGLE_TABLE_NAME

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


def insert_statement(table: str, columns: tuple[str, ...], rows: int, placeholder: str) -> str:
    """INSERT with a VALUES list of `rows` tuples of placeholders."""
    one_row = "(" + ", ".join([placeholder] * len(columns)) + ")"
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES " + ", ".join([one_row] * rows)
