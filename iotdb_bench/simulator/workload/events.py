"""Deterministic, vectorised generation of device events in columnar batches.

Every event is a pure function of (seed, worker index, its position in the worker's stream): the
same seed gives the same events whatever the batch size, and a worker never holds more than one
chunk of batches (about CHUNK_EVENTS events) plus fixed tables, so memory does not grow with the
number of inserts, the run's duration or the number of devices (per-device tables are kept up to
CACHED_SERIES_LIMIT series, computed per batch beyond). Values come from a counter-based hash (splitmix64) instead of a stateful random
generator, which is what makes positions independent.

The workload's settings are the generator's:
- series: each worker's devices, each with `sensors` sensors; a series is one (device, sensor);
- order: `round-robin` (series take turns, timestamps rise: the original tool's stream), `random`
  (a uniformly random series for every event, timestamps still rising: seed 004's method) or `burst`
  (each series sends `burst` consecutive readings at once, as a gateway uploading a device's buffer;
  a reading keeps the timestamp it has in round-robin, so the stream's timestamps jump back and forth);
- late data: a fraction of the events is sent late by 1..max_lateness of event time; the others
  are sent in order (see `_arrival`); every event keeps its sequence number;
- measurements: N values per event (the first is `temperature`), and for seed 002's large shape a
  variable text of up to TEXT_WIDTH characters.
A sequence number is the event's position in the worker's natural stream (round-robin: the order of
its timestamps), so (device id, sequence number) identifies an event whatever the order it is sent in.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

# 2026-01-01T00:00:00Z: a fixed origin keeps generated data reproducible across runs.
TIME_ORIGIN_MS = 1_767_225_600_000
# Time between two consecutive events of one worker; each series reports every series*100 ms.
EVENT_INTERVAL_MS = 100
DEVICE_ID_WIDTH = 15  # "w000000-d000000": fixed width, so rows encode without Python loops
CLIENT_KEY_WIDTH = DEVICE_ID_WIDTH + 1 + 12
TIMESTAMP_DIGITS = 13
TIME_FIRST_KEY_WIDTH = TIMESTAMP_DIGITS + 1 + CLIENT_KEY_WIDTH
TEXT_WIDTH = 200
# Symbols of the large shape's text: none needs quoting in SQL, CSV, JSON or line protocol.
TEXT_ALPHABET = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-", dtype=np.uint8)
_TEXT_POOL = 4096
# Events generated together (`chunks`): several small batches per NumPy call, still bounded memory.
CHUNK_EVENTS = 8192
# Per-series tables (ids, base temperatures) are kept for at most this many series per worker.
CACHED_SERIES_LIMIT = 65_536
ORDERS = ("round-robin", "random", "burst")

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SHIFT1, _SHIFT2, _SHIFT3, _SHIFT_53, _SHIFT_32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11), np.uint64(32)
# Salts that give each independent stream of hashes (measurements, order, lateness, text) its own key.
_SALT_MEASUREMENT = 0xD6E8FEB86659FD93
_SALT_ORDER, _SALT_LATE, _SALT_DELAY, _SALT_TEXT = 0x2545F4914F6CDD1D, 0x5851F42D4C957F2D, 0x14057B7EF767814F, 0x27BB2EE687B0B0FD
_MASK64 = 0xFFFF_FFFF_FFFF_FFFF


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser: a well-mixed 64-bit hash of each element (wrapping arithmetic).
    Works in place on `x` (a fresh array) with one scratch array: this runs for every batch."""
    x += GOLDEN
    scratch = np.right_shift(x, _SHIFT1)
    x ^= scratch
    x *= _MIX1
    np.right_shift(x, _SHIFT2, out=scratch)
    x ^= scratch
    x *= _MIX2
    np.right_shift(x, _SHIFT3, out=scratch)
    x ^= scratch
    return x


def device_ids(worker_index: int, devices: int) -> np.ndarray:
    """The fixed-width byte-string ids of one worker's devices."""
    return np.array([f"w{worker_index:06d}-d{d:06d}".encode() for d in range(devices)], dtype=f"S{DEVICE_ID_WIDTH}")


def device_ids_of(worker_index: int, device_index: np.ndarray) -> np.ndarray:
    """The ids of the given devices of a worker, computed without a table (any number of devices)."""
    prefix = np.frombuffer(f"w{worker_index:06d}-d".encode(), dtype=np.uint8)
    ids = np.empty((len(device_index), DEVICE_ID_WIDTH), dtype=np.uint8)
    ids[:, : len(prefix)] = prefix
    ids[:, len(prefix) :] = (device_index[:, None] // _POWERS_OF_TEN[-6:]) % 10 + ord("0")
    return ids.view(f"S{DEVICE_ID_WIDTH}").ravel()


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    return ((values[:, None] // _POWERS_OF_TEN[-width:]) % 10 + ord("0")).astype(np.uint8)


@dataclass(frozen=True)
class EventBatch:
    """A batch of events as columns. Timestamps are epoch milliseconds.

    The first five columns are every shape's; the others exist when the workload asks for them:
    `sensor_index` with several sensors per device, `more` with more than one measurement (and for
    the light and large shapes, whose integers are made from the measurements), `text` for large.
    TSBS's shapes fill them with a host's (or truck's) row: its name, its step as the sequence number,
    its fields as the measurements (NaN: a null field), its measurement's own tags as JSON text, and
    the three columns of their own (simulator/workload/tsbs/generator.py)."""

    timestamp_ms: np.ndarray  # int64
    device_index: np.ndarray  # int64, index into the worker's devices
    device_id: np.ndarray  # S15
    sequence_number: np.ndarray  # int64, position in the worker's natural stream: identifies the event
    temperature: np.ndarray  # float64, the first measurement
    sensor_index: np.ndarray | None = None  # int64, the device's sensor; None: one sensor per device
    more: np.ndarray | None = None  # float64 (measurements - 1, events): measurements 2..N
    text: np.ndarray | None = None  # S200, NUL-padded: the large shape's variable text
    host: np.ndarray | None = None  # int64, TSBS's shapes: the host's index among all workers' hosts (simulator/workload/tsbs/)
    table_index: np.ndarray | None = None  # int64, TSBS's shapes of several measurements: the row's measurement (its table)
    null_tag: np.ndarray | None = None  # int64, TSBS's IoT shape: the tag the row writes as null (-1: none, 0: its name)

    def __len__(self) -> int:
        return len(self.sequence_number)

    @property
    def measurement_count(self) -> int:
        return 1 + (0 if self.more is None else len(self.more))

    def measurement(self, index: int) -> np.ndarray:
        """Measurement `index` (0 = temperature) of every event."""
        return self.temperature if index == 0 else self.more[index - 1]

    def hundredths(self, index: int) -> np.ndarray:
        """Measurement `index` as an integer number of hundredths (values have two decimals)."""
        return np.rint(self.measurement(index) * 100.0).astype(np.int64)

    @cached_property
    def client_key(self) -> np.ndarray:
        """A key derived from the event's content (device id and sequence number), fixed width."""
        key = np.empty((len(self), CLIENT_KEY_WIDTH), dtype=np.uint8)
        key[:, :DEVICE_ID_WIDTH] = self.device_id.view(np.uint8).reshape(-1, DEVICE_ID_WIDTH)
        key[:, DEVICE_ID_WIDTH] = ord("-")
        key[:, DEVICE_ID_WIDTH + 1 :] = _digits(self.sequence_number, 12)
        return key.view(f"S{CLIENT_KEY_WIDTH}").ravel()

    @cached_property
    def time_first_key(self) -> np.ndarray:
        """The client key led by the event's timestamp (13 digits): keys sorted by time, not by device."""
        key = np.empty((len(self), TIME_FIRST_KEY_WIDTH), dtype=np.uint8)
        key[:, :TIMESTAMP_DIGITS] = _digits(self.timestamp_ms, TIMESTAMP_DIGITS)
        key[:, TIMESTAMP_DIGITS] = ord("-")
        key[:, TIMESTAMP_DIGITS + 1 :] = self.client_key.view(np.uint8).reshape(-1, CLIENT_KEY_WIDTH)
        return key.view(f"S{TIME_FIRST_KEY_WIDTH}").ravel()

    def select(self, mask: np.ndarray | slice) -> EventBatch:
        """The events picked by a boolean mask, an index array or a slice, in that order."""
        return EventBatch(
            self.timestamp_ms[mask],
            self.device_index[mask],
            self.device_id[mask],
            self.sequence_number[mask],
            self.temperature[mask],
            None if self.sensor_index is None else self.sensor_index[mask],
            None if self.more is None else self.more[:, mask],
            None if self.text is None else self.text[mask],
            None if self.host is None else self.host[mask],
            None if self.table_index is None else self.table_index[mask],
            None if self.null_tag is None else self.null_tag[mask],
        )

    def split(self, size: int) -> list[EventBatch]:
        """Consecutive batches of `size` events (the last one smaller): views, nothing copied."""
        if len(self) <= size:
            return [self]
        return [self.select(slice(first, first + size)) for first in range(0, len(self), size)]

    def split_by_table(self, table_count: int) -> list[tuple[int, EventBatch]]:
        """Sub-batches per table; a device always writes to the same table (device index modulo count),
        a TSBS row to its measurement's."""
        if table_count == 1:
            return [(0, self)]
        table_of_event = self.table_of_each(table_count)
        parts = [(t, self.select(table_of_event == t)) for t in range(table_count)]
        return [(t, part) for t, part in parts if len(part)]

    def table_of_each(self, table_count: int) -> np.ndarray:
        """The table (index) of every event."""
        return self.table_index if self.table_index is not None else self.device_index % table_count

    def rows(self, with_client_key: bool = False) -> list[tuple]:
        """Python tuples (timestamp_ms, device_id, sequence_number, temperature[, key]) for row-wise drivers
        of the default shape (other shapes: simulator/workload/shapes.py, Layout.python_rows)."""
        columns = [
            self.timestamp_ms.tolist(),
            self.device_id.astype(f"U{DEVICE_ID_WIDTH}").tolist(),
            self.sequence_number.tolist(),
            self.temperature.tolist(),
        ]
        if with_client_key:
            columns.append(self.client_key.astype(f"U{CLIENT_KEY_WIDTH}").tolist())
        return list(zip(*columns))


_POWERS_OF_TEN = 10 ** np.arange(TIMESTAMP_DIGITS - 1, -1, -1, dtype=np.int64)


class EventGenerator:
    """Produces the event stream of one worker, batch by batch, from any position."""

    def __init__(self, seed: int, worker_index: int, devices: int, *, sensors: int = 1, order: str = "round-robin",
                 burst: int = 1, measurements: int = 1, text: bool = False, late_fraction: float = 0.0,
                 max_lateness_s: float = 60.0):
        if order not in ORDERS:
            raise ValueError(f"unknown order {order!r}")
        self.devices, self.sensors, self.worker_index = devices, sensors, worker_index
        self.series = devices * sensors
        self.order, self.burst, self.measurements, self.with_text = order, burst, measurements, text
        self._key = np.uint64((((seed << 24) ^ worker_index) * int(_MIX1)) & _MASK64)
        key = int(self._key)
        self._measurement_keys = np.array([key ^ ((m * _SALT_MEASUREMENT) & _MASK64) for m in range(measurements)], dtype=np.uint64)[:, None]
        self._order_key, self._late_key, self._delay_key = (np.uint64(key ^ salt) for salt in (_SALT_ORDER, _SALT_LATE, _SALT_DELAY))
        # Late events: a Weyl sequence (golden-ratio steps) below the threshold picks them, so that
        # every stretch of the stream holds the fraction asked for, not just on average.
        self.late_fraction = late_fraction
        self._late_threshold = None if late_fraction <= 0 else min(int(late_fraction * 2**64), _MASK64)
        self.max_late_positions = max(1, int(max_lateness_s * 1000 // EVENT_INTERVAL_MS))
        self._per_series = self._series_tables() if self.series <= CACHED_SERIES_LIMIT else None
        self._cycles: tuple[np.ndarray, ...] = ()
        self._text_pool = self._make_text_pool(key) if text else None

    # -- the stream ----------------------------------------------------------------------
    def batches(self, start: int, total: int | None, size: int) -> Iterator[EventBatch]:
        """Batches of `size` events (the last one smaller) covering the positions [start, start + total)
        as they are sent; `total` None: without end. With late data the events are sent in `_arrival`
        order, every position of the range exactly once."""
        for chunk in self.chunks(start, total, size):
            yield from chunk.split(size)

    def chunks(self, start: int, total: int | None, size: int) -> Iterator[EventBatch]:
        """The same stream as `batches`, a few batches at a time: each chunk holds a whole number of
        batches of `size` (the last one may end short), about CHUNK_EVENTS events. One NumPy call per
        column for several batches costs less than one per batch (the calls' fixed cost is most of a
        1000-event batch's), and a module may encode a whole chunk at once (`prepare_batches`)."""
        step = size * max(1, CHUNK_EVENTS // size)
        end = None if total is None else start + total
        if self._late_threshold is None:
            firsts = itertools.count(start, step) if end is None else range(start, end, step)
            for first in firsts:
                yield self.batch(first, step if end is None else min(step, end - first))
            return
        window = max(4096, step, self.max_late_positions // 8)
        for positions in cut(self._arrival(start, end, window), step):
            yield self.events_at(positions)

    def batch(self, start: int, count: int) -> EventBatch:
        """The events of positions [start, start + count), in position order (no late data)."""
        if self.order == "round-robin" and self._per_series is not None:
            return self._round_robin(start, count)
        return self.events_at(np.arange(start, start + count, dtype=np.int64))

    def events_at(self, positions: np.ndarray) -> EventBatch:
        """The events at any positions (int64), in the order given."""
        series, timestamp_ms = self._series_and_time(positions)
        if self._per_series is not None and self.sensors == 1:  # a series is a device: one gather less
            device_index, sensor_index = series, None
            device_id, base = self._per_series[1][series], self._per_series[3][series]
        elif self._per_series is not None:
            device_index, device_id, sensor_index, base = (column[series] for column in self._per_series)
        else:
            device_index, sensor_index = np.divmod(series, self.sensors)
            sensor_index = sensor_index if self.sensors > 1 else None
            device_id = device_ids_of(self.worker_index, device_index)
            base = self._base_temperature(device_index)
        return self._batch(positions, timestamp_ms, device_index, device_id, sensor_index, base)

    def late(self, positions: np.ndarray) -> np.ndarray:
        """Which of these positions are sent late (boolean)."""
        if self._late_threshold is None:
            return np.zeros(len(positions), dtype=bool)
        weyl = positions.astype(np.uint64) * GOLDEN
        weyl += self._late_key
        return weyl < np.uint64(self._late_threshold)

    def delay(self, positions: np.ndarray) -> np.ndarray:
        """How many positions (of EVENT_INTERVAL_MS) a late event is sent after its place: 1..max."""
        hashes = splitmix64(positions.astype(np.uint64) ^ self._delay_key)
        return (hashes % np.uint64(self.max_late_positions)).astype(np.int64) + 1

    # -- internals -----------------------------------------------------------------------
    def _arrival(self, start: int, end: int | None, window: int) -> Iterator[np.ndarray]:
        """The positions of [start, end) in the order they are sent, window by window
        (`in_sending_order`): an on-time event at position p is sent at p; a late one after position
        p + delay (after the on-time event there, before the next)."""
        lows = itertools.count(start, window) if end is None else range(start, end, window)
        windows = ((np.arange(low, low + window if end is None else min(low + window, end), dtype=np.int64), low + window) for low in lows)
        yield from in_sending_order(windows, self._places)

    def _places(self, positions: np.ndarray) -> np.ndarray:
        places = 2 * positions
        late = self.late(positions)
        places[late] = 2 * (positions[late] + self.delay(positions[late])) + 1
        return places

    def _series_and_time(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        series_count = np.int64(self.series)
        if self.order == "round-robin":
            series = positions % series_count
            timestamp = positions * EVENT_INTERVAL_MS
        elif self.order == "random":
            # A uniform series from the hash's top 32 bits by multiply-shift (cheaper than a modulo).
            hashes = splitmix64(positions.astype(np.uint64) ^ self._order_key)
            hashes >>= _SHIFT_32
            hashes *= np.uint64(self.series)
            hashes >>= _SHIFT_32
            series = hashes.view(np.int64)
            timestamp = positions * EVENT_INTERVAL_MS
        else:  # burst: the burst-th group of readings goes to series (group % series)
            group, within = np.divmod(positions, np.int64(self.burst))
            rounds, series = np.divmod(group, series_count)
            reading = rounds * self.burst + within  # the series' own reading number
            timestamp = (reading * series_count + series) * EVENT_INTERVAL_MS  # its round-robin time
        timestamp += TIME_ORIGIN_MS
        return series, timestamp

    def _round_robin(self, start: int, count: int) -> EventBatch:
        positions = np.arange(start, start + count, dtype=np.int64)
        # Series take turns, so a batch's per-series columns are a slice of those columns repeated:
        # views instead of a modulo and four gathers per batch.
        offset = start % self.series
        device_index, device_id, sensor_index, base = (None if cycle is None else cycle[offset : offset + count] for cycle in self._repeated(count))
        timestamp_ms = positions * EVENT_INTERVAL_MS
        timestamp_ms += TIME_ORIGIN_MS
        return self._batch(positions, timestamp_ms, device_index, device_id, sensor_index, base)

    def _batch(self, positions, timestamp_ms, device_index, device_id, sensor_index, base) -> EventBatch:
        values = self._values(positions, base)
        return EventBatch(
            timestamp_ms=timestamp_ms,
            device_index=device_index,
            device_id=device_id,
            sequence_number=positions,
            temperature=values[0],
            sensor_index=sensor_index,
            more=values[1:] if self.measurements > 1 else None,
            text=self._text(positions) if self._text_pool is not None else None,
        )

    def _values(self, positions: np.ndarray, base: np.ndarray) -> np.ndarray:
        """(measurements, events): each the device's base temperature +- 5, two decimals."""
        if self.measurements == 1:  # the common case, one dimension: a little less work per call
            values = unit_interval(splitmix64(positions.view(np.uint64) ^ self._key))
        else:
            values = unit_interval(splitmix64(positions.view(np.uint64)[None, :] ^ self._measurement_keys))
        values -= 0.5  # in place, the same operations as round(base + 10 * (noise - 0.5), 2)
        values *= 10.0
        values += base
        np.round(values, 2, out=values)
        return values if values.ndim == 2 else values[None, :]

    def _text(self, positions: np.ndarray) -> np.ndarray:
        """Variable text of 1..TEXT_WIDTH symbols: a stretch of the worker's pool of symbols."""
        hashes = splitmix64(positions.astype(np.uint64) ^ np.uint64(int(self._key) ^ _SALT_TEXT))
        start = (hashes & np.uint64(_TEXT_POOL - 1)).astype(np.int64)
        length = ((hashes >> np.uint64(32)) % np.uint64(TEXT_WIDTH)).astype(np.int64) + 1
        text = np.lib.stride_tricks.sliding_window_view(self._text_pool, TEXT_WIDTH)[start]
        text[np.arange(TEXT_WIDTH) >= length[:, None]] = 0
        return text.view(f"S{TEXT_WIDTH}").ravel()

    @staticmethod
    def _make_text_pool(key: int) -> np.ndarray:
        hashes = splitmix64(np.arange(_TEXT_POOL + TEXT_WIDTH, dtype=np.uint64) ^ np.uint64(key ^ _SALT_TEXT ^ 1))
        return TEXT_ALPHABET[(hashes >> np.uint64(58)).astype(np.int64)]

    def _base_temperature(self, device_index: np.ndarray) -> np.ndarray:
        """Each device has its own base temperature between 15 and 25 degrees."""
        return 15.0 + 10.0 * unit_interval(splitmix64(device_index.astype(np.uint64) ^ self._key))

    def _series_tables(self) -> tuple[np.ndarray, ...]:
        """Per series (device-major): device index, device id, sensor index, base temperature."""
        device_index = np.repeat(np.arange(self.devices, dtype=np.int64), self.sensors)
        sensor_index = np.tile(np.arange(self.sensors, dtype=np.int64), self.devices) if self.sensors > 1 else None
        base = np.repeat(self._base_temperature(np.arange(self.devices, dtype=np.int64)), self.sensors)
        return device_index, np.repeat(device_ids(self.worker_index, self.devices), self.sensors), sensor_index, base

    def _repeated(self, count: int) -> tuple[np.ndarray, ...]:
        """The per-series columns repeated to cover any `count` consecutive positions (read-only)."""
        if not self._cycles or len(self._cycles[0]) < self.series + count:
            repeats = -(-(self.series + count) // self.series)
            self._cycles = tuple(None if column is None else np.tile(column, repeats) for column in self._per_series)
            for cycle in self._cycles:
                if cycle is not None:
                    cycle.flags.writeable = False
        return self._cycles


def in_sending_order(windows: Iterable[tuple[np.ndarray, int]], places_of: Callable[[np.ndarray], np.ndarray]) -> Iterator[np.ndarray]:
    """Rows sent out of order, window by window. Each window is (the positions of its rows, in
    order; a position no later row is before); a row's place (`places_of`) is 2p when it is sent at
    its position p, 2q + 1 when right after position q. A window sends every row whose place comes
    before its bound, those beyond wait (late rows: the fraction late x their lateness), and once
    the windows end, everything left goes."""
    pending_positions = np.empty(0, dtype=np.int64)
    pending_places = np.empty(0, dtype=np.int64)
    for new, bound in itertools.chain(windows, [(np.empty(0, dtype=np.int64), None)]):
        positions = np.concatenate([pending_positions, new])
        places = np.concatenate([pending_places, places_of(new)])
        now = places < 2 * bound if bound is not None else np.ones(len(positions), dtype=bool)
        pending_positions, pending_places = positions[~now], places[~now]
        sent = positions[now][np.argsort(places[now], kind="stable")]
        if len(sent):
            yield sent


def cut(chunks: Iterator[np.ndarray], size: int) -> Iterator[np.ndarray]:
    """Arrays of exactly `size` elements (the last one smaller) from arrays of any length."""
    held: list[np.ndarray] = []
    count = 0
    for chunk in chunks:
        held.append(chunk)
        count += len(chunk)
        if count < size:
            continue
        joined = np.concatenate(held)
        whole = len(joined) - len(joined) % size
        yield from (joined[first : first + size] for first in range(0, whole, size))
        held, count = [joined[whole:]], len(joined) - whole
    if count:
        yield np.concatenate(held)


def unit_interval(hashes: np.ndarray) -> np.ndarray:
    """Map 64-bit hashes to floats in [0, 1) using their top 53 bits (overwrites `hashes`)."""
    np.right_shift(hashes, _SHIFT_53, out=hashes)
    unit = hashes.astype(np.float64)
    unit *= 1.0 / (1 << 53)
    return unit
