"""The questdb module's write path: ILP over HTTP. A batch is encoded outside the timed call: by
default into ILP text built with NumPy (ilp.py), sent as one request on a keep-alive connection
(ilp_http.py); or into a client buffer (the client's DataFrame path, or `row()` per event), sent by
`Sender.flush(buffer)`. A single insert is one `row()` and its own flush."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, WriterRole, connected
from iotdb_bench.simulator.modules.questdb.ilp import ilp_lines
from iotdb_bench.simulator.modules.questdb.options import QuestdbRole
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.workload.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch

if TYPE_CHECKING:
    import pandas as pd
    from questdb import Sender
    from questdb._client import Buffer



class QuestdbWriter(QuestdbRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._with_key = self.spec.primary_key is PrimaryKey.client

    def prepare_batch(self, batch: EventBatch) -> Any:
        """The batch's ILP lines (one request): bytes, or a client buffer; built here, outside the timed call."""
        if self.options.batch_encoding == "numpy":
            binary = self.module.binary_doubles
            return b"".join(ilp_lines(self.layout, part, table, part.client_key if self._with_key else None, binary)
                            for table, part in self.per_table(batch))
        buffer = self._sender.new_buffer()
        for table, part in self.per_table(batch):
            if self.options.batch_encoding == "dataframe":
                buffer.dataframe(self._frame(part), table_name=table, symbols=self._symbols, at="timestamp")
            else:
                for row in self._rows(table, part):
                    self._add_row(buffer, row)
        return buffer

    def insert_batch(self, prepared: Any) -> None:
        if isinstance(prepared, bytes):
            lines = self.module.lines
            if lines is None:
                raise ModuleError(f"module '{self.spec.module}' is not connected")
            lines.write(prepared)
        else:
            self._sender.flush(prepared)

    def flush(self) -> None:
        """ILP/TCP: close the connection, on which QuestDB commits what it received (the next write opens another)."""
        if self.options.transport == "tcp" and self.module.lines is not None:
            self.module.lines.close()

    def prepare_single(self, batch: EventBatch) -> list[tuple[Any, ...]]:
        """(table, event...) per event, in the batch's order."""
        return [(table, *row) for table, row in zip(self.table_of_each(batch), self._python_rows(batch))]

    @property
    def _sender(self) -> Sender:
        return connected(self.module.sender, self.spec.module)

    @property
    def _symbols(self) -> list[str]:
        return [column.name for column in self.layout.columns if column.kind == "device"]

    def _python_rows(self, batch: EventBatch) -> list[tuple[Any, ...]]:
        return self.layout.python_rows(batch, key=batch.client_key if self._with_key else None)

    def insert_single(self, item: tuple[Any, ...]) -> None:
        sender = self._sender
        self._add_row(sender, item)
        sender.flush()

    def _frame(self, batch: EventBatch) -> pd.DataFrame:
        """The batch as a DataFrame the client's DataFrame path reads without pyarrow: object strings,
        a naive datetime64[ns] column (UTC)."""
        import pandas as pd

        widths = {"device": DEVICE_ID_WIDTH, "text": TEXT_WIDTH}
        columns = {}
        for column in self.layout.columns:
            values = column.values(batch)
            if column.kind == "timestamp":
                values = values.astype("datetime64[ms]").astype("datetime64[ns]")
            elif column.kind in widths:
                values = values.astype(f"U{widths[column.kind]}").astype(object)
            columns[column.name] = values
        if self._with_key:
            columns["id"] = batch.client_key.astype(f"U{CLIENT_KEY_WIDTH}").astype(object)
        return pd.DataFrame(columns, copy=False)

    def _rows(self, table: str, batch: EventBatch) -> list[tuple[Any, ...]]:
        return [(table, *row) for row in self._python_rows(batch)]

    def _add_row(self, target: Buffer | Sender, row: tuple[Any, ...]) -> None:
        """One event with `row()` on a buffer or the sender: (table, the layout's columns..., [id])."""
        from questdb import TimestampNanos

        table, *values = row
        symbols, columns, at = {}, {}, None
        for column, value in zip(self.layout.columns, values):
            if column.kind == "timestamp":
                at = TimestampNanos(value * 1_000_000)
            elif column.kind == "device":
                symbols[column.name] = value
            else:
                columns[column.name] = value
        if self._with_key:
            columns["id"] = values[-1]
        if at is None:
            raise ModuleError(f"--schema {self.layout.shape} has no timestamp column for QuestDB's designated timestamp")
        target.row(table, symbols=symbols, columns=columns, at=at)
