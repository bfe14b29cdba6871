"""Does the tool measure PostgreSQL or itself? The tool's COPY insert rate into the local PostgreSQL
(batch 1000, primary key db) against an independent reference measured in the same run
(benchmarks/reference_copy.py: psycopg2, hand-built binary COPY buffers of the same format and
size, one process per worker, one COPY and COMMIT per 1000 events, written without any of the tool's
modules, connections or encoders). The reference runs twice: with every buffer built before the
clock starts (the goal's denominator), and building each buffer right before sending it (what any
client that makes its events has to do). The tool runs twice too: as it runs by default (making each
batch during the timed phase) and with `--pregenerate` (every batch made before the start, as the
pre-built reference does).

Each round measures the three back to back in rotating order, each right after a CHECKPOINT, into a
freshly created table; the ratios are medians of the rounds' ratios (a machine shared with other
work disturbs them least), with their range: the rates' ratios and the CPU goal's ratio alike. Beside the rates, CPU seconds per million events, which
other work on the machine hardly changes: the client's (the tool's workers from their own rusage,
and the whole tool with its collector and CLI; the reference processes' own rusage) and the
database's (its processes over each measurement's timed phase).

    PGPASSWORD=postgres PGDATABASE=iotbench_benchmarks python benchmarks/postgres_overhead.py [--events 1000000] [--rounds 7] [--json]

Connection settings come from the PG* variables, as for the `postgresql-local` target.
Goals: tool / reference >= 0.95 with 1 and with 2 workers; the whole tool's CPU per event (workers, collector,
CLI over the timed phase) <= 1.2x that of the reference that generates its events.
"""

from __future__ import annotations

import argparse
import functools
import os

import reference_copy
from _common import emit_json, median, print_table, run_tool

GOAL_RATIO = 0.95
GOAL_CPU_RATIO = 1.2
BATCH = 1000
TARGET = "postgresql-local"


def checkpoint() -> None:
    """Start each measurement with no dirty pages left by the previous one, so neither side pays for
    flushing the other's writes (needs superuser or pg_checkpoint; skipped with a note otherwise)."""
    import psycopg2

    global _checkpoint_refused
    if _checkpoint_refused:
        return
    connection = reference_copy.connect()
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute("CHECKPOINT")
    except psycopg2.errors.InsufficientPrivilege:
        _checkpoint_refused = True
        print("note: CHECKPOINT not permitted for this user; measurements start with whatever the previous one left")
    finally:
        connection.close()


_checkpoint_refused = False


class DatabaseCpu:
    """CPU seconds of the server listening on PGHOST:PGPORT and its children (as the tool reads them)."""

    def __init__(self):
        from iotdb_bench.cli.run.platforms.local_sampler import DatabaseProcesses

        self.found = DatabaseProcesses((os.environ.get("PGHOST", "localhost"), int(os.environ.get("PGPORT", "5432"))), None)

    def now(self) -> float | None:
        import time

        if self.found.problem:
            return None
        for tree in self.found.trees:
            tree.read(time.time())
        return sum(tree.series.samples[-1].cpu_s for tree in self.found.trees)


def tool(workers: int, events: int, database: DatabaseCpu, pregenerate: bool = False) -> dict[str, float | None]:
    checkpoint()
    run = run_tool(["insert", "--target", TARGET, "-w", str(workers), "-r", "1", "--batch", str(BATCH), "--num-inserts", str(events),
                    *(["--pregenerate"] if pregenerate else [])])
    report, row = run.report, run.document.inserts[0]
    total = report.figures.events
    return {
        "rate": run.throughput,
        "client_cpu_s_per_million": sum(w.cpu_s for w in report.workers) / total * 1e6,
        "tool_cpu_s_per_million": row.resources.client_cpu_s_per_million,
        "collector_cpu_s_per_million": None if row.resources.collector_cpu_s is None else row.resources.collector_cpu_s / total * 1e6,
        "cli_cpu_s_per_million": None if row.resources.cli_cpu_s is None else row.resources.cli_cpu_s / total * 1e6,
        "db_cpu_s_per_million": row.resources.db_cpu_s_per_million,
        "client_overhead": report.figures.client_overhead,
    }


def reference(workers: int, events: int, database: DatabaseCpu, generating: bool) -> dict[str, float | None]:
    checkpoint()
    readings = {}
    result = reference_copy.run(workers, events, BATCH, generating, between=lambda: readings.setdefault("start", database.now()))
    end = database.now()
    total = workers * events
    db = None if end is None or readings.get("start") is None else (end - readings["start"]) / total * 1e6
    # The reading at the end comes after the last process reported: a little of the database's idle
    # time is included, which only makes the reference's figure higher, never the tool's look better.
    return {"rate": result["rate"], "client_cpu_s_per_million": result["client_cpu_s_per_million"], "db_cpu_s_per_million": db}


SIDES = ("tool", "tool_pregenerated", "reference", "reference_generating")
# A round's figures, each one side's figure over another's measured in the same round: the run prints
# their medians over its rounds, benchmarks/pool_rounds.py over the rounds of several runs.
ROUND_RATIOS: dict[str, tuple[str, str, str, str]] = {
    "tool": ("tool", "rate", "reference", "rate"),
    "pregenerated": ("tool_pregenerated", "rate", "reference", "rate"),
    "generating_reference": ("reference_generating", "rate", "reference", "rate"),
    "tool_to_generating": ("tool", "rate", "reference_generating", "rate"),
    # The CPU goal's figure: every process of the tool against a client that makes its events too.
    "cpu": ("tool", "tool_cpu_s_per_million", "reference_generating", "client_cpu_s_per_million"),
}


def rounds_of(measured: dict[str, list[dict]]) -> list[dict[str, dict]]:
    """Per round, each side's measurement: {"tool": {...}, "reference": {...}, ...}."""
    return [dict(zip(measured, round_, strict=True)) for round_ in zip(*measured.values(), strict=True)]


def ratios(rounds: list[dict[str, dict]], name: str) -> list[float]:
    """ROUND_RATIOS[name] of each round that has both figures (a run of an older version of this
    benchmark may lack a side, a tool run its CPU figure)."""
    side, figure, over_side, over_figure = ROUND_RATIOS[name]
    pairs = ((round_.get(side, {}).get(figure), round_.get(over_side, {}).get(over_figure)) for round_ in rounds)
    return [value / over for value, over in pairs if value and over]


def _check_reachable() -> None:
    """One line and exit 1 when the reference cannot log in (PGHOST, PGPORT, PGUSER, PGPASSWORD)."""
    import psycopg2

    try:
        reference_copy.connect().close()
    except psycopg2.OperationalError as error:
        reason = (str(error).strip().splitlines() or ["no reason given"])[-1]
        raise SystemExit(f"cannot log in to PostgreSQL at {os.environ.get('PGHOST', 'localhost')}:{os.environ.get('PGPORT', '5432')} "
                         f"(set PGHOST, PGPORT, PGUSER and PGPASSWORD): {reason}") from None


def _median_of(measured: dict[str, list[dict]], side: str, key: str) -> float | None:
    values = [m[key] for m in measured[side] if m.get(key) is not None]
    return median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events per worker and measurement")
    parser.add_argument("--rounds", type=int, default=7, help="measurements of each side per worker count")
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--json", action="store_true", help="end with one JSON object on the last line")
    args = parser.parse_args()

    _check_reachable()
    database = DatabaseCpu()
    results = []
    for workers in (int(w) for w in args.workers.split(",")):
        measured: dict[str, list[dict]] = {side: [] for side in SIDES}
        measure = {
            "tool": functools.partial(tool, workers, args.events, database),
            "tool_pregenerated": functools.partial(tool, workers, args.events, database, True),
            "reference": functools.partial(reference, workers, args.events, database, False),
            "reference_generating": functools.partial(reference, workers, args.events, database, True),
        }
        for round_ in range(args.rounds):
            # Back to back, in rotating order: a slow phase of a shared machine hits every side of a round.
            order = SIDES[round_ % len(SIDES):] + SIDES[: round_ % len(SIDES)]
            for side in order:
                measured[side].append(measure[side]())
        rounds = rounds_of(measured)
        tool_ratios, to_generating, pregenerated_ratios = (ratios(rounds, name) for name in ("tool", "tool_to_generating", "pregenerated"))

        med = functools.partial(_median_of, measured)
        result = {
            "workers": workers, "events_per_worker": args.events, "rounds": measured,
            "ratio": median(tool_ratios), "round_ratios": tool_ratios, "ratio_to_generating": median(to_generating),
            "pregenerated_ratio": median(pregenerated_ratios), "pregenerated_round_ratios": pregenerated_ratios,
            **{f"{side}_rate": med(side, "rate") for side in SIDES},
            **{f"{side}_client_cpu_s_per_million": med(side, "client_cpu_s_per_million") for side in SIDES},
            **{f"{side}_db_cpu_s_per_million": med(side, "db_cpu_s_per_million") for side in SIDES},
            "tool_all_processes_cpu_s_per_million": med("tool", "tool_cpu_s_per_million"),
            "tool_collector_cpu_s_per_million": med("tool", "collector_cpu_s_per_million"),
            "tool_cli_cpu_s_per_million": med("tool", "cli_cpu_s_per_million"),
            "tool_client_overhead": med("tool", "client_overhead"),
            **{f"tool_pregenerated_{name}": med("tool_pregenerated", f"{name}_cpu_s_per_million") for name in ("tool", "collector", "cli")},
        }
        result["client_cpu_ratio"] = result["tool_client_cpu_s_per_million"] / result["reference_client_cpu_s_per_million"]
        # Paired round by round as the rates are: a slow minute of the machine moves both sides of a round.
        cpu_ratios = ratios(rounds, "cpu")
        result["cpu_round_ratios"] = cpu_ratios
        result["whole_tool_to_generating_cpu_ratio"] = median(cpu_ratios)
        result["whole_tool_to_generating_cpu_ratio_of_medians"] = (
            result["tool_all_processes_cpu_s_per_million"] / result["reference_generating_client_cpu_s_per_million"])
        result["pregenerated_whole_tool_to_generating_cpu_ratio"] = (
            result["tool_pregenerated_tool"] / result["reference_generating_client_cpu_s_per_million"])
        result["pregenerated_whole_tool_to_prebuilt_cpu_ratio"] = (
            result["tool_pregenerated_tool"] / result["reference_client_cpu_s_per_million"])
        results.append(result)

    def figure(value: float | None, form: str = "{:.3f}") -> str:
        return "-" if value is None else form.format(value)

    print_table(
        f"COPY into PostgreSQL, batch {BATCH}: medians of {args.rounds} rounds (each round's figures are in the JSON)",
        ["Workers", "Events/worker", "Tool inserts/s", "Reference", "Reference generating", "Tool / reference (goal)",
         "Rounds' ratios", "Tool / generating"],
        [[str(r["workers"]), f"{r['events_per_worker']:,}", figure(r["tool_rate"], "{:,.0f}"), figure(r["reference_rate"], "{:,.0f}"),
          figure(r["reference_generating_rate"], "{:,.0f}"), f"{r['ratio']:.3f}",
          f"{min(r['round_ratios']):.2f}-{max(r['round_ratios']):.2f}", f"{r['ratio_to_generating']:.3f}"] for r in results])
    print_table(
        "CPU seconds per million events (rusage of each process; the database's processes over each timed phase)",
        ["Workers", "Tool workers", "collector", "CLI", "Whole tool", "Reference", "Reference generating",
         "Whole tool / generating (goal)", "Rounds' ratios", "Ratio of medians", "Workers / reference", "DB: tool", "DB: reference",
         "DB: reference generating", "Tool client overhead"],
        [[str(r["workers"]), figure(r["tool_client_cpu_s_per_million"]), figure(r["tool_collector_cpu_s_per_million"]),
          figure(r["tool_cli_cpu_s_per_million"]), figure(r["tool_all_processes_cpu_s_per_million"]),
          figure(r["reference_client_cpu_s_per_million"]), figure(r["reference_generating_client_cpu_s_per_million"]),
          f"{r['whole_tool_to_generating_cpu_ratio']:.2f}", f"{min(r['cpu_round_ratios']):.2f}-{max(r['cpu_round_ratios']):.2f}",
          f"{r['whole_tool_to_generating_cpu_ratio_of_medians']:.2f}", f"{r['client_cpu_ratio']:.2f}", figure(r["tool_db_cpu_s_per_million"]),
          figure(r["reference_db_cpu_s_per_million"]), figure(r["reference_generating_db_cpu_s_per_million"]),
          figure(r["tool_client_overhead"], "{:.1%}")] for r in results])
    print_table(
        "With --pregenerate (every batch made before the start, as the pre-built reference does): medians of the same rounds",
        ["Workers", "Tool inserts/s", "Tool / reference", "Rounds' ratios", "Workers CPU s/M", "collector", "CLI", "Whole tool",
         "Whole tool / generating", "Whole tool / pre-built"],
        [[str(r["workers"]), figure(r["tool_pregenerated_rate"], "{:,.0f}"), f"{r['pregenerated_ratio']:.3f}",
          f"{min(r['pregenerated_round_ratios']):.2f}-{max(r['pregenerated_round_ratios']):.2f}",
          figure(r["tool_pregenerated_client_cpu_s_per_million"]), figure(r["tool_pregenerated_collector"]), figure(r["tool_pregenerated_cli"]),
          figure(r["tool_pregenerated_tool"]), f"{r['pregenerated_whole_tool_to_generating_cpu_ratio']:.2f}",
          f"{r['pregenerated_whole_tool_to_prebuilt_cpu_ratio']:.2f}"] for r in results])
    worst = min(r["ratio"] for r in results)
    worst_cpu = max(r["whole_tool_to_generating_cpu_ratio"] for r in results)
    print(f"Goal tool / reference >= {GOAL_RATIO}: {'met' if worst >= GOAL_RATIO else 'NOT met'} (lowest {worst:.3f}); "
          f"the whole tool's CPU per event <= {GOAL_CPU_RATIO}x the generating reference's: {'met' if worst_cpu <= GOAL_CPU_RATIO else 'NOT met'} "
          f"(highest {worst_cpu:.2f}x).")
    print(f"With --pregenerate: tool / reference lowest {min(r['pregenerated_ratio'] for r in results):.3f}; the whole tool's CPU per event "
          f"highest {max(r['pregenerated_whole_tool_to_generating_cpu_ratio'] for r in results):.2f}x the generating reference's, "
          f"{max(r['pregenerated_whole_tool_to_prebuilt_cpu_ratio'] for r in results):.2f}x the pre-built one's.")
    if args.json:
        emit_json({"benchmark": "postgres_overhead", "batch": BATCH, "results": results, "goal_ratio": GOAL_RATIO,
                   "goal_met": worst >= GOAL_RATIO and worst_cpu <= GOAL_CPU_RATIO,
                   "database": os.environ.get("PGDATABASE", "postgres")})


if __name__ == "__main__":
    main()
