"""A study's --dry-run estimate: how long each cell left to run will take.

From what earlier cells of the same study folder measured where they can (the same target's inserts/s,
rows scanned per second, seconds per query execution, and the time each cell took beyond its timed
phases), else from assumed rates of this kind of work, said as such. The size of the data a query or a
scan reads is its insert cell's. A cell's --time-limit caps its estimate.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from iotdb_bench.cli.results.document import ResultsDocument
from iotdb_bench.cli.results.study.document import CellPlan
from iotdb_bench.cli.run.runner import Invocation
from iotdb_bench.simulator.capabilities import Capabilities, Location
from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import TSBS_QUERIES, TSBS_TIME_RANGE_MS, RunSpec
from iotdb_bench.simulator.workload import shapes

# Rough rates for cells nothing measured yet (measured on a 2-core machine against local servers: the
# estimate says when it rests on them). A full-scan query reads every row (count, min/max, stats, newest per
# device); the others read one device's hour or a few hosts' windows.
ASSUMED = {"single": 2_000.0, "batch": 100_000.0, "run_overhead_s": 4.0, "query_s": 0.05, "full_scan_rows_per_s": 5_000_000.0,
           "scan_rows_per_s": 200_000.0, "scan_device_s": 0.001, "check_events_per_s": 1_000_000.0,
           # a B-tree whose key leads with the device takes random devices' rows at this pace once it outgrows the
           # memory that holds it (seed 004's 100m-c: PostgreSQL and SQLite took the first 20M rows at about 110,000/s
           # and the next 80M at 15,000-37,000/s)
           "btree_in_memory_rows": 20_000_000.0, "btree_random_rows_per_s": 30_000.0,
           # a scan whose every device is a pass over the whole table (PostgreSQL: 27M rows/s in such a pass)
           "whole_table_rows_per_s": 25_000_000.0,
           # each worker process started, connected and ended (seed 003's 50 workers: 14 to 23 s a run beyond 4 s)
           "worker_start_s": 0.3,
           # a TSBS query type's execution alone, the client's part included (TimescaleDB's single-groupby-1-1-1: 1.1 ms
           # alone in docs/performance.md), and the check of its answer against the record (the values recomputed), CPU
           # seconds; a type over every host reads, and its check recomputes, that many rows a second (tsbs-devops's cells)
           "tsbs_query_s": 0.003, "tsbs_check_s": 0.005, "tsbs_rows_per_s": 1_000_000.0, "tsbs_check_rows_per_s": 2_000_000.0}
# A device's scan in an embedded database starts without a round trip to a server (seed 004's 4m-c scans of 100,000
# devices: SQLite 26 s, Berkeley DB 21; PostgreSQL 126). A database's own paces, where they are further than 2x from
# the rough rates above, its module declares (`Capabilities.pace`, simulator/capabilities.py).
EMBEDDED_SCAN_DEVICE_S = 0.0001
FULL_SCAN_QUERIES = {"count-events", "temperature-min-max", "temperature-stats", "temperature-stats-per-device", "newest-per-device",
                     "newest-per-device (loose index scan)"}
# TSBS query types that read every host's rows over a window of hours (the others: a few hosts, or each host's newest)
TSBS_ALL_HOSTS = {"double-groupby-1": 12, "double-groupby-5": 12, "double-groupby-all": 12, "high-cpu-all": 12}  # hours read
TSBS_CHECK_ROWS_PER_S = {"high-cpu-all": 500_000.0}  # its answer is every row above the threshold, each compared


def capabilities(module: str) -> Capabilities:
    """The module's declared capabilities: its own pace where it differs from the rough rates, where it runs."""
    try:
        return module_class(module).capabilities
    except Exception:  # a module that cannot be made here (its driver missing) was refused by the plan already
        return Capabilities()


def _or_rough(value: float | None, name: str) -> float:
    return ASSUMED[name] if value is None else value


@dataclass
class Measured:
    """What the completed cells of one database (config target) measured."""

    inserts_per_s: dict[tuple[str, int], float] = field(default_factory=dict)  # (workload, workers) -> inserts/s
    scan_rows_per_s: list[float] = field(default_factory=list)
    query_s: dict[str, float] = field(default_factory=dict)  # query -> mean seconds per execution
    overhead_s: list[float] = field(default_factory=list)  # a run's wall time beyond its timed phase

    def add(self, cell: CellPlan, document: ResultsDocument, seconds: float) -> None:
        for row in document.inserts:
            self.inserts_per_s[(cell.workload, row.workers)] = row.throughput.avg
        self.scan_rows_per_s += [row.rows_per_s.avg for row in document.scans if row.rows_per_s.avg > 0]
        for query in document.queries:
            if query.avg_s is not None:
                self.query_s[query.query] = query.avg_s
        timed = sum(_timed_s(run.report) for run in document.runs)
        if document.runs and seconds > timed:
            self.overhead_s.append((seconds - timed) / len(document.runs))


def _timed_s(report) -> float:
    if report.figures is not None:
        return report.figures.duration_s
    if report.scan is not None:
        return report.scan.duration_s
    if report.workers and report.start_at is not None:
        return max(worker.finished_at for worker in report.workers) - report.start_at
    return 0.0


@dataclass
class CellEstimate:
    seconds: float
    measured: bool  # from earlier cells' figures (else from ASSUMED)
    limited: bool = False  # capped by the cell's --time-limit


class StudyEstimate:
    """Estimates of the cells of a plan (`invocations`: key -> what each cell will run), from `measured`
    (config target -> what its completed cells measured)."""

    def __init__(self, cells: list[CellPlan], invocations: dict[str, Invocation], measured: dict[str, Measured]):
        self.cells = {cell.key: cell for cell in cells}
        self.invocations, self.measured = invocations, measured

    def of(self, cell: CellPlan) -> CellEstimate:
        invocation = self.invocations.get(cell.key)
        if invocation is None:
            return CellEstimate(0.0, True)
        seen = self.measured.get(cell.database, Measured())
        spec = invocation.base
        runs = len(invocation.worker_counts) * (invocation.steps or invocation.runs)
        overhead = (sum(seen.overhead_s) / len(seen.overhead_s) if seen.overhead_s
                    else ASSUMED["run_overhead_s"] + spec.workers * ASSUMED["worker_start_s"])
        if spec.task == "insert":
            rate, measured = self._insert_rate(cell, invocation, seen)
            events = shapes.timed_events(spec)
            timed = spec.duration_s or (events / rate if measured else self._assumed_insert_s(spec, events, rate))
            # the count check, the record of expected answers and the prefill grow with the events
            per_run = timed + (events + spec.prefill) / ASSUMED["check_events_per_s"] + spec.prefill / ASSUMED["batch"]
            if not seen.overhead_s:
                measured = False
        else:
            rows, devices = self._data(cell)
            if spec.task == "scan":
                per_run, measured = self._scan_s(spec, rows, devices, seen, whole_table(spec))
            else:
                per_run, measured = self._query_s(spec, rows, seen, hours=self._hours(cell))
            measured = measured and bool(seen.overhead_s)
        total = runs * (overhead + per_run)
        limit = invocation.time_limit
        if limit and total > limit + overhead:
            return CellEstimate(limit + overhead, measured, limited=True)
        return CellEstimate(total, measured)

    def _insert_rate(self, cell: CellPlan, invocation: Invocation, seen: Measured) -> tuple[float, bool]:
        """Inserts/s of the same workload on this database at the nearest worker count, else assumed."""
        same = [(abs(workers - cell.workers), rate) for (workload, workers), rate in seen.inserts_per_s.items() if workload == cell.workload]
        if same:
            return min(same)[1], True
        spec = invocation.base
        if not spec.batch:
            return ASSUMED["single"] * min(cell.workers, 2), False
        own = capabilities(spec.module).pace
        values = own.batch_values_per_s
        per_worker = values / shapes.values_per_row(spec) if values else _or_rough(own.batch_rows_per_s, "batch")
        return per_worker * min(cell.workers, 2), False

    @staticmethod
    def _assumed_insert_s(spec: RunSpec, events: int, rate: float) -> float:
        """Random devices into a B-tree keyed by device: each row a random page of the key, read and written, once the
        tree outgrows memory (its rate measured in an earlier cell has that in it already)."""
        fits = ASSUMED["btree_in_memory_rows"]
        if events <= fits or not random_into_device_btree(spec):
            return events / rate
        return fits / rate + (events - fits) / min(rate, ASSUMED["btree_random_rows_per_s"])

    def _data(self, cell: CellPlan) -> tuple[int, int]:
        """Rows and devices of the data a query or scan reads: what its insert cell leaves in the tables."""
        data = self.invocations.get(cell.data_cell or "")
        if data is None:
            return 0, 0
        spec = data.base
        devices = spec.model_copy(update={"workers": data.worker_counts[-1]}).all_devices
        per_run = [shapes.timed_events(spec.model_copy(update={"workers": workers})) + spec.prefill for workers in data.worker_counts]
        if spec.duration_s:
            data_cell = self.cells.get(cell.data_cell or "")
            rate = self._insert_rate(data_cell, data, self.measured.get(cell.database, Measured()))[0] if data_cell else ASSUMED["batch"]
            per_run = [round(rate * spec.duration_s) + spec.prefill for _ in data.worker_counts]
        repeats = data.steps or data.runs
        return (per_run[-1] if spec.clean and not data.steps else sum(per_run) * repeats), devices

    @staticmethod
    def _scan_s(spec: RunSpec, rows: int, devices: int, seen: Measured, whole: bool) -> tuple[float, bool]:
        """A scan's time: from the rows scanned per second an earlier scan of this database measured, else
        a time per device and per row, and for a table read whole for each device, a pass per device."""
        if seen.scan_rows_per_s:
            return rows / (sum(seen.scan_rows_per_s) / len(seen.scan_rows_per_s)), True
        declared = capabilities(spec.module)
        per_device = (EMBEDDED_SCAN_DEVICE_S if declared.location is Location.embedded else ASSUMED["scan_device_s"]) + (
            rows / ASSUMED["whole_table_rows_per_s"] if whole else 0.0)
        return (devices * per_device + rows / _or_rough(declared.pace.scan_rows_per_s, "scan_rows_per_s")) / spec.workers, False

    def _hours(self, cell: CellPlan) -> float:
        """The hours of data a query cell's insert cell wrote (TSBS's shapes: its time range), else 0."""
        data = self.invocations.get(cell.data_cell or "")
        return (data.base.time_range_ms or TSBS_TIME_RANGE_MS) / 3_600_000 if data is not None and data.base.tsbs else 0.0

    @staticmethod
    def _query_s(spec: RunSpec, rows: int, seen: Measured, cores: int | None = None, hours: float = 0.0) -> tuple[float, bool]:
        """Each worker runs every query `query_runs` times, one after another (the workers side by side).
        A measured time per execution was measured under the run's own concurrency; an assumed one is an
        execution alone, and more workers than the machine's cores queue for them (seed 003's 50 workers
        on 2 cores: 25 executions share each core). A TSBS type's answer is checked after its executions, on the
        same cores."""
        cores = cores or os.cpu_count() or 1
        queueing = max(1.0, spec.workers / cores)
        tsbs_alone = _or_rough(capabilities(spec.module).pace.tsbs_query_s, "tsbs_query_s")
        seconds, measured = 0.0, True
        for name in spec.queries:
            tsbs = name in TSBS_QUERIES
            # the rows a TSBS type over every host reads (its share of the hours written)
            read = rows * min(1.0, TSBS_ALL_HOSTS[name] / hours) if name in TSBS_ALL_HOSTS and hours else 0.0
            if tsbs:
                check = ASSUMED["tsbs_check_s"] + read / TSBS_CHECK_ROWS_PER_S.get(name, ASSUMED["tsbs_check_rows_per_s"])
                seconds += spec.query_runs * spec.workers * check / min(cores, spec.workers)
            if name in seen.query_s:
                each = seen.query_s[name]
            else:
                if tsbs:
                    alone = tsbs_alone + read / ASSUMED["tsbs_rows_per_s"]
                elif name in FULL_SCAN_QUERIES:
                    alone = max(rows / ASSUMED["full_scan_rows_per_s"], ASSUMED["query_s"])
                else:
                    alone = ASSUMED["query_s"]
                each, measured = alone * queueing, False
            seconds += each * spec.query_runs
        return seconds, measured


def whole_table(spec: RunSpec) -> bool:
    """Whether the target's layout (its module's options) has a scan read the whole table for each device."""
    return _scan_reads_whole_table(spec) is True


def random_into_device_btree(spec: RunSpec) -> bool:
    """Whether an insert sends rows of random devices into a B-tree whose key leads with the device."""
    return spec.order == "random" and capabilities(spec.module).pace.btree and _scan_reads_whole_table(spec) is False


def _scan_reads_whole_table(spec: RunSpec) -> bool | None:
    """The module's layout's answer, None where it has none (no scans: the layout says nothing of its key)."""
    try:
        module = module_class(spec.module)(spec)
        return module.reader.scan_reads_whole_table() if module.capabilities.scans is True else None
    except Exception:  # a module that cannot be made here (its driver missing) was refused by the plan already
        return None


def rough_words() -> str:
    """What the assumed rates are, for the estimate's line."""
    return (f"{ASSUMED['single']:,.0f} single / {ASSUMED['batch']:,.0f} batched inserts/s per worker (up to 2; some databases their own, "
            f"docs/studies.md), {ASSUMED['run_overhead_s']:g} s to start a run and {ASSUMED['worker_start_s']:g} s a worker, "
            f"{ASSUMED['full_scan_rows_per_s'] / 1e6:g}M rows/s per full-scan query, "
            f"{ASSUMED['scan_rows_per_s']:,.0f} rows/s and {ASSUMED['scan_device_s'] * 1000:g} ms a device scanned, "
            f"a pass over the table per device where the key does not lead with the device, "
            f"{ASSUMED['btree_random_rows_per_s']:,.0f} rows/s of random devices into a key led by the device beyond "
            f"{ASSUMED['btree_in_memory_rows'] / 1e6:g}M rows")
