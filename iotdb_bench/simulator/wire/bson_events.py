"""Events as BSON documents, a whole batch at once with NumPy.

An event's document has a fixed layout (fixed field names, fixed-width device ids and keys), so a
batch is one structured array whose rows are the documents' bytes, in the order `bson.encode`
writes them for {"_id"?, "timestamp": date, "device_id": string, "sequence_number": int64,
"temperature": double}: the same bytes for about a tenth of the time (tests/unit/test_bson_events.py
compares them). Ids of another width than the batch's (none today) take the per-document path.
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.workload.events import EventBatch

DATE, STRING, INT64, DOUBLE = 0x09, 0x02, 0x12, 0x01


def _string_field(name: str, width: int) -> list[tuple[str, str]]:
    """A string element: type, name, int32 length (with its NUL), the bytes, the NUL."""
    return [(f"{name}_type", "u1"), (f"{name}_name", f"S{len(name) + 1}"), (f"{name}_length", "<i4"), (name, f"S{width}"), (f"{name}_end", "u1")]


def layout(device_width: int, key_width: int | None) -> np.dtype:
    fields = [("size", "<i4")]
    if key_width is not None:
        fields += _string_field("_id", key_width)
    fields += [("timestamp_type", "u1"), ("timestamp_name", "S10"), ("timestamp", "<i8")]
    fields += _string_field("device_id", device_width)
    fields += [("sequence_number_type", "u1"), ("sequence_number_name", "S16"), ("sequence_number", "<i8")]
    fields += [("temperature_type", "u1"), ("temperature_name", "S12"), ("temperature", "<f8"), ("end", "u1")]
    return np.dtype(fields)


def _full_width(values: np.ndarray) -> bool:
    return bool(np.all(np.char.str_len(values) == values.dtype.itemsize))


def encode(batch: EventBatch, keys: np.ndarray | None = None) -> list[bytes] | None:
    """The batch's documents as BSON bytes (with `keys`, fixed-width byte strings, as `_id`); None when
    an id is shorter than its column's width (the caller then encodes document by document)."""
    if not _full_width(batch.device_id) or (keys is not None and not _full_width(keys)):
        return None
    dtype = layout(batch.device_id.dtype.itemsize, None if keys is None else keys.dtype.itemsize)
    rows = np.zeros(len(batch), dtype)
    rows["size"] = dtype.itemsize
    if keys is not None:
        _fill_string(rows, "_id", keys)
    rows["timestamp_type"], rows["timestamp_name"], rows["timestamp"] = DATE, b"timestamp", batch.timestamp_ms
    _fill_string(rows, "device_id", batch.device_id)
    rows["sequence_number_type"], rows["sequence_number_name"] = INT64, b"sequence_number"
    rows["sequence_number"] = batch.sequence_number
    rows["temperature_type"], rows["temperature_name"], rows["temperature"] = DOUBLE, b"temperature", batch.temperature
    return rows.view(f"V{dtype.itemsize}").tolist()


def _fill_string(rows: np.ndarray, name: str, values: np.ndarray) -> None:
    rows[f"{name}_type"], rows[f"{name}_name"] = STRING, name.encode()
    rows[f"{name}_length"], rows[name] = values.dtype.itemsize + 1, values
