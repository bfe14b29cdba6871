"""What a reader must not miss beside the figures, found once in the typed results and worded here:
a run that could not sustain its rate, a client that may be the bottleneck, a WRONG answer, a flagged
row, a failed check... Every view writes these records (the terminal's lines, the pages' flags,
compare's lists); a view chooses only where it puts them and what it emphasises.

A finding reads "where: what: why" (`sentence`); `flag` marks what the pages list under Flags (the
others are notes a view may print beside a table, such as why answers were not checked).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from iotdb_bench.cli.results import crosscheck, thresholds
from iotdb_bench.cli.results.tables import formats
from iotdb_bench.cli.results.compared import Compared, CompareInsertRow, CompareQueryRow, CompareScanRow
from iotdb_bench.cli.results.document import InsertRow, ResultsDocument, RunRecord, ThresholdVerdict
from iotdb_bench.cli.results.study.document import StudyDocument
from iotdb_bench.simulator.measurement.stats import UNSTABLE_CV, QueryFigures
from iotdb_bench.simulator.workload import shapes

Kind = Literal[
    "status", "unstable", "count-failed", "row-flag", "client-bottleneck", "max-rate", "could-not-sustain", "crosscheck-flagged",
    "database-side-check", "query-failed", "wrong-answer", "answers-not-checked", "unstable-executions", "scan-failed", "scan-problem",
    "ingestion", "server-version", "with-and-without-queries", "differs", "cell-not-passed", "incomplete", "time-limit", "empty-answers",
    "answers-differ", "threshold-failed",
]


class Finding(BaseModel):
    kind: Kind
    where: str = ""     # whom it concerns: "2 workers", "step 3 at 1,000/s", a run's label, "sqlite (folder), query q"
    what: str           # the finding itself
    why: str = ""       # the figures or the reason behind it
    flag: bool = True   # a reader must not miss it: the pages list it under Flags
    mark: str = ""      # the mark the tables give the row ("†")

    def sentence(self) -> str:
        text = ": ".join(part for part in (self.where, self.what, self.why) if part)
        if not self.where:  # about the whole invocation: a sentence of its own
            text = text[:1].upper() + text[1:]
        return f"{self.mark} {text}" if self.mark else text


def flags(found: list[Finding]) -> list[str]:
    """The sentences the pages list under Flags, each once."""
    return list(dict.fromkeys(finding.sentence() for finding in found if finding.flag))


def of_kind(found: list[Finding], *kinds: Kind) -> list[Finding]:
    return [finding for finding in found if finding.kind in kinds]


# -- one results document ----------------------------------------------------------------------------

def document_findings(document: ResultsDocument) -> list[Finding]:
    """Every finding of an invocation, in the order report.html lists its flags."""
    found = []
    if document.status == "running":  # results.json as written after its last finished run: the CLI never got to the end
        found.append(Finding(kind="incomplete", what="incomplete: the invocation did not end (its CLI was stopped, or it is still running)",
                             why=runs_finished(document) + "; their figures are kept"))
    elif document.status != "ok":
        found.append(Finding(kind="status", what=f"the invocation ended with status {document.status}", why=document.error or "no error recorded"))
        if document.planned_runs is not None and len(document.runs) < document.planned_runs:
            found.append(Finding(kind="incomplete", what="incomplete", why=runs_finished(document)))
    if document.time_limit_reached:
        found.append(Finding(kind="time-limit", what="--time-limit reached", why=time_limit_words(document)))
    for row in document.inserts:
        where = formats.row_where(row)
        found += unstable(row, where)
        if row.count_check == "FAILED":
            found.append(Finding(kind="count-failed", where=where,
                                 what="count check FAILED (the database does not hold the events the workers reported)"))
        found += flagged(row, where)
    if document.max_rate is not None:
        found.append(Finding(kind="max-rate", what=document.max_rate.sentence()))
    found += [finding for run in document.insert_runs() for finding in could_not_sustain(run)]
    found += [Finding(kind="crosscheck-flagged", where=check.label,
                      what=f"the database counted {check.difference:+.1%} rows against the workers' report (over 2%)")
              for check in crosscheck.run_checks(document) if check.flagged and check.difference is not None]
    for query in document.queries:
        where = f"query {query.query} at {formats.workers(query.workers)}"
        if query.errors:
            found.append(Finding(kind="query-failed", where=where, what="; ".join(query.errors)))
        if query.answer == "wrong":
            found.append(Finding(kind="wrong-answer", where=where, what="WRONG answer", why=query.answer_detail or ""))
        found += empty_answers(query, where)
    reasons = dict.fromkeys(query.answer_detail for query in document.queries if query.answer == "not checked" and query.answer_detail)
    found += [Finding(kind="answers-not-checked", what="answers not checked", why=reason, flag=False) for reason in reasons]
    for scan in document.scans:
        if scan.problem:
            found.append(Finding(kind="scan-problem", where=formats.workers(scan.workers), what=scan.problem, flag=False))
        if scan.check == "FAILED":
            found.append(Finding(kind="scan-failed", where=f"scan at {formats.workers(scan.workers)}", what="check FAILED", why=scan.problem or ""))
    found += [Finding(kind="with-and-without-queries", where=f"Inserts/s, {formats.workers(row.workers)}", what=without_queries(row), flag=False)
              for row in document.inserts if row.throughput_without_queries is not None]
    for run in document.runs:
        ingestion, conditions = run.report.ingestion, run.report.conditions
        if ingestion is not None:
            found.append(Finding(kind="ingestion", where=run.label, what=ingestion.sentence(), flag=not ingestion.reached))
        if conditions is not None and conditions.server_version_error:
            found.append(Finding(kind="server-version", where=run.label, what="the server's version could not be read",
                                 why=conditions.server_version_error))
    return found + failed_thresholds(document.thresholds)


def runs_finished(document: ResultsDocument) -> str:
    """How many of the invocation's runs finished, of how many planned where that is known."""
    finished = len(document.runs)
    of = f" of {document.planned_runs:,}" if document.planned_runs is not None else ""
    return f"{finished:,}{of} planned run{'' if finished == 1 and not of else 's'} finished"


def time_limit_words(document: ResultsDocument) -> str:
    """What the time limit left undone: runs not started, and how far the last run got."""
    words = [runs_finished(document)]
    last = document.runs[-1].report if document.runs else None
    if last is not None and last.time_limit_reached:
        if last.figures is not None and not last.spec.duration_s:
            words.append(f"the last inserted {last.figures.events:,} of {shapes.timed_events(last.spec):,} events")
        elif last.scan is not None and last.scan.devices_planned:
            words.append(f"the last scanned {last.scan.devices:,} of {last.scan.devices_planned:,} devices")
        elif last.queries:
            done = sum(figures.executions for figures in last.queries.values())
            words.append(f"the last ran {done:,} of {len(last.spec.queries) * last.spec.query_runs * last.spec.workers:,} query executions")
    return "; ".join(words) + " (the figures cover what was done)"


def empty_answers(query: QueryFigures, where: str) -> list[Finding]:
    """Executions that returned no row: their time is that of finding nothing, not of the query's work."""
    share = query.empty_share
    if not share:
        return []
    return [Finding(kind="empty-answers", where=where, what=f"{share:.0%} of the executions returned no row",
                    why="an empty answer measures little (the data holds no row where the query looked: with the events "
                        "shape, fewer devices or more events per device put rows there; with TSBS's, a longer time range)")]


def failed_thresholds(verdicts: list[ThresholdVerdict], where: str = "") -> list[Finding]:
    return [Finding(kind="threshold-failed", where=", ".join(filter(None, [where, f"threshold {verdict.threshold.expression}"])), what="FAILED",
                    why=thresholds.because(verdict))
            for verdict in verdicts if verdict.passed is False]


def unstable(row: InsertRow, where: str) -> list[Finding]:
    if not formats.unstable(row.throughput):
        return []
    return [Finding(kind="unstable", where=where, what=f"unstable, inserts/s vary by {row.throughput.cv:.1%} across runs (above {UNSTABLE_CV:.0%})")]


def flagged(row: InsertRow, where: str) -> list[Finding]:
    """The row's flags (cli/results/row_flags.py), then whether the client may have held the rate back."""
    found = [Finding(kind="row-flag", where=where, what=flag.text) for flag in row.flags]
    bottleneck = client_bottleneck(row, where)
    return found + ([bottleneck] if bottleneck else [])


def client_bottleneck(row: InsertRow, where: str) -> Finding | None:
    resources = row.resources
    if resources is None or not resources.client_may_be_bottleneck:
        return None
    return Finding(kind="client-bottleneck", where=where, what="the client may be the bottleneck", why=resources.bottleneck_reason or "")


def could_not_sustain(run: RunRecord) -> list[Finding]:
    figures = run.report.figures
    rate = figures.rate if figures is not None else None
    if rate is None or rate.sustained:
        return []
    return [Finding(kind="could-not-sustain", where=run.label, what=_not_sustained(rate.target),
                    why=f"{rate.behind_s:.1f} s behind its schedule at the end (limit {rate.limit_s:.2g} s), achieved {rate.achieved:,.0f}/s")]


def _not_sustained(target: float) -> str:
    return f"could not sustain {target:,.0f}/s"


def without_queries(row: InsertRow) -> str:
    """--compare-idle: inserts/s with the query clients beside the same runs without them."""
    alone = row.throughput_without_queries.avg if row.throughput_without_queries else 0.0
    ratio = f" ({row.throughput.avg / alone:.0%})" if alone else ""
    return f"{row.throughput.avg:,.0f} with {formats.plural(row.query_workers, 'query client')}{ratio} beside {alone:,.0f} without them"


def notes(document: ResultsDocument) -> list[str]:
    """The modules' notes, and why a database figure reads n/m (not measured)."""
    found = module_notes(document)
    for row in document.inserts:
        resources = row.resources
        if resources is not None and resources.database_in_workers:
            found.append("Database CPU and memory: an embedded database, its work is inside the workers (in the client's CPU).")
        elif resources is not None:
            found += [f"Database {figure} not measured (n/m): {why}" for figure, why in resources.not_measured.items()]
    return list(dict.fromkeys(found))


def module_notes(document: ResultsDocument) -> list[str]:
    return list(dict.fromkeys(note for run in document.runs for note in run.report.notes))


# -- compared documents -------------------------------------------------------------------------------

def compared_findings(compared: Compared) -> list[Finding]:
    """Every finding of the compared rows, in the order compare.html lists its flags."""
    found = []
    for row in compared.inserts:
        where = compared_where(row)
        if row.sustained == "NO" and row.target_rate is not None:
            found.append(Finding(kind="could-not-sustain", where=where, what=_not_sustained(row.target_rate)))
        found += unstable(row, where)
        if "FAILED" in row.crosscheck or "FLAGGED" in row.crosscheck:
            found.append(Finding(kind="database-side-check", where=where, what=f"database-side check {row.crosscheck}"))
        if row.status != "ok":
            found.append(Finding(kind="status", where=where, what=f"the invocation ended with status {row.status}"))
        found += flagged(row, where)
    for query in compared.queries:
        where = f"{query.database} ({query.source}), query {query.query}"
        if query.unstable:
            found.append(Finding(kind="unstable-executions", where=where, what=f"unstable executions (CV {query.cv or 0:.1%})"))
        if query.errors:
            found.append(Finding(kind="query-failed", where=where, what="; ".join(query.errors)))
        if query.answer == "wrong":
            found.append(Finding(kind="wrong-answer", where=where, what="WRONG answer", why=query.answer_detail or ""))
        found += empty_answers(query, where)
    for scan in compared.scans:
        if scan.check == "FAILED" or scan.status != "ok":
            found.append(Finding(kind="scan-failed", where=f"{scan.database} ({scan.source}), scan at {formats.workers(scan.workers)}",
                                 what=f"check {scan.check}", why=scan.problem or scan.status))
    rows: list[CompareInsertRow | CompareQueryRow | CompareScanRow] = [*compared.inserts, *compared.queries, *compared.scans]
    for marked in rows:
        if marked.differs:
            found.append(Finding(kind="differs", mark="†", where=f"{marked.database} ({marked.source}), {formats.workers(marked.workers)}",
                                 what="measured under other conditions", why="; ".join(marked.differs)))
    for source, document in compared.sources:
        found += failed_thresholds(document.thresholds, f"{document.target} ({source})")
    return found


def compared_where(row: CompareInsertRow) -> str:
    where = f"{row.database} ({row.source}), {formats.workers(row.workers)}" + (f", level {row.level:,}" if row.level is not None else "")
    return where + (f" at {row.target_rate:,.0f}/s" if row.target_rate else "")


# -- a study ------------------------------------------------------------------------------------------

def study_findings(document: StudyDocument, compared: Compared) -> list[Finding]:
    """Cells that did not pass, ranked cells measured under other conditions than the rest of their table,
    query-file queries whose answers differ across targets, and what the cells' own rows show (unstable
    runs, WRONG answers, flagged checks: `compared`, the cells' documents side by side, as the study's
    tables show them). A cell's † is its ranking's."""
    found = [Finding(kind="cell-not-passed", where=f"{cell.target} · {cell.workload} · {cell.workers} worker(s)", what=cell.status,
                     why=cell.error or "")
             for cell in document.cells if cell.status in ("failed", "skipped", "pending")]
    found += [finding for cell in document.cells for finding in failed_thresholds(cell.thresholds, f"{cell.target} · {cell.workload} · {cell.workers} worker(s)")]
    found += [Finding(kind="differs", mark="†", where=f"{row.target} · {ranking.workload} · {row.workers} worker(s)",
                      what="measured under other conditions", why="; ".join(row.differs))
              for ranking in document.rankings for row in ranking.rows if row.differs]
    found += [Finding(kind="answers-differ", where=f"{row.workload} · {row.query}", what="answers differ across targets", why=row.verdict)
              for row in document.agreements if row.differs]
    found += [finding for finding in compared_findings(compared) if finding.kind != "differs"]
    return found
