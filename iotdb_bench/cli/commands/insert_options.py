"""The insert command's options: click's declarations (their names, help, defaults and checks) and the
typed groups their values are built into, one group per concern."""

from __future__ import annotations

from dataclasses import dataclass

import click

from iotdb_bench.cli.commands.options import TableCount, WorkerSet
from iotdb_bench.cli.commands.query_files import query_file_option
from iotdb_bench.cli.commands.run_options import OptionGroup, Recording, TargetOptions, options_decorator
from iotdb_bench.simulator.spec import MAX_DEVICES_PER_WORKER, QUERY_NAMES, TSBS_TABLES


@dataclass(frozen=True)
class RunLength(OptionGroup):
    """How many runs, how long each, and what the tables hold before the timed phase."""

    worker_counts: tuple[int, ...] | None
    runs: int
    runs_given: bool  # -r on the command line (--find-max-rate refuses it)
    num_inserts: int | None
    duration: float | None
    steps: int | None
    clean: bool
    prefill: int


@dataclass(frozen=True)
class DataOptions(OptionGroup):
    """The events generated: their shape, devices, keys, tables and the order they are sent in."""

    primary_key: str | None
    tables: int
    seed: int
    devices_per_worker: int | None
    devices: int | None
    sensors: int
    shape: str
    interval: str | None
    time_range: str | None
    start: str | None
    measurements: int
    order: str
    burst: int | None
    out_of_order: float
    max_lateness: float | None


@dataclass(frozen=True)
class CallOptions(OptionGroup):
    """How the workers call the database."""

    batch: int | None
    commit_interval: float | None
    pregenerate: bool


@dataclass(frozen=True)
class OpenLoop(OptionGroup):
    """A fixed rate (--rate), or the search for the highest rate sustained (--find-max-rate)."""

    rate: float | None
    find_max_rate: bool
    latency_p99: float | None
    max_rate: float | None


@dataclass(frozen=True)
class MixedOptions(OptionGroup):
    """Query clients beside the inserts (--query-workers) and the visibility probe."""

    query_workers: int | None
    query_names: str | None
    query_file: str | None
    query_rate: float | None
    compare_idle: bool
    visibility: bool


@dataclass(frozen=True)
class InsertOptions(OptionGroup):
    target: TargetOptions
    length: RunLength
    data: DataOptions
    calls: CallOptions
    open_loop: OpenLoop
    mixed: MixedOptions
    details: bool
    detach: bool
    recording: Recording


# The insert command's own options.
insert_options = options_decorator([
    click.option("-w", "--workers", "worker_counts", type=WorkerSet(), default=None,
                 help="Set of worker counts to try, comma-separated [default: local platform 1, 2, 4... up to the machine's CPUs; "
                 "Kubernetes 1,4,8,12,16]."),
    click.option("-r", "--runs", type=click.IntRange(min=1), default=3, show_default=True, help="Runs per worker count; figures are averaged."),
    click.option("--primary-key", type=click.Choice(["db", "sql", "client", "uuid", "none"]), default=None, help="How the primary key is generated [default: db; none for --schema slim and TSBS's shapes]."),
    click.option("--tables", type=TableCount(), default="single", show_default=True, help="Tables the devices are spread over, 1-64 (single = 1, multiple = 4); a device always writes to the same one."),
    click.option("--num-inserts", type=click.IntRange(min=1), default=None,
                 help="Events each worker inserts in the timed phase [default: Kubernetes 10000; local platform: --duration 3]."),
    click.option("--duration", type=click.FloatRange(min=0, min_open=True), default=None,
                 help="Seconds the timed phase lasts (from the common start) instead of --num-inserts [default: 3 on the local platform]."),
    click.option("--commit-interval", type=click.FloatRange(min=0, min_open=True), default=None, help="Single inserts inside a transaction committed every S seconds (without --batch)."),
    click.option("--batch", type=click.IntRange(min=1), default=None, help="Events per database call (batch mode); omitted = single inserts."),
    click.option("--clean/--no-clean", default=True, show_default=True, help="Drop and recreate the tables before each run."),
    click.option("--prefill", type=click.IntRange(min=0), default=0, show_default=True, help="Events inserted (untimed, in batches) before the timed phase."),
    click.option("--steps", type=click.IntRange(min=1), default=None, help="Fill-level test: repeat the insert test N times without cleaning in between."),
    click.option("--seed", type=click.IntRange(min=0, max=2**32 - 1), default=1, show_default=True, help="Seed of the event generator."),
    click.option("--devices-per-worker", type=click.IntRange(min=1, max=MAX_DEVICES_PER_WORKER), default=None, help="Devices each worker simulates [default: 10]."),
    click.option("--devices", type=click.IntRange(min=1), default=None, help="Devices of all workers together, split evenly (instead of --devices-per-worker); TSBS's shapes: hosts (TSBS's --scale)."),
    click.option("--sensors", type=click.IntRange(min=1, max=1000), default=1, show_default=True, help="Sensors per device, each reporting its own readings (--schema events)."),
    click.option("--schema", "shape", type=click.Choice(["events", "slim", "light", "large", *TSBS_TABLES]), default="events", show_default=True,
                 help="Data shape: the tool's events, seed 002's slim, light (key + index) and large (text + 8 integers) tables, or TSBS's cpu-only data (docs/tsbs.md)."),
    click.option("--interval", metavar="DURATION", help="TSBS's shapes: time between two rows of a host, e.g. 10s (TSBS's --log-interval) [default: 10s]."),
    click.option("--time-range", metavar="DURATION", help="TSBS's shapes: the time the run's rows span, e.g. 3d (TSBS's --timestamp-end minus --timestamp-start) [default: 1d]."),
    click.option("--start", metavar="TIMESTAMP", help="TSBS's shapes: the time of the first rows (TSBS's --timestamp-start) [default: 2016-01-01T00:00:00Z]."),
    click.option("--measurements", type=click.IntRange(min=1, max=1000), default=1, show_default=True, help="Values each device reports per timestamp (--schema events)."),
    click.option("--order", type=click.Choice(["round-robin", "random", "burst"]), default="round-robin", show_default=True, help="Which device sends next: in turn, a random one, or bursts of --burst readings per device."),
    click.option("--burst", type=click.IntRange(min=1, max=100_000), default=None, help="Readings a device sends at once with --order burst [default: 10]."),
    click.option("--out-of-order", type=click.FloatRange(min=0, max=1), default=0.0, show_default=True, help="Fraction of the events sent late."),
    click.option("--max-lateness", type=click.FloatRange(min=0.1, max=86_400), default=None, help="Seconds of event time a late event is late by at most [default: 60]."),
    click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=None, help="Open loop: events/s of all workers together, calls on a fixed schedule; latency also from each call's intended start."),
    click.option("--find-max-rate", is_flag=True, help="Short --rate runs at rising rates: the highest rate sustained with response-time p99 within --latency-p99."),
    click.option("--latency-p99", type=click.FloatRange(min=0, min_open=True), default=None, metavar="MS", help="--find-max-rate: the response-time p99 target in milliseconds."),
    click.option("--max-rate", type=click.FloatRange(min=0, min_open=True), default=None, help="--find-max-rate: no rate above this is tried (events/s)."),
    click.option("--query-workers", type=click.IntRange(min=1, max=1024), default=None, help="Query clients running --queries against the growing data through the timed phase (mixed workload)."),
    click.option("--queries", "query_names", metavar="NAMES", help=f"With --query-workers: comma-separated subset of {', '.join(QUERY_NAMES)} [default: all; TSBS's shapes: TSBS's query types, tsbs-devops]."),
    query_file_option,
    click.option("--query-rate", type=click.FloatRange(min=0, min_open=True), default=None, help="With --query-workers: queries per second of all query clients together (open loop) [default: back to back]."),
    click.option("--compare-idle", is_flag=True, help="With --query-workers: also run each count without query clients, for the insert throughput beside it."),
    click.option("--visibility", is_flag=True, help="A probe writes marker events through the insert path and measures the time until a query sees them."),
    click.option("--pregenerate", is_flag=True, help="Generate and encode the timed phase's batches before the common start (as TSBS loads "
                 "pre-generated data): the figures then measure sending alone. Needs --batch and --num-inserts; at most 1 GiB per worker (half a worker pod's memory limit)."),
    click.option("--details", is_flag=True, help="Show every figure in the tables (the files always hold them all)."),
    click.option("--detach", is_flag=True, help="Kubernetes: install every run in the cluster and return at once, printing the run id; "
                 "needs --timeout (the run's own deadline). Follow and fetch it with: python run.py attach RUN."),
])
