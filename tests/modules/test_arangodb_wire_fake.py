"""The arangodb module against a FAKE ArangoDB: no ArangoDB server can run on these machines.

`FakeArangoDB` is a small HTTP server (http.server, in a thread of the test process) speaking just
enough of ArangoDB's documented HTTP API (`/_db/{db}/_api/...`: collection, document, import,
index, cursor) for the REAL python-arango client used by the CLI's collector and worker processes.
It records every request and keeps the documents, so counts and verification run end to end; the
tests assert on what the client actually sent: collection properties, document bodies and keys,
write options, and the AQL text of each query. AQL itself is not parsed: the fake knows the
module's queries by their exact text and computes their rows from the stored documents in Python
(`aql_rows`), so the module's answers and the CLI's answer check run end to end; any other AQL is
refused, as a real server would refuse a query it cannot run.
"""

from __future__ import annotations

import itertools

import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.modules.arangodb import QUERIES
from tests.conftest import rows_per_query
from tests.modules.arangodb_wire_fake import PASSWORD, FakeArangoHandler, FakeArangoState
from tests.modules.fake_http_service import serving
from tests.read_side import check_read_side


@pytest.fixture
def fake_arango():
    state = FakeArangoState()
    with serving(FakeArangoHandler, state) as url:
        yield state, url


CONFIG = """\
platform: local
targets:
  arangodb-fake:
    module: arangodb
    platform: local
    url: {url}
    username: root
    password: "${{ARANGO_PASSWORD}}"
    database: bench
"""


@pytest.fixture
def arango(fake_arango, tmp_path, cli):
    """The fake's state, and `run(task, *args)`: the CLI against it with a config in the test folder."""
    state, url = fake_arango
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=url))

    def run(task: str, *args: str):
        return cli(task, "--config", "config.yaml", "--target", "arangodb-fake", "-r", "1", *args,
                   env={"ARANGO_PASSWORD": PASSWORD}, timeout=300)

    return state, run


def verified(result, events: int) -> dict:
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["verification"]["ok"] and report["verification"]["counted"] == events
    return report


def test_arangodb_wire_fake_collections_with_shards_replication_and_sync(arango):
    state, run = arango
    result = run("insert", "-w", "2", "--num-inserts", "40", "--batch", "20", "--tables", "multiple",
                 "--extra-option", "shard_count=3", "--extra-option", "replication_factor=2", "--extra-option", "sync=true")
    verified(result, 80)
    created = {r.body["name"]: r.body for r in state.of("POST", "/_api/collection")}
    assert sorted(created) == ["events0", "events1", "events2", "events3", "iotbench_expected"]  # the record of expected answers
    for body in (body for name, body in created.items() if name.startswith("events")):
        assert body["numberOfShards"] == 3 and body["replicationFactor"] == 2 and body["waitForSync"] is True
        assert body["keyOptions"] == {"type": "traditional", "allowUserKeys": False}
        assert body["type"] == 2  # document collection
    writes = state.of("POST", "/_api/document/")
    assert writes and all(w.params["waitForSync"] == "1" for w in writes)  # python-arango: booleans as 1/0
    # Every request used the configured database and credentials.
    assert {r.database for r in state.requests} == {"bench"}
    # A device always goes to the same collection.
    devices = [{d["device_id"] for d in state.documents[f"events{t}"].values()} for t in range(4)]
    assert sum(map(len, devices)) == len(set().union(*devices)) == 20


def test_arangodb_wire_fake_batches_send_documents_with_client_keys(arango):
    state, run = arango
    report = verified(run("insert", "-w", "2", "--num-inserts", "60", "--batch", "30", "--primary-key", "client"), 120)
    assert report["figures"]["latency"]["calls"] == 4
    assert report["conditions"]["server_version"] == "ArangoDB 3.12.4 (community)"
    assert report["conditions"]["software"]["drivers"]["python-arango"] == "8.3.7"
    assert state.collections["events"]["keyOptions"] == {"type": "traditional", "allowUserKeys": True}
    assert "numberOfShards" not in state.collections["events"] and state.collections["events"]["replicationFactor"] == 1
    assert state.collections["events"]["waitForSync"] is False
    writes = state.of("POST", "/_api/document/events")
    assert len(writes) == 4 and all(isinstance(w.body, list) and len(w.body) == 30 for w in writes)
    assert all("waitForSync" not in w.params for w in writes)  # no per-request sync unless asked
    for document in (d for w in writes for d in w.body):
        assert set(document) == {"_key", "timestamp", "device_id", "sequence_number", "temperature"}
        assert document["_key"] == f"{document['device_id']}-{document['sequence_number']:012d}"
        assert isinstance(document["timestamp"], int) and isinstance(document["temperature"], float)


def test_arangodb_wire_fake_single_inserts_one_request_per_event(arango):
    state, run = arango
    report = verified(run("insert", "-w", "1", "--num-inserts", "25"), 25)
    assert report["figures"]["latency"]["calls"] == 25
    writes = state.of("POST", "/_api/document/events")
    assert len(writes) == 25 and all(isinstance(w.body, dict) and "_key" not in w.body for w in writes)
    assert all(w.params["silent"] == "1" for w in writes)


def test_arangodb_wire_fake_bulk_import_api(arango):
    state, run = arango
    verified(run("insert", "-w", "2", "--num-inserts", "50", "--batch", "25", "--extra-option", "batch_api=import"), 100)
    imports = state.of("POST", "/_api/import")
    assert len(imports) == 4 and not state.of("POST", "/_api/document/events")
    assert all(r.params == {"type": "array", "collection": "events", "complete": "1", "details": "1"} for r in imports)


def test_arangodb_wire_fake_uuid_keys_and_indices(arango):
    state, run = arango
    verified(run("insert", "-w", "1", "--num-inserts", "10", "--batch", "10", "--primary-key", "uuid",
                 "--extra-option", "create_indices=true"), 10)
    assert state.collections["events"]["keyOptions"] == {"type": "uuid", "allowUserKeys": False}
    indexes = [(r.params["collection"], r.body["type"], r.body["fields"]) for r in state.of("POST", "/_api/index")]
    assert indexes == [("events", "persistent", ["temperature"]), ("events", "persistent", ["device_id", "temperature"])]


def test_arangodb_wire_fake_queries_send_the_aql_and_page_the_cursor(arango):
    state, run = arango
    verified(run("insert", "-w", "2", "--num-inserts", "30", "--batch", "30", "--devices-per-worker", "5"), 60)
    result = run("query")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]["queries"]
    assert {name: figures["rows"] for name, figures in report.items()} == rows_per_query(10)
    sent = [r.body for r in state.of("POST", "/_api/cursor") if r.path == "/_api/cursor"]
    assert [body["query"] for body in sent] == [QUERIES[name] for name in report]
    assert all(body["batchSize"] == 10_000 for body in sent)
    # 10 rows in pages of 4: two follow-up fetches for each per-device query.
    assert len(list(state.of("POST", "/_api/cursor/"))) == 4
    assert "COLLECT device = e.device_id AGGREGATE newest = MAX([e.timestamp, e.temperature])" in QUERIES["newest-per-device"]


def test_arangodb_wire_fake_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(arango):
    state, run = arango
    state.cursor_page = 250  # pages of --page-size 300 and of the queries' 10,000 are cut to 250 rows
    verified(run("insert", "-w", "2", "--num-inserts", "3000", "--batch", "1000"), 6000)
    assert state.documents["iotbench_expected"]["last-insert"]["record"].startswith('{"format":1,"tables":["events"],"shape":"events","measurements":1,"sensors":1,"complete":true')

    def readings(device):
        return sorted((d for d in state.documents["events"].values() if d["device_id"] == device), key=lambda d: d["timestamp"])

    def change(device, value):
        with state.lock:
            readings(device)[0]["temperature"] = value

    def delete(device):
        with state.lock:
            del state.documents["events"][readings(device)[-1]["_key"]]

    check_read_side(run, change, delete, 3000)
    # Scans read each device through a streaming cursor, a batch of --page-size documents at a time.
    scans = [r.body for r in state.of("POST", "/_api/cursor") if r.path == "/_api/cursor" and r.body["query"].startswith("FOR e IN @@collection FILTER")]
    assert scans and all(body["options"]["stream"] is True for body in scans)


def test_arangodb_wire_fake_wrong_password_is_reported(arango, cli):
    _state, _run = arango
    result = cli("insert", "--config", "config.yaml", "--target", "arangodb-fake", "-r", "1", "-w", "1", "--num-inserts", "5",
                 env={"ARANGO_PASSWORD": "wrong"}, timeout=300)
    assert result.code != 0
    assert "cannot connect to ArangoDB at 127.0.0.1:" in result.stderr and "not authorized to execute this request" in result.stderr


@pytest.mark.parametrize("mode", ["sql", "none"])
def test_arangodb_rejects_key_modes_without_a_meaning(arango, mode):
    state, run = arango
    result = run("insert", "-w", "1", "--primary-key", mode)
    assert result.code == 2
    assert f"module 'arangodb' does not support --primary-key {mode}: every ArangoDB document has a _key" in result.stderr
    assert not state.requests  # rejected before anything was started


def test_arangodb_unreachable_names_host_and_port(cli, tmp_path):
    port = free_port()
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=f"http://127.0.0.1:{port}"))
    result = cli("insert", "--config", "config.yaml", "--target", "arangodb-fake", "-r", "1", "-w", "1", "--num-inserts", "5",
                 env={"ARANGO_PASSWORD": PASSWORD}, timeout=300)
    assert result.code != 0
    assert f"cannot connect to ArangoDB at 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "attributes"), [
    (["--schema", "light"], {"timestamp", "val1", "val2"}),
    (["--schema", "large"], {"timestamp", "text", *(f"i{i}" for i in range(1, 9))}),
    (["--schema", "slim"], {"timestamp", "value"}),
    (["--measurements", "4", "--sensors", "2"], {"timestamp", "device_id", "sensor", "sequence_number", "temperature", "m1", "m2", "m3"}),
])
def test_arangodb_wire_fake_shapes_are_document_attributes(arango, args, attributes):
    state, run = arango
    verified(run("insert", "-w", "2", "--num-inserts", "40", "--batch", "20", *args), 80)
    stored = list(state.documents["events"].values())
    assert all(set(document) - {"_key"} == attributes for document in stored)
    indexes = [(r.body["type"], r.body["fields"]) for r in state.of("POST", "/_api/index")]
    assert indexes == ([("persistent", ["val1"])] if "light" in args else [])
    if "large" in args:
        assert all(1 <= len(document["text"]) <= 200 for document in stored)


def test_arangodb_wire_fake_random_order_late_data_and_time_first_keys(arango):
    state, run = arango
    verified(run("insert", "-w", "2", "--num-inserts", "300", "--batch", "50", "--order", "random", "--out-of-order", "0.1",
                 "--max-lateness", "2", "--primary-key", "client", "--extra-option", "key_order=time"), 600)
    stored = list(state.documents["events"].values())
    for document in stored:
        assert document["_key"] == f"{document['timestamp']:013d}-{document['device_id']}-{document['sequence_number']:012d}"
    for worker in ("w000000", "w000001"):  # every sequence number once, late ones included
        assert sorted(d["sequence_number"] for d in stored if d["device_id"].startswith(worker)) == list(range(300))
    sent = [d for w in state.of("POST", "/_api/document/events") for d in w.body if d["device_id"].startswith("w000000")]
    assert any(b["timestamp"] < a["timestamp"] for a, b in itertools.pairwise(sent))  # some were sent late


def test_arangodb_wire_fake_duration_counts_what_was_stored(arango):
    state, run = arango
    result = run("insert", "-w", "2", "--duration", "2", "--batch", "50")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["verification"]["ok"] and report["verification"]["counted"] == len(state.documents["events"]) == report["figures"]["events"]
    assert 2.0 <= report["figures"]["duration_s"] < 4.0
