"""The elasticsearch module's schema and counting: one index per run table (strict mapping, its
shards, replicas, refresh interval and translog durability; TSBS's shapes: one per measurement, tsbs_layout.py), counts
after a refresh, the server's version, its indexing counter and the indices' store size."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from iotdb_bench.simulator.modules.base import SchemaRole
from iotdb_bench.simulator.modules.elasticsearch import tsbs_layout
from iotdb_bench.simulator.modules.elasticsearch.connection import SearchServerError
from iotdb_bench.simulator.modules.elasticsearch.options import FIELD_TYPES, PRODUCT, SearchRole
from iotdb_bench.simulator.modules.elasticsearch.wording import error_type, reason
from iotdb_bench.simulator.spec import PrimaryKey

# Where the storage figure comes from, for the run's notes.
STORAGE_NOTE = "storage: the indices' segment files from _stats/store after a refresh, all copies (primaries and replicas)"


class SearchSchema(SearchRole, SchemaRole):
    def setup(self) -> None:
        """The run's indices dropped in one request (--clean) and created side by side: the master node
        creates one in about a second, and several sent together in about the same time (devops: nine)."""
        if self.spec.clean:
            self.module.connection.request("DELETE", f"/{self.module.indices}", params={"ignore_unavailable": "true"})
        with ThreadPoolExecutor(len(self.spec.table_names)) as pool:
            list(pool.map(self._create, self.spec.table_names))

    def _create(self, index: str) -> None:
        status, answer = self.module.connection.request("PUT", f"/{index}", body=self.index_definition(index), accept=(200, 400))
        if status == 400 and error_type(answer) != "resource_already_exists_exception":
            raise SearchServerError(f"creating index {index} failed: {reason(answer, '')}")

    def index_definition(self, index: str) -> dict[str, Any]:
        properties = (tsbs_layout.properties(self.spec.shape, index) if self.spec.tsbs
                      else {column.name: FIELD_TYPES[column.kind] for column in self.layout.columns})
        if self.spec.primary_key is PrimaryKey.client:
            properties["id"] = {"type": "keyword"}
        settings = {
            "number_of_shards": self.options.shards,
            "number_of_replicas": self.options.replicas,
            "refresh_interval": self.options.refresh_interval,
            "translog": {"durability": self.options.translog_durability},
            # The store's size is cached for 10 s by default: the storage figure read right after the
            # last write would miss the run's segments.
            "store": {"stats_refresh_interval": "0ms"},
        }
        # Strict: a document with a field the mapping lacks (e.g. an id into an index made without
        # client keys) is rejected instead of silently changing the schema.
        return {"settings": {"index": settings}, "mappings": {"dynamic": "strict", "properties": properties}}

    def count(self) -> int:
        """Events in the run's indices, after a refresh so that every acknowledged event is counted."""
        self.module.connection.refresh(self.module.indices)
        return int(self.module.connection.request("GET", f"/{self.module.indices}/_count")[1]["count"])

    def server_version(self) -> str:
        """OpenSearch names its distribution at GET /; Elasticsearch 8's test build refuses GET /, so
        the nodes' own versions are asked then (only Elasticsearch reports a build flavor)."""
        request = self.module.connection.request
        status, answer = request("GET", "/", accept=(200, 405))
        if status == 200 and isinstance(answer.get("version"), dict):
            version = answer["version"]
            return f"{str(version.get('distribution') or 'elasticsearch').capitalize()} {version.get('number')}"
        nodes = request("GET", "/_nodes/_local", params={"filter_path": "nodes.*.version,nodes.*.build_flavor"})[1]["nodes"]
        product = "Elasticsearch" if any("build_flavor" in node for node in nodes.values()) else PRODUCT
        return f"{product} {', '.join(sorted({node['version'] for node in nodes.values()}))}"

    def server_counters(self) -> dict[str, int] | None:
        """Documents indexed into the primaries of the run's indices (indexing.index_total)."""
        answer = self.module.connection.request("GET", f"/{self.module.indices}/_stats/indexing",
                                                params={"filter_path": "_all.primaries.indexing.index_total"})[1]
        return {"rows_inserted": int(answer["_all"]["primaries"]["indexing"]["index_total"])}

    def storage_bytes(self) -> int | None:
        """Store size of the run's indices, all copies (primaries and replicas), once a refresh has
        written every acknowledged document into a segment (STORAGE_NOTE)."""
        self.module.connection.refresh(self.module.indices)
        answer = self.module.connection.request("GET", f"/{self.module.indices}/_stats/store",
                                                params={"filter_path": "_all.total.store.size_in_bytes"})[1]
        return int(answer["_all"]["total"]["store"]["size_in_bytes"])
