"""Deterministic, vectorised generation of temperature events in columnar batches.

Every event is a pure function of (seed, worker index, position in the worker's stream): the same
seed gives the same events whatever the batch size, and a worker never holds more than one batch,
so memory does not grow with the number of inserts. Values come from a counter-based hash
(splitmix64) instead of a stateful random generator, which is what makes positions independent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

# 2026-01-01T00:00:00Z: a fixed origin keeps generated data reproducible across runs.
TIME_ORIGIN_MS = 1_767_225_600_000
# Time between two consecutive events of one worker; each device reports every devices*100 ms.
EVENT_INTERVAL_MS = 100
DEVICE_ID_WIDTH = 15  # "w00000-d00000" style ids, fixed width so rows encode without Python loops
CLIENT_KEY_WIDTH = DEVICE_ID_WIDTH + 1 + 12

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SHIFT1, _SHIFT2, _SHIFT3, _SHIFT_53 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser: a well-mixed 64-bit hash of each element (wrapping arithmetic).
    Works in place on `x` (a fresh array) with one scratch array: this runs for every batch."""
    x += _GOLDEN
    scratch = np.right_shift(x, _SHIFT1)
    x ^= scratch
    x *= _MIX1
    np.right_shift(x, _SHIFT2, out=scratch)
    x ^= scratch
    x *= _MIX2
    np.right_shift(x, _SHIFT3, out=scratch)
    x ^= scratch
    return x


def device_ids(worker_index: int, devices: int) -> np.ndarray:
    """The fixed-width byte-string ids of one worker's devices."""
    return np.array([f"w{worker_index:06d}-d{d:06d}".encode() for d in range(devices)], dtype=f"S{DEVICE_ID_WIDTH}")


@dataclass(frozen=True)
class EventBatch:
    """A batch of events as columns. Timestamps are epoch milliseconds."""

    timestamp_ms: np.ndarray  # int64
    device_index: np.ndarray  # int64, index into the worker's devices
    device_id: np.ndarray  # S15
    sequence_number: np.ndarray  # int64, position in the worker's stream
    temperature: np.ndarray  # float64

    def __len__(self) -> int:
        return len(self.sequence_number)

    @cached_property
    def client_key(self) -> np.ndarray:
        """A key derived from the event's content (device id and sequence number), fixed width."""
        digits = (self.sequence_number[:, None] // _POWERS_OF_TEN) % 10 + ord("0")
        key = np.empty((len(self), CLIENT_KEY_WIDTH), dtype=np.uint8)
        key[:, :DEVICE_ID_WIDTH] = self.device_id.view(np.uint8).reshape(-1, DEVICE_ID_WIDTH)
        key[:, DEVICE_ID_WIDTH] = ord("-")
        key[:, DEVICE_ID_WIDTH + 1 :] = digits
        return key.view(f"S{CLIENT_KEY_WIDTH}").ravel()

    def select(self, mask: np.ndarray) -> EventBatch:
        return EventBatch(
            self.timestamp_ms[mask],
            self.device_index[mask],
            self.device_id[mask],
            self.sequence_number[mask],
            self.temperature[mask],
        )

    def split_by_table(self, table_count: int) -> list[tuple[int, EventBatch]]:
        """Sub-batches per table; a device always writes to the same table (device index modulo count)."""
        if table_count == 1:
            return [(0, self)]
        table_of_event = self.device_index % table_count
        parts = [(t, self.select(table_of_event == t)) for t in range(table_count)]
        return [(t, part) for t, part in parts if len(part)]

    def rows(self, with_client_key: bool = False) -> list[tuple]:
        """Python tuples (timestamp_ms, device_id, sequence_number, temperature[, key]) for row-wise drivers."""
        columns = [
            self.timestamp_ms.tolist(),
            self.device_id.astype(f"U{DEVICE_ID_WIDTH}").tolist(),
            self.sequence_number.tolist(),
            self.temperature.tolist(),
        ]
        if with_client_key:
            columns.append(self.client_key.astype(f"U{CLIENT_KEY_WIDTH}").tolist())
        return list(zip(*columns))


_POWERS_OF_TEN = 10 ** np.arange(11, -1, -1, dtype=np.int64)


class EventGenerator:
    """Produces the event stream of one worker, batch by batch, from any position."""

    def __init__(self, seed: int, worker_index: int, devices: int):
        self.devices = devices
        self.worker_index = worker_index
        self._key = np.uint64((((seed << 24) ^ worker_index) * int(_MIX1)) & 0xFFFF_FFFF_FFFF_FFFF)
        device_hash = _splitmix64(np.arange(devices, dtype=np.uint64) ^ self._key)
        # Each device has its own base temperature between 15 and 25 degrees.
        self._per_device = (np.arange(devices, dtype=np.int64), device_ids(worker_index, devices),
                            15.0 + 10.0 * _unit_interval(device_hash))
        self._cycles: tuple[np.ndarray, ...] = ()

    def batch(self, start: int, count: int) -> EventBatch:
        positions = np.arange(start, start + count, dtype=np.int64)
        # Devices take turns, so a batch's per-device columns are a slice of those columns repeated:
        # views instead of a modulo and three gathers per batch.
        offset = start % self.devices
        device_index, device_id, device_base = (cycle[offset : offset + count] for cycle in self._repeated(count))
        temperature = _unit_interval(_splitmix64(positions.view(np.uint64) ^ self._key))
        temperature -= 0.5  # in place, the same operations as round(base + 10 * (noise - 0.5), 2)
        temperature *= 10.0
        temperature += device_base
        np.round(temperature, 2, out=temperature)
        timestamp_ms = positions * EVENT_INTERVAL_MS
        timestamp_ms += TIME_ORIGIN_MS
        return EventBatch(
            timestamp_ms=timestamp_ms,
            device_index=device_index,
            device_id=device_id,
            sequence_number=positions,
            temperature=temperature,
        )

    def _repeated(self, count: int) -> tuple[np.ndarray, ...]:
        """The per-device columns repeated to cover any `count` consecutive positions (read-only)."""
        if not self._cycles or len(self._cycles[0]) < self.devices + count:
            repeats = -(-(self.devices + count) // self.devices)
            self._cycles = tuple(np.tile(column, repeats) for column in self._per_device)
            for cycle in self._cycles:
                cycle.flags.writeable = False
        return self._cycles

    def batches(self, start: int, total: int, size: int):
        """Yield batches covering positions [start, start + total)."""
        end = start + total
        for first in range(start, end, size):
            yield self.batch(first, min(size, end - first))


def _unit_interval(hashes: np.ndarray) -> np.ndarray:
    """Map 64-bit hashes to floats in [0, 1) using their top 53 bits (overwrites `hashes`)."""
    np.right_shift(hashes, _SHIFT_53, out=hashes)
    unit = hashes.astype(np.float64)
    unit *= 1.0 / (1 << 53)
    return unit
