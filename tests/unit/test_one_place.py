"""A figure is one entry of the catalogue and a table one entry of a document's sections: added there
(and nowhere else), both are in every view: the terminal of a run and of compare, report.html,
compare.html, compare.md and the CSV files."""

from __future__ import annotations

import dataclasses

from iotdb_bench.cli.report import comparison, folder_views, render
from iotdb_bench.cli.results import compared
from iotdb_bench.cli.results.tables import catalogue, sections
from iotdb_bench.cli.results.tables import formats as f
from iotdb_bench.cli.results.tables.catalogue import BOTH, Catalogue, Figure
from iotdb_bench.cli.results.tables.sections import Section
from tests import factories
from tests.csv_checks import read_csv
from tests.unit.test_table_widths import Recording

BYTES = Figure("Bytes/s", value=lambda row: row.throughput.avg * 48, form=f.rate, levels=BOTH, label="Bytes written per second",
               explain="Bytes/s = inserts/s x 48 bytes per event", csv=(("bytes_per_s", lambda row: row.throughput.avg * 48),))
PER_WORKER = Catalogue("Events per worker", (
    catalogue.DATABASE, catalogue.SOURCE, catalogue.WORKERS,
    Figure("Events/worker", lambda row: f.rate(row.throughput.avg / row.workers), BOTH, label="Inserts/s per worker",
           csv=(("per_worker", lambda row: row.throughput.avg / row.workers),)),
))


def with_a_new_figure_and_table(monkeypatch) -> None:
    monkeypatch.setattr(catalogue, "INSERTS", dataclasses.replace(catalogue.INSERTS, figures=(*catalogue.INSERTS.figures, BYTES)))
    of_document, of_comparison = sections.document_sections, sections.compared_sections
    monkeypatch.setattr(sections, "document_sections", lambda document: [
        *of_document(document), Section("per-worker", PER_WORKER, document.inserts, csv="per-worker.csv")])
    monkeypatch.setattr(sections, "compared_sections", lambda rows, study=False: [
        *of_comparison(rows, study), Section("per-worker", PER_WORKER, rows.inserts, compared=True, csv="per-worker.csv")])


def test_a_figure_and_a_table_added_in_one_place_are_in_every_view(monkeypatch, tmp_path):
    with_a_new_figure_and_table(monkeypatch)
    monkeypatch.setenv("IOTBENCH_PLOTS", "0")
    document = factories.document([(2, factories.insert_report([1000], 0.5, throughput=2000.0, workers=2))])
    expected = {"Bytes/s": "96,000", "Events/worker": "1,000"}

    run = tmp_path / "run"
    run.mkdir()
    terminal = Recording()
    monkeypatch.setattr(render, "console", terminal)
    render.show(document, run)
    folder_views.write(run, document)
    shown = terminal.export_text()
    assert "Events per worker" in shown and all(header in shown and value in shown for header, value in expected.items())
    page = (run / "report.html").read_text()
    assert "Bytes written per second" in page and "Events per worker" in page and "Inserts/s per worker" in page
    assert "96,000" in page and "1,000" in page
    assert read_csv(run / "summary.csv")[1][0]["bytes_per_s"] == "96000.0"
    assert read_csv(run / "per-worker.csv")[1][0]["per_worker"] == "1000.0"

    out = tmp_path / "compare"
    out.mkdir()
    terminal = Recording()
    monkeypatch.setattr(comparison, "console", terminal)
    comparison.write(compared.compare([("folder-a", document)]), out)
    shown = terminal.export_text()
    assert "Events per worker" in shown and all(header in shown and value in shown for header, value in expected.items())
    markdown = (out / "compare.md").read_text()
    assert "| Bytes written per second |" in markdown and "## Events per worker" in markdown and "| Inserts/s per worker |" in markdown
    page = (out / "compare.html").read_text()
    assert "Bytes written per second" in page and "Events per worker" in page
    assert read_csv(out / "inserts.csv")[1][0]["bytes_per_s"] == "96000.0"
    assert read_csv(out / "per-worker.csv")[1][0] == {"database": "sqlite", "source": "folder-a", "workers": "2", "per_worker": "1000.0"}
