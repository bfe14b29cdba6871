"""The berkeleydb module's options and the file names its roles share; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from iotdb_bench.simulator.modules.base import ModuleOptions, Role
from iotdb_bench.simulator.wire.kv_records import KeyOrder

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.berkeleydb import Module  # noqa: F401 (the alias at the end names it)

LAYOUT_FILE = "layout.db"  # the key order and the record of expected answers


class BerkeleydbOptions(ModuleOptions):
    home: str = Field("iotdb-bench-berkeleydb", min_length=1, description="the environment's folder (created if missing; a folder of its own)")
    key_order: KeyOrder = Field("device", description="device: device, sensor, timestamp (clustered); time: timestamp first (sorted)")
    cache_mb: int = Field(64, ge=1, le=1 << 20, description="the environment's shared cache")
    page_size: int | None = Field(None, description="B-tree page size of new tables, a power of two from 512 to 65536 (seed 004: 65536)")
    durability: Literal["sync", "write_nosync", "nosync"] = "sync"
    max_retries: int = Field(100, ge=0, description="retries of a transaction chosen as a deadlock victim")
    max_locks: int = Field(200_000, ge=1000, description="lock table size: a transaction locks every page it writes")

    @field_validator("page_size")
    @classmethod
    def _power_of_two(cls, size: int | None) -> int | None:
        if size is not None and (size < 512 or size > 65536 or size & (size - 1)):
            raise ValueError(f"{size} is not a power of two from 512 to 65536")
        return size


BerkeleydbRole = Role["Module", BerkeleydbOptions]  # the base of the module's role classes
