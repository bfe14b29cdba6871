"""The conductor of a detached run (insert --detach): a Job of the release that starts the release's
runs one after another, keeps each run's report in the run's spec ConfigMap and deletes the run's Jobs.

Each run's collector and worker Jobs were created suspended by the chart. For run i the conductor sets
the spec's stream offset when the run continues the event streams, un-suspends both Jobs, follows the
run through its collector's Service (the HTTP API the CLI uses), keeps the report in the run's spec
ConfigMap, deletes the Jobs and goes on; it stops at the first run that failed or whose check did not pass, as the attached CLI does.
Its progress and any failure go into status.json of the release's reports ConfigMap, for `python run.py attach`.
"""

from __future__ import annotations

import base64
import logging
import time
from pathlib import Path

from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.detached.kube_api import KubeApi, KubeError
from iotdb_bench.simulator.detached.plan import (
    DIGEST_KEY,
    PART_BYTES,
    PART_KEY,
    PARTS_KEY,
    REPORT_KEY,
    STATUS_KEY,
    DetachedStatus,
    Plan,
    PlannedRun,
    digest,
    gzipped,
    part_name,
    split,
)
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.stream_continuation import continue_after

log = logging.getLogger("conductor")

POLL_S = 0.5
PUBLISH_EVERY_S = 2.0
JOBS_EVERY_S = 2.0
# After a Job failed, give its pods' failure report a moment to reach the collector.
FAILURE_REPORT_GRACE_S = 1.0


class RunProblem(Exception):
    """Why the run going on cannot succeed."""


class Conductor:
    def __init__(self, plan: Plan, api: KubeApi):
        self.plan, self.api = plan, api
        self.status = DetachedStatus(total=len(plan.runs))
        self._published_at = 0.0

    def run(self) -> int:
        continue_at = 0
        counted: int | None = None  # the tables' events when the last run ended (its count check passed)
        index: int | None = None
        try:
            for index, planned in enumerate(self.plan.runs):
                label = planned.record.get("label", planned.run_id)
                self.status = self.status.model_copy(update={"state": "running", "current": index, "label": label, "phase": "starting",
                                                             "events": 0, "expected_events": 0})
                self.publish(force=True)
                try:
                    spec = self._prepare(planned, continue_at, counted)
                    report = self._follow(planned)
                finally:
                    self._delete_jobs(planned)
                continue_at = continue_after(continue_at, spec, report)
                counted = report.verification.counted if report.verification is not None and report.verification.ok else None
                self._keep(planned, report)
                failure = report.failure()
                if failure:
                    raise RunProblem(failure)
                self.status.done += 1
            self.status = self.status.model_copy(update={"state": "done", "current": None, "phase": ""})
            self.publish(force=True)
            log.info("all %d runs done", len(self.plan.runs))
            return 0
        except (RunProblem, KubeError) as problem:
            return self._failed(index, str(problem))
        except Exception as error:  # a bug or an answer nobody expected: said, not a silent crash of the Job
            return self._failed(index, f"the conductor failed: {type(error).__name__}: {error}")
        except SystemExit:  # SIGTERM: the detached run's deadline passed, or the release is being removed
            self._failed(index, "the conductor was stopped (the detached run's deadline passed, or its release was removed)")
            raise

    def _failed(self, index: int | None, text: str) -> int:
        where = "" if index is None else f"run {index + 1} of {len(self.plan.runs)} ({self.status.label}): "
        self.status = self.status.model_copy(update={"state": "failed", "error": where + text})
        log.error("%s%s", where, text)
        try:
            self.publish(force=True)
        except KubeError as error:  # attach sees the conductor's Job fail instead
            log.error("cannot record the failure: %s", error)
            return 1
        return 0

    # -- one run ------------------------------------------------------------------------------------
    def _prepare(self, planned: PlannedRun, continue_at: int, counted: int | None) -> RunSpec:
        """The run's spec, its stream offset set where the runs before it stopped (when it continues the
        streams) and, when it continues their tables, the count they ended with (as the attached CLI does)."""
        path = f"/api/v1/namespaces/{self.plan.namespace}/configmaps/{planned.spec_config_map}"
        given = spec = RunSpec.model_validate_json(self.api.get(path)["data"]["spec.json"])
        if spec.stream_offset and spec.stream_offset != continue_at:
            spec = spec.model_copy(update={"stream_offset": continue_at})
        if not spec.clean and counted is not None:
            spec = spec.model_copy(update={"count_before": counted})
        if spec != given:
            self.api.merge_patch(path, {"data": {"spec.json": spec.model_dump_json(indent=2)}})
        return spec

    def _follow(self, planned: PlannedRun) -> RunReport:
        limit_s = self.plan.run_timeout_s
        started = time.monotonic()
        for job in (planned.collector_job, planned.worker_job):
            self.api.merge_patch(self._job_path(job), {"spec": {"suspend": False}})
        http = CollectorClient(planned.collector_url, get_attempts=3, run_id=planned.run_id)
        jobs_checked = 0.0
        last: Status | None = None
        while True:
            status = _status(http)
            last = status or last
            if status is not None:
                if status.phase == "failed":
                    raise RunProblem(status.error or "the run failed")
                if status.phase == "done":
                    code, body = http.get("/report")
                    if code != 200:
                        raise RunProblem(f"the collector has no report: {body[:200].decode(errors='replace')}")
                    return RunReport.model_validate_json(body)
                self.status = self.status.model_copy(update={"phase": status.phase, "events": status.events,
                                                             "expected_events": status.expected_events})
                self.publish()
            if time.monotonic() - jobs_checked >= JOBS_EVERY_S:
                jobs_checked = time.monotonic()
                problem = self._job_problem(planned)
                if problem:
                    time.sleep(FAILURE_REPORT_GRACE_S)
                    later = _status(http)
                    raise RunProblem(later.error if later is not None and later.error else problem)
            if limit_s > 0 and time.monotonic() - started > limit_s:
                raise RunProblem(f"the run did not finish within --timeout {limit_s:g} s ({self._where(planned, last)}); stopped it")
            time.sleep(POLL_S)

    def _where(self, planned: PlannedRun, last: Status | None) -> str:
        """Where a run that did not finish stood: the collector's last status and the Jobs' pods."""
        said = "the collector never answered" if last is None else (
            f"the collector: {last.phase}, {last.registered}/{last.workers} workers registered, {last.ready} ready, "
            f"{last.events:,} of {last.expected_events:,} events")
        pods = []
        for name, role in ((planned.collector_job, "collector"), (planned.worker_job, "worker")):
            try:
                counts = self.api.get(self._job_path(name)).get("status", {})
            except KubeError:
                continue
            pods.append(f"{role} pods {counts.get('active', 0)} active, {counts.get('ready', 0)} ready")
        return "; ".join([said, *pods])

    def _job_problem(self, planned: PlannedRun) -> str | None:
        for name, role in ((planned.worker_job, "worker"), (planned.collector_job, "collector")):
            job = self.api.get(self._job_path(name))
            for condition in job.get("status", {}).get("conditions") or []:
                if condition.get("type") == "Failed" and condition.get("status") == "True":
                    return f"the {role} Job failed: {condition.get('reason')}: {condition.get('message')}"
        return None

    def _delete_jobs(self, planned: PlannedRun) -> None:
        for job in (planned.collector_job, planned.worker_job):
            try:
                self.api.delete(self._job_path(job), {"propagationPolicy": "Background"})
            except KubeError as error:  # its own deadline and TTL end it; helm uninstall removes it
                log.warning("cannot delete job %s: %s", job, error)

    def _job_path(self, name: str) -> str:
        return f"/apis/batch/v1/namespaces/{self.plan.namespace}/jobs/{name}"

    # -- what attach reads -------------------------------------------------------------------------
    def _keep(self, planned: PlannedRun, report: RunReport) -> None:
        """The run's report kept whole, whatever its size: in the run's own ConfigMap, or in parts (plan.py)."""
        keep_report(self.api, self.plan.namespace, planned.spec_config_map, report)

    def publish(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._published_at < PUBLISH_EVERY_S:
            return
        self._published_at = now
        self.status.updated = time.time()
        try:
            self.api.merge_patch(f"/api/v1/namespaces/{self.plan.namespace}/configmaps/{self.plan.reports}",
                                 {"data": {STATUS_KEY: self.status.model_dump_json()}})
        except KubeError as error:
            if force:
                raise
            log.warning("cannot publish the progress: %s", error)


def keep_report(api: KubeApi, namespace: str, spec_config_map: str, report: RunReport, part_bytes: int = PART_BYTES) -> int:
    """Keep `report` beside the run's spec ConfigMap: in it when it fits one part, else in part ConfigMaps
    owned by it (Kubernetes deletes them with it: `helm uninstall` and `cleanup` leave none). Returns the
    number of part ConfigMaps written (0: kept in the spec ConfigMap)."""
    path = f"/api/v1/namespaces/{namespace}/configmaps/{spec_config_map}"
    data = gzipped(report)
    if len(data) <= part_bytes:
        api.merge_patch(path, {"binaryData": {REPORT_KEY: base64.b64encode(data).decode()}})
        return 0
    owner = api.get(path)["metadata"]
    labels = {key: value for key, value in (owner.get("labels") or {}).items() if key.startswith("app.kubernetes.io/")}
    parts = split(data, part_bytes)
    for index, part in enumerate(parts):
        api.create(f"/api/v1/namespaces/{namespace}/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": part_name(spec_config_map, index), "labels": {**labels, "app.kubernetes.io/component": "report-part"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": spec_config_map, "uid": owner["uid"]}]},
            "binaryData": {PART_KEY: base64.b64encode(part).decode()},
        })
    # Said last: a reader that finds the count finds every part it counts.
    api.merge_patch(path, {"data": {PARTS_KEY: str(len(parts)), DIGEST_KEY: digest(data)}})
    log.info("report of %s kept in %d parts (%d bytes gzipped)", report.run_id, len(parts), len(data))
    return len(parts)


def _status(http: CollectorClient) -> Status | None:
    """The collector's status, or None while it cannot be reached (starting, its Service not routed yet)."""
    try:
        code, body = http.get("/status")
    except CollectorError as error:
        log.info("no status yet: %s", error)
        return None
    if code != 200:
        log.info("no status yet: %s %s", code, body[:200])
        return None
    return Status.model_validate_json(body)


def main(plan_path: Path) -> int:
    plan = Plan.model_validate_json(plan_path.read_text())
    return Conductor(plan, KubeApi()).run()
