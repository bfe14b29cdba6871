"""A local TCP port that reaches a pod's port through the Kubernetes API, like `kubectl port-forward`.

Made with the kubernetes client's own port-forward websocket (`kubernetes.stream.portforward`), not
with the client's global socket patching: a listener on 127.0.0.1 accepts ordinary connections (so
any HTTP client works unchanged) and relays each one through a websocket of its own. The CLI keeps
its connection to the collector alive, so a run normally needs a single websocket.
"""

from __future__ import annotations

import json
import logging
import re
import select
import socket
import threading

from kubernetes.client import ApiClient, Configuration, CoreV1Api
from kubernetes.stream import portforward

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
# Consecutive websockets the API server refused (401, 403: no permission for pods/portforward)
# before the port-forward counts as broken. Other failures (API server restarting or unreachable, a
# proxy's idle timeout) pass: the next connection opens a new websocket, and the follower decides
# how long it waits for one.
REFUSALS_TOLERATED = 3
REFUSED = re.compile(r"Handshake status (401|403)\b")
# Blocking calls wake up this often to notice close(): closing a socket from another thread does
# not interrupt a select() or accept() waiting on it.
POLL_S = 0.2


class PodPortForward:
    def __init__(self, configuration: Configuration, namespace: str, pod: str, port: int):
        self.configuration, self.namespace, self.pod, self.port = configuration, namespace, pod, port
        self.closed = threading.Event()
        self.last_error: str | None = None
        self.refusals = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(POLL_S)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, name=f"port-forward {pod}:{port}", daemon=True).start()

    def problem(self) -> str | None:
        """Why the pod can never be reached (no RBAC permission for pods/portforward), once it is clear."""
        return self.last_error if self.refusals >= REFUSALS_TOLERATED else None

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
            if REFUSED.search(_handshake(error)):
                self.refusals += 1
            self.last_error = f"cannot port-forward to pod {self.pod}: {_reason(error)}"
            log.debug(self.last_error)
            local.close()
            return
        self.refusals = 0
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
        directions = ((local, remote), (remote, local))
        while not self.closed.is_set():
            try:
                readable, _, _ = select.select([local, remote], [], [], POLL_S)
                for source, sink in directions:
                    if source in readable:
                        data = source.recv(CHUNK)
                        if not data:
                            return
                        sink.sendall(data)
            except OSError:
                return


def _handshake(error: BaseException) -> str:
    """The text of the failed handshake anywhere in the chain of exceptions ("" if none)."""
    cause: BaseException | None = error
    while cause is not None:
        reason = getattr(cause, "reason", None)
        if isinstance(reason, str) and "Handshake status" in reason:
            return reason
        cause = cause.__context__
    return str(error) if "Handshake status" in str(error) else ""


def _reason(error: BaseException) -> str:
    """The API server's message from a failed websocket handshake. The client wraps it in an
    ApiException (reason: "Handshake status 403 Forbidden -+-+- headers -+-+- body") and, in some
    versions, loses even that in an AttributeError raised while handling it."""
    cause: BaseException | None = error
    while cause is not None:
        reason = getattr(cause, "reason", None)
        if isinstance(reason, str) and reason:
            parts = reason.split(" -+-+- ")
            try:
                return json.loads(parts[-1])["message"]
            except (ValueError, KeyError, TypeError):
                return parts[0]
        cause = cause.__context__
    return " ".join(str(error).split())
