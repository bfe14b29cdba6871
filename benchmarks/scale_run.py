"""Runs one CLI command of any size as a user would (`python run.py ARGS`) and measures what a long run
costs the tool itself (docs/scale.md): every process of the tool (the CLI, its collector and workers,
the zygote they are forked from) read from /proc every few seconds, its peak resident memory per
process; the wall time; the machine's load average before and after; the size of the folder the
command wrote, of each results.json, report.html and series.csv in it; and the time each check took as
the results say (count check, expected answers' record, query answers, scan checks). Each process that
lives through the run also gets its growth: its memory late in the run against early (after
--settled-s), extrapolated to ten minutes.

    python benchmarks/scale_run.py [--sample-s 3] [--json FILE] -- study seed-004 --output /tmp/s4 ...
    python benchmarks/scale_run.py -- insert --target null --duration 600 -w 4 -r 1 --output /tmp/null

The command's own --output decides where its folder goes (give one: it is measured and left in place).
The tool's processes are found as the CLI's descendants; each is named by its role from its command line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
from _common import REPO_ROOT, print_table

ROLES = (("zygote", "zygote"), ("collector", "collector"), ("worker", "worker"))  # the zygote's command line names the others' modules


def role(process: psutil.Process, root: int) -> str:
    if process.pid == root:
        return "cli"
    try:
        words = " ".join(process.cmdline())
    except psutil.Error:
        return "process"
    for word, name in ROLES:
        if f" {word}" in words or f".{word}" in words:
            if name == "worker" and "--index" in words:
                return f"worker {words.split('--index')[1].split()[0]}"
            return name
    return "process"


class Sampler(threading.Thread):
    """Reads the resident memory of the command and its descendants every `every_s` seconds."""

    def __init__(self, root: int, every_s: float):
        super().__init__(daemon=True)
        self.root, self.every_s = root, every_s
        self.peaks: dict[int, tuple[str, int]] = {}  # pid -> (role, peak bytes)
        self.series: dict[int, list[tuple[float, int]]] = {}  # pid -> (seconds since the start, bytes)
        self.readings = 0
        self.began = time.monotonic()
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            top = psutil.Process(self.root)
        except psutil.Error:
            return
        while not self.stopped.wait(self.every_s):
            try:
                processes = [top, *top.children(recursive=True)]
            except psutil.Error:
                return
            for process in processes:
                try:
                    rss = process.memory_info().rss
                    if not rss:  # ended, not yet reaped
                        continue
                    named = self.peaks.get(process.pid, (role(process, self.root), 0))
                    self.peaks[process.pid] = (named[0], max(named[1], rss))
                    self.series.setdefault(process.pid, []).append((time.monotonic() - self.began, rss))
                except psutil.Error:
                    continue
            self.readings += 1

    def growth(self, settled_s: float) -> dict[str, float]:
        """Per process that lived through the run (15 readings after `settled_s` at least), its growth in
        bytes per ten minutes: the median of its last 5 readings against its first 5 after `settled_s`."""
        found: dict[str, float] = {}
        for pid, readings in self.series.items():
            settled = [(at, rss) for at, rss in readings if at >= settled_s]
            if len(settled) < 15:
                continue
            first, last = settled[:5], settled[-5:]
            span = statistics.fmean(at for at, _ in last) - statistics.fmean(at for at, _ in first)
            grown = (statistics.median(rss for _, rss in last) - statistics.median(rss for _, rss in first)) / span * 600
            name = self.peaks[pid][0]
            found[name] = max(found.get(name, grown), grown)
        return found

    def by_role(self) -> dict[str, int]:
        """The highest peak of each kind of process (every worker's own under `worker N`)."""
        found: dict[str, int] = {}
        for name, peak in self.peaks.values():
            found[name] = max(found.get(name, 0), peak)
        return found


def folder_of(args: list[str]) -> Path | None:
    return Path(args[args.index("--output") + 1]) if "--output" in args else None


def size(path: Path) -> int:
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file()) if path.is_dir() else path.stat().st_size


def checks(folder: Path) -> list[dict[str, Any]]:
    """Each results folder's checks and their times, as results.json has them."""
    found = []
    for results in sorted(folder.rglob("results.json")):
        document = json.loads(results.read_text())
        base = {"folder": str(results.parent.relative_to(folder)), "task": document["task"], "status": document["status"],
                "results_json_bytes": results.stat().st_size,
                **{f"{name}_bytes": (results.parent / name).stat().st_size for name in ("report.html", "series.csv", "readings.csv")
                   if (results.parent / name).is_file()}}
        for run in document["runs"]:
            report = run["report"]
            check = report.get("verification") or {}
            scan = report.get("scan") or {}
            found.append({**base, "run": run["label"], "events": (report.get("figures") or {}).get("events"),
                          "timed_s": (report.get("figures") or scan or {}).get("duration_s"),
                          "count": f"{check.get('counted')} / {check.get('expected')}" if check else None, "count_ok": check.get("ok"),
                          "count_before_s": check.get("count_before_s"), "count_after_s": check.get("count_after_s"), "record_s": report.get("record_s"),
                          "scan_check": None if not scan else ("FAILED" if scan.get("order_problems") or scan.get("count_problems") else "ok"),
                          "scan_rows": scan.get("rows"), "scan_devices": scan.get("devices"), "scan_check_s": scan.get("check_s"),
                          "queries": {name: {"answer": figures.get("answer"), "avg_s": figures.get("avg_s"), "check_s": figures.get("check_s"),
                                             "empty_share": figures.get("empty_share")}
                                      for name, figures in report.get("queries", {}).items()}})
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample-s", type=float, default=3.0, help="seconds between two readings of the processes' memory")
    parser.add_argument("--json", type=Path, help="write the figures to this file as JSON")
    parser.add_argument("--settled-s", type=float, default=20.0, help="growth is measured from this many seconds after the start")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the CLI's arguments")
    options = parser.parse_args()
    args = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not args:
        parser.error("give the CLI's arguments after --")
    load_before = os.getloadavg()
    began = time.monotonic()
    command = subprocess.Popen([sys.executable, str(REPO_ROOT / "run.py"), *args], env={**os.environ, "COLUMNS": os.environ.get("COLUMNS", "120")})
    sampler = Sampler(command.pid, options.sample_s)
    sampler.start()
    code = command.wait()
    sampler.stopped.set()
    sampler.join()
    wall = time.monotonic() - began
    folder = folder_of(args)
    figures = {"command": ["python", "run.py", *args], "exit_code": code, "wall_s": wall, "load_before": load_before, "load_after": os.getloadavg(),
               "cpus": os.cpu_count(), "memory_readings": sampler.readings, "peak_rss_bytes": sampler.by_role(),
               "growth_bytes_per_10_min": sampler.growth(options.settled_s),
               "folder_bytes": size(folder) if folder and folder.exists() else None, "checks": checks(folder) if folder and folder.exists() else []}
    print(f"{' '.join(args)}: {wall:,.0f} s wall, load average {load_before[0]:.1f} before, {figures['load_after'][0]:.1f} after")
    grown = figures["growth_bytes_per_10_min"]
    print_table("Peak resident memory", ["process", "peak RSS MB", "growth MB per 10 min"],
                [[name, f"{peak / 1e6:,.0f}", f"{grown[name] / 1e6:+,.1f}" if name in grown else "-"]
                 for name, peak in sorted(figures["peak_rss_bytes"].items())])
    if figures["folder_bytes"] is not None:
        print(f"folder {folder}: {figures['folder_bytes'] / 1e6:,.1f} MB")
    for check in figures["checks"]:
        print(json.dumps(check))
    if options.json:
        options.json.write_text(json.dumps(figures, indent=2))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
