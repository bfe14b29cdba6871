"""The iotdb module's options and the constants its roles share; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.iotdb import Module  # noqa: F401 (the alias at the end names it)

# setup() writes one point here (outside the run's tables) so the database's data regions exist
# before the timed phase: IoTDB creates them with the first write, which takes 0.2-1 s.
SETUP_MARKER = "iotbench_setup"
# Seconds between reads of SHOW REGIONS while waiting for the sizes a FLUSH made.
STORAGE_POLL_S = 0.5


class IotdbOptions(ModuleOptions):
    host: str = "127.0.0.1"
    port: int = Field(6667, ge=1, le=65535)
    user: str = "root"
    password: str = "root"
    model: Literal["tree", "table"] = Field("tree", description="tree: aligned devices under root.<database>; table: IoTDB 2's table model")
    database: str = Field("iotbench", pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$", description="tree: root.<database>; table: <database>")
    data_region_groups: int | None = Field(None, ge=1, le=64, description="DATA_REGION_GROUP_NUM of a database the module creates; unset = the server's default")
    connect_timeout: float = Field(10.0, gt=0, description="seconds; also the socket timeout of every call")
    fetch_size: int = Field(5000, ge=1, description="rows per fetch of a query")
    rpc_compression: bool = False
    data_dir: str | None = Field(None, description="the DataNode's folder holding data/ and wal/, when the server runs here: the storage "
                                                   "figure is then its files' sizes, not IoTDB's own (rounded) accounting")
    storage_wait_s: float = Field(10.0, ge=0, description="longest wait, after a FLUSH, for SHOW REGIONS to report the new sizes")
    tree_batch: Literal["tablets", "records"] = Field(
        "tablets", description="tree model: a batch as one aligned tablet per device (insert_aligned_tablets) or one record per event "
                               "(insert_aligned_records)")


IotdbRole = Role["Module", IotdbOptions]  # the base of the module's role classes
