"""Where a run that continues the workers' event streams starts: after the events the runs before it
stored. Shared by the CLI's runner and the conductor of a detached run."""

from __future__ import annotations

import math

from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec


def events_per_worker(spec: RunSpec) -> int:
    """How far a count-bounded run moves every worker's stream: the most events one worker inserts
    (prefill share and timed phase), or for a TSBS shape the steps its hosts write."""
    if spec.tsbs:
        return spec.tsbs_steps
    return spec.num_inserts + math.ceil(spec.prefill / spec.workers)


def continue_after(continue_at: int, spec: RunSpec, report: RunReport) -> int:
    """The stream position the next continuing run starts at, after `spec`'s run made `report`: only the
    workers know where that is after a --duration run (or one with late events)."""
    ends = [worker.stream_end for worker in report.workers if worker.stream_end is not None]
    return max([continue_at, *ends]) if ends else spec.stream_offset + events_per_worker(spec)
