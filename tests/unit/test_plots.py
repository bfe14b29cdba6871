"""Plots: the series they draw on known inputs, the files they write, and that they stay optional."""

import subprocess
import sys

from cli import plots
from tests.conftest import REPO_ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_last_partial_window_is_scaled_to_a_rate():
    # 2.5 s run: windows [0,1) [1,2) and a half window [2,2.5) holding 500 events = 1000 events/s
    assert plots.rates([1000, 1000, 500], 2.5) == [1000.0, 1000.0, 1000.0]
    # a run ending exactly on a window boundary keeps every value as it is
    assert plots.rates([10, 20], 2.0) == [10.0, 20.0]


def _insert_run(workers, run, per_second, duration, throughput, step=None, level=0):
    return {
        "label": f"{workers} workers, run {run}", "workers": workers, "run": run, "step": step,
        "report": {
            "figures": {"events": sum(per_second), "throughput": throughput, "duration_s": duration, "per_second": per_second},
            "verification": {"count_before": level, "counted": level + sum(per_second), "ok": True},
        },
    }


def test_events_per_second_is_the_mean_of_the_runs_per_worker_count():
    document = {"task": "insert", "runs": [
        _insert_run(1, 1, [100, 100], 2.0, 100.0),
        _insert_run(1, 2, [300, 100, 50], 2.5, 180.0),
        _insert_run(4, 1, [400], 0.5, 800.0),
    ]}
    series = plots.per_second_series(document)
    edges, values = series["1 worker"]
    assert values == [200.0, 100.0, 100.0]  # third window: one run only, 50 events in 0.5 s
    assert edges == [0.0, 1.0, 2.0, 2.5]
    assert series["4 workers"] == ([0.0, 0.5], [800.0])


def _summary_row(workers, low, avg, high, unstable=False):
    return {"workers": workers, "throughput": {"min": low, "avg": avg, "max": high, "cv": 0.2 if unstable else 0.01, "unstable": unstable},
            "p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 4.0}


def _is_png(path):
    return path.is_file() and path.read_bytes()[:8] == PNG_MAGIC and path.stat().st_size > 5000


def test_insert_document_gives_three_plots(tmp_path):
    document = {
        "task": "insert", "steps": 0,
        "summary": [_summary_row(1, 90, 100, 110), _summary_row(4, 200, 300, 420, unstable=True)],
        "runs": [_insert_run(1, 1, [100, 50], 1.5, 100.0), _insert_run(4, 1, [300], 1.0, 300.0)],
    }
    written = plots.draw(document, tmp_path)
    assert [path.name for path in written] == ["inserts-per-second.png", "latency.png", "events-per-second.png"]
    assert all(_is_png(path) for path in written)


def test_steps_document_gives_the_fill_level_plot(tmp_path):
    document = {
        "task": "insert", "steps": 2,
        "summary": [{"step": 1, "level": 0, "throughput": 100.0}, {"step": 2, "level": 1000, "throughput": 90.0}],
        "runs": [_insert_run(2, 1, [1000], 1.0, 100.0, step=1), _insert_run(2, 2, [900], 1.0, 90.0, step=2, level=1000)],
    }
    written = plots.draw(document, tmp_path)
    assert [path.name for path in written] == ["fill-level.png", "events-per-second.png"]
    assert all(_is_png(path) for path in written)


def test_query_plot_copes_with_a_failed_query(tmp_path):
    ok = {"min_s": 0.1, "avg_s": 0.2, "max_s": 0.4, "cold_avg_s": 0.4, "warm_avg_s": 0.1, "errors": []}
    failed = {"min_s": None, "avg_s": None, "max_s": None, "cold_avg_s": None, "warm_avg_s": None, "errors": ["timeout"]}
    document = {"task": "query", "summary": [
        {"workers": 1, "query": "count-events", **ok}, {"workers": 1, "query": "newest-per-device", **failed}]}
    [path] = plots.draw(document, tmp_path)
    assert path.name == "query-durations.png" and _is_png(path)


def test_nothing_to_draw_without_a_summary(tmp_path):
    assert plots.draw({"task": "insert", "status": "failed", "runs": []}, tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_matplotlib_is_not_imported_at_startup():
    code = "import sys; import cli.main; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_plotting_error_is_a_warning_not_a_failure(tmp_path, capsys):
    from cli.main import write_figures  # cli.saved_results is loaded by cli.main, after what it uses

    broken = {"task": "insert", "steps": 0, "summary": [{"workers": 1}], "runs": []}  # no throughput figures
    write_figures(tmp_path, broken)  # must not raise
    assert "could not draw the plots" in capsys.readouterr().err
