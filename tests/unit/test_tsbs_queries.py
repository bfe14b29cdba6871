"""TSBS's DevOps query types without a database: parameters drawn per execution from what was written,
reproducibly; every type's expected answer equal to the same question answered by brute force over
every generated row; a changed row found by the check."""

from __future__ import annotations

from collections import defaultdict

import pytest

from iotdb_bench.simulator.checks.answers import AnswerChecker, difference
from iotdb_bench.simulator.checks.expected import ExpectedRecord
from iotdb_bench.simulator.queries.parameters import ParameterDraws, ParameterProblem, RandomEntities, RandomWindow, Window, Written
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, DevopsAnswers, written
from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from tests.unit.test_tsbs_generator import generated, tsbs_spec

HOUR = 3_600_000
WRITTEN = Written("host", 20, 0, 13 * HOUR)


def test_the_fifteen_types_by_tsbs_names():
    assert tuple(DEVOPS) == TSBS_DEVOPS_QUERIES and len(DEVOPS) == 15
    assert (DEVOPS["single-groupby-5-8-1"].metrics, DEVOPS["single-groupby-5-8-1"].hosts, DEVOPS["single-groupby-5-8-1"].window_ms) == (5, 8, HOUR)
    assert DEVOPS["cpu-max-all-8"].window_ms == 8 * HOUR and DEVOPS["double-groupby-all"].metrics == 10
    assert DEVOPS["high-cpu-1"].hosts == 1 and DEVOPS["high-cpu-all"].hosts == 0 and DEVOPS["lastpoint"].parameters == ()


def test_parameters_are_the_same_for_a_seed_and_new_for_each_execution():
    kinds = (RandomEntities("hosts", 8), RandomWindow("window", HOUR))
    draws = ParameterDraws(seed=1, worker=0, written=WRITTEN)
    first = draws.draw("single-groupby-1-8-1", 0, kinds)
    assert first == ParameterDraws(seed=1, worker=0, written=WRITTEN).draw("single-groupby-1-8-1", 0, kinds)
    others = [draws.draw("single-groupby-1-8-1", n, kinds) for n in range(1, 20)] + [ParameterDraws(2, 0, WRITTEN).draw("single-groupby-1-8-1", 0, kinds),
                                                                                    ParameterDraws(1, 1, WRITTEN).draw("single-groupby-1-8-1", 0, kinds)]
    assert all(other != first for other in others)
    for parameters in [first, *others]:
        hosts, window = parameters["hosts"], parameters["window"]
        assert len(set(hosts)) == 8 and all(0 <= int(name.removeprefix("host_")) < 20 for name in hosts)
        assert window.start_ms >= 0 and window.end_ms <= 13 * HOUR and window.end_ms - window.start_ms == HOUR
    starts = [draws.draw("x", n, kinds)["window"].start_ms for n in range(400)]
    assert min(starts) < HOUR and max(starts) > 11 * HOUR  # uniform over the room the range leaves
    assert str(first).startswith("hosts host_") and "; window 1970-01-01T" in str(first)


def test_a_window_longer_than_the_data_covers_it_and_more_hosts_than_written_are_refused():
    draws = ParameterDraws(seed=1, worker=0, written=Written("host", 5, 1000, 1000 + HOUR))
    assert draws.draw("double-groupby-1", 0, (RandomWindow("window", 12 * HOUR),))["window"] == Window(1000, 1000 + HOUR)
    with pytest.raises(ParameterProblem, match="it draws 8 random hosts and the data has 5 \\(insert with --devices 8 or more\\)"):
        draws.draw("single-groupby-1-8-1", 0, (RandomEntities("hosts", 8),))


def brute_force(name: str, parameters, rows: list[tuple]) -> list[tuple]:
    """The answer of a DevOps query from every row (time, host, fields), written plainly."""
    query = DEVOPS[name]
    hosts = set(parameters["hosts"]) if query.hosts else None
    window = parameters["window"] if query.window_ms else None
    chosen = [row for row in rows if (hosts is None or row[1] in hosts) and (window is None or window.start_ms <= row[0] < window.end_ms)]
    if query.family in ("single-groupby", "cpu-max-all"):
        size = 60_000 if query.family == "single-groupby" else HOUR
        maxima = defaultdict(lambda: [-1.0] * query.metrics)
        for time, _, fields in chosen:
            maxima[time // size * size] = [max(a, b) for a, b in zip(maxima[time // size * size], fields)]
        return [(bucket, *values) for bucket, values in sorted(maxima.items())]
    if query.family == "double-groupby":
        sums, counts = defaultdict(lambda: [0.0] * query.metrics), defaultdict(int)
        for time, host, fields in chosen:
            key = (time // HOUR * HOUR, host)
            sums[key] = [a + b for a, b in zip(sums[key], fields)]
            counts[key] += 1
        return [(hour, host, *(total / counts[hour, host] for total in sums[hour, host])) for hour, host in sorted(sums)]
    if query.family == "high-cpu":
        return [(time, host, *fields) for time, host, fields in chosen if fields[0] > 90.0]
    if query.family == "lastpoint":
        newest = {}
        for time, host, fields in rows:
            if host not in newest or time > newest[host][0]:
                newest[host] = (time, fields)
        return [(host, time, *fields) for host, (time, fields) in newest.items()]
    maxima = defaultdict(float)
    for time, _, fields in rows:
        if time < window.end_ms:
            maxima[time // 60_000 * 60_000] = max(maxima[time // 60_000 * 60_000], fields[0])
    return sorted(maxima.items())[-5:]


@pytest.fixture(scope="module")
def data():
    """20 hosts over 13 hours of 30 s steps (written by 2 workers), every row as (time, host, fields)."""
    spec = tsbs_spec(20, "30s", "2016-01-01T00:00:00Z", "2016-01-01T13:00:00Z", workers=2)
    columns = generated(spec)
    rows = [(time, f"host_{host}", fields) for time, host, fields in zip(columns["time"].tolist(), columns["host"].tolist(), columns["fields"].tolist())]
    return TsbsData.of(spec), rows


def answered_as_brute_force(name: str, kinds, answers, drawn_from, brute) -> int:
    """Four executions of a type, each's expected answer equal to `brute(parameters)`; how many were not empty."""
    draws = ParameterDraws(seed=3, worker=1, written=drawn_from)
    answered = 0
    for execution in range(4):
        parameters = draws.draw(name, execution, kinds)
        columns, expected = answers.expected(name, parameters)
        assert difference(columns, brute(parameters), expected) is None, (name, parameters)
        answered += bool(expected)
    return answered


@pytest.mark.parametrize("name", TSBS_DEVOPS_QUERIES)
def test_each_types_expected_answer_is_the_brute_force_answer(name, data):
    tsbs, rows = data
    answered = answered_as_brute_force(name, DEVOPS[name].parameters, DevopsAnswers(tsbs), written(tsbs),
                                       lambda parameters: brute_force(name, parameters, rows))
    assert answered  # not only empty answers (one host may stay below high-cpu's threshold for 12 hours)


def test_a_changed_row_makes_the_queries_reading_it_wrong(data):
    tsbs, rows = data
    record = ExpectedRecord(tables=["cpu"], shape="tsbs-cpu", complete=True, tsbs=tsbs)
    checker = AnswerChecker(record, parameterised=DevopsAnswers(tsbs))
    draws = ParameterDraws(seed=3, worker=0, written=written(tsbs))
    changed = [(time, host, (99.5, *fields[1:])) if (host, time) == ("host_4", tsbs.time_of(tsbs.steps - 1)) else (time, host, fields)
               for time, host, fields in rows]
    lastpoint = checker.check("lastpoint", brute_force("lastpoint", None, changed), draws.draw("lastpoint", 0, ()))
    assert (lastpoint.answer, lastpoint.detail) == ("wrong", "host host_4: usage_user is 99.5, expected " + repr(
        next(fields[0] for time, host, fields in rows if host == "host_4" and time == tsbs.time_of(tsbs.steps - 1))))
    parameters = draws.draw("double-groupby-1", 0, DEVOPS["double-groupby-1"].parameters)
    unchanged = checker.check("double-groupby-1", brute_force("double-groupby-1", parameters, rows), parameters)
    assert unchanged.answer == "ok"
    middle = tsbs.time_of(tsbs.steps // 2)  # inside every 12-hour window of the 13 hours
    moved = [(time, host, (fields[0] + 1, *fields[1:])) if (host, time) == ("host_9", middle) else (time, host, fields) for time, host, fields in rows]
    wrong = checker.check("double-groupby-1", brute_force("double-groupby-1", parameters, moved), parameters)
    assert wrong.answer == "wrong" and wrong.detail.startswith(f"with window {parameters['window']}: hour 2016-01-01T06:00:00.000Z ")
    assert "host host_9: mean usage_user is " in wrong.detail
