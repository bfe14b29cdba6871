"""Rankings and the score of a study (docs/studies.md, "Ranking and score").

For each workload (and, for query workloads, each query) a table of its cells ordered by one figure,
with the spread and the check. Only a cell that finished with status ok and whose check passed (count
check of an insert, answer check of a query, order and count check of a scan) is ranked; the others are
listed with the reason. The score of a target is 100 x the weighted geometric mean, over the score's
inputs, of its figure relative to the best target's: value / best when higher is better, best / value
when lower is better (so 100 = best at everything; one input half as good as the best, alone, gives 50).
A target without a ranked cell for an input has no score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from iotdb_bench.cli.results import run_conditions
from iotdb_bench.cli.results.document import InsertRow, QueryRow, ScanRow
from iotdb_bench.cli.results.study_document import CellRecord, Ranking, RankedRow, ScoreTerm, TargetScore
from iotdb_bench.cli.study_file import ScoreInput, StudyFile, Workload
from iotdb_bench.simulator.measurement.stats import Spread

SCORE_FORMULA = ("score = 100 x exp(sum_i w_i ln r_i / sum_i w_i), r_i = value_i / best_i (higher is better) or best_i / value_i "
                 "(lower is better); value_i = the target's best ranked cell of input i (or the one at its worker count), "
                 "best_i = the best value of all targets; no score when an input has no ranked cell")

Row = InsertRow | QueryRow | ScanRow


@dataclass(frozen=True)
class Figure:
    name: str
    task: str
    label: str
    unit: str
    higher_is_better: bool
    read: Callable[[CellRecord, Row], float | None]


def _resource(name: str, factor: float = 1.0) -> Callable[[CellRecord, Row], float | None]:
    def read(cell: CellRecord, row: Row) -> float | None:
        value = getattr(row.resources, name, None) if isinstance(row, InsertRow) and row.resources else None
        return None if value is None else value * factor
    return read


def _per_cost(rate: Callable[[CellRecord, Row], float | None]) -> Callable[[CellRecord, Row], float | None]:
    def read(cell: CellRecord, row: Row) -> float | None:
        value = rate(cell, row)
        return None if cell.cost is None or not value else cell.cost.operations_per_unit(value)
    return read


def _query_rate(cell: CellRecord, row: Row) -> float | None:
    """Queries per second of the cell's workers running back to back (workers / mean seconds)."""
    return cell.workers / row.avg_s if isinstance(row, QueryRow) and row.avg_s else None


FIGURES = {figure.name: figure for figure in (
    Figure("inserts_per_s", "insert", "Inserts/s", "events/s", True, lambda cell, row: row.throughput.avg),
    Figure("values_per_s", "insert", "Points/s", "values/s",
           True, lambda cell, row: row.values_throughput.avg if row.values_throughput else row.throughput.avg * row.values_per_row),
    Figure("p99_ms", "insert", "p99 call latency", "ms", False, lambda cell, row: row.p99_ms.avg),
    Figure("storage_bytes_per_event", "insert", "Storage", "bytes/event", False, _resource("storage_bytes_per_event")),
    Figure("db_cpu_s_per_million", "insert", "Database CPU", "CPU s per million events", False, _resource("db_cpu_s_per_million")),
    Figure("db_memory_peak_mb", "insert", "Database peak memory", "MB", False, _resource("db_memory_peak_bytes", 1e-6)),
    Figure("inserts_per_cost", "insert", "Inserts per unit of cost", "events per unit of money", True,
           _per_cost(lambda cell, row: row.throughput.avg)),
    Figure("latency_s", "query", "Query latency", "s (mean per execution)", False, lambda cell, row: row.avg_s),
    Figure("p95_s", "query", "Query p95 latency", "s", False, lambda cell, row: row.p95_s),
    Figure("queries_per_cost", "query", "Queries per unit of cost", "queries per unit of money", True, _per_cost(_query_rate)),
    Figure("rows_per_s", "scan", "Rows scanned/s", "rows/s", True, lambda cell, row: row.rows_per_s.avg),
    Figure("window_min", "scan", "Slowest 10,000-row window", "rows/s", True, lambda cell, row: row.window_min),
)}
DEFAULT_FIGURE = {"insert": "inserts_per_s", "query": "latency_s", "scan": "rows_per_s"}


def figure_problems(study: StudyFile) -> list[str]:
    """Figures a study names that do not exist, or that belong to another task."""
    problems = []
    workloads = {workload.name: workload for workload in study.workloads}
    named = [(f"workloads.{w.name}.rank_by", w.rank_by, w) for w in study.workloads if w.rank_by]
    named += [(f"score.{i}.figure", item.figure, workloads[item.workload]) for i, item in enumerate(study.score or []) if item.figure]
    for where, name, workload in named:
        figure = FIGURES.get(name)
        known = ", ".join(f for f, fig in FIGURES.items() if fig.task == workload.task)
        if figure is None or figure.task != workload.task:
            problems.append(f"{where}: '{name}' is not a figure of a {workload.task} workload (known: {known})")
    return problems


def figure_of(workload: Workload, name: str | None = None) -> Figure:
    return FIGURES[name or workload.rank_by or DEFAULT_FIGURE[workload.task]]


def cell_rows(cell: CellRecord, query: str | None = None) -> list[Row]:
    if cell.task == "insert":
        return list(cell.inserts)
    if cell.task == "scan":
        return list(cell.scans)
    return [row for row in cell.queries if row.query == query]


def check(cell: CellRecord, row: Row | None) -> tuple[str, str | None]:
    """(the check as a table shows it, why the cell is not ranked or None)."""
    if cell.status != "ok":
        return cell.status, {"failed": f"the cell failed: {cell.error or cell.results_status}", "pending": "not run yet",
                             "not supported": f"not supported: {cell.refused}", "skipped": cell.error or "skipped"}.get(cell.status, cell.status)
    if row is None:
        return "-", "no figures"
    if isinstance(row, InsertRow):
        return row.count_check, None if row.count_check == "ok" else f"count check {row.count_check}"
    if isinstance(row, QueryRow):
        if row.errors:
            return "failed", f"query failed: {'; '.join(row.errors)}"
        answer = row.answer or "not checked"
        return answer.upper() if answer == "wrong" else answer, None if answer == "ok" else f"answer {answer}: {row.answer_detail or ''}".strip(": ")
    return row.check, None if row.check == "ok" else f"check: {row.check}" + (f" ({row.problem})" if row.problem else "")


def spread_text(row: Row | None, figure: str = "") -> str:
    """The spread of the ranked figure across runs (or executions) where the rows keep it."""
    if isinstance(row, InsertRow):
        spread = {"inserts_per_s": row.throughput, "values_per_s": row.values_throughput, "p99_ms": row.p99_ms}.get(figure)
        return _spread(spread) if spread is not None else f"over {row.runs} run(s)"
    if isinstance(row, ScanRow) and figure == "rows_per_s":
        return _spread(row.rows_per_s)
    if isinstance(row, ScanRow):
        return f"over {row.runs} run(s)"
    if isinstance(row, QueryRow) and figure == "latency_s" and row.min_s is not None and row.max_s is not None:
        return f"{row.min_s:.3g}–{row.max_s:.3g} s over {row.executions} executions"
    return f"over {row.executions} executions" if isinstance(row, QueryRow) else ""


def _spread(spread: Spread) -> str:
    return f"{_number(spread.min)}–{_number(spread.max)}, CV {spread.cv:.1%}" + (" unstable" if spread.unstable else "") + f" over {spread.n} run(s)"


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def rankings(study: StudyFile, cells: list[CellRecord]) -> list[Ranking]:
    found = []
    for workload in study.workloads:
        mine = [cell for cell in cells if cell.workload == workload.name]
        if not mine:
            continue
        queries = list(dict.fromkeys(row.query for cell in mine for row in cell.queries)) if workload.task == "query" else [None]
        for query in queries or [None]:
            found.append(ranking(workload, figure_of(workload), mine, query))
    return found


def ranking(workload: Workload, figure: Figure, cells: list[CellRecord], query: str | None = None) -> Ranking:
    rows = []
    for cell in cells:
        found = cell_rows(cell, query)
        row = found[0] if len(found) == 1 else None
        shown, why = check(cell, row)
        if why is None and len(found) != 1:
            why = "fill-level steps are not ranked" if len(found) > 1 else "no figures"
        value = figure.read(cell, row) if row is not None else None
        if why is None and value is None:
            why = f"{figure.label} not measured" + (" (no cost given for the target)" if "cost" in figure.name else "")
        rows.append(RankedRow(target=cell.target, workers=cell.workers, cell=cell.key, value=value, unit=figure.unit, spread=spread_text(row, figure.name),
                              check=shown, why=why))
    for row, differs in zip(rows, run_conditions.differences([cell.conditions for cell in cells]), strict=True):
        row.differs = differs
    ranked = sorted((row for row in rows if row.why is None), key=lambda row: -row.value if figure.higher_is_better else row.value)
    for rank, row in enumerate(ranked, 1):
        row.rank = rank
    return Ranking(workload=workload.name, figure=figure.name, label=figure.label, unit=figure.unit, higher_is_better=figure.higher_is_better,
                   query=query, rows=ranked + [row for row in rows if row.why is not None])


def score_inputs(study: StudyFile, found: list[Ranking]) -> list[ScoreInput]:
    """The study's score inputs, or one per ranking with weight 1, leaving out the rankings of workloads
    that a target's module does not support (the score compares like with like)."""
    if study.score:
        return study.score
    targets = {target.name for target in study.targets}
    return [ScoreInput(workload=item.workload, figure=item.figure, query=item.query) for item in found
            if {row.target for row in item.rows if row.check != "not supported"} >= targets]


def scores(study: StudyFile, found: list[Ranking]) -> list[TargetScore]:
    """Every target's score from the rankings (`found` must hold those the inputs name: rankings() + extra_rankings())."""
    workloads = {workload.name: workload for workload in study.workloads}
    result = []
    for target in (target.name for target in study.targets):
        terms = []
        for item in score_inputs(study, found):
            figure = figure_of(workloads[item.workload], item.figure)
            table = next((r for r in found if r.workload == item.workload and r.figure == figure.name and r.query == item.query), None)
            terms.append(_term(item, figure, table, target))
        result.append(_score(target, terms))
    ranked = sorted((s for s in result if s.score is not None), key=lambda s: -s.score)
    for rank, item in enumerate(ranked, 1):
        item.rank = rank
    return ranked + [s for s in result if s.score is None]


def extra_rankings(study: StudyFile, cells: list[CellRecord], found: list[Ranking]) -> list[Ranking]:
    """The rankings the score's inputs need beyond each workload's own (another figure of a workload)."""
    extra = []
    workloads = {workload.name: workload for workload in study.workloads}
    for item in study.score or []:
        workload = workloads[item.workload]
        figure = figure_of(workload, item.figure)
        have = [r for r in [*found, *extra] if r.workload == item.workload and r.figure == figure.name and r.query == item.query]
        if have:
            continue
        mine = [cell for cell in cells if cell.workload == workload.name]
        if mine:
            extra.append(ranking(workload, figure, mine, item.query))
    return extra


def _term(item: ScoreInput, figure: Figure, table: Ranking | None, target: str) -> ScoreTerm:
    term = ScoreTerm(workload=item.workload, figure=figure.name, query=item.query, weight=item.weight)
    if table is None:
        return term
    eligible = [row for row in table.rows if row.rank is not None and (item.workers is None or row.workers == item.workers)]
    pick = max if figure.higher_is_better else min
    mine = [row.value for row in eligible if row.target == target]
    if not eligible or not mine:
        return term
    term.value = pick(mine)
    term.best = pick(row.value for row in eligible)
    if term.value > 0 and term.best > 0:
        term.relative = term.value / term.best if figure.higher_is_better else term.best / term.value
    elif figure.higher_is_better is False and term.value == 0:
        term.relative = 1.0
    return term


def _score(target: str, terms: list[ScoreTerm]) -> TargetScore:
    missing = [_term_name(term) for term in terms if term.relative is None]
    if missing or not terms:
        return TargetScore(target=target, terms=terms, why=f"no ranked cell for {', '.join(missing) or 'any input'}")
    total = sum(term.weight for term in terms)
    value = 100 * math.exp(sum(term.weight * math.log(term.relative) for term in terms) / total)
    return TargetScore(target=target, score=value, terms=terms)


def _term_name(term: ScoreTerm) -> str:
    return f"{term.workload} {term.figure}" + (f" ({term.query})" if term.query else "")
