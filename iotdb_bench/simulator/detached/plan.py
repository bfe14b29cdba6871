"""A detached run's contract between the CLI and its conductor (simulator/detached/conductor.py): the plan the
chart renders into the release's spec ConfigMap (runs.json), and what the conductor keeps for
`python run.py attach`: the status (status.json of the release's reports ConfigMap) and each finished
run's report, gzipped, in that run's own spec ConfigMap (binaryData report.json.gz: each run has a
ConfigMap's 1 MiB to itself)."""

from __future__ import annotations

import base64
import gzip
from typing import Any, Literal

from pydantic import BaseModel, Field

from iotdb_bench.simulator.report import RunReport

STATUS_KEY = "status.json"
REPORT_KEY = "report.json.gz"


def packed(report: RunReport) -> str:
    """A report as a ConfigMap's binaryData holds it (a report of a few hundred kB gzips to a tenth)."""
    return base64.b64encode(gzip.compress(report.model_dump_json().encode(), mtime=0)).decode()


def unpacked(data: str) -> RunReport:
    return RunReport.model_validate_json(gzip.decompress(base64.b64decode(data)))


class PlannedRun(BaseModel):
    run_id: str = Field(alias="runId")
    collector_job: str = Field(alias="collectorJob")
    worker_job: str = Field(alias="workerJob")
    spec_config_map: str = Field(alias="specConfigMap")
    collector_url: str = Field(alias="collectorUrl")
    record: dict[str, Any] = Field(default_factory=dict, description="the CLI's record of the run (label, worker count, ...)")


class Plan(BaseModel):
    namespace: str
    reports: str = Field(description="the ConfigMap of the status (status.json)")
    run_timeout_s: float = Field(alias="runTimeoutSeconds", description="--timeout: seconds one run may take")
    runs: list[PlannedRun]


class DetachedStatus(BaseModel):
    state: Literal["starting", "running", "done", "failed"] = "starting"
    total: int = 0
    done: int = Field(0, description="runs finished, their reports kept")
    current: int | None = Field(None, description="index of the run going on")
    label: str = ""
    phase: str = Field("", description="the collector's phase of the run going on")
    events: int = 0
    expected_events: int = 0
    error: str | None = None
    updated: float = Field(0.0, description="epoch seconds of the conductor's last word")
