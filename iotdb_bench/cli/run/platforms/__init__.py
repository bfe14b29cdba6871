"""Where a run's processes execute. Every platform runs one RunSpec and returns the collector's report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec


@dataclass(frozen=True)
class Notice:
    """What the CLI itself is doing about the run, for the progress line (e.g. reconnecting to the
    collector, waiting for the API server to remove the release)."""

    text: str


StatusCallback = Callable[[Status | Notice], None]


class Platform(Protocol):
    def run(self, spec: RunSpec, timeout: float, on_status: StatusCallback, log_dir: Path) -> RunReport:
        """Start the collector and the workers, follow the run, return the report; always clean up."""

    def close(self) -> None:
        """After the invocation's last run: release what the platform keeps between runs."""
