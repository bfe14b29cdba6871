"""Keys of the key-value modules: compared byte by byte they order like the numbers they hold."""

import numpy as np

from iotdb_bench.simulator.wire import kv_records
from iotdb_bench.simulator.workload.events import EventGenerator


def test_device_keys_order_by_device_then_time_across_byte_boundaries():
    batch = EventGenerator(1, 3, 4).batch(0, 4000)  # timestamps cross many low-byte boundaries
    keys, values = kv_records.encode(batch, "device")
    assert all(len(key) == 27 for key in keys) and all(len(value) == 16 for value in values)
    order = sorted(range(len(keys)), key=keys.__getitem__)
    expected = sorted(range(len(batch)), key=lambda i: (batch.device_id[i], batch.timestamp_ms[i]))
    assert order == expected


def test_time_keys_order_by_time_then_device():
    first, second = EventGenerator(1, 0, 3).batch(0, 600), EventGenerator(1, 1, 3).batch(0, 600)
    keys = kv_records.encode(first, "time")[0] + kv_records.encode(second, "time")[0]
    stamps = np.concatenate([first.timestamp_ms, second.timestamp_ms])
    devices = np.concatenate([first.device_id, second.device_id])
    order = sorted(range(len(keys)), key=keys.__getitem__)
    assert order == sorted(range(len(keys)), key=lambda i: (stamps[i], devices[i]))


def test_records_decode_to_the_events_and_keep_trailing_zero_bytes():
    batch = EventGenerator(5, 0, 2).batch(0, 256)
    for order in ("device", "time"):
        keys, values = kv_records.encode(batch, order)
        layout = kv_records.key_layout(order)
        decoded = kv_records.decode_keys(keys, layout)
        assert np.array_equal(decoded["timestamp"].astype(np.int64), batch.timestamp_ms)
        assert np.array_equal(decoded["device_id"], batch.device_id) and not decoded["sensor"].any()
        assert np.array_equal(kv_records.decode_values(values)["temperature"], batch.temperature)
        assert np.array_equal(kv_records.decode_values(values)["sequence_number"], batch.sequence_number)
    assert any(key.endswith(b"\x00") for key in kv_records.encode(batch, "device")[0])


def test_device_range_end_sits_between_two_devices():
    layout = kv_records.key_layout("device")
    keys = sorted(kv_records.encode(EventGenerator(1, 0, 3).batch(0, 300), "device")[0])
    end = kv_records.device_range_end(b"w000000-d000001", layout)
    assert max(k for k in keys if k.startswith(b"w000000-d000001")) < end < min(k for k in keys if k.startswith(b"w000000-d000002"))
