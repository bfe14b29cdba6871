"""Shared by the benchmarks: run the tool's CLI exactly as a user does, print a table, emit JSON."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from iotdb_bench.cli.results import results_files  # noqa: E402  (the tool's own results reader, after the path is set)
from iotdb_bench.cli.results.document import ResultsDocument  # noqa: E402
from iotdb_bench.simulator.report import RunReport  # noqa: E402


@dataclass
class ToolRun:
    wall_s: float  # from starting `python run.py` to its exit
    cpu_s: float  # CPU seconds of the command and every process it started (user + system)
    started: float  # epoch seconds when the command was started
    document: ResultsDocument

    @property
    def report(self) -> RunReport:
        return self.document.runs[0].report

    @property
    def throughput(self) -> float:
        return self.report.figures.throughput


def run_tool(args: list[str], env: dict[str, str] | None = None) -> ToolRun:
    """`python run.py ARGS --output <temp>`; fails loudly with the tool's own message."""
    with tempfile.TemporaryDirectory(prefix="iotdb-bench-benchmark-") as folder:
        started = time.time()
        clock, cpu = time.perf_counter(), children_cpu()
        completed = subprocess.run(
            [sys.executable, str(REPO_ROOT / "run.py"), *args, "--output", folder],
            cwd=folder, capture_output=True, text=True, env={**os.environ, **(env or {})},
        )
        wall, cpu = time.perf_counter() - clock, children_cpu() - cpu
        if completed.returncode != 0:
            raise SystemExit(f"the tool failed ({' '.join(args)}): {completed.stderr.strip()}")
        [saved] = Path(folder).glob("*/results.json")
        return ToolRun(wall, cpu, started, results_files.read(saved.parent))


def children_cpu() -> float:
    """CPU seconds of all finished child processes (the CLI waits for its collector and workers, so
    theirs are included). Unlike wall time, this does not depend on how busy the machine is."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median(values: list[float]) -> float:
    return statistics.median(values)


def print_table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for index, name in enumerate(columns):
        table.add_column(name, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    Console(width=200).print(table)


def machine() -> dict[str, Any]:
    """What the figures depend on, including how busy the machine was (other work skews them)."""
    return {"cpus": os.cpu_count(), "load_average_1m": round(os.getloadavg()[0], 2),
            "ended_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def emit_json(payload: dict[str, Any]) -> None:
    """The machine-readable result: one JSON object, always the last line of the output."""
    print(json.dumps({**payload, "machine": machine()}, separators=(",", ":")))
