"""The sqlite module's options and the constants its roles share; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.sqlite import Module  # noqa: F401 (the alias at the end names it)

# SQLite's limit of bound variables per statement (SQLITE_MAX_VARIABLE_NUMBER since 3.32).
MAX_VARIABLES = 32_766
# Column types of each kind of column of the shapes (simulator/workload/shapes.py): SQLite's storage classes.
COLUMN_TYPES = {"timestamp": "INTEGER", "device": "TEXT", "sensor": "INTEGER", "sequence": "INTEGER", "float": "REAL",
                "int16": "INTEGER", "int32": "INTEGER", "text": "TEXT"}


class SqliteOptions(ModuleOptions):
    path: str = "iotdb-bench.sqlite3"
    journal_mode: Literal["wal", "delete", "truncate", "memory", "off"] = "wal"
    synchronous: Literal["off", "normal", "full", "extra"] = "normal"
    busy_timeout_ms: int = Field(60_000, ge=0)
    use_values_lists: bool = False
    create_indices: bool = False
    primary_key_constraint: str | None = None


SqliteRole = Role["Module", SqliteOptions]  # the base of the module's role classes
