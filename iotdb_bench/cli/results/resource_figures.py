"""Figures derived from what a run cost (simulator/measurement/resources.py), per run and across runs.

- database CPU seconds per million events, the database's mean cores, its peak and mean memory;
- bytes written to storage per event; storage bytes per event stored, and the growth per event
  inserted (data size after - before, over the events of the run);
- client CPU = the workers' own CPU (their rusage) + the collector's + the CLI's, and the client
  share = client / (client + database);
- the client's share of the machine = client CPU / (the cores it ran on x the timed phase), local
  runs (every process counted once: workers, collector, CLI);
- "client may be the bottleneck" when the workers used more CPU per event than the database, when a
  worker kept its core (nearly) saturated, when the client took most of the machine's cores, or when
  the client and the database share a machine that was (nearly) saturated and the client took a
  share of it that matters (then its CPU is taken from the database): then the rate may be the
  client's, not the database's. Not judged for an embedded database (the workers' CPU is the
  database's) or when the database's CPU was not measured (unless a worker or the machine was saturated).
- a run whose CPU figures cannot be true (the processes measured on one machine used more CPU time
  than its cores had in the timed phase: their shares of it add to over 100%) keeps none of them:
  `impossible_cpu` says why, and the row that holds it is flagged.
"""

from __future__ import annotations

import statistics

from pydantic import BaseModel, Field

from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.measurement.resources import CPU, MEMORY, WRITTEN, ResourceUsage
from iotdb_bench.simulator.measurement.stats import InsertRunFigures

# A worker whose CPU seconds reach this share of its timed phase had no spare CPU: it may have held
# the rate back (a worker's loop runs in one thread).
SATURATED_CORE_SHARE = 0.9
# The client's share of the machine's cores above which it matters when the database runs on the same
# cores and the machine was (nearly) saturated: the rate lost is about the client's share of the CPU.
CLIENT_MACHINE_SHARE = 0.2
BUSY_MACHINE_SHARE = 0.8
# Readings come about once a second (and at once at both edges of the timed phase) and are
# interpolated to the edges: a small excess over the machine's CPU time is the interpolation's.
# Beyond it a figure cannot be true (something was counted twice).
CPU_TOLERANCE = 0.05
CPU_FIGURES = ("db_cpu_s", "db_cores", "db_cpu_s_per_million", "workers_cpu_s", "collector_cpu_s", "cli_cpu_s", "client_cpu_s",
               "client_cpu_s_per_million", "client_share", "worker_peak_core_share")


class ResourceFigures(BaseModel):
    """One run's, or the mean over the runs of a row (the flag: any run)."""

    db_cpu_s: float | None = None
    db_cores: float | None = Field(default=None, description="database CPU seconds / timed phase seconds")
    db_cpu_s_per_million: float | None = Field(default=None, description="database CPU seconds per million events")
    db_memory_mean_bytes: float | None = None
    db_memory_peak_bytes: float | None = None
    written_bytes_per_event: float | None = None
    storage_bytes_per_event: float | None = Field(default=None, description="data size after the run / events stored")
    storage_growth_per_event: float | None = Field(default=None, description="(data size after - before) / events inserted by the run")
    workers_cpu_s: float | None = None
    collector_cpu_s: float | None = None
    cli_cpu_s: float | None = None
    client_cpu_s: float | None = Field(default=None, description="workers + collector + CLI")
    client_cpu_s_per_million: float | None = None
    client_share: float | None = Field(default=None, description="client CPU / (client + database CPU)")
    worker_peak_core_share: float | None = Field(default=None, description="the busiest worker's CPU seconds / its timed phase")
    client_machine_share: float | None = Field(default=None, description=(
        "client CPU / (the cores it could use x timed phase): local runs, every process / the machine's cores; Kubernetes, "
        "the worker and collector pods / their CPU limits or their nodes' allocatable CPUs"))
    machine_busy_share: float | None = Field(default=None, description="(client + database CPU) / (cores x timed phase), when they share the cores")
    client_cores: float | None = None
    client_cores_of: str | None = Field(default=None, description="'machine' or 'pods': what client_cores counts (simulator/measurement/resources.py)")
    database_in_workers: bool = False
    client_may_be_bottleneck: bool | None = Field(default=None, description="None: not judged")
    bottleneck_reason: str | None = None
    not_measured: dict[str, str] = Field(default_factory=dict, description="database figure -> why it is missing")
    impossible_cpu: str | None = Field(default=None, description="why the run's CPU figures were refused (they cannot be true); over runs: the first")


def run_figures(report: RunReport) -> ResourceFigures | None:
    """The derived figures of one insert run; None for a run without insert figures."""
    figures = report.figures
    if figures is None:
        return None
    events, duration = figures.events, figures.duration_s
    out = ResourceFigures()
    usage = report.resources
    if usage is not None:
        database = usage.database
        out.database_in_workers = usage.database_in_workers
        out.not_measured = {figure: database.why_not(figure) for figure in (CPU, MEMORY, WRITTEN)
                            if figure in database.not_measured}
        out.db_cpu_s = database.cpu_s
        out.db_memory_mean_bytes, out.db_memory_peak_bytes = database.memory_mean_bytes, database.memory_peak_bytes
        if database.cpu_s is not None:
            out.db_cores = database.cpu_s / duration if duration > 0 else None
            out.db_cpu_s_per_million = _per_million(database.cpu_s, events)
        if database.written_bytes is not None and events:
            out.written_bytes_per_event = database.written_bytes / events
        out.cli_cpu_s = usage.cli.cpu_s if usage.cli else None
        sampled_collector = usage.collector.cpu_s if usage.collector else None
        out.collector_cpu_s = report.collector_cpu_s if report.collector_cpu_s is not None else sampled_collector
    else:
        out.not_measured = dict.fromkeys((CPU, MEMORY, WRITTEN), "not sampled (results of an earlier version, or the platform does not sample)")
        out.collector_cpu_s = report.collector_cpu_s
    _storage(out, report, figures)
    _client(out, report, figures, usage)
    reason = impossible_cpu(out, usage)
    if reason is not None:
        for name in CPU_FIGURES:
            setattr(out, name, None)
        out.impossible_cpu = reason
        out.not_measured[CPU] = f"refused: {reason}"
    _flag(out)
    return out


def impossible_cpu(out: ResourceFigures, usage: ResourceUsage | None) -> str | None:
    """Why the run's CPU figures cannot be true, or None: the client and the database, measured on
    one machine, used more than its cores' time in the timed phase."""
    if usage is None or usage.window_s <= 0:
        return None  # an older results file: nothing to hold them to
    if not usage.cores:  # several machines (Kubernetes): the client's pods against what they could use
        if usage.client_cores_of != "pods" or not usage.client_cores or out.workers_cpu_s is None:
            return None
        share = _on_client_cores(out) / (usage.client_cores * usage.window_s)
        if share <= 1 + CPU_TOLERANCE:
            return None
        return f"the client's pods used {share:.0%} of the {usage.client_cores:g} cores they could use in the {usage.window_s:.2f} s timed phase"
    capacity = usage.cores * usage.window_s
    parts = {"client": out.client_cpu_s, "database": None if out.database_in_workers else out.db_cpu_s}
    shares = {name: cpu / capacity for name, cpu in parts.items() if cpu is not None}
    if sum(shares.values()) <= 1 + CPU_TOLERANCE:
        return None
    named = " + ".join(f"{name} {share:.0%}" for name, share in shares.items())
    return f"{named} of {usage.cores} cores' time in the {usage.window_s:.2f} s timed phase: over 100%"


def _storage(out: ResourceFigures, report: RunReport, figures: InsertRunFigures) -> None:
    server, verification = report.server, report.verification
    if server is None or server.storage_bytes is None:
        return
    if verification is not None and verification.counted:
        out.storage_bytes_per_event = server.storage_bytes / verification.counted
    # A store that shrank during the run (its background merges dropped data deleted before it) says
    # nothing of what the run's events take: no growth figure rather than a negative one.
    if server.storage_bytes_at_start is not None and figures.events and server.storage_bytes >= server.storage_bytes_at_start:
        out.storage_growth_per_event = (server.storage_bytes - server.storage_bytes_at_start) / figures.events


def _client(out: ResourceFigures, report: RunReport, figures: InsertRunFigures, usage: ResourceUsage | None) -> None:
    own = [worker.cpu_s for worker in report.workers if worker.cpu_s is not None]
    if own and len(own) == len(report.workers):
        out.workers_cpu_s = sum(own)
        shares = [w.cpu_s / (w.finished_at - w.started_at) for w in report.workers if w.cpu_s is not None and w.finished_at > w.started_at]
        out.worker_peak_core_share = max(shares) if shares else None
    elif usage is not None and usage.workers is not None:
        out.workers_cpu_s = usage.workers.cpu_s
    parts = [out.workers_cpu_s, out.collector_cpu_s, out.cli_cpu_s]
    if out.workers_cpu_s is not None:
        out.client_cpu_s = sum(part for part in parts if part is not None)
        out.client_cpu_s_per_million = _per_million(out.client_cpu_s, figures.events)
        if out.db_cpu_s is not None and not out.database_in_workers and out.client_cpu_s + out.db_cpu_s > 0:
            out.client_share = out.client_cpu_s / (out.client_cpu_s + out.db_cpu_s)
        duration = figures.duration_s
        if usage is not None and usage.client_cores and duration > 0:
            out.client_cores, out.client_cores_of = usage.client_cores, usage.client_cores_of
            capacity = usage.client_cores * duration
            out.client_machine_share = min(_on_client_cores(out) / capacity, 1.0)
            if usage.database_shares_cores and out.db_cpu_s is not None:
                out.machine_busy_share = min((_on_client_cores(out) + out.db_cpu_s) / capacity, 1.0)


def _on_client_cores(out: ResourceFigures) -> float:
    """The client CPU spent on the cores client_cores counts: on Kubernetes the CLI runs elsewhere."""
    if out.client_cores_of == "pods":
        return sum(part for part in (out.workers_cpu_s, out.collector_cpu_s) if part is not None)
    return out.client_cpu_s or 0.0


def capacity_words(out: ResourceFigures) -> str:
    if out.client_cores_of == "pods":
        return f"the {out.client_cores:g} cores its pods could use"
    return f"the machine's {out.client_cores:g} cores"


def _flag(out: ResourceFigures) -> None:
    if out.database_in_workers:
        return  # the workers' CPU is the database's: nothing to set it against
    reasons = []
    if out.worker_peak_core_share is not None and out.worker_peak_core_share >= SATURATED_CORE_SHARE:
        reasons.append(f"a worker used {out.worker_peak_core_share:.0%} of a core")
    share, cores = out.client_machine_share, out.client_cores
    if share is not None and share >= SATURATED_CORE_SHARE:
        reasons.append(f"the client used {share:.0%} of {capacity_words(out)}")
    elif share is not None and out.machine_busy_share is not None and share >= CLIENT_MACHINE_SHARE and out.machine_busy_share >= BUSY_MACHINE_SHARE:
        reasons.append(f"the client used {share:.0%} of the {cores:g} cores it shares with the database, which together "
                       f"used {out.machine_busy_share:.0%} of them: the client's CPU was taken from the database")
    if out.workers_cpu_s is not None and out.db_cpu_s is not None and out.workers_cpu_s > out.db_cpu_s:
        reasons.append(f"the workers used more CPU ({out.workers_cpu_s:.2f} s) than the database ({out.db_cpu_s:.2f} s)")
    if reasons:
        out.client_may_be_bottleneck, out.bottleneck_reason = True, "; ".join(reasons)
    elif (out.db_cpu_s is not None or share is not None) and out.workers_cpu_s is not None:
        out.client_may_be_bottleneck = False


def across_runs(runs: list[ResourceFigures | None]) -> ResourceFigures | None:
    """The mean of each figure over the runs that have it; flagged when any run is."""
    present = [run for run in runs if run is not None]
    if not present:
        return None
    out = ResourceFigures(database_in_workers=any(run.database_in_workers for run in present))
    for name, field in ResourceFigures.model_fields.items():
        if field.annotation in (float | None,):
            values = [getattr(run, name) for run in present if getattr(run, name) is not None]
            setattr(out, name, statistics.fmean(values) if values else None)
    flagged = [run for run in present if run.client_may_be_bottleneck]
    judged = [run for run in present if run.client_may_be_bottleneck is not None]
    if flagged:
        out.client_may_be_bottleneck, out.bottleneck_reason = True, flagged[0].bottleneck_reason
    elif judged:
        out.client_may_be_bottleneck = False
    out.impossible_cpu = next((run.impossible_cpu for run in present if run.impossible_cpu), None)
    out.client_cores_of = next((run.client_cores_of for run in present if run.client_cores_of), None)
    for run in present:
        for figure, reason in run.not_measured.items():
            out.not_measured.setdefault(figure, reason)
    return out


def _per_million(seconds: float, events: int) -> float | None:
    return seconds / events * 1_000_000 if events else None
