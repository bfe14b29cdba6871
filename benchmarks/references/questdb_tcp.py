"""QuestDB: InfluxDB line protocol over TCP (port 9009), without acknowledgement: the same lines as the
HTTP reference (references/questdb.py), written to a socket. QuestDB commits what a connection sent
when it closes, so the connection is closed after the last batch, as the tool's `transport=tcp` does;
the rate is counted until the rows are countable."""

from __future__ import annotations

import os
import socket

from . import questdb

TARGET = "questdb-local"
TOOL_OPTIONS = ("--extra-option", "transport=tcp")
CONTRACT = "ILP over TCP, no acknowledgement; timed until the rows are countable"
reset, drop, count = questdb.reset, questdb.drop, questdb.count


class Writer(questdb.Writer):
    def __init__(self, worker: int, batch: int):
        super().__init__(worker, batch)
        self.address = (os.environ.get("QUESTDB_HOST", "127.0.0.1"), int(os.environ.get("QUESTDB_ILP_TCP_PORT", "9009")))
        self.connection: socket.socket | None = None

    def send(self, body: bytes) -> None:
        if self.connection is None:
            self.connection = socket.create_connection(self.address)
        self.connection.sendall(body)

    def flush(self) -> None:
        """Close the connection: QuestDB then commits what it received (the next send opens another)."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None
