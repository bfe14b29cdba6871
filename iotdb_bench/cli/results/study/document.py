"""study.json as typed models: the plan of a study (its cells, in the order they run), what each
cell measured (the rows of its own results.json, copied as they are), the rankings and the score.

`format_version` changes whenever a reader of an older file would misread it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from iotdb_bench.cli.results.agreement import AgreementRow
from iotdb_bench.cli.results.cost import Cost
from iotdb_bench.cli.results.document import InsertRow, QueryRow, QueryUnderIngestRow, ScanRow, ThresholdVerdict
from iotdb_bench.cli.study_file import Task

STUDY_FORMAT_VERSION = 1
# done: ran and saved its results (its own status says whether the runs passed); the others did not run.
CellStatus = Literal["ok", "failed", "pending", "not supported", "skipped"]


class CellPlan(BaseModel):
    """One cell: one target, one workload, one worker count; the command it runs, as arguments."""

    key: str = Field(description="hash of the cell's canonical arguments, its target's config and the data it reads")
    index: int = Field(description="position in the study's order (target by target, workloads in file order, worker counts)")
    target: str = Field(description="the target's name in the study")
    database: str = Field(description="the config file's target it runs (the same as `target` unless the study names it otherwise)")
    workload: str
    task: Task
    workers: int
    runs: int
    args: list[str] = Field(description="the arguments of `python run.py TASK`, as on a command line (results folder left out)")
    data_cell: str | None = Field(default=None, description="query and scan: the key of the insert cell whose data they read")
    refused: str | None = Field(default=None, description="why the target's module refuses this cell (skipped with unsupported: skip)")

    def command(self) -> str:
        return " ".join(["python run.py", self.task, *(_quoted(arg) for arg in self.args)])

    def folder_name(self) -> str:
        return f"{self.target}-{self.workload}-w{self.workers}-{self.key}"


def _quoted(arg: str) -> str:
    return arg if arg and all(c.isalnum() or c in "-_.,=/:" for c in arg) else "'" + arg.replace("'", "'\\''") + "'"


def cell_key(target: str, target_config: dict[str, Any], task: str, args: list[str], data_cell: str | None, platform: str,
             inputs: dict[str, str] | None = None) -> str:
    """Stable across runs of the same study: what decides the cell's figures, canonically serialised;
    `inputs`: the digests of files the arguments name (a query file), so an edited file runs its cells again."""
    described = {"target": target, "config": target_config, "task": task, "args": args, "data": data_cell, "platform": platform}
    canonical = json.dumps({**described, **({"inputs": inputs} if inputs else {})}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


class CellRecord(CellPlan):
    """A cell of the plan and, once it ran, its outcome and figures (from its results.json)."""

    status: CellStatus = "pending"
    error: str | None = None
    folder: str | None = Field(default=None, description="its results folder, relative to the study folder")
    started: str | None = None
    finished: str | None = None
    seconds: float | None = Field(default=None, description="wall-clock time the cell took")
    results_status: str | None = Field(default=None, description="the status in the cell's results.json")
    cost: Cost | None = Field(default=None, description="the price its cost figures are at (the study's for the target, else the config's)")
    conditions: dict[str, str] = Field(default_factory=dict, description="the conditions that change figures (see compare)")
    inserts: list[InsertRow] = Field(default_factory=list)
    queries: list[QueryRow] = Field(default_factory=list)
    scans: list[ScanRow] = Field(default_factory=list)
    queries_under_ingest: list[QueryUnderIngestRow] = Field(default_factory=list)
    thresholds: list[ThresholdVerdict] = Field(default_factory=list, description="the study's thresholds judged on this cell's rows")


class RankedRow(BaseModel):
    target: str
    workers: int
    cell: str
    value: float | None
    unit: str
    spread: str = Field(default="", description="min-max and coefficient of variation across runs or executions")
    check: str
    rank: int | None = Field(default=None, description="None: not ranked (see `why`)")
    why: str | None = None
    differs: list[str] = Field(default_factory=list, description="conditions in which this cell differs from the others in the table")


class Ranking(BaseModel):
    workload: str
    figure: str
    label: str
    unit: str
    higher_is_better: bool
    query: str | None = None
    rows: list[RankedRow]


class ScoreTerm(BaseModel):
    workload: str
    figure: str
    query: str | None = None
    weight: float
    value: float | None = Field(default=None, description="the target's figure: its best ranked cell, or the one at `workers`")
    best: float | None = Field(default=None, description="the best of all targets")
    relative: float | None = Field(default=None, description="value / best (higher is better) or best / value (lower is better), in (0, 1]")


class TargetScore(BaseModel):
    target: str
    score: float | None = Field(default=None, description="100 x the weighted geometric mean of the relative figures; None when one is missing")
    rank: int | None = None
    why: str | None = None
    terms: list[ScoreTerm]


class StudyDocument(BaseModel):
    format_version: int = STUDY_FORMAT_VERSION
    name: str
    title: str = ""
    description: str = ""
    file: str
    file_sha256: str
    command: list[str] = Field(default_factory=list)
    tool_version: str = ""
    updated: str = ""
    status: Literal["running", "complete", "incomplete", "interrupted"] = "running"
    cells: list[CellRecord]
    score_formula: str = ""
    rankings: list[Ranking] = Field(default_factory=list)
    scores: list[TargetScore] = Field(default_factory=list)
    agreements: list[AgreementRow] = Field(default_factory=list, description="each query file's query: its answers on every target, compared")
    stale_cells: list[str] = Field(default_factory=list, description="cell folders of an earlier version of the file, kept but not reported")
