"""The ILP text of a whole batch, built with NumPy (simulator/wire/text_rows.py) without a Python loop
per event: one line per event, as the official client writes it (tests/unit/test_questdb_ilp.py
compares the two byte for byte):

    <table>,device_id=<id> [sensor=<k>i,]sequence_number=<n>i,temperature==<binary double> <ns>n

Symbols (the device) first, then the fields in the layout's order (integers with `i`, text quoted,
doubles in line protocol 2's binary form: `==`, the type byte 16, eight little-endian bytes, so the
stored double is the generated one bit for bit; as text with line protocol 1), the client's key as a
string field `id`, and the designated timestamp in nanoseconds. The generator's names, device ids,
keys and texts need no escaping (simulator/workload/events.py)."""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.shapes import Layout

# Line protocol 2's binary double: after `name=`, a second `=` and the type byte 16.
_BINARY_DOUBLE = "=\x10"
NANOS_PER_MS = 1_000_000


def ilp_lines(layout: Layout, batch: EventBatch, table: str, key: np.ndarray | None, binary_doubles: bool) -> bytes:
    """The lines of a batch of one table; `key`: the client's key of each event (fixed-width bytes), or None."""
    parts = [text_rows.constant(table)]
    for column in layout.columns:
        if column.kind == "device":
            parts += [text_rows.constant(f",{column.name}="), text_rows.fixed(column.values(batch))]
    binary = []  # the parts whose zero bytes are data, not padding
    separator = " "
    for column in layout.columns:
        if column.kind in ("timestamp", "device"):
            continue
        values = column.values(batch)
        if column.kind == "float" and binary_doubles:
            parts.append(text_rows.constant(f"{separator}{column.name}={_BINARY_DOUBLE}"))
            binary.append(len(parts))
            parts.append(np.ascontiguousarray(values, dtype="<f8").view(np.uint8).reshape(len(values), 8))
        elif column.kind == "float":
            with np.errstate(over="ignore", invalid="ignore"):  # doubles beyond +-1.8e306 are written in full
                parts += [text_rows.constant(f"{separator}{column.name}="), text_rows.decimals(values)]
        elif column.kind == "text":
            parts += [text_rows.constant(f'{separator}{column.name}="'), text_rows.fixed(values), text_rows.constant('"')]
        else:
            parts += [text_rows.constant(f"{separator}{column.name}="), text_rows.integers(values), text_rows.constant("i")]
        separator = ","
    if key is not None:
        parts += [text_rows.constant(f'{separator}id="'), text_rows.fixed(key), text_rows.constant('"')]
    parts += [text_rows.constant(" "), text_rows.integers(batch.timestamp_ms * NANOS_PER_MS), text_rows.constant("n\n")]
    rows = text_rows.text_rows(parts, len(batch))
    keep = rows != 0
    if binary:
        ends = np.cumsum([part.shape[1] for part in parts])
        for index in binary:
            keep[:, ends[index] - 8:ends[index]] = True
    lines: bytes = rows[keep].tobytes()
    return lines
