"""The mongodb module's read side: the aggregation pipelines of queries.py, TSBS's (tsbs.py, tsbs_iot.py) and a query
file's (text_answers.py), bounded by `maxTimeMS` for a query run, and scans as `find` per device sorted
by timestamp, a driver batch at a time."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer, epoch_ms
from iotdb_bench.simulator.modules.base import Query, ReaderRole
from iotdb_bench.simulator.modules.mongodb import text_answers, tsbs
from iotdb_bench.simulator.modules.mongodb.options import MongodbRole
from iotdb_bench.simulator.modules.mongodb.queries import ANSWER_FIELDS, TIME_FIELDS, pipelines
from iotdb_bench.simulator.modules.mongodb.tsbs_iot import IotPipelines
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, DevopsQuery
from iotdb_bench.simulator.queries.tsbs_iot import IOT
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME


class MongodbReader(MongodbRole, ReaderRole):
    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        return {name: self._query(name, pipeline) for name, pipeline in pipelines().items()}

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's DevOps query types as aggregation pipelines over the `cpu` collection (tsbs.py), the IoT ones
        over `readings` and `diagnostics` (tsbs_iot.py)."""
        if not self.spec.tsbs:
            return {}
        if self.spec.shape == "tsbs-iot":
            iot = IotPipelines(self._aggregate)
            return {name: functools.partial(iot.query, kind) for name, kind in IOT.items()}
        return {name: functools.partial(self._tsbs_query, kind) for name, kind in DEVOPS.items()}

    def _tsbs_query(self, kind: DevopsQuery, parameters: Parameters) -> Query:
        stages = tsbs.pipeline(kind, parameters)
        return lambda: tsbs.answer(kind, self._aggregate(self.spec.table_names[0], stages))

    def _aggregate(self, collection: str, pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every result document (bounded by maxTimeMS in a query run with --query-timeout)."""
        limit = {"maxTimeMS": int(self.spec.query_timeout * 1000)} if self.spec.task == "query" and self.spec.query_timeout else {}
        return list(self.module.db.get_collection(collection).aggregate(pipeline, allowDiskUse=True, **limit))

    def _query(self, name: str, pipeline: list[dict[str, Any]]) -> Query:
        def rows(documents: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
            found = [[document.get(field) for field in ANSWER_FIELDS[name]] for document in documents]
            if name in TIME_FIELDS:
                for row in found:
                    row[TIME_FIELDS[name]] = epoch_ms(row[TIME_FIELDS[name]])
            return [tuple(row) for row in found] or ([(0,)] if name == "count-events" else [])  # $count of nothing: no document

        def run() -> Answer:
            return Answer(self._aggregate(SINGLE_TABLE_NAME, pipeline), rows)

        return run

    def text_query(self, language: str, text: str) -> Query:
        """A query file's pipeline on the run's collection, its documents as rows (text_answers.py)."""
        self.one_table_queries()
        stages = text_answers.pipeline(text)
        return lambda: Answer(self._aggregate(SINGLE_TABLE_NAME, stages), text_answers.rows)

    def check_text(self, language: str, text: str) -> None:
        """The pipeline explained (planned, nothing read)."""
        self.one_table_queries()
        self.module.db.command({"explain": {"aggregate": SINGLE_TABLE_NAME, "pipeline": text_answers.pipeline(text), "cursor": {}},
                                "verbosity": "queryPlanner"})

    def scan_devices(self) -> list[str]:
        devices: set[str] = set()
        for collection in self.module.collections.values():
            devices.update(group["_id"] for group in collection.aggregate([{"$group": {"_id": "$device_id"}}], allowDiskUse=True))
        return sorted(devices)

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        """The device's documents sorted by timestamp; each driver batch (find, then getMore) is a page."""
        for collection in self.module.collections.values():  # a device lives in one collection
            cursor = collection.find({"device_id": device}, {"_id": 0, "timestamp": 1}, sort=[("timestamp", 1)], batch_size=page_size)
            with cursor:
                page: list[int] = []
                for document in cursor:
                    page.append(epoch_ms(document["timestamp"]))
                    if len(page) == page_size:
                        yield np.array(page, dtype=np.int64)
                        page = []
                if page:
                    yield np.array(page, dtype=np.int64)
