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
from collections.abc import Sequence

from iotdb_bench.cli.results import agreement, cost, run_conditions
from iotdb_bench.cli.results.agreement import AgreementRow
from iotdb_bench.cli.results.tables import catalogue, formats
from iotdb_bench.cli.results.tables.catalogue import Figure
from iotdb_bench.cli.results.document import InsertRow, QueryRow, ScanRow
from iotdb_bench.cli.results.study.document import CellRecord, Ranking, RankedRow, ScoreTerm, TargetScore
from iotdb_bench.cli.study_file import ScoreInput, StudyFile, Workload
from iotdb_bench.simulator.measurement.stats import Spread

SCORE_FORMULA = ("score = 100 x exp(sum_i w_i ln r_i / sum_i w_i), r_i = value_i / best_i (higher is better) or best_i / value_i "
                 "(lower is better); value_i = the target's best ranked cell of input i (or the one at its worker count), "
                 "best_i = the best value of all targets; no score when an input has no ranked cell")

Row = InsertRow | QueryRow | ScanRow

# The catalogue's figures a study may rank by, by task: each with its name in a study file, its unit and direction.
TASK_FIGURES: dict[str, Sequence[Figure]] = {
    "insert": catalogue.INSERTS.figures,
    "query": (*catalogue.QUERIES.figures, catalogue.QUERIES_PER_COST),
    "scan": catalogue.SCANS.figures,
}
FIGURES = {figure.rank_as: figure for figures in TASK_FIGURES.values() for figure in figures if figure.rank_as}
TASKS = {figure.rank_as: task for task, figures in TASK_FIGURES.items() for figure in figures if figure.rank_as}
DEFAULT_FIGURE = {"insert": "inserts_per_s", "query": "latency_s", "scan": "rows_per_s"}


def figure_problems(study: StudyFile) -> list[str]:
    """Figures a study names that do not exist, or that belong to another task."""
    problems = []
    workloads = {workload.name: workload for workload in study.workloads}
    named = [(f"workloads.{w.name}.rank_by", w.rank_by, w) for w in study.workloads if w.rank_by]
    named += [(f"score.{i}.figure", item.figure, workloads[item.workload]) for i, item in enumerate(study.score or []) if item.figure]
    for where, name, workload in named:
        known = ", ".join(figure for figure, task in TASKS.items() if task == workload.task)
        if TASKS.get(name) != workload.task:
            problems.append(f"{where}: '{name}' is not a figure of a {workload.task} workload (known: {known})")
    return problems


def figure_of(workload: Workload, name: str | None = None) -> Figure:
    return FIGURES[name or workload.rank_by or DEFAULT_FIGURE[workload.task]]


def higher_is_better(figure: Figure) -> bool:
    return figure.better == "higher"


def cell_rows(cell: CellRecord, query: str | None = None) -> list[Row]:
    """The cell's rows (of one query for a query workload), priced at the cell's cost: the study's price
    for its target, else the one its results were saved with."""
    if cell.task == "insert":
        return [row.model_copy(update={"cost": cost.insert_cost(cell.cost, row.throughput.avg)}) for row in cell.inserts]
    if cell.task == "scan":
        return list(cell.scans)
    return [row.model_copy(update={"cost": cost.query_cost(cell.cost, cell.workers, row.avg_s)}) for row in cell.queries if row.query == query]


def check(cell: CellRecord, row: Row | None, compared: str | None = None) -> tuple[str, str | None]:
    """(the check as a table shows it, why the cell is not ranked or None); `compared`: a query file's
    query's answers across the targets (cli/results/agreement.py), which stand in for its answer check."""
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
        if compared is not None and row.answers:
            agreed = compared.startswith(agreement.AGREED)
            return (agreement.AGREED if agreed else compared.split(":")[0]), None if agreed else f"answers across targets: {compared}"
        answer = row.answer or "not checked"
        return formats.answer(answer), None if answer == "ok" else f"answer {answer}: {row.answer_detail or ''}".strip(": ")
    return row.check, None if row.check == "ok" else f"check: {row.check}" + (f" ({row.problem})" if row.problem else "")


def spread_text(row: Row | None, figure: Figure) -> str:
    """The spread of the ranked figure across runs (or its fastest and slowest execution), written as
    the figure is."""
    found = figure.spread(row) if figure.spread is not None and row is not None else None
    if isinstance(found, Spread):
        return (f"{figure.form(found.min)}–{figure.form(found.max)}, CV {found.cv:.1%}" + (" unstable" if found.unstable else "")
                + f" over {found.n} run(s)")
    if isinstance(row, QueryRow):
        extremes = f"{figure.form(found[0])}–{figure.form(found[1])} " if found is not None else ""
        return f"{extremes}over {row.executions} executions"
    return f"over {row.runs} run(s)" if row is not None else ""


def rankings(study: StudyFile, cells: list[CellRecord], agreements: Sequence[AgreementRow] = ()) -> list[Ranking]:
    """`agreements`: the query-file queries' answers across targets, each query's check in its ranking."""
    verdicts = {(row.workload, row.query): row.verdict for row in agreements}
    found = []
    for workload in study.workloads:
        mine = [cell for cell in cells if cell.workload == workload.name]
        if not mine:
            continue
        queries = list(dict.fromkeys(row.query for cell in mine for row in cell.queries)) if workload.task == "query" else [None]
        for query in queries or [None]:
            found.append(ranking(workload, figure_of(workload), mine, query, verdicts.get((workload.name, query or ""))))
    return found


def ranking(workload: Workload, figure: Figure, cells: list[CellRecord], query: str | None = None, compared: str | None = None) -> Ranking:
    rows = []
    for cell in cells:
        found = cell_rows(cell, query)
        row = found[0] if len(found) == 1 else None
        shown, why = check(cell, row, compared)
        if why is None and len(found) != 1:
            why = "fill-level steps are not ranked" if len(found) > 1 else "no figures"
        value = figure.value(row) if row is not None and figure.value is not None else None
        if why is None and value is None:
            why = f"{figure.title} not measured" + (" (no cost given for the target)" if "cost" in figure.rank_as else "")
        rows.append(RankedRow(target=cell.target, workers=cell.workers, cell=cell.key, value=value, unit=figure.unit, spread=spread_text(row, figure),
                              check=shown, why=why))
    for ranked_row, differs in zip(rows, run_conditions.differences([cell.conditions for cell in cells]), strict=True):
        ranked_row.differs = differs
    ranked = sorted((one for one in rows if one.why is None), key=lambda one: _measured(one.value) * (-1 if higher_is_better(figure) else 1))
    for rank, one in enumerate(ranked, 1):
        one.rank = rank
    return Ranking(workload=workload.name, figure=figure.rank_as, label=figure.title, unit=figure.unit, higher_is_better=higher_is_better(figure),
                   query=query, rows=ranked + [one for one in rows if one.why is not None])


def _measured(value: float | None) -> float:
    """A ranked row's value: ranked rows have one (a row without is not ranked, with the reason)."""
    assert value is not None
    return value


def score_inputs(study: StudyFile, found: list[Ranking]) -> list[ScoreInput]:
    """The study's score inputs, or one per ranking with weight 1, leaving out the rankings of workloads
    that a target's module does not support (the score compares like with like)."""
    if study.score:
        return study.score
    targets = {target.name for target in study.targets}
    return [ScoreInput(workload=item.workload, figure=item.figure, query=item.query, workers=None, weight=1.0) for item in found
            if {row.target for row in item.rows if row.check != "not supported"} >= targets]


def scores(study: StudyFile, found: list[Ranking]) -> list[TargetScore]:
    """Every target's score from the rankings (`found` must hold those the inputs name: rankings() + extra_rankings())."""
    workloads = {workload.name: workload for workload in study.workloads}
    result = []
    for target in (target.name for target in study.targets):
        terms = []
        for item in score_inputs(study, found):
            figure = figure_of(workloads[item.workload], item.figure)
            table = next((r for r in found if r.workload == item.workload and r.figure == figure.rank_as and r.query == item.query), None)
            terms.append(_term(item, figure, table, target))
        result.append(_score(target, terms))
    ranked = sorted((s for s in result if s.score is not None), key=lambda s: -_measured(s.score))
    for rank, scored in enumerate(ranked, 1):
        scored.rank = rank
    return ranked + [s for s in result if s.score is None]


def extra_rankings(study: StudyFile, cells: list[CellRecord], found: list[Ranking], agreements: Sequence[AgreementRow] = ()) -> list[Ranking]:
    """The rankings the score's inputs need beyond each workload's own (another figure of a workload)."""
    verdicts = {(row.workload, row.query): row.verdict for row in agreements}
    extra: list[Ranking] = []
    workloads = {workload.name: workload for workload in study.workloads}
    for item in study.score or []:
        workload = workloads[item.workload]
        figure = figure_of(workload, item.figure)
        have = [r for r in [*found, *extra] if r.workload == item.workload and r.figure == figure.rank_as and r.query == item.query]
        if have:
            continue
        mine = [cell for cell in cells if cell.workload == workload.name]
        if mine:
            extra.append(ranking(workload, figure, mine, item.query, verdicts.get((workload.name, item.query or ""))))
    return extra


def _term(item: ScoreInput, figure: Figure, table: Ranking | None, target: str) -> ScoreTerm:
    term = ScoreTerm(workload=item.workload, figure=figure.rank_as, query=item.query, weight=item.weight)
    if table is None:
        return term
    eligible = [_measured(row.value) for row in table.rows if row.rank is not None and (item.workers is None or row.workers == item.workers)]
    mine = [_measured(row.value) for row in table.rows if row.rank is not None and (item.workers is None or row.workers == item.workers)
            and row.target == target]
    if not eligible or not mine:
        return term
    better = higher_is_better(figure)
    value, best = (max(mine), max(eligible)) if better else (min(mine), min(eligible))
    term.value, term.best = value, best
    if value > 0 and best > 0:
        term.relative = value / best if better else best / value
    elif not better and value == 0:
        term.relative = 1.0
    return term


def _score(target: str, terms: list[ScoreTerm]) -> TargetScore:
    relative = [term.relative for term in terms]
    missing = [_term_name(term) for term in terms if term.relative is None]
    if missing or not terms:
        return TargetScore(target=target, terms=terms, why=f"no ranked cell for {', '.join(missing) or 'any input'}")
    total = sum(term.weight for term in terms)
    value = 100 * math.exp(sum(term.weight * math.log(_measured(share)) for term, share in zip(terms, relative, strict=True)) / total)
    return TargetScore(target=target, score=value, terms=terms)


def _term_name(term: ScoreTerm) -> str:
    return f"{term.workload} {term.figure}" + (f" ({term.query})" if term.query else "")
