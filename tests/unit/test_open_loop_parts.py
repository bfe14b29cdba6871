"""Open loop (--rate) on known inputs: the schedule's intended starts, the call timer's two latencies,
their histograms merged across workers, the sustained verdict, the rate search's choices and the
table that shows them."""

from __future__ import annotations

import time

import pytest
from rich.console import Console

from iotdb_bench.cli.report import tables
from iotdb_bench.cli.results.rate_search import RateStep, answer, next_rate
from iotdb_bench.cli.run.progress import achieved_against_target
from iotdb_bench.simulator.measurement import stats
from iotdb_bench.simulator.measurement.timing import CallTimer
from iotdb_bench.simulator.protocol import Status, WorkerResult
from iotdb_bench.simulator.worker.pacing import ClosedLoop, OpenLoop
from iotdb_bench.simulator.workload.schedule import Schedule, behind_limit_s
from tests.factories import document, insert_report, section


def test_the_schedule_spaces_each_workers_calls_and_staggers_the_workers():
    # 4,000 events/s over 4 workers in calls of 100: each worker one call per 0.1 s, worker i i/4 of that late.
    schedules = [Schedule(4000, 4, index, 100, start=10.0) for index in range(4)]
    starts = []
    for schedule in schedules:
        for _ in range(3):
            starts.append(schedule.started(100, at=0.0))
    assert starts[:3] == pytest.approx([10.0, 10.1, 10.2])
    assert sorted(starts) == pytest.approx([10.0 + 0.025 * k for k in range(12)])  # together: evenly, at 4,000 events/s


def test_a_short_call_is_due_sooner_so_the_events_keep_their_rate():
    schedule = Schedule(1000, 1, 0, 100, start=0.0)
    schedule.started(100, at=0.0)
    schedule.started(30, at=0.1)  # a short last batch
    assert schedule.next_start() == pytest.approx(0.13)


def test_lag_and_how_far_behind_a_worker_ends():
    schedule = Schedule(100, 1, 0, 10, start=0.0)  # a call of 10 events every 0.1 s
    assert schedule.started(10, at=0.0) == 0.0
    assert schedule.started(10, at=2.1) == pytest.approx(0.1)  # a stall: this call started 2 s late
    assert schedule.max_lag_s == pytest.approx(2.0)
    assert schedule.behind_s(at=2.15, all_sent=False) == pytest.approx(1.95)  # the next call was due at 0.2
    assert schedule.behind_s(at=2.15, all_sent=True) == pytest.approx(2.0)  # every event sent: the last call's lag
    for k in range(2, 30):  # catching up: calls back to back
        schedule.started(10, at=2.1 + 0.001 * k)
    assert schedule.behind_s(at=3.0, all_sent=False) == 0.0


def test_the_behind_limit_is_one_second_or_5_percent_of_a_short_run():
    assert behind_limit_s(60) == 1.0 and behind_limit_s(3) == pytest.approx(0.15)


def test_a_call_started_late_is_charged_its_wait_in_response_time_only():
    recorder = stats.CallRecorder(common_start=time.time())
    now = time.perf_counter()
    timer = CallTimer(OpenLoop(Schedule(10, 1, 0, 1, start=now - 1.0)), recorder)
    assert timer.turn(1, deadline=float("inf"))  # due a second ago: no wait
    done = timer.begin(1)
    done()
    commit = timer.begin(0, scheduled=False)  # off the schedule: its response time is its service time
    commit()
    service, response = recorder.histogram, recorder.response_histogram
    assert service.get_total_count() == response.get_total_count() == 2
    assert response.get_max_value() >= 1_000_000 and service.get_max_value() < 50_000  # microseconds
    assert response.get_min_value() == pytest.approx(service.get_min_value(), abs=50)  # the commit


def test_a_closed_loop_timer_records_no_response_time_and_a_due_call_waits():
    recorder = stats.CallRecorder(common_start=time.time())
    closed = CallTimer(ClosedLoop(), recorder, shared=True)
    assert closed.turn(10, deadline=float("inf")) and not closed.turn(10, deadline=0.0)
    closed.begin(10)()
    assert recorder.calls == 1 and recorder.encoded_response_histogram() == ""
    now = time.perf_counter()
    timer = CallTimer(OpenLoop(Schedule(10, 1, 0, 1, start=now + 0.05)), recorder)
    assert timer.turn(1, deadline=float("inf")) and time.perf_counter() >= now + 0.05
    assert not timer.turn(1, deadline=now + 0.1)  # the next call (due at +0.15) would start after the deadline


def worker_result(worker: int, calls: list[tuple[float, float]], behind_s: float = 0.0, max_lag_s: float = 0.0) -> WorkerResult:
    recorder = stats.CallRecorder(0.0)
    for service, response in calls:
        recorder.record(10, service, 0.5, response)
    return WorkerResult(worker=worker, started_at=0.0, finished_at=2.0, events=recorder.events, calls=recorder.calls,
                        histogram=recorder.encoded_histogram(), response_histogram=recorder.encoded_response_histogram(),
                        per_second=recorder.windows.values, behind_s=behind_s, max_lag_s=max_lag_s)


def test_both_histograms_merge_across_workers_and_the_run_is_judged_on_its_furthest_worker():
    calm = worker_result(0, [(0.002, 0.002)] * 99)
    stalled = worker_result(1, [(0.002, 1.5 + k / 100) for k in range(50)] + [(0.002, 0.002)] * 50, behind_s=0.4, max_lag_s=1.9)
    totals = stats.Totals()
    for one in (calm, stalled):
        totals.add(stats.HdrHistogram.decode(one.histogram), one.per_second, stats.HdrHistogram.decode(one.response_histogram))
    for merged in (stats.insert_figures(0.0, [calm, stalled], rate=1000, planned_s=2.0),
                   stats.insert_figures(0.0, [calm, stalled], totals, rate=1000, planned_s=2.0)):
        assert merged.latency.calls == merged.response_latency.calls == 199
        assert merged.latency.p99_ms == pytest.approx(2.0, rel=0.01)
        assert merged.response_latency.p99_ms >= 1500 and merged.response_latency.p50_ms == pytest.approx(2.0, rel=0.01)
        assert merged.rate.behind_s == 0.4 and merged.rate.max_lag_s == 1.9
        assert merged.rate.limit_s == pytest.approx(0.1) and not merged.rate.sustained  # 0.4 s behind a 2 s run
        assert merged.rate.achieved == pytest.approx(1990 / 2.0)
    closed = stats.insert_figures(0.0, [calm])
    assert closed.rate is None and closed.response_latency is None


def steps_against(ceiling: float, max_rate: float | None = None) -> list[RateStep]:
    """The search run against a target that holds `ceiling` events/s and no more."""
    steps: list[RateStep] = []
    while (rate := next_rate(steps, max_rate)) is not None:
        ok = rate <= ceiling
        steps.append(RateStep(run_id="r", target_rate=rate, achieved_rate=min(rate, ceiling), response_p50_ms=1, response_p99_ms=1 if ok else 900,
                              service_p99_ms=1, sustained=ok, passed=ok))
    return steps


def test_the_search_doubles_then_bisects_to_within_5_percent():
    steps = steps_against(7300)
    assert [step.target_rate for step in steps[:4]] == [1000, 2000, 4000, 8000]
    found = answer(steps)
    assert 7300 / 1.05 <= found <= 7300 and len(steps) < 12


def test_the_search_halves_from_a_failing_start_stops_at_max_rate_and_can_find_nothing():
    assert 300 / 1.05 <= answer(steps_against(300)) <= 300
    capped = steps_against(1e9, max_rate=5000)
    assert answer(capped) == 5000 and [step.target_rate for step in capped] == [1000, 2000, 4000, 5000]
    assert answer(steps_against(0.5)) is None


def width(table) -> int:
    """The widest line of the table printed on a 100-column terminal."""
    console = Console(width=100, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return max(len(line) for line in console.export_text().splitlines())


def open_loop_report(target: float, sustained: bool = True):
    report = insert_report([9000, 9000], 2.0, workers=4)
    figures = report.figures.model_copy(update={
        "response_latency": report.figures.latency.model_copy(update={"p99_ms": 1972.2, "p50_ms": 72.5, "max_ms": 2009.0}),
        "rate": stats.RateFigures(target=target, achieved=9000, behind_s=0.0 if sustained else 3.2, max_lag_s=2.0, limit_s=0.1,
                                  sustained=sustained)})
    return report.model_copy(update={"figures": figures, "spec": report.spec.model_copy(update={"rate": target})})


def test_the_open_loop_table_shows_target_achieved_both_p99_and_fits_100_columns():
    built = document([(4, open_loop_report(200_000, sustained=False)), (4, open_loop_report(9_000))])
    assert [(row.target_rate, row.sustained) for row in built.inserts] == [(200_000, "NO"), (9_000, "yes")]  # a row per rate
    table = tables.section_table(section(built, "inserts"))
    headers = [figure.header for figure in table.rendered.figures]
    assert headers[2:4] == ["Target/s", "Inserts/s"] and {"p99 ms", "Resp p99", "Sustained"} <= set(headers) and width(table) <= 100
    column = dict(zip(headers, zip(*table.rendered.rows)))
    assert column["Resp p99"] == ("1,972", "1,972") and column["Sustained"] == ("NO", "yes")
    details = [figure.header for figure in tables.section_table(section(built, "inserts"), details=True).rendered.figures]
    assert {"Resp p50", "Resp p99", "Resp max", "Behind s", "Max lag s", "p99 ms"} <= set(details)


def test_the_progress_line_shows_the_rate_achieved_against_the_target():
    status = Status(phase="running", workers=2, registered=2, ready=2, finished=0, events=19_000, expected_events=0, prefilled=0,
                    expected_prefill=0, start_at=100.0, duration_s=10.0)
    assert achieved_against_target(10_000, status, now=102.0) == ", 9,500/s of 10,000/s"
    assert achieved_against_target(10_000, status, now=100.2) == ", target 10,000/s"
    assert achieved_against_target(0, status, now=102.0) == ""


def test_query_clients_are_paced_by_the_same_open_loop_pacer():
    """--query-rate Q over K clients: client k's i-th query is due at start + (i + k/K) x K/Q, and a
    wait cut short (the inserts stopped) starts no query."""
    start, rate, clients = time.perf_counter() - 10.0, 4.0, 2  # due times in the past: no waiting
    pacer = OpenLoop(Schedule(rate, clients, 1, 1, start))
    intended = [pacer.turn(1, deadline=float("inf")) for _ in range(3)]
    assert intended == pytest.approx([start + (i + 1 / clients) * clients / rate for i in range(3)])
    interrupted = OpenLoop(Schedule(rate, clients, 0, 1, time.perf_counter() + 60), wait=lambda seconds: True)
    assert interrupted.turn(1, deadline=float("inf")) is None


def test_one_timer_times_any_call_and_charges_an_open_loop_wait_to_response_time():
    closed = CallTimer()
    answer, timed = closed.call(lambda: 42)
    assert answer == 42 and timed.response_s == timed.service_s >= 0
    late = CallTimer(OpenLoop(Schedule(1, 1, 0, 1, start=time.perf_counter() - 2.0)))
    assert late.turn(1, deadline=float("inf"))
    _, timed = late.call(lambda: None)
    assert timed.response_s >= 2.0 > timed.service_s
