"""The timescaledb module's write path: PostgreSQL's, with each --steps step's timestamps restarted at
the origin when `restart_timestamps_each_step` asks for it (the seed tool's fill-level observation)."""

from __future__ import annotations

import dataclasses
from typing import Any

from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError
from iotdb_bench.simulator.modules.postgres.writer import PostgresWriter, Row
from iotdb_bench.simulator.modules.timescaledb.options import TimescaleOptions
from iotdb_bench.simulator.workload.events import EVENT_INTERVAL_MS, EventBatch


class TimescaleWriter(PostgresWriter):
    options: TimescaleOptions

    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        if self.options.restart_timestamps_each_step and self.spec.tsbs:
            raise ModuleError(f"restart_timestamps_each_step applies to the tool's events: the --steps of --schema {self.spec.shape} "
                              "continue its time range, as TSBS's data goes on")
        # Each step's stream starts `stream_offset` events in; shifting by that much restarts its clock.
        self._timestamp_shift_ms = self.spec.stream_offset * EVENT_INTERVAL_MS if self.options.restart_timestamps_each_step else 0

    def stored_events(self, batch: EventBatch) -> EventBatch:
        return self._restarted(batch)

    def prepare_batch(self, batch: EventBatch) -> Any:
        return super().prepare_batch(self._restarted(batch))

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, Row]]:
        return super().prepare_single(self._restarted(batch))

    def _restarted(self, batch: EventBatch) -> EventBatch:
        if not self._timestamp_shift_ms:
            return batch
        return dataclasses.replace(batch, timestamp_ms=batch.timestamp_ms - self._timestamp_shift_ms)
