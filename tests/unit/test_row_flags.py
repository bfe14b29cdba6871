"""Rows whose figures are not worth reading as they stand are flagged, with the reason worded once and
shown by every view: a timed phase under a second, more local worker processes than CPUs, CPU figures
that cannot be true. And the local platform's defaults that keep the quick start's rows unflagged."""

from __future__ import annotations

import pytest
from rich.console import Console

from iotdb_bench.cli.commands import insert
from iotdb_bench.cli.commands.insert_options import InsertOptions
from iotdb_bench.cli.commands.run_options import parse
from iotdb_bench.cli.report import tables
from iotdb_bench.cli.results import findings, summary
from iotdb_bench.cli.results.document import Environment, ResultsDocument
from iotdb_bench.cli.results.host import usable_cpus
from iotdb_bench.cli.results.row_flags import RowFlag
from iotdb_bench.simulator.measurement.resources import ResourceGroup, ResourceUsage
from iotdb_bench.simulator.protocol import WorkerResult
from tests import factories


def document(durations: dict[int, float], cpus: int | None = 2, platform: str = "local") -> ResultsDocument:
    runs = []
    for workers, duration in durations.items():
        report = factories.insert_report([5000], duration, workers=workers)
        report.spec = factories.spec(workers=workers)
        runs.append((workers, report))
    built = factories.document(runs)
    built.platform, built.environment = platform, Environment(cpus=cpus)
    summary.summarise(built)
    return built


def test_a_short_timed_phase_and_more_workers_than_cpus_are_flagged():
    rows = document({1: 0.4, 2: 3.0, 4: 3.0}).inserts
    assert [[flag.kind for flag in row.flags] for row in rows] == [["short-phase"], [], ["more-workers-than-cores"]]
    assert rows[0].flags[0].text == ("timed phase 0.40 s, under 1 s: too short for a stable figure (more events: --num-inserts, "
                                     "or --duration)")
    assert rows[2].flags[0].text.startswith("4 local worker processes on 2 CPUs: they take turns on the CPUs")
    # on Kubernetes the pods spread over nodes: no machine's CPUs to hold them to
    assert document({4: 3.0}, platform="kubernetes").inserts[0].flags == []


def test_impossible_cpu_figures_flag_their_row():
    report = factories.insert_report([5000], 2.0, workers=2)
    report.resources = ResourceUsage(window_start=0.0, window_end=2.0, cores=2, database=ResourceGroup(source="db", cpu_s=3.0),
                                     cli=ResourceGroup(source="cli", cpu_s=2.0), collector=ResourceGroup(source="c", cpu_s=0.1))
    report.workers = []
    built = factories.document([(2, report)])
    [row] = built.inserts
    assert row.flags == []  # without the workers' own figures there is no client CPU to add up
    report.workers = [WorkerResult(worker=0, started_at=0.0, finished_at=2.0, events=5000, cpu_s=1.5)]
    summary.summarise(built)
    [flag] = built.inserts[0].flags
    assert flag.kind == "impossible-cpu" and flag.text.startswith("CPU figures refused, they cannot be true: client 90% + database 75%")


def test_the_flags_travel_in_results_json_with_their_words():
    built = document({1: 0.4})
    saved = built.model_dump(mode="json")["inserts"][0]["flags"]
    assert saved == [{"kind": "short-phase", "detail": "0.40 s", "text": RowFlag(kind="short-phase", detail="0.40 s").text}]
    assert ResultsDocument.model_validate_json(built.model_dump_json()).inserts[0].flags == built.inserts[0].flags


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_terminal_table_marks_flagged_rows_and_fits_the_width(width, monkeypatch):
    built = document({1: 0.4, 2: 3.0, 4: 3.0})
    for row in built.inserts:  # the widest cells a quick start shows
        row.throughput.cv, row.count_check = 0.357, "not applicable"
    narrow = Console(width=width, record=True)
    monkeypatch.setattr("iotdb_bench.cli.terminal.console", narrow)
    narrow.print(tables.section_table(factories.section(built, "inserts")))
    text = narrow.export_text()
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines)
    assert "…" not in text  # nothing cut
    body = " ".join(text.split())
    assert "1! │" in text and "4! │" in text and "2 │" in text
    assert "! 1 worker: timed phase 0.40 s, under 1 s" in body and "! 4 workers: 4 local worker processes on 2 CPUs" in body


def test_report_html_lists_the_flags():
    found = findings.flags(findings.document_findings(document({1: 0.4})))
    assert any(line.startswith("1 worker: timed phase 0.40 s, under 1 s") for line in found)


def test_local_defaults_fit_the_machine():
    assert insert.local_worker_counts(1) == (1,)
    assert insert.local_worker_counts(2) == (1, 2)
    assert insert.local_worker_counts(6) == (1, 2, 4, 6)
    assert insert.local_worker_counts(8) == (1, 2, 4, 8)

    def defaults(platform: str, *args: str) -> tuple:
        length = insert._length_defaults(platform, parse(insert.insert, InsertOptions, ["--target", "sqlite", *args], []).length, False)
        return length.worker_counts, length.num_inserts, length.duration

    assert defaults("local") == (insert.local_worker_counts(usable_cpus()), None, 3.0)
    assert defaults("kubernetes") == ((1, 4, 8, 12, 16), 10_000, None)
    assert defaults("local", "-w", "3", "--num-inserts", "500") == ((3,), 500, None)  # given options stand
