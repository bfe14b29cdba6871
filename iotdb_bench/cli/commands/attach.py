"""`python run.py attach RUN`: follow a detached run (insert --detach) from any shell, and once it has
finished save its results folder as an attached run would have, then remove its release."""

from __future__ import annotations

from pathlib import Path

import click

from iotdb_bench.cli.commands.saving import save_results, series_kept
from iotdb_bench.cli.config import CONFIG_HELP, load_config
from iotdb_bench.cli.errors import RunFailed
from iotdb_bench.cli.report.render import show
from iotdb_bench.cli.results import results_files, thresholds
from iotdb_bench.cli.terminal import console, error_line, handle_errors, warning_line
from iotdb_bench.simulator.detached.plan import DetachedStatus


@click.command()
@click.argument("run")
@click.option("--namespace", help="Kubernetes namespace [default: the config's].")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help=CONFIG_HELP)
@click.option("--context", "kube_context", help="kubeconfig context [default: the current one; KUBECONFIG is honoured].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("results"), show_default=True, help="Folder for the results folders.")
@click.option("--details", is_flag=True, help="Show every figure in the tables (the files always hold them all).")
@handle_errors
def attach(run: str, namespace: str | None, config_path: Path | None, kube_context: str | None, output: Path, details: bool) -> None:
    """Follow a detached run (insert --detach) and, once it has finished, save its results folder and remove its release.

    RUN is the run id `insert --detach` printed. Interrupting this command leaves the run going on;
    attach again later. Resource figures are not measured for detached runs (nothing samples the
    pods while nobody follows them)."""
    namespace = namespace or load_config(config_path).namespace
    from kubernetes.client import ApiClient, BatchV1Api, CoreV1Api

    from iotdb_bench.cli.run.platforms.detached import DetachedRun
    from iotdb_bench.cli.run.platforms.helm import Helm
    from iotdb_bench.cli.run.platforms.kubernetes import _load_kubeconfig

    client = ApiClient(_load_kubeconfig(kube_context))
    detached = DetachedRun(CoreV1Api(client), BatchV1Api(client), namespace, run)
    helm = Helm(namespace, kube_context)
    try:
        with console.status(f"{detached.release}: waiting for its conductor") as line:
            status = detached.follow(lambda status: line.update(f"{detached.release}: {progress_line(status)}"))
    except KeyboardInterrupt:
        error_line(f"stopped following; the detached run goes on: python run.py attach {run} --namespace {namespace}")
        raise SystemExit(130) from None
    outcome = detached.outcome(status)
    document = outcome.document
    document.status, document.error = ("ok", None) if outcome.error is None else ("failed", outcome.error)
    folder = results_files.results_folder(output, document.target, document.task)
    for record in outcome.finished:
        series_kept(folder, record)
    save_results(document, outcome.finished, folder)
    show(document, folder, details)
    problem = helm.uninstall(detached.release)
    if problem:
        warning_line(f"{problem}; remove it with: python run.py cleanup {run} --namespace {namespace}")
    if outcome.error is not None:
        raise RunFailed(outcome.error)
    thresholds.enforce(document.thresholds)


def progress_line(status: DetachedStatus) -> str:
    if status.state == "starting" or status.current is None:
        return f"starting ({status.done} of {status.total} runs done)"
    line = f"run {status.current + 1} of {status.total} ({status.label}): {status.phase or 'starting'}"
    if status.expected_events:
        line += f", {status.events:,} of {status.expected_events:,} events"
    return line + f"; {status.done} of {status.total} done"
