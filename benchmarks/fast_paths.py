"""Does the tool measure the database or itself, on every database's fastest insert path? For each
database, the tool's insert (its default fast path, batch 1000) against an independent minimal client
of the same path (benchmarks/references/<database>.py: standard library HTTP and NumPy, or the
database's own driver used directly; none of the tool's modules or encoders), alternating, 1
and 2 workers. Both rates are database-side: all events / (from the common start until the database
holds them all: the tool's timed phase plus its wait for the count, the reference's processes' start
until its count is reached, before they are joined; where a write is committed when acknowledged,
as the tool then waits for no count, until the last acknowledgement, and the count only checks). CPU seconds per million
events: the reference's processes (rusage of their loop, which generates each batch and sends it),
the tool's workers (their rusage) and the whole tool (workers, collector, CLI over the timed phase).

    python benchmarks/fast_paths.py [--databases victoriametrics,questdb,elasticsearch,influxdb,clickhouse] [--workers 1,2] [--rounds 3] [--events 200000] [--json]

Goal: tool / reference >= 0.9 for each database.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import queue
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit_json, median, print_table, run_tool

GOAL = 0.9
BATCH = 1000
DATABASES = ("victoriametrics", "questdb", "questdb_tcp", "elasticsearch", "influxdb", "clickhouse", "timescaledb", "mysql", "cassandra", "iotdb")
VISIBLE_WAIT_S = 60.0


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _reference_process(database: str, worker: int, events: int, ready, go, results) -> None:
    reference = importlib.import_module(f"references.{database}")
    writer = reference.Writer(worker, BATCH)
    flush = getattr(writer, "flush", None) or (lambda: None)  # waits for what an asynchronous send() left in flight
    writer.send(writer.body(events // BATCH))  # a batch past the timed ones: the connection is open before the clock
    flush()
    ready.put(worker)
    go.wait()
    started, cpu = time.time(), _cpu()
    for index in range(events // BATCH):
        writer.send(writer.body(index))
    flush()
    results.put((started, time.time(), _cpu() - cpu))


def _gather(database: str, processes: list, answers) -> list:
    """One answer from each process; one that ended without it (its reference failed) fails the
    benchmark at once instead of leaving it waiting for ever."""
    gathered = []
    while len(gathered) < len(processes):
        try:
            gathered.append(answers.get(timeout=0.5))
        except queue.Empty:
            failed = [process.exitcode for process in processes if process.exitcode not in (None, 0)]
            if failed:
                for process in processes:
                    process.kill()
                raise SystemExit(f"a {database} reference process failed (exit code {failed[0]})") from None
    return gathered


def reference(database: str, workers: int, events: int) -> dict:
    module = importlib.import_module(f"references.{database}")
    module.reset()
    context = multiprocessing.get_context("spawn")
    ready, go, results = context.Queue(), context.Event(), context.Queue()
    processes = [context.Process(target=_reference_process, args=(database, w, events, ready, go, results)) for w in range(workers)]
    for process in processes:
        process.start()
    _gather(database, processes, ready)
    start = time.time()
    go.set()
    reports = _gather(database, processes, results)
    acknowledged = max(report[1] for report in reports)
    # Counted before the processes are joined: their exit (80-120 ms of interpreter shutdown) is not the database's work.
    expected = workers * (events // BATCH + 1) * BATCH
    committed = getattr(module, "COUNTABLE_WHEN_ACKNOWLEDGED", False)  # as for the tool, whose run then waits for no count
    while (counted := module.count()) < expected and not committed:
        if time.time() - acknowledged > VISIBLE_WAIT_S:
            raise SystemExit(f"{database}: the reference's rows were not all visible within {VISIBLE_WAIT_S:g} s ({counted} of {expected})")
        time.sleep(0.05)
    visible = acknowledged if committed else time.time()
    for process in processes:
        process.join()
        if process.exitcode:
            raise SystemExit(f"a {database} reference process failed (exit code {process.exitcode})")
    if counted != expected:  # more: rows left from before reset() or written twice; fewer: lost
        raise SystemExit(f"{database}: the reference's table holds {counted:,} rows, {expected:,} were written")
    total = workers * (events // BATCH) * BATCH
    return {"rate": total / (visible - start), "acknowledged_rate": total / (acknowledged - start),
            "client_cpu_s_per_million": sum(report[2] for report in reports) / total * 1e6}


def tool(database: str, workers: int, events: int) -> dict:
    module = importlib.import_module(f"references.{database}")
    run = run_tool(["insert", "--target", module.TARGET, "-w", str(workers), "-r", "1", "--batch", str(BATCH), "--num-inserts", str(events),
                    *getattr(module, "TOOL_OPTIONS", ())])
    report, row = run.report, run.document.inserts[0]
    figures = report.figures
    waited = report.ingestion.seconds_after_run if report.ingestion is not None and report.ingestion.seconds_after_run else 0.0
    return {"rate": figures.events / (figures.duration_s + waited), "acknowledged_rate": figures.throughput,
            "client_cpu_s_per_million": sum(w.cpu_s for w in report.workers) / figures.events * 1e6,
            "tool_cpu_s_per_million": row.resources.client_cpu_s_per_million if row.resources else None,
            "client_machine_share": row.resources.client_machine_share if row.resources else None}


def measure(database: str, args) -> list[dict]:
    """The rounds of one database at each worker count."""
    results = []
    for workers in (int(w) for w in args.workers.split(",")):
        measured = {"tool": [], "reference": []}
        for round_ in range(args.rounds):
            for side in (("tool", "reference") if round_ % 2 == 0 else ("reference", "tool")):
                measured[side].append((tool if side == "tool" else reference)(database, workers, args.events))
        ratios = [t["rate"] / r["rate"] for t, r in zip(measured["tool"], measured["reference"])]
        def med(side, key, measured=measured):
            values = [m[key] for m in measured[side] if m.get(key) is not None]
            return median(values) if values else None
        results.append({
            "database": database, "workers": workers, "contract": importlib.import_module(f"references.{database}").CONTRACT,
            "tool_rate": med("tool", "rate"), "reference_rate": med("reference", "rate"), "ratio": median(ratios),
            "round_ratios": ratios, "tool_acknowledged_rate": med("tool", "acknowledged_rate"),
            "reference_acknowledged_rate": med("reference", "acknowledged_rate"),
            "tool_workers_cpu_s_per_million": med("tool", "client_cpu_s_per_million"),
            "tool_all_cpu_s_per_million": med("tool", "tool_cpu_s_per_million"),
            "reference_cpu_s_per_million": med("reference", "client_cpu_s_per_million"),
            "tool_client_machine_share": med("tool", "client_machine_share"), "rounds": measured,
        })
        print(f"{database} w={workers}: ratio {results[-1]['ratio']:.3f}", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--databases", default=",".join(DATABASES))
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=200_000, help="events per worker and measurement")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results, failed = [], {}
    for database in args.databases.split(","):
        try:
            results += measure(database, args)
        except SystemExit as stop:  # one database's failure (named below) does not lose the others' figures
            failed[database] = str(stop.code)
            print(f"{database}: FAILED: {stop.code}", flush=True)
        finally:  # nothing of the reference's is left in the database
            importlib.import_module(f"references.{database}").drop()


    def f(value, form="{:.3f}"):
        return "-" if value is None else form.format(value)

    print_table(f"Database-side points/s, batch {BATCH}: medians of {args.rounds} alternating rounds",
                ["Database", "Workers", "Tool", "Reference", "Tool / reference", "Rounds' ratios", "Tool CPU s/M: workers",
                 "whole tool", "Reference CPU s/M", "Whole tool / reference CPU"],
                [[r["database"], str(r["workers"]), f(r["tool_rate"], "{:,.0f}"), f(r["reference_rate"], "{:,.0f}"), f(r["ratio"]),
                  f"{min(r['round_ratios']):.2f}-{max(r['round_ratios']):.2f}", f(r["tool_workers_cpu_s_per_million"]),
                  f(r["tool_all_cpu_s_per_million"]), f(r["reference_cpu_s_per_million"]),
                  f(None if r["tool_all_cpu_s_per_million"] is None else r["tool_all_cpu_s_per_million"] / r["reference_cpu_s_per_million"], "{:.2f}x")]
                 for r in results])
    worst = min((r["ratio"] for r in results), default=0.0)
    for database, why in failed.items():
        print(f"{database}: not measured: {why}")
    print(f"Goal tool / reference >= {GOAL} for each: {'met' if worst >= GOAL and not failed else 'NOT met'} (lowest {worst:.3f})")
    if args.json:
        emit_json({"benchmark": "fast_paths", "batch": BATCH, "results": results, "failed": failed, "goal": GOAL,
                   "goal_met": worst >= GOAL and not failed})
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
