"""The reference clients' events: devices take turns, one event per millisecond of each worker's
stream from 2026-01-01, temperatures of two decimals around 21 degrees (NumPy's generator)."""

from __future__ import annotations

import numpy as np

ORIGIN_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DEVICES = 10


class Events:
    def __init__(self, worker: int, batch: int):
        self.batch = batch
        self.devices = np.array([f"r{worker:06d}-d{d:06d}" for d in range(DEVICES)])
        self.random = np.random.default_rng(worker)

    def columns(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(timestamps ms, device index, sequence numbers, temperatures) of batch `index`."""
        positions = np.arange(index * self.batch, (index + 1) * self.batch, dtype=np.int64)
        return ORIGIN_MS + positions, positions % DEVICES, positions, np.round(self.random.normal(21.0, 3.0, self.batch), 2)
