"""The database's own view of each insert run, set beside the client's.

The collector reads the database's counters (PostgreSQL family: `pg_stat_user_tables.n_tup_ins`;
SQLite: the row count) while every worker waits at the start barrier and again after the last
worker has finished, plus the storage the run's tables use. From those:

- database-side insert rate = (counter at end - counter at start) / run duration, where the run
  duration is the same one the client-side rate uses (common start to last worker end): the two
  rates differ exactly when the database saw a different number of rows inserted than the workers
  reported, and a difference over 2% is flagged;
- bytes per event = storage of the tables and their indexes / events counted in them at the end.
"""

from __future__ import annotations

from pydantic import BaseModel

from iotdb_bench.cli.results.document import ResultsDocument, RunRecord, insert_figures

TOLERANCE = 0.02
# Counter names in order of preference: an insert counter if the database keeps one, else a row count.
COUNTER_KEYS = ("rows_inserted", "rows")


class CrossCheck(BaseModel):
    """One insert run seen from the client and from the database."""

    label: str
    workers: int
    step: int | None
    count_check: str
    client_events: int
    client_rate: float
    counter: str | None = None
    db_events: int | None = None
    db_rate: float | None = None
    difference: float | None = None
    flagged: bool = False
    storage_bytes: int | None = None
    bytes_per_event: float | None = None


def run_checks(document: ResultsDocument) -> list[CrossCheck]:
    """One row per insert run of a results document."""
    return [check(run) for run in document.insert_runs()]


def check(run: RunRecord) -> CrossCheck:
    report = run.report
    figures, verification = insert_figures(report), report.verification
    server = report.server
    row = CrossCheck(
        label=run.label, workers=run.workers, step=run.step,
        count_check=verification.verdict() if verification else "-",
        client_events=figures.events, client_rate=figures.throughput,
        storage_bytes=server.storage_bytes if server else None,
    )
    key, start, end = _counter(server.counters_at_start if server else None, server.counters_at_end if server else None)
    if key is not None:
        db_events = end - start
        duration = figures.duration_s
        row.counter, row.db_events, row.db_rate = key, db_events, db_events / duration if duration > 0 else 0.0
        if figures.events:
            row.difference = (db_events - figures.events) / figures.events
            row.flagged = abs(row.difference) > TOLERANCE
    counted = verification.counted if verification else None
    if row.storage_bytes and counted:
        row.bytes_per_event = row.storage_bytes / counted
    return row


def verdict(checks: list[CrossCheck]) -> str:
    """One phrase for the database-side checks of a group of runs: the count check, then the counters."""
    if checks and all(check.count_check == "not applicable" for check in checks):
        return "not applicable"
    count = "count FAILED" if any(check.count_check == "FAILED" for check in checks) else ""
    differences = [check.difference for check in checks if check.difference is not None]
    if not differences:
        return count or "not exposed"
    worst = max(differences, key=abs)
    counters = f"FLAGGED {worst:+.1%}" if any(check.flagged for check in checks) else f"within 2% ({worst:+.1%})"
    return f"{count}, {counters}" if count else counters


def _counter(start: dict[str, int] | None, end: dict[str, int] | None) -> tuple[str | None, int, int]:
    if not start or not end:
        return None, 0, 0
    for key in (*COUNTER_KEYS, *sorted(start)):
        if key in start and key in end:
            return key, start[key], end[key]
    return None, 0, 0
