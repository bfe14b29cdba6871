"""PostgreSQL's binary COPY format, built for a whole batch with one NumPy structured array.

Used by the postgres family and by the null target, which encodes exactly as PostgreSQL's module does
so that it measures the same client work.
"""

from __future__ import annotations

import numpy as np

from simulator.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, EventBatch

_PG_EPOCH_MS = 946_684_800_000  # 2000-01-01, the origin of PostgreSQL's binary timestamps
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
_COPY_TRAILER = (-1).to_bytes(2, "big", signed=True)


class CopyRowEncoder:
    """Encodes batches into PostgreSQL's binary COPY format with one NumPy structured array.

    Device ids and client keys are fixed width, so every row has the same layout: the constant
    parts (field count and lengths) are written once into a template, only the values change.
    """

    def __init__(self, with_key: bool):
        fields: list[tuple[str, str]] = [("field_count", ">i2")]
        self._constants: dict[str, int] = {"field_count": 4 + int(with_key)}
        values = [("timestamp", ">i8"), ("device_id", f"S{DEVICE_ID_WIDTH}"), ("sequence_number", ">i8"), ("temperature", ">f8")]
        if with_key:
            values.append(("id", f"S{CLIENT_KEY_WIDTH}"))
        for name, kind in values:
            fields += [(f"{name}_length", ">i4"), (name, kind)]
            self._constants[f"{name}_length"] = np.dtype(kind).itemsize
        self._dtype = np.dtype(fields)
        self._with_key = with_key
        self._template = np.zeros(0, dtype=self._dtype)

    def encode(self, batch: EventBatch) -> bytes:
        rows = self._rows(len(batch))
        rows["timestamp"] = (batch.timestamp_ms - _PG_EPOCH_MS) * 1000
        rows["device_id"] = batch.device_id
        rows["sequence_number"] = batch.sequence_number
        rows["temperature"] = batch.temperature
        if self._with_key:
            rows["id"] = batch.client_key
        return b"".join((_COPY_HEADER, rows.tobytes(), _COPY_TRAILER))

    def _rows(self, count: int) -> np.ndarray:
        if len(self._template) < count:
            self._template = np.zeros(count, dtype=self._dtype)
            for name, value in self._constants.items():
                self._template[name] = value
        return self._template[:count]
