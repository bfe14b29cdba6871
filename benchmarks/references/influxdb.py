"""InfluxDB 1.8: line protocol, POST /write?db=bench&precision=ms, one request per batch, the device a
tag, sequence_number an integer field and temperature a float field of two decimals (as the tool's
influxdb module writes them). Done when the server answers (204); the rate is counted until the
points are countable."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import numpy as np

from ._events import Events
from ._http import Http

TARGET = "influxdb-local"
CONTRACT = "HTTP write answered (204, in the WAL); countable then (timed until the last acknowledgement, the count checks)"
COUNTABLE_WHEN_ACKNOWLEDGED = True
MEASUREMENT = "ref_events"
DATABASE = os.environ.get("INFLUXDB_DB", "bench")
_URL = urlsplit(os.environ.get("INFLUXDB_URL", "http://127.0.0.1:8086"))


def _http() -> Http:
    return Http(_URL.hostname, _URL.port or 8086)


def _influxql(http: Http, statement: str) -> dict:
    """One statement through /query; an error in its result fails loudly."""
    method = "GET" if statement.startswith("SELECT") else "POST"
    result = http.json(method, "/query", {"db": DATABASE, "q": statement, "epoch": "ms"})["results"][0]
    if "error" in result:
        raise SystemExit(f"InfluxDB refused {statement!r}: {result['error']}")
    return result


def reset() -> None:
    http = _http()
    _influxql(http, f'CREATE DATABASE "{DATABASE}"')
    _influxql(http, f'DROP MEASUREMENT "{MEASUREMENT}"')


def drop() -> None:
    _influxql(_http(), f'DROP MEASUREMENT "{MEASUREMENT}"')


def count() -> int:
    series = _influxql(_http(), f'SELECT count(temperature) FROM "{MEASUREMENT}"').get("series")
    return int(series[0]["values"][0][1]) if series else 0


class Writer:
    def __init__(self, worker: int, batch: int):
        self.events, self.http = Events(worker, batch), _http()
        self.prefix = np.array([f"{MEASUREMENT},device_id={d} sequence_number=" for d in self.events.devices])

    def body(self, index: int) -> bytes:
        times, device, sequence, values = self.events.columns(index)
        lines = [f"{p}{s}i,temperature={v:.2f} {t}\n" for p, s, v, t in zip(self.prefix[device].tolist(), sequence.tolist(), values.tolist(), times.tolist())]
        return "".join(lines).encode()

    def send(self, body: bytes) -> None:
        self.http.request("POST", "/write", body, query={"db": DATABASE, "precision": "ms"})
