"""The clickhouse module's options; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.clickhouse import Module  # noqa: F401 (the alias at the end names it)


class ClickhouseOptions(ModuleOptions):
    host: str = "127.0.0.1"
    port: int = Field(9000, ge=1, le=65535, description="native protocol port")
    user: str = "default"
    password: str = ""
    database: str = Field("iotbench", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    secure: bool = Field(False, description="TLS on the native protocol (port 9440 usually)")
    compression: bool = Field(False, description="LZ4 compression of the blocks")
    async_insert: bool = Field(False, description="server-side buffering of inserts (ClickHouse 21.11 and later)")
    wait_for_async_insert: bool = Field(True, description="with async_insert: an INSERT returns once its rows are written")
    timestamp_type: Literal["auto", "DateTime64", "Int64"] = Field("auto", description="auto: DateTime64(3) where the server has it, else Int64 epoch ms")
    device_type: Literal["auto", "LowCardinality", "String"] = Field("auto", description="auto: LowCardinality(String) where the server allows it, else String")
    connect_timeout: float = Field(10.0, gt=0)
    send_receive_timeout: float = Field(300.0, gt=0, description="seconds one call may take")


ClickhouseRole = Role["Module", ClickhouseOptions]  # the base of the module's role classes
