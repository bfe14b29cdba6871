"""The collector's Prometheus metrics scraped by a real scraper on the local platform: a VictoriaMetrics
of the test's own scrapes the collector every second (its port pinned with IOTBENCH_METRICS_PORT, as
a user's scrape config names it) during real runs on SQLite, and every query of the shipped Grafana
dashboard, read from its JSON, is answered and checked against the figures the run saved in its
results.json: rates within a few percent of the run's own, counters equal to the counted events,
latency percentiles within the histogram's buckets of the run's own percentiles."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import statistics
import threading
import time

import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.protocol import LATENCY_BUCKETS_S
from tests.scraper import DashboardQuery, Scraper, dashboard_queries, run_variable_query, scraping

pytestmark = pytest.mark.slow

RATE = 4000  # events/s of both workers: far below what SQLite holds, so that the run keeps its schedule
DURATION_S = 12
STEADY_RATE_INTERVAL_S = 4  # Grafana's $__rate_interval at a 1 s scrape interval: 4 x the interval
RATE_TOLERANCE = 0.05
IMPLIED = ("__name__", "run_id", "job", "instance")  # labels every series of the run has alike


BOUNDS = (0.0, *LATENCY_BUCKETS_S, float("inf"))


def bucket_bounds(seconds: float) -> tuple[float, float]:
    """The bounds of the histogram bucket a latency falls in, widened by the run's own histogram's
    precision (3 significant digits): a value at a bound may be counted on either side of it."""
    low = next(i for i in range(1, len(BOUNDS)) if seconds * 0.999 <= BOUNDS[i])
    high = next(i for i in range(1, len(BOUNDS)) if seconds * 1.001 <= BOUNDS[i])
    return BOUNDS[low - 1], BOUNDS[high]


def quantile_bounds(q: float, run_value_s: float, cumulative: dict[float, float]) -> tuple[float, float]:
    """Where histogram_quantile(q) of the run's final buckets may lie, given the run's own q-quantile:
    in that value's bucket, or in the next one up where the two ranks differ across its bound
    (histogram_quantile takes the rank q x n, HdrHistogram the value at the rank rounded to a call)."""
    low, high = bucket_bounds(run_value_s)
    total = cumulative[float("inf")]
    if cumulative[high] < q * total <= cumulative[high] + 1:
        high = BOUNDS[BOUNDS.index(high) + 1]
    return low, high


class Answers:
    """The dashboard's queries for one finished run, as Grafana would send them."""

    def __init__(self, scraper: Scraper, run_id: str, began: float, report: dict):
        self.scraper, self.run_id, self.began = scraper, run_id, began
        scraper.wait_until_gone(f'iotbench_run_info{{run_id="{run_id}"}}')
        self.ended = time.time()
        self.whole_run = f"{int(self.ended - began) + 5}s"  # a window back to before the collector started
        start_at = report["start_at"]
        # The timed phase once a rate's window holds none of the time before it, to its last second.
        self.steady_span = (start_at + STEADY_RATE_INTERVAL_S + 1, start_at + report["figures"]["duration_s"] - 1) if report.get("figures") else None

    def final(self, query) -> dict[str, float]:
        """Each series' value at the last scrape, by its labels' values (joined by ','), with
        $__rate_interval reaching back over the whole run."""
        series = self.scraper.query_range(query.promql(self.run_id, self.whole_run), self.began, self.ended)
        last = max((points[-1][0] for points in series.values() if points), default=None)
        return {",".join(value for name, value in labels if name not in IMPLIED): points[-1][1]
                for labels, points in series.items() if points and points[-1][0] == last}

    def steady(self, query) -> dict[str, float]:
        """Each series' median over the steady part of the timed phase (at the dashboard's own rate
        interval): a worker's report delayed by a busy machine makes one window low and a later one
        high, which a mean of a few windows would keep."""
        series = self.scraper.query_range(query.promql(self.run_id, f"{STEADY_RATE_INTERVAL_S}s"), *self.steady_span)
        return {",".join(value for name, value in labels if name not in IMPLIED): statistics.median(v for _, v in points)
                for labels, points in series.items()}


def own_query(expr: str) -> DashboardQuery:
    """A query of the test's own, beside the dashboard's."""
    return DashboardQuery("", "", expr)


def scrape_config(port: int) -> list[dict]:
    return [{"job_name": "iotdb-bench", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}]


def check_every_query(answers: Answers, checks: dict) -> None:
    queries = dashboard_queries()
    assert {(query.panel, query.ref) for query in queries} == set(checks), "every query of the dashboard has its check here"
    for query in queries:
        try:
            checks[query.panel, query.ref](query)
        except AssertionError as failure:
            raise AssertionError(f"{query.panel} / {query.ref}: {query.expr}: {failure}") from None


def within(value: float, expected: float, share: float = RATE_TOLERANCE) -> bool:
    return abs(value - expected) <= share * expected


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
        assert report["run_id"] in scraper.label_values("run_id", run_variable_query().removeprefix("label_values(").split(",")[0])
        figures, spec, workers = report["figures"], report["spec"], {str(w["worker"]): w for w in report["workers"]}
        processes = spec["workers"] + spec["query_workers"]
        mixed = report["queries_under_ingest"]
        latency = figures["latency"]
        assert figures["retries"] == 0 and all(w["retries"] == 0 for w in workers.values())

        def equals(expected):
            return lambda query: _assert_equal(answers.final(query), expected)

        final_buckets = {float(le): count for le, count in answers.final(own_query(
            "sum by (le) (iotbench_call_duration_seconds_bucket{run_id=\"$run_id\"})")).items()}

        def quantile(q, p_ms):
            def check(query):
                [value] = answers.final(query).values()
                low, high = quantile_bounds(q, p_ms / 1000, final_buckets)
                assert low <= value <= high, (value, p_ms / 1000, (low, high))
            return check

        def rate_of_all(query):
            [mean] = answers.steady(query).values()
            assert within(mean, figures["throughput"]), (mean, figures["throughput"])

        def rate_per_worker(query):
            means = answers.steady(query)
            assert set(means) == {str(i) for i in range(processes)}
            for index, mean in means.items():
                worker = workers.get(index)  # the query client inserts nothing
                expected = worker["events"] / (worker["finished_at"] - worker["started_at"]) if worker else 0.0
                assert within(mean, expected) if worker else mean == 0.0, (index, mean, expected)

        def p99_per_worker(query):
            values = answers.final(query)
            assert set(values) == set(workers)  # the query client makes no insert calls: no percentile
            # The run's p99 (checked against the run's own above) lies between its workers' p99s.
            [overall] = answers.final(next(q for q in dashboard_queries() if (q.panel, q.ref) == ("Call latency", "C"))).values()
            assert min(values.values()) * (1 - 1e-9) <= overall <= max(values.values()) * (1 + 1e-9), (values, overall)

        def per_worker(field):
            return lambda query: _assert_equal(answers.final(query), {index: w[field] for index, w in workers.items()})

        def query_p95(query):
            values = answers.final(query)
            assert set(values) == set(mixed)
            for name, value in values.items():
                # The p95 of both phases together lies between each phase's p95.
                phases = [mixed[name][phase]["p95_ms"] / 1000 for phase in ("under_ingest", "idle")]
                low, high = bucket_bounds(min(phases))[0], bucket_bounds(max(phases))[1]
                assert low <= value <= high, (name, value, (low, high))

        def query_mean(query):
            values = answers.final(query)
            for name, figures_of in mixed.items():
                phases = [figures_of[phase] for phase in ("under_ingest", "idle")]
                mean_s = sum(p["mean_ms"] * p["calls"] for p in phases) / sum(p["calls"] for p in phases) / 1000
                assert values[name] == pytest.approx(mean_s, rel=0.01), (name, values[name], mean_s)

        def collector_cpu(query):
            [mean] = answers.steady(query).values()
            assert 0 <= mean <= os.cpu_count()
            # the same CPU the report measured over the timed phase (a clock tick is 10 ms)
            assert mean * figures["duration_s"] == pytest.approx(report["collector_cpu_s"], abs=0.05 + 0.3 * report["collector_cpu_s"])

        check_every_query(answers, {
            ("Phase", "A"): lambda query: _assert_equal(answers.final(query), {"done": 1.0}),
            ("Events", "A"): equals({"": figures["events"]}),
            ("Events", "B"): equals({"": 0.0}),  # a --duration run plans no number of events
            ("Prefilled", "A"): equals({"": figures["prefilled"]}),
            ("Calls", "A"): equals({"": latency["calls"]}),
            ("Errors and retries", "A"): equals({"": 0.0}),
            ("Errors and retries", "B"): equals({"": figures["retries"]}),
            ("Workers", "A"): equals({"": processes}),
            ("Workers", "B"): equals({"": processes}),
            ("Workers", "C"): equals({"": processes}),
            ("Events per second", "A"): rate_of_all,
            ("Events per second", "B"): equals({"": float(RATE)}),
            ("Events per second per worker", "A"): rate_per_worker,
            ("Call latency", "A"): quantile(0.5, latency["p50_ms"]),
            ("Call latency", "B"): quantile(0.95, latency["p95_ms"]),
            ("Call latency", "C"): quantile(0.99, latency["p99_ms"]),
            ("Call latency p99 per worker", "A"): p99_per_worker,
            ("Errors and retries per worker", "A"): equals({str(i): 0.0 for i in range(processes)}),
            ("Errors and retries per worker", "B"): equals({str(i): 0.0 for i in range(processes)}),
            ("Schedule lag per worker (open loop)", "A"): per_worker("behind_s"),
            ("Schedule lag per worker (open loop)", "B"): per_worker("max_lag_s"),
            ("Query latency per query", "A"): query_p95,
            ("Query latency per query", "B"): query_mean,
            ("Query executions and errors", "A"): equals({name: f["under_ingest"]["calls"] + f["idle"]["calls"] for name, f in mixed.items()}),
            ("Query executions and errors", "B"): equals({name: float(len(f["errors"])) for name, f in mixed.items()}),
            ("Collector CPU", "A"): collector_cpu,
        })


def _assert_equal(found: dict[str, float], expected: dict[str, float]) -> None:
    """Equal: VictoriaMetrics keeps 12 significant digits of a value (integers exactly)."""
    assert found == pytest.approx({key: float(value) for key, value in expected.items()}, rel=1e-11, abs=1e-15), (found, expected)


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
        report = run["report"]
        answers = Answers(scraper, report["run_id"], began, report)
        queries = report["queries"]
        assert all(not figures["errors"] for figures in queries.values())
        workers = {"0": 0.0, "1": 0.0}

        def equals(expected):
            return lambda query: _assert_equal(answers.final(query), expected)

        def query_p95(query):
            values = answers.final(query)
            assert set(values) == set(queries)
            for name, value in values.items():
                low, high = bucket_bounds(queries[name]["min_s"])[0], bucket_bounds(queries[name]["max_s"])[1]
                assert low <= value <= high, (name, value, (low, high))

        def collector_cpu(query):
            [value] = answers.final(query).values()
            assert 0 <= value <= os.cpu_count()

        check_every_query(answers, {
            ("Phase", "A"): equals({"done": 1.0}),
            ("Events", "A"): equals({"": 0.0}),
            ("Events", "B"): equals({}),  # a query run plans no events
            ("Prefilled", "A"): equals({"": 0.0}),
            ("Calls", "A"): equals({"": 0.0}),  # queries are counted per query, not as calls
            ("Errors and retries", "A"): equals({"": 0.0}),
            ("Errors and retries", "B"): equals({"": 0.0}),
            ("Workers", "A"): equals({"": 2.0}),
            ("Workers", "B"): equals({"": 2.0}),
            ("Workers", "C"): equals({"": 2.0}),
            ("Events per second", "A"): equals({"": 0.0}),
            ("Events per second", "B"): equals({}),
            ("Events per second per worker", "A"): equals(workers),
            ("Call latency", "A"): equals({}),  # no call: no percentile
            ("Call latency", "B"): equals({}),
            ("Call latency", "C"): equals({}),
            ("Call latency p99 per worker", "A"): equals({}),
            ("Errors and retries per worker", "A"): equals(workers),
            ("Errors and retries per worker", "B"): equals(workers),
            ("Schedule lag per worker (open loop)", "A"): equals({}),
            ("Schedule lag per worker (open loop)", "B"): equals({}),
            ("Query latency per query", "A"): query_p95,
            ("Query latency per query", "B"): lambda query: _assert_mean(answers.final(query), {n: f["avg_s"] for n, f in queries.items()}),
            ("Query executions and errors", "A"): equals({name: figures["executions"] for name, figures in queries.items()}),
            ("Query executions and errors", "B"): equals(dict.fromkeys(queries, 0.0)),
            ("Collector CPU", "A"): collector_cpu,
        })


def _assert_mean(found: dict[str, float], expected: dict[str, float]) -> None:
    """Means of exact sums and counts: equal to the run's to VictoriaMetrics' 12 digits, give or take the sums' rounding."""
    assert found == pytest.approx(expected, rel=1e-9), (found, expected)
