"""What a run cost the database and the client: CPU, memory, disk writes, as the platforms sample them.

The platform that owns a run's lifetime samples beside the run, about once a second (locally the
database's processes and the tool's own; on Kubernetes the pods, through the API server), and
attaches these figures to the run's report. Every figure covers the timed phase (common start to
the last worker's end). A figure that could not be read is None, with the reason in `not_measured`:
never a 0 that was not measured.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from pydantic import BaseModel, Field, PrivateAttr

# Names of the figures of a group, as `not_measured` keys them.
CPU, MEMORY, WRITTEN = "cpu", "memory", "written"
# Readings a series keeps. At one a second a series would grow for as long as the run lasts (50
# workers for an hour: 190,000 readings, 100 MB in the CLI); beyond this, every other reading is merged
# into the next (its counters are cumulative: the next one's stand; memory: the higher of the two), so
# a long run keeps readings about every 2, 4, 8... s, and the readings at the timed phase's edges.
MAX_SAMPLES = 512
# Readings per series results.json keeps (the plots'; readings.csv beside it has every one kept).
DISPLAY_SAMPLES = 120


class Sample(BaseModel):
    """One reading of one series. Counters are cumulative from an arbitrary origin (only their
    differences mean something); memory is the value at that moment."""

    at: float = Field(description="epoch seconds of the reading (the kubelet's own time for pods)")
    cpu_s: float | None = None
    memory_bytes: int | None = None
    written_bytes: int | None = None


class Series(BaseModel):
    name: str = Field(description="what was read: a process tree, a pod's container")
    samples: list[Sample] = Field(default_factory=list)
    _pinned: set[float] = PrivateAttr(default_factory=set)  # readings never merged away: the timed phase's edges

    def add(self, sample: Sample, pinned: bool = False) -> None:
        """One more reading; `pinned`: taken at an edge of the timed phase, kept whatever the series' length."""
        self.samples.append(sample)
        if pinned:
            self._pinned.add(sample.at)
        if len(self.samples) > MAX_SAMPLES:
            self.samples = thinned(self.samples, self._pinned)


def fitted(samples: list[Sample], most: int) -> list[Sample]:
    """The readings thinned (`thinned`) until at most `most` are left."""
    while len(samples) > most:
        samples = thinned(samples, set())
    return samples


def thinned(samples: list[Sample], pinned: set[float]) -> list[Sample]:
    """Every other reading merged into the one after it, but the first, the last and the pinned ones:
    cumulative counters are the later reading's, memory the higher of the two (a peak is never lost)."""
    kept: list[Sample] = []
    memory: int | None = None  # of the readings merged away since the last one kept
    last = len(samples) - 1
    for index, sample in enumerate(samples):
        if sample.memory_bytes is not None:
            memory = sample.memory_bytes if memory is None else max(memory, sample.memory_bytes)
        if index % 2 and index != last and sample.at not in pinned:
            continue
        kept.append(sample if memory == sample.memory_bytes else sample.model_copy(update={"memory_bytes": memory}))
        memory = None
    return kept


class ResourceGroup(BaseModel):
    """The processes or pods of one side of the run (the database, the workers, the collector, the
    CLI), summed, over the timed phase."""

    source: str = Field(description="which processes or pods, and how they were read")
    cpu_s: float | None = None
    memory_mean_bytes: float | None = Field(None, description="resident memory, mean over the timed phase")
    memory_peak_bytes: int | None = None
    written_bytes: int | None = Field(None, description="bytes the processes caused to be written to storage")
    not_measured: dict[str, str] = Field(default_factory=dict, description="figure (cpu, memory, written) -> why it is missing")
    series: list[Series] = Field(default_factory=list)

    def why_not(self, figure: str) -> str:
        return self.not_measured.get(figure) or "not read"


class ResourceUsage(BaseModel):
    window_start: float = Field(description="epoch seconds: the common start")
    window_end: float = Field(description="epoch seconds: the last worker's end")
    database: ResourceGroup
    database_in_workers: bool = Field(False, description="an embedded database: its work is inside the worker processes")
    cores: int | None = Field(None, description="CPUs of the one machine every measured process ran on (the local platform); "
                                                "None when they ran on several (Kubernetes)")
    workers: ResourceGroup | None = None
    collector: ResourceGroup | None = None
    cli: ResourceGroup | None = None
    client_cores: float | None = Field(None, description=(
        "the cores the client's processes could use: the machine's CPUs (local platform); on Kubernetes, per node of the "
        "worker and collector pods, their CPU limits when every one there has one, else the node's allocatable CPU; None where unknown"))
    client_cores_of: str | None = Field(None, description="'machine' (local: every process of the client, the CLI's too) or 'pods' "
                                                          "(Kubernetes: the worker and collector pods; the CLI runs elsewhere)")
    client_cores_unknown: str | None = Field(None, description="why client_cores is None where it was looked for")
    database_shares_cores: bool = Field(False, description="the database runs on the same cores as the client (local, not remote)")

    @property
    def window_s(self) -> float:
        return self.window_end - self.window_start


# -- figures over a window, from samples --------------------------------------------------------

def counter_at(samples: Sequence[Sample], field: str, at: float) -> float | None:
    """A cumulative counter at time `at`, interpolated linearly between the readings around it
    (held at the first or last reading outside them)."""
    points = [(s.at, getattr(s, field)) for s in samples if getattr(s, field) is not None]
    if not points:
        return None
    times = [t for t, _ in points]
    index = bisect.bisect_left(times, at)
    if index == 0:
        return float(points[0][1])
    if index == len(points):
        return float(points[-1][1])
    (t0, v0), (t1, v1) = points[index - 1], points[index]
    return v0 + (v1 - v0) * (at - t0) / (t1 - t0) if t1 > t0 else float(v1)


def with_final_cpu(samples: list[Sample], started_at: float, finished_at: float, cpu_s: float | None) -> list[Sample]:
    """A process's CPU over its timed phase as it measured it (its own rusage, `cpu_s` from
    `started_at` to `finished_at`), added as one more reading at its end when the sampler's last
    reading came before that: a worker exits right after it reports, often before the reading at
    the phase's end, and its last moments would otherwise look idle."""
    readings = [sample for sample in samples if sample.cpu_s is not None]
    if cpu_s is None or not readings or readings[-1].at >= finished_at:
        return samples
    at_start = counter_at(readings, "cpu_s", started_at)
    final = max(float(at_start) + cpu_s, float(readings[-1].cpu_s))
    return [*samples, Sample(at=finished_at, cpu_s=final)]


# A series whose readings span less than this share of the window says too little about it (a pod
# whose container ended, and was last read, before most of the window had passed).
MIN_COVERAGE = 0.5


def coverage(samples: Sequence[Sample], field: str, start: float, end: float) -> float:
    """The share of [start, end] that lies between the first and the last reading of `field`."""
    stamps = [s.at for s in samples if getattr(s, field) is not None]
    if len(stamps) < 2 or end <= start:
        return 0.0
    return max(0.0, min(stamps[-1], end) - max(stamps[0], start)) / (end - start)


def counter_delta(series: Sequence[Series], field: str, start: float, end: float) -> float | None:
    """The sum over the series of each counter's growth from `start` to `end`; None without readings
    that span at least half of the window."""
    total, seen = 0.0, False
    for one in series:
        if coverage(one.samples, field, start, end) < MIN_COVERAGE:
            continue
        first, last = counter_at(one.samples, field, start), counter_at(one.samples, field, end)
        if first is not None and last is not None:
            total, seen = total + max(last - first, 0.0), True
    return total if seen else None


def gauge_on_grid(series: Sequence[Series], field: str, times: Sequence[float]) -> list[float | None]:
    """The sum over the series of each one's latest reading at or before each time (its first
    reading before that); None where no series has a reading yet."""
    values: list[float | None] = []
    prepared = []
    for one in series:
        points = [(s.at, getattr(s, field)) for s in one.samples if getattr(s, field) is not None]
        if points:
            prepared.append(([t for t, _ in points], [v for _, v in points]))
    for at in times:
        if not prepared:
            values.append(None)
            continue
        total = 0.0
        for stamps, readings in prepared:
            index = bisect.bisect_right(stamps, at) - 1
            total += readings[max(index, 0)]
        values.append(total)
    return values


def window_grid(start: float, end: float, step: float = 0.5) -> list[float]:
    count = max(int((end - start) / step), 1)
    return [start + (end - start) * i / count for i in range(count + 1)]


def summarise(source: str, series: list[Series], start: float, end: float, not_measured: dict[str, str] | None = None) -> ResourceGroup:
    """A group's figures over [start, end] from its series; figures without readings are None and
    keep the reason given (or 'no readings')."""
    group = ResourceGroup(source=source, series=series, not_measured=dict(not_measured or {}))
    missing = group.not_measured
    group.cpu_s = counter_delta(series, "cpu_s", start, end)
    group.written_bytes = _whole(counter_delta(series, "written_bytes", start, end))
    memory = [value for value in gauge_on_grid(series, "memory_bytes", window_grid(start, end)) if value is not None]
    if memory:
        group.memory_mean_bytes = sum(memory) / len(memory)
        group.memory_peak_bytes = int(max(memory))
    for figure, value in ((CPU, group.cpu_s), (MEMORY, group.memory_peak_bytes), (WRITTEN, group.written_bytes)):
        if value is None:
            missing.setdefault(figure, "no readings spanning the timed phase")
        else:
            missing.pop(figure, None)
    return group


def _whole(value: float | None) -> int | None:
    return None if value is None else round(value)
