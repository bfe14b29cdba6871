"""The network path between a laptop's CLI and the real API server (or any TCP server), as a relay a
test can cut.

Not a fake: every byte goes to the local cluster's real kube-apiserver (TLS passes through; its
certificate names 127.0.0.1). A test points the CLI at the relay with a kubeconfig of its own and
then cuts every open connection and refuses new ones for a while (a Wi-Fi change, a load balancer's
idle timeout, an API server away), without disturbing anything else that uses the cluster.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

import yaml

CHUNK = 64 * 1024


class TcpLink:
    """A TCP relay to `upstream` on a local port; cut() drops every open connection and refuses new ones
    until restore()."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._up = threading.Event()
        self._up.set()
        self._closed = threading.Event()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.refused = 0  # connections refused while cut
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Drop every open connection and refuse new ones until restore()."""
        self._up.clear()
        with self._lock:
            for sock in list(self._open):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def restore(self) -> None:
        self._up.set()

    def close(self) -> None:
        self._closed.set()
        self.cut()
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self._up.is_set():
                self.refused += 1
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            client.settimeout(None)
            server.settimeout(None)
            with self._lock:
                self._open.update((client, server))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(CHUNK)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
                with self._lock:
                    self._open.discard(sock)


class ApiLink(TcpLink):
    """The relay in front of the cluster's API server, with a kubeconfig that goes through it."""

    def __init__(self, kubeconfig: Path, folder: Path):
        config = yaml.safe_load(kubeconfig.read_text())
        server = urlsplit(config["clusters"][0]["cluster"]["server"])
        super().__init__((server.hostname, server.port or 443))
        for cluster in config["clusters"]:
            cluster["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        self.kubeconfig = folder / "kubeconfig-through-link"
        self.kubeconfig.write_text(yaml.safe_dump(config))
