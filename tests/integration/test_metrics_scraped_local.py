"""The collector's Prometheus metrics scraped by a real scraper on the local platform: a VictoriaMetrics
of the test's own scrapes the collector every second (its port pinned with IOTBENCH_METRICS_PORT, as
a user's scrape config names it) during real runs on SQLite, and every query of the shipped Grafana
dashboard, read from its JSON, is answered and checked against the figures the run saved in its
results.json (tests/dashboard_checks.py)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time

import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from tests.dashboard_checks import Answers, check_open_loop_mixed_run, check_query_run
from tests.scraper import run_variable_query, scraping

pytestmark = pytest.mark.slow

RATE = 4000  # events/s of both workers: far below what SQLite holds, so that the run keeps its schedule
DURATION_S = 12


def scrape_config(port: int) -> list[dict]:
    return [{"job_name": "iotdb-bench", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}]


def test_an_open_loop_mixed_run_as_the_dashboard_shows_it(cli, tmp_path):
    port = free_port()
    with scraping(tmp_path, scrape_config(port)) as scraper:
        began = time.time()
        result = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--batch", "50", "--rate", str(RATE), "--duration", str(DURATION_S),
                     "--prefill", "2000", "--query-workers", "1", "--queries", "count-events,temperature-stats", "--query-rate", "4",
                     env={"IOTBENCH_METRICS_PORT": str(port)}, timeout=120)
        assert result.code == 0, result.stderr
        [run] = result.results()["runs"]
        report = run["report"]
        assert report["conditions"]["metrics_url"] == f"http://127.0.0.1:{port}/metrics"
        answers = Answers(scraper, report["run_id"], began, report)
        # the dashboard's run variable offers the run
        assert report["run_id"] in scraper.label_values("run_id", run_variable_query().removeprefix("label_values(").split(",")[0])
        check_open_loop_mixed_run(answers, report)


def test_a_query_run_as_the_dashboard_shows_it(cli, tmp_path):
    # A rollback journal (not WAL), so that a lock held by the test holds the run's readers back.
    loaded = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "20000",
                 "--extra-option", "journal_mode=delete")
    assert loaded.code == 0, loaded.stderr
    port = free_port()
    with scraping(tmp_path, scrape_config(port)) as scraper:
        began = time.time()
        # A query run takes a second or two: it waits for the scraper to have its zeros first (a rate
        # needs them, or the increase before the first scrape is lost), held on the database's lock.
        with contextlib.closing(sqlite3.connect(tmp_path / "iotdb-bench.sqlite3", isolation_level=None)) as lock:
            lock.execute("BEGIN EXCLUSIVE")
            outcome: list = []
            run = threading.Thread(target=lambda: outcome.append(cli(
                "query", "--target", "sqlite", "-w", "2", "-r", "5", "--queries", "count-events,temperature-stats,newest-per-device",
                env={"IOTBENCH_METRICS_PORT": str(port)}, timeout=120)))
            run.start()
            scraper.wait_for('iotbench_run_info{task="query"}', began)
            lock.execute("COMMIT")
        run.join()
        [result] = outcome
        assert result.code == 0, result.stderr
        [run] = result.results()["runs"]
        check_query_run(Answers(scraper, run["report"]["run_id"], began, run["report"]), run["report"])
