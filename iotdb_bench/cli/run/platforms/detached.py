"""Detached runs on Kubernetes (insert --detach, then `attach`).

`install` puts every planned run of an invocation into ONE helm release: the chart creates each run's
collector and worker Jobs suspended, and a conductor Job (simulator/detached/conductor.py) starts them one after
another and keeps each run's report in the run's own spec ConfigMap, or in parts beside it when it is larger
than one ConfigMap holds (simulator/detached/plan.py). The release's spec ConfigMap
holds the plan (runs.json) and the results document as the CLI began it (document.json): `attach`
needs nothing else to save the results folder an attached run would have saved. No heartbeat: every
Job has a deadline (activeDeadlineSeconds) instead, the conductor's covering all the runs.
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kubernetes.client import BatchV1Api, CoreV1Api

from iotdb_bench.cli.errors import RunFailed, UsageProblem
from iotdb_bench.cli.results.document import ResultsDocument, RunRecord
from iotdb_bench.cli.run.platforms.kubernetes import (
    API_ERRORS,
    CHART,
    FATAL_WAITING,
    JOB_DEADLINE_MARGIN_S,
    KubernetesPlatform,
    _short,
    release_name,
    write_private_yaml,
)
from iotdb_bench.cli.run.platforms.releases import DETACHED_LABEL
from iotdb_bench.cli.run.platforms.sampling import timed_window
from iotdb_bench.cli.run.runner import PlannedRun, new_run_id
from iotdb_bench.simulator.detached.plan import (
    DIGEST_KEY,
    PART_KEY,
    PARTS_KEY,
    REPORT_KEY,
    STATUS_KEY,
    DetachedStatus,
    PartsProblem,
    joined,
    part_name,
    unpacked,
)
from iotdb_bench.simulator.measurement.resources import CPU, MEMORY, WRITTEN, ResourceGroup, ResourceUsage
from iotdb_bench.simulator.report import RunReport

# The conductor's deadline per run beyond --timeout: pods to schedule and start, the report to keep,
# the Jobs to delete; and once for the conductor's own start.
PER_RUN_SLACK_S = 60
START_SLACK_S = 120
POLL_S = 1.0
# How long `attach` waits for an API server that does not answer before it gives up (the run goes on).
API_PATIENCE_S = 120.0
NOT_SAMPLED = "not sampled: a detached run (the CLI samples the pods only while it follows a run)"


def install(platform: KubernetesPlatform, planned: list[PlannedRun], timeout: float, document: ResultsDocument) -> str:
    """Install the detached release of `planned`; returns its run id (the release's id)."""
    run_id = new_run_id()
    deadline_s = conductor_deadline_s(len(planned), timeout)
    first = planned[0].spec
    values = platform.values(first, timeout)
    values.update(runId=run_id, detached={
        "enabled": True,
        "runs": [{"runId": run.spec.run_id, "workers": run.spec.workers, "queryWorkers": run.spec.query_workers,
                  "spec": run.spec.model_dump_json(indent=2),
                  "record": {"label": run.label, "workers": run.workers, "run": run.run, "step": run.step,
                             "without_queries": run.without_queries}}
                 for run in planned],
        "runTimeoutSeconds": timeout,
        "deadlineSeconds": deadline_s,
        "deadline": math.ceil(time.time()) + deadline_s + START_SLACK_S,
        "document": document.model_dump_json(),
    })
    with tempfile.TemporaryDirectory(prefix="iotdb-bench-") as folder:
        values_file = write_private_yaml(Path(folder) / "values.yaml", values)
        spec_file = Path(folder) / "spec.json"
        first.dump(spec_file)
        platform.helm.install(release_name(run_id), CHART, [*platform.extra_values, values_file], spec_file)
    return run_id


def conductor_deadline_s(runs: int, timeout: float) -> int:
    return runs * (math.ceil(timeout) + JOB_DEADLINE_MARGIN_S + PER_RUN_SLACK_S) + START_SLACK_S


@dataclass
class Outcome:
    document: ResultsDocument
    finished: list[RunRecord]
    error: str | None  # None: every run done and its check passed


class DetachedRun:
    """A detached release as `attach` sees it: its plan, its conductor's status, its reports."""

    def __init__(self, core: CoreV1Api, batch: BatchV1Api, namespace: str, run: str):
        self.core, self.batch, self.namespace = core, batch, namespace
        self.release = run if run.startswith("iotdb-bench-") else release_name(run)
        try:
            found = core.list_namespaced_config_map(
                namespace, label_selector=f"app.kubernetes.io/instance={self.release},app.kubernetes.io/component=spec",
                _request_timeout=10).items
        except API_ERRORS as error:
            raise UsageProblem(f"cannot read the runs in namespace '{namespace}': {_short(error)}") from None
        if not found:
            raise UsageProblem(f"no detached run {run} in namespace '{namespace}' (python run.py cleanup --dry-run lists the runs)")
        spec_map = found[0]
        if (spec_map.metadata.labels or {}).get(DETACHED_LABEL) != "true":
            raise UsageProblem(f"{self.release} is not a detached run (it was started without --detach)")
        self.plan = json.loads(spec_map.data["runs.json"])
        self.document = ResultsDocument.model_validate_json(spec_map.data["document.json"])
        self.conductor = f"{self.release}-conductor"

    def follow(self, on_status: Callable[[DetachedStatus], None]) -> DetachedStatus:
        """Wait until the conductor has finished (or failed, or is gone); its last status. An API server
        away for a while (a laptop changing networks) is waited for: the run does not depend on it."""
        unreachable_since: float | None = None
        while True:
            try:
                status = self._read()
            except API_ERRORS as error:
                unreachable_since = unreachable_since or time.monotonic()
                away = time.monotonic() - unreachable_since
                if away > API_PATIENCE_S:
                    raise RunFailed(f"cannot read the status of {self.release} for {away:.0f} s ({_short(error)}); "
                                    "the detached run goes on: attach again later") from None
                time.sleep(POLL_S)
                continue
            unreachable_since = None
            if status.state in ("done", "failed"):
                return status
            problem = self._conductor_problem()
            if problem:
                with contextlib.suppress(*API_ERRORS):
                    status = self._read()  # it may have said why as it stopped
                if status.state in ("done", "failed"):
                    return status
                return status.model_copy(update={"state": "failed", "error": problem})
            on_status(status)
            time.sleep(POLL_S)

    def outcome(self, status: DetachedStatus) -> Outcome:
        finished = []
        for run in self.plan["runs"]:
            try:
                report = self.kept_report(run["specConfigMap"])
            except API_ERRORS as error:
                raise RunFailed(f"cannot read the report of {run['runId']} in {self.release}: {_short(error)}; attach again later") from None
            except PartsProblem as problem:
                raise RunFailed(f"the report of {run['runId']} in {self.release}: {problem}") from None
            if report is not None:
                finished.append(RunRecord(**run["record"], report=unsampled(report)))
        return Outcome(self.document, finished, None if status.state == "done" else (status.error or "the detached run failed"))

    def kept_report(self, spec_config_map: str) -> RunReport | None:
        """The run's report as the conductor kept it (simulator/detached/plan.py): in the run's spec ConfigMap,
        or in parts beside it; None while the run has not finished."""
        kept = self.core.read_namespaced_config_map(spec_config_map, self.namespace, _request_timeout=10)
        whole = (kept.binary_data or {}).get(REPORT_KEY)
        if whole is not None:
            return unpacked(whole)
        count = (kept.data or {}).get(PARTS_KEY)
        if count is None:
            return None
        parts = []
        for index in range(int(count)):
            part = self.core.read_namespaced_config_map(part_name(spec_config_map, index), self.namespace, _request_timeout=30)
            parts.append((part.binary_data or {}).get(PART_KEY, ""))
        return joined(parts, kept.data[DIGEST_KEY])

    def _read(self) -> DetachedStatus:
        reports = self.core.read_namespaced_config_map(self.plan["reports"], self.namespace, _request_timeout=10)
        text = (reports.data or {}).get(STATUS_KEY)
        return DetachedStatus.model_validate_json(text) if text else DetachedStatus(total=len(self.plan["runs"]))

    def _conductor_problem(self) -> str | None:
        """Why the conductor will say nothing more: its Job failed (its deadline) or is gone."""
        try:
            job = self.batch.read_namespaced_job(self.conductor, self.namespace, _request_timeout=10)
        except API_ERRORS as error:
            if getattr(error, "status", None) == 404:
                return f"the conductor's Job {self.conductor} is gone"
            return None  # asked again at the next look
        for condition in job.status.conditions or []:
            if condition.type == "Failed" and condition.status == "True":
                return f"the conductor's Job failed: {condition.reason}: {condition.message}"
            if condition.type == "Complete" and condition.status == "True":
                return "the conductor ended without a final status"
        return self._conductor_pod_problem()

    def _conductor_pod_problem(self) -> str | None:
        """A conductor pod that cannot start (its image, its config) would otherwise be waited for until the deadline."""
        try:
            pods = self.core.list_namespaced_pod(self.namespace, label_selector=f"job-name={self.conductor}", _request_timeout=10).items
        except API_ERRORS:
            return None
        for pod in pods:
            for container in pod.status.container_statuses or []:
                waiting = container.state.waiting if container.state else None
                if waiting is not None and waiting.reason in FATAL_WAITING:
                    return f"the conductor's pod {pod.metadata.name}: {waiting.reason} for image {container.image}" + (
                        f": {waiting.message}" if waiting.message else "")
        return None


def unsampled(report: RunReport) -> RunReport:
    """A detached run's report with its resource figures absent, and why (never zeros)."""
    window = timed_window(report)
    if report.resources is None and window is not None:
        report.resources = ResourceUsage(window_start=window[0], window_end=window[1], database=ResourceGroup(
            source="not sampled (detached run)", not_measured=dict.fromkeys((CPU, MEMORY, WRITTEN), NOT_SAMPLED)))
    return report
