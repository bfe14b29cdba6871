"""A FAKE ArangoDB (no ArangoDB server can run here): enough of its HTTP API for the real
python-arango client, and the module's AQL answered from the stored documents (see
tests/modules/test_arangodb_wire_fake.py, and the contract suite's arangodb target)."""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field

from iotdb_bench.simulator.modules.arangodb import DEVICES, QUERIES, SCAN
from tests.modules.fake_http_service import FakeServiceHandler

PASSWORD = "s3cret-arango"
CURSOR_PAGE = 4  # smaller than any batchSize the client asks for: every multi-row query pages


@dataclass
class Recorded:
    method: str
    path: str  # without the /_db/{db} prefix
    params: dict[str, str]
    body: object
    database: str
    authorization: str | None


@dataclass
class FakeArangoState:
    collections: dict[str, dict] = field(default_factory=dict)  # name -> creation body
    documents: dict[str, dict[str, dict]] = field(default_factory=dict)  # name -> key -> document
    requests: list[Recorded] = field(default_factory=list)
    cursors: dict[str, tuple[list, int]] = field(default_factory=dict)  # id -> (rows left, page size)
    cursor_page: int = CURSOR_PAGE
    next_id: int = 1
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, method: str, path_start: str) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.method == method and r.path.startswith(path_start)]


class FakeArangoHandler(FakeServiceHandler):
    state: FakeArangoState

    def _handle(self, method: str) -> None:
        url, params, raw = self.read_request()
        body = json.loads(raw) if raw else None
        database, path = "_system", url.path
        if path.startswith("/_db/"):
            _, _, database, rest = path.split("/", 3)
            path = "/" + rest
        state = self.state
        with state.lock:
            state.requests.append(Recorded(method, path, params, body, database, self.headers.get("Authorization")))
            if self.headers.get("Authorization") != "Basic " + base64.b64encode(f"root:{PASSWORD}".encode()).decode():
                return self.send_json(401, {"error": True, "code": 401, "errorNum": 11, "errorMessage": "not authorized to execute this request"})
            status, reply = self._route(method, path, params, body)
        self.send_json(status, reply)

    def _route(self, method: str, path: str, params: dict, body):
        state = self.state
        parts = path.strip("/").split("/")  # e.g. ["_api", "collection", "events", "count"]
        if parts[:2] == ["_api", "collection"]:
            if method == "GET" and len(parts) == 2:
                return 200, {"error": False, "code": 200, "result": [{"name": n, "type": 2} for n in state.collections]}
            if method == "POST" and len(parts) == 2:
                state.collections[body["name"]] = body
                state.documents[body["name"]] = {}
                return 200, {"error": False, "code": 200, "id": "1", "name": body["name"], "type": 2, "status": 3}
            name = parts[2]
            if name not in state.collections:
                return 404, {"error": True, "code": 404, "errorNum": 1203, "errorMessage": "collection or view not found"}
            if method == "DELETE":
                del state.collections[name], state.documents[name]
                return 200, {"error": False, "code": 200, "id": "1"}
            if parts[3:] == ["count"]:
                return 200, {"error": False, "code": 200, "name": name, "count": len(state.documents[name])}
            if parts[3:] == ["figures"]:
                size = 64 * len(state.documents[name])
                return 200, {"error": False, "code": 200, "figures": {"documentsSize": size, "indexes": {"count": 1, "size": size // 4}}}
        if parts[:2] == ["_api", "document"] and method == "POST":
            return self._insert(parts[2], body, params)
        if parts[:2] == ["_api", "document"] and method == "GET" and len(parts) == 4:
            found = state.documents.get(parts[2], {}).get(parts[3])
            return (200, found) if found else (404, {"error": True, "code": 404, "errorNum": 1202, "errorMessage": "document not found"})
        if parts == ["_api", "import"] and method == "POST":
            status, outcome = self._insert(params["collection"], body, params)
            return (201, {"error": False, "created": len(body), "errors": 0, "empty": 0, "updated": 0, "ignored": 0,
                          "details": []}) if status < 300 else (status, outcome)
        if parts == ["_api", "index"] and method == "POST":
            return 201, {"error": False, "code": 201, "id": f"{params['collection']}/{state.next_id}", "isNewlyCreated": True, **body}
        if parts[:2] == ["_api", "cursor"]:
            return self._cursor(method, parts[2:], body)
        if parts == ["_api", "version"] and method == "GET":  # as ArangoDB documents GET /_api/version?details=true
            return 200, {"server": "arango", "version": "3.12.4", "license": "community", "details": {"mode": "server"}}
        return 404, {"error": True, "code": 404, "errorNum": 404, "errorMessage": f"fake has no route for {method} {path}"}

    def _insert(self, name: str, body, params: dict):
        state = self.state
        if name not in state.collections:
            return 404, {"error": True, "code": 404, "errorNum": 1203, "errorMessage": f"collection '{name}' not found"}
        stored, results = state.documents[name], []
        for document in body if isinstance(body, list) else [body]:
            key = document.get("_key")
            if key is None:
                key, state.next_id = str(state.next_id), state.next_id + 1
            if key in stored and params.get("overwrite") not in ("1", "true"):
                return 409, {"error": True, "code": 409, "errorNum": 1210, "errorMessage": "unique constraint violated"}
            stored[key] = {**document, "_key": key}
            results.append({"_id": f"{name}/{key}", "_key": key, "_rev": "_r1"})
        if params.get("silent") in ("1", "true"):  # python-arango sends booleans as 1/0
            return 202, {}
        return 202, results if isinstance(body, list) else results[0]

    def _cursor(self, method: str, rest: list[str], body):
        state = self.state
        if method == "POST" and not rest:
            rows = aql_rows(state, body["query"], body.get("bindVars") or {})
            if rows is None:
                return 400, {"error": True, "code": 400, "errorNum": 1501, "errorMessage": "the fake does not know this query"}
            cursor_id = str(state.next_id)
            state.next_id += 1
            state.cursors[cursor_id] = (rows, min(state.cursor_page, body.get("batchSize") or state.cursor_page))
            return self._page(cursor_id, 201)
        if method == "POST" and rest and rest[0] in state.cursors:
            return self._page(rest[0], 200)
        if method == "DELETE" and rest:
            return (202, {"error": False, "code": 202, "id": rest[0]}) if state.cursors.pop(rest[0], None) is not None else (
                404, {"error": True, "code": 404, "errorNum": 1600, "errorMessage": "cursor not found"})
        return 404, {"error": True, "code": 404, "errorNum": 1600, "errorMessage": "cursor not found"}

    def _page(self, cursor_id: str, status: int):
        rows, size = self.state.cursors[cursor_id]
        page, rest = rows[:size], rows[size:]
        reply = {"error": False, "code": status, "result": page, "hasMore": bool(rest), "cached": False, "extra": {}}
        if rest:
            self.state.cursors[cursor_id] = (rest, size)
            reply["id"] = cursor_id
        else:
            del self.state.cursors[cursor_id]
        return status, reply



def aql_rows(state: FakeArangoState, query: str, binds: dict) -> list | None:
    """The rows of one of the module's AQL queries, computed from the stored documents."""
    if query in (SCAN, DEVICES):
        documents = list(state.documents.get(binds["@collection"], {}).values())
        if query == DEVICES:
            return sorted({d["device_id"] for d in documents})
        return [[d["timestamp"], d["temperature"]] for d in sorted(documents, key=lambda d: d["timestamp"]) if d["device_id"] == binds["device"]]
    name = next((name for name, aql in QUERIES.items() if aql == query), None)
    documents = list(state.documents.get("events", {}).values())
    values = [d["temperature"] for d in documents]
    if name == "count-events":
        return [len(documents)]
    if name == "temperature-min-max":
        return [{"min": min(values, default=None), "max": max(values, default=None)}]
    if name == "temperature-stats":
        return [{"min": min(values, default=None), "avg": sum(values) / len(values) if values else None, "max": max(values, default=None)}]
    if name in ("temperature-stats-per-device", "newest-per-device", "device-downsample"):
        groups: dict = {}
        for d in documents:
            if name == "device-downsample":
                if d["device_id"] != "w000000-d000000" or not 1_767_225_600_000 <= d["timestamp"] < 1_767_229_200_000:
                    continue
                key = d["timestamp"] - d["timestamp"] % 60_000
            else:
                key = d["device_id"]
            groups.setdefault(key, []).append(d)
        if name == "newest-per-device":
            newest = {key: max([d["timestamp"], d["temperature"]] for d in group) for key, group in groups.items()}
            return [{"device_id": key, "timestamp": ts, "temperature": value} for key, (ts, value) in sorted(newest.items())]
        label = "minute" if name == "device-downsample" else "device_id"
        return [{label: key, "min": min(d["temperature"] for d in group), "avg": sum(d["temperature"] for d in group) / len(group),
                 "max": max(d["temperature"] for d in group)} for key, group in sorted(groups.items())]
    return None
