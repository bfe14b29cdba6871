"""The elasticsearch module end to end through the CLI, against a real Elasticsearch 8 AND a real
OpenSearch 2 (scripts/servers/start-elasticsearch.sh and start-opensearch.sh): every test runs on both."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.modules.elasticsearch import SearchServerError
from iotdb_bench.simulator.retry import RetriesExhausted
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EventGenerator
from tests.conftest import WORKLOAD_OPTIONS, CliResult, assert_verified, downsample_minutes, rows_per_query, run_cli, verified_workload_run
from tests.read_side import assert_scan_ok, check_read_side

pytestmark = pytest.mark.elasticsearch

SERVERS = {
    "elasticsearch-8": os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200"),
    "opensearch-2": os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9201"),
}
START_SCRIPTS = {"elasticsearch-8": "start-elasticsearch.sh", "opensearch-2": "start-opensearch.sh"}
UNUSED_PORT = 9299

CONFIG = """\
platform: local
targets:
  search:
    module: elasticsearch
    hosts: {url}
    replicas: 0
    refresh_interval: 1s
"""


def reachable(server: str) -> str:
    """The URL of one of SERVERS; fails (never skips) when it does not answer."""
    url = SERVERS[server]
    try:
        httpx.get(f"{url}/_cluster/health", timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"{server} is not reachable at {url} ({error}); start it with scripts/servers/{START_SCRIPTS[server]}")
    return url


def bulk_story_cli(server: str, folder: Path) -> tuple[str, Callable[..., CliResult]]:
    """(the URL of one of SERVERS, `run(task, *args)`: the CLI on it from `folder`) for a TSBS story: the
    translog synced asynchronously (the layout and the answers are tested there, durability here)."""
    url = reachable(server)
    (folder / "config.yaml").write_text(CONFIG.format(url=url) + "    translog_durability: async\n")

    def run(task: str, *args: str) -> CliResult:
        return run_cli([task, "--config", "config.yaml", "--target", "search", "--platform", "local", *args], folder)

    return url, run


@pytest.fixture(params=sorted(SERVERS))
def search(request, tmp_path):
    """The URL of one real server, with a config file for it in the test folder."""
    url = reachable(request.param)
    (tmp_path / "config.yaml").write_text(CONFIG.format(url=url))
    return url


def run(cli, *args):
    return cli(*args, "--config", "config.yaml", "--target", "search", "--platform", "local", timeout=300)


def get(url: str, path: str, **params) -> dict:
    response = httpx.get(f"{url}{path}", params=params, timeout=30)
    response.raise_for_status()
    return response.json()


def post_search(url: str, index: str, body: dict) -> dict:
    response = httpx.post(f"{url}/{index}/_search", json=body, timeout=30)
    response.raise_for_status()
    return response.json()


def documents(url: str, index: str) -> list[dict]:
    """Every document of an index (after a refresh), with its _id."""
    httpx.post(f"{url}/{index}/_refresh", timeout=30).raise_for_status()
    answer = httpx.post(f"{url}/{index}/_search", json={"size": 10_000, "sort": [{"sequence_number": "asc"}]}, timeout=30)
    answer.raise_for_status()
    return [{"_id": hit["_id"], **hit["_source"]} for hit in answer.json()["hits"]["hits"]]


def test_bulk_inserts_with_database_ids_then_the_six_queries(cli, search):
    reports = assert_verified(run(cli, "insert", "-w", "1,4", "-r", "1", "--batch", "1000", "--num-inserts", "2000"), [2000, 8000])
    # One _bulk request per batch: 2 per worker.
    assert [r["figures"]["latency"]["calls"] for r in reports] == [2, 8]
    assert reports[1]["server"]["counters_at_end"]["rows_inserted"] == 8000
    assert reports[1]["server"]["storage_bytes"] > 0

    index = get(search, "/events")["events"]
    assert index["mappings"]["dynamic"] == "strict"
    assert index["mappings"]["properties"] == {
        "timestamp": {"type": "date", "format": "epoch_millis"},
        "device_id": {"type": "keyword"},
        "sequence_number": {"type": "long"},
        "temperature": {"type": "double"},
    }
    assert index["settings"]["index"]["number_of_replicas"] == "0"
    assert index["settings"]["index"]["refresh_interval"] == "1s"

    # The stored events are exactly the generated ones (worker 0's stream, auto ids).
    stored = [doc for doc in documents(search, "events") if doc["device_id"].startswith("w000000-")]
    expected = EventGenerator(1, 0, 10).batch(0, 2000)
    assert [doc["sequence_number"] for doc in stored] == expected.sequence_number.tolist()
    assert [doc["timestamp"] for doc in stored] == expected.timestamp_ms.tolist()
    assert np.array_equal([doc["temperature"] for doc in stored], expected.temperature)
    assert len({doc["_id"] for doc in stored}) == 2000

    # 4 workers x 10 devices; a page size of 7 makes the per-device queries page through 6 pages.
    result = run(cli, "query", "-w", "1", "-r", "2", "--extra-option", "query_page_size=7")
    assert result.query_rows() == rows_per_query(40, downsample_minutes(2000))  # every answer checked and right


def reading(url: str, device: str, order: str) -> str:
    """The _id of the device's earliest ("asc") or newest ("desc") reading."""
    body = {"size": 1, "query": {"term": {"device_id": device}}, "sort": [{"timestamp": order}]}
    return httpx.post(f"{url}/events/_search", json=body, timeout=30).json()["hits"]["hits"][0]["_id"]


def test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(cli, search):
    assert_verified(run(cli, "insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000"), [6000])

    def change(device, value):  # a partial document update: no scripting needed
        httpx.post(f"{search}/events/_update/{reading(search, device, 'asc')}", params={"refresh": "true"},
                   json={"doc": {"temperature": value}}, timeout=30).raise_for_status()

    def delete(device):
        httpx.delete(f"{search}/events/_doc/{reading(search, device, 'desc')}", params={"refresh": "true"}, timeout=30).raise_for_status()

    check_read_side(lambda task, *args: run(cli, task, "-r", "1", *args), change, delete, 3000)


def test_scan_pages_beyond_the_result_window_are_refused_up_front(cli, search):
    result = run(cli, "scan", "-r", "1", "--page-size", "20000")
    assert result.code == 2 and "at most 10,000 hits per scroll page" in result.stderr and "Traceback" not in result.stderr


def test_readings_stored_out_of_order_scan_in_order(cli, search):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "2000"), [2000])
    # One device's documents deleted and indexed again newest first (new ids, reversed index order).
    device = [doc for doc in documents(search, "events") if doc["device_id"] == "w000000-d000005"]
    lines = [json.dumps({"delete": {"_index": "events", "_id": doc["_id"]}}) for doc in device]
    for doc in sorted(device, key=lambda doc: doc["timestamp"], reverse=True):
        lines += [json.dumps({"index": {"_index": "events"}}), json.dumps({key: value for key, value in doc.items() if key != "_id"})]
    answer = httpx.post(f"{search}/_bulk", params={"refresh": "true"}, content="\n".join(lines) + "\n",
                        headers={"content-type": "application/x-ndjson"}, timeout=60).json()
    assert not answer["errors"] and len(device) == 200
    scan = assert_scan_ok(run(cli, "scan", "-w", "2", "-r", "1", "--page-size", "64"), 2000, 10)
    assert scan["page_p99_ms"] > 0
    assert run(cli, "query", "-r", "1").query_rows() == rows_per_query(10, downsample_minutes(2000))


def test_newest_per_device_aggregation_finds_each_devices_last_event(cli, search):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "500", "--num-inserts", "2000"), [2000])
    # The same aggregation the module sends, checked for content: the newest event of every device.
    body = {"size": 0, "aggs": {"devices": {
        "composite": {"size": 100, "sources": [{"device_id": {"terms": {"field": "device_id"}}}]},
        "aggs": {"newest": {"top_hits": {"size": 1, "sort": [{"timestamp": {"order": "desc"}}]}}},
    }}}
    answer = httpx.post(f"{search}/events/_search", json=body, timeout=30).json()
    newest = {b["key"]["device_id"]: b["newest"]["hits"]["hits"][0]["_source"]["sequence_number"]
              for b in answer["aggregations"]["devices"]["buckets"]}
    assert newest == {f"w000000-d{d:06d}": 1990 + d for d in range(10)}


def test_single_inserts_with_client_ids_into_four_indices(cli, search):
    reports = assert_verified(
        run(cli, "insert", "-w", "4", "-r", "1", "--num-inserts", "150", "--primary-key", "client", "--tables", "multiple"), [600])
    assert reports[0]["figures"]["latency"]["calls"] == 600  # one index request per event
    total = 0
    for table in range(4):
        docs = documents(search, f"events{table}")
        total += len(docs)
        assert docs, f"events{table} is empty"
        for doc in docs:
            # _id = the client key = device id + 12-digit sequence number, also stored as field `id`.
            assert doc["_id"] == doc["id"] == f"{doc['device_id']}-{doc['sequence_number']:012d}"
            assert int(doc["device_id"][-6:]) % 4 == table  # a device always goes to the same index
        assert get(search, f"/events{table}/_mapping")[f"events{table}"]["mappings"]["properties"]["id"] == {"type": "keyword"}
    assert total == 600


def test_bulk_inserts_with_client_ids_into_four_indices(cli, search):
    reports = assert_verified(
        run(cli, "insert", "-w", "1,4", "-r", "1", "--batch", "1000", "--num-inserts", "2000", "--primary-key", "client",
            "--tables", "multiple"), [2000, 8000])
    # One _bulk request per batch, even though each batch spans the four indices.
    assert [r["figures"]["latency"]["calls"] for r in reports] == [2, 8]
    counts = [get(search, f"/events{t}/_count")["count"] for t in range(4)]
    assert sum(counts) == 8000 and all(counts)


def test_single_inserts_with_database_ids(cli, search):
    reports = assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--num-inserts", "300"), [300])
    assert reports[0]["figures"]["latency"]["calls"] == 300
    assert len({doc["_id"] for doc in documents(search, "events")}) == 300


def test_no_clean_keeps_the_index_and_duplicate_client_ids_are_rejected(cli, search):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "500", "--num-inserts", "1000", "--primary-key", "client"), [1000])
    # Same seed, same stream position, index kept: every key exists already, `create` refuses them.
    again = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "500", "--num-inserts", "1000", "--primary-key", "client", "--no-clean")
    assert again.code == 1
    assert "version_conflict_engine_exception" in again.stderr
    assert get(search, "/events/_count")["count"] == 1000


def test_query_timeout_is_reported_per_query(cli, search):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "2000"), [2000])
    result = run(cli, "query", "-w", "1", "-r", "1", "--query-timeout", "0.000001")
    assert result.code == 0, result.stderr
    summary = result.results()["queries"]
    assert len(summary) == 6  # the five canonical queries and device-downsample
    assert all(row["errors"] == ["query timed out after 1e-06 s"] for row in summary), summary


def test_queries_without_the_index_say_so(cli, search):
    httpx.delete(f"{search}/events", timeout=30)
    result = run(cli, "query", "-w", "1", "-r", "1")
    assert result.code == 1
    assert "index events does not exist" in result.stderr and "(insert events first)" in result.stderr


def test_rejected_primary_key_modes_and_bad_options(cli, search):
    for mode in ("sql", "uuid", "none"):
        result = run(cli, "insert", "-w", "1", "--primary-key", mode)
        assert result.code == 2
        assert f"does not support --primary-key {mode} (supported: client, db)" in result.stderr
        assert "Traceback" not in result.stderr
    result = run(cli, "insert", "-w", "1", "--extra-option", "replicas=-1", "--extra-option", "refresh_interval=soon")
    assert result.code == 2
    assert "replicas" in result.stderr and "refresh_interval" in result.stderr


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize("workload", sorted(WORKLOAD_OPTIONS))
def test_workload_options(cli, search, workload):
    report = verified_workload_run(run(cli, "insert", "-w", "2", "-r", "1", *WORKLOAD_OPTIONS[workload]))
    httpx.post(f"{search}/events/_refresh", timeout=30).raise_for_status()
    assert get(search, "/events/_count")["count"] == report["verification"]["counted"]
    properties = get(search, "/events")["events"]["mappings"]["properties"]
    if workload == "light":
        assert properties == {"timestamp": {"type": "date", "format": "epoch_millis"}, "val1": {"type": "short"}, "val2": {"type": "short"}}
    elif workload == "measurements":
        assert {name: properties[name]["type"] for name in ("temperature", "m1", "m2", "m3")} == dict.fromkeys(("temperature", "m1", "m2", "m3"), "double")
    elif workload != "duration":  # every worker's sequence numbers once each, late ones included
        for worker in ("w000000", "w000001"):
            answer = httpx.post(f"{search}/events/_search", timeout=30, json={
                "size": 0, "query": {"prefix": {"device_id": worker}},
                "aggs": {"distinct": {"cardinality": {"field": "sequence_number"}}, "highest": {"max": {"field": "sequence_number"}}}}).json()
            assert answer["hits"]["total"]["value"] == 1000
            assert (answer["aggregations"]["distinct"]["value"], answer["aggregations"]["highest"]["value"]) == (1000, 999)


def test_time_first_client_keys(cli, search):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "500", "--num-inserts", "1000", "--primary-key", "client",
                        "--extra-option", "key_order=time"), [1000])
    first = documents(search, "events")[0]
    assert first["_id"] == f"{first['timestamp']:013d}-{first['device_id']}-{first['sequence_number']:012d}"


def block(url: str, index: str, blocked: bool) -> None:
    """The flood-stage block of a full disk, set by hand: the server rejects writes into `index` with 429."""
    httpx.put(f"{url}/{index}/_settings", json={"index.blocks.read_only_allow_delete": True if blocked else None},
              timeout=30).raise_for_status()


def bulk_writer(url: str, setup: bool = True, measurements: int = 1, **options):
    """The module in this process, connected, its two indices made (events0, events1): a device
    always writes to the same one, so a batch's events go to both."""
    spec = RunSpec(run_id="bulk-retries", task="insert", target="search", module="elasticsearch", workers=1, batch=1000, tables=2,
                   measurements=measurements, clean=setup, extra={"hosts": url, "replicas": "0", **options})
    module = module_class("elasticsearch")(spec)
    module.connect()
    if setup:
        module.schema.setup()
    return module


def stored_sequence_numbers(url: str) -> list[int]:
    return sorted(doc["sequence_number"] for index in ("events0", "events1") for doc in documents(url, index))


def test_bulk_events_rejected_with_429_are_sent_again_and_only_they(search):
    module = bulk_writer(search)
    batch = EventGenerator(1, 0, 10).batch(0, 1000)
    block(search, "events1", True)
    unblock = threading.Timer(0.5, block, (search, "events1", False))
    unblock.start()
    try:
        module.writer.insert_batch(module.writer.prepare_batch(batch))
    finally:
        unblock.join()
        module.close()
    # Half the events (events0's devices) went in at once, the rest once the block was lifted; with
    # server-made ids, sending an accepted event again would store it twice.
    assert stored_sequence_numbers(search) == batch.sequence_number.tolist()
    assert module.retries() >= 1


def test_bulk_events_still_rejected_after_the_retries_fail_the_batch(search):
    module = bulk_writer(search, max_retries="2")
    batch = EventGenerator(1, 0, 10).batch(0, 1000)
    block(search, "events1", True)
    try:
        with pytest.raises(RetriesExhausted, match="500 events rejected with 429"):
            module.writer.insert_batch(module.writer.prepare_batch(batch))
    finally:
        block(search, "events1", False)
        module.close()
    assert module.retries() == 2
    assert stored_sequence_numbers(search) == [n for n, device in zip(batch.sequence_number.tolist(), batch.device_index.tolist()) if device % 2 == 0]


def test_bulk_events_refused_for_another_reason_fail_the_batch_with_the_servers_reason(search):
    bulk_writer(search).close()  # indices of the default mapping (strict: no m1, m2)
    module = bulk_writer(search, setup=False, measurements=3)
    try:
        with pytest.raises(SearchServerError, match="bulk insert failed: strict_dynamic_mapping_exception"):
            module.writer.insert_batch(module.writer.prepare_batch(EventGenerator(1, 0, 10, measurements=3).batch(0, 1000)))
    finally:
        module.close()
    assert module.retries() == 0
