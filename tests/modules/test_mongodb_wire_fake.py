"""The mongodb module against a FAKE MongoDB: no MongoDB-compatible server can be installed here.

`mongodb_wire_fake` speaks MongoDB's wire protocol (OP_MSG, BSON) on a loopback port; the REAL
pymongo in the CLI's collector and worker processes talks to it. The tests check what pymongo
actually sent (collection options, documents with their BSON types, ordered=False, write concerns,
the aggregation pipelines, cursors and getMore, endSessions), and the fake evaluates the pipelines
over the stored documents, so counts, verification and query row counts run end to end.
"""

from __future__ import annotations

import pymongo
import pytest
from bson.datetime_ms import DatetimeMS
from bson.int64 import Int64

from iotdb_bench.simulator.modules.mongodb import QUERIES, pipelines
from iotdb_bench.simulator.workload.events import EventGenerator
from tests.conftest import assert_verified, downsample_minutes, rows_per_query
from tests.modules.mongodb_wire_fake import FakeMongoState, serving
from tests.read_side import check_read_side

pytestmark = pytest.mark.mongodb

CONFIG = """\
platform: kubernetes
targets:
  mongo-fake:
    module: mongodb
    platform: local
    uri: mongodb://{address}
    database: bench
    timeout_s: 5
"""
FIELDS = {"timestamp", "device_id", "sequence_number", "temperature"}


@pytest.fixture
def mongo(tmp_path, cli):
    """The fake's state, and `run(task, *args)`: the CLI against it with a config in the test folder."""
    state = FakeMongoState()
    with serving(state) as address:
        (tmp_path / "config.yaml").write_text(CONFIG.format(address=address))

        def run(task: str, *args: str):
            return cli(task, "--config", "config.yaml", "--target", "mongo-fake", "-r", "1", *args, timeout=300)

        state.address = address
        yield state, run


def counted(state: FakeMongoState, collection: str = "events") -> int:
    """The collection's count read by the test itself, with pymongo (count_documents)."""
    client = pymongo.MongoClient(f"mongodb://{state.address}", serverSelectionTimeoutMS=5000)
    try:
        return client.get_database("bench").get_collection(collection).count_documents({})
    finally:
        client.close()


def inserts(state: FakeMongoState) -> list:
    return [c for c in state.of("insert") if c.database == "bench"]


def test_mongodb_wire_fake_time_series_batches_insert_many_unordered(mongo):
    state, run = mongo
    reports = assert_verified(run("insert", "-w", "1,4", "--batch", "500", "--num-inserts", "1500"), [1500, 6000])
    assert counted(state) == 6000
    assert reports[0]["conditions"]["server_version"] == "MongoDB 7.0.14"  # from buildInfo
    creates = [c.body for c in state.of("create")]
    assert len(creates) == 2 and all(body["create"] == "events" for body in creates)
    assert all(body["timeseries"] == {"timeField": "timestamp", "metaField": "device_id", "granularity": "seconds"} for body in creates)
    assert [c.body["drop"] for c in state.of("drop")] == ["events"]  # --clean before the second run
    assert {c.opcode for c in state.commands} == {2013}  # OP_MSG only

    sent = inserts(state)
    assert len(sent) == 3 + 12 and all(c.body["ordered"] is False for c in sent)
    assert all(c.body["writeConcern"] == {"w": 1} for c in sent)
    assert all(len(c.sequences["documents"]) == 500 and "documents" not in c.body for c in sent)  # OP_MSG document sequences
    documents = [d for c in sent[3:] for d in c.sequences["documents"]]
    for document in documents:
        assert set(document) == FIELDS  # no _id: the server generates it (--primary-key db)
        assert isinstance(document["timestamp"], DatetimeMS) and isinstance(document["sequence_number"], Int64)
        assert isinstance(document["device_id"], str) and isinstance(document["temperature"], float)
    expected = EventGenerator(1, 0, 10).batch(0, 1500)
    worker_0 = sorted((d for d in documents if d["device_id"].startswith("w000000-")), key=lambda d: d["sequence_number"])
    assert [int(d["timestamp"]) for d in worker_0] == expected.timestamp_ms.tolist()
    assert [d["temperature"] for d in worker_0] == expected.temperature.tolist()
    assert [d["device_id"] for d in worker_0] == expected.device_id.astype("U15").tolist()
    # Every process ended its sessions when it closed the client.
    assert len(state.of("endSessions")) >= 5


def test_mongodb_wire_fake_single_inserts_plain_collection_client_keys(mongo):
    state, run = mongo
    result = run("insert", "-w", "1,4", "--num-inserts", "30", "--primary-key", "client", "--extra-option", "collection_type=plain")
    reports = assert_verified(result, [30, 120])
    assert [r["insert_mode"] for r in reports] == ["single inserts, plain collection"] * 2
    assert all("timeseries" not in c.body for c in state.of("create"))
    sent = inserts(state)
    assert len(sent) == 150 and all(len(c.sequences["documents"]) == 1 for c in sent)  # insert_one: one command each
    for document in (c.sequences["documents"][0] for c in sent):
        assert list(document) == ["_id", *sorted(FIELDS, key=["timestamp", "device_id", "sequence_number", "temperature"].index)]
        assert document["_id"] == f"{document['device_id']}-{int(document['sequence_number']):012d}"
    assert counted(state) == 120


def test_mongodb_wire_fake_four_collections_indexes_and_write_concern(mongo):
    state, run = mongo
    assert_verified(run("insert", "-w", "2", "--batch", "200", "--num-inserts", "400", "--tables", "multiple", "--prefill", "1000",
                        "--extra-option", "create_indices=true", "--extra-option", "w=majority", "--extra-option", "journal=true"), [1800])
    assert sorted(c.body["create"] for c in state.of("create")) == ["events0", "events1", "events2", "events3"]
    indexes = {(c.body["createIndexes"], index["name"], tuple(index["key"].items())) for c in state.of("createIndexes") for index in c.body["indexes"]}
    assert indexes == {(f"events{t}", f"events{t}_{name}", keys) for t in range(4) for name, keys in
                       (("temperature", (("temperature", 1),)), ("device_id_temperature", (("device_id", 1), ("temperature", 1))))}
    assert all(c.body["writeConcern"] == {"w": "majority", "j": True} for c in inserts(state))
    per_collection = [counted(state, f"events{t}") for t in range(4)]
    assert sum(per_collection) == 1800 and all(per_collection)
    devices = [{d["device_id"] for d in state.documents(f"bench.events{t}")} for t in range(4)]
    assert sum(map(len, devices)) == len(set().union(*devices)) == 20  # a device always in the same collection


def test_mongodb_wire_fake_steps_keep_the_data(mongo):
    state, run = mongo
    reports = assert_verified(run("insert", "-w", "2", "--batch", "250", "--num-inserts", "500", "--steps", "2"), [1000, 2000])
    assert [r["verification"]["count_before"] for r in reports] == [0, 1000]
    assert len(state.of("create")) == 1 and not state.of("drop")  # a new fake: nothing to drop, created once
    assert reports[1]["server"]["storage_bytes"] == 64 * 2000 // 2 + 1000  # storageSize + totalIndexSize of $collStats


def test_mongodb_wire_fake_queries_send_the_pipelines_and_follow_the_cursor(mongo):
    state, run = mongo
    assert_verified(run("insert", "-w", "2", "--batch", "600", "--num-inserts", "1200", "--devices-per-worker", "60"), [2400])
    result = run("query", "-w", "1", "-r", "2", "--query-timeout", "30")
    assert result.query_rows() == rows_per_query(120, downsample_minutes(1200, 60))  # every answer checked and right
    sent = [c.body for c in state.of("aggregate") if c.body["pipeline"] and "$collStats" not in c.body["pipeline"][0]
            and c.body["pipeline"] != [{"$match": {}}, {"$group": {"_id": 1, "n": {"$sum": 1}}}]]
    assert [body["pipeline"] for body in sent] == [pipeline for pipeline in pipelines().values() for _ in range(2)]
    assert set(pipelines()) - set(QUERIES) == {"device-downsample"}
    assert all(body["aggregate"] == "events" and body["allowDiskUse"] is True and body["maxTimeMS"] == 30_000 for body in sent)
    # 120 devices: the first batch holds 101 rows, getMore fetches the rest (per-device queries, twice each).
    assert len([c for c in state.of("getMore") if c.body["collection"] == "events"]) == 4
    assert not state.cursors  # every cursor was read to its end


def test_mongodb_wire_fake_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(mongo):
    state, run = mongo
    assert_verified(run("insert", "-w", "2", "--batch", "1000", "--num-inserts", "3000"), [6000])

    def readings(device):
        return sorted((d for d in state.collections["bench.events"].documents if d["device_id"] == device), key=lambda d: int(d["timestamp"]))

    def change(device, value):
        with state.lock:
            readings(device)[0]["temperature"] = value

    def delete(device):
        with state.lock:
            state.collections["bench.events"].documents.remove(readings(device)[-1])

    check_read_side(run, change, delete, 3000)
    # Scans: one find per device sorted by timestamp, read in batches of --page-size through getMore.
    finds = [c.body for c in state.of("find") if c.body["find"] == "events"]
    assert finds and all(body["sort"] == {"timestamp": 1} and body["batchSize"] in (300, 10_000) for body in finds)
    assert [d["_id"] for d in state.collections["bench.iotbench_expected"].documents] == ["last-insert"]


def test_mongodb_wire_fake_newest_per_device_pipeline_gives_each_devices_last_reading(mongo):
    state, run = mongo
    assert_verified(run("insert", "-w", "1", "--batch", "100", "--num-inserts", "300", "--devices-per-worker", "3"), [300])
    client = pymongo.MongoClient(f"mongodb://{state.address}", serverSelectionTimeoutMS=5000, datetime_conversion="DATETIME_MS")
    try:
        rows = list(client.get_database("bench").events.aggregate(QUERIES["newest-per-device"]))
    finally:
        client.close()
    expected = EventGenerator(1, 0, 3).batch(297, 3)
    assert {row["_id"]: (int(row["timestamp"]), row["temperature"]) for row in rows} == {
        device: (timestamp, temperature) for device, timestamp, temperature in
        zip(expected.device_id.astype("U15").tolist(), expected.timestamp_ms.tolist(), expected.temperature.tolist())}


@pytest.mark.parametrize(("args", "message"), [
    (["--primary-key", "uuid"], "module 'mongodb' does not support --primary-key uuid: every document has an _id"),
    (["--primary-key", "none"], "module 'mongodb' does not support --primary-key none"),
    (["--primary-key", "client"], "--primary-key client needs collection_type=plain"),
    (["--extra-option", "w=some"], "invalid options for module 'mongodb': w:"),
])
def test_mongodb_refusals_before_anything_starts(mongo, args, message):
    state, run = mongo
    result = run("insert", "-w", "1", *args)
    assert result.code == 2 and message in result.stderr
    assert not state.commands


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "fields", "meta"), [
    (["--schema", "light"], {"timestamp", "val1", "val2"}, False),
    (["--schema", "large"], {"timestamp", "text", *(f"i{i}" for i in range(1, 9))}, False),
    (["--schema", "slim"], {"timestamp", "value"}, False),
    (["--measurements", "4", "--sensors", "2", "--order", "random", "--out-of-order", "0.05"],
     {*FIELDS, "sensor", "m1", "m2", "m3"}, True),
])
def test_mongodb_wire_fake_workloads_are_document_fields(mongo, args, fields, meta):
    state, run = mongo
    assert_verified(run("insert", "-w", "2", "--batch", "100", "--num-inserts", "300", *args), [600])
    assert counted(state) == 600
    [create] = [c.body for c in state.of("create")]
    assert ("metaField" in create["timeseries"]) == meta
    documents = [d for c in inserts(state) for d in c.sequences["documents"]]
    assert len(documents) == 600 and all(set(d) == fields for d in documents)
    assert all(isinstance(d["timestamp"], DatetimeMS) for d in documents)
    indexes = [index["key"] for c in state.of("createIndexes") for index in c.body["indexes"]]
    assert indexes == ([{"val1": 1}] if "light" in args else [])
    if "sensor" in fields:  # every worker's sequence numbers once each, late ones included
        for worker in ("w000000", "w000001"):
            assert sorted(int(d["sequence_number"]) for d in documents if d["device_id"].startswith(worker)) == list(range(300))


def test_mongodb_wire_fake_duration_run(mongo):
    state, run = mongo
    result = run("insert", "-w", "2", "--duration", "2", "--batch", "100")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["verification"]["ok"] and counted(state) == report["figures"]["events"]
