"""PostgreSQL's binary COPY format, built for a whole batch with one NumPy structured array.

Used by the postgres family and by the null target, which encodes exactly as PostgreSQL's module does
so that it measures the same client work.
"""

from __future__ import annotations

import sys

import numpy as np

from iotdb_bench.simulator.workload.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch
from iotdb_bench.simulator.workload.shapes import Layout
from iotdb_bench.simulator.workload.tsbs.generator import JSON_WIDTH

_PG_EPOCH_MS = 946_684_800_000  # 2000-01-01, the origin of PostgreSQL's binary timestamps
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
_COPY_TRAILER = (-1).to_bytes(2, "big", signed=True)
# Blocks of COPY buffers kept for re-use per layout: the one being sent and the one made meanwhile, and
# a spare for a retry in flight.
POOLED_BLOCKS = 3
# sys.getrefcount of a block no view refers to, inside `_idle_block`'s loop: the pool's list, the
# loop's variable and getrefcount's own argument.
_IDLE_REFERENCES = 3
# The binary representation of each kind of column (simulator/workload/shapes.py). JSONB's is a version
# byte (1, a constant of the template) before the text: TSBS's additional_tags, padded with spaces.
_BINARY = {"timestamp": ">i8", "device": f"S{DEVICE_ID_WIDTH}", "sensor": ">i2", "sequence": ">i8", "float": ">f8",
           "int16": ">i2", "int32": ">i4", "text": f"S{TEXT_WIDTH}", "reference": ">i4", "json": f"S{JSON_WIDTH}"}
_JSONB_VERSION = 1
_NULL_LENGTH = -1


class CopyRowEncoder:
    """Encodes batches into PostgreSQL's binary COPY format with one NumPy structured array.

    Device ids and client keys are fixed width, so every row has the same layout: the constant
    parts (field count and lengths) are written once into a template, only the values change. A
    variable text (the large shape) is written at full width with its real length, and the padding
    is cut out of the whole buffer at the end; so are the values of NULLs (TSBS's IoT rows: NaN
    fields, negative references), whose length is -1."""

    def __init__(self, layout: Layout, with_key: bool):
        fields: list[tuple[str, str]] = [("field_count", ">i2")]
        self._columns = layout.columns
        self._constants: dict[str, int] = {"field_count": len(layout.columns) + int(with_key)}
        values = [(column.name, _BINARY[column.kind]) for column in layout.columns]
        if with_key:
            values.append(("id", f"S{CLIENT_KEY_WIDTH}"))
        for name, kind in values:
            fields.append((f"{name}_length", ">i4"))
            if kind == _BINARY["json"]:
                fields.append((f"{name}_version", "u1"))
                self._constants[f"{name}_version"] = _JSONB_VERSION
            fields.append((name, kind))
            self._constants[f"{name}_length"] = np.dtype(kind).itemsize + (1 if kind == _BINARY["json"] else 0)
        self._text = next((column.name for column in layout.columns if column.kind == "text"), None)
        self._nullable = [column for column in layout.columns if column.nullable]
        if self._text:
            del self._constants[f"{self._text}_length"]  # each row's own
        self._dtype = np.dtype(fields)
        self._with_key = with_key
        self._template = np.zeros(0, dtype=self._dtype)
        self._blocks: dict[tuple[int, int], list[np.ndarray]] = {}

    def encode(self, batch: EventBatch) -> bytes:
        rows = self._filled(batch)
        nulls = {column.name: found for column in self._nullable if (found := column.nulls(batch)).any()}
        if self._text or nulls:
            return b"".join((_COPY_HEADER, self._variable(rows, batch, nulls), _COPY_TRAILER))
        return b"".join((_COPY_HEADER, rows.tobytes(), _COPY_TRAILER))

    def encode_split(self, chunk: EventBatch, size: int) -> list[bytes | memoryview]:
        """One COPY buffer per batch of `size` events of the chunk (EventBatch.split), the rows of all
        of them filled in one pass: a NumPy call per column for the chunk, not per batch. The buffers
        are views of one block laid out as they are sent (header, rows, trailer, header, ...) whose
        constants are in place: only the values are written, where the driver reads them. Blocks are
        reused once no view of theirs is left (`_idle_block`)."""
        whole, rest = divmod(len(chunk), size)
        if self._text or self._nullable or not whole:  # rows of variable length, or a single short batch: batch by batch
            return [self.encode(batch) for batch in chunk.split(size)]
        stride = self._buffer_bytes(size)
        block = self._idle_block(size, whole)
        rows = np.ndarray((whole, size), dtype=self._dtype, buffer=block, offset=len(_COPY_HEADER), strides=(stride, self._dtype.itemsize))
        self._fill(rows, chunk.select(slice(0, whole * size)) if rest else chunk, (whole, size))
        views = [memoryview(block)[first : first + stride] for first in range(0, whole * stride, stride)]
        if rest:
            views.append(memoryview(self.encode(chunk.select(slice(whole * size, None)))))
        return views

    def prepared_for_one_table(self, table: str, chunk: EventBatch, size: int) -> list[list[tuple[str, bytes | memoryview]]]:
        """`encode_split` in the writers' prepared form: per batch, its one (table, COPY buffer)."""
        return [[(table, buffer)] for buffer in self.encode_split(chunk, size)]

    def _filled(self, batch: EventBatch) -> np.ndarray:
        """The template's first rows with the batch's values written in."""
        rows = self._rows(len(batch))
        self._fill(rows, batch, (len(batch),))
        return rows

    def _fill(self, rows: np.ndarray, batch: EventBatch, shape: tuple[int, ...]) -> None:
        """Writes the batch's values into `rows` (of `shape`: the batch's events in order)."""
        for column in self._columns:
            if column.kind == "timestamp":
                rows[column.name] = ((batch.timestamp_ms - _PG_EPOCH_MS) * 1000).reshape(shape)
            else:
                values = column.values(batch)
                rows[column.name] = values.reshape(shape + values.shape[1:])
        if self._with_key:
            rows["id"] = batch.client_key.reshape(shape)

    def _variable(self, rows: np.ndarray, batch: EventBatch, nulls: dict[str, np.ndarray]) -> bytes:
        """The rows without the text's padding and the NULLs' values (their lengths written: -1 for a NULL)."""
        raw = rows.view(np.uint8).reshape(len(batch), self._dtype.itemsize)
        keep = np.ones(raw.shape, dtype=bool)
        if self._text:
            text = batch.text.view(np.uint8).reshape(len(batch), TEXT_WIDTH)
            lengths = np.count_nonzero(text, axis=1)  # the generator's text has no NUL inside
            rows[f"{self._text}_length"] = lengths
            offset = self._dtype.fields[self._text][1]
            keep[:, offset : offset + TEXT_WIDTH] = np.arange(TEXT_WIDTH) < lengths[:, None]
        for name, null in nulls.items():
            rows[f"{name}_length"][null] = _NULL_LENGTH
            offset, size = self._dtype.fields[name][1], self._dtype[name].itemsize
            keep[np.flatnonzero(null)[:, None], np.arange(offset, offset + size)[None, :]] = False
        encoded = raw[keep].tobytes()
        for name, null in nulls.items():  # the template's lengths, for the next batch
            rows[f"{name}_length"][null] = self._constants[f"{name}_length"]
        return encoded

    def _rows(self, count: int) -> np.ndarray:
        if len(self._template) < count:
            self._template = np.zeros(count, dtype=self._dtype)
            for name, value in self._constants.items():
                self._template[name] = value
        return self._template[:count]

    def _idle_block(self, size: int, batches: int) -> np.ndarray:
        """A block for `batches` COPY buffers of `size` rows (`_laid_out`) that no view refers to any
        more: a buffer still held (waiting to be sent, sent again by a retry, or kept by --pregenerate)
        is never written over. Re-using a block spares the worker a copy of its constants per chunk,
        memory it would touch once more while the database streams through the same caches."""
        pool = self._blocks.setdefault((size, batches), [])
        for block in pool:
            if sys.getrefcount(block) == _IDLE_REFERENCES:
                return block
        block = self._laid_out(size, batches)
        if len(pool) < POOLED_BLOCKS:
            pool.append(block)
        return block

    def _buffer_bytes(self, size: int) -> int:
        """The length of one COPY buffer of `size` rows (fixed-width rows: no text)."""
        return len(_COPY_HEADER) + size * self._dtype.itemsize + len(_COPY_TRAILER)

    def _laid_out(self, size: int, batches: int) -> np.ndarray:
        """Bytes of `batches` COPY buffers of `size` rows each, back to back, with every constant in
        place (header, field counts, lengths, trailer): only the values are left to write."""
        stride = self._buffer_bytes(size)
        block = np.zeros((batches, stride), dtype=np.uint8)
        block[:, : len(_COPY_HEADER)] = np.frombuffer(_COPY_HEADER, dtype=np.uint8)
        block[:, stride - len(_COPY_TRAILER) :] = np.frombuffer(_COPY_TRAILER, dtype=np.uint8)
        block[:, len(_COPY_HEADER) : stride - len(_COPY_TRAILER)] = self._rows(size).view(np.uint8)
        return block.ravel()
