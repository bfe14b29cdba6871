"""How each non-SQL module reads a query file's answer as rows (docs/query-files.md, "Texts and
languages"), on answers as their servers give them: InfluxQL's `time` kept only where it is a reading's
or a bucket's, IoTDB's device paths and empty groups, Elasticsearch's aggregations flattened in the
order the body names them, PromQL's `column` series pivoted, MongoDB's documents. End to end against
the real servers: tests/integration/test_query_files.py."""

from __future__ import annotations

import pytest

from iotdb_bench.simulator.modules.base import ModuleError
from iotdb_bench.simulator.modules.elasticsearch import text_answers as search
from iotdb_bench.simulator.modules.influxdb import influxql_answers
from iotdb_bench.simulator.modules.iotdb import text_answers as iotdb
from iotdb_bench.simulator.modules.mongodb import text_answers as mongodb
from iotdb_bench.simulator.modules.victoriametrics import promql_answers


@pytest.mark.parametrize(("statement", "keeps"), [
    ("SELECT count(temperature), max(temperature) FROM events WHERE time >= 0 GROUP BY device_id", False),  # time: the range's start
    ("SELECT last(temperature) FROM events GROUP BY device_id", True),  # one selector: its point's time
    ("SELECT min(temperature), max(temperature) FROM events", False),
    ("SELECT mean(temperature) FROM events WHERE time >= 0 GROUP BY time(1m), device_id fill(none)", True),  # buckets' starts
    ("SELECT temperature FROM events LIMIT 3", True),  # raw points
])
def test_influxql_keeps_time_where_it_says_something_about_the_data(statement, keeps):
    series = [{"name": "events", "tags": {"device_id": "w000000-d000001"}, "columns": ["time", "a"], "values": [[1767225600000, 7]]}]
    assert influxql_answers.conversion(statement)(series) == [("w000000-d000001", *((1767225600000,) if keeps else ()), 7)]


def test_iotdb_rows_name_devices_by_their_ids_and_leave_out_groups_without_readings():
    names = ["Device", "count(temperature)", "max_value(temperature)"]
    fetched = [["root.bench.events.`w000000-d000000`", 33, 25.82], ["root.bench.events.`w000000-d000002`", 0, float("nan")]]
    assert iotdb.rows((names, fetched)) == [("w000000-d000000", 33, 25.82)]
    last = (["Time", "Timeseries", "Value", "DataType"], [[1767225899900, "root.bench.events.`w000000-d000004`.temperature", "16.84", "DOUBLE"]])
    assert iotdb.rows(last) == [("w000000-d000004", 1767225899900, 16.84)]
    assert iotdb.in_database("SELECT LAST temperature FROM root.iotbench.events.*", "mine") == "SELECT LAST temperature FROM root.mine.events.*"


def test_search_aggregations_are_rows_of_bucket_keys_then_metrics_in_the_body_order():
    body = search.body('{"size": 0, "aggs": {"device": {"terms": {"field": "device_id"}, "aggs": {"n": {"value_count": {"field": "t"}}, '
                       '"newest": {"top_hits": {"size": 1, "_source": ["timestamp", "temperature"]}}}}}}')
    answer = {"aggregations": {"device": {"buckets": [
        {"key": "w000000-d000000", "doc_count": 2, "newest": {"hits": {"hits": [{"_source": {"temperature": 20.5, "timestamp": 99}}]}}, "n": {"value": 2}},
        {"key": "w000000-d000001", "doc_count": 0, "n": {"value": 0}, "newest": {"hits": {"hits": []}}}]}}}
    assert search.rows(body, answer) == [("w000000-d000000", 2, 99, 20.5)]  # the empty bucket left out, as SQL's GROUP BY has none
    with pytest.raises(ModuleError, match="not JSON"):
        search.body('{"size": 0,')
    with pytest.raises(ModuleError, match="one bucket aggregation or metrics only"):
        search.rows({"aggs": {"m": {"max": {"field": "t"}}, "d": {"terms": {"field": "device_id"}}}},
                    {"aggregations": {"m": {"value": 1.0}, "d": {"buckets": []}}})


def test_promql_series_labelled_column_are_one_row_in_the_order_the_text_names_them():
    text = 'union(label_set(tlast_over_time(x[1d]) * 1000, "column", "time"), label_set(last_over_time(x[1d]), "column", "value"))'
    result = [{"metric": {"column": "value", "device_id": "d1"}, "value": [1795946226, "20.5"]},
              {"metric": {"column": "time", "device_id": "d1"}, "value": [1795946226, "1767225899500"]}]
    assert promql_answers.conversion(text)(result) == [("d1", 1767225899500.0, 20.5)]
    matrix = [{"metric": {"__name__": "x", "device_id": "d1"}, "values": [[1767225600, "1"], [1767225660.5, "2"]]}]
    assert promql_answers.conversion("x[2m]")(matrix) == [("d1", 1767225600000, 1.0), ("d1", 1767225660500, 2.0)]


def test_mongodb_documents_are_rows_and_dates_are_extended_json():
    stages = mongodb.pipeline('[{"$match": {"timestamp": {"$gte": {"$date": "2026-01-01T00:00:00.000Z"}}}}]')
    assert stages[0]["$match"]["timestamp"]["$gte"].isoformat().startswith("2026-01-01T00:00:00")
    assert mongodb.rows([{"_id": {"device": "d1", "minute": 5}, "n": 3}, {"_id": "d2", "n": 1}]) == [("d1", 5, 3), ("d2", 1)]
    with pytest.raises(ModuleError, match="not an aggregation pipeline"):
        mongodb.pipeline('{"$match": {}}')
