"""The dead-man switch in pieces: the collector's watch of the CLI's status requests, the workers'
reading of the collector's answers, and how a release is judged left behind."""

from __future__ import annotations

import time

import pytest

from iotdb_bench.cli.run.platforms.releases import DEFAULT_SILENCE_S, Release, silence_limit
from iotdb_bench.simulator.collector.service import Collector
from iotdb_bench.simulator.collector_client import CollectorError
from iotdb_bench.simulator.protocol import WorkerProgress
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.worker import worker as worker_module
from iotdb_bench.simulator.worker.worker import ProgressReporter, RunStopped


def _collector(heartbeat_timeout: float = 5.0) -> Collector:
    spec = RunSpec(run_id="r", task="insert", target="null", module="null", workers=2, num_inserts=10, heartbeat_timeout=heartbeat_timeout)
    return Collector(spec)


@pytest.mark.parametrize("phase", ["preparing", "waiting", "running"])
def test_a_silent_cli_fails_an_active_run(phase):
    collector = _collector()
    collector.state.phase = phase
    collector.state.heard_from_cli = time.monotonic() - 6
    assert collector.state.abandon_if_silent(5.0) is True
    assert collector.state.phase == "failed" and collector.state.abandoned
    assert collector.state.error.startswith("run abandoned: the CLI has not asked for the run's status for 6 s (heartbeat timeout 5 s)")
    # The workers learn it from the answer to their next progress report.
    answer = collector.record_progress(WorkerProgress(worker=1, events=100))
    assert answer.phase == "failed" and "abandoned" in answer.error


def test_a_status_request_is_a_heartbeat():
    collector = _collector()
    collector.state.phase = "running"
    collector.state.heard_from_cli = time.monotonic() - 6
    collector.state.heard()
    assert collector.state.abandon_if_silent(5.0) is False
    assert collector.state.phase == "running" and not collector.state.abandoned


@pytest.mark.parametrize("phase", ["done", "failed"])
def test_a_finished_run_is_not_watched_any_more(phase):
    collector = _collector()
    collector.state.phase, collector.state.error = phase, None
    collector.state.heard_from_cli = time.monotonic() - 600
    assert collector.state.abandon_if_silent(5.0) is True
    assert collector.state.phase == phase and not collector.state.abandoned


def test_the_watch_thread_trips_within_the_bound():
    collector = _collector(heartbeat_timeout=0.3)
    collector.state.phase = "running"
    started = time.monotonic()
    collector.watch_heartbeat()  # returns once the run is over
    assert collector.state.abandoned
    assert 0.3 <= time.monotonic() - started < 0.3 + 0.3 / 4 + 0.2


class ScriptedCollector:
    """Stands in for the collector's HTTP client: answers each progress post from a script."""

    worker = 0

    def __init__(self, answers):
        self.answers, self.posts = list(answers), 0

    def post(self, path, payload):
        self.posts += 1
        answer = self.answers[min(self.posts, len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer


def _report(client, limit: float, monkeypatch, until) -> ProgressReporter:
    monkeypatch.setattr(worker_module, "PROGRESS_INTERVAL_S", 0.01)
    reporter = ProgressReporter(client, lambda: WorkerProgress(worker=0, events=5), unreachable_limit_s=limit)
    reporter.start()
    deadline = time.monotonic() + 5
    while not until(reporter) and time.monotonic() < deadline:
        time.sleep(0.01)
    reporter.stopped.set()
    reporter.join()
    return reporter


def test_a_worker_stops_when_the_collector_says_the_run_failed(monkeypatch):
    client = ScriptedCollector([b'{"phase": "running"}', b'{"phase": "running"}', b'{"phase": "failed", "error": "run abandoned: ..."}'])
    reporter = _report(client, 0, monkeypatch, lambda r: r.halt.is_set())
    assert reporter.halt.is_set() and client.posts == 3
    with pytest.raises(RunStopped, match="the collector stopped the run: run abandoned"):
        reporter.check()


def test_a_worker_stops_when_the_collector_stays_unreachable(monkeypatch):
    client = ScriptedCollector([b"null", CollectorError("collector at x:1 unreachable: refused")])
    reporter = _report(client, 0.1, monkeypatch, lambda r: r.halt.is_set())
    assert reporter.halt.is_set()
    with pytest.raises(RunStopped, match=r"the collector has not been reachable for \d+ s: collector at x:1 unreachable"):
        reporter.check()


def test_without_a_limit_an_unreachable_collector_does_not_stop_a_worker(monkeypatch):
    client = ScriptedCollector([CollectorError("unreachable")])
    reporter = _report(client, 0, monkeypatch, lambda r: client.posts >= 30)
    assert client.posts >= 30 and not reporter.halt.is_set()
    reporter.check()  # does not raise


def test_a_release_is_left_behind_once_its_heartbeat_is_older_than_the_runs_timeout():
    now = time.time()
    assert not Release("r", "ns", "run-1", "t", "insert", last_heard=now - 9, limit_s=10).left_behind(now)
    assert Release("r", "ns", "run-1", "t", "insert", last_heard=now - 11, limit_s=10).left_behind(now)
    kept = Release("r", "ns", "run-1", "t", "insert", last_heard=now, limit_s=10, kept=True)
    assert kept.left_behind(now) and kept.state(now) == "kept with --keep"
    assert silence_limit(0) == DEFAULT_SILENCE_S and silence_limit(12.5) == 12.5


# -- after the run: the collector ends once nobody asks about it ---------------------------------------

def test_an_active_run_is_never_forgotten():
    collector = _collector()
    collector.state.phase = "running"
    collector.state.heard_from_cli = time.monotonic() - 600
    assert collector.state.forgotten(5.0) is False


@pytest.mark.parametrize("phase", ["done", "failed"])
def test_a_run_over_is_forgotten_a_heartbeat_timeout_after_its_end_or_the_last_status_request(phase):
    collector = _collector()
    collector.state.phase = phase
    collector.state.heard_from_cli = time.monotonic() - 600
    # The end is first seen now: the workers of an abandoned run get a heartbeat timeout to hear it.
    assert collector.state.forgotten(5.0) is False
    collector.state.over_since = time.monotonic() - 6
    assert collector.state.forgotten(5.0) is True
    collector.state.heard()  # the CLI asked (it is fetching the report): not yet
    assert collector.state.forgotten(5.0) is False


# -- the CLI's side: a failure after the CLI was suspended says so -------------------------------------

def test_a_failure_after_a_suspension_as_long_as_the_heartbeat_timeout_is_explained_by_it():
    from iotdb_bench.cli.errors import RunFailed, RunTimedOut
    from iotdb_bench.cli.run.platforms.follow import SuspendWatch

    watch = SuspendWatch()
    watch.longest_s = 21.6
    abandoned = RunFailed("run abandoned: the CLI has not asked for the run's status for 9 s (heartbeat timeout 8 s); the workers stop")
    explained = watch.explained(abandoned, 8.0)
    assert str(explained) == "the run was stopped by its dead-man switch while this command was suspended for 22 s (heartbeat timeout 8 s)"
    assert watch.explained(explained, 8.0) is explained  # said once
    other = watch.explained(RunFailed("collector (pod p) ended (exit code 0) before the run's report was fetched"), 8.0)
    assert str(other).endswith("(heartbeat timeout 8 s); then: collector (pod p) ended (exit code 0) before the run's report was fetched")
    timed_out = RunTimedOut("the run did not finish within --timeout 5 s; stopped it")
    assert watch.explained(timed_out, 8.0) is timed_out
    watch.longest_s = 3.0  # shorter than the heartbeat timeout: the switch did not fire because of it
    assert watch.explained(abandoned, 8.0) is abandoned
    assert watch.explained(abandoned, 0.0) is abandoned  # no dead-man switch at all


def test_the_suspend_watch_measures_a_stopped_process():
    import os
    import signal
    import subprocess
    import sys

    script = ("import time\nfrom iotdb_bench.cli.run.platforms.follow import SuspendWatch\n"
              "with SuspendWatch() as watch:\n    print('ready', flush=True)\n    time.sleep(2.5)\nprint(round(watch.longest_s))\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    os.kill(child.pid, signal.SIGSTOP)
    time.sleep(1.5)
    os.kill(child.pid, signal.SIGCONT)
    longest = int(child.stdout.readline())
    child.wait(10)
    assert 1 <= longest <= 3
