"""The collector's limit of open files, raised to what its workers need.

Every worker keeps two connections to the collector (its main thread's and its progress reporter's),
so 1,000 workers need about 2,000 open files, more than the soft limit of 1,024 that many shells and
container runtimes set. The hard limit is usually far higher, and a process may raise its own soft
limit up to it (as Go programs do when they start); without that the collector cannot accept the
later workers' connections and they fail with "connection reset".
"""

from __future__ import annotations

import logging

log = logging.getLogger("collector")

CONNECTIONS_PER_WORKER = 2
SPARE = 64  # the CLI's connections, the database's, the interpreter's own files
# What "no hard limit" is taken to mean: the kernel refuses more than its nr_open (1,048,576 by default).
UNLIMITED_TARGET = 1 << 20


def needed(workers: int) -> int:
    return CONNECTIONS_PER_WORKER * workers + SPARE


def raise_limit(workers: int) -> None:
    try:
        import resource
    except ImportError:  # not a Unix system: nothing to raise
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed(workers)
    if soft != resource.RLIM_INFINITY and soft < want:
        target = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as error:
            log.warning("cannot raise the limit of open files from %d: %s", soft, error)
    if soft != resource.RLIM_INFINITY and soft < want:
        log.warning("the limit of open files (%d) is below what %d workers need (about %d): later workers will not be able "
                    "to connect; raise it (ulimit -n, or the container runtime's RLIMIT_NOFILE)", soft, workers, want)
