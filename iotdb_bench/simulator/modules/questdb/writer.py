"""The questdb module's write path: ILP over HTTP. A batch is encoded outside the timed call: by
default into ILP text built with NumPy (ilp.py; TSBS's rows: tsbs.py), sent as one request on a
keep-alive connection (ilp_http.py); or into a client buffer (the client's DataFrame path, or `row()`
per event), sent by `Sender.flush(buffer)`. A single insert is one `row()` and its own flush."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, WriterRole, connected
from iotdb_bench.simulator.modules.questdb.ilp import ilp_lines
from iotdb_bench.simulator.modules.questdb.options import QuestdbRole
from iotdb_bench.simulator.modules.questdb.tsbs import TsbsRows, lines_of
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.workload.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES

if TYPE_CHECKING:
    import pandas as pd
    from questdb import Sender
    from questdb._client import Buffer

# One row() call: table, symbols, columns, epoch milliseconds of the designated timestamp.
Call = tuple[str, dict[str, Any], dict[str, Any], int]


class QuestdbWriter(QuestdbRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        # TSBS's shapes: rows with their hosts' tags as symbols, the fields as LONG (tsbs.py): TSBS's lines
        # for any of them, the client's forms for cpu data (devops is written as the module's lines only).
        self._tsbs = TsbsRows(self.layout, self.spec.seed, self.spec.all_devices) if self.spec.shape == "tsbs-cpu" else None
        self._tsbs_lines = lines_of(self.spec.shape, self.spec.seed, self.spec.all_devices) if self.spec.tsbs else None

    def prepare_batch(self, batch: EventBatch) -> Any:
        """The batch's ILP lines (one request): bytes, or a client buffer; built here, outside the timed call."""
        if self.options.batch_encoding == "numpy":
            if self._tsbs_lines is not None:
                return self._tsbs_lines.lines(batch)
            binary = self.module.binary_doubles
            return b"".join(ilp_lines(self.layout, part, table, part.client_key if self._with_key else None, binary)
                            for table, part in self.per_table(batch))
        buffer = self._sender.new_buffer()
        for table, part in self.per_table(batch):
            if self.options.batch_encoding == "dataframe":
                frame, symbols = (self._tsbs.frame(part), list(TAG_NAMES)) if self._tsbs is not None else (self._frame(part), self._symbols)
                buffer.dataframe(frame, table_name=table, symbols=symbols, at="timestamp")
            else:
                for call in self._calls([table] * len(part), part):
                    self._add_row(buffer, call)
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

    def prepare_single(self, batch: EventBatch) -> list[Call]:
        """One row() call per event, in the batch's order."""
        return self._calls(self.table_of_each(batch), batch)

    @property
    def _sender(self) -> Sender:
        return connected(self.module.sender, self.spec.module)

    @property
    def _symbols(self) -> list[str]:
        return [column.name for column in self.layout.columns if column.kind == "device"]

    def _calls(self, tables: list[str], batch: EventBatch) -> list[Call]:
        """The row() call of each event: the device as the symbol, the other columns (and the client's
        key, `id`) as columns; TSBS's rows with their host's tags."""
        if self._tsbs is not None:
            return [(table, *call) for table, call in zip(tables, self._tsbs.calls(batch))]
        calls: list[Call] = []
        for table, values in zip(tables, self.layout.python_rows(batch, key=batch.client_key if self._with_key else None)):
            symbols, columns, at = {}, {}, None
            for column, value in zip(self.layout.columns, values):
                if column.kind == "timestamp":
                    at = value
                elif column.kind == "device":
                    symbols[column.name] = value
                else:
                    columns[column.name] = value
            if self._with_key:
                columns["id"] = values[-1]
            if at is None:
                raise ModuleError(f"--schema {self.layout.shape} has no timestamp column for QuestDB's designated timestamp")
            calls.append((table, symbols, columns, at))
        return calls

    def insert_single(self, item: Call) -> None:
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

    @staticmethod
    def _add_row(target: Buffer | Sender, call: Call) -> None:
        from questdb import TimestampNanos

        table, symbols, columns, at_ms = call
        target.row(table, symbols=symbols, columns=columns, at=TimestampNanos(at_ms * 1_000_000))
