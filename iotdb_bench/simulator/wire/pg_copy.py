"""PostgreSQL's binary COPY format, built for a whole batch with one NumPy structured array.

Used by the postgres family and by the null target, which encodes exactly as PostgreSQL's module does
so that it measures the same client work.
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch
from iotdb_bench.simulator.shapes import Layout

_PG_EPOCH_MS = 946_684_800_000  # 2000-01-01, the origin of PostgreSQL's binary timestamps
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
_COPY_TRAILER = (-1).to_bytes(2, "big", signed=True)
# The binary representation of each kind of column (simulator/shapes.py).
_BINARY = {"timestamp": ">i8", "device": f"S{DEVICE_ID_WIDTH}", "sensor": ">i2", "sequence": ">i8", "float": ">f8",
           "int16": ">i2", "int32": ">i4", "text": f"S{TEXT_WIDTH}"}


class CopyRowEncoder:
    """Encodes batches into PostgreSQL's binary COPY format with one NumPy structured array.

    Device ids and client keys are fixed width, so every row has the same layout: the constant
    parts (field count and lengths) are written once into a template, only the values change. A
    variable text (the large shape) is written at full width with its real length, and the padding
    is cut out of the whole buffer at the end."""

    def __init__(self, layout: Layout, with_key: bool):
        fields: list[tuple[str, str]] = [("field_count", ">i2")]
        self._columns = layout.columns
        self._constants: dict[str, int] = {"field_count": len(layout.columns) + int(with_key)}
        values = [(column.name, _BINARY[column.kind]) for column in layout.columns]
        if with_key:
            values.append(("id", f"S{CLIENT_KEY_WIDTH}"))
        for name, kind in values:
            fields += [(f"{name}_length", ">i4"), (name, kind)]
            self._constants[f"{name}_length"] = np.dtype(kind).itemsize
        self._text = next((column.name for column in layout.columns if column.kind == "text"), None)
        if self._text:
            del self._constants[f"{self._text}_length"]  # each row's own
        self._dtype = np.dtype(fields)
        self._with_key = with_key
        self._template = np.zeros(0, dtype=self._dtype)

    def encode(self, batch: EventBatch) -> bytes:
        rows = self._filled(batch)
        if self._text:
            return b"".join((_COPY_HEADER, self._without_padding(rows, batch), _COPY_TRAILER))
        return b"".join((_COPY_HEADER, rows.tobytes(), _COPY_TRAILER))

    def encode_split(self, chunk: EventBatch, size: int) -> list[bytes]:
        """One COPY buffer per batch of `size` events of the chunk (EventBatch.split), the rows of all
        of them filled in one pass: a NumPy call per column for the chunk, not per batch."""
        if self._text:  # rows of variable length: batch by batch
            return [self.encode(batch) for batch in chunk.split(size)]
        raw = self._filled(chunk).tobytes()
        step = size * self._dtype.itemsize
        return [b"".join((_COPY_HEADER, raw[first : first + step], _COPY_TRAILER)) for first in range(0, len(raw), step)]

    def prepared_for_one_table(self, table: str, chunk: EventBatch, size: int) -> list[list[tuple[str, bytes]]]:
        """`encode_split` in the writers' prepared form: per batch, its one (table, COPY buffer)."""
        return [[(table, buffer)] for buffer in self.encode_split(chunk, size)]

    def _filled(self, batch: EventBatch) -> np.ndarray:
        """The template's first rows with the batch's values written in."""
        rows = self._rows(len(batch))
        for column in self._columns:
            if column.kind == "timestamp":
                rows[column.name] = (batch.timestamp_ms - _PG_EPOCH_MS) * 1000
            else:
                rows[column.name] = column.values(batch)
        if self._with_key:
            rows["id"] = batch.client_key
        return rows

    def _without_padding(self, rows: np.ndarray, batch: EventBatch) -> bytes:
        text = batch.text.view(np.uint8).reshape(len(batch), TEXT_WIDTH)
        lengths = np.count_nonzero(text, axis=1)  # the generator's text has no NUL inside
        rows[f"{self._text}_length"] = lengths
        raw = rows.view(np.uint8).reshape(len(batch), self._dtype.itemsize)
        keep = np.ones(raw.shape, dtype=bool)
        offset = self._dtype.fields[self._text][1]
        keep[:, offset : offset + TEXT_WIDTH] = np.arange(TEXT_WIDTH) < lengths[:, None]
        return raw[keep].tobytes()

    def _rows(self, count: int) -> np.ndarray:
        if len(self._template) < count:
            self._template = np.zeros(count, dtype=self._dtype)
            for name, value in self._constants.items():
                self._template[name] = value
        return self._template[:count]
