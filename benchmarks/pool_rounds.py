"""The rounds of several saved `postgres_overhead.py --json` runs taken together.

On this shared 2-core machine one run's median moves by several percent from one hour to the next
(2 workers, 15-21 rounds each: 0.93 to 0.97 on the same code), more than the differences the goals
are about. Every round measures each side back to back, so a round's ratios are comparable across
runs of the same worker count: their pooled median and quartiles say more than any one run's.

    python benchmarks/pool_rounds.py benchmarks/results/postgres_overhead-*.json

Each file is a run's output (its last line that is a JSON object is read, so a saved terminal log
works too). Prints, per worker count, each run and then all of their rounds together: the median of
the rounds' ratios with the quartiles and the range.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from _common import print_table
from postgres_overhead import ratios, rounds_of

# The columns: a round's ratios (postgres_overhead.ROUND_RATIOS), by name.
FIGURES = {
    "Tool / pre-built (goal ≥ 0.95)": "tool",
    "--pregenerate / pre-built": "pregenerated",
    "Generating reference / pre-built": "generating_reference",
    "Tool / generating reference": "tool_to_generating",
    "Whole tool's CPU / generating reference's (goal ≤ 1.2)": "cpu",
}


def read_run(path: Path) -> dict:
    """The run's JSON object (its output's last line that is one); SystemExit with one line otherwise."""
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise SystemExit(f"cannot read {path}: {error.strerror}") from None
    for line in reversed(lines):
        if line.startswith("{"):
            try:
                run = json.loads(line)
            except json.JSONDecodeError as error:
                raise SystemExit(f"{path}: its last JSON line does not parse ({error.msg})") from None
            if run.get("benchmark") == "postgres_overhead":
                return run
            break
    raise SystemExit(f"{path}: no output of `postgres_overhead.py --json` in it (its last line that is a JSON object)")


def summary(values: list[float]) -> str:
    """Median (quartiles; range), or the one value."""
    if len(values) < 2:
        return f"{values[0]:.3f}" if values else "-"
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{q2:.3f} ({q1:.2f}-{q3:.2f}; {min(values):.2f}-{max(values):.2f})"


def by_worker_count(runs: list[tuple[str, dict]]) -> dict[int, list[tuple[str, list[dict[str, dict]]]]]:
    """Per worker count, each run's label and rounds."""
    by_workers: dict[int, list[tuple[str, list[dict[str, dict]]]]] = {}
    for label, run in runs:
        for result in run["results"]:
            by_workers.setdefault(result["workers"], []).append((label, rounds_of(result["rounds"])))
    return by_workers


def table_rows(runs: list[tuple[str, list[dict[str, dict]]]]) -> list[list[str]]:
    every_round = [round_ for _, rounds in runs for round_ in rounds]
    rows = []
    for label, rounds in [*runs, ("all rounds together", every_round)]:
        figures = [summary(ratios(rounds, name)) for name in FIGURES.values()]
        rows.append([label, str(len(rounds)), *figures])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="outputs of `postgres_overhead.py --json`")
    args = parser.parse_args()
    runs = [(path.stem.removeprefix("postgres_overhead-"), read_run(path)) for path in args.files]
    for workers, by_run in sorted(by_worker_count(runs).items()):
        print_table(f"{workers} worker(s): median of the rounds' ratios (quartiles; range)",
                    ["Run", "Rounds", *FIGURES], table_rows(by_run))


if __name__ == "__main__":
    main()
