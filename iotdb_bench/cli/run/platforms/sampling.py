"""What the platforms' resource samplers share: readings at the edges of the timed phase, and the
window the figures cover."""

from __future__ import annotations

from typing import Protocol

from iotdb_bench.cli.run.platforms import Notice, StatusCallback
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.report import RunReport


class Sampler(Protocol):
    def mark(self, edge: str) -> None:
        """Read now: the timed phase's `edge` ("start" or "end") was just seen."""


def marking(on_status: StatusCallback, sampler: Sampler, workers: int) -> StatusCallback:
    """Passes the statuses on, and has the sampler read at once when the timed phase starts and when
    the last worker has finished, so the window's edges fall close to readings."""
    seen: set[str] = set()

    def forward(status: Status | Notice) -> None:
        if isinstance(status, Notice):
            on_status(status)
            return
        for edge, reached in (("start", status.phase == "running"), ("end", status.finished >= workers)):
            if reached and edge not in seen:
                seen.add(edge)
                sampler.mark(edge)
        on_status(status)

    return forward


def timed_window(report: RunReport) -> tuple[float, float] | None:
    """(common start, last worker's end) of a finished run, epoch seconds."""
    if report.start_at is None:
        return None
    if report.figures is not None:
        return report.start_at, report.start_at + report.figures.duration_s
    if report.workers:
        return report.start_at, max(worker.finished_at for worker in report.workers)
    return None
