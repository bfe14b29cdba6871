"""The terminal tables of the mixed runs fit a 100-column terminal with the longest query name."""

from __future__ import annotations

from rich.console import Console

from iotdb_bench.cli.report.tables import fitted
from iotdb_bench.cli.results.document import QueryUnderIngestRow
from iotdb_bench.cli.results.tables import catalogue
from iotdb_bench.simulator.spec import QUERY_NAMES


def rendered(table) -> list[str]:
    console = Console(width=100, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return console.export_text().splitlines()


def test_queries_under_ingest_fit_100_columns_with_every_query_name_whole():
    rows = [QueryUnderIngestRow(workers=16, query_workers=4, query=name, runs=3, executions=123_456, p50_ms=1234.5, p99_ms=98765.4,
                                max_ms=99999.0, idle_executions=12, idle_p50_ms=1111.1, idle_p99_ms=2222.2, slowdown=1.11)
            for name in QUERY_NAMES]
    lines = rendered(fitted(catalogue.UNDER_INGEST, rows, catalogue.DEFAULT))
    assert max(len(line) for line in lines) <= 100
    assert lines[0] == "Queries under ingest" and "Clients" in lines[2]
    for name in QUERY_NAMES:
        assert any(name in line for line in lines), name
