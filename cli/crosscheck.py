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

from typing import Any

TOLERANCE = 0.02
# Counter names in order of preference: an insert counter if the database keeps one, else a row count.
COUNTER_KEYS = ("rows_inserted", "rows")


def run_checks(document: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per insert run of a saved results document."""
    if document.get("task") != "insert":
        return []
    return [check(run) for run in document.get("runs", []) if "figures" in run.get("report", {})]


def check(run: dict[str, Any]) -> dict[str, Any]:
    report = run["report"]
    figures, verification = report["figures"], report.get("verification", {})
    server = report.get("server") or {}
    row: dict[str, Any] = {
        "label": run.get("label"),
        "workers": run.get("workers"),
        "step": run.get("step"),
        "count_check": _count_check(verification),
        "client_events": figures["events"],
        "client_rate": figures["throughput"],
        "counter": None,
        "db_events": None,
        "db_rate": None,
        "difference": None,
        "flagged": False,
        "storage_bytes": server.get("storage_bytes"),
        "bytes_per_event": None,
    }
    key, start, end = _counter(server.get("counters_at_start"), server.get("counters_at_end"))
    if key is not None:
        db_events = end - start
        duration = figures["duration_s"]
        row.update(counter=key, db_events=db_events, db_rate=db_events / duration if duration > 0 else 0.0)
        if figures["events"]:
            row["difference"] = (db_events - figures["events"]) / figures["events"]
            row["flagged"] = abs(row["difference"]) > TOLERANCE
    counted = verification.get("counted")
    if row["storage_bytes"] and counted:
        row["bytes_per_event"] = row["storage_bytes"] / counted
    return row


def _count_check(verification: dict[str, Any]) -> str:
    if not verification.get("applicable", True):
        return "not applicable"
    return "ok" if verification.get("ok") else "FAILED"


def _counter(start: dict[str, int] | None, end: dict[str, int] | None) -> tuple[str | None, int, int]:
    if not start or not end:
        return None, 0, 0
    for key in (*COUNTER_KEYS, *sorted(start)):
        if key in start and key in end:
            return key, start[key], end[key]
    return None, 0, 0


def any_flagged(rows: list[dict[str, Any]]) -> bool:
    return any(row["flagged"] for row in rows)
