"""The victoriametrics module's options and the constants its roles share; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.checks.expected import MINUTE_MS
from iotdb_bench.simulator.modules.base import HttpUrl, ModuleOptions, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.victoriametrics import Module  # noqa: F401 (the alias at the end names it)

DAY_S = 86_400
# VictoriaMetrics refuses samples more than two days ahead of its clock.
FUTURE_LIMIT_S = 2 * DAY_S
RETENTION_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": DAY_S, "w": 7 * DAY_S, "y": 365 * DAY_S}
MONTH_S = 31 * DAY_S
ENDPOINTS = {"import": "/api/v1/import", "influx": "/write"}
# How long VictoriaMetrics serves a rendered copy of /metrics before rendering it again.
METRICS_CACHE_S = 1.0
# The record's blocks: one every RECORD_BLOCK_MS of sample time from the origin, four bytes per sample.
RECORD_BLOCK_MS = 10 * MINUTE_MS
RECORD_BYTES_PER_SAMPLE = 4
# The server-wide counter of samples received per ingestion protocol (/metrics).
INSERTED_COUNTER = {"import": 'vm_rows_inserted_total{type="vmimport"}', "influx": 'vm_rows_inserted_total{type="influx"}'}


class VictoriametricsOptions(ModuleOptions):
    url: HttpUrl = "http://localhost:8428"
    ingestion: Literal["import", "influx"] = Field("import", description="/api/v1/import JSON lines, or InfluxDB line protocol on /write")
    store_sequence_number: bool = Field(False, description="write each event's sequence number as a second series")
    timeout: float = Field(60.0, gt=0, description="seconds one HTTP call may take")
    visible_wait_s: float = Field(30, ge=0, description="longest wait, after a run, for every acknowledged sample to be searchable")
    visible_poll_s: float = Field(0.1, gt=0, description="seconds between counts while waiting")


VmRole = Role["Module", VictoriametricsOptions]  # the base of the module's role classes
