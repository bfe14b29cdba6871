"""The progress line's time: the run's so far, what it has left at its mean rate, and with more runs to
follow the whole invocation's (cli/run/time_left.py), for runs by count, prefill, scans and steps."""

from __future__ import annotations

import io

from rich.console import Console

from iotdb_bench.cli.run.progress import RunProgress, count_text
from iotdb_bench.cli.run.runner import PlannedRun
from iotdb_bench.cli.run.time_left import InvocationTime, RunTime, clock_text
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.spec import RunSpec

BASE = {"workers": 2, "registered": 2, "ready": 2, "finished": 0, "events": 0, "expected_events": 0, "prefilled": 0, "expected_prefill": 0}


def status(**fields) -> Status:
    return Status(**{**BASE, **fields})


def spec(**fields) -> RunSpec:
    return RunSpec(**{"run_id": "r", "target": "null", "module": "null", "workers": 2, "task": "insert", **fields})


def test_clock_text_is_minutes_then_hours():
    assert clock_text(62) == "1:02" and clock_text(3725) == "1:02:05" and clock_text(-3) == "0:00"


def test_a_run_by_count_has_left_what_its_mean_rate_says():
    run = RunTime(spec(num_inserts=50_000_000), now=0.0)
    assert run.left(status(phase="running", events=0, expected_events=100_000_000), now=10.0) is None  # the stretch begins
    assert run.left(status(phase="running", events=10_000_000, expected_events=100_000_000), now=11.0) is None  # too soon
    assert run.left(status(phase="running", events=25_000_000, expected_events=100_000_000), now=60.0) == 150.0


def test_a_prefill_a_duration_and_a_scan_say_their_own_time_left():
    run = RunTime(spec(num_inserts=1000, prefill=1_000_000), now=0.0)
    run.left(status(phase="waiting", prefilled=0, expected_prefill=1_000_000), now=0.0)
    assert run.left(status(phase="waiting", prefilled=250_000, expected_prefill=1_000_000), now=20.0) == 60.0
    timed = RunTime(spec(duration_s=600), now=0.0)
    timed.left(status(phase="running"), now=5.0)
    assert timed.left(status(phase="running"), now=125.0) == 480.0
    scan = RunTime(spec(task="scan"), now=0.0)
    scan.left(status(phase="running", work_done=0, work_total=100_000), now=0.0)
    assert scan.left(status(phase="running", work_done=271, work_total=100_000), now=1.0) is None
    assert scan.left(status(phase="running", work_done=1_000, work_total=100_000), now=4.0) == 4.0 * 99  # 250 devices/s


def test_the_invocation_has_left_the_runs_after_this_one_at_the_finished_runs_mean():
    steps = InvocationTime(planned_runs=10)
    steps.run_started(None)
    assert steps.text(30.0, 90.0) == "0:30, ~1:30 left (all ~19:30)"  # nine more like this one: 120 s each
    for _ in range(2):
        steps.run_started(100.0)
    assert steps.left(10.0, 50.0) == 50.0 + 7 * 100.0
    alone = InvocationTime(planned_runs=1)
    alone.run_started(None)
    assert alone.text(5.0, 20.0) == "0:05, ~0:20 left"


def test_a_scans_line_counts_devices_and_its_time_left():
    screen, now = io.StringIO(), [0.0]
    with RunProgress(Console(file=screen, width=100), clock=lambda: now[0], planned_runs=1) as progress:
        on_status = progress.start(PlannedRun(label="1 worker", spec=spec(task="scan", workers=1), workers=1, run=1))
        for at, done in ((1.0, 0), (11.0, 2_710)):
            now[0] = at
            on_status(status(phase="running", workers=1, work_done=done, work_total=100_000, events=done * 40))
        fields = progress.progress.tasks[0].fields
    assert fields["count"] == "2,710/100,000 devices"
    assert fields["time"] == "0:11, ~5:59 left"  # 271 devices a second: 97,290 left
    assert count_text(40_300_000, 100_000_000, "events") == "40.3M/100M events"
