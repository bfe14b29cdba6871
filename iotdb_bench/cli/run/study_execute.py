"""Running a study's cells in order, in this process, each through its own command (the same progress,
checks and results folder as the command typed by hand), and resuming: a cell that completed
(its folder has cell.json) is kept, a cut one runs again, a query or scan whose target no longer holds
its insert cell's data has that insert cell run again first (docs/studies.md, "Resuming").
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from iotdb_bench.cli.errors import RunFailed, UsageProblem
from iotdb_bench.cli.results import results_files, run_conditions
from iotdb_bench.cli.results.study.document import CellRecord
from iotdb_bench.cli.run import study_state
from iotdb_bench.cli.run.study_plan import CellCommand, Passthrough, Plan
from iotdb_bench.cli.run.study_state import CellMarker
from iotdb_bench.cli.study_file import StudyFile
from iotdb_bench.cli.terminal import console, error_line
from iotdb_bench.simulator.modules import ModuleError


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class StudyRun:
    """One invocation of `study` on a study folder. The commands layer gives it the run commands and
    what to do when a cell is done (write study.json)."""

    def __init__(self, study: StudyFile, plan: Plan, folder: Path, passthrough: Passthrough, retry_failed: bool, *,
                 commands: Mapping[str, CellCommand],
                 on_cell_done: Callable[[list[CellRecord]], None]):
        self.study, self.plan, self.folder, self.passthrough, self.retry_failed = study, plan, folder, passthrough, retry_failed
        self.commands, self.on_cell_done = commands, on_cell_done
        self.records = {cell.key: CellRecord(**cell.model_dump()) for cell in plan.cells}
        self.state = study_state.read_state(folder)
        self.costs = {target.name: target.cost for target in study.targets}

    @property
    def cells(self) -> list[CellRecord]:
        return [self.records[cell.key] for cell in self.plan.cells]

    def stale(self) -> list[str]:
        """Cell folders of the study folder that the current file no longer plans (kept, not reported)."""
        keys = set(self.records)
        return [path.name for path in study_state.known_cell_folders(self.folder) if path.name.rsplit("-", 1)[-1] not in keys]

    def load_completed(self) -> None:
        """The figures of every cell that completed in an earlier invocation (or this one)."""
        for record in self.cells:
            if record.refused is not None:
                record.status, record.error = "not supported", record.refused
                continue
            done = study_state.marker(self._folder(record))
            if done is not None and done.key == record.key:
                self._fill(record, done)

    def run(self) -> None:
        total = len(self.cells)
        for record in self.cells:
            if record.status == "not supported":
                console.print(f"[{record.index + 1}/{total}] {self._name(record)}: not supported, skipped ({record.refused})", highlight=False, soft_wrap=True)
                continue
            if record.status == "ok" or (record.status == "failed" and not self.retry_failed):
                console.print(f"[{record.index + 1}/{total}] {self._name(record)}: {record.status} earlier, kept "
                              f"({record.folder})", highlight=False, soft_wrap=True)
                continue
            if record.data_cell is not None and not self._data_ready(record, total):
                continue
            self._run_cell(record, total)

    def _data_ready(self, record: CellRecord, total: int) -> bool:
        """A query or scan reads its insert cell's data: that cell must have passed, and its target must
        still hold that data (else the insert cell runs again first)."""
        data = self.records[record.data_cell]
        if data.status == "ok" and self.state.data.get(record.database) != data.key:
            console.print(f"[{record.index + 1}/{total}] {self._name(record)}: {record.database} holds other data than its insert cell's "
                          f"({data.workload}, {data.workers} worker(s)): running that cell again first", highlight=False, soft_wrap=True)
            self._run_cell(data, total)
        if data.status != "ok":
            record.status, record.error = "skipped", f"its data's insert cell ({data.workload}, {data.workers} worker(s)) did not pass"
            console.print(f"[{record.index + 1}/{total}] {self._name(record)}: skipped, {record.error}", highlight=False, soft_wrap=True)
            self.on_cell_done(self.cells)
            return False
        return True

    def _run_cell(self, record: CellRecord, total: int) -> None:
        folder = self._folder(record)
        study_state.start(folder)
        if record.task == "insert":
            self.state.data[record.database] = record.key
            study_state.write_state(self.folder, self.state)
        console.rule(f"[{record.index + 1}/{total}] {self._name(record)}", style="dim")
        console.print(record.command(), highlight=False, soft_wrap=True)
        started, clock = now(), time.monotonic()
        error = None
        try:
            self.commands[record.task].run([*record.args, *self.passthrough.args(), "--output", str(folder)])
        except (RunFailed, UsageProblem, ModuleError) as problem:
            error = str(problem)
            error_line(f"{self._name(record)}: {error}")
        results = study_state.results_folder(folder)
        if results is None and error is None:
            error = "the command saved no results"
        done = CellMarker(key=record.key, status="failed" if error else "ok", error=error, started=started, finished=now(),
                          seconds=round(time.monotonic() - clock, 3), results=results.name if results else None)
        study_state.complete(folder, done)
        self._fill(record, done)
        self.on_cell_done(self.cells)
        # What the cell left in reference cycles (its plots, documents, clients) is freed before the next cell: Python's
        # oldest generation is collected rarely, and without this the CLI grew by about 2 MB a cell (docs/scale.md).
        gc.collect()

    def _fill(self, record: CellRecord, done: CellMarker) -> None:
        """The record of a completed cell, its figures read back from its results.json."""
        record.status, record.error = done.status, done.error
        record.started, record.finished, record.seconds = done.started, done.finished, done.seconds
        folder = self._folder(record)
        record.folder = str((folder / done.results).relative_to(self.folder)) if done.results else str(folder.relative_to(self.folder))
        if done.results is None:
            return
        try:
            document = results_files.read(folder / done.results)
        except UsageProblem as problem:
            record.status, record.error = "failed", str(problem)
            return
        record.results_status = document.status
        record.cost = self.costs.get(record.target) or document.cost
        record.conditions = run_conditions.key_conditions(document)
        record.inserts, record.queries, record.scans = document.inserts, document.queries, document.scans
        record.queries_under_ingest = document.queries_under_ingest

    def _folder(self, record: CellRecord) -> Path:
        return study_state.cell_folder(self.folder, record.folder_name())

    @staticmethod
    def _name(record: CellRecord) -> str:
        return f"{record.target} · {record.workload} · {record.workers} worker(s)"
