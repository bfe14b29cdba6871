"""How the influxdb module makes points of events: which columns are tags and which fields, and
the line protocol of a batch (built with NumPy, outside the timed calls)."""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.shapes import Column, Layout


def tags(layout: Layout) -> list[Column]:
    """Tags: the device (and sensor), and light's indexed column (InfluxDB indexes tags only)."""
    return [column for column in layout.columns if column.kind in ("device", "sensor") or column.name in layout.indexed]


def fields(layout: Layout) -> list[Column]:
    tagged = tags(layout)
    return [column for column in layout.columns if column.kind != "timestamp" and column not in tagged]


def count_field(layout: Layout) -> str:
    """A field every point has, whose values the count counts."""
    return next(column.name for column in fields(layout) if column.kind not in ("sequence", "reference"))


def lines(layout: Layout, table_names: list[str], batch: EventBatch) -> np.ndarray:
    """Line protocol, one row per event (see text_rows). A device always goes to the same measurement.
    Every shape keeps the device tag: a point is its series and time, and without it the points of
    different workers with equal timestamps would overwrite each other."""
    names = np.array(table_names, dtype="S")
    columns = [text_rows.fixed(names[batch.device_index % len(names)])]
    if layout.shape != "events":
        columns += [text_rows.constant(",device_id="), text_rows.fixed(batch.device_id)]
    for column in tags(layout):
        columns += [text_rows.constant(f",{column.name}="), _tag_text(column.kind, column.values(batch))]
    for position, column in enumerate(fields(layout)):
        columns += [text_rows.constant((" " if position == 0 else ",") + f"{column.name}="), *_field_text(column.kind, column.values(batch))]
    columns += [text_rows.constant(" "), text_rows.integers(batch.timestamp_ms), text_rows.constant("\n")]
    return text_rows.text_rows(columns, len(batch))


def tag_value(text: str) -> str:
    """Line protocol escaping of a tag value."""
    return text.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def string_field(text: str) -> str:
    """Line protocol escaping of a string field value."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _tag_text(kind: str, values: np.ndarray) -> np.ndarray:
    return text_rows.fixed(values) if kind == "device" else text_rows.integers(values)


def _field_text(kind: str, values: np.ndarray) -> list[np.ndarray]:
    """A field's value as line protocol writes it: floats as they are, integers with `i`, strings quoted."""
    if kind == "float":
        return [text_rows.decimals(values)]
    if kind == "text":
        return [text_rows.constant('"'), text_rows.fixed(values), text_rows.constant('"')]
    return [text_rows.integers(values), text_rows.constant("i")]
