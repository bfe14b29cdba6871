"""TSBS's cpu rows as line protocol, as its `influx`, `victoriametrics` and `questdb` targets write them
(pkg/targets/influx/serializer.go, pkg/targets/questdb/serializer.go): `cpu,hostname=host_0,region=...,
<the ten tags> usage_user=58i,...,usage_guest_nice=38i <time>` with the fields as integers (TSBS's cpu
values are int64: the `i` suffix); times in milliseconds for InfluxDB and VictoriaMetrics (their writes
ask for precision ms), in nanoseconds for QuestDB (TSBS's unit, which its ILP takes without a suffix).

Each host's measurement-and-tags head is made once, when the writer is built; a batch's text is then
the heads of its rows' hosts beside their fields and times, built with NumPy (text_rows). The ten
fields are one block: each field's `,name=` right-aligned in the longest one's width, its digits and
`i`, the padding zero bytes that compact() drops; one copy of a template and one of the digits per
batch instead of thirty columns.
"""

from __future__ import annotations

import functools

import numpy as np

from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

MEASUREMENT = "cpu"
# Each field's text before its digits: the first after the tags' space, the others after a comma.
_NAMES = [(" " if position == 0 else ",") + f"{name}=" for position, name in enumerate(CPU_FIELDS)]
_NAME_WIDTH = max(len(name) for name in _NAMES)


class CpuLines:
    """The line protocol of TSBS's cpu rows of a run's hosts (host_0..host_{hosts-1} of `seed`); a
    row's time is its epoch milliseconds times `time_factor`."""

    def __init__(self, seed: int, hosts: int, time_factor: int = 1):
        # TSBS's value sets hold no character that line protocol escapes (space, comma, equals sign).
        heads = [MEASUREMENT + "".join(f",{name}={value}" for name, value in zip(TAG_NAMES, tags)) for tags in host_tags(seed, 0, hosts)]
        self._heads = np.array([head.encode() for head in heads])  # S<longest>, NUL-padded
        self._time_factor = time_factor

    def lines(self, batch: EventBatch) -> bytes:
        """One line per row of the batch, in its order."""
        if batch.host is None or batch.more is None:
            raise ValueError("TSBS's line protocol is made of TSBS's cpu rows, which name their host")
        count = len(batch)
        # whole numbers (simulator/workload/tsbs/usecases.py): the ten fields of each row side by side
        values = np.vstack((batch.temperature, batch.more)).T.astype(np.int64, order="C")
        digits = text_rows.integers(values)  # (rows, fields, digits)
        template = _field_template(digits.shape[-1])
        fields = np.empty((count, *template.shape), dtype=np.uint8)
        fields[:] = template
        fields[:, :, _NAME_WIDTH : _NAME_WIDTH + digits.shape[-1]] = digits
        columns = [text_rows.fixed(self._heads[batch.host]), fields.reshape(count, -1), text_rows.constant(" "),
                   text_rows.integers(batch.timestamp_ms * self._time_factor), text_rows.constant("\n")]
        return text_rows.compact(text_rows.text_rows(columns, count))


@functools.cache
def _field_template(width: int) -> np.ndarray:
    """(fields, name width + digits + 1): each field's `,name=` right-aligned, room for `width` digits, `i`."""
    template = np.zeros((len(_NAMES), _NAME_WIDTH + width + 1), dtype=np.uint8)
    for row, name in zip(template, _NAMES):
        row[_NAME_WIDTH - len(name) : _NAME_WIDTH] = np.frombuffer(name.encode(), dtype=np.uint8)
    template[:, -1] = ord("i")
    return template
