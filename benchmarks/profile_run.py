"""Where does the tool's CPU go during a run? Runs `python run.py ARGS` with every process (the CLI,
the collector, each worker) and each of their threads under cProfile (benchmarks/profiling/
sitecustomize.py, loaded through PYTHONPATH; the tool itself is unchanged), then prints per process
the functions with the most time of their own and the cumulative time of the named hot spots.

    python benchmarks/profile_run.py [--top 25] [--keep DIR] -- insert --target postgresql-local -w 1 --batch 1000 --num-inserts 1000000

cProfile adds a cost per Python function call, so call-heavy code looks heavier than it is: read the
shares, and confirm any change with the CPU-per-event benchmarks (postgres_overhead.py, fast_paths.py).
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent


def profile(args: list[str], out: Path) -> int:
    env = {**os.environ, "IOTBENCH_PROFILE_OUT": str(out),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE / "profiling"), str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix="iotdb-bench-profile-") as results:
        completed = subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), *args, "--output", results], env=env,
                                   capture_output=True, text=True)
    if completed.returncode != 0:
        print(completed.stdout[-2000:], completed.stderr[-2000:])
    return completed.returncode


def report(out: Path, top: int) -> None:
    by_process: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(out.glob("*.prof")):
        by_process[path.name.split(".")[0]].append(path)
    for process, paths in sorted(by_process.items()):
        stats = None
        for path in paths:
            try:
                stats = pstats.Stats(str(path)) if stats is None else stats.add(str(path))
            except (EOFError, TypeError, ValueError):
                continue
        if stats is None:
            continue
        print(f"\n===== {process}: {len(paths)} thread profile(s), {stats.total_tt:.2f} s profiled =====")
        stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", type=Path, help="keep the .prof files in this folder (read them with pstats or snakeviz)")
    parser.add_argument("tool_args", nargs=argparse.REMAINDER, help="the CLI's arguments, after --")
    args = parser.parse_args()
    tool_args = args.tool_args[1:] if args.tool_args[:1] == ["--"] else args.tool_args
    out = args.keep or Path(tempfile.mkdtemp(prefix="iotdb-bench-profiles-"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        code = profile(tool_args, out)
        report(out, args.top)
        if code:
            raise SystemExit(f"the tool exited with {code}")
    finally:
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
