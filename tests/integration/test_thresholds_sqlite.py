"""Thresholds through the CLI on SQLite, as a CI job uses them (docs/thresholds.md): thresholds that pass
exit 0, one that fails exits 1 after the results folder is saved, one that cannot be judged exits 2 before
anything runs; the same for a query run and for a study, whose changed thresholds rerun no cell."""

from __future__ import annotations

import csv
import html
import json

import pytest

pytestmark = pytest.mark.slow

INSERT = ["insert", "--target", "sqlite", "-w", "1,2", "-r", "1", "--num-inserts", "2000", "--batch", "500"]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_passing_thresholds_exit_0_and_a_failing_one_exits_1_after_everything_is_saved(cli):
    passing = cli(*INSERT, "--threshold", "inserts_per_s>=1", "--threshold", "count_check==ok", "--threshold", "p99_ms<=100000")
    assert passing.code == 0, passing.stderr
    assert "Thresholds: all 3 passed" in passing.stdout
    verdicts = passing.results()["thresholds"]
    assert [(v["threshold"]["expression"], v["passed"], [row["where"] for row in v["rows"]]) for v in verdicts] == [
        ("inserts_per_s>=1", True, ["1 worker", "2 workers"]), ("count_check==ok", True, ["1 worker", "2 workers"]),
        ("p99_ms<=100000", True, ["1 worker", "2 workers"])]

    failing = cli(*INSERT, "--threshold", "inserts_per_s>=1", "--threshold", "p99_ms<=0.000001")
    assert failing.code == 1
    document = failing.results()  # saved before the command failed
    assert document["status"] == "ok" and all(row["count_check"] == "ok" for row in document["inserts"])
    [line] = error_lines(failing.stderr)
    assert line.startswith("error: 1 of 2 thresholds failed: p99_ms<=0.000001 (1 worker: ") and "; 2 workers: " in line
    assert [verdict["passed"] for verdict in document["thresholds"]] == [True, False]
    folder = failing.results_folders()[-1]
    assert "Thresholds: 1 of 2 FAILED" in failing.stdout and "Thresholds: 1 of 2 FAILED" in (folder / "report.html").read_text()
    with (folder / "thresholds.csv").open() as handle:
        assert [(line["threshold.expression"], line["passed"]) for line in csv.DictReader(handle)] == [
            ("inserts_per_s>=1", "True"), ("p99_ms<=0.000001", "False")]
    assert "--threshold 'p99_ms<=0.000001'" in html.unescape((folder / "report.html").read_text())  # the command that reproduces it

    again = cli("report", str(folder))  # a report written again judges the same
    assert again.code == 0 and "Thresholds: 1 of 2 FAILED" in again.stdout


@pytest.mark.parametrize(("threshold", "words"), [
    ("inserts_per_sec>=1", "no figure 'inserts_per_sec' in an insert run (known: inserts_per_s,"),
    ("count_check>=1", "'count_check' is a check"),
    ("query.count-events.p99_ms<5", "an insert run has query figures only with query clients"),
    ("inserts_per_s=>1", "is not a threshold"),
])
def test_a_threshold_that_cannot_be_judged_is_one_line_before_anything_runs(cli, threshold, words):
    result = cli(*INSERT, "--threshold", threshold)
    assert result.code == 2
    [line] = error_lines(result.stderr)
    assert words in line and threshold in line
    assert not (result.cwd / "results").exists() and not (result.cwd / "iotdb-bench.sqlite3").exists()


def test_query_thresholds_judge_the_named_query(cli):
    assert cli(*INSERT).code == 0
    passing = cli("query", "--target", "sqlite", "-r", "2", "--queries", "count-events,device-downsample",
                  "--threshold", "query.device-downsample.p95_ms<100000", "--threshold", "answer==ok")
    assert passing.code == 0, passing.stderr
    downsample, answers = passing.results()["thresholds"]
    assert [row["query"] for row in downsample["rows"]] == ["device-downsample"]
    assert [row["query"] for row in answers["rows"]] == ["count-events", "device-downsample"]
    unknown = cli("query", "--target", "sqlite", "--queries", "count-events", "--threshold", "query.device-downsample.p95_ms<1")
    assert unknown.code == 2 and "the run has no query 'device-downsample' (its queries: count-events)" in unknown.stderr


STUDY = """\
name: gate
targets: [sqlite]
workers: [1]
runs: 1
thresholds: [count_check==ok]
workloads:
  - {name: copy, insert: {batch: 500, num-inserts: 2000}, thresholds: ["LIMIT"]}
  - {name: queries, query: {queries: [count-events]}, thresholds: ["query.count-events.avg_ms<100000"]}
"""


def test_a_study_fails_on_a_threshold_after_saving_and_a_changed_one_reruns_nothing(cli, tmp_path):
    (tmp_path / "study.yaml").write_text(STUDY.replace("LIMIT", "p99_ms<=0.000001"))
    failing = cli("study", "study.yaml", "--output", "gate")
    assert failing.code == 1
    [line] = error_lines(failing.stderr)
    assert "1 threshold verdict(s) failed (sqlite · copy · w1: p99_ms<=0.000001 (1 worker: " in line and "study saved in gate" in line
    study = json.loads((failing.cwd / "gate" / "study.json").read_text())
    verdicts = {cell["workload"]: [(v["threshold"]["expression"], v["passed"]) for v in cell["thresholds"]] for cell in study["cells"]}
    assert verdicts == {"copy": [("p99_ms<=0.000001", False), ("count_check==ok", True)],
                        "queries": [("query.count-events.avg_ms<100000", True)]}
    assert [cell["status"] for cell in study["cells"]] == ["ok", "ok"]  # the queries ran on the data: a threshold is a gate, not a check
    assert "1 of 2 FAILED" in (failing.cwd / "gate" / "report.html").read_text()

    (failing.cwd / "study.yaml").write_text(STUDY.replace("LIMIT", "p99_ms<=100000"))
    passing = cli("study", "study.yaml", "--output", "gate")
    assert passing.code == 0, passing.stderr
    assert passing.stdout.count("ok earlier, kept") == 2 and "Thresholds: all 3 passed" in passing.stdout
    unknown = cli("study", "study.yaml", "--output", "gate", "--threshold", "rows_per_s>1")
    assert unknown.code == 2 and "thresholds.1 'rows_per_s>1' applies to no cell of the study" in unknown.stderr
