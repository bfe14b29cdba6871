"""Live progress of the current run, fed by the collector's status (about four times a second)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from cli.runner import PlannedRun
from simulator.protocol import Status


class RunProgress:
    def __init__(self, console: Console):
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[phase]}"),
            TimeElapsedColumn(), console=console, transient=False, refresh_per_second=4,
        )
        self.task: TaskID | None = None

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def start(self, planned: PlannedRun):
        """Add a bar for a run that is starting; returns the callback that updates it."""
        if self.task is not None:
            self.progress.stop_task(self.task)
        expected = planned.spec.num_inserts * planned.workers if planned.spec.task == "insert" else planned.workers
        task = self.task = self.progress.add_task(planned.label, total=expected, phase="starting")

        def on_status(status: Status) -> None:
            if status.phase == "waiting" and status.expected_prefill:
                phase = f"prefill {status.prefilled:,}/{status.expected_prefill:,}"
            elif status.phase == "waiting":  # many workers (pods) can take a while to come up
                phase = f"waiting: {status.ready:,}/{status.workers:,} workers ready"
            elif status.phase == "running" and status.finished:
                phase = f"running: {status.finished:,}/{status.workers:,} workers done"
            else:
                phase = status.phase
            done = status.events if planned.spec.task == "insert" else status.finished
            self.progress.update(task, completed=done, phase=phase)

        return on_status
