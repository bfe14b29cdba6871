"""The questdb module's options and the column types its schema writes; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.questdb import Module  # noqa: F401 (the alias at the end names it)

# ILP writes only to WAL tables, and WAL tables need partitions: no NONE.
Partition = Literal["HOUR", "DAY", "WEEK", "MONTH", "YEAR"]
# QuestDB types of the shapes' kinds of column (simulator/workload/shapes.py).
COLUMN_TYPES = {"timestamp": "TIMESTAMP", "device": "SYMBOL", "sensor": "SHORT", "sequence": "LONG", "float": "DOUBLE",
                "int16": "SHORT", "int32": "INT", "text": "VARCHAR"}


class QuestdbOptions(ModuleOptions):
    host: str = "localhost"
    http_port: int = Field(9000, ge=1, le=65535, description="HTTP port: ILP writes")
    pg_port: int = Field(8812, ge=1, le=65535, description="PostgreSQL wire protocol port: tables, counts, queries")
    user: str = "admin"
    password: str = "quest"
    database: str = "qdb"
    partition_by: Partition = Field("DAY", description="how the tables are partitioned by their designated timestamp")
    dedup: bool = Field(False, description="DEDUP UPSERT KEYS(timestamp, device_id[, id]): repeated events replace stored ones")
    batch_encoding: Literal["numpy", "dataframe", "rows"] = Field(
        "numpy", description="how a batch is encoded: ILP text built with NumPy, the client's pandas DataFrame path, or row() per event")
    transport: Literal["http", "tcp"] = Field(
        "http", description="batches over ILP/HTTP (each request answered) or ILP/TCP (no answer: the count after the run checks)")
    ilp_tcp_port: int = Field(9009, ge=1, le=65535, description="ILP/TCP port (transport=tcp)")
    request_timeout_s: float = Field(60, gt=0, description="seconds one ILP request may take")
    client_retry_s: float = Field(0, ge=0, description="the client's own retries of failed ILP requests (0 = none: failures show)")
    commit_wait_s: float = Field(60, ge=0, description="longest wait for acknowledged rows to become visible after a run")
    commit_poll_s: float = Field(0.01, gt=0, description="seconds between counts while waiting")
    connect_timeout: int = Field(10, ge=1)


QuestdbRole = Role["Module", QuestdbOptions]  # the base of the module's role classes
