"""The shipped Grafana dashboard's every query checked against a finished run's results.json, as a
real scraper (tests/scraper.py) answers it: shared by the local platform's test
(tests/integration/test_metrics_scraped_local.py) and the cluster's (tests/kubernetes/test_metrics_k8s.py).

What "the same figure" means for each: counters equal to the run's counts (the scraper keeps 12
significant digits); a rate's median over the steady part of the timed phase within RATE_TOLERANCE of
the run's own; a latency percentile within the histogram bucket of the run's own percentile (or the
next one up, where the two rank conventions part across a bound); a mean of exact sums equal.
"""

from __future__ import annotations

import os
import statistics
import time

import pytest

from iotdb_bench.simulator.protocol import LATENCY_BUCKETS_S
from tests.scraper import DashboardQuery, Scraper, dashboard_queries

STEADY_RATE_INTERVAL_S = 4  # Grafana's $__rate_interval at a 1 s scrape interval: 4 x the interval
RATE_TOLERANCE = 0.05
FINAL_STEP_S = 0.25  # the steps of `Answers.final`: a quarter of the scrape interval
IMPLIED = ("__name__", "run_id", "job", "instance", "namespace", "pod", "container", "endpoint")  # labels every series of the run has alike
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
        $__rate_interval reaching back over the whole run. Steps of a quarter of the 1 s scrape
        interval: the final scrape's samples hold until the staleness marker of the next (failed)
        scrape, less than a second later when that scrape came late, and a 1 s step could miss them
        (CI once read the phase `running` so)."""
        series = self.scraper.query_range(query.promql(self.run_id, self.whole_run), self.began, self.ended, step_s=FINAL_STEP_S)
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


def assert_equal(found: dict[str, float], expected: dict[str, float]) -> None:
    """Equal: VictoriaMetrics keeps 12 significant digits of a value (integers exactly)."""
    assert found == pytest.approx({key: float(value) for key, value in expected.items()}, rel=1e-11, abs=1e-15), (found, expected)


def equals(answers: Answers, expected: dict[str, float]):
    return lambda query: assert_equal(answers.final(query), expected)


def check_open_loop_mixed_run(answers: Answers, report: dict) -> None:
    """An insert run at a --rate with --query-workers: every panel has figures."""
    figures, spec, workers = report["figures"], report["spec"], {str(w["worker"]): w for w in report["workers"]}
    processes = spec["workers"] + spec["query_workers"]
    mixed = report["queries_under_ingest"]
    latency = figures["latency"]
    assert figures["retries"] == 0 and all(w["retries"] == 0 for w in workers.values())
    final_buckets = {float(le): count for le, count in answers.final(own_query(
        'sum by (le) (iotbench_call_duration_seconds_bucket{run_id="$run_id"})')).items()}

    def quantile(q, p_ms):
        def check(query):
            [value] = answers.final(query).values()
            low, high = quantile_bounds(q, p_ms / 1000, final_buckets)
            assert low <= value <= high, (value, p_ms / 1000, (low, high))
        return check

    def rate_of_all(query):
        [median] = answers.steady(query).values()
        assert within(median, figures["throughput"]), (median, figures["throughput"])

    def rate_per_worker(query):
        medians = answers.steady(query)
        assert set(medians) == {str(i) for i in range(processes)}
        for index, median in medians.items():
            worker = workers.get(index)  # the query client inserts nothing
            expected = worker["events"] / (worker["finished_at"] - worker["started_at"]) if worker else 0.0
            assert within(median, expected) if worker else median == 0.0, (index, median, expected)

    def p99_per_worker(query):
        values = answers.final(query)
        assert set(values) == set(workers)  # the query client makes no insert calls: no percentile
        # The run's p99 (checked against the run's own above) lies between its workers' p99s.
        [overall] = answers.final(next(q for q in dashboard_queries() if (q.panel, q.ref) == ("Call latency", "C"))).values()
        assert min(values.values()) * (1 - 1e-9) <= overall <= max(values.values()) * (1 + 1e-9), (values, overall)

    def per_worker(field):
        return equals(answers, {index: w[field] for index, w in workers.items()})

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
            # the report's means are the histograms' (to 3 digits), the metrics' the exact sums'
            assert values[name] == pytest.approx(mean_s, rel=0.01), (name, values[name], mean_s)

    def collector_cpu(query):
        [median] = answers.steady(query).values()
        assert 0 <= median <= os.cpu_count()
        # the same CPU the report measured over the timed phase (a clock tick is 10 ms)
        assert median * figures["duration_s"] == pytest.approx(report["collector_cpu_s"], abs=0.05 + 0.3 * report["collector_cpu_s"])

    every_process = {str(i): 0.0 for i in range(processes)}
    check_every_query(answers, {
        ("Phase", "A"): equals(answers, {"done": 1.0}),
        ("Events", "A"): equals(answers, {"": figures["events"]}),
        ("Events", "B"): equals(answers, {"": 0.0}),  # a --duration run plans no number of events
        ("Prefilled", "A"): equals(answers, {"": figures["prefilled"]}),
        ("Calls", "A"): equals(answers, {"": latency["calls"]}),
        ("Errors and retries", "A"): equals(answers, {"": 0.0}),
        ("Errors and retries", "B"): equals(answers, {"": figures["retries"]}),
        ("Workers", "A"): equals(answers, {"": processes}),
        ("Workers", "B"): equals(answers, {"": processes}),
        ("Workers", "C"): equals(answers, {"": processes}),
        ("Events per second", "A"): rate_of_all,
        ("Events per second", "B"): equals(answers, {"": spec["rate"]}),
        ("Events per second per worker", "A"): rate_per_worker,
        ("Call latency", "A"): quantile(0.5, latency["p50_ms"]),
        ("Call latency", "B"): quantile(0.95, latency["p95_ms"]),
        ("Call latency", "C"): quantile(0.99, latency["p99_ms"]),
        ("Call latency p99 per worker", "A"): p99_per_worker,
        ("Errors and retries per worker", "A"): equals(answers, every_process),
        ("Errors and retries per worker", "B"): equals(answers, every_process),
        ("Schedule lag per worker (open loop)", "A"): per_worker("behind_s"),
        ("Schedule lag per worker (open loop)", "B"): per_worker("max_lag_s"),
        ("Query latency per query", "A"): query_p95,
        ("Query latency per query", "B"): query_mean,
        ("Query executions and errors", "A"): equals(answers, {name: f["under_ingest"]["calls"] + f["idle"]["calls"] for name, f in mixed.items()}),
        ("Query executions and errors", "B"): equals(answers, {name: float(len(f["errors"])) for name, f in mixed.items()}),
        ("Collector CPU", "A"): collector_cpu,
    })


def check_query_run(answers: Answers, report: dict) -> None:
    """A query run: the query panels have figures, the insert panels zeros or none."""
    queries = report["queries"]
    assert all(not figures["errors"] for figures in queries.values())
    workers = {str(i): 0.0 for i in range(report["spec"]["workers"])}
    processes = {"": float(report["spec"]["workers"])}

    def query_p95(query):
        values = answers.final(query)
        assert set(values) == set(queries)
        for name, value in values.items():
            low, high = bucket_bounds(queries[name]["min_s"])[0], bucket_bounds(queries[name]["max_s"])[1]
            assert low <= value <= high, (name, value, (low, high))

    def query_mean(query):
        # Means of exact sums and counts: the run's to VictoriaMetrics' 12 digits, give or take the sums' rounding.
        assert answers.final(query) == pytest.approx({name: f["avg_s"] for name, f in queries.items()}, rel=1e-9)

    def collector_cpu(query):
        [value] = answers.final(query).values()
        assert 0 <= value <= os.cpu_count()

    check_every_query(answers, {
        ("Phase", "A"): equals(answers, {"done": 1.0}),
        ("Events", "A"): equals(answers, {"": 0.0}),
        ("Events", "B"): equals(answers, {}),  # a query run plans no events
        ("Prefilled", "A"): equals(answers, {"": 0.0}),
        ("Calls", "A"): equals(answers, {"": 0.0}),  # queries are counted per query, not as calls
        ("Errors and retries", "A"): equals(answers, {"": 0.0}),
        ("Errors and retries", "B"): equals(answers, {"": 0.0}),
        ("Workers", "A"): equals(answers, processes),
        ("Workers", "B"): equals(answers, processes),
        ("Workers", "C"): equals(answers, processes),
        ("Events per second", "A"): equals(answers, {"": 0.0}),
        ("Events per second", "B"): equals(answers, {}),
        ("Events per second per worker", "A"): equals(answers, workers),
        ("Call latency", "A"): equals(answers, {}),  # no call: no percentile
        ("Call latency", "B"): equals(answers, {}),
        ("Call latency", "C"): equals(answers, {}),
        ("Call latency p99 per worker", "A"): equals(answers, {}),
        ("Errors and retries per worker", "A"): equals(answers, workers),
        ("Errors and retries per worker", "B"): equals(answers, workers),
        ("Schedule lag per worker (open loop)", "A"): equals(answers, {}),
        ("Schedule lag per worker (open loop)", "B"): equals(answers, {}),
        ("Query latency per query", "A"): query_p95,
        ("Query latency per query", "B"): query_mean,
        ("Query executions and errors", "A"): equals(answers, {name: figures["executions"] for name, figures in queries.items()}),
        ("Query executions and errors", "B"): equals(answers, dict.fromkeys(queries, 0.0)),
        ("Collector CPU", "A"): collector_cpu,
    })
