"""TSBS's rows as InfluxDB line protocol, as its `influx`, `victoriametrics` and `questdb` targets write
them (pkg/targets/influx/serializer.go, pkg/targets/questdb/serializer.go): a line per row, `<measurement>,<the entity's tags>,<the
measurement's own tags> <fields> <time>`, e.g. `cpu,hostname=host_0,region=...,<the ten tags>
usage_user=58i,...,usage_guest_nice=38i <time>`.

As TSBS's serializer writes them: a field TSBS writes as int64 with the `i` suffix, a float64 as a
number without it (the shortest text that reads back as the same double); tags whose values are not
strings (IoT's load_capacity, fuel_capacity and nominal_fuel_consumption) as the first fields; a null
tag or field (IoT's) left out of the line. Times in milliseconds for InfluxDB and VictoriaMetrics
(their writes ask for precision ms), in nanoseconds for QuestDB (TSBS's unit, which its ILP takes
without a suffix): a row's epoch milliseconds times `time_factor`.

Each entity's measurement-and-tags prefix is made once per measurement, when the writer is built; a
batch's text is then the prefixes of its rows' entities beside their fields and times, built with
NumPy (text_rows). The rare rows with a null tag get their own prefix. A measurement whose fields are
all integers (cpu's ten, most of devops') is written as one block when no value of the batch is null:
each field's `,name=` right-aligned in the longest one's width, its digits and `i`, the padding zero
bytes that compact() drops; one copy of a template and one of the digits per batch instead of three
columns per field (half the CPU per row of cpu data).
"""

from __future__ import annotations

import functools

import numpy as np

from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs.usecases import Measurement, UseCase


class TsbsLines:
    """The line protocol of the rows of a run's entities (host_0.. or truck_0.. of `seed`)."""

    def __init__(self, use_case: UseCase, seed: int, entities: int, time_factor: int = 1):
        self._time_factor = time_factor
        # TSBS's value sets hold no character that line protocol escapes (space, comma, equals sign).
        self._tags = [dict(zip((name for name, _ in use_case.tags), row)) for row in use_case.tag_rows(seed, 0, entities)]
        self._kinds = dict(use_case.tags)
        self._measurements = use_case.measurements
        self._own = [one.tag_values(seed, np.arange(entities)) for one in use_case.measurements]
        prefixes = [[self._prefix(index, entity) for entity in range(entities)] for index in range(len(self._measurements))]
        self._prefixes = [np.array([prefix.encode() for prefix in each]) for each in prefixes]  # S<longest>, NUL-padded

    def _prefix(self, measurement: int, entity: int, null_tag: int = -1) -> str:
        """The measurement, the entity's string tags and the measurement's own, then a space and the
        tags TSBS writes as fields, each field after them led by a comma (the first without one)."""
        tags = [(name, value) for position, (name, value) in enumerate(self._tags[entity].items()) if position != null_tag]
        strings = [(name, value) for name, value in tags if self._kinds[name] == "text"] + self._own_of(measurement, entity)
        numbers = ",".join(f"{name}={value:g}" for name, value in tags if self._kinds[name] != "text")
        text = self._measurements[measurement].name + "".join(f",{name}={value}" for name, value in strings)
        return f"{text} {numbers}" if numbers else text

    def _own_of(self, measurement: int, entity: int) -> list[tuple[str, str]]:
        return [(name, values[entity]) for name, values in self._own[measurement].items()]

    def lines(self, batch: EventBatch) -> bytes:
        """One line per row of the batch, in its order."""
        if batch.host is None:
            raise ValueError("TSBS's line protocol is made of TSBS's rows, which name their host")
        if batch.table_index is None:
            return text_rows.compact(self._rows(0, batch))
        tables = [(index, batch.table_index == index) for index in range(len(self._measurements))]
        parts = [(chosen, self._rows(index, batch.select(chosen))) for index, chosen in tables if chosen.any()]
        return text_rows.compact(text_rows.merged(parts, len(batch)))

    def _rows(self, index: int, batch: EventBatch) -> np.ndarray:
        """The lines of rows of one measurement, as text_rows' rows."""
        measurement: Measurement = self._measurements[index]
        prefixes = self._prefixes[index][batch.host]  # a copy: a row with a null tag gets its own (shorter) prefix
        if batch.null_tag is not None:
            for at in np.flatnonzero(batch.null_tag >= 0).tolist():
                prefixes[at] = self._prefix(index, int(batch.host[at]), int(batch.null_tag[at])).encode()
        fields_first = not any(kind != "text" for kind in self._kinds.values())
        leads = tuple((" " if position == 0 and fields_first else ",") + f"{name}=" for position, name in enumerate(measurement.field_names))
        values = [batch.measurement(position) for position in range(len(leads))]
        if all(measurement.integer_fields) and not any(np.isnan(each).any() for each in values):
            fields = [_integer_block(leads, values)]
        else:
            fields = [column for lead, each, integer in zip(leads, values, measurement.integer_fields) for column in _field(lead, each, integer)]
        columns = [text_rows.fixed(prefixes), *fields, text_rows.constant(" "), text_rows.integers(batch.timestamp_ms * self._time_factor),
                   text_rows.constant("\n")]
        return text_rows.text_rows(columns, len(batch))


def _integer_block(leads: tuple[str, ...], values: list[np.ndarray]) -> np.ndarray:
    """Every integer field of every row as one (rows, fields x (lead width + digits + 1)) block."""
    digits = text_rows.integers(np.stack(values, axis=1).astype(np.int64))  # (rows, fields, digits)
    template = _block_template(leads, digits.shape[-1])
    block = np.empty((len(digits), *template.shape), dtype=np.uint8)
    block[:] = template
    lead_width = max(len(lead) for lead in leads)
    block[:, :, lead_width : lead_width + digits.shape[-1]] = digits
    return block.reshape(len(digits), -1)


@functools.cache
def _block_template(leads: tuple[str, ...], width: int) -> np.ndarray:
    """(fields, lead width + width + 1): each field's lead right-aligned, room for `width` digits, `i`."""
    lead_width = max(len(lead) for lead in leads)
    template = np.zeros((len(leads), lead_width + width + 1), dtype=np.uint8)
    for row, lead in zip(template, leads):
        row[lead_width - len(lead) : lead_width] = np.frombuffer(lead.encode(), dtype=np.uint8)
    template[:, -1] = ord("i")
    return template


def _field(lead: str, values: np.ndarray, integer: bool) -> list[np.ndarray]:
    """The columns of `lead` and the value of every row, as TSBS writes it; nothing for a null (NaN)."""
    null = np.isnan(values)
    written = np.where(null, 0.0, values) if null.any() else values
    text = [text_rows.integers(written.astype(np.int64)), text_rows.constant("i")] if integer else [text_rows.decimals(written)]
    if not null.any():
        return [text_rows.constant(lead), *text]
    rows = text_rows.text_rows([text_rows.constant(lead), *text], len(values))
    rows[null] = 0
    return [rows]
