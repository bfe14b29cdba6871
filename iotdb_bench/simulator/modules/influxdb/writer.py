"""The influxdb module's write path: one synchronous write call per batch or per event (it returns once
the server acknowledged); the next batch's line protocol is built once the current one's write is on
the wire."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import WriterRole
from iotdb_bench.simulator.modules.influxdb import points
from iotdb_bench.simulator.modules.influxdb.options import InfluxRole
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch


class InfluxWriter(InfluxRole, WriterRole):
    def prepare_batch(self, batch: EventBatch) -> bytes:
        return text_rows.compact(points.lines(self.layout, self.spec.table_names, batch))

    def insert_batch(self, prepared: bytes) -> None:
        self.module.connection.write_lines(prepared, self.hooks.while_waiting)

    def prepare_single(self, batch: EventBatch) -> list[bytes]:
        return text_rows.compact(points.lines(self.layout, self.spec.table_names, batch)).splitlines()

    def insert_single(self, item: bytes) -> None:
        self.module.connection.write_lines(item)
