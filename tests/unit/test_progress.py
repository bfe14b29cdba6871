"""The live progress line of a run says what a large run is waiting for (many workers, many pods,
can take a while to come up) and, near the end, how many workers are done."""

from __future__ import annotations

import io

from rich.console import Console

from iotdb_bench.cli.run.progress import RunProgress
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


def test_what_the_cli_itself_is_doing_replaces_the_phase():
    from iotdb_bench.cli.run.platforms import Notice

    spec = RunSpec(run_id="r", task="insert", target="null", module="null", workers=2, num_inserts=100)
    screen = io.StringIO()
    with RunProgress(Console(file=screen, width=160)) as progress:
        on_status = progress.start(PlannedRun(label="2 workers", spec=spec, workers=2, run=1))
        on_status(Status(phase="running", workers=2, registered=2, ready=2, finished=0, events=120, expected_events=200,
                         prefilled=0, expected_prefill=0))
        on_status(Notice("reconnecting to the collector (3 s: the Kubernetes API server is unreachable: connection refused)"))
    shown = " ".join(screen.getvalue().split())
    assert "120/200" in shown and "reconnecting to the collector (3 s: the Kubernetes API server is unreachable" in shown
