"""The questdb module's NumPy ILP encoder (simulator/modules/questdb/ilp.py) against the official
client's own rendering of the same events (`row()` per event into a client buffer, line protocol 2),
byte for byte, for every shape, with and without the client's key, and for edge values (negative
numbers, zero, every width of integer, extreme doubles, timestamp 0). No server needed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from iotdb_bench.simulator.modules.questdb.ilp import ilp_lines
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch
from iotdb_bench.simulator.workload.shapes import TIMESTAMP, Column, Layout, generator, layout


def client_rendering(layout_: Layout, batch: EventBatch, table: str, key: np.ndarray | None, protocol_version: int = 2) -> bytes:
    """What the official client writes for the same events, one `row()` each."""
    from questdb import TimestampNanos

    with warnings.catch_warnings():  # a standalone buffer is the deprecated module's; the bytes are the client's
        warnings.simplefilter("ignore", DeprecationWarning)
        from questdb.ingress import Buffer

        buffer = Buffer(protocol_version=protocol_version)
    widths = {"device": DEVICE_ID_WIDTH, "text": TEXT_WIDTH}
    columns = [(column, column.values(batch)) for column in layout_.columns]
    for index in range(len(batch)):
        symbols, fields, at = {}, {}, None
        for column, values in columns:
            value = values[index]
            if column.kind == "timestamp":
                at = TimestampNanos(int(value) * 1_000_000)
            elif column.kind == "device":
                symbols[column.name] = value.decode()
            elif column.kind in widths:
                fields[column.name] = value.decode()
            else:
                fields[column.name] = value.item()
        if key is not None:
            fields["id"] = key[index].decode()
        buffer.row(table, symbols=symbols, columns=fields, at=at)
    return bytes(buffer)


def spec(**fields) -> RunSpec:
    return RunSpec(run_id="ilp", task="insert", target="q", module="questdb", workers=1, batch=100, **fields)


@pytest.mark.parametrize("fields", [
    {}, {"sensors": 3, "measurements": 3}, {"shape": "slim", "primary_key": "none"}, {"shape": "light"}, {"shape": "large"},
    {"order": "random"}, {"out_of_order": 0.2},
], ids=["events", "sensors-measurements", "slim", "light", "large", "random", "late"])
@pytest.mark.parametrize("with_key", [False, True], ids=["no-key", "client-key"])
def test_generated_batches_are_the_clients_bytes(fields, with_key):
    run = spec(**fields)
    batch = next(generator(run, 3).batches(5000, 300, 300))
    key = batch.client_key if with_key else None
    assert ilp_lines(layout(run), batch, "events2", key, binary_doubles=True) == client_rendering(layout(run), batch, "events2", key)


def edge_batch() -> EventBatch:
    timestamps = np.array([0, 1, 9, 10, 999, 1000, 1_767_225_600_000, 4_102_444_800_123, 12, 5_000, 86_400_000, 7], dtype=np.int64)
    count = len(timestamps)
    devices = np.array([f"w000001-d{d:06d}".encode() for d in range(count)], dtype=f"S{DEVICE_ID_WIDTH}")
    doubles = np.array([-0.0, 0.0, -21.37, 21.37, 1e-300, -1.7976931348623157e308, 5e-324, 0.1, -1.0, 123456.78, 2.0**53, -3.5])
    return EventBatch(timestamp_ms=timestamps, device_index=np.arange(count), device_id=devices,
                      sequence_number=np.array([0, -1, 9, -9, 10, -99, 100, 9999, -10_000, 123_456_789_012, -(2**62), 2**63 - 1]),
                      temperature=doubles)


SMALL = np.array([0, -1, 1, -32767, 32767, 5, -5, 10, -10, 100, 9, -9], dtype=np.int16)
TEXTS = np.array([b"a", b"-", b"x" * TEXT_WIDTH, b"A.b-9", b"0", b"zz", b"q" * 199, b"1", b"22", b"333", b"4444", b"55555"], dtype=f"S{TEXT_WIDTH}")
EDGE_LAYOUT = Layout("edge", (
    TIMESTAMP,
    Column("device_id", "device", lambda batch: batch.device_id),
    Column("sequence_number", "sequence", lambda batch: batch.sequence_number),
    Column("temperature", "float", lambda batch: batch.temperature),
    Column("small", "int16", lambda batch: SMALL[batch.device_index]),
    Column("text", "text", lambda batch: TEXTS[batch.device_index]),
), has_key=True, indexed=())


def test_edge_values_are_the_clients_bytes():
    batch = edge_batch()
    key = np.array([f"k{index:0{CLIENT_KEY_WIDTH - 1}d}".encode() for index in range(len(batch))], dtype=f"S{CLIENT_KEY_WIDTH}")
    for with_key in (None, key):
        assert ilp_lines(EDGE_LAYOUT, batch, "t", with_key, binary_doubles=True) == client_rendering(EDGE_LAYOUT, batch, "t", with_key)


def test_a_straightforward_rendering_of_line_protocol_1_with_text_doubles():
    """Servers without line protocol 2 get doubles as text: the same lines, each double's text its value."""
    batch = edge_batch()
    lines = ilp_lines(EDGE_LAYOUT, batch, "t", None, binary_doubles=False).decode().splitlines()
    expected = [
        f't,device_id={device.decode()} sequence_number={sequence}i,temperature={{}},small={small}i,text="{text.decode()}" {ms * 1_000_000}n'
        for device, sequence, small, text, ms in zip(batch.device_id, batch.sequence_number.tolist(), EDGE_LAYOUT.column("small").values(batch).tolist(),
                                                     EDGE_LAYOUT.column("text").values(batch), batch.timestamp_ms.tolist())]
    assert len(lines) == len(expected)
    for line, pattern, value in zip(lines, expected, batch.temperature.tolist()):
        text = line.partition(",temperature=")[2].partition(",small=")[0]
        assert pattern.format(text) == line and float(text) == value


def test_an_empty_batch_is_no_lines():
    batch = edge_batch().select(np.zeros(len(edge_batch()), dtype=bool))
    assert ilp_lines(EDGE_LAYOUT, batch, "t", None, binary_doubles=True) == b""
