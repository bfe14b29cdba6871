"""The tool's memory against a run's length (docs/scale.md): runs of the null target of each length given
(1 and 10 minutes by default), every process of the tool read from /proc every few seconds
(scale_run.py's sampler), and the peak resident memory of each kind of process side by side. Memory that
does not grow with a run's length gives the same peaks; tests/integration/test_memory_flat.py is the CI's
shorter check of the same.

    python benchmarks/memory_flat.py [--minutes 1,10] [--workers 4] [--batch 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from _common import REPO_ROOT, print_table
from scale_run import Sampler


def peaks(minutes: float, workers: int, batch: int) -> tuple[dict[str, int], float]:
    """Peak RSS per kind of process (the highest worker's as `worker`) of one null run, and its wall time."""
    with tempfile.TemporaryDirectory(prefix="iotdb-bench-memory-") as folder:
        began = time.monotonic()
        command = subprocess.Popen([sys.executable, str(REPO_ROOT / "run.py"), "insert", "--target", "null", "-w", str(workers), "-r", "1",
                                    "--batch", str(batch), "--duration", f"{minutes * 60:g}", "--output", folder],
                                   stdout=subprocess.DEVNULL, env={**os.environ, "IOTBENCH_PLOTS": "0"})
        sampler = Sampler(command.pid, 2.0)
        sampler.start()
        if command.wait() != 0:
            raise SystemExit("the null run failed")
        sampler.stopped.set()
        sampler.join()
        found: dict[str, int] = {}
        for name, peak in sampler.by_role().items():
            kind = "worker" if name.startswith("worker") else name
            found[kind] = max(found.get(kind, 0), peak)
        return found, time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", default="1,10", help="lengths of the timed phase, minutes, comma-separated")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON object")
    options = parser.parse_args()
    lengths = [float(text) for text in options.minutes.split(",")]
    load_before = os.getloadavg()
    measured = {length: peaks(length, options.workers, options.batch) for length in lengths}
    kinds = sorted({kind for found, _ in measured.values() for kind in found})
    print_table(f"Peak resident memory, MB: null target, {options.workers} workers, batches of {options.batch}",
                ["process", *(f"{length:g} min" for length in lengths)],
                [[kind, *(f"{measured[length][0].get(kind, 0) / 1e6:,.1f}" for length in lengths)] for kind in kinds])
    print(f"load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} CPUs")
    if options.json:
        print(json.dumps({"workers": options.workers, "batch": options.batch, "load_before": load_before, "load_after": os.getloadavg(),
                          "runs": {f"{length:g}": {"wall_s": wall, "peak_rss_bytes": found} for length, (found, wall) in measured.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
