"""Thresholds: lines a run's figures must not cross, so that a CI job fails on a regression
(docs/thresholds.md). `--threshold inserts_per_s>=100000`, `p99_ms<=20`, `query.lastpoint.p95_ms<50`,
`count_check==ok`: a figure of the catalogue (cli/results/tables/catalogue.py, by its `names`), an
operator and a limit.

Parsed when the command line (or a study file) is read; its figure checked against the run's task and
queries before anything runs (`problem`); judged on the rows the tables show (`judge`): every row it
concerns, each worker count, fill-level step or query, must pass, as k6 judges a threshold on every
sub-metric it names. A figure a row did not measure fails the threshold: a gate never passes on
missing evidence. The verdicts are typed records of results.json (ThresholdVerdict) and a section of
every view (cli/results/tables/sections.py).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import BaseModel

from iotdb_bench.cli.errors import RunFailed
from iotdb_bench.cli.results.document import (
    InsertRow,
    JudgedRow,
    QueryRow,
    QueryUnderIngestRow,
    ScanRow,
    Threshold,
    ThresholdVerdict,
)
from iotdb_bench.cli.results.tables import catalogue
from iotdb_bench.cli.results.tables import formats as f
from iotdb_bench.cli.results.tables.catalogue import Figure
from iotdb_bench.simulator.spec import RunSpec

EXPRESSION = re.compile(r"^\s*(?:query\.(?P<query>[^<>=!\s]+)\.)?(?P<figure>[A-Za-z][A-Za-z0-9_]*)\s*"
                        r"(?P<operator>>=|<=|==|!=|>|<)\s*(?P<limit>.*?)\s*$")
OPERATORS: dict[str, Callable[[Any, Any], bool]] = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
                                                    "==": operator.eq, "!=": operator.ne}
FORM = "FIGURE OPERATOR VALUE, e.g. inserts_per_s>=100000, p99_ms<=20, query.NAME.avg_ms<50, count_check==ok"

# The figures a threshold may name in a run of each task; `query.NAME.FIGURE` names a query's (a query
# run's, or the query clients' of a mixed insert run: their figures under ingest).
FIGURES: dict[str, Sequence[Figure]] = {
    "insert": catalogue.INSERTS.figures,
    "query": (*catalogue.QUERIES.figures, catalogue.QUERIES_PER_COST),
    "scan": catalogue.SCANS.figures,
}
QUERY_FIGURES: dict[str, Sequence[Figure]] = {"insert": catalogue.UNDER_INGEST.figures, "query": FIGURES["query"]}


def parse(expression: str) -> Threshold:
    """A threshold from its text; ValueError with the expected form when it is none."""
    match = EXPRESSION.match(expression)
    if match is None or not match["limit"]:
        raise ValueError(f"'{expression}' is not a threshold ({FORM})")
    return Threshold.model_validate({"expression": expression.strip(), "figure": match["figure"], "query": match["query"],
                                     "operator": match["operator"], "limit": _limit(match["limit"])})


def _limit(text: str) -> float | str:
    """A number (a share may be written as a percentage: 10% = 0.1), else the words of a check."""
    words = text.strip("'\"")
    try:
        return float(words[:-1]) / 100 if words.endswith("%") else float(words)
    except ValueError:
        return words


def named(figures: Sequence[Figure]) -> dict[str, Figure]:
    """The figures a threshold can name, by each of their names."""
    return {name: figure for figure in figures for name in figure.names}


def known_names(figures: Sequence[Figure]) -> str:
    return ", ".join(dict.fromkeys(figure.names[0] for figure in figures if figure.names))


def problem(threshold: Threshold, spec: RunSpec) -> str | None:
    """Why the threshold cannot be judged on a run of this spec (None: it can), in words for one line."""
    task = spec.task
    if threshold.query is None:
        figures = FIGURES[task]
    elif task not in QUERY_FIGURES:
        return f"a {task} run has no queries (query.NAME.FIGURE names a query's figure)"
    elif task == "insert" and not spec.query_workers:
        return "an insert run has query figures only with query clients (--query-workers)"
    elif threshold.query not in spec.queries:
        return f"the run has no query '{threshold.query}' (its queries: {', '.join(spec.queries)})"
    else:
        figures = QUERY_FIGURES[task]
    figure = named(figures).get(threshold.figure)
    if figure is None:
        run = f"{'an' if task == 'insert' else 'a'} {task} run"
        return f"no figure '{threshold.figure}' in {'a query of ' + run if threshold.query else run} (known: {known_names(figures)})"
    if figure.text and (isinstance(threshold.limit, float) or threshold.operator not in ("==", "!=")):
        return f"'{threshold.figure}' is a check: compare its words with == or != (e.g. {threshold.figure}==ok)"
    if not figure.text and isinstance(threshold.limit, str):
        return f"'{threshold.figure}' is a number: the limit must be a number, not '{threshold.limit}'"
    return None


class Judged(Protocol):
    """What a threshold is judged on: a results document, or a study's cell (its rows copied from one)."""

    @property
    def task(self) -> str: ...
    @property
    def inserts(self) -> Sequence[InsertRow]: ...
    @property
    def queries(self) -> Sequence[QueryRow]: ...
    @property
    def scans(self) -> Sequence[ScanRow]: ...
    @property
    def queries_under_ingest(self) -> Sequence[QueryUnderIngestRow]: ...


def judge(threshold: Threshold, judged: Judged) -> ThresholdVerdict:
    """The threshold judged on every row it concerns: it passes when each of them does."""
    rows: Sequence[InsertRow | QueryRow | ScanRow | QueryUnderIngestRow]
    if threshold.query is None:
        figures, rows = FIGURES.get(judged.task, ()), _plain_rows(judged)
    else:
        figures = QUERY_FIGURES.get(judged.task, ())
        rows = [row for row in (judged.queries if judged.task == "query" else judged.queries_under_ingest) if row.query == threshold.query]
    figure = named(figures).get(threshold.figure)
    if figure is None:
        return ThresholdVerdict(threshold=threshold, passed=False, problem=f"no figure '{threshold.figure}' in this {judged.task} run")
    if not rows:
        return ThresholdVerdict(threshold=threshold, passed=False, problem="no row to judge (no run finished with figures)")
    judged_rows = [_judged_row(threshold, figure, row) for row in rows]
    return ThresholdVerdict(threshold=threshold, passed=all(row.passed for row in judged_rows), rows=judged_rows)


def judge_all(verdicts: list[ThresholdVerdict], judged: Judged) -> list[ThresholdVerdict]:
    """Every threshold judged again on the rows (as they are computed again when a folder is read)."""
    return [judge(verdict.threshold, judged) for verdict in verdicts]


def _plain_rows(judged: Judged) -> Sequence[InsertRow | QueryRow | ScanRow]:
    if judged.task == "insert":
        return judged.inserts
    return judged.queries if judged.task == "query" else judged.scans


def _judged_row(threshold: Threshold, figure: Figure, row: Any) -> JudgedRow:
    shown = figure.cell(row)
    value: float | str | None = shown if figure.text else _number(figure, row)
    if value is None:
        passed = False
    elif isinstance(value, str):
        passed = OPERATORS[threshold.operator](value.casefold(), str(threshold.limit).casefold())
    else:
        passed = OPERATORS[threshold.operator](value, threshold.limit)
    return JudgedRow(where=_where(row), workers=row.workers, step=getattr(row, "step", None), query=getattr(row, "query", None),
                     value=value, shown=shown, passed=passed)


def _number(figure: Figure, row: Any) -> float | None:
    assert figure.value is not None  # a named figure that is no check has a value (Figure.__post_init__)
    found = figure.value(row)
    return None if found is None else float(found)


def _where(row: Any) -> str:
    if isinstance(row, InsertRow):
        return f.row_where(row)
    return f.workers(row.workers) + (" under ingest" if isinstance(row, QueryUnderIngestRow) else "")


def failure(verdicts: Sequence[ThresholdVerdict]) -> str | None:
    """The failed thresholds in one line (the command's error: exit code 1), None when all passed."""
    failed = [verdict for verdict in verdicts if verdict.passed is False]
    if not failed:
        return None
    return (f"{len(failed)} of {f.plural(len(verdicts), 'threshold')} failed: "
            + "; ".join(f"{verdict.threshold.expression} ({because(verdict)})" for verdict in failed))


def enforce(verdicts: Sequence[ThresholdVerdict]) -> None:
    """Fail the command (exit code 1) when a threshold failed: called once everything is saved and shown."""
    line = failure(verdicts)
    if line is not None:
        raise RunFailed(line)


def because(verdict: ThresholdVerdict) -> str:
    """Why a threshold failed: the rows that did not pass, with their figures, or its problem."""
    if verdict.problem:
        return verdict.problem
    failed = verdict.model_copy(update={"rows": [row for row in verdict.rows if not row.passed]})
    return f.judged_rows(failed).replace(" FAILED", "")


def heading(verdicts: Sequence[ThresholdVerdict]) -> str:
    failed = sum(verdict.passed is False for verdict in verdicts)
    if failed:
        return f"Thresholds: {failed} of {len(verdicts)} FAILED"
    return "Thresholds: the threshold passed" if len(verdicts) == 1 else f"Thresholds: all {len(verdicts)} passed"


class SourcedVerdict(ThresholdVerdict):
    """A verdict of a compared run (compare) or of a study's cell: the document or cell it belongs to."""

    database: str
    source: str


def sourced(verdicts: Sequence[ThresholdVerdict], database: str, source: str) -> list[SourcedVerdict]:
    return [SourcedVerdict(**verdict.model_dump(), database=database, source=source) for verdict in verdicts]
