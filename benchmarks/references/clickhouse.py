"""ClickHouse: the native protocol through clickhouse_driver (the database's official Python driver,
not the tool's code), one `INSERT INTO ref_events (...) VALUES` per batch whose rows travel as NumPy
columns (use_numpy, columnar=True). The table is the tool's default on the 18.16 server here: a
MergeTree partitioned by month, sorted by (device_id, timestamp), timestamps Int64 epoch milliseconds
(no DateTime64 before 20.1), device ids String (LowCardinality only experimental before 19.9). Done
when the INSERT returns (its rows written as a part); the rate is counted until they are countable."""

from __future__ import annotations

import os

import numpy as np

from ._events import Events

TARGET = "clickhouse-local"
CONTRACT = "INSERT answered (rows written as a part); countable then (timed until the last acknowledgement, the count checks)"
COUNTABLE_WHEN_ACKNOWLEDGED = True
DATABASE = "iotbench"  # the database of the tool's clickhouse-local target
TABLE = f"{DATABASE}.ref_events"
COLUMNS = "timestamp, device_id, sequence_number, temperature"
CREATE = (f"CREATE TABLE {TABLE} (timestamp Int64, device_id String, sequence_number Int64, temperature Float64) "
          "ENGINE = MergeTree() PARTITION BY toYYYYMM(toDateTime(intDiv(timestamp, 1000))) ORDER BY (device_id, timestamp)")


def _client():
    from clickhouse_driver import Client

    return Client(host=os.environ.get("CLICKHOUSE_HOST", "127.0.0.1"), port=int(os.environ.get("CLICKHOUSE_PORT", "19000")),
                  user="default", password=os.environ.get("CLICKHOUSE_PASSWORD", ""), settings={"use_numpy": True})


def reset() -> None:
    client = _client()
    client.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    client.execute(f"DROP TABLE IF EXISTS {TABLE}")
    client.execute(CREATE)
    client.disconnect()


def drop() -> None:
    client = _client()
    client.execute(f"DROP TABLE IF EXISTS {TABLE}")
    client.disconnect()


def count() -> int:
    client = _client()
    counted = int(client.execute(f"SELECT count() FROM {TABLE}")[0][0])
    client.disconnect()
    return counted


class Writer:
    def __init__(self, worker: int, batch: int):
        self.events, self.client = Events(worker, batch), _client()
        self.insert = f"INSERT INTO {TABLE} ({COLUMNS}) VALUES"

    def body(self, index: int) -> list[np.ndarray]:
        """The batch's columns, in the INSERT's order: what the driver sends."""
        times, device, sequence, values = self.events.columns(index)
        return [times, self.events.devices[device], sequence, values]

    def send(self, body: list[np.ndarray]) -> None:
        self.client.execute(self.insert, body, columnar=True)
