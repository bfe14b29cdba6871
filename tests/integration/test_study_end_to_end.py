"""`python run.py study` end to end on the local platform: a study of SQLite and PostgreSQL killed with
kill -9 in its second cell and resumed, its figures against the cells' own results and against the same
commands typed by hand; a change of the file; a failed cell."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, dedicated_database, processes_with_env, run_cli

pytestmark = pytest.mark.slow

STUDY = """\
name: resume
targets: [sqlite, postgresql-local]
workers: [1, 2]
runs: 1
workloads:
  - name: copy
    insert: {num-inserts: 20000, batch: 100}
  - name: queries
    query: {queries: [count-events, device-downsample]}
    workers: [1]
    runs: 2
  - name: scan
    scan: {page-size: 1000}
    workers: [1]
"""


def study_json(folder: Path) -> dict:
    return json.loads((folder / "study.json").read_text())


def cell_folder(folder: Path, prefix: str) -> Path:
    found = list((folder / "cells").glob(f"{prefix}-*"))
    assert len(found) == 1, found
    return found[0]


def results_of(study_folder: Path, cell: dict) -> dict:
    return json.loads((study_folder / cell["folder"] / "results.json").read_text())


def kill_during(process: subprocess.Popen, folder: Path, prefix: str, limit: float = 120.0) -> None:
    """SIGKILL the CLI once the cell's command has made its results folder (its run is starting)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if list((folder / "cells").glob(f"{prefix}-*/*/logs")):
            time.sleep(0.3)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            return
        if process.poll() is not None:
            pytest.fail(f"the study ended before cell {prefix} started: {process.stderr.read()}")
        time.sleep(0.02)
    process.kill()
    pytest.fail(f"cell {prefix} did not start")


@pytest.mark.postgres
def test_killed_study_resumes_and_its_figures_are_the_cells_own(tmp_path, pg_env):
    env = {**os.environ, **dedicated_database(pg_env, "iotbench_study")}
    (tmp_path / "study.yaml").write_text(STUDY)
    folder = tmp_path / "results" / "study-resume"
    tag = uuid.uuid4().hex
    process = subprocess.Popen([sys.executable, str(REPO_ROOT / "run.py"), "study", "study.yaml"], cwd=tmp_path,
                               env={**env, "IOTB_TEST_TAG": tag}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kill_during(process, folder, "sqlite-copy-w2")
    deadline = time.monotonic() + 10
    while processes_with_env(tag) and time.monotonic() < deadline:  # the run's processes die with the CLI
        time.sleep(0.1)
    assert processes_with_env(tag) == []

    first, second = cell_folder(folder, "sqlite-copy-w1"), cell_folder(folder, "sqlite-copy-w2")
    assert (first / "cell.json").is_file() and not (second / "cell.json").exists()
    kept = (first / "cell.json").stat().st_mtime_ns
    kept_results = sorted(p.name for p in first.iterdir())

    resumed = run_cli(["study", "study.yaml"], tmp_path, env=env)
    assert resumed.code == 0, resumed.stderr
    assert "[1/8] sqlite · copy · 1 worker(s): ok earlier, kept" in resumed.stdout
    assert "[2/8] sqlite · copy · 2 worker(s)" in resumed.stdout and "[2/8] sqlite · copy · 2 worker(s): ok earlier" not in resumed.stdout
    assert (first / "cell.json").stat().st_mtime_ns == kept and sorted(p.name for p in first.iterdir()) == kept_results
    assert len(list(second.glob("*/results.json"))) == 1  # the cut run's folder was replaced, not added to
    assert (folder / "report.html").is_file() and "## Rankings" in (folder / "study.md").read_text()

    document = study_json(folder)
    assert document["format_version"] == 1 and document["status"] == "complete"
    assert [cell["status"] for cell in document["cells"]] == ["ok"] * 8
    for cell in document["cells"]:  # every figure of the study is its cell's own
        results = results_of(folder, cell)
        assert results["status"] == "ok"
        assert (cell["inserts"], cell["queries"], cell["scans"]) == (results["inserts"], results["queries"], results["scans"])
    copy = next(r for r in document["rankings"] if r["workload"] == "copy")
    values = [row["value"] for row in copy["rows"]]
    assert [row["rank"] for row in copy["rows"]] == [1, 2, 3, 4] and values == sorted(values, reverse=True)
    by_cell = {cell["key"]: cell for cell in document["cells"]}
    assert all(row["value"] == by_cell[row["cell"]]["inserts"][0]["throughput"]["avg"] for row in copy["rows"])
    assert {item["target"] for item in document["scores"] if item["score"] is not None} == {"sqlite", "postgresql-local"}
    assert max(item["score"] for item in document["scores"]) == pytest.approx(100.0) or all(
        item["score"] < 100 for item in document["scores"])

    # The same cells typed by hand: the data the study's last PostgreSQL insert left answers the same.
    query_cell = next(c for c in document["cells"] if c["target"] == "postgresql-local" and c["workload"] == "queries")
    by_hand = run_cli(["query", *query_cell["args"], "--output", "by-hand"], tmp_path, env=env)
    assert by_hand.code == 0, by_hand.stderr
    hand = json.loads(next((tmp_path / "by-hand").glob("*/results.json")).read_text())
    assert [(q["query"], q["rows"], q["answer"]) for q in hand["queries"]] == [(q["query"], q["rows"], q["answer"]) for q in query_cell["queries"]]
    assert all(q["answer"] == "ok" for q in hand["queries"])
    insert_cell = next(c for c in document["cells"] if c["target"] == "postgresql-local" and c["workload"] == "copy" and c["workers"] == 2)
    by_hand = run_cli(["insert", *insert_cell["args"], "--output", "by-hand-insert"], tmp_path, env=env)
    assert by_hand.code == 0, by_hand.stderr
    hand = json.loads(next((tmp_path / "by-hand-insert").glob("*/results.json")).read_text())
    row, cell_row = hand["inserts"][0], insert_cell["inserts"][0]
    assert (row["workers"], row["runs"], row["insert_mode"], row["count_check"]) == (
        cell_row["workers"], cell_row["runs"], cell_row["insert_mode"], cell_row["count_check"])
    assert hand["runs"][0]["report"]["figures"]["events"] == results_of(folder, insert_cell)["runs"][0]["report"]["figures"]["events"] == 40_000
    assert hand["spec"]["batch"] == results_of(folder, insert_cell)["spec"]["batch"] == 100


CHANGING = """\
name: changing
targets: [sqlite]
workers: [1]
runs: 1
workloads:
  - name: first
    insert: {num-inserts: 1000, batch: 100}
  - name: queries
    query: {queries: [count-events]}
  - name: second
    insert: {num-inserts: 1500, batch: 100}
"""


def test_a_changed_file_reruns_the_cells_it_changes_and_restores_their_data(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text(CHANGING)
    assert (result := run_cli(["study", "study.yaml"], tmp_path)).code == 0, result.stderr
    folder = tmp_path / "results" / "study-changing"
    marks = {name: (cell_folder(folder, f"sqlite-{name}-w1") / "cell.json").stat().st_mtime_ns for name in ("first", "queries", "second")}

    # Another query: the database now holds the second insert's data, so the first insert runs again first.
    path.write_text(CHANGING.replace("[count-events]", "[count-events, temperature-stats]"))
    dry = run_cli(["study", "study.yaml", "--dry-run"], tmp_path)
    assert dry.code == 0 and "to run" in dry.stdout and "ok (kept)" in dry.stdout
    result = run_cli(["study", "study.yaml"], tmp_path)
    assert result.code == 0, result.stderr
    assert "holds other data than its insert cell's (first, 1 worker(s)): running that cell again first" in result.stdout
    assert "[3/3] sqlite · second · 1 worker(s): ok earlier, kept" in result.stdout
    assert (cell_folder(folder, "sqlite-first-w1") / "cell.json").stat().st_mtime_ns != marks["first"]
    assert (cell_folder(folder, "sqlite-second-w1") / "cell.json").stat().st_mtime_ns == marks["second"]
    document = study_json(folder)
    queries = next(cell for cell in document["cells"] if cell["workload"] == "queries")
    count = next(row for row in queries["queries"] if row["query"] == "count-events")
    assert count["answer"] == "ok" and count["rows"] == 1  # one row: the count, checked against the first insert's 1,000 events
    assert len(document["stale_cells"]) == 1  # the old query cell's folder is kept, not reported


def test_a_failed_cell_is_not_ranked_and_its_queries_are_skipped(tmp_path):
    (tmp_path / "study.yaml").write_text(CHANGING.replace("num-inserts: 1000, batch: 100", "num-inserts: 50000000, timeout: 2"))
    result = run_cli(["study", "study.yaml"], tmp_path)
    assert result.code == 1
    assert "sqlite · first · 1 worker(s): " in result.stderr and "timeout" in result.stderr
    assert "cells did not pass" in result.stderr.splitlines()[-1] and "Traceback" not in result.stderr
    document = study_json(tmp_path / "results" / "study-changing")
    assert [cell["status"] for cell in document["cells"]] == ["failed", "skipped", "ok"]
    first = next(r for r in document["rankings"] if r["workload"] == "first")
    assert first["rows"][0]["rank"] is None and first["rows"][0]["why"].startswith("the cell failed")
    assert document["status"] == "incomplete"


def test_ctrl_c_stops_the_study_in_one_line_and_the_cut_cell_runs_again(tmp_path):
    (tmp_path / "study.yaml").write_text(STUDY.replace("targets: [sqlite, postgresql-local]", "targets: [sqlite]"))
    folder = tmp_path / "results" / "study-resume"
    tag = uuid.uuid4().hex
    process = subprocess.Popen([sys.executable, str(REPO_ROOT / "run.py"), "study", "study.yaml"], cwd=tmp_path,
                               env={**os.environ, "IOTB_TEST_TAG": tag}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list((folder / "cells").glob("sqlite-copy-w2-*/*/logs")) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr
    assert processes_with_env(tag) == []
    document = study_json(folder)
    assert document["status"] == "interrupted" and [cell["status"] for cell in document["cells"]][:2] == ["ok", "pending"]
    assert not (cell_folder(folder, "sqlite-copy-w2") / "cell.json").exists()
    resumed = run_cli(["study", "study.yaml"], tmp_path)
    assert resumed.code == 0, resumed.stderr
    assert [cell["status"] for cell in study_json(folder)["cells"]] == ["ok"] * 4
