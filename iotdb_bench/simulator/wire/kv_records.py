"""Events as key/value records of an ordered key-value store (a B-tree), built and read with NumPy.

The key follows seed 004: device, sensor and timestamp as fixed-width big-endian bytes, so comparing
keys byte by byte (the B-tree's default order) orders them like the numbers they hold:

- `device` order (clustered): device id, sensor, timestamp: a cursor walks one device in time order
  and a device's newest reading is the last key of its range;
- `time` order (sorted): timestamp, device id, sensor: inserts of increasing time append at the
  tree's right edge, and a cursor walks the whole fleet in time order.

The value holds the rest of the event, packed: sequence number (int64) and temperature (float64),
16 bytes, then with --measurements N the further measurements m1..m{N-1} (float64 each); a reader
tells how many from a value's length. With --sensors the key's sensor is the event's. Keys of the generated events are unique (a worker's timestamps never repeat and its device
ids are its own), so a key that exists already is an error, never an overwrite.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from iotdb_bench.simulator.workload.events import DEVICE_ID_WIDTH, EventBatch

KeyOrder = Literal["device", "time"]

VALUE = np.dtype([("sequence_number", "<i8"), ("temperature", "<f8")])
# The sensor of events with one sensor per device; seed 004's clients had ten (--sensors 10).
SENSOR = 0


def value_layout(measurements: int = 1) -> np.dtype:
    """The value's fields: sequence number, temperature, then measurements m1..m{N-1}."""
    return np.dtype(VALUE.descr + [(f"m{i}", "<f8") for i in range(1, measurements)])


def key_layout(order: KeyOrder, device_width: int = DEVICE_ID_WIDTH) -> np.dtype:
    """The key's fields in the order they are compared (packed: no padding between them)."""
    device, sensor, timestamp = ("device_id", f"S{device_width}"), ("sensor", ">u4"), ("timestamp", ">u8")
    return np.dtype([device, sensor, timestamp] if order == "device" else [timestamp, device, sensor])


def encode(batch: EventBatch, order: KeyOrder) -> tuple[list[bytes], list[bytes]]:
    """The batch's keys and values, as the bytes objects a driver's put() takes."""
    layout = key_layout(order, batch.device_id.dtype.itemsize)
    keys = np.empty(len(batch), layout)
    keys["device_id"] = batch.device_id
    keys["sensor"] = SENSOR if batch.sensor_index is None else batch.sensor_index
    keys["timestamp"] = batch.timestamp_ms
    value = value_layout(batch.measurement_count)
    values = np.empty(len(batch), value)
    values["sequence_number"] = batch.sequence_number
    values["temperature"] = batch.temperature
    for index in range(1, batch.measurement_count):
        values[f"m{index}"] = batch.more[index - 1]
    # Void views give bytes of the full width (an S view would drop trailing zero bytes).
    return keys.view(f"V{layout.itemsize}").tolist(), values.view(f"V{value.itemsize}").tolist()


def decode_keys(keys: list[bytes], layout: np.dtype) -> np.ndarray:
    return np.frombuffer(b"".join(keys), layout)


def decode_values(values: list[bytes]) -> np.ndarray:
    """Values of one table (all of one width): the measurements they hold follow from that width."""
    measurements = 1 + (len(values[0]) - VALUE.itemsize) // 8 if values else 1
    return np.frombuffer(b"".join(values), value_layout(measurements))


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
