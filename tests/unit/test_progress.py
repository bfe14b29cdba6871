"""The live progress line of a run says what a large run is waiting for (many workers, many pods,
can take a while to come up) and, near the end, how many workers are done."""

from __future__ import annotations

import io

from rich.console import Console

from iotdb_bench.cli.run.progress import CurrentRate, RunProgress, live_figures
from iotdb_bench.cli.run.runner import PlannedRun
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.spec import RunSpec


def shown(**status) -> str:
    spec = RunSpec(run_id="r", task="insert", target="null", module="null", workers=1000, num_inserts=100)
    screen = io.StringIO()
    with RunProgress(Console(file=screen, width=120)) as progress:
        on_status = progress.start(PlannedRun(label="1000 workers", spec=spec, workers=1000, run=1))
        defaults = {"workers": 1000, "registered": 0, "ready": 0, "finished": 0, "events": 0, "expected_events": 100_000,
                    "prefilled": 0, "expected_prefill": 0}
        on_status(Status(**{**defaults, **status}))
    return " ".join(screen.getvalue().split())


def test_while_waiting_it_counts_the_workers_ready_at_the_barrier():
    assert "waiting: 734/1,000 workers ready" in shown(phase="waiting", ready=734)


def test_at_the_end_of_a_run_it_counts_the_workers_done():
    assert "running: 998/1,000 workers done" in shown(phase="running", finished=998, events=99_800)
    assert "running" in shown(phase="running", events=5_000) and "done" not in shown(phase="running", events=5_000)


def test_while_running_it_shows_the_current_rate_and_the_last_intervals_p99():
    """As `pgbench -P`: the rate over the last two seconds of statuses (not since the start) and the
    p99 of the workers' last progress interval, from the collector's status."""
    spec = RunSpec(run_id="r", task="insert", target="null", module="null", workers=2, num_inserts=100_000)
    now = [100.0]
    screen = io.StringIO()
    with RunProgress(Console(file=screen, width=200), clock=lambda: now[0]) as progress:
        on_status = progress.start(PlannedRun(label="2 workers", spec=spec, workers=2, run=1))
        defaults = {"workers": 2, "registered": 2, "ready": 2, "finished": 0, "expected_events": 200_000, "prefilled": 0,
                    "expected_prefill": 0, "phase": "running"}
        for at, events, p99 in [(100.0, 0, None), (101.0, 10_000, 0.8), (102.0, 20_000, 0.9), (103.0, 50_000, 2.5), (104.0, 80_000, 2.5)]:
            now[0] = at
            on_status(Status(**defaults, events=events, interval_p99_ms=p99))
        line = progress.progress.tasks[0].fields["phase"]
    # 102 s -> 104 s: 60,000 events in 2 s (the first 10,000 a second were before the window)
    assert line == "running, now 30,000/s, p99 2.5 ms"


def test_the_live_figures_wait_for_something_to_show():
    assert live_figures(None, None) == ""
    assert live_figures(12_345.6, None) == ", now 12,346/s"
    assert live_figures(None, 0.0123) == ", p99 0.0123 ms"
    rate = CurrentRate()
    assert rate.add(0.0, 0) is None and rate.add(0.2, 100) is None  # under half a second: no rate yet
    assert rate.add(1.0, 1000) == 1000.0


def test_what_the_cli_itself_is_doing_replaces_the_phase():
    from iotdb_bench.cli.run.platforms import Notice

    spec = RunSpec(run_id="r", task="insert", target="null", module="null", workers=2, num_inserts=100)
    screen = io.StringIO()
    with RunProgress(Console(file=screen, width=160, force_terminal=True)) as progress:
        on_status = progress.start(PlannedRun(label="2 workers", spec=spec, workers=2, run=1))
        on_status(Status(phase="running", workers=2, registered=2, ready=2, finished=0, events=120, expected_events=200,
                         prefilled=0, expected_prefill=0))
        on_status(Notice("reconnecting to the collector (3 s: the Kubernetes API server is unreachable: connection refused)"))
        # drawn at once, not at the next status (none comes while the collector is out of reach)
        assert "reconnecting to the collector" in screen.getvalue()
    shown = " ".join(screen.getvalue().split())
    assert "120/200" in shown and "reconnecting to the collector (3 s: the Kubernetes API server is unreachable" in shown
