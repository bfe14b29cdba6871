"""Live progress of the current run, fed by the collector's status.

The display is redrawn when a status arrives, at most every REDRAW_S (and at once when the run's phase
changes), never on a timer of its own: a live display must cost the run nothing per event, and
rich's own refresh thread redrew four times a second whether anything had changed or not.

A run of a number of events shows events done of all; a --duration run shows seconds of its timed
phase gone by, with the events inserted so far beside them; a scan the devices scanned of all, a query
run its executions done of all. Then the time: the run's so far, the time it has left at its mean rate
(its prefill's, while it prefills) and, with more runs or steps to follow, the whole invocation's
(cli/run/time_left.py). While the timed phase runs, the line also shows the current rate (events over
the last two seconds of statuses) and the p99 latency of the workers' last progress interval (the
highest of the running workers'), as `pgbench -P` does."""

from __future__ import annotations

import time
from collections import deque

from rich.console import Console
from rich.progress import Progress, ProgressColumn, Task, TaskID
from rich.text import Text

from iotdb_bench.cli.run.platforms import Notice
from iotdb_bench.cli.run.runner import PlannedRun
from iotdb_bench.cli.run.time_left import InvocationTime, RunTime
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.workload import shapes

REDRAW_S = 0.5
BAR_WIDTH = 16


class RunLine(ProgressColumn):
    """The whole line as one text, laid out for the terminal's width: the label, the count and the time
    whole; when the line is too long the bar shrinks, then goes, and then the phase and its live figures
    are cut from their end."""

    def __init__(self, console: Console):
        super().__init__()
        self.console = console

    def render(self, task: Task) -> Text:
        fields = task.fields
        kept = f"{task.description}  {fields['count']}  {fields['time']}"
        bar_width = max(0, min(BAR_WIDTH, self.console.width - len(kept) - len(fields["phase"]) - 5))
        done = round(bar_width * task.percentage / 100) if task.total else 0
        line = Text(task.description + " ")
        if bar_width:
            line.append("━" * done, style="bar.finished" if task.finished else "bar.complete")
            # without colours the rest of the bar is blank, as rich's own bar draws it
            line.append(("━" if self.console.color_system else " ") * (bar_width - done), style="bar.back")
            line.append(" ")
        line.append(f" {fields['count']}  {fields['time']}  {fields['phase']}")
        line.truncate(self.console.width - 1, overflow="ellipsis")
        return line


class RunProgress:
    """`one_line`: every run updates the same line (--find-max-rate's many short runs), the step's
    number in front of its label."""

    def __init__(self, console: Console, one_line: bool = False, clock=time.monotonic, planned_runs: int | None = None):
        """`planned_runs`: the invocation's runs (steps), for the time it has left in all; None: not known."""
        self.one_line, self.started = one_line, 0
        self.clock = clock
        self.progress = Progress(RunLine(console), console=console, transient=False, auto_refresh=False)
        self._drawn_at, self._drawn_phase = 0.0, ""
        self.task: TaskID | None = None
        self.invocation = InvocationTime(planned_runs)
        self._run_began: float | None = None

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def start(self, planned: PlannedRun):
        """Add a bar for a run that is starting; returns the callback that updates it."""
        spec = planned.spec
        self.started += 1
        now = self.clock()
        self.invocation.run_started(None if self._run_began is None else now - self._run_began)
        self._run_began = now
        run_time = RunTime(spec, now)
        by_time = spec.task == "insert" and spec.duration_s > 0
        if by_time:
            expected, unit = spec.duration_s, "s"
        else:
            expected, unit = (shapes.timed_events(spec), "events") if spec.task == "insert" else (planned.workers, "workers")
        fields = {"phase": "starting", "count": count_text(0, expected, unit), "time": self.invocation.text(0.0, None)}
        if self.one_line and self.task is not None:
            task = self.task
            self.progress.reset(task, total=expected, description=f"step {self.started}: {planned.label}", **fields)
        else:
            if self.task is not None:
                self.progress.stop_task(self.task)
            label = f"step {self.started}: {planned.label}" if self.one_line else planned.label
            task = self.task = self.progress.add_task(label, total=expected, **fields)
        current = CurrentRate()

        def on_status(status: Status | Notice) -> None:
            if isinstance(status, Notice):  # the CLI's own doing (reconnecting, cleaning up): the figures stay as they were
                self.progress.update(task, phase=status.text)
                self.progress.refresh()  # drawn now: nothing else redraws while the collector is out of reach
                return
            live = live_figures(current.add(self.clock(), status.events), status.interval_p99_ms) if status.phase == "running" else ""
            if status.phase == "waiting" and status.expected_prefill:
                phase = f"prefill {_short(status.prefilled)}/{_short(status.expected_prefill)}"
            elif status.phase == "waiting":  # many workers (pods) can take a while to come up
                phase = f"waiting: {status.ready:,}/{status.workers:,} workers ready"
            elif by_time and status.phase == "running":
                phase = f"running, {status.events:,} events" + (f", {status.finished:,}/{status.workers:,} workers done" if status.finished else "")
                phase += achieved_against_target(spec.rate, status) + live
            elif status.phase == "running" and status.finished:
                phase = f"running: {status.finished:,}/{status.workers:,} workers done" + live
            elif status.phase == "running" and spec.rate:
                phase = "running" + achieved_against_target(spec.rate, status) + live
            else:
                phase = status.phase + live
            total, shown_unit = expected, unit
            if by_time:
                done = 0.0 if status.start_at is None else min(max(time.time() - status.start_at, 0.0), spec.duration_s)
                done = spec.duration_s if status.phase == "done" else done
            elif spec.task == "insert":
                done = status.events
            elif status.work_total:  # devices scanned or query executions, once the workers have said how many
                done, total, shown_unit = status.work_done, status.work_total, "devices" if spec.task == "scan" else "executions"
            else:
                done = status.finished
            at = self.clock()
            elapsed = at - run_time.started
            time_text = self.invocation.text(elapsed, run_time.left(status, at))
            self.progress.update(task, completed=done, total=total, phase=phase, count=count_text(done, total, shown_unit), time=time_text)
            self._redraw(status.phase)

        return on_status

    def _redraw(self, phase: str) -> None:
        now = time.monotonic()
        if phase != self._drawn_phase or now - self._drawn_at >= REDRAW_S:
            self.progress.refresh()
            self._drawn_at, self._drawn_phase = now, phase


def count_text(done: float, total: float, unit: str) -> str:
    """Done of all, short enough for a narrow terminal: 40.3M/100M events, 734/1,000 workers."""
    return f"{_short(done)}/{_short(total)} {unit}"


def _short(number: float) -> str:
    if number < 1_000_000:
        return f"{number:,.0f}"
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if number >= size:
            return f"{number / size:.3g}{suffix}"
    return f"{number:,.0f}"


def achieved_against_target(target: float, status: Status, now: float | None = None) -> str:
    """Open-loop runs: the rate achieved so far (events since the common start) against the target."""
    if not target or status.start_at is None:
        return ""
    elapsed = (time.time() if now is None else now) - status.start_at
    if elapsed < 0.5:  # too early for a rate worth reading
        return f", target {target:,.0f}/s"
    return f", {status.events / elapsed:,.0f}/s of {target:,.0f}/s"


class CurrentRate:
    """Events per second over the last WINDOW_S of statuses: each worker reports its count about once a
    second, so a shorter window would show their reports' rhythm, not the rate."""

    WINDOW_S = 2.0
    MIN_SPAN_S = 0.5

    def __init__(self) -> None:
        self.readings: deque[tuple[float, int]] = deque()

    def add(self, at: float, events: int) -> float | None:
        """The rate with this reading (monotonic seconds, events done so far); None until it means something."""
        self.readings.append((at, events))
        while len(self.readings) > 2 and at - self.readings[1][0] >= self.WINDOW_S:
            self.readings.popleft()
        first_at, first_events = self.readings[0]
        return (events - first_events) / (at - first_at) if at - first_at >= self.MIN_SPAN_S else None


def live_figures(rate: float | None, interval_p99_ms: float | None) -> str:
    """The live part of the progress line: ", now 12,345/s, p99 1.40 ms"."""
    parts = ([f"now {rate:,.0f}/s"] if rate is not None else []) + ([f"p99 {interval_p99_ms:.3g} ms"] if interval_p99_ms is not None else [])
    return "".join(f", {part}" for part in parts)
