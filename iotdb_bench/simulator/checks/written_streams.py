"""Which stretch of each worker's event stream the database stored, kept in the record of expected
answers beside the tallies (simulator/checks/expected.py).

Every event is a pure function of (seed, worker, position) (simulator/workload/events.py), so the
positions a worker stored, with the generator's settings, say exactly what it wrote: the tool can then
compute any aggregate of any device and window (a query file's declared answers, simulator/checks/computed.py)
by generating just the positions that can fall there. A worker's run stores one stretch
[start, end) of its stream, each position once (prefill, then the timed phase; late events are sent
out of order but all of them, unless a --duration deadline cuts them off: then the stretch has gaps and
says so). Stretches of later runs into the same tables (--no-clean, --steps) are added, the ones that
continue each other joined.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from iotdb_bench.simulator.workload.events import EventBatch


class StreamPart(BaseModel):
    """Positions [start, end) of one worker's stream, each stored once, and the generator's settings."""

    seed: int
    worker: int
    devices: int
    order: str = "round-robin"
    burst: int = 1
    start: int
    end: int
    shift_ms: int = Field(0, description="generated minus stored timestamps (timescaledb's restart_timestamps_each_step)")

    def continued_by(self, other: StreamPart) -> bool:
        return self.model_dump(exclude={"start", "end"}) == other.model_dump(exclude={"start", "end"}) and other.start == self.end


def joined(parts: list[StreamPart]) -> list[StreamPart]:
    """The parts, each joined with the one that continues it."""
    found: list[StreamPart] = []
    for part in parts:
        before = next((index for index, known in enumerate(found) if known.continued_by(part)), None)
        if before is None:
            found.append(part)
        else:
            found[before] = found[before].model_copy(update={"end": part.end})
    return found


class StreamSpan:
    """One worker's stored positions, batch by batch (the worker's `_stored`): their range, their
    number (equal to the range's length when nothing is missing) and the module's time shift."""

    def __init__(self, seed: int, worker: int, devices: int, order: str, burst: int):
        self._settings = {"seed": seed, "worker": worker, "devices": devices, "order": order, "burst": burst if order == "burst" else 1}
        self.start, self.end, self.count = None, 0, 0
        self.shift_ms: int | None = 0
        self._shifted = False

    def add(self, batch: EventBatch, stored: EventBatch) -> None:
        positions = batch.sequence_number
        low = int(positions.min())
        self.start = low if self.start is None else min(self.start, low)
        self.end = max(self.end, int(positions.max()) + 1)
        self.count += len(batch)
        if stored is not batch and self.shift_ms is not None:
            shifts = batch.timestamp_ms - stored.timestamp_ms
            shift = int(shifts[0])
            if (self._shifted and shift != self.shift_ms) or not (shifts == shift).all():
                self.shift_ms = None  # the module rewrites times in a way a part cannot say
            else:
                self.shift_ms, self._shifted = shift, True

    def parts(self) -> tuple[list[StreamPart], str | None]:
        """The stored stretch, or why it does not describe what was stored."""
        if self.start is None:
            return [], None
        worker = self._settings["worker"]
        if self.shift_ms is None:
            return [], f"worker {worker}'s module stored its events at other times than generated, not by one shift"
        if self.count != self.end - self.start:
            return [], (f"worker {worker} stored {self.count:,} events of positions {self.start:,} to {self.end - 1:,} of its stream "
                        "(late events cut off by a --duration deadline)")
        return [StreamPart(**self._settings, start=self.start, end=self.end, shift_ms=self.shift_ms)], None
