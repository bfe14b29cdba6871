"""The mongodb module's options and the field names and indexes its roles share;
the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.mongodb import Module  # noqa: F401 (the alias at the end names it)

TIME_FIELD, META_FIELD = "timestamp", "device_id"
# The default shape's fields: the ones simulator/wire/bson_events.py encodes a batch at a time.
DEFAULT_COLUMNS = (TIME_FIELD, META_FIELD, "sequence_number", "temperature")
# Indices of the seed tool's query test (create_indices), as on the SQL databases.
INDEXES = ([("temperature", 1)], [("device_id", 1), ("temperature", 1)])


class MongodbOptions(ModuleOptions):
    uri: str = Field("mongodb://127.0.0.1:27017", pattern=r"^mongodb(\+srv)?://", description="connection string, without credentials")
    username: str | None = None
    password: str | None = Field(None, description='reference it as "${MONGODB_PASSWORD}"')
    auth_source: str = "admin"
    database: str = Field("iotbench", min_length=1)
    collection_type: Literal["timeseries", "plain"] = "timeseries"
    granularity: Literal["seconds", "minutes", "hours"] = Field("seconds", description="time series bucketing (each device reports about every second)")
    w: str = Field("1", pattern=r"^(majority|\d+)$", description="write concern: acknowledged by this many members, or majority")
    journal: bool = Field(False, description="acknowledge writes once they are in the on-disk journal")
    create_indices: bool = False
    timeout_s: float = Field(30, gt=0, description="server selection and socket timeout")


MongodbRole = Role["Module", MongodbOptions]  # the base of the module's role classes
