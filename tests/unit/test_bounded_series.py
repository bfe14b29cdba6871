"""The series that would grow with a run's length are bounded: per-second counts (workers, collector)
and resource readings (the CLI's samplers). These tests drive the bound's mechanism directly, with the
lengths of runs of hours; tests/integration/test_memory_flat.py measures the processes of real runs."""

import random

from iotdb_bench.simulator.measurement import resources, windows
from iotdb_bench.simulator.measurement.resources import Sample, Series
from iotdb_bench.simulator.measurement.stats import CallRecorder, Totals
from iotdb_bench.simulator.measurement.windows import Windows


def test_a_ten_hour_series_keeps_at_most_max_windows_and_every_event():
    series = Windows()
    events = 0
    for second in range(36_000):  # ten hours of one call a second
        series.add(second, 3)
        events += 3
    assert len(series.values) <= windows.MAX_WINDOWS
    assert series.width_s == 16  # 36,000 s / 16 = 2,250 windows; at 8 s it would be 4,500
    assert sum(series.values) == events
    assert series.values[0] == 16 * 3 and series.values[-1] == (36_000 - 2249 * 16) * 3


def test_a_run_shorter_than_max_windows_keeps_its_one_second_windows():
    series = Windows()
    for second in (0, 0, 5, 4095):
        series.add(second, 1)
    assert series.width_s == 1 and len(series.values) == 4096 and series.values[0] == 2


def test_series_at_different_widths_add_up_exactly():
    """Workers whose runs ended on either side of a coarsening: the sum is at the coarser width."""
    rng = random.Random(7)
    calls = [(rng.randrange(5000), rng.randrange(1, 100)) for _ in range(3000)]
    long_worker, short_worker = Windows(), Windows()
    for second, count in calls:
        long_worker.add(second, count)
        if second < 3000:
            short_worker.add(second, count)
    assert (long_worker.width_s, short_worker.width_s) == (2, 1)
    total = Windows()
    total.add_series(short_worker.values, short_worker.width_s)
    total.add_series(long_worker.values, long_worker.width_s)
    assert total.width_s == 2
    expected = [0] * len(total.values)
    for second, count in calls:
        expected[second // 2] += count * (2 if second < 3000 else 1)
    assert total.values == expected


def test_totals_coarsen_when_the_sum_outgrows_max_windows():
    totals = Totals()
    totals.add(None, [1] * 4000)
    totals.add(None, [1] * 3000, window_s=2)  # 6,000 s at 2 s
    assert totals.windows.width_s == 2 and len(totals.windows.values) == 3000
    assert sum(totals.windows.values) == 4000 + 3000


def test_a_call_recorder_of_a_long_run_stays_bounded():
    recorder = CallRecorder(common_start=1000.0)
    for second in range(0, 20_000, 2):
        recorder.record(10, 0.001, 1000.0 + second + 0.5)
    assert len(recorder.windows.values) <= windows.MAX_WINDOWS and recorder.windows.width_s == 8
    assert sum(recorder.windows.values) == recorder.events == 100_000


def test_display_windows_fit_the_results_file():
    values, width = windows.fitted([1] * 3600, 1, windows.DISPLAY_WINDOWS)
    assert width == 8 and len(values) == 450 and sum(values) == 3600
    assert windows.fitted([5] * 600, 1, windows.DISPLAY_WINDOWS) == ([5] * 600, 1)


def _hour_of_readings(pinned_at: set[float]) -> Series:
    series = Series(name="worker 0")
    for second in range(3600):
        memory = 10_000_000 + (5_000_000 if second == 1235 else 0) if second % 5 == 0 else None
        series.add(Sample(at=float(second), cpu_s=second * 0.5, memory_bytes=memory, written_bytes=second * 100), pinned=second in pinned_at)
    return series


def test_an_hour_of_resource_readings_is_bounded_and_keeps_edges_counters_and_peak():
    series = _hour_of_readings({17.0, 3583.0})
    assert len(series.samples) <= resources.MAX_SAMPLES
    kept = {sample.at for sample in series.samples}
    assert {0.0, 17.0, 3583.0, 3599.0} <= kept  # first, last, and the timed phase's edges
    # cumulative counters read the same at every reading kept: the window's CPU is exact at its edges
    assert resources.counter_delta([series], "cpu_s", 17.0, 3583.0) == (3583 - 17) * 0.5
    assert max(sample.memory_bytes or 0 for sample in series.samples) == 15_000_000  # the peak survives
    summary = resources.summarise("workers", [series], 17.0, 3583.0)
    assert summary.memory_peak_bytes == 15_000_000 and summary.written_bytes == (3583 - 17) * 100


def test_thinning_merges_memory_into_the_reading_kept_after_it():
    samples = [Sample(at=float(i), cpu_s=float(i), memory_bytes=m) for i, m in enumerate([1, 9, None, 4, 2])]
    kept = resources.thinned(samples, pinned=set())
    assert [(s.at, s.memory_bytes) for s in kept] == [(0.0, 1), (2.0, 9), (4.0, 4)]
