"""TSBS's iot data (trucks: readings and diagnostics) through the mongodb module against a FAKE MongoDB
(tests/modules/mongodb_wire_fake.py; no MongoDB-compatible server can be installed here), on
tests/tsbs_story.py's small IoT story (3 trucks, 20 hours): what the real pymongo sends, as the fake
receives it (a time series collection per measurement bucketed by the tags, TSBS's index on the name,
the documents with TSBS's null tags and fields absent), and the 13 IoT types evaluated by the fake's
interpreter of MongoDB's documented semantics, every answer checked and changed documents found. It
says nothing of a real MongoDB's answers or speed.
"""

from __future__ import annotations

import pytest
from bson.datetime_ms import DatetimeMS

from iotdb_bench.simulator.spec import TSBS_TABLES
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.iot import TAGS, truck_tags
from tests.modules.test_tsbs_mongodb_wire_fake import inserted, made
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

pytestmark = [pytest.mark.mongodb, pytest.mark.slow]

COLLECTIONS = TSBS_TABLES["tsbs-iot"]
TAG_NAMES = tuple(name for name, _ in TAGS)


@pytest.fixture(scope="module")
def mongo(tmp_path_factory):
    """(the fake's state, `run(task, *args)`: the CLI against it) once the small IoT story's data is inserted."""
    with inserted(tmp_path_factory.mktemp("tsbs-iot-mongodb-fake"), SMALL_IOT_INSERT,
                  lambda result: assert_iot_inserted(result, SMALL_IOT_DATA)) as story:
        yield story


def test_tsbs_iot_mongodb_wire_fake_collections_of_documents_with_tsbs_nulls_absent(mongo):
    state, _ = mongo
    creates, indexes = made(state)
    full_tags = dict(zip(TAG_NAMES, truck_tags(SMALL_IOT_DATA.seed, 0, 1)[0]))
    for name, rows in zip(COLLECTIONS, SMALL_IOT_DATA.rows_per_measurement(), strict=True):
        assert creates[name]["timeseries"] == {"timeField": "time", "metaField": "tags", "granularity": "seconds"}
        assert indexes[name] == [[("tags.name", 1), ("time", 1)]]
        documents = state.documents(f"bench.{name}")
        assert len(documents) == rows, name
        assert all(set(d) == {"_id", "time", "tags", "fields"} and isinstance(d["time"], DatetimeMS) for d in documents)
        # TSBS's null tags are absent members of `tags`: a nameless document (its row joins no truck), a fleetless one.
        for tag in ("name", "fleet"):
            assert 0 < sum(tag not in d["tags"] for d in documents) < rows * 0.01, (name, tag)
        assert all(len(d["tags"]) >= len(TAGS) - 1 for d in documents)  # at most one tag null
        first = min((d for d in documents if d["tags"] == full_tags), key=lambda d: int(d["time"]))  # truck_0's, all eight tags
        assert (int(first["time"]) - SMALL_IOT_DATA.start_ms) % SMALL_IOT_DATA.interval_ms == 0 and list(first["tags"]) == list(TAG_NAMES)
        # Every field a double (TSBS's serializer writes float64s), the capacities too; status whole.
        fields = USE_CASES["tsbs-iot"].measurement(name).field_names
        assert all(set(d["fields"]) <= set(fields) and all(isinstance(v, float) for v in d["fields"].values()) for d in documents)
        nulls = sum(len(d["fields"]) < len(fields) for d in documents)
        assert 0.05 < nulls / rows < 0.13 and all(len(d["fields"]) >= len(fields) - 1 for d in documents), name
    assert [type(value) for value in full_tags.values()] == [str] * 5 + [float] * 3
    loadless = [d for d in state.documents("bench.diagnostics") if "current_load" not in d["fields"]]
    assert loadless and set(loadless[0]["fields"]) == {"fuel_state", "status"}
    assert all(value == int(value) for d in state.documents("bench.diagnostics") for value in [d["fields"].get("status", 0.0)])


def test_tsbs_iot_mongodb_wire_fake_every_type_answered_and_changed_documents_found(mongo):
    state, run = mongo
    sent = len(state.of("aggregate"))
    # No --queries: the data's own, all 13; one execution each, of the seed whose last-loc draws a fleet with trucks.
    assert_every_iot_type_answers_ok(run("query", "-w", "1", "-r", "1", "--seed", str(SMALL_IOT_QUERY_SEED)), data=SMALL_IOT_DATA)
    pipelines = [c.body["pipeline"] for c in state.of("aggregate")[sent:]]
    assert [{"$group": {"_id": "$tags"}}] in pipelines  # the trucks' tags (all of them: the queries over the whole data)
    periods = {"$dateTrunc": {"date": "$time", "unit": "minute", "binSize": 10}}
    assert any(stage.get("$group", {}).get("_id") == {"name": "$tags.name", "period": periods} for p in pipelines for stage in p)

    # tests/tsbs_story.py's IOT_CHANGES, made in the fake's documents: truck_0's newest load, truck_1's newest
    # longitude, truck_2's first fuel consumption at a velocity above 1.
    def change(collection: str, truck: str, newest: bool, field: str, value: float, moving: bool = False) -> None:
        with state.lock:
            found = [d for d in state.collections[f"bench.{collection}"].documents if d["tags"].get("name") == truck
                     and (not moving or d["fields"].get("velocity", 0) > 1)]
            (max if newest else min)(found, key=lambda d: int(d["time"]))["fields"][field] = value

    change("diagnostics", "truck_0", True, "current_load", 1_000_000.0)
    change("readings", "truck_1", True, "longitude", 200.0)
    change("readings", "truck_2", False, "fuel_consumption", 1000.0, moving=True)
    readers = {name for name, _ in iot_readers_of_the_changes(QUERY_RUNS, SMALL_IOT_DATA, SMALL_IOT_QUERY_SEED)}
    assert {"high-load", "last-loc", "single-last-loc"} <= readers
    check_iot_changes_found(run, SMALL_IOT_DATA, SMALL_IOT_QUERY_SEED)


def test_tsbs_iot_mongodb_wire_fake_plain_collections(tmp_path):
    """collection_type=plain: TSBS's naive layout as it is (no time series options), the same documents and answers."""
    data = SMALL_IOT_DATA.model_copy(update={"steps": 2 * 360})
    insert = ["--schema", "tsbs-iot", "--devices", str(data.hosts), "--time-range", "2h", "-w", "1", "-r", "1", "--extra-option", "collection_type=plain"]
    with inserted(tmp_path, insert, lambda result: assert_iot_inserted(result, data)) as (state, run):
        creates, indexes = made(state)
        assert all("timeseries" not in creates[name] and indexes[name] == [[("tags.name", 1), ("time", 1)]] for name in COLLECTIONS)
        rows = run("query", "--queries", "last-loc,avg-load,daily-activity", "-w", "1", "-r", "1", "--seed", str(SMALL_IOT_QUERY_SEED)).query_rows()
        assert rows["avg-load"] and rows["daily-activity"]
