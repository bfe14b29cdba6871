"""VictoriaMetrics: POST /api/v1/import, JSON lines, one line per device of a batch (its values and
timestamps). Done when the server answers; the rate is counted until the samples are searchable."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from ._events import DEVICES, Events
from ._http import Http

TARGET = "victoriametrics-local"
CONTRACT = "HTTP request answered (acknowledged); timed until searchable after /internal/force_flush"
METRIC = "ref_temperature"
_URL = urlsplit(os.environ.get("VICTORIAMETRICS_URL", "http://127.0.0.1:8428"))


def _http() -> Http:
    return Http(_URL.hostname, _URL.port or 8428)


def reset() -> None:
    http = _http()
    http.request("POST", "/api/v1/admin/tsdb/delete_series", query={"match[]": METRIC})
    http.request("GET", "/internal/resetRollupResultCache")


def drop() -> None:
    _http().request("POST", "/api/v1/admin/tsdb/delete_series", query={"match[]": METRIC})


def count() -> int:
    http = _http()
    http.request("GET", "/internal/force_flush")
    result = http.json("GET", "/api/v1/query", {"query": f"sum(count_over_time({METRIC}[3650d]))", "time": "2030-01-01T00:00:00Z"})["data"]["result"]
    return round(float(result[0]["value"][1])) if result else 0


class Writer:
    def __init__(self, worker: int, batch: int):
        self.events, self.http = Events(worker, batch), _http()

    def body(self, index: int) -> bytes:
        times, device, _, values = self.events.columns(index)
        lines = []
        for d in range(DEVICES):
            mine = device == d
            values_text, times_text = ",".join(map(repr, values[mine].tolist())), ",".join(map(str, times[mine].tolist()))
            lines.append(f'{{"metric":{{"__name__":"{METRIC}","device_id":"{self.events.devices[d]}"}},'
                         f'"values":[{values_text}],"timestamps":[{times_text}]}}\n')
        return "".join(lines).encode()

    def send(self, body: bytes) -> None:
        self.http.request("POST", "/api/v1/import", body)
