"""Live progress of the current run, fed by the collector's status (about four times a second).

A run of a number of events shows events done of all; a --duration run shows seconds of its timed
phase gone by, with the events inserted so far beside them."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from iotdb_bench.cli.run.runner import PlannedRun
from iotdb_bench.simulator.protocol import Status


class RunProgress:
    """`one_line`: every run updates the same line (--find-max-rate's many short runs), the step's
    number in front of its label."""

    def __init__(self, console: Console, one_line: bool = False):
        self.one_line, self.started = one_line, 0
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[unit]}"),
            TextColumn("{task.fields[phase]}"), TimeElapsedColumn(), console=console, transient=False, refresh_per_second=4,
        )
        self.task: TaskID | None = None

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def start(self, planned: PlannedRun):
        """Add a bar for a run that is starting; returns the callback that updates it."""
        spec = planned.spec
        self.started += 1
        by_time = spec.task == "insert" and spec.duration_s > 0
        if by_time:
            expected, unit = spec.duration_s, "s"
        else:
            expected, unit = (spec.num_inserts * planned.workers, "events") if spec.task == "insert" else (planned.workers, "workers")
        if self.one_line and self.task is not None:
            task = self.task
            self.progress.reset(task, total=expected, description=f"step {self.started}: {planned.label}", phase="starting", unit=unit)
        else:
            if self.task is not None:
                self.progress.stop_task(self.task)
            label = f"step {self.started}: {planned.label}" if self.one_line else planned.label
            task = self.task = self.progress.add_task(label, total=expected, phase="starting", unit=unit)

        def on_status(status: Status) -> None:
            if status.phase == "waiting" and status.expected_prefill:
                phase = f"prefill {status.prefilled:,}/{status.expected_prefill:,}"
            elif status.phase == "waiting":  # many workers (pods) can take a while to come up
                phase = f"waiting: {status.ready:,}/{status.workers:,} workers ready"
            elif by_time and status.phase == "running":
                phase = f"running, {status.events:,} events" + (f", {status.finished:,}/{status.workers:,} workers done" if status.finished else "")
                phase += achieved_against_target(spec.rate, status)
            elif status.phase == "running" and status.finished:
                phase = f"running: {status.finished:,}/{status.workers:,} workers done"
            elif status.phase == "running" and spec.rate:
                phase = "running" + achieved_against_target(spec.rate, status)
            else:
                phase = status.phase
            if by_time:
                done = 0.0 if status.start_at is None else min(max(time.time() - status.start_at, 0.0), spec.duration_s)
                done = spec.duration_s if status.phase == "done" else done
            else:
                done = status.events if spec.task == "insert" else status.finished
            self.progress.update(task, completed=done, phase=phase)

        return on_status


def achieved_against_target(target: float, status: Status, now: float | None = None) -> str:
    """Open-loop runs: the rate achieved so far (events since the common start) against the target."""
    if not target or status.start_at is None:
        return ""
    elapsed = (time.time() if now is None else now) - status.start_at
    if elapsed < 0.5:  # too early for a rate worth reading
        return f", target {target:,.0f}/s"
    return f", {status.events / elapsed:,.0f}/s of {target:,.0f}/s"
