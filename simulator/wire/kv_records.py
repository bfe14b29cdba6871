"""Events as key/value records of an ordered key-value store (a B-tree), built and read with NumPy.

The key follows seed 004: device, sensor and timestamp as fixed-width big-endian bytes, so comparing
keys byte by byte (the B-tree's default order) orders them like the numbers they hold:

- `device` order (clustered): device id, sensor, timestamp: a cursor walks one device in time order
  and a device's newest reading is the last key of its range;
- `time` order (sorted): timestamp, device id, sensor: inserts of increasing time append at the
  tree's right edge, and a cursor walks the whole fleet in time order.

The value holds the rest of the event, packed: sequence number (int64) and temperature (float64),
16 bytes. Keys of the generated events are unique (a worker's timestamps never repeat and its device
ids are its own), so a key that exists already is an error, never an overwrite.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from simulator.events import DEVICE_ID_WIDTH, EventBatch

KeyOrder = Literal["device", "time"]

VALUE = np.dtype([("sequence_number", "<i8"), ("temperature", "<f8")])
# The only sensor of today's events; seed 004's clients had ten.
SENSOR = 0


def key_layout(order: KeyOrder, device_width: int = DEVICE_ID_WIDTH) -> np.dtype:
    """The key's fields in the order they are compared (packed: no padding between them)."""
    device, sensor, timestamp = ("device_id", f"S{device_width}"), ("sensor", ">u4"), ("timestamp", ">u8")
    return np.dtype([device, sensor, timestamp] if order == "device" else [timestamp, device, sensor])


def encode(batch: EventBatch, order: KeyOrder) -> tuple[list[bytes], list[bytes]]:
    """The batch's keys and values, as the bytes objects a driver's put() takes."""
    layout = key_layout(order, batch.device_id.dtype.itemsize)
    keys = np.empty(len(batch), layout)
    keys["device_id"] = batch.device_id
    keys["sensor"] = SENSOR
    keys["timestamp"] = batch.timestamp_ms
    values = np.empty(len(batch), VALUE)
    values["sequence_number"] = batch.sequence_number
    values["temperature"] = batch.temperature
    # Void views give bytes of the full width (an S view would drop trailing zero bytes).
    return keys.view(f"V{layout.itemsize}").tolist(), values.view(f"V{VALUE.itemsize}").tolist()


def decode_keys(keys: list[bytes], layout: np.dtype) -> np.ndarray:
    return np.frombuffer(b"".join(keys), layout)


def decode_values(values: list[bytes]) -> np.ndarray:
    return np.frombuffer(b"".join(values), VALUE)


def device_range_end(device_id: bytes, layout: np.dtype) -> bytes:
    """A key above every key of `device_id` and below the next device's (device order): where a cursor
    lands with set_range to find the record after the device's last one."""
    return device_id + b"\xff" * (layout.itemsize - len(device_id))


def seek_key(device_id: bytes, timestamp_ms: int, layout: np.dtype) -> bytes:
    """The smallest key of `device_id` at or after `timestamp_ms` (device order), or the smallest key at
    or after `timestamp_ms` (time order): where set_range starts a walk."""
    key = np.zeros(1, layout)
    key["device_id"] = device_id
    key["sensor"] = 0
    key["timestamp"] = timestamp_ms
    return key.view(f"V{layout.itemsize}").tolist()[0]
