"""A local TCP port that reaches a pod's port through the Kubernetes API, like `kubectl port-forward`.

Made with the kubernetes client's own port-forward websocket (`kubernetes.stream.portforward`), not
with the client's global socket patching: a listener on 127.0.0.1 accepts ordinary connections (so
httpx works unchanged) and relays each one through a websocket of its own. httpx keeps its
connection alive, so a run normally needs a single websocket.
"""

from __future__ import annotations

import logging
import select
import socket
import threading

from kubernetes.client import ApiClient, Configuration, CoreV1Api
from kubernetes.stream import portforward

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
# Blocking calls wake up this often to notice close(): closing a socket from another thread does
# not interrupt a select() or accept() waiting on it.
POLL_S = 0.2


class PodPortForward:
    def __init__(self, configuration: Configuration, namespace: str, pod: str, port: int):
        self.configuration, self.namespace, self.pod, self.port = configuration, namespace, pod, port
        self.closed = threading.Event()
        self.last_error: str | None = None
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(POLL_S)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, name=f"port-forward {pod}:{port}", daemon=True).start()

    def close(self) -> None:
        self.closed.set()
        self._listener.close()

    def __enter__(self) -> PodPortForward:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                local, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # the listener was closed
            local.settimeout(None)
            threading.Thread(target=self._relay, args=(local,), daemon=True).start()

    def _relay(self, local: socket.socket) -> None:
        try:
            # One ApiClient per websocket: `portforward` swaps the client's request method while it
            # opens the connection, so a shared client must not be used from two threads.
            api = CoreV1Api(ApiClient(self.configuration))
            forward = portforward(api.connect_get_namespaced_pod_portforward, self.pod, self.namespace, ports=str(self.port))
        except Exception as error:  # pod gone, API unreachable: the HTTP client sees a closed connection
            self.last_error = f"port-forward to pod {self.pod} failed: {error}"
            log.debug(self.last_error)
            local.close()
            return
        remote = forward.socket(self.port)
        try:
            self._pump(local, remote)
        finally:
            local.close()
            forward.close()
            error = forward.error(self.port)
            if error:
                self.last_error = f"port-forward to pod {self.pod}: {error.strip()}"

    def _pump(self, local: socket.socket, remote) -> None:
        peers = {local.fileno(): remote, remote.fileno(): local}
        sources = {local.fileno(): local, remote.fileno(): remote}
        while not self.closed.is_set():
            try:
                readable, _, _ = select.select(list(sources.values()), [], [], POLL_S)
                for source in readable:
                    data = source.recv(CHUNK)
                    if not data:
                        return
                    peers[source.fileno()].sendall(data)
            except OSError:
                return
