"""The run's report, assembled by the collector once every result is in: the figures of the task
(insert, query, scan, mixed), the count check, the database's own figures and the record's outcome."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from iotdb_bench.simulator.checks import scan
from iotdb_bench.simulator.collector import record_keeping
from iotdb_bench.simulator.errors import described
from iotdb_bench.simulator.measurement import stats
from iotdb_bench.simulator.measurement.query_latency import merge_query_latencies
from iotdb_bench.simulator.modules import DatabaseModule
from iotdb_bench.simulator.report import RunReport, ServerSide, Verification
from iotdb_bench.simulator.workload import shapes

if TYPE_CHECKING:
    from iotdb_bench.simulator.collector.run_state import RunState
    from iotdb_bench.simulator.collector.visibility import VisibilityProbe

log = logging.getLogger("collector")

# Each worker's per-second series stays in the report while all of them hold at most this many values
# (16 workers for 100 minutes, 1,000 workers for 100 s): beyond, the report would grow by megabytes
# (1,000 workers for an hour: 22 MB) on its way through the port-forward and into results.json.
# Their sum (figures.per_second) and every worker's own figures are always kept.
WORKER_SERIES_BUDGET = 100_000
# The database's counters are read until two reads this far apart agree (database-side cross-check).
COUNTER_SETTLE_S = 0.05
COUNTER_SETTLE_READS = 40


def assemble_report(state: RunState, module: DatabaseModule, probe: VisibilityProbe | None) -> RunReport:
    """The run's report from the workers' results, the database's count and its own figures."""
    spec = state.spec
    everyone = [state.results[i] for i in sorted(state.results)]
    results = [result for result in everyone if result.role == "worker"]
    series_kept = sum(len(result.per_second) for result in results) <= WORKER_SERIES_BUDGET
    # The live figures went to the metrics; the report has every one of them in its own fields.
    left_out = {"histogram": "", "response_histogram": "", "live": None} | ({} if series_kept else {"per_second": []})
    report = RunReport(
        run_id=spec.run_id, task=spec.task, spec=spec, start_at=state.start_at,
        insert_mode=module.insert_mode() if spec.task == "insert" else "", notes=module.notes(),
        conditions=state.conditions.model_copy(deep=True),
        workers=[result.model_copy(update={**left_out, "expected": None}) for result in results], worker_series=series_kept,
        time_limit_reached=any(result.time_limit_reached for result in everyone),
    )
    if state.cpu_at_start is not None and state.cpu_at_end is not None:
        report.collector_cpu_s = state.cpu_at_end - state.cpu_at_start
    if spec.task == "scan":
        report.scan = stats.scan_figures(state.start_at, results, scan.WINDOW_ROWS)
        return report
    if spec.task == "query":
        # Without --queries (spec.queries empty) the workers ran the data's own: the names they report.
        names = spec.queries or tuple(dict.fromkeys(name for r in results for name in r.queries))
        report.queries = {
            name: stats.query_figures([r.queries[name] for r in results if name in r.queries]) for name in names
        }
        return report
    if spec.query_workers:
        report.queries_under_ingest = merge_query_latencies([r.query_latencies for r in everyone if r.role == "query-client"], spec.queries)
    markers = 0
    if probe is not None:
        probe.join()
        report.visibility = probe.figures()
        markers = report.visibility.markers
    planned_s = spec.duration_s or (shapes.timed_events(spec) / spec.rate if spec.rate else 0.0)
    figures = report.figures = stats.insert_figures(state.start_at, results, state.totals, shapes.values_per_row(spec),
                                                    rate=spec.rate, planned_s=planned_s)
    if state.count_before is not None:
        # Modules whose acknowledged writes are stored later (queued ingestion) wait, bounded, and
        # say how long storing took; the others return None.
        report.ingestion = module.schema.wait_for_count(state.count_before + figures.prefilled + figures.events + markers,
                                                        state.start_at + figures.duration_s)
    began = time.perf_counter()
    count_after = module.schema.count()
    count_after_s = time.perf_counter() - began
    # A module that stores nothing (the null target) counts None: the check does not apply.
    applicable = count_after is not None and state.count_before is not None
    expected = state.count_before + figures.prefilled + figures.events + markers if applicable else None
    report.verification = Verification(
        count_before=state.count_before, prefilled=figures.prefilled, inserted=figures.events, markers=markers, expected=expected,
        counted=count_after, applicable=applicable, ok=count_after == expected if applicable else None,
        count_before_s=state.count_before_s, count_after_s=count_after_s,
    )
    report.server = server_side(state, module)
    began = time.perf_counter()
    report.expected_record = record_keeping.finish_record(module, state.record_base, results, markers)
    tallied = [result.tally_s for result in results if result.tally_s is not None]
    report.record_s = time.perf_counter() - began + max(tallied, default=0.0)
    return report


def server_side(state: RunState, module: DatabaseModule) -> ServerSide:
    """The database's own view of the run, where it exposes one (database-side cross-check)."""
    server = ServerSide(counters_at_start=state.counters_at_start, storage_bytes_at_start=state.storage_at_start)
    try:
        server.storage_bytes = module.schema.storage_bytes()
        server.counters_at_end = settled_counters(module)
    except Exception as error:
        log.warning("could not read the database's own figures: %s", described(error))
    return server


def settled_counters(module: DatabaseModule) -> dict[str, int] | None:
    """Counters read until two reads agree: nothing is inserting, so a change means statistics of
    a session that just ended are still arriving (PostgreSQL publishes them as a backend exits).
    Counters final when read (`counters_final`) are read once. The caller holds db_lock."""
    previous = None
    for _ in range(COUNTER_SETTLE_READS):
        counters = module.schema.server_counters()
        if counters is None or counters == previous or module.schema.counters_final:
            return counters
        previous = counters
        time.sleep(COUNTER_SETTLE_S)
    return counters
