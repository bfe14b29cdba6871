"""The answers the tool computes to a query file's query (simulator/checks/computed.py): regenerated
from the stretches of the workers' streams the record keeps, they equal what the tally of the very
batches sent says (every order, late data, a restarted clock) and a brute-force filter of every event;
a record that does not say what was stored computes nothing; a declaration that does not fit its query
is refused naming the field."""

from __future__ import annotations

import numpy as np
import pytest

from iotdb_bench.simulator.checks.answers import difference
from iotdb_bench.simulator.checks.computed import ComputedAnswers
from iotdb_bench.simulator.checks.expected import ExpectedRecord, Tally, merge_all
from iotdb_bench.simulator.checks.written_streams import StreamSpan
from iotdb_bench.simulator.queries.computed_answer import ComputedAnswer
from iotdb_bench.simulator.queries.parameters import Parameters, Window, iso_ms
from iotdb_bench.simulator.queries.query_file import QueryFileProblem
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS, EventBatch, EventGenerator
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from tests.unit.test_query_file_rules import load

SEED, DEVICES = 7, 4


def written(worker: int, generator: EventGenerator, start: int, total: int, shift_ms: int = 0) -> tuple:
    """A worker's tally and stored stretch of the batches it sent (late ones out of order), and the events as stored."""
    tally, span, stored_all = Tally.for_worker(worker, DEVICES), StreamSpan(SEED, worker, DEVICES, generator.order, generator.burst), []
    for batch in generator.batches(start, total, 300):
        stored = EventBatch(batch.timestamp_ms - shift_ms, *(getattr(batch, name) for name in ("device_index", "device_id", "sequence_number", "temperature")))
        tally.add(stored)
        span.add(batch, stored)
        stored_all.append(stored)
    parts, problem = span.parts()
    return tally.result().model_copy(update={"streams": parts, "streams_problem": problem}), stored_all


def record_of(*expected) -> ExpectedRecord:
    return ExpectedRecord(tables=["events"], complete=True, expected=merge_all(expected))


@pytest.mark.parametrize(("order", "late", "shift_ms"), [("round-robin", 0.0, 0), ("random", 0.0, 0), ("burst", 0.0, 0),
                                                          ("round-robin", 0.2, 0), ("round-robin", 0.0, 50_000)])
def test_computed_per_device_answers_equal_the_tally_of_what_was_sent(order, late, shift_ms):
    parts, events = [], []
    for worker in range(2):
        generator = EventGenerator(SEED, worker, DEVICES, order=order, burst=5, late_fraction=late, max_lateness_s=5)
        # Two runs into the same tables: a prefill-like stretch, then its continuation (joined into one part).
        for start, total in ((0, 700), (700, 1300)):
            expected, stored = written(worker, generator, start, total, shift_ms)
            parts.append(expected)
            events += stored
    record = record_of(*parts)
    assert len(record.expected.streams) == 2 and ComputedAnswers(record).problem() is None
    answer = ComputedAnswer(per=["device"], columns=["device", "count", "min", "max", "sum", "newest", "newest_value"])
    columns, rows = ComputedAnswers(record).expected("q", answer, Parameters({}), [])
    devices = record.expected.devices
    tallied = [(d, n, low, high, total / 100, newest, (a, b)) for d, n, low, high, total, newest, a, b in zip(
        devices.device, devices.count, devices.min, devices.max, devices.sum_hundredths, devices.newest_ms, devices.newest_low, devices.newest_high)]
    assert rows == tallied and len(rows) == 2 * DEVICES
    # A window, a threshold and minute buckets, against a brute-force filter of every stored event.
    window, limit = Window(TIME_ORIGIN_MS + 61_000, TIME_ORIGIN_MS + 151_000), 21.005
    answer = ComputedAnswer(per=["worker", "1m"], window="w", above="t", columns=["worker", "bucket", "count", "mean", "max"])
    columns, rows = ComputedAnswers(record).expected("q", answer, Parameters({"w": window, "t": limit}), [])
    times = np.concatenate([e.timestamp_ms for e in events])
    values = np.concatenate([e.temperature for e in events])
    workers = np.concatenate([e.device_id.astype("U") for e in events]).astype("U7")
    chosen = (times >= window.start_ms) & (times < window.end_ms) & (values > limit)
    brute = {}
    for worker, time, value in zip(workers[chosen], times[chosen], values[chosen]):
        brute.setdefault((str(worker), int(time) // 60_000 * 60_000), []).append(float(value))
    assert [row[:3] for row in rows] == [(*key, len(found)) for key, found in sorted(brute.items())] and len(rows) >= 4
    assert all(row[3] == pytest.approx(np.mean(brute[row[:2]]), rel=1e-12) and row[4] == max(brute[row[:2]]) for row in rows)
    # The database's rows checked as the built-in queries' are: a changed maximum is named.
    wrong = [(*row[:4], 99.5) if index == 1 else row for index, row in enumerate(rows)]
    assert difference(columns, rows, rows) is None
    assert difference(columns, wrong, rows) == f"worker {rows[1][0]} bucket {iso_ms(rows[1][1])} ({rows[1][1]}): max is 99.5, expected {rows[1][4]!r}"

def test_one_row_over_no_readings_is_a_count_of_zero_and_nulls():
    expected, _ = written(0, EventGenerator(SEED, 0, DEVICES), 0, 100)
    answer = ComputedAnswer(device="d", window="w", columns=["count", "max", "mean"])
    empty = Window(TIME_ORIGIN_MS + 3_600_000, TIME_ORIGIN_MS + 7_200_000)
    columns, rows = ComputedAnswers(record_of(expected)).expected("q", answer, Parameters({"d": "w000000-d000001", "w": empty}), [])
    assert rows == [(0, None, None)]
    assert difference(columns, [(0, None, None)], rows) is None and difference(columns, [(1, 20.0, 20.0)], rows) == "count is 1, expected 0"


def test_a_record_that_does_not_say_what_was_stored_computes_nothing():
    expected, _ = written(0, EventGenerator(SEED, 0, DEVICES), 0, 100)
    older = expected.model_copy(update={"streams": []})  # a record of an earlier version: tallies without streams
    assert "written by an earlier version" in ComputedAnswers(record_of(older, written(1, EventGenerator(SEED, 1, DEVICES), 0, 100)[0])).problem()
    cut = StreamSpan(SEED, 0, DEVICES, "round-robin", 1)
    batch = EventGenerator(SEED, 0, DEVICES).batch(0, 100)
    cut.add(batch.select(slice(0, 40)), batch.select(slice(0, 40)))
    cut.add(batch.select(slice(60, 100)), batch.select(slice(60, 100)))  # a gap: late events cut off by a deadline
    assert cut.parts() == ([], "worker 0 stored 80 events of positions 0 to 99 of its stream (late events cut off by a --duration deadline)")
    light = record_of(expected).model_copy(update={"shape": "light"})
    assert ComputedAnswers(light).problem().startswith("the tool computes answers over the tool's events only: the data in events was written")
    tsbs = ExpectedRecord(tables=["cpu"], shape="tsbs-cpu", complete=True, tsbs=TsbsData(shape="tsbs-cpu", seed=1, hosts=2, start_ms=0, interval_ms=1000, steps=10))
    assert ComputedAnswers(tsbs).problem() == "the tool computes answers over the tool's events only, and this data is TSBS's (--schema tsbs-cpu)"


@pytest.mark.parametrize(("answer", "problem"), [
    ("{window: d, columns: [count]}", "answer.window: d is not a window parameter of the query"),
    ("{per: device, columns: [count, device]}", "answer.columns: the groups' keys (device) come first"),
    ("{per: fortnightly, columns: [count]}", "'fortnightly' is no group"),
    ("{columns: [count, max]}", "answer.columns: 2 columns, and the query's columns are 1"),
    ("{columns: [newest]}", "answer.columns: newest (column 1) is a time, and the query declares a number"),
])
def test_a_declared_answer_that_does_not_fit_its_query_is_refused_naming_the_field(tmp_path, answer, problem):
    with pytest.raises(QueryFileProblem) as refused:
        load(tmp_path, f"queries:\n  - {{name: a, parameters: {{d: device}}, columns: [{{n: number}}], answer: {answer}, text: {{sql: SELECT 1}}}}")
    assert problem in str(refused.value) and "queries.a" in str(refused.value)
