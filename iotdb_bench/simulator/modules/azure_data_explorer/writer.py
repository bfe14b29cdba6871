"""The azure_data_explorer module's write path: a batch is gzipped header-less CSV per table, handed
to the queued or streaming ingest client; a single insert is a batch of one event."""

from __future__ import annotations

import gzip
import io
from typing import Any

import numpy as np

from iotdb_bench.simulator.modules.azure_data_explorer.options import AdxRole
from iotdb_bench.simulator.modules.base import WriterRole
from iotdb_bench.simulator.workload.events import EventBatch

# Per table: (table, gzipped CSV, its size uncompressed).
Blobs = list[tuple[str, bytes, int]]


class AdxWriter(AdxRole, WriterRole):
    def prepare_batch(self, batch: EventBatch) -> Blobs:
        prepared = []
        for table, part in self.per_table(batch):
            csv = self._csv(part)
            prepared.append((table, gzip.compress(csv, compresslevel=1), len(csv)))
        return prepared

    def insert_batch(self, prepared: Blobs) -> None:
        from azure.kusto.ingest import StreamDescriptor

        for table, compressed, size in prepared:
            descriptor = StreamDescriptor(io.BytesIO(compressed), is_compressed=True, size=size)
            self.module.ingest.ingest_from_stream(descriptor, self.module.ingestion_properties[table])

    def prepare_single(self, batch: EventBatch) -> list[Blobs]:
        return [self.prepare_batch(batch.select(slice(i, i + 1))) for i in range(len(batch))]

    def _csv(self, batch: EventBatch) -> bytes:
        """Header-less CSV rows in the table's column order; ids and texts are generated, so nothing needs quoting."""
        rows = self.layout.python_rows(batch, timestamp=_iso_times)
        return "".join(",".join(map(_csv_value, row)) + "\n" for row in rows).encode()

    def insert_single(self, item: Blobs) -> None:
        self.insert_batch(item)


def _iso_times(timestamp_ms: np.ndarray) -> list[str]:
    times: list[str] = np.datetime_as_string(timestamp_ms.astype("datetime64[ms]"), timezone="UTC").tolist()
    return times


def _csv_value(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)
