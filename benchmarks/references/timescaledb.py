"""TimescaleDB: binary COPY through psycopg2 (not the tool's psycopg 3), one COPY per batch in
autocommit (the server commits each COPY), into a hypertable shaped as the tool's timescaledb module
makes it by default: a BIGSERIAL key with the partitioning column in the primary key, every column
NOT NULL, chunks of one day on `timestamp`. The COPY buffers are reference_copy.py's format (header,
per row a field count and length-prefixed big-endian values, trailer), filled from `_events`. Done
when the COPY has returned (committed); its rows are countable then."""

from __future__ import annotations

import io
import os

import numpy as np
from reference_copy import DEVICE_ID_BYTES, HEADER, PG_EPOCH_US, ROW, TRAILER

from . import _dbapi
from ._events import Events

TARGET = "timescaledb-local"
CONTRACT = "COPY returned in autocommit (committed); countable then (timed until the last acknowledgement, the count checks)"
COUNTABLE_WHEN_ACKNOWLEDGED = True
TABLE = "ref_events"
CREATE_TABLE = (
    f"CREATE TABLE {TABLE} (id BIGSERIAL, timestamp TIMESTAMPTZ NOT NULL, device_id VARCHAR({DEVICE_ID_BYTES}) NOT NULL, "
    "sequence_number BIGINT NOT NULL, temperature DOUBLE PRECISION NOT NULL, PRIMARY KEY (id, timestamp))"
)
HYPERTABLE = f"SELECT create_hypertable('{TABLE}', 'timestamp', chunk_time_interval => INTERVAL '1 day')"
COPY = f"COPY {TABLE} (timestamp, device_id, sequence_number, temperature) FROM STDIN (FORMAT BINARY)"


def _connect():
    import psycopg2

    connection = psycopg2.connect(host=os.environ.get("TIMESCALEDB_HOST", "127.0.0.1"), port=os.environ.get("TIMESCALEDB_PORT", "5433"),
                                  user=os.environ.get("PGUSER", "postgres"), password=os.environ.get("PGPASSWORD", ""),
                                  dbname=os.environ.get("TIMESCALEDB_DATABASE", "postgres"))
    connection.autocommit = True
    return connection


def reset() -> None:
    connection = _connect()
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS timescaledb")
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cursor.execute(CREATE_TABLE)
        cursor.execute(HYPERTABLE)
    connection.close()


def drop() -> None:
    _dbapi.drop_table(_connect, TABLE)


count = _dbapi.counter(_connect, TABLE)


class Writer:
    def __init__(self, worker: int, batch: int):
        self.events, self.connection = Events(worker, batch), _connect()
        self.cursor = self.connection.cursor()
        self.devices = self.events.devices.astype(f"S{DEVICE_ID_BYTES}")
        self.rows = np.zeros(batch, dtype=ROW)
        self.rows["fields"] = 4
        for name, size in (("timestamp", 8), ("device", DEVICE_ID_BYTES), ("sequence", 8), ("temperature", 8)):
            self.rows[f"{name}_length"] = size

    def body(self, index: int) -> bytes:
        times, device, sequence, values = self.events.columns(index)
        rows = self.rows
        rows["timestamp"] = times * 1000 - PG_EPOCH_US
        rows["device"] = self.devices[device]
        rows["sequence"] = sequence
        rows["temperature"] = values
        return HEADER + rows.tobytes() + TRAILER

    def send(self, body: bytes) -> None:
        self.cursor.copy_expert(COPY, io.BytesIO(body))
