"""What TSBS's IoT generator does to the trucks' rows (its pkg/data/usecases/iot/simulator.go and
batch_config.go): it leaves some out, sends some late, and writes some with a null field or tag.

TSBS goes through its stream (readings of every truck, then diagnostics of every truck, step after
step: position p = (2 x step + measurement) x trucks + truck) in batches of ten, and draws per
batch and per entry:
- a batch is missing (1%): its ten rows are never written;
- an entry is missing (10% of the draws; rows it skips shift the draws, so 9.05% of the rows);
- a batch is held back (5%) and sent later in one go, when a later batch draws to send it (50%
  each): TSBS's "trucks offline for a while that send their backlog";
- an entry is held back (30% of the draws) and sent a few entries later;
- an entry has one field null (10% of the draws) or one tag null (1%).

Measured on TSBS's own output (100 trucks, a day, seeds 1-4, and a port of its batch logic): 90.04% of
the rows are written, 9.0% have a null field, 0.9% a null tag, and 19% arrive after a row of a later
position: 16.1% held entries, a median of 11 positions behind (90%: 27, 99%: 49), and 5.1% in held
batches, of which 58% arrive behind, up to about 90 positions.

Here every decision is a pure function of the seed and the row's position (hashed), with TSBS's
measured shares and lateness, so the generator (each worker its own trucks) and the checker agree on
which rows exist and which fields are null without talking, whatever the worker count. The rows
written are TSBS's in distribution, not its exact sample (its draws are one sequence over the whole
stream): `tests/unit/test_tsbs_iot.py` holds TSBS's counts for several seeds beside the tool's.
"""

from __future__ import annotations

import functools

import numpy as np

from iotdb_bench.simulator.workload.events import GOLDEN, splitmix64, unit_interval
from iotdb_bench.simulator.workload.tsbs.walks import BLOCK_ELEMENTS

TSBS_BATCH = 10
BATCH_MISSING = 0.01
ENTRY_MISSING = 0.090465  # so that 0.99 x (1 - it) = 0.90044, TSBS's measured share of rows written
NULL_FIELD = 0.09005
NULL_TAG = 0.00905
MAX_FIELDS = 7  # TSBS draws the null field among the most fields an entry has, modulo the entry's own
TAG_COUNT = 8
LATE_BATCH = 0.03  # held back and sent at least a batch later (TSBS: 5% held, 58% of them behind)
LATE_BATCH_MORE = 0.55  # the chance a held batch waits one more batch
LATE_ENTRY = 0.17  # of the rows outside late batches: 16.1% of all rows
LATE_ENTRY_MIN, LATE_ENTRY_MEAN = 4, 10.1  # positions: 4 + an exponential of mean 10.1 (TSBS: median 11, 90% 27, 99% 49)
_SALTS = {"batch_missing": 0x5BD1E9955BD1E995, "entry_missing": 0xC2B2AE3D27D4EB4F, "null_field": 0x165667B19E3779F9,
              "null_tag": 0x27D4EB2F165667C5, "late_batch": 0xFF51AFD7ED558CCD, "late_entry": 0xC4CEB9FE1A85EC53}


class IotRows:
    """The decisions of one run's data (seed, trucks) for rows at any global positions (int64)."""

    def __init__(self, seed: int, trucks: int):
        self.trucks = trucks
        self._keys = {name: np.uint64((seed * int(GOLDEN) ^ salt) & 0xFFFF_FFFF_FFFF_FFFF) for name, salt in _SALTS.items()}

    def position(self, step: np.ndarray, measurement: np.ndarray | int, truck: np.ndarray) -> np.ndarray:
        return (step * 2 + measurement) * self.trucks + truck

    def _hash(self, name: str, numbers: np.ndarray) -> np.ndarray:
        return splitmix64(numbers.astype(np.uint64) * GOLDEN + self._keys[name])

    def _below(self, name: str, numbers: np.ndarray, chance: float) -> np.ndarray:
        return unit_interval(self._hash(name, numbers)) < chance

    def exists(self, position: np.ndarray) -> np.ndarray:
        """Whether TSBS writes the row at each position."""
        return ~self._below("batch_missing", position // TSBS_BATCH, BATCH_MISSING) & ~self._below("entry_missing", position, ENTRY_MISSING)

    def null_field(self, position: np.ndarray, fields: int) -> np.ndarray:
        """The field each row writes as null (-1: none), for rows of `fields` fields."""
        hashes = self._hash("null_field", position)
        chosen = (hashes >> np.uint64(32)) % np.uint64(MAX_FIELDS) % np.uint64(fields)
        return np.where(unit_interval(hashes) < NULL_FIELD, chosen.astype(np.int64), -1)

    def null_tag(self, position: np.ndarray) -> np.ndarray:
        """The tag each row writes as null (-1: none; 0: its name, which ties it to no truck)."""
        hashes = self._hash("null_tag", position)
        chosen = ((hashes >> np.uint64(32)) % np.uint64(TAG_COUNT)).astype(np.int64)
        return np.where(unit_interval(hashes) < NULL_TAG, chosen, -1)

    def places(self, position: np.ndarray) -> np.ndarray:
        """Where each row is sent in the stream: 2p in its place, 2q + 1 right after position q when
        late. A late batch goes whole, after the last row of a batch one or more batches later; a late
        entry 4 or more positions after its own."""
        batch = position // TSBS_BATCH
        batch_hashes = self._hash("late_batch", batch)
        late_batch = unit_interval(batch_hashes.copy()) < LATE_BATCH
        # Batches it waits: 1 + a geometric number (each further batch with LATE_BATCH_MORE).
        more = np.floor(np.log(unit_interval(splitmix64(batch_hashes)) + 1e-300) / np.log(LATE_BATCH_MORE)).astype(np.int64)
        entry_hashes = self._hash("late_entry", position)
        late_entry = ~late_batch & (unit_interval(entry_hashes.copy()) < LATE_ENTRY)
        delay = LATE_ENTRY_MIN + np.floor(-np.log(1.0 - unit_interval(splitmix64(entry_hashes))) * LATE_ENTRY_MEAN).astype(np.int64)
        places = 2 * position
        places[late_entry] = 2 * (position[late_entry] + delay[late_entry]) + 1
        places[late_batch] = 2 * ((batch[late_batch] + 2 + more[late_batch]) * TSBS_BATCH - 1) + 1
        return places


@functools.lru_cache(maxsize=64)
def rows_written(seed: int, trucks: int, steps: range, truck_range: range) -> tuple[int, int]:
    """(readings, diagnostics) rows written for these trucks over these steps: counted, block by
    block (bounded memory), once per process for the same arguments."""
    rows = IotRows(seed, trucks)
    counts = [0, 0]
    chosen = np.arange(truck_range.start, truck_range.stop, dtype=np.int64)
    per_block = max(1, BLOCK_ELEMENTS // max(1, len(chosen)))
    for first in range(steps.start, steps.stop, per_block):
        step = np.arange(first, min(first + per_block, steps.stop), dtype=np.int64)[:, None]
        for measurement in (0, 1):
            counts[measurement] += int(np.count_nonzero(rows.exists(rows.position(step, measurement, chosen[None, :]))))
    return counts[0], counts[1]
