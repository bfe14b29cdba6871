"""The events a worker's timed phase had acknowledged, kept as a count and replayed afterwards.

The generator is deterministic: the events the database acknowledged in a timed phase of batches
are the first N events of its batch stream, in order (each batch passes whole, except the last,
which a --duration deadline may cut). So the timed loop only counts, and the expected answers and
the stream's end are computed from the replayed batches once the timed calls are over: the tally
costs the timed phase nothing (it competes with the database for the machine's CPU only afterwards).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from iotdb_bench.simulator.workload.events import EventBatch


class AcknowledgedPrefix:
    """`stream()` makes the timed phase's batch stream (EventGenerator.batches), the same each time it
    is called and the same events as the chunks the loop sent (EventGenerator.chunks)."""

    def __init__(self, stream: Callable[[], Iterator[EventBatch]]):
        self._stream = stream
        self.events = 0

    def add(self, events: int) -> None:
        self.events += events

    def replay(self) -> Iterator[EventBatch]:
        """The acknowledged events again, batch by batch, the last one cut where the count ends."""
        left = self.events
        if left <= 0:
            return
        for batch in self._stream():
            if len(batch) >= left:
                yield batch if len(batch) == left else batch.select(slice(0, left))
                return
            yield batch
            left -= len(batch)
