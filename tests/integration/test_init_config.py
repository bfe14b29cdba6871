"""`python run.py init` in an empty folder, then a run that uses the config it wrote (read from the current
folder, as the run's conditions say); edited, the run follows the edit; written twice, it refuses without
--force."""

from __future__ import annotations

import json

import pytest

from iotdb_bench.cli.config import CONFIG_ENV

pytestmark = pytest.mark.slow


def test_init_then_a_run_that_reads_it(cli, tmp_path, monkeypatch):
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    written = cli("init")
    assert written.code == 0, written.stderr
    assert "Wrote config.yaml" in written.stdout and "python run.py insert --target sqlite" in written.stdout
    config = tmp_path / "config.yaml"
    text = config.read_text()
    assert text.startswith("# iotdb-bench ") and "\n  sqlite:\n" in text

    # the run reads it: edit the sqlite target's file, and the run writes that file
    config.write_text(text.replace("    path: iotdb-bench.sqlite3\n", "    path: edited.sqlite3\n", 1))
    run = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "1000", "--batch", "100")
    assert run.code == 0, run.stderr
    assert (tmp_path / "edited.sqlite3").is_file() and not (tmp_path / "iotdb-bench.sqlite3").exists()
    document = run.results()
    assert document["environment"]["config"] == {"path": "./config.yaml", "chosen_by": "the current folder"}
    assert "config ./config.yaml." in " ".join(run.stdout.split())  # the conditions under the table
    assert "./config.yaml (chosen by: the current folder)" in (run.results_folders()[-1] / "report.html").read_text()

    again = cli("init")
    assert again.code == 2 and again.stderr.strip() == "error: config.yaml exists: edit it, or add --force to write the starter config over it"
    assert config.read_text() != text  # the edit is kept
    forced = cli("init", "--force")
    assert forced.code == 0 and config.read_text() == text


def test_iotbench_config_names_another_file_and_wins_over_the_current_folder(cli, tmp_path):
    assert cli("init").code == 0 and cli("init", "other.yaml").code == 0
    other = tmp_path / "other.yaml"
    other.write_text(other.read_text().replace("    path: iotdb-bench.sqlite3\n", "    path: other.sqlite3\n", 1))
    run = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "1000", env={CONFIG_ENV: "other.yaml"})
    assert run.code == 0, run.stderr
    assert (tmp_path / "other.sqlite3").is_file()
    assert json.loads((run.results_folders()[-1] / "results.json").read_text())["environment"]["config"] == {
        "path": "other.yaml", "chosen_by": "IOTBENCH_CONFIG"}
