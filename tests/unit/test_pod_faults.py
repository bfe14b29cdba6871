"""How the kubernetes platform names what happened to a pod of the run (issue 23): deleted, evicted,
preempted, gone, its node not ready; judged from pod objects as the API server returns them."""

from __future__ import annotations

import datetime
from pathlib import Path

from kubernetes.client import (
    V1ContainerState,
    V1ContainerStateRunning,
    V1ContainerStateTerminated,
    V1ContainerStatus,
    V1ObjectMeta,
    V1Pod,
    V1PodCondition,
    V1PodSpec,
    V1PodStatus,
)

from iotdb_bench.cli.run.platforms.kubernetes import PodWatch


def pod(name: str, component: str, index: str = "0", deleted: bool = False, conditions=(), terminated: int | None = None,
        deletion_asked_s_ago: float = 0.0, grace_s: int = 30) -> V1Pod:
    annotations = {"batch.kubernetes.io/job-completion-index": index} if component == "worker" else {}
    state = V1ContainerState(terminated=V1ContainerStateTerminated(exit_code=terminated)) if terminated is not None \
        else V1ContainerState(running=V1ContainerStateRunning())
    return V1Pod(
        metadata=V1ObjectMeta(name=name, uid=f"uid-{name}", labels={"app.kubernetes.io/component": component}, annotations=annotations,
                              deletion_timestamp=deletion_at(deletion_asked_s_ago, grace_s) if deleted else None,
                              deletion_grace_period_seconds=grace_s if deleted else None),
        spec=V1PodSpec(containers=[], node_name="node-a"),
        status=V1PodStatus(phase="Running", conditions=list(conditions), container_statuses=[
            V1ContainerStatus(name="c", image="i", image_id="", ready=True, restart_count=0, state=state)]),
    )


def deletion_at(asked_s_ago: float, grace_s: int) -> datetime.datetime:
    """The deletionTimestamp the API server sets: when the deletion was asked for, plus the grace period."""
    return datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=grace_s - asked_s_ago)


def watch(tmp_path: Path, *pods: V1Pod) -> PodWatch:
    found = PodWatch(core=None, batch=None, namespace="ns", release="r", log_dir=tmp_path)
    found.pods = list(pods)
    found._nodes_checked_at = float("inf")  # no node reads here
    return found


def test_a_deleted_pod_is_named(tmp_path):
    found = watch(tmp_path, pod("c-1", "collector"), pod("w-1", "worker", "1", deleted=True))
    assert found._judge([]) == "worker 1 (pod w-1) was deleted (on node node-a)"


def test_an_evicted_or_preempted_pod_says_so():
    for reason, said in (("EvictionByEvictionAPI", "was evicted (a node drain or the eviction API) on node node-a"),
                         ("PreemptionByScheduler", "was preempted by a pod of higher priority on node node-a"),
                         ("DeletionByTaintManager", "was deleted because its node is not ready or unreachable on node node-a")):
        disrupted = pod("c-1", "collector", deleted=True, conditions=[V1PodCondition(type="DisruptionTarget", status="True", reason=reason)])
        assert watch(Path("."), disrupted)._judge([]) == f"collector (pod c-1) {said}"


def test_a_pod_that_vanished_between_two_looks_was_deleted(tmp_path):
    """Without its history (no list before, as here): no more is known."""
    found = watch(tmp_path, pod("c-1", "collector"), pod("w-0", "worker"))
    assert found._judge([]) is None
    found.pods = [pod("c-1", "collector")]
    assert found._judge([]) == "worker 0 (pod w-0) was deleted"


def test_a_collector_that_ended_before_the_report_is_a_problem(tmp_path):
    found = watch(tmp_path, pod("c-1", "collector", terminated=0))
    found._read_log = lambda pod, **options: "run abandoned: the CLI has not asked ...\n"
    assert found._judge([]) == "collector (pod c-1) ended (exit code 0) before the run's report was fetched; log: run abandoned: the CLI has not asked ..."
    assert watch(tmp_path, pod("w-0", "worker", terminated=0))._judge([]) is None  # a worker done is no problem


def test_the_evicted_worker_is_named_before_the_one_its_failed_job_deleted(tmp_path):
    evicted = pod("w-1", "worker", "1", deleted=True,
                  conditions=[V1PodCondition(type="DisruptionTarget", status="True", reason="EvictionByEvictionAPI")])
    found = watch(tmp_path, pod("c-1", "collector"), pod("w-0", "worker", "0", deleted=True), evicted)
    assert found._judge([]) == "worker 1 (pod w-1) was evicted (a node drain or the eviction API) on node node-a"


def test_of_two_workers_deleted_in_the_same_second_the_one_that_has_ended_is_named(tmp_path):
    """deletionTimestamps are whole seconds: the user's deletion of worker 1 and its Job's deletion of
    worker 0 can carry the same one (CI once named worker 0). Worker 1 has ended, which is what failed
    the Job; worker 0 still runs."""
    worker_0 = pod("w-0", "worker", "0", deleted=True)
    worker_1 = pod("w-1", "worker", "1", deleted=True, terminated=143)
    worker_1.metadata.deletion_timestamp = worker_0.metadata.deletion_timestamp = deletion_at(0.0, 30).replace(microsecond=0)
    found = watch(tmp_path, pod("c-1", "collector"), worker_0, worker_1)
    assert found._judge([]) == "worker 1 (pod w-1) was deleted (on node node-a)"


def test_of_two_deleted_workers_the_one_deleted_first_is_named_not_the_one_its_failed_job_deleted(tmp_path):
    """A user deletes worker 1; its Job fails and deletes worker 0 a second later. Both are terminating
    when the CLI looks: worker 1 is the cause (CI once named worker 0, the first by index)."""
    found = watch(tmp_path, pod("c-1", "collector"), pod("w-0", "worker", "0", deleted=True, deletion_asked_s_ago=1.0),
                  pod("w-1", "worker", "1", deleted=True, deletion_asked_s_ago=2.0))
    assert found._judge([]) == "worker 1 (pod w-1) was deleted (on node node-a)"
    # The grace periods differ: the time asked for counts, not the deletionTimestamp.
    found = watch(tmp_path, pod("w-0", "worker", "0", deleted=True, deletion_asked_s_ago=1.0, grace_s=5),
                  pod("w-1", "worker", "1", deleted=True, deletion_asked_s_ago=2.0, grace_s=60))
    assert found._judge([]) == "worker 1 (pod w-1) was deleted (on node node-a)"
