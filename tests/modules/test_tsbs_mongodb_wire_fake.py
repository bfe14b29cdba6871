"""TSBS's cpu-only data and DevOps query types through the mongodb module against a FAKE MongoDB
(tests/modules/mongodb_wire_fake.py): no MongoDB-compatible server can be installed here.

What this checks is what the real pymongo sends, as the fake receives it: TSBS's layout (a time
series collection bucketed by the host's tags, TSBS's index, TSBS's documents with BSON dates and
doubles) and each query type's pipeline with the execution's hosts and window. The fake also
evaluates the pipelines by MongoDB's documented semantics (its small interpreter), so the story of
tests/tsbs_story.py runs end to end: every type's answer converted and checked, changed documents
found. That shows the pipelines ask the right question; it says nothing of a real MongoDB's answers
or speed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bson.datetime_ms import DatetimeMS

from iotdb_bench.simulator.queries.parameters import ParameterDraws
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, written
from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import CliResult, run_cli
from tests.modules.mongodb_wire_fake import FakeMongoState, serving
from tests.tsbs_story import DATA, INSERT, ROWS, TSBS_ROWS, assert_inserted, check_changed_rows_are_found

pytestmark = [pytest.mark.mongodb, pytest.mark.slow]

# The fake evaluates a pipeline in Python over every document, one command at a time: generous timeouts.
CONFIG = """\
platform: local
targets:
  mongo-fake:
    module: mongodb
    uri: mongodb://{address}
    database: bench
    timeout_s: 300
"""


@contextlib.contextmanager
def inserted(folder: Path, insert: list[str], check: Callable[[CliResult], None]) -> Iterator[tuple[FakeMongoState, Callable[..., CliResult]]]:
    """(a fake's state, `run(task, *args)`: the CLI against it, in `folder`) once `insert` has run and `check` passed."""
    state = FakeMongoState()
    with serving(state) as address:
        (folder / "config.yaml").write_text(CONFIG.format(address=address))

        def run(task: str, *args: str) -> CliResult:
            return run_cli([task, "--config", "config.yaml", "--target", "mongo-fake", *args], folder)

        check(run("insert", *insert))
        yield state, run


def made(state: FakeMongoState) -> tuple[dict[str, dict], dict[str, list[list[tuple[str, int]]]]]:
    """What the module made: each collection's create command, and the keys of each collection's indexes."""
    creates = {c.body["create"]: c.body for c in state.of("create")}
    indexes = {c.body["createIndexes"]: [list(i["key"].items()) for i in c.body["indexes"]] for c in state.of("createIndexes")}
    return creates, indexes


@pytest.fixture(scope="module")
def mongo(tmp_path_factory):
    """(the fake's state, `run(task, *args)`: the CLI against it) once the story's data is inserted."""
    with inserted(tmp_path_factory.mktemp("tsbs-mongodb-fake"), INSERT, assert_inserted) as story:
        yield story


def test_tsbs_mongodb_wire_fake_time_series_collection_of_tsbs_documents_and_index(mongo):
    state, _ = mongo
    creates, indexes = made(state)
    assert creates["cpu"]["timeseries"] == {"timeField": "time", "metaField": "tags", "granularity": "seconds"}
    assert indexes["cpu"] == [[("tags.hostname", 1), ("time", 1)]]
    documents = state.documents("bench.cpu")
    assert len(documents) == TSBS_ROWS
    first = min((d for d in documents if d["tags"]["hostname"] == "host_0"), key=lambda d: int(d["time"]))
    assert set(first) == {"_id", "time", "tags", "fields"}  # _id: made by the server
    assert isinstance(first["time"], DatetimeMS) and int(first["time"]) == DATA.start_ms
    assert first["tags"] == dict(zip(TAG_NAMES, host_tags(1, 0, 1)[0]))
    assert list(first["fields"]) == list(CPU_FIELDS) and all(isinstance(value, float) for value in first["fields"].values())
    inserts = [c for c in state.of("insert") if c.body["insert"] == "cpu"]
    assert all(c.body["ordered"] is False and len(c.sequences["documents"]) <= 1000 for c in inserts)


def test_tsbs_mongodb_wire_fake_pipelines_carry_each_executions_hosts_and_window(mongo):
    state, run = mongo
    sent = len(state.of("aggregate"))
    # One execution of each type (the fake takes seconds for one): every answer checked `ok`.
    rows = run("query", "--queries", "tsbs-devops", "-w", "1", "-r", "1").query_rows()
    assert tuple(rows) == TSBS_DEVOPS_QUERIES and {name: rows[name] for name in ROWS} == ROWS
    counts = [{"$match": {}}, {"$group": {"_id": 1, "n": {"$sum": 1}}}]  # count_documents, the read side's bookkeeping
    pipelines = [c.body["pipeline"] for c in state.of("aggregate")[sent:] if c.body["aggregate"] == "cpu" and c.body["pipeline"] != counts]
    assert len(pipelines) == len(TSBS_DEVOPS_QUERIES)  # one aggregate command each
    # single-groupby-5-8-1's execution, with the parameters the tool drew for it (seed 1, worker 0, execution 0).
    draws = ParameterDraws(1, 0, written(DATA))
    parameters = draws.draw("single-groupby-5-8-1", 0, DEVOPS["single-groupby-5-8-1"].parameters)
    window = parameters["window"]
    match = {"tags.hostname": {"$in": list(parameters["hosts"])},
             "time": {"$gte": DatetimeMS(window.start_ms), "$lt": DatetimeMS(window.end_ms)}}
    group = {"_id": {"$dateTrunc": {"date": "$time", "unit": "minute"}}, **{f"max_{name}": {"$max": f"$fields.{name}"} for name in CPU_FIELDS[:5]}}
    assert [{"$match": match}, {"$group": group}, {"$sort": {"_id": 1}}] in pipelines
    assert [{"$sort": {"tags.hostname": 1, "time": -1}},
            {"$group": {"_id": "$tags.hostname", "time": {"$first": "$time"}, "fields": {"$first": "$fields"}}}] in pipelines
    end = draws.draw("groupby-orderby-limit", 0, DEVOPS["groupby-orderby-limit"].parameters)["window"].end_ms
    assert [{"$match": {"time": {"$lt": DatetimeMS(end)}}},
            {"$group": {"_id": {"$dateTrunc": {"date": "$time", "unit": "minute"}}, "max_usage_user": {"$max": "$fields.usage_user"}}},
            {"$sort": {"_id": -1}}, {"$limit": 5}] in pipelines
    highs = [p for p in pipelines if "fields.usage_user" in p[0].get("$match", {})]
    assert len(highs) == 2 and all(p[0]["$match"]["fields.usage_user"] == {"$gt": 90.0} for p in highs)


def test_tsbs_mongodb_wire_fake_documents_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(mongo):
    state, run = mongo

    def change(host: int, step: int, value: float) -> None:
        with state.lock:
            [document] = [d for d in state.collections["bench.cpu"].documents
                          if d["tags"]["hostname"] == f"host_{host}" and int(d["time"]) == DATA.time_of(step)]
            document["fields"]["usage_user"] = value

    check_changed_rows_are_found(lambda *args: run(*args), change)
