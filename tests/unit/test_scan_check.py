"""The scan's checks (order, counts) and its rate over 10,000-row windows, and how runs report them."""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.checks.expected import DeviceAggregates, Expected, ExpectedRecord
from iotdb_bench.simulator.checks.scan import WINDOW_ROWS, ScanCheck, scan_share
from iotdb_bench.simulator.measurement import stats
from iotdb_bench.simulator.protocol import WorkerResult

RECORD = ExpectedRecord(tables=["events"], complete=True, expected=Expected(devices=DeviceAggregates(
    device=["a", "b", "c"], count=[4, 25_000, 0], min=[0.0] * 3, max=[0.0] * 3, sum_hundredths=[0] * 3, newest_ms=[0] * 3,
    newest_low=[0.0] * 3, newest_high=[0.0] * 3)))


def scanned(pages: dict[str, list[list[int]]], record: ExpectedRecord | None = RECORD, seconds_per_page: float = 0.01):
    check, now = ScanCheck(record, 0.0), 0.0
    for device, device_pages in pages.items():
        check.start_device(device)
        for page in device_pages:
            now += seconds_per_page
            check.page(np.array(page, dtype=np.int64), now)
        check.end_device()
    return check.finish()


def test_in_order_and_complete():
    outcome = scanned({"a": [[1, 2], [2, 5]], "b": [list(range(10_000))] * 2 + [list(range(5_000))]})
    # b's pages restart at 0: out of order across pages, which the check sees.
    assert outcome.order_problems == 2
    assert outcome.first_order_problem == "device b: reading 10,001 has timestamp 0 ms, earlier than the one before it (9999 ms)"
    good = scanned({"a": [[1, 2], [2, 5]], "b": [list(range(i * 10_000, (i + 1) * 10_000)) for i in range(2)] + [list(range(20_000, 25_000))]})
    assert (good.order_problems, good.count_problems, good.rows, good.devices) == (0, 0, 25_004, 2)
    assert good.counts_checked and good.count_note is None


def test_order_within_a_page_and_counts():
    outcome = scanned({"a": [[1, 3, 2, 4]], "b": [[1] * 10]})
    assert outcome.order_problems == 1
    assert outcome.first_order_problem == "device a: reading 3 has timestamp 2 ms, earlier than the one before it (3 ms)"
    assert outcome.count_problems == 1 and outcome.first_count_problem == "device b: read 10 readings, expected 25,000"
    stranger = scanned({"zz": [[1]]})
    assert stranger.first_count_problem == "device zz (a device the tool did not write): read 1 readings, expected 0"


def test_counts_not_checked_without_a_record():
    outcome = scanned({"a": [[1, 2, 3]]}, record=None)
    assert not outcome.counts_checked and outcome.count_problems == 0 and "counts not checked" in outcome.count_note
    unfinished = scanned({"a": [[1]]}, record=RECORD.model_copy(update={"complete": False}))
    assert not unfinished.counts_checked and "did not finish" in unfinished.count_note


def test_windows_of_10000_rows():
    # Pages of 6,000, 6,000, 3,000 and 7,000 rows, 0.1 s each: a window closes at 12,000 rows (0.2 s),
    # the next 10,000 rows later (0.2 s more).
    sizes, first, pages = [6000, 6000, 3000, 7000], 0, []
    for size in sizes:
        pages.append(list(range(first, first + size)))
        first += size
    outcome = scanned({"b": pages}, seconds_per_page=0.1)
    assert outcome.windows == 2 and WINDOW_ROWS == 10_000
    assert round(outcome.window_max) == 60_000 and round(outcome.window_min) == 50_000
    assert round(outcome.window_sum / outcome.windows) == 55_000


def test_devices_are_dealt_out_and_lost_devices_still_scanned():
    in_database = ["a", "c", "d"]
    shares = [scan_share(in_database, RECORD, worker, 2) for worker in range(2)]
    assert shares == [["a", "c"], ["b", "d"]]  # b is in the record only: scanned, and its count fails
    assert scan_share(in_database, None, 0, 1) == ["a", "c", "d"]


def test_run_figures_and_failure_line():
    first = scanned({"a": [[1, 2], [3, 4]]})
    second = scanned({"b": [[1, 0]]})
    results = [WorkerResult(worker=i, started_at=0, finished_at=2.0, events=o.rows, calls=2, scan=o) for i, o in enumerate((first, second))]
    figures = stats.scan_figures(0.0, results, WINDOW_ROWS)
    assert (figures.rows, figures.devices, figures.pages, figures.rows_per_s) == (6, 2, 4, 3.0)
    assert figures.check() == "FAILED"
    assert figures.failure() == ("1 readings out of order, 1 devices with a wrong count; first: device b: reading 2 has timestamp 0 ms, "
                                 "earlier than the one before it (1 ms); device b: read 2 readings, expected 25,000")
    assert stats.scan_figures(0.0, results[:1], WINDOW_ROWS).check() == "ok"
