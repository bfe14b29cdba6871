"""TSBS's iot data (trucks: readings and diagnostics) on the real Elasticsearch 8 AND the real OpenSearch 2
(tests/tsbs_story.py's small IoT story: 3 trucks, 20 hours): the `readings` and `diagnostics` indices
(the trucks' string tags as keywords, their capacities and the fields as doubles, status long), TSBS's
null tags and fields absent from the documents, the 13 IoT types answered `ok`, and rows changed
behind the tool's back making exactly the types that read them WRONG.

The translog is synced asynchronously and the _bulk requests carry 5,000 documents (the layout and the
answers are tested here, durability in test_elasticsearch.py).
"""

from __future__ import annotations

import httpx
import pytest

from iotdb_bench.simulator.spec import TSBS_TABLES
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.iot import TAGS, truck_tags
from tests.modules.test_elasticsearch import SERVERS, bulk_story_cli, get, post_search
from tests.tsbs_story import (
    QUERY_RUNS,
    SMALL_IOT_DATA,
    SMALL_IOT_INSERT,
    SMALL_IOT_QUERY_SEED,
    assert_every_iot_type_answers_ok,
    assert_iot_inserted,
    check_iot_changes_found,
    iot_readers_of_the_changes,
)

pytestmark = [pytest.mark.elasticsearch, pytest.mark.slow]

INDICES = TSBS_TABLES["tsbs-iot"]


@pytest.fixture(scope="module", params=sorted(SERVERS))
def iot(request, tmp_path_factory):
    """(the server's URL, `run(task, *args)`: the CLI on it) once the small IoT story's data is inserted."""
    url, run = bulk_story_cli(request.param, tmp_path_factory.mktemp(f"tsbs-iot-{request.param}"))
    assert_iot_inserted(run("insert", *SMALL_IOT_INSERT, "--batch", "5000"), SMALL_IOT_DATA)
    yield url, run
    httpx.delete(f"{url}/{','.join(INDICES)}", params={"ignore_unavailable": "true"}, timeout=60)


def count(url: str, index: str, query: dict) -> int:
    return int(httpx.post(f"{url}/{index}/_count", json={"query": query}, timeout=30).json()["count"])


def test_readings_and_diagnostics_with_tsbs_nulls_and_every_iot_type_answered_right(iot):
    url, run = iot
    tags = {name: {"type": "keyword" if kind == "text" else "double"} for name, kind in TAGS}
    for index, rows in zip(INDICES, SMALL_IOT_DATA.rows_per_measurement(), strict=True):
        measurement = USE_CASES["tsbs-iot"].measurement(index)
        mapping = get(url, f"/{index}/_mapping")[index]["mappings"]
        assert mapping["dynamic"] == "strict"
        assert mapping["properties"] == {"time": {"type": "date", "format": "epoch_millis"}, **tags,
                                         **{name: {"type": "long" if integer else "double"}
                                            for name, integer in zip(measurement.field_names, measurement.integer_fields)}}, index
        assert get(url, f"/{index}/_count")["count"] == rows, index
        # TSBS's nulls are absent members: a nameless document (its row joins no truck), a fleetless one.
        for tag in ("name", "fleet"):
            assert 0 < count(url, index, {"bool": {"must_not": {"exists": {"field": tag}}}}) < rows * 0.01, (index, tag)
    assert mapping["properties"]["status"] == {"type": "long"}  # TSBS's int64
    loadless = count(url, "diagnostics", {"bool": {"must_not": {"exists": {"field": "current_load"}}}})
    assert 0.02 < loadless / SMALL_IOT_DATA.rows_per_measurement()[1] < 0.05
    [row] = post_search(url, "diagnostics", {"size": 1, "query": {"bool": {"must_not": {"exists": {"field": "current_load"}}}}})["hits"]["hits"]
    assert "current_load" not in row["_source"] and {"time", "fuel_state", "status"} <= set(row["_source"])
    [first] = post_search(url, "readings", {"size": 1, "sort": [{"time": "asc"}], "query": {"bool": {"filter": [
        {"term": {"name": "truck_0"}}, {"exists": {"field": "fleet"}}, {"exists": {"field": "velocity"}}]}}})["hits"]["hits"]
    assert list(first["_source"])[:9] == ["time", *(name for name, _ in TAGS)]
    assert [first["_source"].get(name) for name, _ in TAGS] == list(truck_tags(SMALL_IOT_DATA.seed, 0, 1)[0])
    # No --queries: the data's own, all 13; one execution each, of the seed whose last-loc draws a fleet with trucks.
    assert_every_iot_type_answers_ok(run("query", "-w", "1", "-r", "1", "--seed", str(SMALL_IOT_QUERY_SEED)), data=SMALL_IOT_DATA)


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(iot):
    """tests/tsbs_story.py's IOT_CHANGES as partial document updates: truck_0's newest load, truck_1's
    newest longitude, truck_2's first fuel consumption at a velocity above 1."""
    url, run = iot
    changes = (("diagnostics", "current_load", 1_000_000, "truck_0", "desc", None),
               ("readings", "longitude", 200, "truck_1", "desc", None),
               ("readings", "fuel_consumption", 1000, "truck_2", "asc", {"range": {"velocity": {"gt": 1}}}))
    for index, field, value, truck, order, moving in changes:
        query = {"bool": {"filter": [{"term": {"name": truck}}, *([moving] if moving else [])]}}
        [hit] = post_search(url, index, {"size": 1, "sort": [{"time": order}], "query": query})["hits"]["hits"]
        httpx.post(f"{url}/{index}/_update/{hit['_id']}", json={"doc": {field: value}}, params={"refresh": "true"},
                   timeout=30).raise_for_status()
    # The seed's executions read every changed row: the newest rows through each of the three types that read them.
    readers = {name for name, _ in iot_readers_of_the_changes(QUERY_RUNS, SMALL_IOT_DATA, SMALL_IOT_QUERY_SEED)}
    assert {"high-load", "last-loc", "single-last-loc"} <= readers
    check_iot_changes_found(run, SMALL_IOT_DATA, SMALL_IOT_QUERY_SEED)
