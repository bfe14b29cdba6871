"""The influxdb module's options and the constants its roles share; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from iotdb_bench.simulator.modules.base import HttpUrl, ModuleOptions, Role

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.influxdb import Module  # noqa: F401 (the alias at the end names it)

# Flux needs a time range; this one holds every event the generator can produce.
RANGE = "range(start: 1970-01-01T00:00:00Z, stop: 2262-01-01T00:00:00Z)"
RECORD_PART_CHARS = 30_000  # well under the 64 KB limit of a string field, escaped quotes included


class InfluxdbOptions(ModuleOptions):
    url: HttpUrl = "http://localhost:8086"
    token: str = Field("", description="API token; on InfluxDB 1.8 'user:password' (or '-' without auth)")
    org: str = Field("-", description="organisation name ('-' on InfluxDB 1.8)")
    bucket: str = Field("iotbench", min_length=1, description="bucket; on InfluxDB 1.8 'database/retention-policy'")
    v1_compat: bool | None = Field(None, description="InfluxDB 1.8 (true) or 2.x (false); unset = read the server's version")
    timeout: float = Field(60.0, gt=0, description="seconds one HTTP call may take")
    verify_ssl: bool = True
    enable_gzip: bool = Field(False, description="gzip the write requests")


InfluxRole = Role["Module", InfluxdbOptions]  # the base of the module's role classes
