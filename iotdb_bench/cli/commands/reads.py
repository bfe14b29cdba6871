"""`python run.py query` and `python run.py scan`: reading back the data an insert left, every answer checked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from iotdb_bench.cli.commands.launch import Launch, PlatformChoice, launched, resolve, spec
from iotdb_bench.cli.commands.options import WorkerSet, parse_queries
from iotdb_bench.cli.commands.query_files import chosen_queries, query_file_option
from iotdb_bench.cli.commands.run_options import OptionGroup, Recording, TargetOptions, target_options
from iotdb_bench.cli.run import runner
from iotdb_bench.simulator.spec import QUERY_NAMES, QUERY_VARIANTS, TSBS_QUERIES


@dataclass(frozen=True)
class QueryOptions(OptionGroup):
    target: TargetOptions
    worker_counts: tuple[int, ...]
    runs: int
    query_names: str | None
    query_file: str | None
    query_timeout: float
    seed: int
    recording: Recording


def plan_query(options: QueryOptions) -> Launch:
    config, target_config, platform_name = resolve(options.target)
    fields: dict[str, Any]
    if options.query_file is not None:
        file, queries = chosen_queries(options.query_file, options.query_names, options.target.target, target_config.module)
        fields = {"queries": queries, "query_file": file}
    else:
        # Without --queries, () asks the workers for the data's own: they read its shape from the record
        # before any query runs (the tool's six, or the query types of TSBS's use case).
        fields = {"queries": parse_queries(options.query_names, (), QUERY_NAMES + QUERY_VARIANTS + TSBS_QUERIES)}
    base = spec(options.target, target_config, task="query", workers=options.worker_counts[0], **fields,
                query_runs=options.runs, query_timeout=options.query_timeout, clean=False, seed=options.seed)
    invocation = runner.Invocation(base, options.worker_counts, 1, 0, options.target.timeout, time_limit=options.target.time_limit)
    return Launch(invocation, config, target_config, PlatformChoice.of(options.target, platform_name), options.target.output, options.recording)


@click.command()
@target_options
@click.option("-w", "--workers", "worker_counts", type=WorkerSet(), default="1", show_default=True, help="Concurrent workers issuing the queries (a set is allowed).")
@click.option("-r", "--runs", type=click.IntRange(min=1), default=3, show_default=True, help="Executions of each query per worker.")
@click.option("--queries", "query_names", metavar="NAMES", help=f"Comma-separated subset of: {', '.join(QUERY_NAMES)}; opt-in variants: "
              f"{', '.join(QUERY_VARIANTS)}; on TSBS's data TSBS's query types by name (tsbs-devops: all 15, tsbs-iot: all 13, "
              "docs/tsbs.md); with --query-file, its queries. [default: the data's: the tool's six, or on TSBS's data its use case's types]")
@query_file_option
@click.option("--query-timeout", type=click.FloatRange(min=0), default=0, show_default=True, help="Seconds one query execution may take; 0 = no limit.")
@click.option("--seed", type=click.IntRange(min=0, max=2**32 - 1), default=1, show_default=True, help="Seed of the parameters TSBS's query types and a query file's queries draw per execution.")
@launched(QueryOptions, plan_query)
def query() -> None:
    """Run the analytic queries against the data already in the database and check every answer
    against what the tool inserted (exit 1 on a wrong answer)."""


@dataclass(frozen=True)
class ScanOptions(OptionGroup):
    target: TargetOptions
    worker_counts: tuple[int, ...]
    runs: int
    scan_page_size: int
    recording: Recording


def plan_scan(options: ScanOptions) -> Launch:
    config, target_config, platform_name = resolve(options.target)
    base = spec(options.target, target_config, task="scan", workers=options.worker_counts[0], scan_page_size=options.scan_page_size, clean=False)
    invocation = runner.Invocation(base, options.worker_counts, options.runs, 0, options.target.timeout, time_limit=options.target.time_limit)
    return Launch(invocation, config, target_config, PlatformChoice.of(options.target, platform_name), options.target.output, options.recording)


@click.command()
@target_options
@click.option("-w", "--workers", "worker_counts", type=WorkerSet(), default="1", show_default=True, help="Workers sharing the devices (a set is allowed).")
@click.option("-r", "--runs", type=click.IntRange(min=1), default=3, show_default=True, help="Scans per worker count; figures are averaged.")
@click.option("--page-size", "scan_page_size", type=click.IntRange(min=1, max=1_000_000), default=10_000, show_default=True,
              help="Readings per page or fetch.")
@launched(ScanOptions, plan_scan)
def scan() -> None:
    """Read every reading of every device back in time order, streaming, and check order and counts (exit 1 when wrong)."""
