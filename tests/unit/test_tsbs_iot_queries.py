"""TSBS's IoT query types without a database: every type's expected answer equal to the same question
answered by brute force over every generated row (as TSBS's SQL reads them: rows whose name tag is
null join no truck, null fields stay out of aggregates), several executions each; a changed row found."""

from __future__ import annotations

import itertools
from collections import defaultdict

import pytest

from iotdb_bench.simulator.checks.answers import AnswerChecker
from iotdb_bench.simulator.checks.expected import ExpectedRecord
from iotdb_bench.simulator.queries.parameters import ParameterDraws
from iotdb_bench.simulator.queries.tsbs_iot import IOT, IotAnswers, written
from iotdb_bench.simulator.spec import TSBS_IOT_QUERIES
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.iot import truck_tags
from tests.unit.test_tsbs_generator import batches
from tests.unit.test_tsbs_iot import iot_spec
from tests.unit.test_tsbs_queries import answered_as_brute_force

TEN_MINUTES, DAY = 600_000, 86_400_000


def rows_of(spec) -> list[tuple]:
    """Every row a query can see: (measurement, truck, time, fields with None for NULL)."""
    found = []
    for batch in batches(spec, 5000):
        for measurement, truck, time, null_tag, *fields in zip(batch.table_index.tolist(), batch.host.tolist(), batch.timestamp_ms.tolist(),
                                                                batch.null_tag.tolist(), batch.temperature.tolist(), *batch.more.tolist()):
            if null_tag != 0:
                found.append((measurement, truck, time, [None if v != v else v for v in fields[: (7 if measurement == 0 else 3)]]))
    return found


def mean(values: list) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def brute_force(name: str, parameters, rows: list[tuple], tags: list[tuple]) -> list[tuple]:
    """The answer of an IoT query from every row, written plainly from TSBS's SQL."""
    fleet = parameters.values.get("fleet")
    window = parameters.values.get("window")
    readings = [(truck, time, fields) for measurement, truck, time, fields in rows if measurement == 0]
    diagnostics = [(truck, time, fields) for measurement, truck, time, fields in rows if measurement == 1]

    def newest(chosen, of):
        latest = {}
        for truck, time, fields in of:
            if truck in chosen and (truck not in latest or time > latest[truck][0]):
                latest[truck] = (time, fields)
        return latest

    in_fleet = {index for index, tag in enumerate(tags) if tag[1] == fleet}
    if name in ("last-loc", "single-last-loc"):
        chosen = in_fleet if fleet else {int(truck.removeprefix("truck_")) for truck in parameters["trucks"]}
        return [(tags[t][0], tags[t][2], f[1], f[0]) for t, (_, f) in newest(chosen, readings).items()]
    if name == "low-fuel":
        return [(tags[t][0], tags[t][2], f[0]) for t, (_, f) in newest(in_fleet, diagnostics).items() if f[0] is not None and f[0] < 0.1]
    if name == "high-load":
        return [(tags[t][0], tags[t][2], f[1]) for t, (_, f) in newest(in_fleet, diagnostics).items() if f[1] is not None and f[1] / tags[t][5] > 0.9]

    def periods(of, field, within=None):
        grouped = defaultdict(list)
        for truck, time, fields in of:
            if within is None or within.start_ms <= time < within.end_ms:
                grouped[truck, time - time % TEN_MINUTES].append(fields[field])
        return grouped

    if name == "stationary-trucks":
        velocities = defaultdict(list)
        for truck, time, fields in readings:
            if truck in in_fleet and window.start_ms <= time < window.end_ms:
                velocities[truck].append(fields[3])
        return [(tags[t][0], tags[t][2]) for t, values in velocities.items() if mean(values) is not None and mean(values) < 1]
    if name in ("long-driving-sessions", "long-daily-sessions"):
        driving = defaultdict(int)
        for (truck, _), values in periods(readings, 3, window).items():
            if truck in in_fleet and mean(values) is not None and mean(values) > 1:
                driving[truck] += 1
        return [(tags[t][0], tags[t][2]) for t, count in driving.items() if count > (22 if name == "long-driving-sessions" else 60)]
    if name == "avg-vs-projected-fuel-consumption":
        fuel, nominal = defaultdict(list), defaultdict(list)
        for truck, _, fields in readings:
            if fields[3] is not None and fields[3] > 1:
                fuel[tags[truck][1]].append(fields[6])
                nominal[tags[truck][1]].append(tags[truck][7])
        return [(f, mean(fuel[f]), mean(nominal[f])) for f in nominal]
    if name == "avg-daily-driving-duration":
        per_day = defaultdict(int)
        for (truck, period), values in periods(readings, 3).items():
            if mean(values) is not None and mean(values) > 1:
                per_day[truck, period - period % DAY] += 1
        hours = defaultdict(list)
        for (truck, _), count in per_day.items():
            hours[truck].append(count // 6)
        return [(tags[t][1], tags[t][0], tags[t][2], mean(h)) for t, h in hours.items()]
    if name == "avg-daily-driving-session":
        status = defaultdict(list)
        for (truck, period), values in sorted(periods(readings, 3).items()):
            status[truck].append((period, None if mean(values) is None else mean(values) > 5))
        lengths = defaultdict(list)
        for truck, sequence in status.items():
            changes = [(p, d) for (p, d), (_, before) in zip(sequence[1:], sequence[:-1]) if d is not None and before is not None and d != before]
            for index, (start, driving) in enumerate(changes):
                if driving:
                    stop = changes[index + 1][0] if index + 1 < len(changes) else None
                    lengths[tags[truck][0], start - start % DAY].append(None if stop is None else (stop - start) / 1000)
        return [(truck, day, mean(found)) for (truck, day), found in lengths.items()]
    if name == "avg-load":
        loads = defaultdict(list)
        for truck, _, fields in diagnostics:
            loads[truck].append(fields[1])
        groups = defaultdict(list)
        for truck, values in loads.items():
            groups[tags[truck][1], tags[truck][3], tags[truck][5]].append(None if mean(values) is None else mean(values) / tags[truck][5])
        return [(*group, mean(shares)) for group, shares in groups.items()]
    if name == "daily-activity":
        active = defaultdict(int)
        for (truck, period), values in periods(diagnostics, 2).items():
            if mean(values) is not None and mean(values) < 1:
                active[tags[truck][1], tags[truck][3], period - period % DAY] += len(values)
        return [(*key, count / 144) for key, count in active.items()]
    broken = defaultdict(list)
    for (truck, _period), values in sorted(periods(diagnostics, 2).items()):
        broken[truck].append(all(value is not None for value in values))
    turns = defaultdict(int)
    for truck, sequence in broken.items():
        turns[tags[truck][3]] += sum(1 for now, then in itertools.pairwise(sequence) if not now and then)
    return [(model, count) for model, count in turns.items() if count]


@pytest.fixture(scope="module")
def data():
    """12 trucks over 26 hours (two days, so daily figures have more than one day), every row a query sees."""
    spec = iot_spec(12, "2016-01-02T02:00:00Z", workers=2)
    return TsbsData.of(spec), rows_of(spec), truck_tags(spec.seed, 0, 12)


def test_the_types_by_tsbs_names():
    assert tuple(IOT) == TSBS_IOT_QUERIES and len(IOT) == 13
    assert [kind.name for kind in IOT["long-daily-sessions"].parameters] == ["fleet", "window"] and IOT["long-daily-sessions"].window_ms == 86_400_000
    assert [kind.name for kind in IOT["single-last-loc"].parameters] == ["trucks"] and IOT["breakdown-frequency"].parameters == ()


@pytest.mark.parametrize("name", TSBS_IOT_QUERIES)
def test_each_types_expected_answer_is_the_brute_force_answer(name, data):
    tsbs, rows, tags = data
    answered = answered_as_brute_force(name, IOT[name].parameters, IotAnswers(tsbs), written(tsbs),
                                       lambda parameters: brute_force(name, parameters, rows, tags))
    assert answered or name in ("low-fuel", "stationary-trucks")  # a fleet's trucks may all have fuel and move


def test_a_changed_row_makes_the_queries_reading_it_wrong(data):
    tsbs, rows, tags = data
    checker = AnswerChecker(ExpectedRecord(tables=["readings", "diagnostics"], shape="tsbs-iot", complete=True, tsbs=tsbs),
                            parameterised=IotAnswers(tsbs))
    draws = ParameterDraws(seed=3, worker=0, written=written(tsbs))
    parameters = draws.draw("avg-load", 0, ())
    assert checker.check("avg-load", brute_force("avg-load", parameters, rows, tags), parameters).answer == "ok"
    first = next(index for index, row in enumerate(rows) if row[0] == 1 and row[3][1] is not None)
    measurement, truck, time, fields = rows[first]
    changed = [*rows[:first], (measurement, truck, time, [fields[0], fields[1] + 1, fields[2]]), *rows[first + 1 :]]
    wrong = checker.check("avg-load", brute_force("avg-load", parameters, changed, tags), parameters)
    assert wrong.answer == "wrong" and f"fleet {tags[truck][1]} model {tags[truck][3]}: avg_load_percentage is " in wrong.detail
