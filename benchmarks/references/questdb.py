"""QuestDB: InfluxDB line protocol over HTTP (POST /write), one request per batch, the device a
symbol. Done when the server answers; the rate is counted until the rows are visible (QuestDB applies
its write-ahead log after answering)."""

from __future__ import annotations

import os

import numpy as np

from ._events import Events
from ._http import Http

TARGET = "questdb-local"
CONTRACT = "HTTP request answered (acknowledged); timed until the rows are countable"
TABLE = "ref_events"


def _http() -> Http:
    return Http(os.environ.get("QUESTDB_HOST", "127.0.0.1"), int(os.environ.get("QUESTDB_HTTP_PORT", "9000")))


def reset() -> None:
    _http().request("GET", "/exec", query={"query": f"DROP TABLE IF EXISTS {TABLE}"})


def drop() -> None:
    reset()


def count() -> int:
    try:
        answer = _http().json("GET", "/exec", {"query": f"SELECT count() FROM {TABLE}"})
    except SystemExit:  # no table yet
        return 0
    return int(answer["dataset"][0][0]) if answer.get("dataset") else 0


class Writer:
    def __init__(self, worker: int, batch: int):
        self.events, self.http = Events(worker, batch), _http()
        self.prefix = np.array([f"{TABLE},device_id={d} sequence_number=" for d in self.events.devices])

    def body(self, index: int) -> bytes:
        times, device, sequence, values = self.events.columns(index)
        lines = [f"{p}{s}i,temperature={v} {t}000000\n" for p, s, v, t in zip(self.prefix[device].tolist(), sequence.tolist(), values.tolist(), times.tolist())]
        return "".join(lines).encode()

    def send(self, body: bytes) -> None:
        self.http.request("POST", "/write", body, query={"precision": "n"})
