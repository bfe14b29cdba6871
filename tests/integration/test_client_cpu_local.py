"""The client's CPU of a local run (workers + collector + CLI) against the same processes read straight
from /proc by a reader of the test's own, over the same window: each process counted once (the CLI
reaps the workers and the collector, and their time must not reach the CLI's figure as well), and
never more than the machine's cores had in the timed phase."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

# One line "epoch_seconds pid cpu_seconds" per process every 20 ms, for the CLI and every process under
# it (its children and theirs: the workers are forked from a template process): the process's own
# user + system time (every thread; not the children it has reaped), from /proc/PID/stat.
READER = """
import os, sys, time
cli, ticks = int(sys.argv[1]), os.sysconf("SC_CLK_TCK")
def stat(pid):
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks
while os.path.exists(f"/proc/{cli}"):
    now = time.time()
    found = {int(entry): stat(entry) for entry in os.listdir("/proc") if entry.isdigit()}
    found = {pid: value for pid, value in found.items() if value}
    def under_cli(pid):
        while pid > 1 and pid in found:
            if pid == cli:
                return True
            pid = found[pid][0]
        return False
    for pid, (parent, cpu) in found.items():
        if under_cli(pid):
            print(now, pid, cpu, flush=True)
    time.sleep(0.02)
"""


def independent_cpu(path: Path, start: float, end: float) -> float:
    """Each process's CPU growth from `start` to `end` (its last reading when it ended before), summed."""
    readings: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            readings[parts[1]].append((float(parts[0]), float(parts[2])))

    def at(points: list[tuple[float, float]], moment: float) -> float:
        before = [value for stamp, value in points if stamp <= moment]
        return before[-1] if before else 0.0  # started after the moment: nothing yet

    return sum(at(points, end) - at(points, start) for points in readings.values())


def test_client_cpu_of_a_local_run_is_each_process_once(tmp_path):
    cores = os.cpu_count()
    workers = 4
    cli = subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "run.py"), "insert", "--target", "sqlite", "-w", str(workers), "-r", "1", "--num-inserts", "20000"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    readings = tmp_path / "cpu.txt"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(cli.pid)], stdout=readings.open("w"), preexec_fn=lambda: os.nice(-5))
    try:
        _, stderr = cli.communicate(timeout=300)
    finally:
        reader.wait(timeout=10)
    assert cli.returncode == 0, stderr

    [folder] = sorted((tmp_path / "results").glob("*"))
    document = json.loads((folder / "results.json").read_text())
    report = document["runs"][0]["report"]
    usage = report["resources"]
    start, end = usage["window_start"], usage["window_end"]
    window = end - start
    assert usage["cores"] == cores
    row = document["inserts"][0]["resources"]
    assert row["impossible_cpu"] is None
    reported = row["client_cpu_s"]
    independent = independent_cpu(readings, start, end)
    assert independent > 0.5, "the run was too short to compare CPU readings"
    # /proc counts in clock ticks and the reader reads every 20 ms; a worker that has finished before the
    # last one still closes its database inside the window (its rusage stops at its finish): 25% covers them
    assert reported == pytest.approx(independent, rel=0.25, abs=0.1), (reported, independent, window)
    assert reported <= cores * window * 1.05
    assert sum(worker["cpu_s"] for worker in report["workers"]) <= row["client_cpu_s"]
