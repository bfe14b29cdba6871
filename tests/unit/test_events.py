"""The event generator: deterministic, batch-size independent, bounded memory."""

import numpy as np
import pytest

from iotdb_bench.simulator.workload.events import EVENT_INTERVAL_MS, TIME_ORIGIN_MS, EventGenerator, device_ids


def concat(batches):
    return {
        name: np.concatenate([getattr(b, name) for b in batches])
        for name in ("timestamp_ms", "device_id", "sequence_number", "temperature")
    }


def test_same_seed_same_events_whatever_the_batch_size():
    one = concat(list(EventGenerator(7, 3, 10).batches(0, 5000, 1000)))
    other = concat(list(EventGenerator(7, 3, 10).batches(0, 5000, 333)))
    for name in one:
        assert np.array_equal(one[name], other[name]), name


def test_one_generator_gives_the_same_events_for_growing_and_shrinking_batches():
    """Per-device columns are cut from repeated copies that grow with the largest batch seen."""
    generator, ids = EventGenerator(5, 1, 7), device_ids(1, 7)
    for start, count in ((3, 2), (10, 5000), (6, 1), (12_345, 20_000), (0, 7)):
        batch, fresh = generator.batch(start, count), EventGenerator(5, 1, 7).batch(start, count)
        positions = np.arange(start, start + count)
        assert np.array_equal(batch.device_index, positions % 7)
        assert np.array_equal(batch.device_id, ids[positions % 7])
        assert np.array_equal(batch.temperature, fresh.temperature)


def test_batch_columns_cannot_be_changed_by_a_module():
    batch = EventGenerator(1, 0, 10).batch(0, 100)
    with pytest.raises(ValueError):
        batch.device_id[0] = b"changed"


def test_other_seed_or_worker_gives_other_temperatures():
    base = EventGenerator(7, 0, 10).batch(0, 1000).temperature
    assert not np.array_equal(base, EventGenerator(8, 0, 10).batch(0, 1000).temperature)
    assert not np.array_equal(base, EventGenerator(7, 1, 10).batch(0, 1000).temperature)


def test_timestamps_increase_and_devices_round_robin():
    batch = EventGenerator(1, 2, 4).batch(100, 12)
    assert np.all(np.diff(batch.timestamp_ms) == EVENT_INTERVAL_MS)
    assert batch.timestamp_ms[0] == TIME_ORIGIN_MS + 100 * EVENT_INTERVAL_MS
    assert [d.decode() for d in batch.device_id[:4]] == ["w000002-d000000", "w000002-d000001", "w000002-d000002", "w000002-d000003"]
    assert len(set(batch.device_id.tolist())) == 4


def test_temperatures_are_plausible_and_rounded():
    t = EventGenerator(1, 0, 50).batch(0, 100_000).temperature
    assert t.min() >= 10.0 - 1e-9 and t.max() < 30.0 + 1e-9
    assert np.allclose(t, np.round(t, 2))
    assert 19.0 < t.mean() < 21.0


def test_client_keys_are_unique_and_derived_from_content():
    batch = EventGenerator(1, 5, 10).batch(123_456, 1000)
    keys = batch.client_key
    assert len(set(keys.tolist())) == 1000
    assert keys[0].decode() == f"{batch.device_id[0].decode()}-{123_456:012d}"


def test_rows_with_and_without_key():
    batch = EventGenerator(1, 0, 2).batch(0, 3)
    rows = batch.rows()
    assert rows[1] == (TIME_ORIGIN_MS + EVENT_INTERVAL_MS, "w000000-d000001", 1, batch.temperature[1])
    assert batch.rows(with_client_key=True)[2][4] == "w000000-d000000-000000000002"


def test_split_by_table_keeps_every_event_once_and_devices_together():
    batch = EventGenerator(1, 0, 10).batch(0, 1000)
    parts = batch.split_by_table(4)
    assert sum(len(part) for _, part in parts) == 1000
    for table, part in parts:
        assert set((part.device_index % 4).tolist()) == {table}


def test_generator_holds_no_per_event_state():
    """Memory must not grow with --num-inserts: a generator keeps only per-device arrays."""
    generator = EventGenerator(1, 0, 10)
    before = sum(a.nbytes for a in vars(generator).values() if isinstance(a, np.ndarray))
    for _ in generator.batches(0, 2_000_000, 10_000):
        pass
    after = sum(a.nbytes for a in vars(generator).values() if isinstance(a, np.ndarray))
    assert before == after < 10_000


@pytest.mark.parametrize("options", [{}, {"order": "random"}, {"order": "burst", "burst": 7}, {"sensors": 3},
                                     {"late_fraction": 0.2, "max_lateness_s": 5.0}, {"measurements": 3, "text": True}])
@pytest.mark.parametrize("size", [1000, 333, 10_000])
def test_chunks_hold_whole_batches_of_the_same_stream(options, size):
    from iotdb_bench.simulator.workload.events import CHUNK_EVENTS

    chunks = list(EventGenerator(7, 3, 10, **options).chunks(50, 25_000, size))
    assert all(len(chunk) % size == 0 for chunk in chunks[:-1]) and sum(map(len, chunks)) == 25_000
    assert all(len(chunk) <= max(size, CHUNK_EVENTS) for chunk in chunks)
    from_chunks = [batch for chunk in chunks for batch in chunk.split(size)]
    assert [len(batch) for batch in from_chunks] == [min(size, 25_000 - first) for first in range(0, 25_000, size)]
    other_windows = list(EventGenerator(7, 3, 10, **options).chunks(50, 25_000, 20_000))  # one chunk per batch, larger windows
    for name in ("timestamp_ms", "device_id", "sequence_number", "temperature", "text"):
        if getattr(chunks[0], name) is not None:
            assert np.array_equal(np.concatenate([getattr(b, name) for b in from_chunks]),
                                  np.concatenate([getattr(c, name) for c in other_windows])), name
    if "late_fraction" not in options:  # each batch is exactly the events of its positions
        generator = EventGenerator(7, 3, 10, **options)
        assert all(np.array_equal(b.temperature, generator.batch(int(b.sequence_number[0]), len(b)).temperature) for b in from_chunks)
