"""How long the current run and the whole invocation have left, for the progress line: estimated from
the rate since each stretch of work began (its mean, not the last seconds': a run of hours whose rate
wobbles keeps a steady estimate), or exact where the run's length is a time (--duration)."""

from __future__ import annotations

from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.spec import RunSpec

# An estimate needs this long of a stretch behind it to mean something.
LEAST_MEASURED_S = 2.0


def clock_text(seconds: float) -> str:
    """Seconds as m:ss, or h:mm:ss from an hour on."""
    whole = max(round(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Stretch:
    """One stretch of work of a known size (the prefill, the timed events, the devices to scan, the
    query executions), measured from the first time it was seen under way."""

    def __init__(self) -> None:
        self.begun_at: float | None = None
        self.done_then = 0

    def left(self, now: float, done: int, total: int) -> float | None:
        """Seconds left at the mean rate so far; None until that means something."""
        if total <= 0:
            return None
        if done >= total:
            return 0.0
        if self.begun_at is None:
            self.begun_at, self.done_then = now, done
            return None
        measured, progress = now - self.begun_at, done - self.done_then
        if measured < LEAST_MEASURED_S or progress <= 0:
            return None
        return (total - done) * measured / progress


class RunTime:
    """The elapsed and remaining time of one run, from the statuses as they come (`now`: the CLI's
    monotonic clock)."""

    def __init__(self, spec: RunSpec, now: float):
        self.spec, self.started = spec, now
        self.prefill, self.timed = Stretch(), Stretch()
        self.running_since: float | None = None

    def left(self, status: Status, now: float) -> float | None:
        """Seconds the run has left, where the rate so far says it; None where nothing says it yet."""
        spec = self.spec
        if status.phase == "waiting" and status.expected_prefill:
            return self.prefill.left(now, status.prefilled, status.expected_prefill)
        if status.phase != "running":
            return 0.0 if status.phase == "done" else None
        self.running_since = self.running_since or now
        if spec.task == "insert" and spec.duration_s:
            return max(spec.duration_s - (now - self.running_since), 0.0)
        if spec.task == "insert":
            return self.timed.left(now, status.events, status.expected_events)
        return self.timed.left(now, status.work_done, status.work_total)


class InvocationTime:
    """The whole invocation's time left: the current run's, and the runs after it at the mean length of
    those finished (or, before any has, the current one's estimated length)."""

    def __init__(self, planned_runs: int | None):
        self.planned_runs = planned_runs
        self.finished_s: list[float] = []
        self.started = 0

    def run_started(self, previous_lasted_s: float | None) -> None:
        if previous_lasted_s is not None:
            self.finished_s.append(previous_lasted_s)
        self.started += 1

    def left(self, run_elapsed_s: float, run_left_s: float | None) -> float | None:
        after = (self.planned_runs or 0) - self.started
        if after <= 0 or run_left_s is None:
            return None
        typical = sum(self.finished_s) / len(self.finished_s) if self.finished_s else run_elapsed_s + run_left_s
        return run_left_s + after * typical

    def text(self, run_elapsed_s: float, run_left_s: float | None) -> str:
        """The progress line's time: "1:02, ~1:33 left" and, with runs after this one, "(all ~25:40)"."""
        text = clock_text(run_elapsed_s)
        if run_left_s is not None:
            text += f", ~{clock_text(run_left_s)} left"
        total = self.left(run_elapsed_s, run_left_s)
        if total is not None:
            text += f" (all ~{clock_text(total)})"
        return text
