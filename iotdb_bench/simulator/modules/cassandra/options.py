"""The cassandra module's options and the constants its roles share; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import ModuleOptions, Role
from iotdb_bench.simulator.spec import PrimaryKey

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.cassandra import Module  # noqa: F401 (the alias at the end names it)

ConsistencyName = Literal["ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE"]
# CQL types of each kind of column of the shapes (simulator/workload/shapes.py).
COLUMN_TYPES = {"timestamp": "timestamp", "device": "text", "sensor": "smallint", "sequence": "bigint", "float": "double",
                "int16": "smallint", "int32": "int", "text": "text"}
# The light and large shapes have a key column: a uuid Cassandra makes (uuid() in the INSERT) or the client's key.
KEYED_SHAPE_KEYS = frozenset({PrimaryKey.db, PrimaryKey.uuid, PrimaryKey.client})
QUERY_FETCH_SIZE = 5000
DOWNSAMPLE_END_MS = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS
DDL_TIMEOUT_S = 120.0


class CassandraOptions(ModuleOptions):
    contact_points: list[str] = Field(["127.0.0.1"], description="hosts, a list or a comma-separated string")
    port: int = Field(9042, ge=1, le=65535)
    username: str | None = Field(None, description="enables PlainTextAuthProvider")
    password: str | None = None
    keyspace: str = Field("iotbench", pattern=r"^[A-Za-z][A-Za-z0-9_]{0,47}$")
    replication_factor: int = Field(1, ge=1, description="SimpleStrategy; only used when the keyspace is created")
    consistency_level: ConsistencyName = "LOCAL_QUORUM"
    count_consistency_level: ConsistencyName = Field("ALL", description="for the verification count")
    max_sync_calls: int = Field(1, ge=1, description="requests in flight; 1 = each request waits")
    request_timeout: float = Field(60.0, gt=0, description="client-side seconds per request")
    connect_timeout: float = Field(10.0, gt=0)
    count_timeout: float = Field(600.0, gt=0, description="seconds for SELECT count(*) of the verification")
    max_retries: int = Field(3, ge=0)
    max_rows_per_batch: int = Field(0, ge=0, description="split one device's rows into batches of this size; 0 = no split")
    query_concurrency: int = Field(16, ge=1, le=1024, description="requests in flight of one TSBS query (one per series partition)")
    per_device_queries: Literal["server", "client"] = Field(
        "server", description="server: GROUP BY / PER PARTITION LIMIT; client: one query per device (YugabyteDB YCQL)"
    )
    local_dc: str | None = None
    protocol_version: int | None = Field(None, ge=3, le=5, description="default: negotiated")

    @field_validator("consistency_level", "count_consistency_level", mode="before")
    @classmethod
    def _upper_case(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("contact_points", mode="before")
    @classmethod
    def _split_hosts(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [host.strip() for host in value.split(",")]
        if isinstance(value, list) and not [host for host in value if host]:
            raise ValueError("at least one contact point is needed")
        return [host for host in value if host] if isinstance(value, list) else value


CassandraRole = Role["Module", CassandraOptions]  # the base of the module's role classes
