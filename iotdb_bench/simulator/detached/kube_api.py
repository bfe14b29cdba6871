"""The few calls the conductor makes to the Kubernetes API, on the standard library: the pod's
service-account token and CA, the API server from the environment Kubernetes gives every pod."""

from __future__ import annotations

import http.client
import json
import os
import ssl
import time
from pathlib import Path
from typing import Any

ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
TIMEOUT_S = 10.0
ATTEMPTS = 4


class KubeError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class KubeApi:
    def __init__(self, account: Path = ACCOUNT):
        """The API server and the credentials Kubernetes gives every pod (`account`: its token and ca.crt)."""
        try:
            self.host, self.port = os.environ["KUBERNETES_SERVICE_HOST"], int(os.environ.get("KUBERNETES_SERVICE_PORT", "443"))
        except KeyError:
            raise KubeError("not in a pod: KUBERNETES_SERVICE_HOST is not set") from None
        self.token_file = account / "token"
        self.context = ssl.create_default_context(cafile=str(account / "ca.crt"))

    def get(self, path: str) -> dict[str, Any]:
        return self.request("GET", path)

    def merge_patch(self, path: str, patch: dict[str, Any]) -> dict[str, Any]:
        return self.request("PATCH", path, patch, "application/merge-patch+json")

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST a new object to the collection at `path`."""
        return self.request("POST", path, body)

    def delete(self, path: str, body: dict[str, Any] | None = None) -> None:
        try:
            self.request("DELETE", path, body)
        except KubeError as error:
            if error.status != 404:
                raise

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, content_type: str = "application/json") -> dict[str, Any]:
        """One call, tried again a few times when the API server is away or busy (5xx, 429)."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return self._once(method, path, body, content_type)
            except KubeError as error:
                if attempt == ATTEMPTS or (error.status is not None and error.status < 500 and error.status != 429):
                    raise
            time.sleep(attempt)
        raise AssertionError("unreachable")

    def _once(self, method: str, path: str, body: dict[str, Any] | None, content_type: str) -> dict[str, Any]:
        # Read at each call: the kubelet renews the bound token in place.
        headers = {"Authorization": f"Bearer {self.token_file.read_text().strip()}", "Accept": "application/json"}
        payload = None
        if body is not None:
            payload, headers["Content-Type"] = json.dumps(body).encode(), content_type
        connection = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=TIMEOUT_S)
        try:
            connection.request(method, path, payload, headers)
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            raise KubeError(f"{method} {path}: {error}") from None
        finally:
            connection.close()
        if response.status >= 400:
            try:
                message = json.loads(data).get("message", "")
            except ValueError:
                message = data[:200].decode(errors="replace")
            raise KubeError(f"{method} {path}: {response.status} {message}", response.status)
        return json.loads(data) if data else {}
