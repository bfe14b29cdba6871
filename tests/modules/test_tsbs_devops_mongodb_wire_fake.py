"""TSBS's devops data (nine measurements) through the mongodb module against a FAKE MongoDB
(tests/modules/mongodb_wire_fake.py; no MongoDB-compatible server can be installed here), as
test_tsbs_mongodb_wire_fake.py tests its cpu-only data: what the real pymongo sends, as the fake
receives it (a time series collection per measurement bucketed by the tags, TSBS's index on each, TSBS's
documents: the host's tags and the measurement's own, every field a double), and the DevOps types over
`cpu` evaluated by the fake's interpreter, answers checked and changed documents found. It says
nothing of a real MongoDB's answers or speed.
"""

from __future__ import annotations

import numpy as np
import pytest
from bson.datetime_ms import DatetimeMS

from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES, TSBS_TABLES
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from tests.modules.test_tsbs_mongodb_wire_fake import inserted, made
from tests.tsbs_story import DEVOPS_STORY, HOSTS, ROWS, assert_inserted, check_changed_rows_are_found

pytestmark = [pytest.mark.mongodb, pytest.mark.slow]

COLLECTIONS = TSBS_TABLES["tsbs-devops"]


@pytest.fixture(scope="module")
def mongo(tmp_path_factory):
    """(the fake's state, `run(task, *args)`: the CLI against it) once the devops story's data is inserted."""
    with inserted(tmp_path_factory.mktemp("tsbs-devops-mongodb-fake"), DEVOPS_STORY.insert,
                  lambda result: assert_inserted(result, DEVOPS_STORY)) as story:
        yield story


def test_tsbs_devops_mongodb_wire_fake_a_collection_per_measurement_of_tsbs_documents(mongo):
    state, _ = mongo
    creates, indexes = made(state)
    per_collection = DEVOPS_STORY.tsbs_rows // len(COLLECTIONS)
    for name in COLLECTIONS:
        measurement = USE_CASES["tsbs-devops"].measurement(name)
        assert creates[name]["timeseries"] == {"timeField": "time", "metaField": "tags", "granularity": "seconds"}
        assert indexes[name] == [[("tags.hostname", 1), ("time", 1)]]
        documents = state.documents(f"bench.{name}")
        assert len(documents) == per_collection and len({d["tags"]["hostname"] for d in documents}) == HOSTS, name
        first = min((d for d in documents if d["tags"]["hostname"] == "host_0"), key=lambda d: int(d["time"]))
        assert set(first) == {"_id", "time", "tags", "fields"} and int(first["time"]) == DEVOPS_STORY.data.start_ms
        assert isinstance(first["time"], DatetimeMS)
        own = measurement.tag_values(DEVOPS_STORY.data.seed, np.arange(1))
        assert first["tags"] == {**dict(zip(TAG_NAMES, host_tags(1, 0, 1)[0])), **{tag: values[0] for tag, values in own.items()}}, name
        # TSBS's mongo serializer writes every value as a float64, its int64s too.
        assert list(first["fields"]) == list(measurement.field_names) and all(isinstance(v, float) for v in first["fields"].values()), name
    assert set(state.documents("bench.diskio")[0]["tags"]) == {*TAG_NAMES, "serial"}
    mem = state.documents("bench.mem")
    assert all(d["fields"]["used_percent"] == 100.0 * (d["fields"]["used"] / d["fields"]["total"]) for d in mem[:1000])


def test_tsbs_devops_mongodb_wire_fake_types_read_cpu_answer_ok_and_find_changed_documents(mongo):
    state, run = mongo
    sent = len(state.of("aggregate"))
    rows = run("query", "-w", "1", "-r", "1").query_rows()  # no --queries: the data's own, one execution each
    assert tuple(rows) == TSBS_DEVOPS_QUERIES and {name: rows[name] for name in ROWS} == ROWS
    counts = [{"$match": {}}, {"$group": {"_id": 1, "n": {"$sum": 1}}}]  # count_documents, the read side's bookkeeping
    assert {c.body["aggregate"] for c in state.of("aggregate")[sent:] if c.body["pipeline"] != counts} == {"cpu"}

    def change(host: int, step: int, value: float) -> None:
        with state.lock:
            [document] = [d for d in state.collections["bench.cpu"].documents
                          if d["tags"]["hostname"] == f"host_{host}" and int(d["time"]) == DEVOPS_STORY.data.time_of(step)]
            document["fields"]["usage_user"] = value

    check_changed_rows_are_found(run, change, story=DEVOPS_STORY)
