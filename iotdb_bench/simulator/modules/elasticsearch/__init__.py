"""Elasticsearch (7, 8, 9) and OpenSearch (1, 2, 3) through their common REST API.

The official Python clients refuse servers of the "wrong" product or major version (elasticsearch-py
9 rejects Elasticsearch 8, elasticsearch-py >= 7.14 rejects OpenSearch), so this module speaks the
REST API that all of them share through one plain HTTP client (httpx, already a dependency of the
simulator; the writes through the standard library's http.client, simulator/wire/http_post.py). Only APIs present in every one of them are used: index create/delete, _bulk, _doc,
_refresh, _count, _search aggregations (min, max, stats, composite, top_hits) and _stats.

Insert modes:
- single (no --batch): one index request per event (`refresh=false`): it returns once the event is
  in the translog of every active copy (fsync'ed per request with `translog_durability=request`, the
  default), so it is durable, but it becomes visible to searches only at the next refresh;
- batch: one _bulk request per batch (NDJSON, the next batch's built while the server works on the
  current one); events that the server rejected with 429 (queue full) are retried, a bounded number
  of times.
Primary keys: `db` lets the server generate ids, `client` uses the event's client key as `_id` (with
the `create` operation, so a duplicate key is an error, as with a SQL primary key).

Reading back: device-downsample is a `date_histogram` (fixed_interval 1m) under a term and range
filter; scans use the scroll API (a search context paged `size` hits at a time, sorted by
timestamp). The record of expected answers is a document in an index of its own,
`iotbench_expected`, whose mapping indexes nothing.

TSBS's cpu-only and devops data (`--schema tsbs-cpu`, `tsbs-devops`) is an index per measurement, a
document per row with the host's tags and the measurement's own (tsbs_layout.py), and TSBS's 15 DevOps
query types are exact searches of the `cpu` index (tsbs_queries.py). TSBS's iot data (`--schema tsbs-iot`):
the `readings` and `diagnostics` indices, TSBS's null tags and fields absent from the documents, and
its 13 IoT query types exact searches of them, the trucks' tags joined by name (tsbs_iot.py).
"""

from __future__ import annotations

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, PrepareNext
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, played_by
from iotdb_bench.simulator.modules.elasticsearch.connection import SearchConnection, SearchServerError
from iotdb_bench.simulator.modules.elasticsearch.options import MAX_PAGE, PRODUCT, ElasticsearchOptions
from iotdb_bench.simulator.modules.elasticsearch.reader import SearchReader
from iotdb_bench.simulator.modules.elasticsearch.records import SearchRecords
from iotdb_bench.simulator.modules.elasticsearch.schema import STORAGE_NOTE, SearchSchema
from iotdb_bench.simulator.modules.elasticsearch.writer import Rejected, SearchWriter
from iotdb_bench.simulator.spec import TSBS_TABLES, PrimaryKey, RunSpec

__all__ = ["Module", "Rejected", "SearchServerError"]


class Module(DatabaseModule):
    Options = ElasticsearchOptions
    options: ElasticsearchOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, tsbs_shapes=frozenset(TSBS_TABLES), primary_keys=frozenset({PrimaryKey.db, PrimaryKey.client}), measurements=True, sensors=True, markers=True,
        drivers=("httpx",),
        # The next batch is generated and encoded once a _bulk request is on the wire (about 0.2 ms
        # per 1000 events against milliseconds of server work), without a helper thread's hand-offs.
        prepare_next=PrepareNext.during_call, query_languages=("elasticsearch",),
    )
    schema, writer, reader, records = played_by(SearchSchema, SearchWriter, SearchReader, SearchRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self.connection = SearchConnection(self.options)  # the HTTP client to one node, shared by the roles
        self.indices = ",".join(spec.table_names)  # the run's indices, as a request path names them

    def validate(self) -> None:
        super().validate()
        if (self.options.username is None) != (self.options.password is None):
            raise ModuleError("options 'username' and 'password' of the elasticsearch module go together")
        if self.options.key_order != "device" and self.spec.primary_key is not PrimaryKey.client:
            raise ModuleError("module 'elasticsearch': key_order orders the client's keys: it needs --primary-key client")
        if self.spec.task == "scan" and self.spec.scan_page_size > MAX_PAGE:
            raise ModuleError(f"{PRODUCT} returns at most {MAX_PAGE:,} hits per scroll page (index.max_result_window): "
                              f"use --page-size {MAX_PAGE} or less")

    def notes(self) -> list[str]:
        notes = [STORAGE_NOTE] if self.spec.task == "insert" else []
        if self.layout.shape in ("slim", "light"):
            index = "lack of an index" if self.layout.shape == "slim" else "one secondary index"
            notes.append(f"Elasticsearch indexes every field: --schema {self.layout.shape}'s {index} does not apply")
        return notes

    def batch_kind(self) -> str:
        return "_bulk request"

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        return self.url_address(self.options.hosts[0], 9200)

    def connect(self) -> None:
        self.connection.connect()

    def close(self) -> None:
        self.connection.close()
