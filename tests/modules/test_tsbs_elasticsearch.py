"""TSBS's cpu-only data and DevOps query types on the real Elasticsearch 8 AND the real OpenSearch 2
(tests/tsbs_story.py): the `cpu` index (tags as keywords, fields as longs), TSBS's rows and points,
every type answered `ok`, changed documents found, and the storage figure from _stats/store."""

from __future__ import annotations

import httpx
import pytest

from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import run_cli
from tests.modules.test_elasticsearch import CONFIG, SERVERS, get, reachable
from tests.tsbs_story import DATA, INSERT, TSBS_ROWS, assert_every_type_answers_ok, assert_inserted, check_changed_rows_are_found

pytestmark = [pytest.mark.elasticsearch, pytest.mark.slow]

CHANGED_VALUE = 101  # the fields are longs: 100.5 would be stored as 100, a value the walks reach


@pytest.fixture(scope="module", params=sorted(SERVERS))
def search(request, tmp_path_factory):
    """(the server's URL, a folder to run the CLI in, the insert's report) once the story's data is inserted."""
    url = reachable(request.param)
    folder = tmp_path_factory.mktemp(f"tsbs-{request.param}")
    (folder / "config.yaml").write_text(CONFIG.format(url=url))
    result = run(folder)("insert", *INSERT)
    assert_inserted(result)
    yield url, folder, result.results()["runs"][0]["report"]
    httpx.delete(f"{url}/cpu", timeout=60)


def run(folder):
    return lambda *args: run_cli([args[0], "--config", "config.yaml", "--target", "search", "--platform", "local", *args[1:]], folder)


def test_tsbs_index_and_every_query_type_answered_right(search):
    url, folder, _ = search
    mapping = get(url, "/cpu/_mapping")["cpu"]["mappings"]
    assert mapping["dynamic"] == "strict"
    assert mapping["properties"] == {"time": {"type": "date", "format": "epoch_millis"}, **{key: {"type": "keyword"} for key in TAG_NAMES},
                                     **{key: {"type": "long"} for key in CPU_FIELDS}}
    assert get(url, "/cpu/_count")["count"] == TSBS_ROWS
    [first] = httpx.post(f"{url}/cpu/_search", json={"size": 1, "sort": [{"time": "asc"}], "query": {"term": {"hostname": "host_0"}}},
                         timeout=30).json()["hits"]["hits"]
    assert first["_source"]["time"] == DATA.start_ms and set(first["_source"]) == {"time", *TAG_NAMES, *CPU_FIELDS}
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(search):
    url, folder, _ = search

    def change(host: int, step: int, value: float) -> None:  # a partial document update: no scripting needed
        query = {"bool": {"filter": [{"term": {"hostname": f"host_{host}"}}, {"term": {"time": DATA.time_of(step)}}]}}
        [hit] = httpx.post(f"{url}/cpu/_search", json={"query": query}, timeout=30).json()["hits"]["hits"]
        httpx.post(f"{url}/cpu/_update/{hit['_id']}", json={"doc": {"usage_user": value}}, params={"refresh": "true"},
                   timeout=30).raise_for_status()

    check_changed_rows_are_found(run(folder), change, CHANGED_VALUE)


def test_storage_is_the_indices_store_after_a_refresh_and_grows_with_the_data(search):
    _, _, report = search
    assert report["notes"][0] == "storage: the indices' segment files from _stats/store after a refresh, all copies (primaries and replicas)"
    before, after = report["server"]["storage_bytes_at_start"], report["server"]["storage_bytes"]
    assert 0 <= before < 10_000 < after  # an empty index's few files, then the rows' segments
    assert 10 < after / TSBS_ROWS < 1_000  # bytes per row of ten whole numbers, ten tags and a time
