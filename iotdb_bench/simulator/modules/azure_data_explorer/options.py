"""The azure_data_explorer module's options and the column types and mapping its roles share;
the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.azure_data_explorer import Module  # noqa: F401 (the alias at the end names it)

# Kusto types of each kind of column of the shapes (simulator/workload/shapes.py).
COLUMN_TYPES = {"timestamp": "datetime", "device": "string", "sensor": "int", "sequence": "long", "float": "real",
                "int16": "int", "int32": "int", "text": "string"}
CSV_MAPPING = "events_csv_mapping"


class AdxOptions(ModuleOptions):
    cluster_uri: str = Field(pattern=r"^https?://", description="engine URI, e.g. https://mycluster.westeurope.kusto.windows.net")
    database: str = Field(min_length=1)
    auth: Literal["application_key", "application_token", "none"] = "application_key"
    client_id: str | None = None
    client_secret: str | None = None
    tenant_id: str | None = None
    application_token: str | None = None
    ingestion: Literal["queued", "streaming"] = "queued"
    flush_immediately: bool = Field(False, description="queued: ask the service to skip its aggregation (ingests sooner)")
    batching_max_seconds: int | None = Field(
        None, ge=10, le=1800, description="queued: the tables' ingestion batching time (service default 5 minutes)"
    )
    ingestion_wait_s: float = Field(600, ge=0, description="longest wait for queued rows to appear after a run")
    ingestion_poll_s: float = Field(5, gt=0)


AdxRole = Role["Module", AdxOptions]  # the base of the module's role classes
