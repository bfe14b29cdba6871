"""TSBS's devops data (nine measurements, 101 fields a host and step) on the real Elasticsearch 8 AND the
real OpenSearch 2 (tests/tsbs_story.py's devops story): an index per measurement (the host's tags and
the measurement's own as keywords, the fields long or double as TSBS's serializer types them), TSBS's
rows and points, the 15 DevOps types reading `cpu` answered `ok`, changed cpu documents found.

A file of its own: its data replaces the cpu-only suite's `cpu` index (test_tsbs_elasticsearch.py).
The translog is synced asynchronously here and the _bulk requests carry 5,000 documents (the layout
and the answers are tested, not durability): the story's 140,400 documents take a fifth of the time.
"""

from __future__ import annotations

import httpx
import pytest

from iotdb_bench.simulator.spec import TSBS_TABLES
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from tests.modules.test_elasticsearch import SERVERS, bulk_story_cli, get, post_search
from tests.tsbs_story import DEVOPS_STORY, HOSTS, assert_every_type_answers_ok, assert_inserted, check_changed_rows_are_found

pytestmark = [pytest.mark.elasticsearch, pytest.mark.slow]

INDICES = TSBS_TABLES["tsbs-devops"]
CHANGED_VALUE = 101  # cpu's fields are longs: a whole number no walk of [0, 100] reaches


@pytest.fixture(scope="module", params=sorted(SERVERS))
def devops(request, tmp_path_factory):
    """(the server's URL, `run(task, *args)`: the CLI on it) once the devops story's data is inserted."""
    url, run = bulk_story_cli(request.param, tmp_path_factory.mktemp(f"tsbs-devops-{request.param}"))
    assert_inserted(run("insert", *DEVOPS_STORY.insert, "--batch", "5000"), DEVOPS_STORY)
    yield url, run
    httpx.delete(f"{url}/{','.join(INDICES)}", params={"ignore_unavailable": "true"}, timeout=60)


def test_an_index_per_measurement_typed_as_tsbs_writes_its_fields(devops):
    url, _ = devops
    per_index = DEVOPS_STORY.tsbs_rows // len(INDICES)
    for index in INDICES:
        measurement = USE_CASES["tsbs-devops"].measurement(index)
        own_tags = [name for name, _ in measurement.own_tags]
        mapping = get(url, f"/{index}/_mapping")[index]["mappings"]
        assert mapping["dynamic"] == "strict"
        assert mapping["properties"] == {"time": {"type": "date", "format": "epoch_millis"},
                                         **{name: {"type": "keyword"} for name in [*TAG_NAMES, *own_tags]},
                                         **{name: {"type": "long" if integer else "double"}
                                            for name, integer in zip(measurement.field_names, measurement.integer_fields)}}, index
        answer = post_search(url, index, {"size": 1, "track_total_hits": True, "post_filter": {"term": {"hostname": "host_0"}}, "sort": [{"time": "asc"}],
                                     "aggs": {"hosts": {"cardinality": {"field": "hostname"}}}})
        assert get(url, f"/{index}/_count")["count"] == per_index and answer["aggregations"]["hosts"]["value"] == HOSTS, index
        [first] = answer["hits"]["hits"]
        assert list(first["_source"]) == ["time", *TAG_NAMES, *own_tags, *measurement.field_names], index
        assert [first["_source"][name] for name in TAG_NAMES] == list(host_tags(DEVOPS_STORY.data.seed, 0, 1)[0])
        assert first["_source"]["time"] == DEVOPS_STORY.data.start_ms
    # mem's percentages are TSBS's float64s, stored as sent: the double operations TSBS makes.
    mem = [hit["_source"] for hit in post_search(url, "mem", {"size": 500, "query": {"match_all": {}}})["hits"]["hits"]]
    assert all(row["used_percent"] == 100.0 * (row["used"] / row["total"]) and row["available"] == row["total"] - row["used"]
               for row in mem)
    assert any(row["used_percent"] != int(row["used_percent"]) for row in mem)
    # diskio's serial is each host's own: one value per host.
    serials = post_search(url, "diskio", {"size": 0, "aggs": {"pairs": {"composite": {
        "size": 100, "sources": [{"host": {"terms": {"field": "hostname"}}}, {"serial": {"terms": {"field": "serial"}}}]}}}})
    assert len(serials["aggregations"]["pairs"]["buckets"]) == HOSTS


def test_the_devops_types_read_cpu_and_find_its_changed_rows(devops):
    url, run = devops
    assert_every_type_answers_ok(run("query", "-w", "2", "-r", "2"), story=DEVOPS_STORY)  # no --queries: the data's own

    def change(host: int, step: int, value: float) -> None:  # a partial document update: no scripting needed
        query = {"bool": {"filter": [{"term": {"hostname": f"host_{host}"}}, {"term": {"time": DEVOPS_STORY.data.time_of(step)}}]}}
        [hit] = post_search(url, "cpu", {"query": query})["hits"]["hits"]
        httpx.post(f"{url}/cpu/_update/{hit['_id']}", json={"doc": {"usage_user": value}}, params={"refresh": "true"},
                   timeout=30).raise_for_status()

    check_changed_rows_are_found(run, change, CHANGED_VALUE, story=DEVOPS_STORY)
