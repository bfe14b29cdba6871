"""The `run.py` commands: options in, a run spec built and validated, runs executed on a platform,
results saved and shown. Every expected failure ends in one line (see cli/terminal.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from pydantic import ValidationError

from iotdb_bench.cli.commands.attach import attach
from iotdb_bench.cli.commands.cleanup import cleanup
from iotdb_bench.cli.commands.entry import CONTEXT, main  # noqa: F401  (main: the entry point, also from here)
from iotdb_bench.cli.commands.options import TableCount, WorkerSet, parse_extra_options, parse_queries, spec_problems
from iotdb_bench.cli.commands.saved_results import compare, report
from iotdb_bench.cli.commands.saving import save_results
from iotdb_bench.cli.commands.study import study
from iotdb_bench.cli.config import Config, Target, load_config
from iotdb_bench.cli.errors import RunFailed, UsageProblem
from iotdb_bench.cli.report import results_files
from iotdb_bench.cli.report.render import show
from iotdb_bench.cli.results.document import Environment, ResultsDocument
from iotdb_bench.cli.results.host import usable_cpus
from iotdb_bench.cli.results.rate_search import MaxRateSearch
from iotdb_bench.cli.run import rate_finder, runner
from iotdb_bench.cli.run.progress import RunProgress
from iotdb_bench.cli.terminal import console, handle_errors, warning_line
from iotdb_bench.simulator import __version__
from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import (
    MAX_DEVICES_PER_WORKER,
    QUERY_NAMES,
    QUERY_VARIANTS,
    TSBS_DEVOPS_QUERIES,
    TSBS_TABLES,
    RunSpec,
    default_primary_key,
    default_queries,
)


# The commands as one group (tests and `study` use it); run.py and the iotdb-bench command go through
# entry.py's group, which imports this module only when one of its commands runs.
@click.group(context_settings=CONTEXT)
@click.version_option(package_name=None, version=__version__, prog_name="iotdb-bench")
def commands() -> None:
    """Benchmark databases for IoT workloads: concurrent inserts of device events and analytic queries."""


DEFAULT_HEARTBEAT_TIMEOUT_S = 30.0


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Options every command shares but none of them reads itself: kept in the context's meta."""
    ctx.meta[param.name] = value
    return value


def _options() -> dict[str, Any]:
    """Every option of the running command, defaults included (recorded with the results)."""
    ctx = click.get_current_context()
    return {**ctx.params, **{name: ctx.meta[name] for name in ("heartbeat_timeout",) if name in ctx.meta}}


def _command_line() -> list[str]:
    """The running command with every option as the CLI spells it, defaults included: pasted into a
    shell it runs the same invocation (report.html prints it)."""
    ctx = click.get_current_context()
    values = {**ctx.params, **ctx.meta}
    words = [ctx.command.name]
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name not in values or param.name == "details":
            continue
        value, flag = values[param.name], max(param.opts, key=len)
        if param.is_flag:
            if param.secondary_opts:
                words.append(flag if value else max(param.secondary_opts, key=len))
            elif value:
                words.append(flag)
        elif value is not None:
            for item in value if param.multiple else [value]:
                words += [flag, ",".join(map(str, item)) if isinstance(item, list | tuple) else str(item)]
    return words


def common_options(command):
    options = [
        click.option("--target", required=True, help="Target name from the config (e.g. sqlite, postgresql-local)."),
        click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="Config file [default: config.yaml beside run.py]."),
        click.option("--timeout", type=click.FloatRange(min=0), default=0, show_default=True, help="Seconds one run may take; 0 = no limit."),
        click.option("--extra-option", "extra_options", multiple=True, metavar="KEY=VALUE", help="Option of the target's database module, repeatable (see docs/databases/)."),
        click.option("--platform", type=click.Choice(["local", "kubernetes"]), help="Where the workers run [default: the target's, else local for a target without a database (null), else the config's]."),
        click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("results"), show_default=True, help="Folder for the results folders."),
        click.option("--namespace", help="Kubernetes namespace [default: the config's]."),
        click.option("--context", "kube_context", help="kubeconfig context [default: the current one; KUBECONFIG is honoured]."),
        click.option("--keep", is_flag=True, help="Kubernetes: leave the helm release installed after the run, for debugging."),
        click.option("--heartbeat-timeout", type=click.FloatRange(min=0), default=DEFAULT_HEARTBEAT_TIMEOUT_S, show_default=True,
                     expose_value=False, callback=_remember, help="Seconds without word from this command after which a run stops by "
                     "itself (a killed CLI); 0 = never."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@commands.command()
@common_options
@click.option("-w", "--workers", "worker_counts", type=WorkerSet(), default=None,
              help="Set of worker counts to try, comma-separated [default: local platform 1, 2, 4... up to the machine's CPUs; "
                   "Kubernetes 1,4,8,12,16].")
@click.option("-r", "--runs", type=click.IntRange(min=1), default=3, show_default=True, help="Runs per worker count; figures are averaged.")
@click.option("--primary-key", type=click.Choice(["db", "sql", "client", "uuid", "none"]), default=None, help="How the primary key is generated [default: db; none for --schema slim and TSBS's shapes].")
@click.option("--tables", type=TableCount(), default="single", show_default=True, help="Tables the devices are spread over, 1-64 (single = 1, multiple = 4); a device always writes to the same one.")
@click.option("--num-inserts", type=click.IntRange(min=1), default=None,
              help="Events each worker inserts in the timed phase [default: Kubernetes 10000; local platform: --duration 3].")
@click.option("--duration", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds the timed phase lasts (from the common start) instead of --num-inserts [default: 3 on the local platform].")
@click.option("--commit-interval", type=click.FloatRange(min=0, min_open=True), default=None, help="Single inserts inside a transaction committed every S seconds (without --batch).")
@click.option("--batch", type=click.IntRange(min=1), default=None, help="Events per database call (batch mode); omitted = single inserts.")
@click.option("--clean/--no-clean", default=True, show_default=True, help="Drop and recreate the tables before each run.")
@click.option("--prefill", type=click.IntRange(min=0), default=0, show_default=True, help="Events inserted (untimed, in batches) before the timed phase.")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Fill-level test: repeat the insert test N times without cleaning in between.")
@click.option("--seed", type=click.IntRange(min=0, max=2**32 - 1), default=1, show_default=True, help="Seed of the event generator.")
@click.option("--devices-per-worker", type=click.IntRange(min=1, max=MAX_DEVICES_PER_WORKER), default=None, help="Devices each worker simulates [default: 10].")
@click.option("--devices", type=click.IntRange(min=1), default=None, help="Devices of all workers together, split evenly (instead of --devices-per-worker); TSBS's shapes: hosts (TSBS's --scale).")
@click.option("--sensors", type=click.IntRange(min=1, max=1000), default=1, show_default=True, help="Sensors per device, each reporting its own readings (--schema events).")
@click.option("--schema", "shape", type=click.Choice(["events", "slim", "light", "large", *TSBS_TABLES]), default="events", show_default=True, help="Data shape: the tool's events, seed 002's slim, light (key + index) and large (text + 8 integers) tables, or TSBS's cpu-only data (docs/tsbs.md).")
@click.option("--interval", metavar="DURATION", help="TSBS's shapes: time between two rows of a host, e.g. 10s (TSBS's --log-interval) [default: 10s].")
@click.option("--time-range", metavar="DURATION", help="TSBS's shapes: the time the run's rows span, e.g. 3d (TSBS's --timestamp-end minus --timestamp-start) [default: 1d].")
@click.option("--start", metavar="TIMESTAMP", help="TSBS's shapes: the time of the first rows (TSBS's --timestamp-start) [default: 2016-01-01T00:00:00Z].")
@click.option("--measurements", type=click.IntRange(min=1, max=1000), default=1, show_default=True, help="Values each device reports per timestamp (--schema events).")
@click.option("--order", type=click.Choice(["round-robin", "random", "burst"]), default="round-robin", show_default=True, help="Which device sends next: in turn, a random one, or bursts of --burst readings per device.")
@click.option("--burst", type=click.IntRange(min=1, max=100_000), default=None, help="Readings a device sends at once with --order burst [default: 10].")
@click.option("--out-of-order", type=click.FloatRange(min=0, max=1), default=0.0, show_default=True, help="Fraction of the events sent late.")
@click.option("--max-lateness", type=click.FloatRange(min=0.1, max=86_400), default=None, help="Seconds of event time a late event is late by at most [default: 60].")
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=None, help="Open loop: events/s of all workers together, calls on a fixed schedule; latency also from each call's intended start.")
@click.option("--find-max-rate", is_flag=True, help="Short --rate runs at rising rates: the highest rate sustained with response-time p99 within --latency-p99.")
@click.option("--latency-p99", type=click.FloatRange(min=0, min_open=True), default=None, metavar="MS", help="--find-max-rate: the response-time p99 target in milliseconds.")
@click.option("--max-rate", type=click.FloatRange(min=0, min_open=True), default=None, help="--find-max-rate: no rate above this is tried (events/s).")
@click.option("--query-workers", type=click.IntRange(min=1, max=1024), default=None, help="Query clients running --queries against the growing data through the timed phase (mixed workload).")
@click.option("--queries", "query_names", metavar="NAMES", help=f"With --query-workers: comma-separated subset of {', '.join(QUERY_NAMES)} [default: all; TSBS's shapes: TSBS's query types, tsbs-devops].")
@click.option("--query-rate", type=click.FloatRange(min=0, min_open=True), default=None, help="With --query-workers: queries per second of all query clients together (open loop) [default: back to back].")
@click.option("--compare-idle", is_flag=True, help="With --query-workers: also run each count without query clients, for the insert throughput beside it.")
@click.option("--visibility", is_flag=True, help="A probe writes marker events through the insert path and measures the time until a query sees them.")
@click.option("--pregenerate", is_flag=True, help="Generate and encode the timed phase's batches before the common start (as TSBS loads "
              "pre-generated data): the figures then measure sending alone. Needs --batch and --num-inserts; at most 1 GiB per worker (half a worker pod's memory limit).")
@click.option("--details", is_flag=True, help="Show every figure in the tables (the files always hold them all).")
@click.option("--detach", is_flag=True, help="Kubernetes: install every run in the cluster and return at once, printing the run id; "
              "needs --timeout (the run's own deadline). Follow and fetch it with: python run.py attach RUN.")
@handle_errors
def insert(target, config_path, timeout, extra_options, platform, output, namespace, kube_context, keep, worker_counts, runs, primary_key, tables,
           num_inserts, duration, commit_interval, batch, clean, prefill, steps, seed, devices_per_worker, devices, sensors, shape, interval, time_range,
           start, measurements, order, burst, out_of_order, max_lateness, rate, find_max_rate, latency_p99, max_rate, query_workers, query_names, query_rate,
           compare_idle, visibility, pregenerate, details, detach) -> None:
    """Concurrent inserts of generated device events; reports inserts/s (and values/s) and call latencies."""
    config, target_config, platform_name = _resolve(config_path, target, platform)
    if detach:
        _check_detach(platform_name, timeout, keep, find_max_rate)
    tsbs = shape in TSBS_TABLES  # its length is its time range: neither --num-inserts nor --duration by default
    worker_counts, num_inserts, duration = _length_defaults(platform_name, worker_counts, num_inserts, duration, find_max_rate or tsbs)
    search = _rate_search(find_max_rate, rate, latency_p99, max_rate, worker_counts, num_inserts, duration, steps, clean)
    if search is not None:
        duration = search.step_s
    if steps:
        if len(worker_counts) != 1:
            raise UsageProblem("--steps needs exactly one worker count (e.g. -w 4)")
        if runs != 1:
            raise UsageProblem("--steps needs exactly one run (-r 1)")
        if prefill:
            raise UsageProblem("--steps cannot be combined with --prefill")
        if compare_idle:
            raise UsageProblem("--compare-idle cannot be combined with --steps (each twin run would add to the fill level)")
    workload = _workload(worker_counts, num_inserts=num_inserts, duration=duration, devices_per_worker=devices_per_worker, devices=devices,
                         order=order, burst=burst, out_of_order=out_of_order, max_lateness=max_lateness)
    if tsbs and num_inserts is None:
        workload["num_inserts"] = 0
    mixed = _mixed(query_workers, query_names, query_rate, compare_idle, visibility, default_queries(shape))
    if query_workers and not prefill and clean:
        remedy = "an insert run before this one, then --no-clean" if tsbs else "--prefill N"
        warning_line(f"--query-workers without --prefill: the first queries run on empty tables (add {remedy} for data from the start)")
    base = _spec(
        target, target_config, extra_options, task="insert", **mixed, workers=worker_counts[0], batch=batch or 0,
        primary_key=primary_key or default_primary_key(shape), tables=tables, clean=clean, prefill=prefill, seed=seed,
        interval_ms=interval, time_range_ms=time_range, start_ms=start,
        shape=shape, measurements=measurements, sensors=sensors, order=order, out_of_order=out_of_order,
        commit_interval_s=commit_interval or 0.0, rate=rate or 0.0, pregenerate=pregenerate, **workload,
    )
    if detach:  # its own deadline replaces the heartbeat: nobody follows the run while it goes on
        base = base.model_copy(update={"heartbeat_timeout": 0.0})
    invocation = runner.Invocation(base, worker_counts, 1 if search else runs, steps or 0, timeout, compare_idle=compare_idle)
    _run(invocation, config, target_config, PlatformChoice(platform_name, namespace, kube_context, keep, detach), output, details, search)


def _check_detach(platform: str, timeout: float, keep: bool, find_max_rate: bool) -> None:
    if platform != "kubernetes":
        raise UsageProblem(f"--detach needs the kubernetes platform (this run's platform is {platform})")
    if not timeout:
        raise UsageProblem("--detach needs --timeout (seconds one run may take): a detached run's own deadline replaces this command's heartbeat")
    if keep:
        raise UsageProblem("--keep does nothing with --detach: the release stays until `python run.py attach` fetches the results")
    if find_max_rate:
        raise UsageProblem("--detach cannot be combined with --find-max-rate (each rate depends on the runs before)")


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


def _length_defaults(platform: str, worker_counts, num_inserts, duration, find_max_rate: bool):
    """Worker counts and the timed phase's length where the options leave them to the platform."""
    local = platform == "local"
    if worker_counts is None:
        worker_counts = local_worker_counts(usable_cpus() or 1) if local else CLUSTER_WORKER_COUNTS
    if num_inserts is None and duration is None and not find_max_rate:
        if local:
            duration = LOCAL_DURATION_S
        else:
            num_inserts = CLUSTER_NUM_INSERTS
    return worker_counts, num_inserts, duration


def _rate_search(find_max_rate: bool, rate, latency_p99, max_rate, worker_counts, num_inserts, duration, steps, clean) -> MaxRateSearch | None:
    """The --find-max-rate search asked for (None: a plain run); its options checked together."""
    if not find_max_rate:
        for value, name in ((latency_p99, "--latency-p99"), (max_rate, "--max-rate")):
            if value is not None:
                raise UsageProblem(f"{name} applies to --find-max-rate")
        return None
    if rate is not None:
        raise UsageProblem("--rate and --find-max-rate: give one (the search chooses the rates)")
    if latency_p99 is None:
        raise UsageProblem("--find-max-rate needs --latency-p99 MS, the response-time target")
    if len(worker_counts) != 1:
        raise UsageProblem("--find-max-rate needs exactly one worker count (e.g. -w 4)")
    if num_inserts is not None:
        raise UsageProblem("--find-max-rate runs each rate for --duration seconds: leave out --num-inserts")
    if steps:
        raise UsageProblem("--find-max-rate cannot be combined with --steps")
    if not clean:
        raise UsageProblem("--find-max-rate starts every rate from empty tables: leave out --no-clean")
    if click.get_current_context().get_parameter_source("runs") is ParameterSource.COMMANDLINE:
        raise UsageProblem("--find-max-rate runs each rate once: leave out -r/--runs")
    return MaxRateSearch(latency_p99_ms=latency_p99, max_rate=max_rate, step_s=duration or SEARCH_STEP_S)


def _mixed(query_workers, query_names, query_rate, compare_idle, visibility, default: tuple[str, ...]) -> dict[str, Any]:
    """The spec fields of the mixed workload (--query-workers) and --visibility."""
    if not query_workers:
        given = [name for name, value in (("--queries", query_names), ("--query-rate", query_rate), ("--compare-idle", compare_idle)) if value]
        if given:
            raise UsageProblem(f"{given[0]} applies to query clients: add --query-workers K")
        return {"visibility": visibility}
    queries = parse_queries(query_names, default, QUERY_NAMES + QUERY_VARIANTS + TSBS_DEVOPS_QUERIES)
    return {"query_workers": query_workers, "queries": queries, "query_rate": query_rate or 0.0, "visibility": visibility}


@commands.command()
@common_options
@click.option("-w", "--workers", "worker_counts", type=WorkerSet(), default="1", show_default=True, help="Concurrent workers issuing the queries (a set is allowed).")
@click.option("-r", "--runs", type=click.IntRange(min=1), default=3, show_default=True, help="Executions of each query per worker.")
@click.option("--queries", "query_names", metavar="NAMES", help=f"Comma-separated subset of: {', '.join(QUERY_NAMES)}; opt-in variants: "
              f"{', '.join(QUERY_VARIANTS)}; on TSBS's data TSBS's query types by name (tsbs-devops: all 15, docs/tsbs.md).")
@click.option("--query-timeout", type=click.FloatRange(min=0), default=0, show_default=True, help="Seconds one query execution may take; 0 = no limit.")
@click.option("--seed", type=click.IntRange(min=0, max=2**32 - 1), default=1, show_default=True, help="Seed of the parameters TSBS's query types draw per execution.")
@handle_errors
def query(target, config_path, timeout, extra_options, platform, output, namespace, kube_context, keep, worker_counts, runs, query_names, query_timeout,
          seed) -> None:
    """Run the analytic queries against the data already in the database and check every answer
    against what the tool inserted (exit 1 on a wrong answer)."""
    queries = parse_queries(query_names, QUERY_NAMES, QUERY_NAMES + QUERY_VARIANTS + TSBS_DEVOPS_QUERIES)
    config, target_config, platform_name = _resolve(config_path, target, platform)
    base = _spec(target, target_config, extra_options, task="query", workers=worker_counts[0], queries=queries,
                 query_runs=runs, query_timeout=query_timeout, clean=False, seed=seed)
    invocation = runner.Invocation(base, worker_counts, 1, 0, timeout)
    _run(invocation, config, target_config, PlatformChoice(platform_name, namespace, kube_context, keep), output)


def _workload(worker_counts: tuple[int, ...], *, num_inserts, duration, devices_per_worker, devices, order, burst, out_of_order,
              max_lateness) -> dict[str, Any]:
    """The spec fields of the options that go together (or must not); a conflict is a usage problem."""
    if duration is not None and num_inserts is not None:
        raise UsageProblem("--duration and --num-inserts both set the length of the timed phase: give one")
    if devices is not None and devices_per_worker is not None:
        raise UsageProblem("--devices (all workers together) and --devices-per-worker: give one")
    if devices is not None and devices < max(worker_counts):
        raise UsageProblem(f"--devices {devices} is fewer than the {max(worker_counts)} workers: every worker needs a device")
    if devices is not None and -(-devices // min(worker_counts)) > MAX_DEVICES_PER_WORKER:
        raise UsageProblem(f"--devices {devices} gives a worker more than {MAX_DEVICES_PER_WORKER:,} devices with {min(worker_counts)} worker{'' if min(worker_counts) == 1 else 's'}; add workers")
    if burst is not None and order != "burst":
        raise UsageProblem("--burst applies to --order burst")
    if max_lateness is not None and not out_of_order:
        raise UsageProblem("--max-lateness applies to late events: add --out-of-order F")
    fields: dict[str, Any] = {"num_inserts": num_inserts or CLUSTER_NUM_INSERTS, "duration_s": duration or 0.0,
                              "devices_per_worker": devices_per_worker or 10, "devices": devices or 0}
    if burst is not None:
        fields["burst"] = burst
    if max_lateness is not None:
        fields["max_lateness_s"] = max_lateness
    return fields


@commands.command()
@common_options
@click.option("-w", "--workers", "worker_counts", type=WorkerSet(), default="1", show_default=True, help="Workers sharing the devices (a set is allowed).")
@click.option("-r", "--runs", type=click.IntRange(min=1), default=3, show_default=True, help="Scans per worker count; figures are averaged.")
@click.option("--page-size", "scan_page_size", type=click.IntRange(min=1, max=1_000_000), default=10_000, show_default=True,
              help="Readings per page or fetch.")
@handle_errors
def scan(target, config_path, timeout, extra_options, platform, output, namespace, kube_context, keep, worker_counts, runs, scan_page_size) -> None:
    """Read every reading of every device back in time order, streaming, and check order and counts (exit 1 when wrong)."""
    config, target_config, platform_name = _resolve(config_path, target, platform)
    base = _spec(target, target_config, extra_options, task="scan", workers=worker_counts[0], scan_page_size=scan_page_size, clean=False)
    invocation = runner.Invocation(base, worker_counts, runs, 0, timeout)
    _run(invocation, config, target_config, PlatformChoice(platform_name, namespace, kube_context, keep), output)


def _resolve(config_path: Path | None, target: str, platform: str | None) -> tuple[Config, Target, str]:
    config = load_config(config_path)
    target_config = config.target(target)
    # A target with no database to reach (null) has nothing to deploy: it runs here unless told otherwise.
    nothing_to_reach = module_class(target_config.module).capabilities.location.value == "none"
    chosen = platform or target_config.platform or ("local" if nothing_to_reach else config.platform)
    if target_config.platform == "local" and chosen != "local":
        raise UsageProblem(f"target '{target}' runs only on the local platform")
    kubernetes = module_class(target_config.module).capabilities.kubernetes
    if kubernetes is not True and chosen != "local":
        raise UsageProblem(f"target '{target}' runs only on the local platform: {kubernetes.because}")
    return config, target_config, chosen


def _spec(target: str, target_config: Target, extra_options: tuple[str, ...], **fields: Any) -> RunSpec:
    fields.setdefault("heartbeat_timeout", click.get_current_context().meta.get("heartbeat_timeout", DEFAULT_HEARTBEAT_TIMEOUT_S))
    try:
        spec = RunSpec(
            run_id=runner.new_run_id(), target=target, module=target_config.module,
            connection=target_config.connection, extra=parse_extra_options(extra_options), **fields,
        )
    except ValidationError as error:
        raise UsageProblem(spec_problems(error)) from None
    # Validate the module's options and the mode combination up front. Variables that a Kubernetes
    # Secret named in the config will supply need not be set on the laptop: stand-ins do for the check.
    from_secret = [] if not target_config.existing_secret else [n for n in target_config.env_references() if n not in os.environ]
    try:
        os.environ.update(dict.fromkeys(from_secret, "0"))
        module_class(spec.module)(spec)
    finally:
        for name in from_secret:
            os.environ.pop(name, None)
    return spec


@dataclass(frozen=True)
class PlatformChoice:
    name: str
    namespace: str | None = None
    kube_context: str | None = None
    keep: bool = False
    detach: bool = False


def _platform(choice: PlatformChoice, config: Config, target_config: Target):
    if choice.name == "local":
        from iotdb_bench.cli.run.platforms.local import LocalPlatform

        return LocalPlatform(database_process=target_config.database_process, module=target_config.module)
    from iotdb_bench.cli.run.platforms.kubernetes import KubernetesPlatform

    return KubernetesPlatform(config, target_config, namespace=choice.namespace or config.namespace,
                              context=choice.kube_context, keep=choice.keep)


def _run(invocation: runner.Invocation, config: Config, target_config: Target, choice: PlatformChoice, output: Path,
         details: bool = False, search: MaxRateSearch | None = None) -> None:
    plan_only = click.get_current_context().obj
    if isinstance(plan_only, runner.PlanOnly):  # `study` checking a cell: everything is validated, nothing runs
        plan_only.invocations.append(invocation)
        return
    base = invocation.base
    # The platform first: one that cannot start (a namespace missing, the cluster away) leaves no
    # results folder behind. A detached run's folder is made by `attach`.
    platform = _platform(choice, config, target_config)
    try:
        folder = None if choice.detach else results_files.results_folder(output, base.target, base.task)
    except BaseException:
        platform.close()
        raise
    document = ResultsDocument(
        task=base.task, target=base.target, platform=choice.name, environment=Environment.here(_options(), _command_line()), spec=base,
        worker_counts=list(invocation.worker_counts), runs_per_worker_count=invocation.runs, steps=invocation.steps,
        cost=target_config.cost, max_rate=search,
    )
    if choice.detach:
        from iotdb_bench.cli.run.platforms.detached import install

        planned = runner.plan(invocation)
        run_id = install(platform, planned, invocation.timeout, document)
        console.print(f"Detached run {run_id}: {len(planned)} run(s) installed in namespace '{platform.namespace}'; "
                      f"they go on without this command.\nFollow it and fetch its results with: "
                      f"python run.py attach {run_id} --namespace {platform.namespace}", highlight=False)
        return
    progress = RunProgress(console, one_line=search is not None)
    failure: Exception | None = None
    try:
        with progress:
            if search is not None:
                rate_finder.search(invocation, platform, folder / "logs", progress.start, search)
            else:
                runner.execute(invocation, platform, folder / "logs", progress.start)
        document.status = "ok"
    except (RunFailed, KeyboardInterrupt) as error:
        failure = error
        document.status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
        document.error = str(error) or type(error).__name__
    finally:
        platform.close()
        save_results(document, invocation.finished, folder)
    show(document, folder, details)
    if failure is not None:
        raise failure


commands.add_command(report)
commands.add_command(compare)
commands.add_command(cleanup)
commands.add_command(attach)
commands.add_command(study)
