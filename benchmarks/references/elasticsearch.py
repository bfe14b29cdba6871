"""Elasticsearch: the _bulk API, NDJSON, one `create` action per document with server-made ids (the
tool's default; with no _id, `create` and `index` are the same write: a new document under a
server-made id). The index has the tool's default settings on this single node: 1 shard, 0
replicas, refresh every 1 s, the translog fsynced per request, a strict mapping of the tool's field
types. Done when the server answers without errors (an answer with "errors": true fails loudly);
the rate is counted until the documents are countable after a refresh."""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import numpy as np

from ._events import Events
from ._http import Http

TARGET = "elasticsearch-local"
CONTRACT = "bulk request answered without errors (translog fsynced per request); timed until the last acknowledgement as the tool is (searchable after the next refresh; the count refreshes and checks)"
COUNTABLE_WHEN_ACKNOWLEDGED = True
INDEX = "ref_events"
_URL = urlsplit(os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200"))
_JSON = {"Content-Type": "application/json"}
_NDJSON = {"Content-Type": "application/x-ndjson"}
DEFINITION = {
    "settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "1s", "translog": {"durability": "request"}}},
    "mappings": {"dynamic": "strict", "properties": {
        "timestamp": {"type": "date", "format": "epoch_millis"}, "device_id": {"type": "keyword"},
        "sequence_number": {"type": "long"}, "temperature": {"type": "double"}}},
}


def _http() -> Http:
    return Http(_URL.hostname, _URL.port or 9200)


def reset() -> None:
    http = _http()
    http.request("DELETE", f"/{INDEX}", query={"ignore_unavailable": "true"})
    http.request("PUT", f"/{INDEX}", json.dumps(DEFINITION).encode(), headers=_JSON)


def drop() -> None:
    _http().request("DELETE", f"/{INDEX}", query={"ignore_unavailable": "true"})


def count() -> int:
    http = _http()
    http.request("POST", f"/{INDEX}/_refresh")
    return int(http.json("GET", f"/{INDEX}/_count")["count"])


class Writer:
    def __init__(self, worker: int, batch: int):
        self.events, self.http = Events(worker, batch), _http()
        self.prefix = np.array([f'{{"create":{{}}}}\n{{"device_id":"{d}","timestamp":' for d in self.events.devices])

    def body(self, index: int) -> bytes:
        times, device, sequence, values = self.events.columns(index)
        lines = [f'{p}{t},"sequence_number":{s},"temperature":{v:.2f}}}\n'
                 for p, t, s, v in zip(self.prefix[device].tolist(), times.tolist(), sequence.tolist(), values.tolist())]
        return "".join(lines).encode()

    def send(self, body: bytes) -> None:
        answer = self.http.request("POST", f"/{INDEX}/_bulk", body, query={"filter_path": "errors,items.*.error"}, headers=_NDJSON)
        if json.loads(answer).get("errors"):
            raise SystemExit(f"bulk insert into {INDEX} failed: {answer[:300]!r}")
