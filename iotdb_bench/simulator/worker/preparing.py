"""How a worker prepares (generates and encodes) the batches of its timed phase, chunk by chunk of
the stream (EventGenerator.chunks): in a helper thread, between calls, or while each call waits for
the database (the module's capabilities' `prepare_next`). --pregenerate prepares them all before the
start instead (pregenerated.py)."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from iotdb_bench.simulator.capabilities import PrepareNext
from iotdb_bench.simulator.roles import Writer
from iotdb_bench.simulator.workload.events import EventBatch


def prepared_chunks(writer: Writer, chunks: Iterator[EventBatch], size: int) -> Iterator[list[tuple[int, Any]]]:
    """Per chunk of the stream (EventGenerator.chunks), its batches of `size` as (events, prepared)
    pairs, in order: the timed loop needs a batch's count and its encoding, not its columns."""
    for chunk in chunks:
        counts = [min(size, len(chunk) - first) for first in range(0, len(chunk), size)]
        yield list(zip(counts, writer.prepare_batches(chunk, size), strict=True))


class HelperThread:
    """Generates and encodes the next chunk of batches in a helper thread while the current call is
    in the database: the driver waits without the GIL, so the client's work overlaps the call instead
    of leaving the connection idle between calls."""

    def __init__(self, writer: Writer, chunks: Iterator[EventBatch], size: int):
        self._prepared = prepared_chunks(writer, chunks, size)

    def while_waiting(self) -> None:
        pass

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prepare") as pool:
            upcoming = pool.submit(next, self._prepared, None)
            while (items := upcoming.result()) is not None:
                upcoming = pool.submit(next, self._prepared, None)
                yield from items


class InTurn(HelperThread):
    """Prepares each chunk of batches between calls."""

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        for items in self._prepared:
            yield from items


class DuringCalls(HelperThread):
    """The module calls `while_waiting` (its hooks) once its request is sent; when the batch after
    this one is not prepared yet, the next chunk is prepared then, in this thread, while the database
    works on the current one: the overlap of a helper thread without its hand-offs. Calling it again
    (a retried call) does nothing; if the module never calls it, the next chunk is prepared after the
    call."""

    def __init__(self, writer: Writer, chunks: Iterator[EventBatch], size: int):
        super().__init__(writer, chunks, size)
        self._ready: collections.deque[tuple[int, Any]] = collections.deque()

    def while_waiting(self) -> None:
        if not self._ready:
            self._ready.extend(next(self._prepared, ()))

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        self.while_waiting()
        while self._ready:
            yield self._ready.popleft()
            self.while_waiting()


PIPELINES: dict[PrepareNext, type[HelperThread]] = {
    PrepareNext.helper_thread: HelperThread, PrepareNext.in_turn: InTurn, PrepareNext.during_call: DuringCalls,
}
