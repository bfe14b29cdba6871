"""What the run commands (insert, query, scan) share once their options are checked: the target and its
platform resolved, the run spec built and validated by its database module, and the invocation launched
(platform, results folder, progress, results saved and shown)."""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from iotdb_bench.cli.commands.options import parse_extra_options, spec_problems
from iotdb_bench.cli.commands.run_options import Group, Recording, TargetOptions, options_of
from iotdb_bench.cli.commands.saving import run_done, save_results
from iotdb_bench.cli.config import Config, Target, load_config
from iotdb_bench.cli.errors import InputRefused, RunFailed, UsageProblem
from iotdb_bench.cli.report.render import show
from iotdb_bench.cli.results import results_files, thresholds
from iotdb_bench.cli.results.document import Environment, ResultsDocument, Threshold, ThresholdVerdict
from iotdb_bench.cli.results.rate_search import MaxRateSearch
from iotdb_bench.cli.run import rate_finder, runner
from iotdb_bench.cli.run.progress import RunProgress
from iotdb_bench.cli.terminal import console, handle_errors
from iotdb_bench.simulator.env_references import REFERENCE
from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import RunSpec


@dataclass(frozen=True)
class PlatformChoice:
    name: str
    namespace: str | None = None
    kube_context: str | None = None
    keep: bool = False
    detach: bool = False

    @classmethod
    def of(cls, options: TargetOptions, name: str, detach: bool = False) -> PlatformChoice:
        return cls(name, options.namespace, options.kube_context, options.keep, detach)


@dataclass(frozen=True)
class Launch:
    """A run command's invocation, checked and ready: what runs, where, into which folder, and what
    results.json records of the command."""

    invocation: runner.Invocation
    config: Config
    target_config: Target
    choice: PlatformChoice
    output: Path
    recording: Recording
    details: bool = False
    search: MaxRateSearch | None = None
    thresholds: tuple[Threshold, ...] = ()


def launched(model: type[Group], plan: Callable[[Group], Launch]) -> Callable[[Callable[[], None]], Callable[..., None]]:
    """The click callback of a run command (the decorated function gives its help): the options click
    parsed, as the typed `model`, planned by `plan` and launched; every expected failure one line."""

    def decorate(command: Callable[[], None]) -> Callable[..., None]:
        @handle_errors
        @functools.wraps(command)
        def callback(**_: Any) -> None:
            options = options_of(click.get_current_context(), model, sys.argv)
            launch(gated(plan(options), options.target.thresholds))

        return callback

    return decorate


def gated(ready: Launch, texts: tuple[str, ...]) -> Launch:
    """The launch with its thresholds (--threshold, checked as texts by click), each checked against the
    run's task and queries before anything runs."""
    if texts and ready.search is not None:
        raise UsageProblem("--threshold cannot be combined with --find-max-rate (its rows are the rates it tried, most of them failing by design)")
    given = tuple(thresholds.parse(text) for text in texts)
    for threshold in given:
        problem = thresholds.problem(threshold, ready.invocation.base)
        if problem is not None:
            raise UsageProblem(f"--threshold '{threshold.expression}': {problem}")
    return dataclasses.replace(ready, thresholds=given)


def resolve(options: TargetOptions) -> tuple[Config, Target, str]:
    """The config, the target's entry in it, and the platform its runs go to."""
    config = load_config(options.config_path)
    target_config = config.target(options.target)
    # A target with no database to reach (null) has nothing to deploy: it runs here unless told otherwise.
    nothing_to_reach = module_class(target_config.module).capabilities.location.value == "none"
    chosen = options.platform or target_config.platform or ("local" if nothing_to_reach else config.platform)
    if target_config.platform == "local" and chosen != "local":
        raise UsageProblem(f"target '{options.target}' runs only on the local platform")
    kubernetes = module_class(target_config.module).capabilities.kubernetes
    if kubernetes is not True and chosen != "local":
        raise UsageProblem(f"target '{options.target}' runs only on the local platform: {kubernetes.because}")
    return config, target_config, chosen


def spec(options: TargetOptions, target_config: Target, **fields: Any) -> RunSpec:
    """The run spec of the options, validated, its module's options and mode combination included."""
    fields.setdefault("heartbeat_timeout", options.heartbeat_timeout)
    try:
        built = RunSpec(
            run_id=runner.new_run_id(), target=options.target, module=target_config.module,
            connection=target_config.connection, extra=parse_extra_options(options.extra_options), **fields,
        )
    except ValidationError as error:
        raise UsageProblem(spec_problems(error)) from None
    module_class(built.module)(_with_stand_ins(built, target_config))
    return built


def _with_stand_ins(spec: RunSpec, target_config: Target) -> RunSpec:
    """The spec as its module checks it here: the variables a Kubernetes Secret named in the config will
    supply need not be set on the laptop, so their references read a stand-in value for the check."""
    if not target_config.existing_secret:
        return spec
    from_secret = {name for name in target_config.env_references() if name not in os.environ}

    def stand_in(values: dict[str, Any]) -> dict[str, Any]:
        return {key: REFERENCE.sub(lambda match: "0" if match.group(1) in from_secret else match.group(0), value) if isinstance(value, str) else value
                for key, value in values.items()}

    return spec.model_copy(update={"connection": stand_in(spec.connection), "extra": stand_in(spec.extra)})


def _platform(choice: PlatformChoice, config: Config, target_config: Target):
    if choice.name == "local":
        from iotdb_bench.cli.run.platforms.local import LocalPlatform

        return LocalPlatform(database_process=target_config.database_process, module=target_config.module)
    from iotdb_bench.cli.run.platforms.kubernetes import KubernetesPlatform

    return KubernetesPlatform(config, target_config, namespace=choice.namespace or config.namespace,
                              context=choice.kube_context, keep=choice.keep)


def launch(ready: Launch) -> None:
    """Run the invocation on its platform (or, detached, install it and return), save and show its results."""
    invocation, choice, base = ready.invocation, ready.choice, ready.invocation.base
    # The platform first: one that cannot start (a namespace missing, the cluster away) leaves no
    # results folder behind. A detached run's folder is made by `attach`.
    platform = _platform(choice, ready.config, ready.target_config)
    try:
        folder = None if choice.detach else results_files.results_folder(ready.output, base.target, base.task)
    except BaseException:
        platform.close()
        raise
    recording = ready.recording
    document = ResultsDocument(
        task=base.task, target=base.target, platform=choice.name, spec=base,
        environment=Environment.here(recording.options, recording.command_line, recording.argv),
        worker_counts=list(invocation.worker_counts), runs_per_worker_count=invocation.runs, steps=invocation.steps,
        cost=ready.target_config.cost, max_rate=ready.search, planned_runs=None if ready.search is not None else len(runner.plan(invocation)),
        thresholds=[ThresholdVerdict(threshold=threshold) for threshold in ready.thresholds],
    )
    document.environment.config = ready.config.source
    if folder is None:
        from iotdb_bench.cli.run.platforms.detached import install

        planned = runner.plan(invocation)
        run_id = install(platform, planned, invocation.timeout, document)
        console.print(f"Detached run {run_id}: {len(planned)} run(s) installed in namespace '{platform.namespace}'; "
                      f"they go on without this command.\nFollow it and fetch its results with: "
                      f"python run.py attach {run_id} --namespace {platform.namespace}", highlight=False)
        return
    invocation.on_run_done = lambda record: run_done(document, invocation.finished, folder, record)
    progress = RunProgress(console, one_line=ready.search is not None, planned_runs=document.planned_runs)
    failure: BaseException | None = None
    try:
        with progress:
            if ready.search is not None:
                rate_finder.search(invocation, platform, folder / "logs", progress.start, ready.search)
            else:
                runner.execute(invocation, platform, folder / "logs", progress.start)
        document.status = "ok"
        document.time_limit_reached = invocation.time_limit_reached
    except InputRefused:
        # Nothing was timed: as for a bad option, no results folder is left behind.
        shutil.rmtree(folder, ignore_errors=True)
        raise
    except (RunFailed, KeyboardInterrupt) as error:
        failure = error
        document.status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
        document.error = str(error) or type(error).__name__
    finally:
        platform.close()
        if folder.exists():
            save_results(document, invocation.finished, folder)
    show(document, folder, ready.details)
    if failure is not None:
        raise failure
    thresholds.enforce(document.thresholds)
