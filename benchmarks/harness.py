"""How fast is the harness itself? Events per second of one worker process through the `null`
target (generation, COPY encoding, timing, histograms, reporting: everything but the database),
for batch sizes 1, 100, 1000 and 10000, beside a naive client measured in the same run: one Python
object per event with `random` calls (generation only, no encoding). Events/s is the tool's own
figure for the timed phase; events per CPU second (the extra CPU of the run over a run of ten
batches, all processes included) is the same cost measured so that other work on the machine does
not change it.

    python benchmarks/harness.py [--seconds 3] [--json]

Goal: >= 10,000,000 events/s per worker process at batch 1000; and for the workloads of issue 10
(`--schema light`, `--measurements 10`, `--order random`, batch 1000) >= 10,000,000 values/s (data
points: events x values per event) per worker process.
"""

from __future__ import annotations

import argparse
import random
import time

from _common import emit_json, print_table, run_tool

BATCH_SIZES = (1, 100, 1000, 10_000)
GOAL_EVENTS_PER_S = 10_000_000
# Rough rates of this path, used only to size each measurement to about --seconds of timed phase.
EXPECTED_RATE = {1: 60_000, 100: 4_000_000, 1000: 12_000_000, 10_000: 15_000_000}
# Workloads at batch 1000: (label, CLI options, rough events per CPU second, for sizing: enough work
# that the CPU of starting the processes, subtracted, does not swamp it).
WORKLOADS = (("--schema light", ["--schema", "light"], 20_000_000), ("--measurements 10", ["--measurements", "10"], 4_000_000),
             ("--order random", ["--order", "random"], 15_000_000))
GOAL_VALUES_PER_S = 10_000_000
TIME_ORIGIN_MS = 1_767_225_600_000


def _null_run(batch: int, events: int, options: list[str] = ()):
    return run_tool(["insert", "--target", "null", "--platform", "local", "-w", "1", "-r", "1",
                     "--batch", str(batch), "--num-inserts", str(events), *options])


def tool_rate(batch: int, seconds: float, options: list[str] = (), expected_rate: float | None = None) -> dict:
    """Events/s of the timed phase as the tool reports it, and events per CPU second: the extra CPU
    of this run over a run of 10 batches, so start-up is left out and a busy machine does not count.
    Values/s: the same times the values per event of the workload `options`."""
    events = max(batch, int((expected_rate or EXPECTED_RATE[batch]) * seconds) // batch * batch)
    small, run = _null_run(batch, 10 * batch, options), _null_run(batch, events, options)
    figures = run.report.figures
    per_cpu_s = (events - 10 * batch) / max(run.cpu_s - small.cpu_s, 1e-9)
    return {"batch": batch, "options": list(options), "events": figures.events, "timed_s": figures.duration_s,
            "events_per_s": figures.throughput, "events_per_cpu_s": per_cpu_s, "values_per_event": figures.values_per_event,
            "values_per_s": figures.values_throughput, "values_per_cpu_s": per_cpu_s * figures.values_per_event,
            "client_overhead": figures.client_overhead}


def naive_rate(batch: int, seconds: float) -> tuple[float, float]:
    """A straightforward client: a dict per event, a `random` call per value, a list per batch.
    Returns (events per second, events per CPU second)."""
    devices = [f"w000000-d{device:06d}" for device in range(10)]
    position = produced = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        events = []
        for _ in range(batch):
            events.append({
                "timestamp": TIME_ORIGIN_MS + position * 100,
                "device_id": random.choice(devices),
                "sequence_number": position,
                "temperature": round(random.uniform(15.0, 25.0), 2),
            })
            position += 1
        produced += len(events)
    return produced / (time.perf_counter() - start), produced / (time.process_time() - cpu)


def _times(ratio: float) -> str:
    return f"{ratio:.2f}x" if ratio < 1 else f"{ratio:.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="approximate timed phase of each measurement")
    parser.add_argument("--json", action="store_true", help="end with one JSON object on the last line")
    args = parser.parse_args()

    results = [tool_rate(batch, args.seconds) for batch in BATCH_SIZES]
    workloads = [{**tool_rate(1000, args.seconds, options, rate), "workload": label} for label, options, rate in WORKLOADS]
    naive, naive_cpu = naive_rate(1000, args.seconds)
    at_1000 = next(r for r in results if r["batch"] == 1000)
    rows = [[f"null target, batch {r['batch']:,}", f"{r['events']:,}", f"{r['timed_s']:.2f}", f"{r['events_per_s']:,.0f}",
             f"{r['events_per_cpu_s']:,.0f}", _times(r['events_per_cpu_s'] / naive_cpu)] for r in results]
    rows.append(["naive: a dict per event, random calls", "-", f"{args.seconds:.2f}", f"{naive:,.0f}", f"{naive_cpu:,.0f}", "1.0x"])
    print_table("Harness throughput, one worker process",
                ["Path", "Events", "Timed s", "Events/s", "Events per CPU s", "vs naive (per CPU s)"], rows)
    met = at_1000["events_per_s"] >= GOAL_EVENTS_PER_S
    print(f"Goal >= {GOAL_EVENTS_PER_S:,} events/s per process at batch 1000: {'met' if met else 'NOT met'} "
          f"({at_1000['events_per_s']:,.0f}/s; {at_1000['events_per_cpu_s']:,.0f} per CPU second).")
    print_table("Workloads, batch 1000, one worker process",
                ["Workload", "Values/event", "Events/s", "Values/s", "Values per CPU s"],
                [[r["workload"], str(r["values_per_event"]), f"{r['events_per_s']:,.0f}", f"{r['values_per_s']:,.0f}",
                  f"{r['values_per_cpu_s']:,.0f}"] for r in workloads])
    workloads_met = all(r["values_per_s"] >= GOAL_VALUES_PER_S for r in workloads)
    print(f"Goal >= {GOAL_VALUES_PER_S:,} values/s per process for each workload: {'met' if workloads_met else 'NOT met'} "
          f"(lowest {min(r['values_per_s'] for r in workloads):,.0f}/s; {min(r['values_per_cpu_s'] for r in workloads):,.0f} per CPU second).")
    if args.json:
        emit_json({"benchmark": "harness", "results": results, "workloads": workloads, "workloads_goal_met": workloads_met,
                   "goal_values_per_s": GOAL_VALUES_PER_S, "naive_events_per_s": naive, "naive_events_per_cpu_s": naive_cpu,
                   "ratio_to_naive_at_batch_1000": at_1000["events_per_s"] / naive,
                   "cpu_ratio_to_naive_at_batch_1000": at_1000["events_per_cpu_s"] / naive_cpu, "goal_events_per_s": GOAL_EVENTS_PER_S,
                   "goal_met": met})


if __name__ == "__main__":
    main()
