"""Tablets encoded once, when they are made (in prepare_batch, outside the timed call): the tree model's
aligned tablets, one per device, all of a batch's cut from its columns at once, with the null bitmaps
of TSBS's IoT null fields (`tree_tablets`), and the table model's (`encoded_tablet_class`)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np


class TreeTablet:
    """One device's aligned tablet of the tree model, already encoded: what Session.insert_aligned_tablets
    reads of a tablet (the driver's NumpyTablet spends about 60 us making one, most of it looking up its
    columns' types: a batch of one row per device is a thousand tablets)."""

    __slots__ = ("_dtypes", "_measurements", "_rows", "_target", "_timestamps", "_types", "_values")

    def __init__(self, target: str, measurements: list[str], types: list[Any], dtypes: list[np.dtype], timestamps: bytes, values: bytes):
        self._target, self._measurements, self._types, self._dtypes = target, measurements, types, dtypes
        self._rows, self._timestamps, self._values = len(timestamps) // 8, timestamps, values

    def get_insert_target_name(self) -> str:
        return self._target

    def get_measurements(self) -> list[str]:
        return self._measurements

    def get_data_types(self) -> list[Any]:
        return self._types

    def get_row_number(self) -> int:
        return self._rows

    def get_binary_timestamps(self) -> bytes:
        return self._timestamps

    def get_binary_values(self) -> bytes:
        return self._values

    def get_timestamps(self) -> np.ndarray:
        return np.frombuffer(self._timestamps, dtype=">i8")

    def get_values(self) -> list[np.ndarray]:
        """The columns (big-endian), read back from the encoded values."""
        columns, offset = [], 0
        for dtype in self._dtypes:
            columns.append(np.frombuffer(self._values, dtype=dtype, count=self._rows, offset=offset))
            offset += dtype.itemsize * self._rows
        return columns

    def get_column_categories(self) -> list[Any]:
        from iotdb.utils.Tablet import ColumnType

        return [ColumnType.FIELD] * len(self._measurements)


def tree_tablets(paths: Sequence[str], measurements: list[str], types: list[Any], timestamps: np.ndarray, columns: list[np.ndarray],
                 starts: Sequence[int], ends: Sequence[int], nulls: Sequence[np.ndarray | None] = ()) -> list[TreeTablet]:
    """The tablets of a batch's rows grouped by device: rows starts[i]:ends[i] of the (sorted) `timestamps` and
    big-endian `columns` are device paths[i]'s, in time order; `nulls` (per column, rows in the same order, or
    None) the values to write as nulls. Each tablet's bytes are slices of the columns', then its bitmaps."""
    times = timestamps.astype(">i8").tobytes()
    encoded = [(column.tobytes(), column.dtype.itemsize) for column in columns]
    dtypes = [column.dtype for column in columns]
    return [TreeTablet(path, measurements, types, dtypes, times[start * 8 : end * 8],
                       b"".join(data[start * width : end * width] for data, width in encoded) + _bitmaps(nulls, start, end))
            for path, start, end in zip(paths, starts, ends)]


def _bitmaps(nulls: Sequence[np.ndarray | None], start: int, end: int) -> bytes:
    """The bitmaps of rows start:end as the driver's Tablet writes them after the values (none when no value is
    null): per column a flag, and where it is set rows // 8 + 1 bytes, bit i (least significant first) marking
    row i null."""
    parts = [None if column is None or not column[start:end].any() else column[start:end] for column in nulls]
    if all(part is None for part in parts):
        return b""
    size = (end - start) // 8 + 1
    return b"".join(b"\x00" if part is None else b"\x01" + np.packbits(part, bitorder="little").tobytes().ljust(size, b"\x00")
                    for part in parts)


@functools.cache
def encoded_tablet_class() -> type:
    """NumpyTablet whose values are encoded once, when it is made (in prepare_batch, outside the timed
    call), with the device ids' STRING column packed by NumPy instead of the driver's per-value loop."""
    from iotdb.utils.IoTDBConstants import TSDataType
    from iotdb.utils.NumpyTablet import NumpyTablet

    class EncodedTablet(NumpyTablet):  # type: ignore[misc]  # (the driver is untyped: NumpyTablet is Any here)
        def __init__(self, target: str, columns: list[str], types: list[Any], values: list[np.ndarray], timestamps: np.ndarray,
                     column_types: list[Any] | None = None):
            if not self.check_sorted(timestamps):
                # Tablets are sorted by time (the driver would sort the other columns, not ours).
                order = np.argsort(timestamps, kind="stable")
                timestamps, values = timestamps[order], [column[order] for column in values]
            strings = {i: values[i] for i, kind in enumerate(types) if kind == TSDataType.STRING}
            # The driver would turn byte strings into str; it only needs them for its own encoding.
            super().__init__(target, columns, types, [np.zeros(len(v), ">i8") if i in strings else v for i, v in enumerate(values)],
                             timestamps, column_types=column_types)
            self._encoded = b"".join(_string_column(strings[i]) if i in strings else column.tobytes()
                                     for i, column in enumerate(self.get_values()))

        def get_binary_values(self) -> bytes:
            return self._encoded

        @staticmethod
        def check_sorted(timestamps: np.ndarray) -> bool:
            """One NumPy comparison instead of the driver's Python loop over every timestamp (a third of
            the time it took to make a batch's tablets)."""
            return len(timestamps) < 2 or bool(np.all(timestamps[1:] >= timestamps[:-1]))

    return EncodedTablet


def _string_column(values: np.ndarray) -> bytes:
    """A STRING column as IoTDB's tablet format wants it: per value a big-endian int32 length, then the
    bytes. Device ids are fixed-width byte strings, so every value has the same length."""
    width = values.dtype.itemsize
    if not (values.dtype.kind == "S" and np.all(np.char.str_len(values) == width)):
        raise ValueError("device ids must be fixed-width byte strings")
    packed = np.empty((len(values), 4 + width), dtype=np.uint8)
    packed[:, :4] = np.frombuffer(np.array(width, dtype=">i4").tobytes(), dtype=np.uint8)
    packed[:, 4:] = values.view(np.uint8).reshape(len(values), width)
    return packed.tobytes()
