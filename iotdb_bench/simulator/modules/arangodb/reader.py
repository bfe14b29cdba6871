"""The arangodb module's read side: the six AQL queries of queries.py (bounded by `max_runtime`), and
scans through streaming AQL cursors, a batch of `--page-size` documents per fetch."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.arangodb.options import ArangodbRole
from iotdb_bench.simulator.modules.arangodb.queries import ANSWER_FIELDS, CURSOR_BATCH_SIZE, DEVICES, QUERIES, SCAN
from iotdb_bench.simulator.modules.base import Query, ReaderRole


class ArangodbReader(ArangodbRole, ReaderRole):
    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        return {name: self._query(name, aql) for name, aql in QUERIES.items()}

    def _query(self, name: str, aql: str) -> Query:
        fields = ANSWER_FIELDS.get(name)

        def rows(documents: Sequence[Any]) -> list[tuple[Any, ...]]:
            return [tuple(document[field] for field in fields) if fields else (document,) for document in documents]

        def run() -> Answer:
            options: dict[str, Any] = {"batch_size": CURSOR_BATCH_SIZE}
            if self.spec.query_timeout:
                options["max_runtime"] = self.spec.query_timeout
            cursor = self.module.db.aql.execute(aql, **options)
            try:
                return Answer(list(cursor), rows)
            except BaseException:
                cursor.close(ignore_missing=True)  # a drained cursor is gone already; a broken one is freed
                raise

        return run

    def scan_devices(self) -> list[str]:
        devices: set[str] = set()
        for name in self.spec.table_names:
            devices.update(self.module.db.aql.execute(DEVICES, bind_vars={"@collection": name}, batch_size=CURSOR_BATCH_SIZE))
        return sorted(devices)

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device lives in one collection; the others return nothing.
        for name in self.spec.table_names:
            cursor = self.module.db.aql.execute(SCAN, bind_vars={"@collection": name, "device": device}, batch_size=page_size, stream=True)
            try:
                while True:
                    batch = cursor.batch()
                    if batch:
                        yield np.fromiter((reading[0] for reading in batch), dtype=np.int64, count=len(batch))
                        batch.clear()
                    if not cursor.has_more():
                        break
                    cursor.fetch()
            finally:
                cursor.close(ignore_missing=True)
