"""The influxdb module's write path: one synchronous write call per batch or per event (it returns once
the server acknowledged); the next batch's line protocol is built once the current one's write is on
the wire. TSBS's rows are written as TSBS's influx target writes them (simulator/wire/tsbs_lines.py)."""

from __future__ import annotations

import functools

from iotdb_bench.simulator.modules.base import WriterRole
from iotdb_bench.simulator.modules.influxdb import points
from iotdb_bench.simulator.modules.influxdb.options import InfluxRole
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.wire.tsbs_lines import TsbsLines
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs import USE_CASES


class InfluxWriter(InfluxRole, WriterRole):
    @functools.cached_property
    def _tsbs_lines(self) -> TsbsLines:
        """TSBS's shapes: the influx target's line protocol, every entity's tags made once (on the first batch)."""
        return TsbsLines(USE_CASES[self.spec.shape], self.spec.seed, self.spec.all_devices)

    def prepare_batch(self, batch: EventBatch) -> bytes:
        if self.spec.tsbs:
            return self._tsbs_lines.lines(batch)
        return text_rows.compact(points.lines(self.layout, self.spec.table_names, batch))

    def insert_batch(self, prepared: bytes) -> None:
        self.module.connection.write_lines(prepared, self.hooks.while_waiting)

    def prepare_single(self, batch: EventBatch) -> list[bytes]:
        return self.prepare_batch(batch).splitlines()

    def insert_single(self, item: bytes) -> None:
        self.module.connection.write_lines(item)
