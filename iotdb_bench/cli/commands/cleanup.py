"""`python run.py cleanup`: list the tool's helm releases and remove those whose CLI is gone (killed,
or a run kept with --keep), judged by the heartbeat each CLI renews while it follows its run, and the
detached runs past their deadline. `cleanup RUN` removes that one run's release, whatever its state."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.table import Table

from iotdb_bench.cli.config import CONFIG_HELP, load_config
from iotdb_bench.cli.errors import RunFailed, UsageProblem
from iotdb_bench.cli.terminal import console, handle_errors


@click.command()
@click.argument("run", required=False)
@click.option("--namespace", help="Kubernetes namespace [default: the config's].")
@click.option("--all", "all_namespaces", is_flag=True, help="Look in every namespace.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help=CONFIG_HELP)
@click.option("--context", "kube_context", help="kubeconfig context [default: the current one; KUBECONFIG is honoured].")
@click.option("--dry-run", is_flag=True, help="Only list the releases; remove nothing.")
@handle_errors
def cleanup(run: str | None, namespace: str | None, all_namespaces: bool, config_path: Path | None, kube_context: str | None, dry_run: bool) -> None:
    """Remove the helm releases of runs whose CLI is gone.

    A CLI renews a heartbeat on its run's release while it follows the run; a release whose heartbeat
    is older than the run's --heartbeat-timeout (or that was kept with --keep) is removed. Releases of
    runs still being followed are listed and left alone, and so are detached runs (insert --detach)
    within their deadline. With RUN (a run id or release name), only that release is removed, whatever its state."""
    if all_namespaces and namespace:
        raise UsageProblem("--namespace and --all exclude each other")
    if not all_namespaces and not namespace:
        namespace = load_config(config_path).namespace
    from kubernetes.client import ApiClient, CoreV1Api

    from iotdb_bench.cli.run.platforms import releases
    from iotdb_bench.cli.run.platforms.helm import Helm
    from iotdb_bench.cli.run.platforms.kubernetes import API_ERRORS, _load_kubeconfig, _short

    configuration = _load_kubeconfig(kube_context)
    try:
        found = releases.list_releases(CoreV1Api(ApiClient(configuration)), None if all_namespaces else namespace)
    except API_ERRORS as error:
        raise UsageProblem(f"cannot list the releases at {configuration.host}: {_short(error)}") from None
    where = "any namespace" if all_namespaces else f"namespace '{namespace}'"
    if run is not None:
        found = [release for release in found if run in (release.name, release.run_id, f"iotdb-bench-{release.run_id}")]
        if not found:
            raise UsageProblem(f"no release of run {run} in {where}")
    if not found:
        console.print(f"No release of iotdb-bench in {where}.", highlight=False)
        return
    now = time.time()
    table = Table(title=f"Releases of iotdb-bench in {where}", title_justify="left")
    for column in ("Release", "Namespace", "Target", "Task", "Last heartbeat", "State", "Action"):
        table.add_column(column, overflow="fold")
    problems = []
    for release in found:
        action = "left alone"
        if run is not None or release.left_behind(now):
            if dry_run:
                action = "would be removed"
            else:
                problem = Helm(release.namespace, kube_context).uninstall(release.name)
                action = "removal FAILED" if problem else "removed"
                if problem:
                    problems.append(problem)
        table.add_row(release.name, release.namespace, release.target, release.task, "none (detached)" if release.deadline is not None else f"{release.silent_s(now):.0f} s ago",
                      release.state(now), action)
    console.print(table)
    if problems:
        raise RunFailed(f"{len(problems)} release(s) could not be removed: {problems[0]}")
