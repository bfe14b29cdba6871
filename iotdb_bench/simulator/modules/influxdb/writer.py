"""The influxdb module's write path: line protocol built outside the timed call (the next batch's while
the server works on the current one), one synchronous write call per batch or per event (it returns
once the server acknowledged)."""

from __future__ import annotations

from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.modules.base import Role, WriterRole
from iotdb_bench.simulator.modules.influxdb import points
from iotdb_bench.simulator.wire import text_rows


class InfluxWriter(Role, WriterRole):
    def prepare_batch(self, batch: EventBatch) -> bytes:
        return text_rows.compact(points.lines(self.layout, self.spec.table_names, batch))

    def insert_batch(self, prepared: bytes) -> None:
        self.module.connection.write_lines(prepared, self.hooks.while_waiting)

    def prepare_single(self, batch: EventBatch) -> list[bytes]:
        return text_rows.compact(points.lines(self.layout, self.spec.table_names, batch)).splitlines()

    def insert_single(self, item: bytes) -> None:
        self.module.connection.write_lines(item)
