"""Rows across saved results documents, as `compare` and a study's comparison tables show them: each is
a document's own row (InsertRow, QueryRow, ScanRow, QueryUnderIngestRow, summarised once in
cli/results/summary.py) with the database, the results folder it comes from and, where they set it
apart from the other rows, the conditions it was measured under (the † of the tables).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from iotdb_bench.cli.results import agreement, crosscheck, run_conditions
from iotdb_bench.cli.results.document import InsertRow, QueryRow, QueryUnderIngestRow, ResultsDocument, ScanRow
from iotdb_bench.simulator.measurement import stats
from iotdb_bench.simulator.queries.query_file import FileQuery
from iotdb_bench.simulator.workload import shapes

Sources = list[tuple[str, ResultsDocument]]


class Conditions(BaseModel):
    """A compared row's key conditions and, when they set it apart from the other rows, how."""

    conditions: dict[str, str] = Field(default_factory=dict, description="server version, batch, shape, platform, node type")
    differs: list[str] = Field(default_factory=list, description="conditions in which this row differs from the others")


class CompareInsertRow(InsertRow, Conditions):
    database: str
    source: str
    primary_key: str
    crosscheck: str
    status: str
    workload: str = Field(default="", description="the workload options of the run, when not the default (schema, measurements, order...)")


class CompareQueryRow(QueryRow, Conditions):
    database: str
    source: str
    cv: float | None = Field(default=None, description="coefficient of variation over every worker's executions")
    unstable: bool | None = None
    agreement: str | None = Field(default=None, description="a query file's query: its answers compared with the other rows' "
                                  "(cli/results/agreement.py); None for the tool's own queries")


class CompareScanRow(ScanRow, Conditions):
    database: str
    source: str
    status: str


class CompareQueryUnderIngestRow(QueryUnderIngestRow):
    database: str
    source: str


@dataclass
class Compared:
    """Every row of the compared documents, by kind, in the documents' order."""

    sources: Sources
    inserts: list[CompareInsertRow] = field(default_factory=list)
    queries: list[CompareQueryRow] = field(default_factory=list)
    scans: list[CompareScanRow] = field(default_factory=list)
    under_ingest: list[CompareQueryUnderIngestRow] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.inserts or self.queries or self.scans)


def compare(sources: Sources) -> Compared:
    return Compared(sources, insert_rows(sources), query_rows(sources), scan_rows(sources), query_under_ingest_rows(sources))


def mark_differences(rows: list[CompareInsertRow] | list[CompareQueryRow] | list[CompareScanRow]) -> None:
    """Mark the rows whose conditions differ from the others' in ways that matter (run_conditions.differences)."""
    for row, differs in zip(rows, run_conditions.differences([row.conditions for row in rows]), strict=True):
        row.differs = differs


def insert_rows(sources: Sources) -> list[CompareInsertRow]:
    """Every saved insert invocation's rows (one per worker count or fill-level step)."""
    rows = []
    for source, document in sources:
        if document.task != "insert":
            continue
        checks = crosscheck.run_checks(document)
        conditions = run_conditions.key_conditions(document)
        for row in document.inserts:
            group = [check for check in checks if check.workers == row.workers and check.step == row.step]
            rows.append(CompareInsertRow(
                **row.model_dump(), database=document.target, source=source, primary_key=document.spec.primary_key.value,
                crosscheck=crosscheck.verdict(group), status=document.status, conditions=conditions,
                workload=shapes.describe(document.spec),
            ))
    mark_differences(rows)
    return rows


def query_rows(sources: Sources) -> list[CompareQueryRow]:
    """Every saved query invocation's rows (one per worker count and query), with the spread of every
    worker's executions."""
    rows = []
    definitions: list[str | None] = []  # of each row's query, when it is a query file's
    for source, document in sources:
        if document.task != "query":
            continue
        conditions = run_conditions.key_conditions(document)
        file = document.spec.query_file
        definitions += [_definition(file.query(row.query)) if file is not None else None for row in document.queries]
        executed = [(run.report, name) for run in document.runs for name in run.report.queries]  # summary.query_rows' order
        for row, (report, name) in zip(document.queries, executed, strict=True):
            seconds = [s for worker in report.workers if name in worker.queries for s in worker.queries[name].seconds]
            spread = stats.spread(seconds) if seconds else None
            rows.append(CompareQueryRow(**row.model_dump(), database=document.target, source=source, conditions=conditions,
                                        cv=spread.cv if spread else None, unstable=spread.unstable if spread else None))
    mark_differences(rows)
    compare_answers(rows, definitions)
    return rows


def compare_answers(rows: list[CompareQueryRow], definitions: list[str | None]) -> None:
    """Each query file's query (the same definition) compared across the rows that answered it."""
    groups: dict[str, list[CompareQueryRow]] = {}
    for row, definition in zip(rows, definitions, strict=True):
        if definition is not None:
            groups.setdefault(definition, []).append(row)
    for group in groups.values():
        names = agreement.labelled([row.database for row in group], [row.source for row in group])
        found = agreement.verdict([agreement.Answered(name, row) for name, row in zip(names, group)])
        for row in group:
            row.agreement = found


def _definition(query: FileQuery | None) -> str | None:
    """The question a query asks: its name, parameters and answer's form (not its texts, one per language,
    which may be added to or mended between runs): rows of the same one answer the same question."""
    asked = None if query is None else query.model_dump_json(include={"name", "parameters", "columns", "ordered", "digits"})
    return None if asked is None else hashlib.sha256(asked.encode()).hexdigest()


def scan_rows(sources: Sources) -> list[CompareScanRow]:
    """Every saved scan invocation's rows (one per worker count)."""
    rows = [CompareScanRow(**row.model_dump(), database=document.target, source=source, status=document.status,
                           conditions=run_conditions.key_conditions(document))
            for source, document in sources if document.task == "scan" for row in document.scans]
    mark_differences(rows)
    return rows


def query_under_ingest_rows(sources: Sources) -> list[CompareQueryUnderIngestRow]:
    """Every saved mixed insert invocation's query rows (under ingest beside idle)."""
    return [CompareQueryUnderIngestRow(**row.model_dump(), database=document.target, source=source)
            for source, document in sources for row in document.queries_under_ingest]


def one_per_run(rows: list[CompareQueryRow]) -> list[CompareQueryRow]:
    """A query invocation's first row of each worker count: its conditions are the run's."""
    first: dict[tuple[str, int], CompareQueryRow] = {}
    for row in rows:
        first.setdefault((row.source, row.workers), row)
    return list(first.values())
