"""Where a run that continues the workers' event streams starts: after the events the runs before it
stored. Shared by the CLI's runner and the conductor of a detached run."""

from __future__ import annotations

import math

from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec


def events_per_worker(spec: RunSpec) -> int:
    """The most events one worker of a count-bounded run inserts (prefill share and timed phase)."""
    return spec.num_inserts + math.ceil(spec.prefill / spec.workers)


def continue_after(continue_at: int, spec: RunSpec, report: RunReport) -> int:
    """The stream position the next continuing run starts at, after `spec`'s run made `report`: only the
    workers know where that is after a --duration run (or one with late events)."""
    ends = [worker.stream_end for worker in report.workers if worker.stream_end is not None]
    return max([continue_at, *ends]) if ends else spec.stream_offset + events_per_worker(spec)
