"""Plots: the series they draw on known inputs, the files they write, and that they stay optional."""

import subprocess
import sys

import pytest

from iotdb_bench.cli.report import plots
from iotdb_bench.simulator.measurement import windows
from tests import factories
from tests.conftest import REPO_ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.plots


def test_last_partial_window_is_scaled_to_a_rate():
    # 2.5 s run: windows [0,1) [1,2) and a half window [2,2.5) holding 500 events = 1000 events/s
    assert windows.rates([1000, 1000, 500], 1, 2.5) == [1000.0, 1000.0, 1000.0]
    # a run ending exactly on a window boundary keeps every value as it is
    assert windows.rates([10, 20], 1, 2.0) == [10.0, 20.0]
    # 4 s windows of a long run: per second over the width, the last over the part the run lasted
    assert windows.rates([4000, 4000, 1000], 4, 9.0) == [1000.0, 1000.0, 1000.0]


def test_a_long_runs_coarse_windows_are_drawn_at_their_width():
    long_run = factories.insert_report([800, 800, 200], 9.0)
    long_run.figures.series_window_s = 4  # a run that outlasted MAX_WINDOWS seconds keeps 4 s windows
    edges, values = plots.per_second_series(factories.document([(1, long_run)]))["1 worker"]
    assert edges == [0.0, 4.0, 8.0, 9.0]
    assert values == [200.0, 200.0, 200.0]


def test_events_per_second_is_the_mean_of_the_runs_per_worker_count():
    built = factories.document([
        (1, factories.insert_report([100, 100], 2.0)),
        (1, factories.insert_report([300, 100, 50], 2.5)),
        (4, factories.insert_report([400], 0.5, workers=4)),
    ])
    series = plots.per_second_series(built)
    edges, values = series["1 worker"]
    assert values == [200.0, 100.0, 100.0]  # third window: one run only, 50 events in 0.5 s
    assert edges == [0.0, 1.0, 2.0, 2.5]
    assert series["4 workers"] == ([0.0, 0.5], [800.0])


def _is_png(path):
    return path.is_file() and path.read_bytes()[:8] == PNG_MAGIC and path.stat().st_size > 5000


def test_insert_document_gives_three_plots(tmp_path):
    built = factories.document([
        (1, factories.insert_report([100, 50], 1.5, throughput=90)), (1, factories.insert_report([100, 50], 1.5, throughput=110)),
        (4, factories.insert_report([300], 1.0, throughput=200, workers=4)), (4, factories.insert_report([300], 1.0, throughput=420, workers=4)),
    ])
    written = plots.draw(built, tmp_path)
    assert [path.name for path in written] == ["inserts-per-second.png", "latency.png", "events-per-second.png"]
    assert all(_is_png(path) for path in written)


def test_steps_document_gives_the_fill_level_plot(tmp_path):
    built = factories.document([(2, factories.insert_report([1000], 1.0)), (2, factories.insert_report([900], 1.0, level=1000))], steps=2)
    assert [row.level for row in built.inserts] == [0, 1000]
    written = plots.draw(built, tmp_path)
    assert [path.name for path in written] == ["fill-level.png", "events-per-second.png"]
    assert all(_is_png(path) for path in written)


def test_query_plot_copes_with_a_failed_query(tmp_path):
    from iotdb_bench.cli.results.document import QueryRow

    ok = {"executions": 3, "min_s": 0.1, "avg_s": 0.2, "max_s": 0.4, "cold_avg_s": 0.4, "warm_avg_s": 0.1, "errors": []}
    failed = {"executions": 0, "errors": ["timeout"]}
    built = factories.document([], task="query")
    built.queries = [QueryRow(workers=1, query="count-events", **ok), QueryRow(workers=1, query="newest-per-device", **failed)]
    [path] = plots.draw(built, tmp_path)
    assert path.name == "query-durations.png" and _is_png(path)


def test_nothing_to_draw_without_a_summary(tmp_path):
    assert plots.draw(factories.document([], status="failed"), tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_matplotlib_is_not_imported_at_startup():
    code = "import sys; from iotdb_bench.cli.commands import attach, cleanup, insert, reads, saved_results, study; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_plotting_error_is_a_warning_not_a_failure(tmp_path, capsys, monkeypatch):
    from iotdb_bench.cli.report import folder_views

    def broken(document, folder):
        raise ValueError("no figures to draw")

    monkeypatch.setattr(plots, "draw", broken)
    folder_views.write(tmp_path, factories.document([(1, factories.insert_report([100], 1.0))]))  # must not raise
    assert "could not draw the plots" in capsys.readouterr().err


@pytest.mark.parametrize(("setting", "drawn"), [("0", False), ("off", False), ("1", True), (None, True)])
def test_iotbench_plots_0_leaves_the_plots_out_and_the_report_still_written(tmp_path, monkeypatch, setting, drawn):
    from iotdb_bench.cli.report import folder_views

    if setting is None:
        monkeypatch.delenv(plots.PLOTS_ENV, raising=False)
    else:
        monkeypatch.setenv(plots.PLOTS_ENV, setting)
    folder_views.write(tmp_path, factories.document([(1, factories.insert_report([100], 1.0))]))
    assert bool(list(tmp_path.glob("*.png"))) is drawn
    assert (tmp_path / "report.html").is_file()
