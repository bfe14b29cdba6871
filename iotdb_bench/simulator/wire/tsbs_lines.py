"""TSBS's cpu rows as InfluxDB line protocol, as its `influx` and `victoriametrics` targets write them
(pkg/targets/influx/serializer.go): `cpu,hostname=host_0,region=...,<the ten tags> usage_user=58i,...,
usage_guest_nice=38i <time>` with the fields as integers (TSBS's cpu values are int64: the `i`
suffix), times in milliseconds (the write asks for precision ms; TSBS writes nanoseconds).

Each host's measurement-and-tags prefix is made once, when the writer is built; a batch's text is
then the prefixes of its rows' hosts beside their fields and times, built with NumPy (text_rows).
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

MEASUREMENT = "cpu"


class CpuLines:
    """The line protocol of TSBS's cpu rows of a run's hosts (host_0..host_{hosts-1} of `seed`)."""

    def __init__(self, seed: int, hosts: int):
        # TSBS's value sets hold no character that line protocol escapes (space, comma, equals sign).
        prefixes = [MEASUREMENT + "".join(f",{name}={value}" for name, value in zip(TAG_NAMES, tags)) + " " for tags in host_tags(seed, 0, hosts)]
        self._prefixes = np.array([prefix.encode() for prefix in prefixes])  # S<longest>, NUL-padded

    def lines(self, batch: EventBatch) -> bytes:
        """One line per row of the batch, in its order."""
        if batch.host is None:
            raise ValueError("TSBS's line protocol is made of TSBS's rows, which name their host")
        columns = [text_rows.fixed(self._prefixes[batch.host])]
        for position, name in enumerate(CPU_FIELDS):
            values = batch.measurement(position).astype(np.int64)  # whole numbers (simulator/workload/tsbs/usecases.py)
            columns += [text_rows.constant(("" if position == 0 else ",") + f"{name}="), text_rows.integers(values), text_rows.constant("i")]
        columns += [text_rows.constant(" "), text_rows.integers(batch.timestamp_ms), text_rows.constant("\n")]
        return text_rows.compact(text_rows.text_rows(columns, len(batch)))
