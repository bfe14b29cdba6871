"""The elasticsearch module's write path: one _bulk request per batch (the next batch's NDJSON is built
once the current one's request is on the wire; events rejected with 429 sent again, a bounded number
of times), one index request per event (`refresh=false`), with server-made ids or the client's keys
(`create`: a duplicate is an error)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.modules.elasticsearch.connection import SearchServerError, parsed
from iotdb_bench.simulator.modules.elasticsearch.options import TOO_MANY_REQUESTS, SearchRole
from iotdb_bench.simulator.modules.elasticsearch.tsbs_layout import TsbsDocuments
from iotdb_bench.simulator.modules.elasticsearch.wording import reason
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch

# Each item's status is kept (the positions of the events rejected with 429); an answer without errors
# starts with the flag, and then is not decoded (1000 items cost about 0.5 ms of json.loads).
BULK_PARAMS = {"filter_path": "errors,items.*.status,items.*.error"}
NO_ERRORS = b'{"errors":false'


class Rejected(Exception):
    """The server refused events because its write queue was full (429): they can be sent again."""


@dataclass(frozen=True)
class BulkRequest:
    """A prepared batch: the NDJSON body, and one row per event (action and document lines) for retries."""

    rows: np.ndarray
    full_body: bytes

    def __len__(self) -> int:
        return len(self.rows)

    def body(self, positions: list[int] | None = None) -> bytes:
        return self.full_body if positions is None else text_rows.compact(self.rows[positions])


class SearchWriter(SearchRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        # Events the server rejected with 429 (its write queue full) are sent again, the others are not.
        self.retry: Retry = Retry(self.options.max_retries, lambda error: isinstance(error, Rejected), first_delay_s=0.01, max_delay_s=1.0)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        self._tsbs = TsbsDocuments(self.spec.seed, self.spec.all_devices, self.spec.shape) if self.spec.tsbs else None

    def prepare_batch(self, batch: EventBatch) -> BulkRequest:
        action = [text_rows.constant('{"create":{"_index":"'), text_rows.fixed(self._index_of(batch))]
        if self._with_key:
            action += [text_rows.constant('","_id":"'), text_rows.fixed(self._keys(batch))]
        action.append(text_rows.constant('"}}\n'))
        if self._tsbs is not None:  # TSBS's rows: each in its measurement's form (tsbs_layout.py)
            rows = np.concatenate([text_rows.text_rows(action, len(batch)), self._tsbs.rows(batch)], axis=1)
        else:
            rows = text_rows.text_rows(action + self._document(batch), len(batch))
        return BulkRequest(rows, text_rows.compact(rows))

    def insert_batch(self, prepared: BulkRequest) -> None:
        pending: list[int] | None = None  # None: every event of the batch
        attempt = 0
        while True:
            status, text = self.module.connection.write("/_bulk", prepared.body(pending), BULK_PARAMS,
                                                        (200, TOO_MANY_REQUESTS), self.hooks.while_waiting)
            if status == TOO_MANY_REQUESTS:
                rejected = pending if pending is not None else list(range(len(prepared)))
            elif text.startswith(NO_ERRORS) or not (answer := parsed(text)).get("errors"):
                return
            else:
                rejected = self._rejected_items(answer["items"], pending)
            pause = self.retry.pause(Rejected(f"{len(rejected)} events rejected with 429 (write queue full)"), attempt)
            time.sleep(pause or 0.0)  # (a Rejected is always retryable: never None)
            pending, attempt = rejected, attempt + 1

    def _rejected_items(self, items: list[dict[str, Any]], pending: list[int] | None) -> list[int]:
        """Positions (in the prepared batch) of the events rejected with 429; any other error is raised."""
        positions = pending if pending is not None else range(len(items))
        rejected = []
        for position, item in zip(positions, items):
            outcome = next(iter(item.values()))
            if outcome.get("status", 201) < 300:
                continue
            if outcome["status"] != TOO_MANY_REQUESTS:
                raise SearchServerError(f"bulk insert failed: {reason(outcome, 'status ' + str(outcome['status']))}")
            rejected.append(position)
        return rejected

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, bytes]]:
        rows = self._tsbs.rows(batch) if self._tsbs is not None else text_rows.text_rows(self._document(batch), len(batch))
        documents = text_rows.compact(rows).splitlines()
        indices = self._index_of(batch).astype("U").tolist()
        if self._with_key:
            paths = [f"/{index}/_create/{key}" for index, key in zip(indices, self._keys(batch).astype("U").tolist())]
        else:
            paths = [f"/{index}/_doc" for index in indices]
        return list(zip(paths, documents))

    def insert_single(self, item: tuple[str, bytes]) -> None:
        path, document = item

        def send() -> None:
            status, _ = self.module.connection.write(path, document, {"refresh": "false"}, (200, 201, TOO_MANY_REQUESTS))
            if status == TOO_MANY_REQUESTS:
                raise Rejected("event rejected with 429 (write queue full)")

        self.retry.call(send)

    def _index_of(self, batch: EventBatch) -> np.ndarray:
        """Each event's index name; a device always goes to the same index, a TSBS row to its measurement's
        (as EventBatch.split_by_table)."""
        names = np.array(self.spec.table_names, dtype="S")
        of_each: np.ndarray = names[batch.table_of_each(len(names))]
        return of_each

    def _keys(self, batch: EventBatch) -> np.ndarray:
        return batch.time_first_key if self.options.key_order == "time" else batch.client_key

    def _document(self, batch: EventBatch) -> list[np.ndarray]:
        """The text columns of each event's JSON document line (not TSBS's rows: tsbs_layout.py)."""
        columns: list[np.ndarray] = []
        for position, column in enumerate(self.layout.columns):
            columns.append(text_rows.constant(("{" if position == 0 else ",") + f'"{column.name}":'))
            columns += text_rows.value(column.kind, column.values(batch))
        if self._with_key:
            columns += [text_rows.constant(',"id":"'), text_rows.fixed(self._keys(batch)), text_rows.constant('"')]
        columns.append(text_rows.constant("}\n"))
        return columns
