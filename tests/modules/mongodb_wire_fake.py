"""A FAKE MongoDB server for the tests: no MongoDB (nor FerretDB) can be installed on these machines.

It speaks MongoDB's wire protocol over TCP on a loopback port, in threads of the test process: OP_MSG
(body section and document sequences, BSON from the `bson` package that comes with pymongo), the
only opcode pymongo 4 sends (another one drops the connection, which fails the test). It
answers the commands the real pymongo sends for the mongodb module: hello/isMaster, buildInfo, ping,
listCollections, create, drop, createIndexes, insert, update (replacements, upserts), find and
aggregate with a cursor and getMore, explain of an aggregate, killCursors, endSessions. Every command is recorded as received (BSON types kept: Int64, DatetimeMS)
for the tests to check, and documents are stored so counts and queries run end to end.

Aggregation pipelines are evaluated by a small interpreter over the stored documents: the stages
and accumulators the module's pipelines and pymongo's count_documents use ($match on equality,
$in and $gte/$gt/$lte/$lt, $group with $sum/$min/$max/$avg/$first/$last and a key that is a field,
a $dateTrunc (unit second, minute or hour; binSize from MongoDB's reference date
2000-01-01T00:00:00Z) or a document of keys (a field that is missing is left out of it, as
MongoDB leaves it out of an expression object), $sort, $limit, $count, $collStats; the expressions
$cond (its array form) and $isNumber; field paths with dots). It is an interpreter of the documented
semantics, not MongoDB: it says nothing about MongoDB's speed, and what it does not know fails loudly
(an error reply naming the stage, the accumulator or the expression).
"""

from __future__ import annotations

import functools
import socketserver
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import bson
from bson.codec_options import CodecOptions, DatetimeConversion
from bson.objectid import ObjectId

OP_MSG = 2013
MORE_TO_COME = 1 << 1
CODEC = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_MS)  # keeps dates as DatetimeMS
FIRST_BATCH = 101  # the server's default first batch when the command names none
VERSION = "7.0.14"
MAX_WIRE_VERSION = 21  # MongoDB 7.0


@dataclass
class Command:
    name: str
    body: dict
    sequences: dict[str, list[dict]]
    database: str
    opcode: int


@dataclass
class Collection:
    options: dict
    documents: list[dict] = field(default_factory=list)
    indexes: list[dict] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "timeseries" if "timeseries" in self.options else "collection"


@dataclass
class FakeMongoState:
    collections: dict[str, Collection] = field(default_factory=dict)  # "db.name" -> collection
    commands: list[Command] = field(default_factory=list)
    cursors: dict[int, tuple[str, list[dict]]] = field(default_factory=dict)
    next_cursor: int = 7_000_000_001
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, name: str) -> list[Command]:
        with self.lock:
            return [c for c in self.commands if c.name == name]

    def documents(self, namespace: str) -> list[dict]:
        with self.lock:
            return list(self.collections[namespace].documents)


class CommandFailed(Exception):
    def __init__(self, code: int, code_name: str, message: str):
        super().__init__(message)
        self.reply = {"ok": 0.0, "errmsg": message, "code": code, "codeName": code_name}


class FakeMongoHandler(socketserver.BaseRequestHandler):
    state: FakeMongoState

    def handle(self) -> None:
        while True:
            header = self._read(16)
            if header is None:
                return
            length, request_id, _, opcode = struct.unpack("<iiii", header)
            payload = self._read(length - 16)
            if payload is None:
                return
            if opcode == OP_MSG:
                flags, command = self._op_msg(payload)
                reply = self._answer(command)
                if not flags & MORE_TO_COME:
                    self._send(request_id, OP_MSG, struct.pack("<IB", 0, 0) + bson.encode(reply))
            else:
                return  # an opcode the driver does not send: drop the connection

    def _read(self, size: int) -> bytes | None:
        data = b""
        while len(data) < size:
            chunk = self.request.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _send(self, response_to: int, opcode: int, body: bytes) -> None:
        self.request.sendall(struct.pack("<iiii", 16 + len(body), 0, response_to, opcode) + body)

    @staticmethod
    def _op_msg(payload: bytes) -> tuple[int, Command]:
        (flags,) = struct.unpack_from("<I", payload)
        end = len(payload) - (4 if flags & 1 else 0)  # bit 0: a CRC-32C checksum at the end
        position, body, sequences = 4, None, {}
        while position < end:
            kind = payload[position]
            position += 1
            (size,) = struct.unpack_from("<i", payload, position)
            if kind == 0:
                body = bson.decode(payload[position : position + size], CODEC)
            else:
                name_end = payload.index(b"\0", position + 4)
                identifier = payload[position + 4 : name_end].decode()
                sequences[identifier] = bson.decode_all(payload[name_end + 1 : position + size], CODEC)
            position += size
        return flags, Command(next(iter(body)), body, sequences, body.get("$db", "admin"), OP_MSG)

    def _answer(self, command: Command) -> dict:
        with self.state.lock:
            self.state.commands.append(command)
            try:
                return {**self._run(command), "ok": 1.0}
            except CommandFailed as failure:
                return failure.reply

    # -- commands --------------------------------------------------------------------------
    def _run(self, command: Command) -> dict:
        state, body, db = self.state, command.body, command.database
        name = command.name.lower()
        if name in ("hello", "ismaster"):
            return {"helloOk": True, "isWritablePrimary": True, "ismaster": True, "maxBsonObjectSize": 16 * 1024 * 1024,
                    "maxMessageSizeBytes": 48_000_000, "maxWriteBatchSize": 100_000, "localTime": bson.datetime_ms.DatetimeMS(0),
                    "logicalSessionTimeoutMinutes": 30, "connectionId": 1, "minWireVersion": 0, "maxWireVersion": MAX_WIRE_VERSION,
                    "readOnly": False}
        if name == "buildinfo":
            return {"version": VERSION, "versionArray": [7, 0, 14, 0], "bits": 64, "maxBsonObjectSize": 16 * 1024 * 1024}
        if name in ("ping", "endsessions"):
            return {}
        if name == "listcollections":
            wanted = (body.get("filter") or {}).get("name")
            found = [{"name": ns.split(".", 1)[1], "type": c.kind, "options": c.options, "info": {"readOnly": False}}
                     for ns, c in state.collections.items() if ns.startswith(f"{db}.") and wanted in (None, ns.split(".", 1)[1])]
            return {"cursor": {"id": 0, "ns": f"{db}.$cmd.listCollections", "firstBatch": found}}
        namespace = f"{db}.{body[command.name]}" if isinstance(body[command.name], str) else None
        if name == "create":
            if namespace in state.collections:
                raise CommandFailed(48, "NamespaceExists", f"Collection {namespace} already exists.")
            options = {key: value for key, value in body.items() if key not in ("create", "$db", "lsid", "$readPreference")}
            state.collections[namespace] = Collection(options)
            return {}
        if name == "drop":
            if state.collections.pop(namespace, None) is None:
                raise CommandFailed(26, "NamespaceNotFound", "ns not found")
            return {"ns": namespace, "nIndexesWas": 1}
        if name == "createindexes":
            collection = self._collection(namespace)
            collection.indexes.extend(body["indexes"])
            return {"numIndexesBefore": 1, "numIndexesAfter": 1 + len(collection.indexes), "createdCollectionAutomatically": False}
        if name == "insert":
            documents = command.sequences.get("documents", body.get("documents", []))
            collection = state.collections.setdefault(namespace, Collection({}))  # MongoDB creates a missing collection
            for document in documents:
                if collection.kind == "timeseries" and not isinstance(document.get(collection.options["timeseries"]["timeField"]),
                                                                       bson.datetime_ms.DatetimeMS):
                    raise CommandFailed(2, "BadValue", "'timestamp' must be present and contain a valid BSON UTC datetime value")
                collection.documents.append({"_id": ObjectId(), **document} if "_id" not in document else dict(document))
            return {"n": len(documents)}
        if name == "update":
            collection = state.collections.setdefault(namespace, Collection({}))
            updates = command.sequences.get("updates", body.get("updates", []))
            for update in updates:
                if any(key.startswith("$") for key in update["u"]) or update.get("multi"):
                    raise CommandFailed(9, "FailedToParse", "the wire fake knows only replacements of one document")
                matching = [document for document in collection.documents if _matches(document, update["q"])]
                if matching:
                    matching[0].clear()
                    matching[0].update({"_id": update["q"].get("_id", ObjectId()), **update["u"]})
                elif update.get("upsert"):
                    collection.documents.append({"_id": update["q"].get("_id", ObjectId()), **update["u"]})
            return {"n": len(updates), "nModified": 0}
        if name == "find":
            collection = state.collections.get(namespace) or Collection({})
            rows = [document for document in collection.documents if _matches(document, body.get("filter") or {})]
            for key, direction in reversed(list((body.get("sort") or {}).items())):
                rows.sort(key=lambda row, key=key: _ordered(row.get(key)), reverse=direction < 0)
            rows = [_projected(row, body.get("projection")) for row in rows[: body.get("limit") or None]]
            size = 1 if body.get("singleBatch") else body.get("batchSize", FIRST_BATCH)
            return {"cursor": self._cursor(namespace, rows, max(size, len(rows)) if body.get("singleBatch") else size, "firstBatch")}
        if name == "aggregate":
            rows = evaluate(self._collection(namespace), body["pipeline"], namespace)
            return {"cursor": self._cursor(namespace, rows, body.get("cursor", {}).get("batchSize", FIRST_BATCH), "firstBatch")}
        if name == "explain":  # an aggregate's plan: the stages evaluated over no document (an unknown one fails)
            explained = body["explain"]
            evaluate(Collection({}), explained["pipeline"], f"{db}.{explained['aggregate']}")
            return {"queryPlanner": {"namespace": f"{db}.{explained['aggregate']}", "winningPlan": {"stage": "FAKE"}}}
        if name == "getmore":
            cursor_id = body["getMore"]
            namespace, rows = state.cursors.pop(cursor_id, (None, None))
            if rows is None:
                raise CommandFailed(43, "CursorNotFound", f"cursor id {cursor_id} not found")
            return {"cursor": self._cursor(namespace, rows, body.get("batchSize", len(rows)), "nextBatch", cursor_id)}
        if name == "killcursors":
            killed = [c for c in body["cursors"] if state.cursors.pop(c, None) is not None]
            return {"cursorsKilled": killed, "cursorsNotFound": [], "cursorsAlive": [], "cursorsUnknown": []}
        raise CommandFailed(59, "CommandNotFound", f"no such command: '{command.name}' (the wire fake does not know it)")

    def _collection(self, namespace: str) -> Collection:
        collection = self.state.collections.get(namespace)
        if collection is None:
            raise CommandFailed(26, "NamespaceNotFound", f"collection {namespace} does not exist")
        return collection

    def _cursor(self, namespace: str, rows: list[dict], batch_size: int, batch_name: str, cursor_id: int | None = None) -> dict:
        batch, rest = rows[:batch_size], rows[batch_size:]
        if rest:
            cursor_id = cursor_id or self.state.next_cursor
            self.state.next_cursor += 1
            self.state.cursors[cursor_id] = (namespace, rest)
        return {"id": bson.int64.Int64(cursor_id if rest else 0), "ns": namespace, batch_name: batch}


# -- aggregation -----------------------------------------------------------------------------
def evaluate(collection: Collection, pipeline: list[dict], namespace: str) -> list[dict]:
    rows = list(collection.documents)
    for position, stage in enumerate(pipeline):
        (operator, argument), = stage.items()
        if operator == "$match":
            rows = [row for row in rows if _matches(row, argument)]
        elif operator == "$count":
            rows = [{argument: len(rows)}] if rows else []
        elif operator == "$sort":
            for key, direction in reversed(list(argument.items())):
                rows.sort(key=lambda row, key=key: _ordered(_get(row, key)), reverse=direction < 0)
        elif operator == "$limit":
            rows = rows[:argument]
        elif operator == "$group":
            rows = _group(rows, argument)
        elif operator == "$collStats" and position == 0:
            size = 64 * len(collection.documents)
            rows = [{"ns": namespace, "storageStats": {"size": size, "count": len(collection.documents), "storageSize": size // 2,
                                                       "totalIndexSize": 1000 * (1 + len(collection.indexes))}}]
        else:
            raise CommandFailed(40324, "UnknownStage", f"the wire fake cannot evaluate the stage {operator} at position {position}")
    return rows


_COMPARISONS = {"$gte": lambda a, b: a >= b, "$gt": lambda a, b: a > b, "$lte": lambda a, b: a <= b, "$lt": lambda a, b: a < b}
_UNITS_MS = {"second": 1000, "minute": 60_000, "hour": 3_600_000}
REFERENCE_MS = 946_684_800_000  # 2000-01-01T00:00:00Z: where $dateTrunc's bins of binSize units start (but weeks')


def _ordered(value: Any) -> Any:
    """A sortable and comparable stand-in: BSON dates as their milliseconds."""
    return int(value) if isinstance(value, bson.datetime_ms.DatetimeMS) else value


def _get(row: dict, path: str) -> Any:
    """The value at a dotted field path (None where missing)."""
    if "." not in path:
        return row.get(path)
    value: Any = row
    for part in _parts(path):
        value = value.get(part) if isinstance(value, dict) else None
    return value


@functools.lru_cache(maxsize=256)
def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def _matches(row: dict, condition: dict) -> bool:
    for key, wanted in condition.items():
        value = _get(row, key)
        if isinstance(wanted, dict) and set(wanted) == {"$in"}:
            if value not in wanted["$in"]:
                return False
        elif isinstance(wanted, dict) and wanted and all(operator in _COMPARISONS for operator in wanted):
            if value is None or not all(_COMPARISONS[op](_ordered(value), _ordered(bound)) for op, bound in wanted.items()):
                return False
        elif isinstance(wanted, dict) and any(key.startswith("$") for key in wanted):
            raise CommandFailed(2, "BadValue", f"the wire fake cannot evaluate the condition {wanted}")
        elif value != wanted:
            return False
    return True


def _projected(row: dict, projection: dict | None) -> dict:
    if not projection:
        return row
    included = [key for key, on in projection.items() if on and key != "_id"]
    kept = {key: row[key] for key in included if key in row} if included else {k: v for k, v in row.items() if projection.get(k, 1)}
    if projection.get("_id", 1) and "_id" in row:
        kept = {"_id": row["_id"], **kept}
    return kept


def _value(expression: Any, row: dict) -> Any:
    """An expression's value in a row (None: missing or null; the stored documents hold no nulls)."""
    if isinstance(expression, dict) and set(expression) == {"$dateTrunc"}:
        argument = expression["$dateTrunc"]
        if not {"date", "unit"} <= set(argument) <= {"date", "unit", "binSize"} or argument["unit"] not in _UNITS_MS:
            raise CommandFailed(2, "BadValue", f"the wire fake cannot evaluate $dateTrunc with {argument}")
        ms, unit = int(_value(argument["date"], row)), _UNITS_MS[argument["unit"]] * argument.get("binSize", 1)
        return bson.datetime_ms.DatetimeMS(ms - (ms - REFERENCE_MS) % unit)
    if isinstance(expression, dict) and set(expression) == {"$cond"} and isinstance(expression["$cond"], list):
        condition, then, otherwise = expression["$cond"]
        return _value(then if _value(condition, row) else otherwise, row)
    if isinstance(expression, dict) and set(expression) == {"$isNumber"}:
        value = _value(expression["$isNumber"], row)
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(expression, dict) and not any(key.startswith("$") for key in expression):  # a document of expressions
        values = {key: _value(part, row) for key, part in expression.items()}
        return {key: value for key, value in values.items() if value is not None}  # a missing field is left out
    if isinstance(expression, dict):
        raise CommandFailed(168, "InvalidPipelineOperator", f"the wire fake cannot evaluate the expression {expression}")
    return _get(row, expression[1:]) if isinstance(expression, str) and expression.startswith("$") else expression


def _hashable(key: Any) -> Any:
    return tuple((name, _ordered(part)) for name, part in key.items()) if isinstance(key, dict) else key


def _group(rows: list[dict], spec: dict) -> list[dict]:
    groups: dict[Any, tuple[Any, list[dict]]] = {}
    for row in rows:
        key = _value(spec["_id"], row)
        groups.setdefault(_hashable(key), (key, []))[1].append(row)
    out = []
    for key, members in groups.values():
        result = {"_id": key}
        for name, accumulator in spec.items():
            if name == "_id":
                continue
            (operator, expression), = accumulator.items()
            values = [_value(expression, row) for row in members]
            present = [value for value in values if value is not None]
            if operator == "$sum":
                result[name] = sum(present)
            elif operator == "$min":
                result[name] = min(present)
            elif operator == "$max":
                result[name] = max(present)
            elif operator == "$avg":
                result[name] = sum(present) / len(present)
            elif operator == "$first":
                result[name] = values[0]
            elif operator == "$last":
                result[name] = values[-1]
            else:
                raise CommandFailed(15952, "UnknownGroupOperator", f"the wire fake cannot evaluate the accumulator {operator}")
        out.append(result)
    return out


@contextmanager
def serving(state: FakeMongoState) -> Iterator[str]:
    """Serve the fake on a free loopback port; yields its address, host:port."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), type("Handler", (FakeMongoHandler,), {"state": state}))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
