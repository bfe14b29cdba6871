"""The questdb module's batches over ILP/TCP (transport=tcp): the same lines as over HTTP (ilp.py)
written to QuestDB's line protocol port, without any answer. A call ends when the kernel took the
bytes; nothing says whether QuestDB stored them: it drops a connection on a line it cannot take
(and logs why), which only the next write or the count check after the run sees. QuestDB commits
what a connection sent on its own schedule, and at once when it reads the connection's end: `close()`
at the end of the timed phase (the writer's flush) sends that end after the bytes still queued and
returns, as TSBS's loader closes its connections; the count after the run then measures the time
until QuestDB has read and committed them (the report's visibility), not a commit timer."""

from __future__ import annotations

import socket

from iotdb_bench.simulator.modules.questdb.ilp_http import IlpWriteFailed


class IlpOverTcp:
    def __init__(self, host: str, port: int, timeout_s: float):
        self.host, self.port, self._timeout_s = host, port, timeout_s
        self._socket: socket.socket | None = None

    def connect(self) -> socket.socket:
        try:
            self._socket = socket.create_connection((self.host, self.port), timeout=self._timeout_s)
        except OSError as error:
            raise IlpWriteFailed(f"cannot connect to QuestDB's ILP/TCP port at {self.host}:{self.port}: {error}") from None
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self._socket

    def write(self, body: bytes) -> None:
        connection = self._socket if self._socket is not None else self.connect()
        try:
            connection.sendall(body)
        except OSError as error:
            self.close()
            raise IlpWriteFailed(f"ILP/TCP write failed: {error} (QuestDB drops the connection on a line it cannot take; "
                                 "its log says which)") from None

    def close(self) -> None:
        if self._socket is not None:
            try:
                self._socket.shutdown(socket.SHUT_WR)  # the end, after the queued bytes: QuestDB reads them, then commits
            except OSError:
                pass
            finally:
                self._socket.close()
                self._socket = None
