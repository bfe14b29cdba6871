"""The run's control plane at scale: one real collector process (`python -m simulator collector`, the
`null` module, no database) serving N simulated workers that speak the real protocol through the
project's own client (`simulator/collector_client.py`, the worker's `ProgressReporter`), in threads
spread over a few processes. Each simulated worker registers (arrivals spread over --arrival-s, as
pods come up), waits at the barrier, "runs" for --seconds while posting its progress every second,
and posts a result with an HdrHistogram of realistic call latencies and a per-second series of the
run's length. Meanwhile the CLI's own follower (`cli/platforms/follow.py`, with the live progress
display rendered to /dev/null) follows the run and fetches the report, as it does in a real run.

Printed for each N:
- the collector's CPU (from /proc of its process) per second of the timed phase, of the barrier
  wait, and in all (CPU seconds do not depend on how busy the machine is; wall times do);
- the barrier's release skew: how late after the common start each simulated worker learned it
  (negative: before; all on the clock when the latest is <= 0), and the report's start skew;
- the time from the last result being acknowledged to the CLI's follower holding the parsed report,
  and the report's size in bytes;
- that every result arrived (the report's worker count, events and worker indices);
- the CLI follower's /status round trips (median, max) during the run;
- with --scrape-interval S, a scraper (this process, gzip as Prometheus and VictoriaMetrics ask for it)
  GETs the collector's /metrics every S seconds during the run: the collector's CPU then includes
  answering it; each scrape's time and size are printed, and the collector's CPU for one scrape of
  the final figures once the workers are gone (five scrapes, nothing else going on).

The simulated workers' progress reports carry live figures as a real worker's do (latency counts,
retries, lag), and keep time with the common start as a real worker's do.

    python benchmarks/collector_scale.py [--workers 100,300,1000] [--seconds 10] [--series-s S] [--arrival-s 2] [--scrape-interval 1] [--json]

Goals (issue 16): collector CPU < 0.5 core at 1,000 workers; report within 2 s of the last result.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import REPO_ROOT, emit_json, print_table
from hdrh.histogram import HdrHistogram

from iotdb_bench.cli.run.platforms.follow import Deadline, follow_run, wait_for_collector
from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.collector_client import CollectorClient
from iotdb_bench.simulator.measurement import live_figures
from iotdb_bench.simulator.measurement.stats import new_histogram
from iotdb_bench.simulator.protocol import LatencyCounts, LiveFigures, Status, WorkerProgress, WorkerResult
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.worker.worker import ProgressReporter

GOAL_CPU_CORES = 0.5
GOAL_REPORT_S = 2.0
GOAL_WORKERS = 1000
# What one simulated worker "does": its figures only shape the payloads (the null target's rate at
# batch 1000 is about this many events per second per worker).
EVENTS_PER_S = 20_000
BATCH = 1000
DISTINCT_HISTOGRAMS = 16
MIN_CALLS = 10_000
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
THREAD_STACK = 256 * 1024


# -- the simulated workers, in generator processes --------------------------------------------------

def realistic_histograms(seconds: float) -> list[str]:
    """Encoded HdrHistograms of one worker's calls: log-normal latencies around 1 ms with a tail (at
    least MIN_CALLS of them, so that short runs post histograms as full as long runs do)."""
    generator = random.Random(16)
    calls = max(int(EVENTS_PER_S * seconds / BATCH), MIN_CALLS)
    encoded = []
    for _ in range(DISTINCT_HISTOGRAMS):
        histogram = new_histogram()
        for _ in range(calls):
            histogram.record_value(max(1, int(generator.lognormvariate(7.0, 0.6))))
        encoded.append(histogram.encode().decode("ascii"))
    return encoded


def live_at(share: float, final: LatencyCounts) -> LiveFigures:
    """A worker's live figures `share` of the way through its calls (the final counts scaled)."""
    latency = LatencyCounts(count=int(final.count * share), sum_s=final.sum_s * share, buckets=[int(b * share) for b in final.buckets])
    return LiveFigures(latency=latency, retries=0, errors=0)


def simulated_worker(url: str, index: int, workers: int, seconds: float, series_s: int, arrive_at: float, histogram: str, out: dict) -> None:
    try:
        time.sleep(max(0.0, arrive_at - time.time()))
        client = CollectorClient(url, index)
        started: list[float] = []
        final = live_figures.of_histogram(HdrHistogram.decode(histogram), seconds * 0.9)

        def read() -> WorkerProgress:
            share = min(time.time() - started[0], seconds) / seconds if started else 0.0
            return WorkerProgress(worker=index, events=int(share * seconds * EVENTS_PER_S), live=live_at(share, final))

        client.register()
        reporter = ProgressReporter(client, read)
        reporter.start()
        signal = client.wait_for_start()
        out["learned_at"] = time.time()
        if signal.start_at is None:
            raise RuntimeError(f"no start: phase {signal.phase}")
        reporter.keep_time_with(signal.start_at + index / workers)  # as a real worker's reports do
        out["start_at"] = signal.start_at
        time.sleep(max(0.0, signal.start_at - time.time()))
        started.append(time.time())
        time.sleep(max(0.0, started[0] + seconds - time.time()))
        finished = time.time()
        reporter.stopped.set()
        events = int(seconds * EVENTS_PER_S)
        result = WorkerResult(
            worker=index, started_at=started[0], finished_at=finished, events=events, calls=events // BATCH,
            db_seconds=seconds * 0.9, histogram=histogram,
            per_second=series(index, events, series_s), live=live_at(1.0, final),
        )
        client.post("/result", result)
        out["acked_at"] = time.time()
        out["events"] = events
    except Exception as error:  # counted as a lost worker in the summary
        out["error"] = f"{type(error).__name__}: {error}"


def series(index: int, events: int, length: int) -> list[int]:
    """A per-second series of `length` windows adding up to `events`, uneven as real ones are."""
    weights = [1000 + (index * 7919 + second * 104729) % 211 for second in range(length)]
    total = sum(weights)
    values = [events * weight // total for weight in weights]
    values[-1] += events - sum(values)
    return values


def generator_process(url: str, indices: list[int], seconds: float, series_s: int, begin_at: float, arrival_s: float, workers: int,
                      histograms: list[str], answers) -> None:
    threading.stack_size(THREAD_STACK)
    records = {index: {} for index in indices}
    threads = [threading.Thread(target=simulated_worker, daemon=True,
                                args=(url, index, workers, seconds, series_s, begin_at + arrival_s * index / workers,
                                      histograms[index % len(histograms)], records[index]))
               for index in indices]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    answers.put({"records": records, "cpu_s": usage.ru_utime + usage.ru_stime})


# -- the collector and the CLI's follower, in this process -------------------------------------------

class CollectorProcess:
    # Another checkout and interpreter can be measured with the same simulated workers (--collector).
    python, repo = sys.executable, REPO_ROOT

    def __init__(self, spec: RunSpec, folder: Path, metrics: bool):
        """`metrics`: pin the metrics port, for the scraper (an older checkout's collector has none)."""
        path = folder / "spec.json"
        spec.dump(path)
        self.port, self.metrics_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(folder / "collector.log", "w+b")  # noqa: SIM115 (closed in stop())
        self.process = subprocess.Popen(
            [self.python, "-m", "iotdb_bench.simulator", "collector", "--spec", str(path), "--port", str(self.port),
             *(["--metrics-port", str(self.metrics_port)] if metrics else [])],
            cwd=self.repo, stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(self.repo)},
        )

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime

    def peak_memory_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):  # the peak resident set, in kB
                return int(line.split()[1]) / 1024
        return math.nan

    def failure(self) -> str | None:
        code = self.process.poll()
        if code is None:
            return None
        self.log.seek(0)
        return f"the collector exited with {code}: {self.log.read().decode(errors='replace')[-2000:]}"

    def logged_at(self, text: str) -> float | None:
        """When the collector logged a line containing `text` (its log's times have milliseconds)."""
        self.log.seek(0)
        for line in self.log.read().decode(errors="replace").splitlines():
            if text in line:
                stamp, milliseconds = line[:23].split(",")
                return time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")) + int(milliseconds) / 1000
        return None

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.log.close()


class CpuSampler(threading.Thread):
    """(time, CPU seconds) of the collector every 0.1 s; CPU between two moments is interpolated."""

    def __init__(self, collector: CollectorProcess):
        super().__init__(daemon=True)
        self.collector, self.samples, self.stopped = collector, [], threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                self.samples.append((time.time(), self.collector.cpu_s()))
            except OSError:
                return
            self.stopped.wait(0.1)

    def at(self, moment: float) -> float:
        before = [s for s in self.samples if s[0] <= moment] or self.samples[:1]
        after = [s for s in self.samples if s[0] >= moment] or self.samples[-1:]
        (t0, c0), (t1, c1) = before[-1], after[0]
        return c0 if t1 == t0 else c0 + (c1 - c0) * (moment - t0) / (t1 - t0)

    def between(self, begin: float, end: float) -> float:
        return self.at(end) - self.at(begin)


class Scraper(threading.Thread):
    """GETs the collector's /metrics every `interval_s` (gzip, as Prometheus and VictoriaMetrics ask),
    noting each scrape's time and compressed size."""

    def __init__(self, port: int, interval_s: float):
        super().__init__(daemon=True)
        self.port, self.interval_s, self.stopped = port, interval_s, threading.Event()
        self.scrapes: list[tuple[float, float, int]] = []  # (when, seconds, bytes)
        self.errors: list[str] = []

    def run(self) -> None:
        while not self.stopped.wait(self.interval_s - time.time() % self.interval_s):
            began = time.perf_counter()
            try:
                body = self.scrape()
            except OSError as error:
                self.errors.append(str(error))
                continue
            self.scrapes.append((time.time(), time.perf_counter() - began, len(body)))

    def scrape(self) -> bytes:
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"})
            return connection.getresponse().read()
        finally:
            connection.close()

    def cpu_per_scrape(self, collector: CollectorProcess, scrapes: int = 5) -> float:
        """The collector's CPU seconds for one scrape of the run's final figures, once the workers are
        gone (nothing else to do): what a scrape costs, whatever the machine's load does to its time."""
        before = collector.cpu_s()
        for _ in range(scrapes):
            self.scrape()
        return (collector.cpu_s() - before) / scrapes


class TimedClient(CollectorClient):
    """The CLI's client, noting how long each /status took and what /report returned."""

    def __init__(self, url: str):
        super().__init__(url)
        self.status_s: list[tuple[float, float]] = []  # (when asked, seconds to the answer)
        self.report_bytes = 0
        self.report_fetch_s = 0.0

    def get(self, path: str) -> tuple[int, bytes]:
        begin = time.perf_counter()
        code, body = super().get(path)
        elapsed = time.perf_counter() - begin
        if path == "/status":
            self.status_s.append((time.time() - elapsed, elapsed))
        elif path == "/report" and code == 200:
            self.report_bytes, self.report_fetch_s = len(body), elapsed
        return code, body


def follow_like_the_cli(client: TimedClient, collector: CollectorProcess, outcome: dict) -> None:
    """The CLI's follower with its live progress display (rendered to /dev/null as if to a terminal)."""
    from rich.console import Console

    from iotdb_bench.cli.run.progress import RunProgress
    from iotdb_bench.cli.run.runner import PlannedRun

    deadline = Deadline(600)
    spec = outcome["spec"]
    with open(os.devnull, "w") as sink, RunProgress(Console(file=sink, force_terminal=True, width=100)) as progress:
        on_status = progress.start(PlannedRun(spec=spec, label=f"{spec.workers} workers", workers=spec.workers, run=1))
        seen: list[Status] = []

        def note(status: Status) -> None:
            seen.append(status)
            on_status(status)

        try:
            wait_for_collector(client, deadline, collector.failure)
            outcome["report"] = follow_run(client, deadline, note, collector.failure)
        except Exception as error:
            outcome["error"] = f"{type(error).__name__}: {error}"
        outcome["report_at"] = time.time()
        outcome["statuses"] = len(seen)


def measure(workers: int, seconds: float, series_s: int, arrival_s: float, processes: int, scrape_interval_s: float) -> dict:
    histograms = realistic_histograms(seconds)
    spec = RunSpec(run_id=f"scale-{workers}", task="insert", target="null", module="null", workers=workers,
                   num_inserts=int(seconds * EVENTS_PER_S), batch=BATCH)
    context = multiprocessing.get_context("spawn")
    answers = context.Queue()
    with tempfile.TemporaryDirectory(prefix="iotdb-bench-scale-") as folder:
        collector = CollectorProcess(spec, Path(folder), metrics=bool(scrape_interval_s))
        try:
            client = TimedClient(collector.url)
            outcome: dict = {"spec": spec}
            follower = threading.Thread(target=follow_like_the_cli, args=(client, collector, outcome), daemon=True)
            follower.start()
            while not collector.failure():  # prepared: the collector answers /health
                code = _health(collector.url)
                if code == 200:
                    break
                time.sleep(0.05)
            sampler = CpuSampler(collector)
            sampler.start()
            scraper = Scraper(collector.metrics_port, scrape_interval_s) if scrape_interval_s else None
            if scraper is not None:
                scraper.start()
            begin_at = time.time() + 1.5  # the generators' interpreters start meanwhile
            slices = [list(range(workers))[part::processes] for part in range(processes)]
            generators = [context.Process(target=generator_process, daemon=True,
                                          args=(collector.url, part, seconds, series_s, begin_at, arrival_s, workers, histograms, answers))
                          for part in slices if part]
            for generator in generators:
                generator.start()
            parts = [answers.get(timeout=seconds + arrival_s + 300) for _ in generators]
            for generator in generators:
                generator.join(30)
            follower.join(120)
            sampler.stopped.set()
            sampler.join()
            if scraper is not None:
                scraper.stopped.set()
                scraper.join()
                outcome["scrape_cpu_s"] = scraper.cpu_per_scrape(collector)
            collector_total = collector.cpu_s()
            outcome["collector_peak_memory_mb"] = collector.peak_memory_mb()
            outcome["collector_finished_at"] = collector.logged_at("run finished")
        finally:
            collector.stop()
    records = {index: record for part in parts for index, record in part["records"].items()}
    summary = summarize(workers, seconds, series_s, begin_at, records, outcome, client, sampler, collector_total,
                        sum(part["cpu_s"] for part in parts))
    return {**summary, **scrape_figures(scraper, summary), "scrape_cpu_s": outcome.get("scrape_cpu_s", math.nan)}


def scrape_figures(scraper: Scraper | None, summary: dict) -> dict:
    """The scrapes of the timed phase: how many, their time and their (compressed) size."""
    if scraper is None:
        return {"scrape_interval_s": 0.0}
    timed = [(seconds, size) for at, seconds, size in scraper.scrapes if summary["timed_begin"] <= at <= summary["timed_end"]]
    return {"scrape_interval_s": scraper.interval_s, "scrapes_timed": len(timed), "scrape_errors": scraper.errors[:3],
            "scrape_median_ms": statistics.median(s for s, _ in timed) * 1e3 if timed else math.nan,
            "scrape_bytes_gzip": statistics.median(b for _, b in timed) if timed else 0}


def _health(url: str) -> int | None:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=2)
        connection.request("GET", "/health")
        return connection.getresponse().status
    except OSError:
        return None


def summarize(workers: int, seconds: float, series_s: int, begin_at: float, records: dict, outcome: dict, client: TimedClient,
              sampler: CpuSampler, collector_total: float, generators_cpu: float) -> dict:
    errors = [f"worker {i}: {r['error']}" for i, r in records.items() if "error" in r]
    started = [r for r in records.values() if "start_at" in r]
    report: RunReport | None = outcome.get("report")
    if not started or report is None:
        raise SystemExit(f"the run at {workers} workers failed: {outcome.get('error')}; {errors[:3]}")
    start_at = started[0]["start_at"]
    lateness = sorted(r["learned_at"] - start_at for r in started)
    acked = [r["acked_at"] for r in records.values() if "acked_at" in r]
    last_ack = max(acked)
    finished_at = max(r.finished_at for r in report.workers) if report.workers else start_at + seconds
    timed_begin, timed_end = start_at + 1.0, start_at + seconds - 0.5  # steady state: progress only
    arrived = report.figures.workers == workers and report.figures.events == sum(r.get("events", 0) for r in records.values())
    if report.workers:
        arrived = arrived and sorted(w.worker for w in report.workers) == list(range(workers))
    return {
        "workers": workers,
        "seconds": seconds,
        "series_s": series_s,
        "collector_cpu_cores_timed": sampler.between(timed_begin, timed_end) / (timed_end - timed_begin),
        "collector_cpu_cores_barrier": sampler.between(begin_at, start_at) / max(start_at - begin_at, 1e-9),
        "collector_cpu_s_results_to_report": sampler.between(finished_at, outcome["report_at"]),
        # of which: taking the results in, making the report, serving it to the CLI's follower
        "collector_cpu_s_results_in": sampler.between(finished_at, last_ack),
        "collector_cpu_s_report_made": sampler.between(last_ack, outcome["collector_finished_at"] or last_ack),
        "collector_cpu_s_report_served": sampler.between(outcome["collector_finished_at"] or last_ack, outcome["report_at"]),
        "collector_cpu_s_total": collector_total,
        "collector_peak_memory_mb": outcome["collector_peak_memory_mb"],
        "generators_cpu_s": generators_cpu,
        "barrier_wait_s": start_at - begin_at,
        "release_lateness_max_s": lateness[-1],
        "release_lateness_p50_s": statistics.median(lateness),
        "learned_late": sum(1 for late in lateness if late > 0),
        "report_start_skew_s": report.figures.start_skew_s,
        "last_result_to_report_s": outcome["report_at"] - last_ack,
        # of which the collector's part: until it logged the report as made
        "last_result_to_collector_report_s": (outcome["collector_finished_at"] or math.nan) - last_ack,
        "report_fetch_s": client.report_fetch_s,
        "report_bytes": client.report_bytes,
        "results_arrived": len(acked),
        "all_results_in_report": arrived,
        "errors": errors[:5],
        "status_polls": len(client.status_s),
        "status_median_ms": statistics.median(s for _, s in client.status_s) * 1e3,
        "status_max_ms": max(s for _, s in client.status_s) * 1e3,
        "status_max_ms_timed": max((s for at, s in client.status_s if start_at <= at <= finished_at), default=0.0) * 1e3,
        "load_average_1m_after": round(os.getloadavg()[0], 2),
        "timed_begin": timed_begin,
        "timed_end": timed_end,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="100,300,1000", help="comma-separated worker counts")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each simulated timed phase")
    parser.add_argument("--series-s", type=int, help="length of each worker's per-second series (default: the timed phase's): "
                        "the payload of a longer run without waiting for it")
    parser.add_argument("--arrival-s", type=float, default=2.0, help="registrations spread over this long, as pods come up")
    parser.add_argument("--processes", type=int, default=4, help="processes the simulated workers are spread over")
    parser.add_argument("--scrape-interval", type=float, default=0.0, metavar="S",
                        help="scrape the collector's /metrics every S seconds during the run (0: no scraper)")
    parser.add_argument("--collector", metavar="PYTHON:CHECKOUT", help="run the collector of another checkout with another "
                        "interpreter (e.g. an export of an earlier commit and its environment), against the same simulated workers")
    parser.add_argument("--json", action="store_true", help="end with one JSON object on the last line")
    args = parser.parse_args()
    if args.collector:
        python, _, checkout = args.collector.partition(":")
        CollectorProcess.python, CollectorProcess.repo = python, Path(checkout)

    results = []
    for workers in (int(part) for part in args.workers.split(",")):
        load = round(os.getloadavg()[0], 2)
        series_s = args.series_s or math.ceil(args.seconds)
        results.append({**measure(workers, args.seconds, series_s, args.arrival_s, args.processes, args.scrape_interval),
                        "load_average_1m_before": load})
    scraped = f"/metrics scraped every {args.scrape_interval:g} s" if args.scrape_interval else "no scraper"
    print_table(
        f"Collector with N simulated workers ({args.seconds:g} s timed phase, per-second series of {args.series_s or math.ceil(args.seconds)} s, "
        f"registrations over {args.arrival_s:g} s, null module, {scraped})",
        ["Workers", "CPU cores timed", "CPU cores barrier", "CPU s results→report", "Release late max ms", "Learned late",
         "Report skew ms", "Last result→report s", "Report bytes", "All results", "/status median/max/max timed ms",
         "Scrape ms / gzip KB / CPU ms", "Load 1m"],
        [[str(r["workers"]), f"{r['collector_cpu_cores_timed']:.3f}", f"{r['collector_cpu_cores_barrier']:.3f}",
          f"{r['collector_cpu_s_results_to_report']:.2f}", f"{r['release_lateness_max_s'] * 1e3:.0f}",
          f"{r['learned_late']}/{r['workers']}", f"{r['report_start_skew_s'] * 1e3:.0f}", f"{r['last_result_to_report_s']:.2f}",
          f"{r['report_bytes']:,}", "yes" if r["all_results_in_report"] and not r["errors"] else f"NO {r['errors']}",
          f"{r['status_median_ms']:.1f}/{r['status_max_ms']:.0f}/{r['status_max_ms_timed']:.0f}",
          f"{r['scrape_median_ms']:.0f} / {r['scrape_bytes_gzip'] / 1024:.0f} / {r['scrape_cpu_s'] * 1e3:.0f}" if r["scrape_interval_s"] else "-",
          f"{r['load_average_1m_before']:.2f}"] for r in results],
    )
    at_goal = next((r for r in results if r["workers"] == GOAL_WORKERS), None)
    if at_goal:
        cpu_ok = at_goal["collector_cpu_cores_timed"] < GOAL_CPU_CORES
        report_ok = at_goal["last_result_to_report_s"] <= GOAL_REPORT_S
        print(f"Goals at {GOAL_WORKERS} workers: CPU < {GOAL_CPU_CORES} core {'met' if cpu_ok else 'NOT met'} "
              f"({at_goal['collector_cpu_cores_timed']:.3f}); report within {GOAL_REPORT_S:g} s {'met' if report_ok else 'NOT met'} "
              f"({at_goal['last_result_to_report_s']:.2f} s).")
    if args.json:
        emit_json({"benchmark": "collector_scale", "collector": args.collector or "this checkout", "seconds": args.seconds, "series_s": args.series_s, "arrival_s": args.arrival_s, "results": results,
                   "goal_cpu_cores": GOAL_CPU_CORES, "goal_report_s": GOAL_REPORT_S, "goal_workers": GOAL_WORKERS})


if __name__ == "__main__":
    main()
