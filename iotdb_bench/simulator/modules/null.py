"""The `null` target: everything a real module does on the client, nothing sent anywhere.

Events are generated and encoded exactly as for PostgreSQL (binary COPY buffers by default, or
the row tuples row-wise drivers get with `encoding=rows`), every call is timed and recorded like a
real one, but the call itself returns at once. A run against `null` therefore measures the harness
alone: the ceiling any database figure of the same machine can reach.

There is no database to count in, so the collector's count check is reported as not applicable
(never as passed), and there are no server-side counters or sizes. Nothing is stored, so no record
of expected answers is kept either: query answers are "not checked", a scan reads nothing.

Its roles are small, so they live here side by side: a schema that counts nothing, a writer that
encodes and (with `call_delay_ms`) sleeps, a reader of empty answers, and an empty record store.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Location, No, PrepareNext
from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleOptions, Query, ReaderRole, RecordsRole, Role, SchemaRole, WriterRole, played_by
from iotdb_bench.simulator.spec import QUERY_NAMES, TSBS_QUERIES, TSBS_TABLES, PrimaryKey
from iotdb_bench.simulator.wire.pg_copy import CopyRowEncoder
from iotdb_bench.simulator.workload.events import EventBatch


class NullOptions(ModuleOptions):
    encoding: Literal["copy", "rows"] = "copy"
    # A throttled stand-in for a database (tests of --rate and --find-max-rate): each call sleeps this
    # long, so W workers in batches of B hold at most W x B / delay events per second.
    call_delay_ms: float = Field(0.0, ge=0, le=10_000)


NullRole = Role["Module", NullOptions]  # the base of the module's role classes


class NullSchema(NullRole, SchemaRole):
    def setup(self) -> None:
        pass

    def server_version(self) -> str:
        return "none (the null target sends nothing anywhere)"

    def count(self) -> None:
        """None: nothing was stored, so the collector reports the count check as not applicable."""
        return None


class NullWriter(NullRole, WriterRole):

    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        self._copy_rows = {table: CopyRowEncoder(layout, self._with_key) for table, layout in self.layouts.items()}

    def prepare_batch(self, batch: EventBatch) -> Any:
        if self.options.encoding == "copy":
            return [(table, self._copy_rows[table].encode(part)) for table, part in self.per_table(batch)]
        return [(table, self._rows(table, part)) for table, part in self.per_table(batch)]

    def prepare_batches(self, chunk: EventBatch, size: int) -> list[Any]:
        if self.options.encoding == "copy" and len(self.spec.table_names) == 1:  # as PostgresWriter does
            [table] = self.spec.table_names
            return self._copy_rows[table].prepared_for_one_table(table, chunk, size)
        return super().prepare_batches(chunk, size)

    def insert_batch(self, prepared: Any) -> None:
        if self.options.call_delay_ms:
            time.sleep(self.options.call_delay_ms / 1000)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, tuple[Any, ...]]]:
        return self.rows_per_table(batch, self._rows)

    def insert_single(self, item: tuple[str, tuple[Any, ...]]) -> None:
        if self.options.call_delay_ms:
            time.sleep(self.options.call_delay_ms / 1000)

    def commit(self) -> None:
        pass

    def _rows(self, table: str, batch: EventBatch) -> list[tuple[Any, ...]]:
        return self.layouts[table].python_rows(batch, key=batch.client_key if self._with_key else None)


class NullReader(NullRole, ReaderRole):
    def queries(self) -> dict[str, Query]:
        return {name: (lambda: Answer([])) for name in QUERY_NAMES}

    def scan_devices(self) -> list[str]:
        return []

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        return iter(())


class NullRecords(NullRole, RecordsRole):
    """Nothing is stored, so no record is kept (capabilities.record says why)."""


class Module(DatabaseModule):
    Options = NullOptions
    options: NullOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, measurements=True, sensors=True, transactions=True, record=No("the null target stores nothing"),
        # TSBS's rows are made and encoded as for PostgreSQL: the client's ceiling for them too.
        tsbs_shapes=frozenset(TSBS_TABLES), tsbs_queries_refused=tuple((name, "the null target stores nothing to query") for name in TSBS_QUERIES),
        location=Location.none,
        # Its calls send nothing, so there is no wait to overlap: a helper thread would only add its
        # hand-off to what this target measures, the client's own work per event.
        prepare_next=PrepareNext.in_turn,
    )
    schema, writer, reader, records = played_by(NullSchema, NullWriter, NullReader, NullRecords)

    def batch_kind(self) -> str:
        return f"nothing sent ({self.options.encoding} encoding)"

    def notes(self) -> list[str]:
        if self.options.call_delay_ms:
            return [f"the null target stores nothing; each call sleeps {self.options.call_delay_ms:g} ms (call_delay_ms)"]
        return ["the null target stores nothing: its figures are the client's own ceiling on this machine"]

    def connect(self) -> None:
        pass
