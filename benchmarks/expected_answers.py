"""What keeping the expected answers costs a worker: its per-batch path (generate a batch, encode it
as the null target and PostgreSQL do, for COPY) with and without the tally of simulator/checks/expected.py,
in alternating rounds, in one process. CPU time of the process (not wall time: other work on the
machine takes turns on the cores, which wall time would count). Medians over the rounds, with their
range.

    python benchmarks/expected_answers.py [--rounds 9] [--events 2000000] [--batch 1000] [--json]

Goal: the tally adds at most 10% to the per-event cost of generating and encoding, for worker 0
(which also keeps the downsample device's minutes) and for any other worker.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import emit_json, print_table

from iotdb_bench.simulator.checks.expected import Tally
from iotdb_bench.simulator.wire.pg_copy import CopyRowEncoder
from iotdb_bench.simulator.workload.events import EventGenerator

GOAL = 0.10


def one_pass(worker: int, events: int, batch: int, tally: bool) -> float:
    """CPU seconds per 1,000 events of generate (+ tally) + COPY encode over `events` events."""
    generator, encoder = EventGenerator(1, worker, 10), CopyRowEncoder(False)
    kept = Tally.for_worker(worker, 10) if tally else None
    start = time.process_time()
    for first in range(0, events, batch):
        generated = generator.batch(first, batch)
        if kept is not None:
            kept.add(generated)
        encoder.encode(generated)
    if kept is not None:
        kept.result()
    return (time.process_time() - start) / events * 1000


def measure(worker: int, rounds: int, events: int, batch: int) -> dict:
    without, with_tally = [], []
    for _ in range(rounds):  # alternating, so drifts of the machine's load hit both alike
        without.append(one_pass(worker, events, batch, False))
        with_tally.append(one_pass(worker, events, batch, True))
    ratios = [w / o for w, o in zip(with_tally, without)]
    return {"worker": worker, "without_us": statistics.median(without) * 1e6, "with_us": statistics.median(with_tally) * 1e6,
            "ratio": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--events", type=int, default=2_000_000, help="events per pass")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="end with one JSON object on the last line")
    args = parser.parse_args()

    results = [measure(worker, args.rounds, args.events, args.batch) for worker in (0, 1)]
    rows = [[f"worker {r['worker']}" + (" (keeps the downsample minutes)" if r["worker"] == 0 else ""), f"{r['without_us']:.2f}",
             f"{r['with_us']:.2f}", f"{r['ratio'] - 1:+.1%}", f"{r['ratio_min'] - 1:+.1%} to {r['ratio_max'] - 1:+.1%}"] for r in results]
    print_table(f"Generate + COPY encode, batches of {args.batch:,}, {args.rounds} alternating rounds",
                ["worker", "CPU us/1000 events without tally", "with tally", "added (median)", "range over rounds"], rows)
    worst = max(r["ratio"] for r in results) - 1
    print(f"goal: tally adds <= {GOAL:.0%}: {'met' if worst <= GOAL else 'NOT met'} (worst median {worst:+.1%})")
    if args.json:
        emit_json({"benchmark": "expected_answers", "batch": args.batch, "rounds": args.rounds, "results": results, "goal_met": worst <= GOAL})


if __name__ == "__main__":
    main()
