"""What a run costs around its timed phase: the wall time of a local run of the `null` target (no
database, so nothing but the harness) minus its timed phase, for 1, 4 and 16 workers, split into
setup (command start to the common start: CLI, collector and worker start-up, registration,
barrier) and teardown (last worker end to command exit: report, saving, plots, stopping the
processes), and the cost of each further run of the same command (`-r 3` against `-r 1`: new
collector and workers, barrier, teardown; no CLI start-up, no plots). A second table times the
start-up of each kind of process on its own.

    python benchmarks/orchestration.py [--repeat 3] [--json]

Goal: <= 2 s at 4 workers.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from _common import REPO_ROOT, emit_json, median, print_table, run_tool

WORKER_COUNTS = (1, 4, 16)
EXTRA_RUNS = 2
GOAL_S = 2.0
GOAL_WORKERS = 4


def _command(workers: int, runs: int):
    return run_tool(["insert", "--target", "null", "--platform", "local", "-w", str(workers), "-r", str(runs),
                     "--batch", "1000", "--num-inserts", "10000"])


def measure(workers: int) -> dict:
    """One command with one run, then one with EXTRA_RUNS more: the difference is what a run costs on
    its own (its processes, barrier and teardown), without the once-per-command CLI start and plots."""
    run = _command(workers, 1)
    timed = run.report.figures.duration_s
    setup = run.report.start_at - run.started
    longer = _command(workers, 1 + EXTRA_RUNS)
    longer_timed = sum(r.report.figures.duration_s for r in longer.document.runs)
    per_run = (longer.wall_s - longer_timed - (run.wall_s - timed)) / EXTRA_RUNS
    return {"wall_s": run.wall_s, "timed_s": timed, "overhead_s": run.wall_s - timed, "setup_s": setup,
            "teardown_s": run.wall_s - setup - timed, "per_extra_run_s": per_run, "cpu_s": run.cpu_s}


def import_time(statement: str) -> float:
    """Seconds for a fresh interpreter to run `statement` (interpreter start-up included)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], cwd=REPO_ROOT, check=True)
    return time.perf_counter() - start


PARTS = {
    "interpreter alone": "pass",
    "CLI (python run.py)": "import iotdb_bench.cli.commands.insert",
    "collector process": "import iotdb_bench.simulator.collector.service, uvicorn",
    "worker process (null module)": "import iotdb_bench.simulator.worker.worker, iotdb_bench.simulator.modules.null",
    "plots (matplotlib, after the run)": "from matplotlib.figure import Figure; Figure().savefig('/dev/null', format='png')",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per worker count; medians are reported")
    parser.add_argument("--json", action="store_true", help="end with one JSON object on the last line")
    args = parser.parse_args()

    results = []
    for workers in WORKER_COUNTS:
        runs = [measure(workers) for _ in range(args.repeat)]
        results.append({"workers": workers, "runs": runs,
                        **{f"{key}_median": median([run[key] for run in runs]) for key in runs[0]}})
    print_table(f"Local run of the null target: time around the timed phase (medians of {args.repeat})",
                ["Workers", "Wall s", "Timed s", "Overhead s", "Setup s", "Teardown s", "Each further run s", "CPU s (all processes)"],
                [[str(r["workers"]), *(f"{r[key + '_median']:.2f}" for key in
                                       ("wall_s", "timed_s", "overhead_s", "setup_s", "teardown_s", "per_extra_run_s", "cpu_s"))]
                 for r in results])
    parts = {name: median([import_time(statement) for _ in range(args.repeat)]) for name, statement in PARTS.items()}
    print_table("Start-up of each process on its own (fresh interpreter, medians)", ["Part", "Seconds"],
                [[name, f"{seconds:.2f}"] for name, seconds in parts.items()])
    at_goal = next(r for r in results if r["workers"] == GOAL_WORKERS)["overhead_s_median"]
    print(f"Goal <= {GOAL_S} s at {GOAL_WORKERS} workers: {'met' if at_goal <= GOAL_S else 'NOT met'} ({at_goal:.2f} s).")
    if args.json:
        emit_json({"benchmark": "orchestration", "results": results, "startup_parts_s": parts, "goal_s": GOAL_S,
                   "goal_workers": GOAL_WORKERS, "goal_met": at_goal <= GOAL_S})


if __name__ == "__main__":
    main()
