"""A detached run's contract between the CLI and its conductor (simulator/detached/conductor.py): the plan the
chart renders into the release's spec ConfigMap (runs.json), and what the conductor keeps for
`python run.py attach`: the status (status.json of the release's reports ConfigMap) and each finished
run's report, gzipped, in that run's own spec ConfigMap (binaryData report.json.gz) or, when it is
larger than a part (a ConfigMap holds at most 1 MiB), in parts of PART_BYTES: ConfigMaps named
`<spec ConfigMap>-report-<i>` (binaryData part), owned by the spec ConfigMap so that Kubernetes removes
them with it, and the spec ConfigMap's data says how many (report.parts) and their digest (report.sha256)."""

from __future__ import annotations

import base64
import gzip
import hashlib
from typing import Any, Literal

from pydantic import BaseModel, Field

from iotdb_bench.simulator.report import RunReport

STATUS_KEY = "status.json"
REPORT_KEY = "report.json.gz"
PARTS_KEY, DIGEST_KEY, PART_KEY = "report.parts", "report.sha256", "part"
# The gzipped bytes of a report one ConfigMap holds: well inside the 1 MiB a ConfigMap may hold, and
# its request (base64, a third larger) inside the API server's and etcd's 1.5 MiB.
PART_BYTES = 512 * 1024


def gzipped(report: RunReport) -> bytes:
    """A report as the conductor keeps it (a report gzips to a tenth or a third of its JSON)."""
    return gzip.compress(report.model_dump_json().encode(), mtime=0)


def packed(report: RunReport) -> str:
    """A report as a ConfigMap's binaryData holds it (base64 of the gzipped JSON)."""
    return base64.b64encode(gzipped(report)).decode()


def unpacked(data: str) -> RunReport:
    return RunReport.model_validate_json(gzip.decompress(base64.b64decode(data)))


def split(data: bytes, size: int = PART_BYTES) -> list[bytes]:
    return [data[start:start + size] for start in range(0, len(data), size)]


def part_name(spec_config_map: str, index: int) -> str:
    return f"{spec_config_map}-report-{index}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class PartsProblem(Exception):
    """A report kept in parts that do not add up to it (a part missing or changed)."""


def joined(parts: list[str], expected_digest: str) -> RunReport:
    """The report from its parts (base64 each, in order), checked against the digest kept with them."""
    data = b"".join(base64.b64decode(part) for part in parts)
    if digest(data) != expected_digest:
        raise PartsProblem(f"its {len(parts)} parts do not add up to the report kept (sha256 {digest(data)[:12]}..., expected {expected_digest[:12]}...)")
    return RunReport.model_validate_json(gzip.decompress(data))


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
