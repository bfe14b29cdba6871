"""The visibility probe of `--visibility`: during the timed phase, the collector writes marker
events one at a time through the module's insert path (a connection of its own) and queries after
each until the database shows it, then writes the next.

Lag = from the start of the marker's write to the start of the first query that saw it: what a
reader of the data waits for after a device sent it. Databases that acknowledge before the data is
queryable (Elasticsearch's refresh interval) show it here; the others show about one write call.
Markers are ordinary events of a device no worker has (worker index PROBE_INDEX): the count check
counts every acknowledged marker in.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.measurement.query_latency import record_seconds
from iotdb_bench.simulator.measurement.stats import latency_of, new_histogram
from iotdb_bench.simulator.measurement.timing import CallTimer
from iotdb_bench.simulator.modules import DatabaseModule, module_class
from iotdb_bench.simulator.report import VisibilityLag
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload import shapes
from iotdb_bench.simulator.workload.events import EventBatch

log = logging.getLogger("visibility")

PROBE_INDEX = 999_999  # device ids "w999999-d000000": above any worker index (at most 1024)
POLL_S = 0.005  # pause between two queries for the same marker
BETWEEN_MARKERS_S = 0.1
LIMIT_S = 30.0  # a marker not seen within this counts as unseen; the next is written
AFTER_STOP_S = 5.0  # once the inserts stopped, the last marker is waited for this long at most


class VisibilityProbe(threading.Thread):
    def __init__(self, spec: RunSpec, start_at: float, active: Callable[[], bool] = lambda: True):
        """`active`: false once the run has failed (the probe then stops writing at once)."""
        super().__init__(daemon=True, name="visibility-probe")
        self.spec, self.start_at, self.active = spec, start_at, active
        self.stop = threading.Event()
        self.markers = self.seen = self.unseen = 0
        self.error: str | None = None
        self._lag, self._acknowledged = new_histogram(), new_histogram()
        marker_spec = spec.model_copy(update={"devices": 0, "devices_per_worker": 1, "out_of_order": 0.0, "order": "round-robin"})
        self._generator = shapes.generator(marker_spec, PROBE_INDEX)
        self.timer = CallTimer()

    def run(self) -> None:
        module = None
        try:
            module = module_class(self.spec.module)(self.spec)
            module.connect()
            end = self.start_at + self.spec.duration_s if self.spec.duration_s else float("inf")
            if self.stop.wait(max(self.start_at - time.time(), 0.0)):
                return
            while not self.stop.is_set() and time.time() < end and self.active():
                self._probe(module, self._generator.batch(self.markers, 1))
                self.stop.wait(BETWEEN_MARKERS_S)
        except Exception as error:  # reported with the figures; the run itself goes on
            self.error = one_line(error)
            log.warning("visibility probe stopped: %s", self.error)
        finally:
            if module is not None:
                module.close()

    def _probe(self, module: DatabaseModule, marker: EventBatch) -> None:
        timer = self.timer
        _, written = timer.call(lambda: module.writer.write_marker(marker))
        self.markers += 1
        record_seconds(self._acknowledged, written.service_s)
        while True:
            visible, look = timer.call(lambda: module.reader.marker_visible(marker))
            if visible:
                self.seen += 1
                record_seconds(self._lag, look.began - written.began)
                return
            if look.began - written.began > (AFTER_STOP_S if self.stop.is_set() else LIMIT_S) or not self.active():
                self.unseen += 1
                return
            time.sleep(POLL_S)

    def figures(self) -> VisibilityLag:
        return VisibilityLag(
            markers=self.markers, seen=self.seen, unseen=self.unseen,
            lag=latency_of(self._lag) if self.seen else None,
            acknowledged=latency_of(self._acknowledged) if self.markers else None,
            poll_s=POLL_S, limit_s=LIMIT_S, error=self.error,
        )
