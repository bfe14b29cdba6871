"""The berkeleydb module's read side: the six queries as cursor walks (walks.py), each bounded by the
query timeout, and seed 004's scans: with device-first keys a cursor walks one device's range in
time order; with time-first keys every device's scan walks the whole tree."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.base import Query, ReaderRole
from iotdb_bench.simulator.modules.berkeleydb.options import BerkeleydbRole
from iotdb_bench.simulator.modules.berkeleydb.walks import TreeWalks
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME
from iotdb_bench.simulator.wire import kv_records


class BerkeleydbReader(BerkeleydbRole, ReaderRole):
    def _walks(self) -> TreeWalks:
        """The walks over the events table as the environment holds it now (its stored key order)."""
        return TreeWalks(self.module.tables[SINGLE_TABLE_NAME], self.module.key_order, self.spec.query_timeout)

    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        return {
            "count-events": self._timed(lambda walks, deadline: walks.count_events(deadline)),
            "temperature-min-max": self._timed(lambda walks, deadline: walks.temperature_stats(deadline, with_avg=False)),
            "temperature-stats": self._timed(lambda walks, deadline: walks.temperature_stats(deadline, with_avg=True)),
            "temperature-stats-per-device": self._timed(lambda walks, deadline: walks.stats_per_device(deadline)),
            "newest-per-device": self._timed(lambda walks, deadline: walks.newest_per_device(deadline)),
            "device-downsample": self._timed(lambda walks, deadline: walks.downsample(deadline)),
        }

    def _timed(self, walk: Callable[[TreeWalks, float | None], list[tuple[Any, ...]]]) -> Query:
        def run() -> Answer:
            timeout = self.spec.query_timeout if self.spec.task == "query" else 0
            return Answer(walk(self._walks(), time.monotonic() + timeout if timeout else None))

        return run

    def scan_reads_whole_table(self) -> bool:
        return self.options.key_order == "time"  # a walk over the whole tree for each device (`scan`)

    def scan_devices(self) -> list[str]:
        walks = self._walks()
        if walks.key_order == "device":
            return sorted(device.decode() for device in walks.last_record_per_device(None))
        found: set[bytes] = set()
        for keys, _ in walks.chunks(None):
            found.update(np.unique(kv_records.decode_keys(keys, walks.layout)["device_id"]).tolist())
        return sorted(device.decode() for device in found)

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        """Device-first keys: a cursor from the device's first key to its last, in time order. Time-first
        keys: a walk over the whole tree, keeping the device's records."""
        key_order = self.module.key_order
        layout = kv_records.key_layout(key_order)
        wanted = device.encode()
        cursor = self.module.tables[SINGLE_TABLE_NAME].cursor()
        try:
            keys: list[bytes] = []
            record = cursor.set_range(kv_records.seek_key(wanted, 0, layout))
            while record is not None:
                if key_order == "device" and not record[0].startswith(wanted):
                    break
                keys.append(record[0])
                if len(keys) >= page_size:
                    yield _times_of(keys, layout, wanted, key_order)
                    keys = []
                record = cursor.next()
            if keys:
                yield _times_of(keys, layout, wanted, key_order)
        finally:
            cursor.close()


def _times_of(keys: list[bytes], layout: np.dtype, device: bytes, key_order: str) -> np.ndarray:
    decoded = kv_records.decode_keys(keys, layout)
    times = decoded["timestamp"].astype(np.int64)
    return times if key_order == "device" else times[decoded["device_id"] == device]
