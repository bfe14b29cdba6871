"""Typed results documents and run reports with known figures, for tests of what reads them."""

from __future__ import annotations

from iotdb_bench.cli.results import summary
from iotdb_bench.cli.results.document import Environment, ResultsDocument, RunRecord
from iotdb_bench.cli.results.tables.sections import Section, document_sections
from iotdb_bench.simulator.measurement.stats import InsertRunFigures, Latency
from iotdb_bench.simulator.report import RunReport, ServerSide, Verification
from iotdb_bench.simulator.spec import RunSpec


def spec(task="insert", module="sqlite", workers=1, **fields) -> RunSpec:
    return RunSpec(run_id="run-test", task=task, target=module, module=module, workers=workers, **fields)


def insert_report(per_second: list[int], duration: float, throughput: float | None = None, level: int = 0, workers: int = 1,
                  p99_ms: float = 5.0, counters: tuple[int, int] | None = None, insert_mode: str = "batch, size 100",
                  ok: bool = True) -> RunReport:
    events = sum(per_second)
    throughput = events / duration if throughput is None else throughput
    figures = InsertRunFigures(
        workers=workers, events=events, prefilled=0, duration_s=duration, throughput=throughput, seed_formula_throughput=throughput,
        latency=Latency(calls=events, mean_ms=1.0, p50_ms=1.0, p95_ms=2.0, p99_ms=p99_ms, max_ms=2 * p99_ms),
        per_second=per_second, client_overhead=0.01, start_skew_s=0.002, retries=0,
    )
    counted = level + events if ok else level + events - 1
    server = ServerSide(counters_at_start={"rows": counters[0]}, counters_at_end={"rows": counters[1]}) if counters else ServerSide()
    return RunReport(
        run_id="run-test", task="insert", spec=spec(workers=workers), start_at=0.0, insert_mode=insert_mode, figures=figures,
        verification=Verification(count_before=level, prefilled=0, inserted=events, expected=level + events, counted=counted,
                                  applicable=True, ok=ok),
        server=server,
    )


def document(runs: list[tuple[int, RunReport]], task="insert", steps=0, target="sqlite", status="ok") -> ResultsDocument:
    """A summarised document; `runs` = (workers, report), a step number per run when `steps`."""
    records = [
        RunRecord(label=f"{workers} workers, run {index}", workers=workers, run=index, step=index if steps else None, report=report)
        for index, (workers, report) in enumerate(runs, start=1)
    ]
    built = ResultsDocument(task=task, target=target, platform="local", status=status, environment=Environment(),
                            spec=spec(task=task, module=target if target in ("sqlite", "postgres") else "sqlite"),
                            worker_counts=sorted({workers for workers, _ in runs}), steps=steps, runs=records)
    summary.summarise(built)
    return built


def section(found: ResultsDocument, name: str) -> Section:
    """The document's section of that name (cli/results/tables/sections.py), as every view receives it."""
    return next(section for section in document_sections(found) if section.name == name)


def hour_long_report(workers: int = 50, seconds: int = 3600, seed: int = 1) -> RunReport:
    """A synthetic insert report of the size a run of `workers` workers for `seconds` makes when every
    worker's 1 s series is kept (the figures of a long run, not a real one): the largest report a run
    of that size sends (the collector leaves the workers' own series out beyond its budget)."""
    import random

    from iotdb_bench.simulator.protocol import WorkerResult

    rng = random.Random(seed)
    report = insert_report([rng.randint(2_000_000, 2_600_000) for _ in range(seconds)], float(seconds), workers=workers)
    report.workers = [WorkerResult(worker=index, started_at=0.0, finished_at=float(seconds), events=45_000 * seconds, calls=45 * seconds,
                                   per_second=[rng.randint(40_000, 52_000) for _ in range(seconds)])
                      for index in range(workers)]
    return report
