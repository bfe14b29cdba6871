"""The comparison table's rows on known saved documents: mode labels, query cells, variants."""

import pytest

from cli import comparison


def spec(module="postgres", batch=1000, **options):
    return {"module": module, "batch": batch, "primary_key": "sql", "connection": {}, "extra": {k: str(v) for k, v in options.items()}}


@pytest.mark.parametrize(("given", "label"), [
    (spec(), "copy, size 1000"),
    (spec(use_values_lists="true"), "values lists, size 1000"),
    (spec(batch_mode="transaction"), "transaction, size 1000"),
    (spec(copy_supported="false"), "batch, size 1000"),
    (spec("timescaledb"), "copy, size 1000"),
    (spec("sqlite", batch=100), "batch, size 100"),
    (spec("cassandra", max_sync_calls=120), "batch, size 1000, max_sync_calls 120"),
    (spec("null", encoding="rows"), "null (rows), size 1000"),
    (spec(batch=0), "single inserts"),
], ids=lambda value: value if isinstance(value, str) else value["module"])
def test_insert_mode_labels_as_the_original_tables_name_them(given, label):
    assert comparison.insert_mode(given) == label


def query_document(queries, target="postgresql"):
    workers = [{"queries": {name: {"seconds": seconds} for name, (seconds, _) in queries.items()}}]
    figures = {
        name: {"avg_s": sum(seconds) / len(seconds) if seconds else None, "min_s": min(seconds, default=None),
               "max_s": max(seconds, default=None), "cold_avg_s": seconds[0] if seconds else None,
               "warm_avg_s": None, "executions": len(seconds), "rows": 20, "errors": errors}
        for name, (seconds, errors) in queries.items()
    }
    return {"task": "query", "target": target, "runs": [{"workers": 1, "report": {"queries": figures, "workers": workers}}]}


def test_query_cells_failures_unstable_and_variants():
    document = query_document({
        "count-events": ([2.0, 2.0, 2.0], []),
        "temperature-stats": ([1.0, 2.0, 3.0], []),  # CV 50%: marked
        "newest-per-device": ([], ["temporary file size exceeds temp_file_limit"]),
        "newest-per-device (loose index scan)": ([0.08, 0.08], []),
    })
    rows, detail = comparison.query_rows([("folder", document)])
    cells = rows[0]["cells"]
    assert cells["count-events"] == "2"
    assert cells["temperature-stats"] == "2*"
    assert cells["newest-per-device"] == "failure"
    assert cells["temperature-min-max"] == "-"  # not run
    columns = comparison.query_columns(rows)
    assert columns[-1] == "newest-per-device (loose index scan)" and len(columns) == 6
    markdown = comparison.query_markdown(rows)
    assert "| postgresql | 1 | 2 | - | 2* | - | failure | 0.08 |" in markdown
    by_query = {row["query"]: row for row in detail}
    assert by_query["newest-per-device"]["errors"].startswith("temporary file size")
    assert by_query["temperature-stats"]["unstable"] is True and by_query["count-events"]["unstable"] is False
