"""The workload settings of the event generator: orders, late data, devices and sensors, measurements,
shapes. Every setting stays deterministic per seed, independent of the batch size, complete (every
sequence number of a range exactly once) and bounded in memory."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload import shapes
from iotdb_bench.simulator.workload.events import CACHED_SERIES_LIMIT, EVENT_INTERVAL_MS, TEXT_ALPHABET, TEXT_WIDTH, EventGenerator, device_ids

ORDERS = [{"order": "round-robin"}, {"order": "random"}, {"order": "burst", "burst": 7}]
LATE = [{"late_fraction": 0.1, "max_lateness_s": 5.0}, {"late_fraction": 0.3, "max_lateness_s": 60.0}]
SETTINGS = ORDERS + [dict(order=o, **late) for o in ("round-robin", "random") for late in LATE] + [
    {"order": "random", "sensors": 3, "measurements": 4, "late_fraction": 0.05}, {"measurements": 8, "text": True, "order": "burst", "burst": 3}]


def spec(**fields) -> RunSpec:
    return RunSpec(**{"run_id": "r", "task": "insert", "target": "t", "module": "null", "workers": 2, "batch": 100, **fields})


def stream(generator: EventGenerator, start: int, total: int | None, size: int, limit: int | None = None) -> dict[str, np.ndarray]:
    batches = generator.batches(start, total, size)
    if limit is not None:
        batches = itertools.islice(batches, limit)
    batches = list(batches)
    columns = {name: np.concatenate([getattr(b, name) for b in batches]) for name in
               ("timestamp_ms", "device_index", "device_id", "sequence_number", "temperature")}
    if batches[0].more is not None:
        columns["more"] = np.concatenate([b.more for b in batches], axis=1)
    if batches[0].sensor_index is not None:
        columns["sensor_index"] = np.concatenate([b.sensor_index for b in batches])
    if batches[0].text is not None:
        columns["text"] = np.concatenate([b.text for b in batches])
    columns["sizes"] = np.array([len(b) for b in batches])
    return columns


def late_flags(columns: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Which events arrived after an event with a later timestamp, and by how much (ms)."""
    times = columns["timestamp_ms"]
    newest_before = np.maximum.accumulate(np.concatenate([times[:1], times[:-1]]))
    lateness = newest_before - times
    return lateness > 0, lateness


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_same_seed_same_stream_whatever_the_batch_size(settings):
    one = stream(EventGenerator(7, 1, 13, **settings), 500, 20_000, 1000)
    other = stream(EventGenerator(7, 1, 13, **settings), 500, 20_000, 333)
    for name in one:
        if name != "sizes":
            assert np.array_equal(one[name], other[name]), name
    assert set(one["sizes"][:-1]) == {1000} and set(other["sizes"][:-1]) == {333}  # exact batch sizes
    different = stream(EventGenerator(8, 1, 13, **settings), 500, 20_000, 1000)
    assert not np.array_equal(one["temperature"], different["temperature"])


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_every_sequence_number_of_the_range_exactly_once_and_devices_in_order(settings):
    generator = EventGenerator(3, 0, 11, **settings)
    columns = stream(generator, 1234, 30_000, 1000)
    assert np.array_equal(np.sort(columns["sequence_number"]), np.arange(1234, 31_234))
    # Per device, sequence numbers are the positions of that device, and its timestamps rise with them.
    natural = generator.events_at(np.arange(1234, 31_234))
    for device in range(11):
        mine = columns["device_index"] == device
        order = np.argsort(columns["sequence_number"][mine])
        assert np.array_equal(columns["sequence_number"][mine][order], natural.sequence_number[natural.device_index == device])
        assert np.all(np.diff(columns["timestamp_ms"][mine][order]) > 0)


@pytest.mark.parametrize("fraction", [0.01, 0.05, 0.1, 0.3])
@pytest.mark.parametrize("order", ["round-robin", "random"])
@pytest.mark.parametrize("max_lateness_s", [1.0, 60.0])
def test_late_fraction_within_one_percent_and_lateness_never_above_the_maximum(fraction, order, max_lateness_s):
    columns = stream(EventGenerator(11, 2, 10, order=order, late_fraction=fraction, max_lateness_s=max_lateness_s), 0, 200_000, 1000)
    late, lateness = late_flags(columns)
    assert abs(late.mean() - fraction) <= 0.01 * fraction
    assert lateness.max() <= max_lateness_s * 1000
    assert lateness[late].min() >= EVENT_INTERVAL_MS
    if max_lateness_s == 60.0:  # late by anything up to the maximum
        assert np.percentile(lateness[late], 99) > 0.9 * max_lateness_s * 1000


def test_without_late_data_nothing_is_late_and_round_robin_is_the_original_stream():
    columns = stream(EventGenerator(1, 0, 10), 0, 50_000, 1000)
    assert not late_flags(columns)[0].any()
    assert np.array_equal(columns["sequence_number"], np.arange(50_000))
    assert np.array_equal(columns["device_index"], np.arange(50_000) % 10)


def test_random_order_picks_devices_uniformly_with_rising_timestamps():
    columns = stream(EventGenerator(5, 0, 20, order="random"), 0, 200_000, 1000)
    assert np.all(np.diff(columns["timestamp_ms"]) == EVENT_INTERVAL_MS)
    counts = np.bincount(columns["device_index"], minlength=20)
    assert np.all(np.abs(counts - 10_000) < 500)  # about 5 standard deviations
    assert (np.diff(columns["device_index"]) == 0).mean() == pytest.approx(1 / 20, abs=0.005)  # not a cycle


def test_burst_order_sends_each_device_its_readings_in_groups():
    devices, burst = 6, 5
    columns = stream(EventGenerator(5, 0, devices, order="burst", burst=burst), 0, 3 * devices * burst, 10)
    groups = columns["device_index"].reshape(-1, burst)
    assert np.all(groups == groups[:, :1])  # one device per burst
    assert groups[:, 0].tolist() == list(range(devices)) * 3  # devices take turns by burst
    # A reading keeps its round-robin time: each device reports every `devices` intervals.
    for device in range(devices):
        times = columns["timestamp_ms"][columns["device_index"] == device]
        assert np.all(np.diff(times) == devices * EVENT_INTERVAL_MS)
    assert (np.diff(columns["timestamp_ms"]) < 0).any()  # the stream's times jump back


def test_sensors_are_series_of_their_device():
    columns = stream(EventGenerator(1, 4, 3, sensors=4), 0, 1200, 100)
    pairs = columns["device_index"] * 4 + columns["sensor_index"]
    assert np.array_equal(pairs, np.arange(1200) % 12)
    assert np.array_equal(np.bincount(pairs), np.full(12, 100))


def test_measurements_are_independent_values_and_the_first_is_the_temperature():
    one = EventGenerator(9, 0, 10).batch(0, 50_000)
    many = EventGenerator(9, 0, 10, measurements=5).batch(0, 50_000)
    assert np.array_equal(one.temperature, many.temperature)
    assert many.more.shape == (4, 50_000) and many.measurement_count == 5
    for index in range(5):
        values = many.measurement(index)
        assert np.allclose(values, np.round(values, 2)) and values.min() >= 10.0 and values.max() < 30.0
    device = many.device_index == 3  # one device: the same base, independent noise
    assert abs(np.corrcoef(many.more[0][device], many.more[1][device])[0, 1]) < 0.05


def test_large_text_has_variable_length_up_to_200_symbols():
    text = EventGenerator(2, 0, 10, measurements=8, text=True).batch(0, 20_000).text
    lengths = np.char.str_len(text)
    assert lengths.min() >= 1 and lengths.max() == TEXT_WIDTH
    assert 90 < lengths.mean() < 110
    assert set(np.unique(text.view(np.uint8))) <= {0, *TEXT_ALPHABET.tolist()}


def test_many_devices_are_computed_not_tabled_and_match_the_table():
    devices = CACHED_SERIES_LIMIT * 4
    generator = EventGenerator(1, 12, devices)
    assert generator._per_series is None
    batch = generator.batch(devices - 500, 1000)
    small = EventGenerator(1, 12, 5000)
    assert np.array_equal(batch.device_id[:500], device_ids(12, devices)[-500:])
    assert batch.device_id[500] == b"w000012-d000000"
    # the same temperatures as a tabled generator for the same device and position
    positions = np.arange(3000, 3100)
    tabled, computed = small.events_at(positions), EventGenerator(1, 12, 5000)
    computed._per_series = None
    assert np.array_equal(tabled.temperature, computed.events_at(positions).temperature)
    assert np.array_equal(tabled.device_id, computed.events_at(positions).device_id)


@pytest.mark.parametrize("settings", [{}, {"order": "random", "late_fraction": 0.2, "max_lateness_s": 600.0}])
def test_generator_memory_does_not_grow_with_the_stream(settings):
    generator = EventGenerator(1, 0, CACHED_SERIES_LIMIT * 2, **settings)
    sizes = []
    for index, _ in enumerate(generator.batches(0, None, 10_000)):
        if index in (10, 300):
            sizes.append(sum(a.nbytes for a in vars(generator).values() if isinstance(a, np.ndarray)))
        if index == 300:
            break
    assert sizes[0] == sizes[1] < 200_000


def test_a_stream_without_end_can_be_continued_where_a_run_stopped():
    """--duration: a run stores a prefix of the stream; the next run starts after its highest sequence number."""
    generator = EventGenerator(4, 0, 10, late_fraction=0.1, max_lateness_s=10.0)
    first = stream(generator, 0, None, 1000, limit=20)
    end = int(first["sequence_number"].max()) + 1
    second = stream(generator, end, 5000, 1000)
    stored = np.concatenate([first["sequence_number"], second["sequence_number"]])
    assert len(np.unique(stored)) == len(stored)  # nothing twice
    missing = np.setdiff1d(np.arange(end + 5000), stored)
    assert len(missing) and missing.min() >= end - generator.max_late_positions  # only the late ones still waiting


def test_spec_devices_split_evenly_and_tables_by_count_or_name():
    split = spec(devices=10, workers=4)
    assert [split.devices_of(w) for w in range(4)] == [3, 3, 2, 2]
    assert spec(devices_per_worker=7).devices_of(1) == 7
    assert spec(tables=16).table_names[-1] == "events15" and len(spec(tables=16).table_names) == 16
    assert spec(tables="multiple").tables == 4 and spec(tables="single").table_names == ["events"]


@pytest.mark.parametrize(("fields", "message"), [
    ({"shape": "light", "measurements": 3}, "--measurements applies to --schema events"),
    ({"shape": "large", "sensors": 2}, "--sensors applies to --schema events"),
    ({"shape": "slim"}, "--schema slim has no key column"),
    ({"order": "burst", "out_of_order": 0.1}, "--out-of-order applies to --order round-robin and random"),
    ({"commit_interval_s": 1.0}, "--commit-interval commits single inserts"),
    ({"devices": 1}, "fewer than the 2 workers"),
])
def test_workload_options_that_cannot_go_together(fields, message):
    with pytest.raises(ValueError, match=message):
        spec(**fields)


def test_shapes_columns_and_values_per_row():
    assert shapes.layout(spec()).names == ("timestamp", "device_id", "sequence_number", "temperature")
    events = shapes.layout(spec(measurements=3, sensors=2))
    assert events.names == ("timestamp", "device_id", "sensor", "sequence_number", "temperature", "m1", "m2")
    assert events.values_per_row == 3
    slim = shapes.layout(spec(shape="slim", primary_key="none"))
    assert (slim.names, slim.has_key, slim.indexed, slim.values_per_row) == (("timestamp", "value"), False, (), 1)
    light = shapes.layout(spec(shape="light"))
    assert (light.names, light.has_key, light.indexed, light.values_per_row) == (("timestamp", "val1", "val2"), True, ("val1",), 2)
    large = shapes.layout(spec(shape="large"))
    assert large.names == ("timestamp", "text", *(f"i{i}" for i in range(1, 9))) and large.values_per_row == 9


@pytest.mark.parametrize("shape", ["slim", "light", "large"])
def test_shape_values_are_the_measurements_in_hundredths(shape):
    run = spec(shape=shape, primary_key="none" if shape == "slim" else "db")
    layout, batch = shapes.layout(run), next(shapes.generator(run, 1).batches(0, 1000, 1000))
    integers = [column for column in layout.value_columns if column.kind != "text"]
    for index, column in enumerate(integers):
        values = column.values(batch)
        assert values.dtype == (np.int16 if column.kind == "int16" else np.int32)
        assert np.array_equal(values, np.rint(batch.measurement(index) * 100))
        assert values.min() >= 1000 and values.max() <= 3000
    rows = layout.python_rows(batch)
    assert len(rows) == 1000 and len(rows[0]) == len(layout.columns)
