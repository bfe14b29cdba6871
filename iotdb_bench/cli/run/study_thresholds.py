"""A study's thresholds (docs/thresholds.md): the study file's own, which apply to every cell whose task
has the figure, and each workload's, which apply to every cell of the workload. Checked against the
planned cells before anything runs; judged on every cell's rows (copied from its results.json) each
time the study ends, kept cells included, so a changed threshold needs no cell to run again.
"""

from __future__ import annotations

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results import thresholds
from iotdb_bench.cli.results.document import Threshold
from iotdb_bench.cli.results.study.document import CellRecord
from iotdb_bench.cli.run.study_plan import Plan
from iotdb_bench.cli.study_file import StudyFile
from iotdb_bench.simulator.spec import RunSpec


def check(study: StudyFile, plan: Plan, where: str) -> None:
    """Every threshold judgeable where it applies: a workload's on each of its cells, the study's on at
    least one cell; else one line naming it."""
    specs = {cell.key: plan.invocations[cell.key].base for cell in plan.cells if cell.key in plan.invocations}
    for workload in study.workloads:
        for index, threshold in enumerate(workload.thresholds):
            for cell in plan.cells:
                problem = thresholds.problem(threshold, specs[cell.key]) if cell.workload == workload.name and cell.key in specs else None
                if problem is not None:
                    raise UsageProblem(f"invalid study file {where}: workloads.{workload.name}.thresholds.{index} '{threshold.expression}' "
                                       f"on target {cell.target}: {problem}")
    for index, threshold in enumerate(study.thresholds):
        if not any(thresholds.problem(threshold, spec) is None for spec in specs.values()):
            problems = dict.fromkeys(thresholds.problem(threshold, spec) for spec in specs.values())
            raise UsageProblem(f"invalid study file {where}: thresholds.{index} '{threshold.expression}' applies to no cell of the study "
                               f"({'; '.join(filter(None, problems))})")


def judge(study: StudyFile, plan: Plan, cells: list[CellRecord]) -> None:
    """Each cell's thresholds judged on its rows; a cell that saved no results has none."""
    workloads = {workload.name: workload for workload in study.workloads}
    for cell in cells:
        invocation = plan.invocations.get(cell.key)
        if invocation is None or cell.results_status is None:
            cell.thresholds = []
            continue
        applied = _applied(study.thresholds, workloads[cell.workload].thresholds, invocation.base)
        cell.thresholds = [thresholds.judge(threshold, cell) for threshold in applied]


def _applied(studywide: list[Threshold], own: list[Threshold], spec: RunSpec) -> list[Threshold]:
    return [*own, *(threshold for threshold in studywide if thresholds.problem(threshold, spec) is None)]


def failure(cells: list[CellRecord]) -> str | None:
    """The cells' failed thresholds in words (None: every one passed)."""
    failed = [(cell, verdict) for cell in cells for verdict in cell.thresholds if verdict.passed is False]
    if not failed:
        return None
    shown = "; ".join(f"{cell.target} · {cell.workload} · w{cell.workers}: {verdict.threshold.expression} ({thresholds.because(verdict)})"
                      for cell, verdict in failed[:3])
    return f"{len(failed)} threshold verdict(s) failed ({shown}{'; ...' if len(failed) > 3 else ''})"
