"""The elasticsearch module's record of expected answers: a document in an index of its own,
`iotbench_expected`, whose mapping indexes nothing."""

from __future__ import annotations

from urllib.parse import quote

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.elasticsearch.connection import SearchServerError
from iotdb_bench.simulator.modules.elasticsearch.options import SearchRole
from iotdb_bench.simulator.modules.elasticsearch.wording import error_type, reason


class SearchRecords(SearchRole, RecordsRole):
    def store_record(self, text: str) -> None:
        request = self.module.connection.request
        status, answer = request("PUT", f"/{RECORD_NAME}", body={
            "settings": {"index": {"number_of_shards": 1, "number_of_replicas": self.options.replicas}},
            "mappings": {"enabled": False}}, accept=(200, 400))
        if status == 400 and error_type(answer) != "resource_already_exists_exception":
            raise SearchServerError(f"creating index {RECORD_NAME} failed: {reason(answer, '')}")
        request("PUT", f"/{RECORD_NAME}/_doc/{quote(self.record_key(), safe='')}", body={"record": text}, params={"refresh": "true"})

    def stored_record(self) -> str | None:
        status, answer = self.module.connection.request("GET", f"/{RECORD_NAME}/_doc/{quote(self.record_key(), safe='')}", accept=(200, 404))
        return answer["_source"]["record"] if status == 200 and answer.get("found") else None
