"""The parts of detached runs that need no cluster: a release's state for `cleanup`, the reports as the
ConfigMap holds them, where a continuing run starts, and attach's progress line."""

from __future__ import annotations

from iotdb_bench.cli.commands.attach import progress_line
from iotdb_bench.cli.run.platforms.releases import Release
from iotdb_bench.simulator.detached.plan import DetachedStatus, packed, unpacked
from iotdb_bench.simulator.protocol import WorkerResult
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.stream_continuation import continue_after


def test_a_detached_release_is_left_behind_only_past_its_deadline():
    now = 1_000_000.0
    # Silent since it was made (no heartbeat), long past any heartbeat timeout: still within its deadline.
    within = Release("r", "ns", "run-1", "t", "insert", last_heard=now - 3600, limit_s=30, deadline=now + 60)
    assert not within.left_behind(now)
    assert within.state(now) == "detached, 60 s to its deadline"
    past = Release("r", "ns", "run-1", "t", "insert", last_heard=now, limit_s=30, deadline=now - 1)
    assert past.left_behind(now)
    assert past.state(now) == "detached, past its deadline"


def spec(**fields) -> RunSpec:
    return RunSpec(run_id="run-00000001", target="null", module="null", task="insert", workers=2, num_inserts=1000, **fields)


def report_of(ends: list[int | None]) -> RunReport:
    workers = [WorkerResult(worker=index, role="worker", events=1000, started_at=0.0, finished_at=1.0, histogram="", stream_end=end)
               for index, end in enumerate(ends)]
    return RunReport(run_id="run-00000001", task="insert", spec=spec(), start_at=0.0, workers=workers)


def test_a_continuing_run_starts_after_the_furthest_worker():
    assert continue_after(0, spec(), report_of([1000, 1250])) == 1250
    assert continue_after(2000, spec(), report_of([1000, 1250])) == 2000  # never back
    # Without the workers' word, the planned length of the run (prefill share and timed phase).
    assert continue_after(0, spec(stream_offset=3000, prefill=500), report_of([None, None])) == 3000 + 1000 + 250


def test_a_report_survives_the_configmap_unchanged():
    report = report_of([1000, 1250])
    text = packed(report)
    assert text.isascii()
    assert unpacked(text) == report


def test_the_progress_line_says_which_run_and_how_far():
    assert progress_line(DetachedStatus(total=3)) == "starting (0 of 3 runs done)"
    status = DetachedStatus(state="running", total=3, done=1, current=1, label="4 workers", phase="running", events=1500,
                            expected_events=4000)
    assert progress_line(status) == "run 2 of 3 (4 workers): running, 1,500 of 4,000 events; 1 of 3 done"
