"""The iotdb module's write path: tablets encoded outside the timed call (tree: one aligned tablet per
device, all in one insert_aligned_tablets call; table model: one tablet per table), and single inserts
(tree: insert_aligned_record; table model: one-row tablets) in the batch's order. TSBS's IoT rows go to
their truck's device, or its unnamed one when TSBS nulls the name (series.py), their null fields as
nulls: marked in the tablet's bitmaps, or left out of a record's measurements."""

from __future__ import annotations

from typing import Any

import numpy as np

from iotdb_bench.simulator.modules.base import WriterRole
from iotdb_bench.simulator.modules.iotdb.options import IotdbRole
from iotdb_bench.simulator.modules.iotdb.tablets import TreeTablet, encoded_tablet_class, tree_tablets
from iotdb_bench.simulator.workload.events import EventBatch


class IotdbWriter(IotdbRole, WriterRole):
    def prepare_batch(self, batch: EventBatch) -> Any:
        if self.module.series.tree and self.options.tree_batch == "records":
            return self._records(batch)
        if self.module.series.tree:
            return [tablet for table, part in self.per_table(batch) for tablet in self._device_tablets(table, part)]
        return [self._table_tablet(table, part) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: Any) -> None:
        session = self.module.connection.session
        if self.module.series.tree and self.options.tree_batch == "records":
            session.insert_aligned_records(*prepared)
        elif self.module.series.tree:
            session.insert_aligned_tablets(prepared)
        else:
            for tablet in prepared:
                session.insert_relational_tablet(tablet)

    def _records(self, batch: EventBatch) -> tuple[list[str], list[int], list[list[str]], list[list[Any]], list[list[Any]]]:
        """insert_aligned_records' arguments: one record per event, in the batch's order (a batch of TSBS's
        order is one timestamp across many hosts: a record each, where tablets would be one row each)."""
        series = self.module.series
        tables = self.table_of_each(batch)
        paths = self._paths(batch, tables)
        names = {table: fields.names for table, fields in series.fields.items()}
        types = {table: fields.types() for table, fields in series.fields.items()}
        # Lists: the driver looks for a null (None, left out of the record) in lists only.
        values = [list(row) for _, row in self.rows_per_table(batch, lambda table, part: series.fields[table].python_values(part))]
        return paths, batch.timestamp_ms.tolist(), [names[table] for table in tables], [types[table] for table in tables], values

    def prepare_single(self, batch: EventBatch) -> list[Any]:
        """One item per event, in the batch's order (a --duration run may stop between two)."""
        series = self.module.series
        tables = self.table_of_each(batch)
        if not series.tree:
            return [self._table_tablet(table, batch.select(slice(i, i + 1))) for i, table in enumerate(tables)]
        rows = self.rows_per_table(batch, lambda table, part: series.fields[table].python_values(part))
        return [(path, timestamp, table, list(row)) for (table, row), path, timestamp in zip(rows, self._paths(batch, tables), batch.timestamp_ms.tolist())]

    def _paths(self, batch: EventBatch, tables: list[str]) -> list[str]:
        """Each event's device path, in the batch's order."""
        sensors = batch.sensor_index.tolist() if batch.sensor_index is not None else [0] * len(batch)
        named = (batch.null_tag != 0).tolist() if batch.null_tag is not None else [True] * len(batch)
        return [self.module.series.path(*key) for key in zip(tables, batch.device_id.tolist(), sensors, named)]

    def insert_single(self, item: Any) -> None:
        series, session = self.module.series, self.module.connection.session
        if series.tree:
            path, timestamp, table, values = item
            fields = series.fields[table]
            session.insert_aligned_record(path, timestamp, fields.names, fields.types(), values)
        else:
            session.insert_relational_tablet(item)

    def _device_tablets(self, table: str, part: EventBatch) -> list[TreeTablet]:
        """One aligned tablet per device (with --sensors: per sensor; TSBS's IoT: per truck's named or unnamed
        device) of `part`, each in time order, encoded once for the whole batch (tablets.tree_tablets)."""
        names = self.module.series
        fields = names.fields[table]
        series = part.device_index if part.sensor_index is None else part.device_index * self.spec.sensors + part.sensor_index
        unnamed = np.zeros(len(part), dtype=np.int64) if part.null_tag is None else (part.null_tag == 0).astype(np.int64)
        series = series * 2 + unnamed
        order = np.lexsort((part.timestamp_ms, series))  # by device, then time
        ordered = series[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        ends = np.r_[starts[1:], len(order)]
        sensors = part.sensor_index[order[starts]].tolist() if part.sensor_index is not None else [0] * len(starts)
        paths = [names.path(table, bytes(device), sensor, not hidden)
                 for device, sensor, hidden in zip(part.device_id[order[starts]], sensors, unnamed[order[starts]].tolist())]
        nulls = [None if column is None else column[order] for column in fields.nulls(part)]
        return tree_tablets(paths, fields.names, fields.types(), part.timestamp_ms[order],
                            [column[order] for column in fields.big_endian(part)], starts.tolist(), ends.tolist(), nulls)

    def _table_tablet(self, table: str, part: EventBatch) -> Any:
        """One tablet of the table model holding every device of `part` (time order within a device is kept)."""
        from iotdb.utils.IoTDBConstants import TSDataType
        from iotdb.utils.Tablet import ColumnType

        fields = self.module.series.fields[table]
        tags, tag_values = ["device_id"], [part.device_id]
        if part.sensor_index is not None:
            tags.append("sensor")
            tag_values.append(np.char.add(b"s", np.char.zfill(part.sensor_index.astype("S4"), 4)))
        return encoded_tablet_class()(
            table, [*tags, *fields.names], [TSDataType.STRING] * len(tags) + fields.types(),
            [*tag_values, *fields.big_endian(part)], part.timestamp_ms.astype(">i8"),
            column_types=[ColumnType.TAG] * len(tags) + [ColumnType.FIELD] * len(fields.columns),
        )
