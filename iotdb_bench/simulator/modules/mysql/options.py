"""The mysql module's options and the constants its roles share; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role
from iotdb_bench.simulator.workload.events import DEVICE_ID_WIDTH, TEXT_WIDTH

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.mysql import Module  # noqa: F401 (the alias at the end names it)

# Column types of each kind of column of the shapes (simulator/workload/shapes.py).
COLUMN_TYPES = {"timestamp": "DATETIME(3)", "device": f"VARCHAR({DEVICE_ID_WIDTH})", "sensor": "SMALLINT", "sequence": "BIGINT",
                "float": "DOUBLE", "int16": "SMALLINT", "int32": "INT", "text": f"VARCHAR({TEXT_WIDTH})"}


class MysqlOptions(ModuleOptions):
    host: str = "127.0.0.1"
    port: int = Field(3306, ge=1, le=65535)
    user: str = "root"
    password: str | None = None
    database: str = "bench"
    use_values_lists: bool = False
    batch_mode: Literal["transaction", "values"] | None = None
    engine: str | None = Field(None, pattern=r"^[A-Za-z][A-Za-z0-9_]*$", description="storage engine, e.g. InnoDB, MyISAM, Aria")
    primary_key_constraint: str | None = None
    create_indices: bool = False
    max_retries: int = Field(10, ge=0)
    connect_timeout: int = Field(10, ge=1)

    @property
    def chosen_batch_mode(self) -> str:
        """How a batch is sent: `batch_mode`, else values lists with `use_values_lists`, else one transaction."""
        if self.batch_mode:
            return self.batch_mode
        return "values" if self.use_values_lists else "transaction"


MysqlRole = Role["Module", MysqlOptions]  # the base of the module's role classes
