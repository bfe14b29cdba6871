"""MariaDB / MySQL: one multi-row INSERT of a batch's rows per call through PyMySQL, the statement
written as SQL text (every value a generated number, timestamp or fixed-alphabet id: nothing to
escape), in autocommit: each statement is its own committed transaction. The table is shaped as the
tool's mysql module makes it by default (an AUTO_INCREMENT key, DATETIME(3), every column NOT NULL,
the server's default engine). Done when the statement has returned (committed); its rows are
countable then."""

from __future__ import annotations

import os

from . import _dbapi
from ._events import Events

TARGET = "mysql-local"
CONTRACT = "multi-row INSERT returned in autocommit (committed); countable then (timed until the last acknowledgement, the count checks)"
COUNTABLE_WHEN_ACKNOWLEDGED = True
TABLE = "ref_events"
CREATE_TABLE = (
    f"CREATE TABLE {TABLE} (id BIGINT NOT NULL AUTO_INCREMENT, timestamp DATETIME(3) NOT NULL, device_id VARCHAR(15) NOT NULL, "
    "sequence_number BIGINT NOT NULL, temperature DOUBLE NOT NULL, PRIMARY KEY (id))"
)
INSERT = f"INSERT INTO {TABLE} (timestamp, device_id, sequence_number, temperature) VALUES "


def _connect():
    import pymysql

    connection = pymysql.connect(host=os.environ.get("MYSQL_HOST", "127.0.0.1"), port=int(os.environ.get("MYSQL_PORT", "3306")),
                                 user=os.environ.get("MYSQL_USER", "bench"), password=os.environ.get("MYSQL_PASSWORD", "bench"),
                                 database=os.environ.get("MYSQL_DATABASE", "bench"), autocommit=True)
    with connection.cursor() as cursor:
        cursor.execute("SET time_zone = '+00:00'")
    return connection


def reset() -> None:
    connection = _connect()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cursor.execute(CREATE_TABLE)
    connection.close()


def drop() -> None:
    _dbapi.drop_table(_connect, TABLE)


count = _dbapi.counter(_connect, TABLE)  # autocommit: each count sees what is committed


class Writer:
    def __init__(self, worker: int, batch: int):
        self.events, self.connection = Events(worker, batch), _connect()
        self.cursor = self.connection.cursor()
        self.prefix = [f"','{device}'," for device in self.events.devices.tolist()]

    def body(self, index: int) -> str:
        times, device, sequence, values = self.events.columns(index)
        # ISO 8601 with milliseconds ('2026-01-01T00:00:00.001'): MariaDB and MySQL read the 'T'.
        stamps = times.astype("datetime64[ms]").astype(str).tolist()
        prefix = self.prefix
        return INSERT + ",".join(f"('{t}{prefix[d]}{s},{v!r})" for t, d, s, v in zip(stamps, device.tolist(), sequence.tolist(), values.tolist()))

    def send(self, body: str) -> None:
        self.cursor.execute(body)
