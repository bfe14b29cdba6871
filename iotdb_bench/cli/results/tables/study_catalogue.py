"""The catalogues of a study's own tables (docs/studies.md): a ranking, the score, inserts/s by target
and worker count, the cells, and the plan `study --dry-run` lists. Their figures are written as the
catalogue's (cli/results/tables/catalogue.py): a ranking's values as the figure it ranks by."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from iotdb_bench.cli.results.tables import formats as f
from iotdb_bench.cli.results.study import ranking
from iotdb_bench.cli.results.tables.catalogue import MORE, Catalogue, Figure
from iotdb_bench.cli.results.study.document import CellRecord, Ranking, ScoreTerm, TargetScore

RANKED = "Only cells that finished with status ok and whose check passed are ranked."


def ranking_title(table: Ranking) -> str:
    direction = "higher is better" if table.higher_is_better else "lower is better"
    return f"{table.workload}" + (f" · {table.query}" if table.query else "") + f": {table.label}, {direction}"


def _written(figure: str) -> Callable[[float | None], str]:
    """How a value of the named figure is written ("-" when there is none)."""
    known = ranking.FIGURES.get(figure)
    form = known.form if known is not None else f.figure
    return lambda value: f.DASH if value is None else form(value)


def ranking_table(table: Ranking) -> Catalogue:
    value = _written(table.figure)
    return Catalogue(ranking_title(table), (
        Figure("Rank", lambda row: str(row.rank) if row.rank else f.DASH, key=True, csv=("rank",)),
        Figure("Target", lambda row: row.target + (" †" if row.differs else ""), key=True, text=True, csv=("target",)),
        Figure("Workers", lambda row: str(row.workers), key=True, csv=("workers",)),
        Figure("Value", lambda row: value(row.value), csv=("value", "unit")),
        Figure("Spread", lambda row: row.spread or f.DASH, text=True, csv=("spread",)),
        Figure("Check", lambda row: row.check, text=True, csv=("check",)),
        Figure("Not ranked because", lambda row: row.why or f.DASH, text=True, csv=("why",)),
        Figure("Differs from the others", lambda row: "; ".join(row.differs) or f.DASH, MORE, text=True, csv=("differs",)),
    ))


def score_table(scores: list[TargetScore]) -> Catalogue:
    """The score of every target and, for each input, its value and share of the best."""
    terms = scores[0].terms if scores else []
    return Catalogue("Score", (
        Figure("Rank", lambda item: str(item.rank) if item.rank else f.DASH, key=True, csv=("rank",)),
        Figure("Target", lambda item: item.target, key=True, text=True, csv=("target",)),
        Figure("Score", lambda item: f.DASH if item.score is None else f"{item.score:.1f}", csv=("score",)),
        *(Figure(f"{term.workload} {term.figure}" + (f" ({term.query})" if term.query else "") + f" ×{term.weight:g}", _term_of(index), text=True,
                 csv=("terms.value",))
          for index, term in enumerate(terms)),
        Figure("No score because", lambda item: item.why or f.DASH, text=True, csv=("why",)),
    ))


def _term_of(index: int) -> Callable[[TargetScore], str]:
    return lambda item: _term(item.terms[index])


def _term(term: ScoreTerm) -> str:
    value = _written(term.figure)(term.value)
    return f"{value} ({term.relative:.0%} of best)" if term.value is not None and term.relative is not None else value


class PivotRow(BaseModel):
    """One target and insert workload: inserts/s (mean over the runs) of each worker count's cell."""

    target: str
    workload: str
    insert_mode: str
    by_workers: dict[int, str]


def pivot(cells: list[CellRecord]) -> tuple[Catalogue, list[PivotRow]]:
    """Seed 001's insert table: one row per target and insert workload, inserts/s per worker count."""
    inserts = [cell for cell in cells if cell.task == "insert"]
    counts = sorted({cell.workers for cell in inserts})
    rows = []
    for target, workload in dict.fromkeys((cell.target, cell.workload) for cell in inserts):
        mine = {cell.workers: cell for cell in inserts if cell.target == target and cell.workload == workload}
        modes = [cell.inserts[0].insert_mode for cell in mine.values() if cell.inserts]
        rows.append(PivotRow(target=target, workload=workload, insert_mode=modes[0] if modes else f.DASH,
                             by_workers={count: _pivot_cell(mine.get(count)) for count in counts}))
    table = Catalogue("Inserts/s by target, workload and worker count", (
        Figure("Target", lambda row: row.target, key=True, text=True, csv=("target",)),
        Figure("Workload", lambda row: row.workload, key=True, text=True, csv=("workload",)),
        Figure("Insert mode", lambda row: row.insert_mode, text=True, csv=("insert_mode",)),
        *(Figure(f"{count} worker(s)", _at(count), csv=("by_workers",)) for count in counts),
    ))
    return table, rows


def _at(workers: int) -> Callable[[PivotRow], str]:
    return lambda row: row.by_workers[workers]


def _pivot_cell(cell: CellRecord | None) -> str:
    if cell is None:
        return ""
    if cell.status != "ok" or not cell.inserts:
        return cell.status
    row = cell.inserts[0]
    return _written("inserts_per_s")(row.throughput.avg) + ("" if row.count_check == "ok" else f" (count {row.count_check})")


CELLS = Catalogue("Cells", (
    Figure("Cell", lambda cell: str(cell.index + 1), key=True, csv=("index",)),
    Figure("Target", lambda cell: cell.target, text=True, csv=("target",)),
    Figure("Workload", lambda cell: cell.workload, text=True, csv=("workload",)),
    Figure("Workers", lambda cell: str(cell.workers), csv=("workers",)),
    Figure("Status", lambda cell: cell.status + (f": {cell.error}" if cell.error else ""), text=True, csv=("status", "error")),
    Figure("Thresholds", lambda cell: _thresholds(cell), text=True, show_if=lambda cells: any(cell.thresholds for cell in cells),
           csv=("thresholds.threshold.expression", "thresholds.passed")),
    Figure("Seconds", lambda cell: f.DASH if cell.seconds is None else f"{cell.seconds:.0f}", csv=("seconds",)),
    Figure("Folder", lambda cell: cell.folder or f.DASH, text=True, csv=("folder",)),
    Figure("Command", lambda cell: cell.command(), text=True, csv=(("command", lambda cell: cell.command()),)),
))


def _thresholds(cell: CellRecord) -> str:
    failed = sum(verdict.passed is False for verdict in cell.thresholds)
    if not cell.thresholds:
        return f.DASH
    return f"{failed} of {len(cell.thresholds)} FAILED" if failed else "passed"


class PlannedCell(BaseModel):
    """A cell as `study --dry-run` lists it: what it is, whether it runs, how long it may take."""

    number: int
    target: str
    workload: str
    workers: int
    runs: int
    state: str
    estimate: str
    command: str


PLAN = Catalogue("Cells of the study", (
    Figure("Cell", lambda cell: str(cell.number), key=True, csv=("number",)),
    Figure("Target", lambda cell: cell.target, text=True, csv=("target",)),
    Figure("Workload", lambda cell: cell.workload, text=True, csv=("workload",)),
    Figure("Workers", lambda cell: str(cell.workers), csv=("workers",)),
    Figure("Runs", lambda cell: str(cell.runs), csv=("runs",)),
    Figure("State", lambda cell: cell.state, text=True, csv=("state",)),
    Figure("Estimate", lambda cell: cell.estimate, csv=("estimate",)),
    Figure("Command", lambda cell: cell.command, text=True, csv=("command",)),
))
