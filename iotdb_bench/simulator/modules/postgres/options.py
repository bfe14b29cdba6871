"""The postgres module's options and the constants its roles share (TimescaleDB's module builds on them);
the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role
from iotdb_bench.simulator.workload.events import DEVICE_ID_WIDTH, TEXT_WIDTH

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.postgres import Module  # noqa: F401 (the alias at the end names it)

BATCH_KINDS = {"copy": "COPY", "values": "values lists", "transaction": "single-row INSERTs in one transaction"}
# Column types of each kind of column of the shapes (simulator/workload/shapes.py).
COLUMN_TYPES = {"timestamp": "TIMESTAMPTZ", "device": f"VARCHAR({DEVICE_ID_WIDTH})", "sensor": "SMALLINT", "sequence": "BIGINT",
                "float": "DOUBLE PRECISION", "int16": "SMALLINT", "int32": "INTEGER", "text": f"VARCHAR({TEXT_WIDTH})"}


class PostgresOptions(ModuleOptions):
    connection_string: str = Field("", description="libpq connection string; PG* environment variables fill the gaps")
    password: str | None = None
    use_values_lists: bool = False
    batch_mode: Literal["copy", "values", "transaction"] | None = None
    copy_supported: bool = True
    primary_key_constraint: str | None = None
    install_extensions: str = ""
    create_indices: bool = False
    max_retries: int = Field(10, ge=0)
    session_statements: str = Field("", description="SQL run on every new connection, ';'-separated")
    connect_timeout: int = Field(10, ge=1)

    @property
    def chosen_batch_mode(self) -> str:
        """How a batch is sent: `batch_mode`, else values lists with `use_values_lists`, else COPY."""
        if self.batch_mode:
            return self.batch_mode
        return "values" if self.use_values_lists else "copy"


PostgresRole = Role["Module", PostgresOptions]  # the base of the module's role classes
