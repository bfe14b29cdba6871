"""Answers of a query file's query compared across targets: the same question (the same query, with the
same parameters) asked of databases that hold the same data must get the same answer.

Each target's row of a query keeps its executions' answers (normalised, hashed, the first rows:
simulator/checks/answer_digest.py) and the fingerprint of the data they were over (the record of
what the tool wrote: same seed, shape, devices and counts give the same fingerprint). The verdict:

- `agreed (N targets)`: every execution two or more targets ran with the same parameters has one answer;
- `DIFFERENT: a vs b, c: with <parameters>: row 1: (...) vs (...)`: the targets on each side of the
  first difference (the larger side first) and where their answers part;
- `not checked: <why>`: nothing to compare with (one target, other data, no execution in common),
  never `agreed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from dataclasses import dataclass

from pydantic import BaseModel, Field

from iotdb_bench.simulator.checks import answer_digest
from iotdb_bench.simulator.checks.answer_digest import KeptAnswer
from iotdb_bench.simulator.measurement.stats import QueryFigures

AGREED, DIFFERENT, NOT_CHECKED = "agreed", "DIFFERENT", "not checked"


@dataclass(frozen=True)
class Answered:
    """One target's row of a query: its label and figures (answers and data fingerprint)."""

    target: str
    figures: QueryFigures


class AgreementRow(BaseModel):
    """One query of a study's workload (or of compared runs): its answers on every target, compared."""

    workload: str = Field(default="", description="the study's workload ('' for compared runs)")
    query: str
    targets: list[str] = Field(description="the targets that answered it")
    verdict: str = Field(description="agreed (N targets), DIFFERENT: ..., or not checked: why")

    @property
    def differs(self) -> bool:
        return self.verdict.startswith(DIFFERENT)


def verdict(answered: Sequence[Answered]) -> str:
    """The answers of one query's rows, compared (see the module's docstring)."""
    answering = [one for one in answered if one.figures.answers]
    if len(answering) < 2:
        return f"{NOT_CHECKED}: answered by one target only" if answering else f"{NOT_CHECKED}: no answer was kept"
    unknown = [one.target for one in answering if one.figures.data is None]
    if unknown:
        return f"{NOT_CHECKED}: no record says what {', '.join(unknown)} hold{'s' if len(unknown) == 1 else ''} (insert with the tool first)"
    datasets = {one.figures.data for one in answering}
    if len(datasets) > 1:
        sides = _sides({one.target: one.figures.data or "" for one in answering})
        return f"{NOT_CHECKED}: the targets hold other data ({' vs '.join(', '.join(side) for side in sides)}): insert with the same seed, shape and counts"
    by_parameters: dict[str, dict[str, KeptAnswer]] = {}
    for one in answering:
        for answer in one.figures.answers:
            by_parameters.setdefault(answer.parameters, {})[one.target] = answer
    shared = {parameters: answers for parameters, answers in by_parameters.items() if len(answers) > 1}
    if not shared:
        return f"{NOT_CHECKED}: no execution with the same parameters on two targets (give them the same seed and worker counts)"
    for parameters, answers in shared.items():
        sides = _sides({target: answer.digest for target, answer in answers.items()})
        if len(sides) > 1:
            most, other = answers[sides[0][0]], answers[sides[1][0]]
            where = f"with {parameters}: " if parameters else ""
            return f"{DIFFERENT}: {' vs '.join(', '.join(side) for side in sides)}: {where}{answer_digest.first_difference(most, other)}"
    compared = {target for answers in shared.values() for target in answers}
    return f"{AGREED} ({len(compared)} targets)"


def _sides(values: dict[str, str]) -> list[list[str]]:
    """Targets grouped by equal value, the largest group first (ties: in the order given)."""
    groups: dict[str, list[str]] = {}
    for target, value in values.items():
        groups.setdefault(value, []).append(target)
    return sorted(groups.values(), key=lambda side: -len(side))


def labelled(names: Sequence[str], details: Sequence[str]) -> list[str]:
    """The names, each made unique by its detail where it repeats (two runs of one target)."""
    return [f"{name} ({detail})" if names.count(name) > 1 else name for name, detail in zip(names, details)]


class KeptRow(KeptAnswer):
    """One kept answer of a query run (report.html and answers.csv): the query it answers, at a worker count."""

    workers: int
    query: str


def kept_rows(queries: Sequence[Any]) -> list[KeptRow]:
    """Every kept answer of a run's query rows (QueryRow), in their order."""
    return [KeptRow(workers=row.workers, query=row.query, **answer.model_dump()) for row in queries for answer in row.answers]


def study_agreements(cells: Sequence[Any]) -> list[AgreementRow]:
    """Each query-file query of a study's workloads (CellRecord), its answers on every target compared."""
    groups: dict[tuple[str, str], list[tuple[str, str, QueryFigures]]] = {}
    for cell in cells:
        for row in cell.queries if cell.task == "query" else ():
            if row.answers:
                groups.setdefault((cell.workload, row.query), []).append((cell.target, f"w{cell.workers}", row))
    found = []
    for (workload, query), rows in groups.items():
        names = labelled([name for name, _, _ in rows], [detail for _, detail, _ in rows])
        found.append(AgreementRow(workload=workload, query=query, targets=names,
                                  verdict=verdict([Answered(name, row) for name, (_, _, row) in zip(names, rows)])))
    return found
