"""Query files without a database: the file's validation (every problem named by query and field), the
placeholders and their values, the parameters drawn from what was written, the answers' normal form and
digest, and the comparison across targets."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from iotdb_bench.cli.results import agreement
from iotdb_bench.simulator.checks import answer_digest
from iotdb_bench.simulator.measurement.stats import QueryFigures
from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.queries import binding, query_file
from iotdb_bench.simulator.queries.parameters import ParameterDraws, Written
from iotdb_bench.simulator.queries.query_file import LANGUAGES, QueryFileProblem

# The modules that read query files so far (docs/query-files.md lists the others).
READING_MODULES = ("sqlite", "postgres", "timescaledb", "mysql", "questdb", "clickhouse", "cassandra")


def load(tmp_path, text: str) -> query_file.QueryFile:
    (tmp_path / "q.yaml").write_text(text)
    return query_file.load(str(tmp_path / "q.yaml"))


@pytest.mark.parametrize(("text", "problem"), [
    ("queries: []", "queries: List should have at least 1 item"),
    ("queries:\n  - {name: a, text: {sql: SELECT 1}}\n  - {name: a, text: {sql: SELECT 2}}", "queries: query a is named twice"),
    ("queries:\n  - {name: a, text: {sequel: SELECT 1}}", "queries.a: text: 'sequel' is no query language"),
    ("queries:\n  - {name: a, text: {sql: 'SELECT {{ day.start }}'}, parameters: {day: {kind: window, length: 1x}}}",
     "queries.a.parameters.day.window.length: '1x' is not a duration"),
    ("queries:\n  - {name: a, text: {sql: 'SELECT {{ day }}'}, parameters: {day: {kind: window, length: 1h}}}",
     "queries.a: text.sql: {{ day }}: a window is written by one of its forms"),
    ("queries:\n  - {name: a, text: {sql: 'SELECT {{ d.start }}'}, parameters: {d: device}}",
     "queries.a: text.sql: {{ d.start }}: a device parameter has no form 'start'"),
    ("queries:\n  - {name: a, text: {sql: SELECT 1}, parameters: {t: {kind: threshold, between: [0.9, 0.1]}}}",
     "queries.a.parameters.t.threshold.between: two fractions"),
    ("queries:\n  - {name: a, text: {sql: SELECT 1}, colour: red}", "queries.a.colour: unknown key"),
])
def test_every_problem_is_named_by_query_and_field(tmp_path, text, problem):
    with pytest.raises(QueryFileProblem) as refused:
        load(tmp_path, text)
    assert f"invalid query file {tmp_path / 'q.yaml'}: " in str(refused.value) and problem in str(refused.value)


def test_the_starter_file_has_a_text_or_a_reason_for_every_query_on_every_database():
    starter = query_file.load("starter")
    assert [query.name for query in starter.queries] == ["last-value-per-device", "day-downsampling", "devices-over-limit", "readings-per-gateway"]
    for module in READING_MODULES:
        languages = module_class(module).capabilities.query_languages
        assert languages and set(languages) <= set(LANGUAGES), module
        for query in starter.queries:
            assert query.language_for(languages) or query.reason_for(languages), (module, query.name)


def test_placeholders_take_their_values_in_each_form():
    written = Written("device", 3, 1_767_225_600_000, 1_767_225_600_000 + 7_200_500, names=["a", "b", "c"], measurements=("temperature",),
                      values=(10.0, 30.0))
    query = query_file.FileQuery(name="q", parameters={"device": "device", "w": {"kind": "window", "length": "1h"},
                                                       "limit": {"kind": "threshold", "between": [0.5, 0.5]}, "m": "measurement"},
                                 text={"sql": "{{ device }}|{{ m }}|{{limit}}|{{ w.start }}|{{ w.end_text }}|{{ w.start_ms }}|{{ w.length_s }}|"
                                              "{{ w.start_ns }}|{{ w.end_s }}"})
    parameters = ParameterDraws(1, 0, written).draw("q", 0, query.kinds())
    assert parameters == ParameterDraws(1, 0, written).draw("q", 0, query.kinds())  # the seed's draws: reproducible
    assert parameters != ParameterDraws(1, 0, written).draw("q", 1, query.kinds())  # each execution its own
    device, measurement, limit, start, end_text, start_ms, length_s, start_ns, end_s = binding.bind(query.text["sql"], parameters).split("|")
    window = parameters["w"]
    assert device in ("a", "b", "c") and measurement == "temperature"
    assert limit == "20.005"  # halfway between two values of two decimals: no value equals it
    assert int(start_ms) == window.start_ms and int(start_ns) == window.start_ms * 1_000_000 and length_s == "3600"
    assert dt.datetime.fromisoformat(start.replace("Z", "+00:00")) == dt.datetime.fromtimestamp(window.start_ms / 1000, dt.UTC)
    assert end_text.count(":") == 2 and "T" not in end_text and not end_text.endswith("Z") and float(end_s) * 1000 == window.end_ms


def test_answers_in_normal_form_are_one_whatever_the_driver_gave():
    kinds = {1: "time"}
    sqlite = [("d2", 1_767_225_600_000, 20.5), ("d1", 1_767_225_600_100, 3)]
    postgres = [("d1", dt.datetime(2026, 1, 1, 0, 0, 0, 100_000, tzinfo=dt.UTC), decimal.Decimal("3.00")),
                ("d2", dt.datetime(2026, 1, 1, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))), 20.500000000001)]
    mysql = [("d1", "2026-01-01 00:00:00.100", 3.0), ("d2", dt.datetime(2026, 1, 1), 20.5)]  # naive: UTC
    digests = {answer_digest.kept(answer_digest.normalised(rows, kinds, False, 9), "").digest for rows in (sqlite, postgres, mysql)}
    assert len(digests) == 1
    ordered = answer_digest.normalised(sqlite, kinds, True, 9)
    assert ordered[0] == ["d2", "2026-01-01T00:00:00.000Z", 20.5]
    other = answer_digest.kept(answer_digest.normalised([("d1", 1_767_225_600_100, 3.5)], kinds, False, 9), "")
    one = answer_digest.kept(answer_digest.normalised(sqlite, kinds, False, 9), "")
    assert answer_digest.first_difference(one, other) == "row 1: ('d1', '2026-01-01T00:00:00.100Z', 3.0) vs ('d1', '2026-01-01T00:00:00.100Z', 3.5)"


def figures(data: str | None, *answers: tuple[str, str]) -> QueryFigures:
    return QueryFigures(executions=len(answers), data=data,
                        answers=[answer_digest.KeptAnswer(parameters=parameters, digest=digest, rows=1) for parameters, digest in answers])


def test_agreement_needs_two_targets_the_same_data_and_the_same_parameters():
    same = [agreement.Answered(name, figures("data", ("p1", "x"), ("p2", "y"))) for name in ("a", "b", "c")]
    assert agreement.verdict(same) == "agreed (3 targets)"
    odd = [*same[:2], agreement.Answered("c", figures("data", ("p1", "x"), ("p2", "z")))]
    assert agreement.verdict(odd).startswith("DIFFERENT: a, b vs c: with p2: ")
    assert agreement.verdict(same[:1]) == "not checked: answered by one target only"
    other_data = [same[0], agreement.Answered("b", figures("else", ("p1", "x")))]
    assert agreement.verdict(other_data).startswith("not checked: the targets hold other data (a vs b)")
    apart = [same[0], agreement.Answered("b", figures("data", ("p3", "x")))]
    assert agreement.verdict(apart).startswith("not checked: no execution with the same parameters")
    unknown = [same[0], agreement.Answered("b", figures(None, ("p1", "x")))]
    assert agreement.verdict(unknown).startswith("not checked: no record says what b holds")
