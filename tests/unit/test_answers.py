"""The answer check: what counts as right for each query, and the first difference it reports."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from iotdb_bench.simulator.checks.answers import AVG_RELATIVE_TOLERANCE, Answer, AnswerChecker, epoch_ms, expected_rows, first_difference, with_times
from iotdb_bench.simulator.checks.expected import DeviceAggregates, Expected, ExpectedRecord, MinuteAggregates

# Two devices: a has 2 readings (20.5, 21.25), b has 3 (19.0, 22.5 twice at its newest instant).
EXPECTED = Expected(
    devices=DeviceAggregates(device=["a", "b"], count=[2, 3], min=[20.5, 19.0], max=[21.25, 22.5], sum_hundredths=[4175, 6400],
                             newest_ms=[1_000, 2_000], newest_low=[21.25, 22.4], newest_high=[21.25, 22.5]),
    downsample=MinuteAggregates(minute_ms=[0, 60_000], count=[1, 1], min=[20.5, 21.25], max=[20.5, 21.25], sum_hundredths=[2050, 2125]),
)
RECORD = ExpectedRecord(tables=["events"], complete=True, expected=EXPECTED)


def check(query: str, rows: list[tuple]):
    return AnswerChecker(RECORD).check(query, rows)


def test_right_answers_in_the_common_form():
    assert check("count-events", [(5,)]).answer == "ok"
    assert check("temperature-min-max", [(19.0, 22.5)]).answer == "ok"
    assert check("temperature-stats", [(19.0, 105.75 / 5, 22.5)]).answer == "ok"
    assert check("temperature-stats-per-device", [("b", 19.0, 64.0 / 3, 22.5), ("a", 20.5, 20.875, 21.25)]).answer == "ok"
    assert check("newest-per-device", [("a", 1_000, 21.25), ("b", 2_000, 22.4)]).answer == "ok"
    assert check("newest-per-device (loose index scan)", [("a", 1_000, 21.25), ("b", 2_000, 22.5)]).answer == "ok"
    assert check("device-downsample", [(0, 20.5, 20.5, 20.5), (60_000, 21.25, 21.25, 21.25)]).answer == "ok"
    # Drivers' types: Decimal and int numbers, datetimes converted by the module's conversion.
    assert check("temperature-min-max", [(Decimal("19.0"), 22.5)]).answer == "ok"


def test_each_kind_of_difference_is_reported_first_and_precisely():
    assert check("count-events", [(4,)]).detail == "count is 4, expected 5"
    assert check("temperature-min-max", [(19.0, 22.51)]).detail == "max is 22.51, expected 22.5"
    wrong_avg = check("temperature-stats", [(19.0, 21.15 * (1 + 10 * AVG_RELATIVE_TOLERANCE), 22.5)])
    assert wrong_avg.answer == "wrong" and wrong_avg.detail.startswith("avg is ") and "within a relative 1e-09" in wrong_avg.detail
    assert check("temperature-stats", [(19.0, 21.15 * (1 + AVG_RELATIVE_TOLERANCE / 10), 22.5)]).answer == "ok"
    assert check("temperature-stats-per-device", [("a", 20.5, 20.875, 21.25)]).detail == "device b is missing (1 rows, expected 2)"
    extra = check("temperature-stats-per-device", [("a", 20.5, 20.875, 21.25), ("b", 19.0, 64.0 / 3, 22.5), ("c", 1.0, 1.0, 1.0)])
    assert extra.detail == "device c is not expected (3 rows, expected 2)"
    twice = check("temperature-stats-per-device", [("a", 20.5, 20.875, 21.25), ("a", 20.5, 20.875, 21.25)])
    assert twice.detail == "device a appears in more than one row"
    newest = check("newest-per-device", [("a", 999, 21.25), ("b", 2_000, 22.4)])
    assert newest.detail == "device a: newest timestamp is 1970-01-01T00:00:00.999Z (999), expected 1970-01-01T00:00:01.000Z (1000)"
    assert check("newest-per-device", [("a", 1_000, 21.25), ("b", 2_000, 22.6)]).detail == (
        "device b: value at the newest timestamp is 22.6, expected one of the values at that instant (22.4 to 22.5)")
    assert check("device-downsample", [(0, 20.5, 20.5, 20.5)]).detail.startswith("minute 1970-01-01T00:01:00.000Z (60000) is missing")
    assert check("temperature-min-max", [(None, 22.5)]).detail == "min is None, expected 19.0"
    assert check("temperature-stats", [(19.0, 21.15)]).detail == "a row of 2 columns, expected 3"


def test_no_readings_no_rows_or_nulls_are_both_right():
    empty = AnswerChecker(ExpectedRecord(tables=["events"], complete=True))
    assert empty.check("count-events", [(0,)]).answer == "ok"
    assert empty.check("temperature-min-max", [(None, None)]).answer == "ok"
    assert empty.check("temperature-stats", []).answer == "ok"
    assert empty.check("device-downsample", []).answer == "ok"


def test_answers_are_not_checked_without_a_usable_record_and_say_why():
    assert AnswerChecker(None).check("count-events", [(5,)]).answer == "not checked"
    assert "no record" in AnswerChecker(None).check("count-events", [(5,)]).detail
    unfinished = AnswerChecker(RECORD.model_copy(update={"complete": False})).check("count-events", [(5,)])
    assert unfinished.answer == "not checked" and "did not finish" in unfinished.detail
    assert AnswerChecker(RECORD).check("some-new-query", [(1,)]).answer == "not checked"


def test_expected_rows_are_exact_sums_over_counts():
    assert expected_rows("temperature-stats", EXPECTED) == [(19.0, 105.75 / 5, 22.5)]
    assert expected_rows("temperature-stats-per-device", EXPECTED)[0] == ("a", 20.5, 41.75 / 2, 21.25)


def test_driver_timestamps_become_epoch_milliseconds():
    aware = dt.datetime(2026, 1, 1, 0, 0, 0, 100_000, tzinfo=dt.UTC)
    assert epoch_ms(aware) == epoch_ms(aware.replace(tzinfo=None)) == epoch_ms("2026-01-01T00:00:00.100Z") == 1_767_225_600_100
    assert epoch_ms(dt.datetime(2026, 1, 1, 1, 0, 0, 100_000, tzinfo=dt.timezone(dt.timedelta(hours=1)))) == 1_767_225_600_100
    converted = Answer([("a", aware, 20.5)], with_times(1)).normalised()
    assert converted == [("a", 1_767_225_600_100, 20.5)]
    assert first_difference("newest-per-device", converted, [("a", 1_767_225_600_100, (20.5, 20.5))]) is None
