"""Cursor walks over the `events` B-tree, aggregated in the client (NumPy over chunks of records):
BerkeleyDB has no query language. Each walk computes one query's rows in the common answer form."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.wire import kv_records
from iotdb_bench.simulator.wire.kv_records import KeyOrder

WALK_CHUNK = 10_000  # records decoded at a time by the query walks


class TreeWalks:
    """The walks over one B-tree (`table`, a DB handle) whose keys are in `key_order`; a walk given a
    deadline (time.monotonic()) stops with a TimeoutError naming `timeout` once it has passed."""

    def __init__(self, table: Any, key_order: KeyOrder, timeout: float):
        self.table, self.key_order, self.timeout = table, key_order, timeout
        self.layout = kv_records.key_layout(key_order)

    def chunks(self, deadline: float | None, first: bytes | None = None) -> Iterator[tuple[list[bytes], list[bytes]]]:
        """The records in key order (from the first key at or after `first`), WALK_CHUNK (keys, values) at a time."""
        cursor = self.table.cursor()
        try:
            keys: list[bytes] = []
            values: list[bytes] = []
            step, add_key, add_value = cursor.next, keys.append, values.append
            record = cursor.first() if first is None else cursor.set_range(first)
            while record is not None:
                add_key(record[0])
                add_value(record[1])
                if len(keys) == WALK_CHUNK:
                    yield keys, values
                    self._check(deadline)
                    keys.clear()
                    values.clear()
                record = step()
            if keys:
                yield keys, values
        finally:
            cursor.close()

    def _check(self, deadline: float | None) -> None:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"query timed out after {self.timeout:g} s")

    def count_events(self, deadline: float | None) -> list[tuple[Any, ...]]:
        return [(sum(len(keys) for keys, _ in self.chunks(deadline)),)]

    def temperature_stats(self, deadline: float | None, with_avg: bool) -> list[tuple[Any, ...]]:
        low, high, total, count = np.inf, -np.inf, 0.0, 0
        for _, values in self.chunks(deadline):
            temperature = kv_records.decode_values(values)["temperature"]
            low, high = min(low, temperature.min()), max(high, temperature.max())
            count += len(temperature)
            if with_avg:
                total += float(temperature.sum())
        if not count:
            return []
        return [(float(low), total / count, float(high))] if with_avg else [(float(low), float(high))]

    def stats_per_device(self, deadline: float | None) -> list[tuple[Any, ...]]:
        per_device: dict[bytes, list[float]] = {}  # device -> [min, max, sum, count]
        for keys, values in self.chunks(deadline):
            devices, which = np.unique(kv_records.decode_keys(keys, self.layout)["device_id"], return_inverse=True)
            temperature = kv_records.decode_values(values)["temperature"]
            low, high = np.full(len(devices), np.inf), np.full(len(devices), -np.inf)
            np.minimum.at(low, which, temperature)
            np.maximum.at(high, which, temperature)
            sums, counts = np.bincount(which, temperature, len(devices)), np.bincount(which, minlength=len(devices))
            for device, *figures in zip(devices.tolist(), low.tolist(), high.tolist(), sums.tolist(), counts.tolist()):
                known = per_device.setdefault(device, [np.inf, -np.inf, 0.0, 0])
                known[0], known[1] = min(known[0], figures[0]), max(known[1], figures[1])
                known[2] += figures[2]
                known[3] += figures[3]
        return [(device.decode(), low, total / count, high) for device, (low, high, total, count) in per_device.items()]

    def newest_per_device(self, deadline: float | None) -> list[tuple[Any, ...]]:
        newest: dict[bytes, tuple[int, float]]
        if self.key_order == "device":
            newest = self.last_record_per_device(deadline)
        else:
            newest = {}
            for keys, values in self.chunks(deadline):  # time order: a device's last record in the walk is its newest
                decoded = kv_records.decode_keys(keys, self.layout)
                devices, from_end = np.unique(decoded["device_id"][::-1], return_index=True)
                last = len(keys) - 1 - from_end
                temperature = kv_records.decode_values(values)["temperature"][last]
                newest.update(zip(devices.tolist(), zip(decoded["timestamp"][last].tolist(), temperature.tolist())))
        return [(device.decode(), timestamp, value) for device, (timestamp, value) in newest.items()]

    def last_record_per_device(self, deadline: float | None) -> dict[bytes, tuple[int, float]]:
        """Device-first keys: from each device's first record, set_range past its keys and step back
        once to its last (newest) record; one seek per device instead of a walk over every record."""
        layout = self.layout
        width = layout["device_id"].itemsize
        newest: dict[bytes, tuple[int, float]] = {}
        cursor = self.table.cursor()
        try:
            record = cursor.first()
            while record is not None:
                device = record[0][:width]
                following = cursor.set_range(kv_records.device_range_end(device, layout))
                last = cursor.prev() if following is not None else cursor.last()
                key = kv_records.decode_keys([last[0]], layout)[0]
                newest[device] = (int(key["timestamp"]), float(kv_records.decode_values([last[1]])["temperature"][0]))
                record = cursor.next() if following is not None else None
                self._check(deadline)
        finally:
            cursor.close()
        return newest

    def downsample(self, deadline: float | None) -> list[tuple[Any, ...]]:
        """The device's readings of the hour per minute: one seek to the hour (of the device, with
        device-first keys), then a walk until the hour (or the device's range) ends."""
        layout = self.layout
        end_ms = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS
        buckets: dict[int, list[float]] = {}  # minute -> [min, max, sum, count]
        for keys, values in self.chunks(deadline, first=kv_records.seek_key(DOWNSAMPLE_DEVICE.encode(), DOWNSAMPLE_START_MS, layout)):
            decoded = kv_records.decode_keys(keys, layout)
            inside = (decoded["timestamp"] < end_ms) & (decoded["device_id"] == DOWNSAMPLE_DEVICE.encode())
            temperature = kv_records.decode_values(values)["temperature"]
            for ms, value in zip(decoded["timestamp"][inside].tolist(), temperature[inside].tolist()):
                bucket = buckets.setdefault(ms - ms % MINUTE_MS, [value, value, 0.0, 0])
                bucket[0], bucket[1], bucket[2], bucket[3] = min(bucket[0], value), max(bucket[1], value), bucket[2] + value, bucket[3] + 1
            # Keys are sorted: once the chunk's last key is past the hour (or past the device), the walk is done.
            past_device = self.key_order == "device" and decoded["device_id"][-1] != DOWNSAMPLE_DEVICE.encode()
            if past_device or decoded["timestamp"][-1] >= end_ms:
                break
        return [(minute, low, total / count, high) for minute, (low, high, total, count) in sorted(buckets.items())]
