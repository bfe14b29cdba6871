"""Spread across runs on known inputs, and the unstable flag where a reader sees it."""

import math

import pytest
from rich.console import Console

from iotdb_bench.cli.report import markdown, tables
from iotdb_bench.cli.results import compared
from iotdb_bench.cli.results.tables.sections import compared_sections
from iotdb_bench.simulator.measurement import stats
from tests import factories


def test_three_runs_known_figures():
    s = stats.spread([90.0, 100.0, 110.0])
    assert (s.n, s.min, s.avg, s.max) == (3, 90.0, 100.0, 110.0)
    assert s.stdev == pytest.approx(10.0)  # sample standard deviation
    assert s.cv == pytest.approx(0.10)
    half_width = 4.303 * 10.0 / math.sqrt(3)  # Student t, 2 degrees of freedom
    assert (s.ci95_low, s.ci95_high) == (pytest.approx(100 - half_width), pytest.approx(100 + half_width))
    assert not s.unstable  # exactly 10% is the limit, not above it


def test_cv_above_ten_percent_is_unstable():
    s = stats.spread([80.0, 100.0, 120.0])
    assert s.cv == pytest.approx(0.20)
    assert s.unstable


def test_two_runs_use_the_wide_t_quantile():
    s = stats.spread([50.0, 150.0])
    assert s.stdev == pytest.approx(math.sqrt(5000))
    assert s.ci95_high - s.avg == pytest.approx(12.706 * math.sqrt(5000) / math.sqrt(2))
    assert s.unstable


def test_the_interval_of_a_figure_that_cannot_be_negative_stops_at_zero():
    s = stats.spread([317_113.7, 371_177.3, 10_000.0])  # three runs far apart: the t interval reaches below 0
    assert s.ci95_low == 0.0 and s.ci95_high - s.avg == pytest.approx(4.303 * s.stdev / math.sqrt(3))
    assert stats.spread([-5.0, 5.0]).ci95_low < -5  # a figure that can be negative keeps its interval


def test_one_run_has_no_spread():
    s = stats.spread([7.0])
    assert (s.stdev, s.cv, s.ci95_low, s.ci95_high, s.unstable) == (0.0, 0.0, 7.0, 7.0, False)


def test_many_runs_use_the_normal_quantile():
    values = [100.0 + (i % 2) for i in range(40)]
    s = stats.spread(values)
    assert s.ci95_high - s.avg == pytest.approx(1.96 * s.stdev / math.sqrt(40))


def _text(table) -> str:
    console = Console(record=True, width=400)
    console.print(table)
    return console.export_text()


def _inserts(throughputs):
    return factories.section(factories.document([(4, factories.insert_report([1000], 1.0, throughput=value, workers=4))
                                                 for value in throughputs]), "inserts")


def test_insert_table_flags_unstable_and_shows_the_interval():
    text = _text(tables.section_table(_inserts([80.0, 100.0, 120.0]), details=True))
    assert "20.0% unstable" in text
    assert "±50" in text  # 4.303 * 20 / sqrt(3) = 49.7
    steady = _text(tables.section_table(_inserts([99.0, 100.0, 101.0])))
    body = [line for line in steady.splitlines() if line.startswith("│")]  # data rows, not the caption
    assert len(body) == 1 and "1.0%" in body[0] and "unstable" not in body[0]
    assert "99–101" in body[0]  # min–max of the runs


def _document(throughputs):
    return factories.document([(2, factories.insert_report([1000], 1000 / value, throughput=value, workers=2, counters=(0, 1000)))
                               for value in throughputs])


def test_compare_output_carries_the_flag(tmp_path):
    from iotdb_bench.cli.report import csv_files

    rows = compared.compare([("a", _document([100.0, 150.0])), ("b", _document([100.0, 101.0]))])
    assert [row.throughput.unstable for row in rows.inserts] == [True, False]
    inserts = next(section for section in compared_sections(rows) if section.name == "inserts")
    written = markdown.table(inserts)
    assert [line.count("unstable") for line in written.splitlines() if line.startswith("| sqlite |")] == [1, 0]
    csv_files.write_sections(tmp_path, [inserts])
    assert "throughput.unstable" in (tmp_path / "inserts.csv").read_text().splitlines()[0]
    assert "unstable" in _text(tables.section_table(inserts))
    assert "| sqlite | a |" in written and "| sqlite | b |" in written  # every row names its source
