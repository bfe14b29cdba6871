"""Does the tool measure PostgreSQL or itself? The tool's COPY insert rate into the local PostgreSQL
(batch 1000, primary key db) against a raw reference measured in the same run: the same number of
processes sending pre-generated COPY buffers (the very bytes the tool would send) with the same
driver, one COPY and COMMIT per 1000 events, into the same freshly created table. A second
reference does the same but makes each next buffer while the current COPY is in the server, which
is the least any client that generates its events has to do: tool / that reference is what the
harness itself costs beyond generating. Each round measures the three back to back (in rotating
order), each right after a CHECKPOINT; the ratios reported are medians of the rounds' ratios, which
a machine shared with other work disturbs least, with the range of the goal's ratio.

    PGPASSWORD=postgres PGDATABASE=iotbench_benchmarks python benchmarks/postgres_overhead.py [--events 1000000] [--json]

Connection settings come from the PG* variables, as for the `postgresql-local` target.
Goal: tool / raw (pre-generated) >= 0.95.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import time

from _common import emit_json, median, print_table, run_tool

GOAL_RATIO = 0.95
BATCH = 1000
TARGET = "postgresql-local"


def _spec(workers: int, events: int):
    from cli.config import load_config
    from simulator.spec import RunSpec

    target = load_config(None).target(TARGET)
    return RunSpec(run_id="run-raw", task="insert", target=TARGET, module=target.module, connection=target.connection,
                   workers=workers, num_inserts=events, batch=BATCH)


def _raw_worker(spec, index: int, barrier, results, generating: bool) -> None:
    """Pre-generated buffers, or (`generating`) each next buffer made while the current COPY is in
    the server, in the same thread: the least a client that generates its events has to do."""
    from simulator.events import EventGenerator
    from simulator.modules import module_class

    module = module_class(spec.module)(spec)
    batches = EventGenerator(spec.seed, index, spec.devices_per_worker).batches(0, spec.num_inserts, BATCH)
    buffers = [] if generating else [buffer for batch in batches for _table, buffer in module.prepare_batch(batch)]
    module.connect()
    copy_statement = f"COPY events ({', '.join(module._columns)}) FROM STDIN (FORMAT BINARY)"
    connection = module._conn

    def send(buffer: bytes, while_in_flight=lambda: None) -> None:
        with connection.cursor() as cursor, cursor.copy(copy_statement) as copy:
            copy.write(buffer)
            while_in_flight()
        connection.commit()

    def prepare_next() -> None:
        batch = next(batches, None)
        buffers.append(None if batch is None else module.prepare_batch(batch)[0][1])

    barrier.wait()
    started = time.time()
    if generating:
        prepare_next()
        while (buffer := buffers.pop()) is not None:
            send(buffer, prepare_next)
    else:
        for buffer in buffers:
            send(buffer)
    results.put((started, time.time()))
    module.close()


def raw_rate(workers: int, events: int, generating: bool = False) -> float:
    """Events / (last process end - common start), as the tool computes its own figure."""
    from simulator.modules import module_class

    spec = _spec(workers, events)
    setup = module_class(spec.module)(spec)
    setup.connect()
    setup.setup()  # the tool's own DROP and CREATE TABLE
    setup.close()
    checkpoint()
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(workers + 1), context.Queue()
    processes = [context.Process(target=_raw_worker, args=(spec, index, barrier, results, generating)) for index in range(workers)]
    for process in processes:
        process.start()
    barrier.wait()  # every process has its buffers and its connection
    common_start = time.time()
    ends = [results.get()[1] for _ in processes]
    for process in processes:
        process.join()
        if process.exitcode != 0:
            raise SystemExit(f"a raw reference process failed (exit code {process.exitcode})")
    return workers * events / (max(ends) - common_start)


def client_cpu(events: int) -> dict[str, float]:
    """CPU seconds per 1,000,000 events of each part of a worker's work, measured in this process
    (CPU time, so other work on the machine hardly changes it)."""
    from simulator.events import EventGenerator
    from simulator.modules import module_class
    from simulator.stats import CallRecorder

    spec = _spec(1, events)
    module = module_class(spec.module)(spec)
    module.connect()
    module.setup()
    scale = 1_000_000 / events
    clock = time.process_time()
    buffers = [module.prepare_batch(batch) for batch in EventGenerator(spec.seed, 0, spec.devices_per_worker).batches(0, events, BATCH)]
    generate = time.process_time() - clock
    clock = time.process_time()
    for buffer in buffers:
        module.insert_batch(buffer)
    tool_calls = time.process_time() - clock
    copy_statement = f"COPY events ({', '.join(module._columns)}) FROM STDIN (FORMAT BINARY)"
    clock = time.process_time()
    for [(_table, buffer)] in buffers:
        with module._conn.cursor() as cursor, cursor.copy(copy_statement) as copy:
            copy.write(buffer)
        module._conn.commit()
    raw_calls = time.process_time() - clock
    recorder, clock = CallRecorder(time.time()), time.process_time()
    for _ in buffers:
        recorder.record(BATCH, 0.003, time.time())
    record = time.process_time() - clock
    module.close()
    return {"raw sender: COPY and COMMIT of pre-generated buffers": raw_calls * scale,
            "tool worker: the same calls, through the module": tool_calls * scale,
            "tool worker: generating and encoding the events": generate * scale,
            "tool worker: recording the calls (histogram, per-second series)": record * scale}


def checkpoint() -> None:
    """Start each measurement with no dirty pages left by the previous one, so neither side pays for
    flushing the other's writes (needs superuser or pg_checkpoint; skipped with a note otherwise)."""
    import psycopg

    from simulator.modules import module_class

    global _checkpoint_refused
    if _checkpoint_refused:
        return
    spec = _spec(1, 1)
    module = module_class(spec.module)(spec)
    module.connect()
    try:
        module._conn.autocommit = True
        module._conn.execute("CHECKPOINT")
    except psycopg.errors.InsufficientPrivilege:
        _checkpoint_refused = True
        print("note: CHECKPOINT not permitted for this user; measurements start with whatever the previous one left")
    finally:
        module.close()


_checkpoint_refused = False


def tool_rate(workers: int, events: int, overheads: list[float]) -> float:
    checkpoint()
    run = run_tool(["insert", "--target", TARGET, "-w", str(workers), "-r", "1", "--batch", str(BATCH), "--num-inserts", str(events)])
    overheads.append(run.report.figures.client_overhead)
    return run.throughput


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events per worker and measurement")
    parser.add_argument("--rounds", type=int, default=7, help="measurements of each side per worker count")
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--json", action="store_true", help="end with one JSON object on the last line")
    args = parser.parse_args()

    results = []
    for workers in (int(w) for w in args.workers.split(",")):
        rates: dict[str, list[float]] = {"tool": [], "raw": [], "raw_generating": []}
        overheads: list[float] = []
        measure = {
            "tool": functools.partial(tool_rate, workers, args.events, overheads),
            "raw": functools.partial(raw_rate, workers, args.events),
            "raw_generating": functools.partial(raw_rate, workers, args.events, generating=True),
        }
        for round_ in range(args.rounds):
            # Back to back, in rotating order: a slow phase of a shared machine hits every side of a round.
            order = list(measure)[round_ % 3:] + list(measure)[: round_ % 3]
            for side in order:
                rates[side].append(measure[side]())
        ratios = [t / r for t, r in zip(rates["tool"], rates["raw"])]
        results.append({"workers": workers, "events_per_worker": args.events, **rates,
                        **{f"{side}_median": median(values) for side, values in rates.items()},
                        "ratio": median(ratios), "round_ratios": ratios,
                        "ratio_to_raw_generating": median([t / g for t, g in zip(rates["tool"], rates["raw_generating"])]),
                        # share of the tool's workers' timed phase spent outside database calls
                        "tool_client_overhead_median": median(overheads)})
    rows = [[str(r["workers"]), f"{r['events_per_worker']:,}", f"{r['tool_median']:,.0f}", f"{r['raw_median']:,.0f}",
             f"{r['raw_generating_median']:,.0f}", f"{r['ratio']:.3f}", f"{min(r['round_ratios']):.2f}-{max(r['round_ratios']):.2f}",
             f"{r['ratio_to_raw_generating']:.3f}", f"{r['tool_client_overhead_median']:.1%}"] for r in results]
    print_table(f"COPY into PostgreSQL, batch {BATCH}: medians of {args.rounds} rounds (each round's figures are in the JSON)",
                ["Workers", "Events/worker", "Tool inserts/s", "Raw, pre-generated", "Raw, generating in flight",
                 "Tool / raw (goal)", "Rounds' ratios", "Tool / raw generating", "Tool client overhead"], rows)
    cpu = client_cpu(min(args.events, 300_000))
    print_table("Client CPU seconds per 1,000,000 events (one process, CPU time)", ["Work", "CPU s"],
                [[name, f"{seconds:.3f}"] for name, seconds in cpu.items()])
    worst = min(r["ratio"] for r in results)
    print(f"Goal tool / raw >= {GOAL_RATIO}: {'met' if worst >= GOAL_RATIO else 'NOT met'} (lowest {worst:.3f}).")
    if args.json:
        emit_json({"benchmark": "postgres_overhead", "batch": BATCH, "results": results, "client_cpu_per_million_s": cpu,
                   "goal_ratio": GOAL_RATIO,
                   "goal_met": worst >= GOAL_RATIO, "database": os.environ.get("PGDATABASE", "postgres")})


if __name__ == "__main__":
    main()
