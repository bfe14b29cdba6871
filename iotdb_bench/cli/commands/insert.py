"""`python run.py insert`: its options checked together, its run spec built, its runs launched."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from iotdb_bench.cli.commands.insert_options import DataOptions, InsertOptions, MixedOptions, OpenLoop, RunLength, insert_options
from iotdb_bench.cli.commands.launch import Launch, PlatformChoice, launched, resolve, spec
from iotdb_bench.cli.commands.options import parse_queries
from iotdb_bench.cli.commands.query_files import chosen_queries
from iotdb_bench.cli.commands.run_options import TargetOptions, target_options
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results.host import usable_cpus
from iotdb_bench.cli.results.rate_search import MaxRateSearch
from iotdb_bench.cli.run import runner
from iotdb_bench.cli.terminal import warning_line
from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import (
    MAX_DEVICES_PER_WORKER,
    QUERY_NAMES,
    QUERY_VARIANTS,
    TSBS_QUERIES,
    TSBS_TABLES,
    default_primary_key,
    default_queries,
)


def plan_insert(options: InsertOptions) -> Launch:
    """The invocation the options ask for, every combination checked (a conflict is a usage problem)."""
    config, target_config, platform_name = resolve(options.target)
    if options.detach:
        _check_detach(platform_name, options.target, options.open_loop.find_max_rate)
    tsbs = options.data.shape in TSBS_TABLES  # its length is its time range: neither --num-inserts nor --duration by default
    length = _length_defaults(platform_name, options.length, options.open_loop.find_max_rate or tsbs)
    worker_counts = length.worker_counts or ()
    search = _rate_search(options.open_loop, length)
    if search is not None:
        length = replace(length, duration=search.step_s)
    if length.steps:
        _check_steps(length, options.mixed.compare_idle)
    workload = _workload(length, options.data)
    if tsbs and length.num_inserts is None:
        workload["num_inserts"] = 0
    own = module_class(target_config.module).capabilities.answered(default_queries(options.data.shape))  # the data's types it answers
    mixed = _mixed(options.mixed, own, options.target.target, target_config.module)
    if options.mixed.query_workers and not length.prefill and length.clean:
        remedy = "an insert run before this one, then --no-clean" if tsbs else "--prefill N"
        warning_line(f"--query-workers without --prefill: the first queries run on empty tables (add {remedy} for data from the start)")
    data, calls = options.data, options.calls
    base = spec(
        options.target, target_config, task="insert", **mixed, workers=worker_counts[0], batch=calls.batch or 0,
        primary_key=data.primary_key or default_primary_key(data.shape), tables=data.tables, clean=length.clean,
        prefill=length.prefill, seed=data.seed, interval_ms=data.interval, time_range_ms=data.time_range, start_ms=data.start, shape=data.shape, measurements=data.measurements, sensors=data.sensors, order=data.order,
        out_of_order=data.out_of_order, commit_interval_s=calls.commit_interval or 0.0, rate=options.open_loop.rate or 0.0,
        pregenerate=calls.pregenerate, **workload,
    )
    if options.detach:  # its own deadline replaces the heartbeat: nobody follows the run while it goes on
        base = base.model_copy(update={"heartbeat_timeout": 0.0})
    invocation = runner.Invocation(base, worker_counts, 1 if search else length.runs, length.steps or 0, options.target.timeout,
                                   compare_idle=options.mixed.compare_idle, time_limit=options.target.time_limit)
    return Launch(invocation, config, target_config, PlatformChoice.of(options.target, platform_name, options.detach), options.target.output,
                  options.recording, options.details, search)


def _check_detach(platform: str, target: TargetOptions, find_max_rate: bool) -> None:
    if platform != "kubernetes":
        raise UsageProblem(f"--detach needs the kubernetes platform (this run's platform is {platform})")
    if not target.timeout:
        raise UsageProblem("--detach needs --timeout (seconds one run may take): a detached run's own deadline replaces this command's heartbeat")
    if target.time_limit:
        raise UsageProblem("--time-limit cannot be combined with --detach: a detached run's runs are bounded by --timeout each")
    if target.keep:
        raise UsageProblem("--keep does nothing with --detach: the release stays until `python run.py attach` fetches the results")
    if find_max_rate:
        raise UsageProblem("--detach cannot be combined with --find-max-rate (each rate depends on the runs before)")


def _check_steps(length: RunLength, compare_idle: bool) -> None:
    if len(length.worker_counts or ()) != 1:
        raise UsageProblem("--steps needs exactly one worker count (e.g. -w 4)")
    if length.runs != 1:
        raise UsageProblem("--steps needs exactly one run (-r 1)")
    if length.prefill:
        raise UsageProblem("--steps cannot be combined with --prefill")
    if compare_idle:
        raise UsageProblem("--compare-idle cannot be combined with --steps (each twin run would add to the fill level)")


# Length of each run of --find-max-rate when --duration does not say.
SEARCH_STEP_S = 5.0
# The quick start on a laptop: worker counts up to the machine's CPUs (more workers than CPUs take turns
# on them: a flagged row), runs of a few seconds whatever the database's speed (10,000 events took
# SQLite 0.3 s), about half a minute in all on 2 CPUs. On Kubernetes the seed tool's defaults.
LOCAL_DURATION_S = 3.0
CLUSTER_WORKER_COUNTS = (1, 4, 8, 12, 16)
CLUSTER_NUM_INSERTS = 10_000


def local_worker_counts(cpus: int) -> tuple[int, ...]:
    """1, 2, 4... up to `cpus`, and `cpus` itself."""
    counts = [1 << power for power in range(cpus.bit_length()) if 1 << power <= cpus]
    return tuple(dict.fromkeys([*counts, cpus]))


def _length_defaults(platform: str, length: RunLength, find_max_rate: bool) -> RunLength:
    """Worker counts and the timed phase's length where the options leave them to the platform."""
    local = platform == "local"
    worker_counts, num_inserts, duration = length.worker_counts, length.num_inserts, length.duration
    if worker_counts is None:
        worker_counts = local_worker_counts(usable_cpus() or 1) if local else CLUSTER_WORKER_COUNTS
    if num_inserts is None and duration is None and not find_max_rate:
        if local:
            duration = LOCAL_DURATION_S
        else:
            num_inserts = CLUSTER_NUM_INSERTS
    return replace(length, worker_counts=worker_counts, num_inserts=num_inserts, duration=duration)


def _rate_search(open_loop: OpenLoop, length: RunLength) -> MaxRateSearch | None:
    """The --find-max-rate search asked for (None: a plain run); its options checked together."""
    if not open_loop.find_max_rate:
        for value, name in ((open_loop.latency_p99, "--latency-p99"), (open_loop.max_rate, "--max-rate")):
            if value is not None:
                raise UsageProblem(f"{name} applies to --find-max-rate")
        return None
    if open_loop.rate is not None:
        raise UsageProblem("--rate and --find-max-rate: give one (the search chooses the rates)")
    if open_loop.latency_p99 is None:
        raise UsageProblem("--find-max-rate needs --latency-p99 MS, the response-time target")
    if len(length.worker_counts or ()) != 1:
        raise UsageProblem("--find-max-rate needs exactly one worker count (e.g. -w 4)")
    if length.num_inserts is not None:
        raise UsageProblem("--find-max-rate runs each rate for --duration seconds: leave out --num-inserts")
    if length.steps:
        raise UsageProblem("--find-max-rate cannot be combined with --steps")
    if not length.clean:
        raise UsageProblem("--find-max-rate starts every rate from empty tables: leave out --no-clean")
    if length.runs_given:
        raise UsageProblem("--find-max-rate runs each rate once: leave out -r/--runs")
    return MaxRateSearch(latency_p99_ms=open_loop.latency_p99, max_rate=open_loop.max_rate, step_s=length.duration or SEARCH_STEP_S)


def _mixed(mixed: MixedOptions, default: tuple[str, ...], target: str, module: str) -> dict[str, Any]:
    """The spec fields of the mixed workload (--query-workers) and --visibility."""
    if not mixed.query_workers:
        given = [name for name, value in (("--queries", mixed.query_names), ("--query-file", mixed.query_file), ("--query-rate", mixed.query_rate),
                                          ("--compare-idle", mixed.compare_idle)) if value]
        if given:
            raise UsageProblem(f"{given[0]} applies to query clients: add --query-workers K")
        return {"visibility": mixed.visibility}
    fields: dict[str, Any] = {"query_workers": mixed.query_workers, "query_rate": mixed.query_rate or 0.0, "visibility": mixed.visibility}
    if mixed.query_file is not None:
        fields["query_file"], fields["queries"] = chosen_queries(mixed.query_file, mixed.query_names, target, module)
    else:
        fields["queries"] = parse_queries(mixed.query_names, default, QUERY_NAMES + QUERY_VARIANTS + TSBS_QUERIES)
    return fields


def _workload(length: RunLength, data: DataOptions) -> dict[str, Any]:
    """The spec fields of the options that go together (or must not); a conflict is a usage problem."""
    worker_counts, devices = length.worker_counts or (), data.devices
    if length.duration is not None and length.num_inserts is not None:
        raise UsageProblem("--duration and --num-inserts both set the length of the timed phase: give one")
    if devices is not None and data.devices_per_worker is not None:
        raise UsageProblem("--devices (all workers together) and --devices-per-worker: give one")
    if devices is not None and devices < max(worker_counts):
        raise UsageProblem(f"--devices {devices} is fewer than the {max(worker_counts)} workers: every worker needs a device")
    if devices is not None and -(-devices // min(worker_counts)) > MAX_DEVICES_PER_WORKER:
        raise UsageProblem(f"--devices {devices} gives a worker more than {MAX_DEVICES_PER_WORKER:,} devices with {min(worker_counts)} worker{'' if min(worker_counts) == 1 else 's'}; add workers")
    if data.burst is not None and data.order != "burst":
        raise UsageProblem("--burst applies to --order burst")
    if data.max_lateness is not None and not data.out_of_order:
        raise UsageProblem("--max-lateness applies to late events: add --out-of-order F")
    fields: dict[str, Any] = {"num_inserts": length.num_inserts or CLUSTER_NUM_INSERTS, "duration_s": length.duration or 0.0,
                              "devices_per_worker": data.devices_per_worker or 10, "devices": devices or 0}
    if data.burst is not None:
        fields["burst"] = data.burst
    if data.max_lateness is not None:
        fields["max_lateness_s"] = data.max_lateness
    return fields


@click.command()
@target_options
@insert_options
@launched(InsertOptions, plan_insert)
def insert() -> None:
    """Concurrent inserts of generated device events; reports inserts/s (and values/s) and call latencies."""
