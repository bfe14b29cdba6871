"""--pregenerate: every batch of the timed phase generated and encoded before the common start (as TSBS
loads pre-generated data), so the timed loop only sends and times them. It removes the client's work of
making events from the timed phase: the figures then measure sending alone, which the report's
conditions say.

The batches are held in memory. The worker measures its own resident memory as it builds them and
stops before the start, in one line, when they would take more than LIMIT_BYTES, or half the memory
limit of its container (a worker pod's default is 1 GiB: the kernel would kill it first).
"""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Iterator
from typing import Any

from iotdb_bench.simulator.roles import Writer
from iotdb_bench.simulator.worker.preparing import prepared_chunks
from iotdb_bench.simulator.workload.events import EventBatch

LIMIT_BYTES = 1 << 30  # per worker process
# The container's memory limit: cgroup v2, then v1 (a huge number there means none).
CGROUP_LIMIT_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


class PregenerateTooLarge(Exception):
    """The timed phase's batches do not fit in a worker's LIMIT_BYTES."""


def resident_bytes() -> int:
    """This process's resident memory now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def container_limit_bytes(files: tuple[str, ...] = CGROUP_LIMIT_FILES) -> int | None:
    """The memory limit of this process's container (cgroup), None when it has none."""
    for name in files:
        try:
            with open(name) as limit:
                text = limit.read().strip()
        except OSError:
            continue
        return None if text == "max" or int(text) >= 1 << 60 else int(text)
    return None


def limit_bytes_now() -> int:
    """What a worker may hold: LIMIT_BYTES, or half its container's limit when that is less."""
    container = container_limit_bytes()
    return LIMIT_BYTES if container is None else min(LIMIT_BYTES, container // 2)


class Pregenerated:
    """The timed phase's (events, prepared) pairs, all made at construction. Used as the worker's
    pipeline (preparing.PIPELINES): nothing is left to prepare while a call waits."""

    def __init__(self, writer: Writer, chunks: Iterator[EventBatch], size: int, events: int, limit_bytes: int | None = None):
        limit_bytes = limit_bytes_now() if limit_bytes is None else limit_bytes
        before = resident_bytes()
        self._items: list[tuple[int, Any]] = []
        made = 0
        for items in prepared_chunks(writer, chunks, size):
            self._items.extend(items)
            made += sum(count for count, _ in items)
            if (grown := resident_bytes() - before) > limit_bytes:
                self._items.clear()
                raise PregenerateTooLarge(
                    f"--pregenerate: {made:,} of this worker's {events:,} events already took {grown / 2**20:,.0f} MiB, above the "
                    f"{limit_bytes / 2**20:,.0f} MiB a worker may hold (1 GiB, or half its container's memory limit); insert fewer events per run (--num-inserts) or leave out --pregenerate")
        self.held_bytes = max(0, resident_bytes() - before)

    def while_waiting(self) -> None:
        pass

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        yield from self._items  # a generator: the worker closes its pipeline when the loop ends
