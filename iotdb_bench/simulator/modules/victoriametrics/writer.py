"""The victoriametrics module's write path: one HTTP request per call, its body built outside the
timed call: /api/v1/import JSON lines (one per series of a batch, or per event) or InfluxDB line
protocol on /write (one line per event; TSBS's rows always, as TSBS's victoriametrics target sends
them, simulator/wire/tsbs_lines.py)."""

from __future__ import annotations

import functools

import numpy as np

from iotdb_bench.simulator.modules.base import WriterRole
from iotdb_bench.simulator.modules.victoriametrics.options import VmRole
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.wire.tsbs_lines import TsbsLines
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs import USE_CASES


class VmWriter(VmRole, WriterRole):
    @functools.cached_property
    def _tsbs_lines(self) -> TsbsLines:
        """TSBS's shapes: the line protocol of TSBS's victoriametrics target, every host's tags made once."""
        return TsbsLines(USE_CASES[self.spec.shape], self.spec.seed, self.spec.all_devices)

    def prepare_batch(self, batch: EventBatch) -> bytes:
        if self.spec.tsbs:
            return self._tsbs_lines.lines(batch)
        if self.options.ingestion == "influx":
            return text_rows.compact(self._line_protocol(batch))
        return b"".join(self._import_lines(table, part) for table, part in self.per_table(batch))

    def insert_batch(self, prepared: bytes) -> None:
        self.module.connection.write(prepared, self.module.series.ingestion)

    def prepare_single(self, batch: EventBatch) -> list[bytes]:
        if self.spec.tsbs:
            return self._tsbs_lines.lines(batch).splitlines(keepends=True)
        rows = self._line_protocol(batch) if self.options.ingestion == "influx" else self._import_event_lines(batch)
        return [row[row != 0].tobytes() for row in rows]

    def insert_single(self, item: bytes) -> None:
        self.module.connection.write(item, self.module.series.ingestion)

    def _table_names(self, batch: EventBatch) -> np.ndarray:
        names = np.array(self.spec.table_names, dtype="S")
        of_each: np.ndarray = names[batch.device_index % len(names)]
        return of_each

    def _line_protocol(self, batch: EventBatch) -> np.ndarray:
        """One line per event: `<table>,device_id=<id>[,sensor=<k>] temperature=<t>[,m1=..][,sequence_number=<n>i] <ms>`."""
        columns = [text_rows.fixed(self._table_names(batch)), text_rows.constant(",device_id="), text_rows.fixed(batch.device_id)]
        if batch.sensor_index is not None:
            columns += [text_rows.constant(",sensor="), text_rows.integers(batch.sensor_index)]
        for position, column in enumerate(self.module.series.measures):
            columns += [text_rows.constant((" " if position == 0 else ",") + f"{column.name}="), text_rows.decimals(column.values(batch))]
        if self.options.store_sequence_number:
            columns += [text_rows.constant(",sequence_number="), text_rows.integers(batch.sequence_number), text_rows.constant("i")]
        columns += [text_rows.constant(" "), text_rows.integers(batch.timestamp_ms), text_rows.constant("\n")]
        return text_rows.text_rows(columns, len(batch))

    def _import_lines(self, table: str, batch: EventBatch) -> bytes:
        """JSON lines for /api/v1/import: one per series of the batch, its values and timestamps in the
        batch's order (a Python loop per series, none per event)."""
        sensors = batch.sensor_index
        series = batch.device_index if sensors is None else batch.device_index * self.spec.sensors + sensors
        order = np.argsort(series, kind="stable")
        ordered = series[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        ends = np.r_[starts[1:], len(order)]
        timestamps = _separated(text_rows.integers(batch.timestamp_ms[order]))
        values = [(f"{table}_{column.name}", _separated(text_rows.decimals(column.values(batch)[order]))) for column in self.module.series.measures]
        if self.options.store_sequence_number:
            values.append((f"{table}_sequence_number", _separated(text_rows.integers(batch.sequence_number[order]))))
        lines = []
        for start, end in zip(starts.tolist(), ends.tolist()):
            labels = f'"device_id":"{batch.device_id[order[start]].decode()}"'
            if sensors is not None:
                labels += f',"sensor":"{sensors[order[start]]}"'
            times = text_rows.compact(timestamps[start:end])[:-1].decode()
            for name, text in values:
                lines.append(f'{{"metric":{{"__name__":"{name}",{labels}}},'
                             f'"values":[{text_rows.compact(text[start:end])[:-1].decode()}],"timestamps":[{times}]}}\n')
        return "".join(lines).encode()

    def _import_event_lines(self, batch: EventBatch) -> np.ndarray:
        """One row per event holding its JSON line(s) for /api/v1/import (single inserts)."""

        sensor = [] if batch.sensor_index is None else [text_rows.constant('","sensor":"'), text_rows.integers(batch.sensor_index)]

        def line(metric: str, value: np.ndarray) -> list[np.ndarray]:
            return [text_rows.constant('{"metric":{"__name__":"'), text_rows.fixed(self._table_names(batch)), text_rows.constant(f'_{metric}","device_id":"'),
                    text_rows.fixed(batch.device_id), *sensor, text_rows.constant('"},"values":['), value,
                    text_rows.constant('],"timestamps":['), text_rows.integers(batch.timestamp_ms), text_rows.constant("]}\n")]

        columns = [part for column in self.module.series.measures for part in line(column.name, text_rows.decimals(column.values(batch)))]
        if self.options.store_sequence_number:
            columns += line("sequence_number", text_rows.integers(batch.sequence_number))
        return text_rows.text_rows(columns, len(batch))


def _separated(rows: np.ndarray) -> np.ndarray:
    """Rows of text, each followed by a comma."""
    return np.concatenate([rows, np.full((len(rows), 1), ord(","), dtype=np.uint8)], axis=1)
