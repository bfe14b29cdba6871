"""Insert rates of targets beside a reference target measured in the same run: each round runs every
target once per worker count, in the order given, the reference among them, so that a machine shared
with other work disturbs them alike. Reported per target and worker count: the median inserts/s of
the rounds with their range, and the median of the rounds' ratios to the reference (with its range).

    PGPASSWORD=postgres python benchmarks/target_rates.py --targets questdb-local,victoriametrics-local \\
        [--reference postgresql-local] [--workers 1,4] [--rounds 3] [--batch 1000] [--events 50000] [--json]

Each target must be in config.yaml (or --config) and its server running; every run is a normal
`python run.py insert` with its count check, into the target's default tables (cleaned first).
"""

from __future__ import annotations

import argparse

from _common import emit_json, median, print_table, run_tool


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", required=True, help="comma-separated targets to measure")
    parser.add_argument("--reference", default="postgresql-local", help="the target the others are compared with")
    parser.add_argument("--workers", default="1,4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--events", type=int, default=50_000, help="events per worker and run")
    parser.add_argument("--config", help="config file (default: the tool's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    targets = [t for t in args.targets.split(",") if t and t != args.reference] + [args.reference]
    workers = [int(w) for w in args.workers.split(",")]
    rates: dict[tuple[str, int], list[float]] = {(t, w): [] for t in targets for w in workers}
    for _ in range(args.rounds):
        for target in targets:
            for count in workers:
                command = ["insert", "--target", target, "-w", str(count), "-r", "1", "--batch", str(args.batch),
                           "--num-inserts", str(args.events), "--platform", "local"]
                run = run_tool(command + (["--config", args.config] if args.config else []))
                rates[(target, count)].append(run.throughput)

    rows, payload = [], []
    for target in targets:
        for count in workers:
            mine, reference = rates[(target, count)], rates[(args.reference, count)]
            ratios = [a / b for a, b in zip(mine, reference)]
            rows.append([target, str(count), f"{median(mine):,.0f}", f"{min(mine):,.0f}-{max(mine):,.0f}",
                         f"{median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"])
            payload.append({"target": target, "workers": count, "rates": mine, "ratios_to_reference": ratios})
    print_table(f"inserts/s, batch {args.batch}, {args.events:,} events per worker, {args.rounds} rounds",
                ["target", "workers", "median", "range", f"/ {args.reference} (median of rounds, range)"], rows)
    if args.json:
        emit_json({"reference": args.reference, "batch": args.batch, "events": args.events, "results": payload})


if __name__ == "__main__":
    main()
