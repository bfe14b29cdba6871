"""--time-limit on SQLite: the run going on ends at the limit with the figures of what it did (its
events so far, the devices it scanned), every check exact over that, no further run starts, the
command succeeds and its views say the limit was reached (docs/scale.md)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_an_insert_by_count_ends_at_the_limit_and_no_run_starts_after_it(cli):
    result = cli("insert", "--target", "sqlite", "-w", "1", "-r", "3", "--num-inserts", "50000000", "--batch", "1000", "--time-limit", "4")
    assert result.code == 0, result.stderr
    document = result.results()
    assert document["time_limit_reached"] and document["planned_runs"] == 3
    [run] = document["runs"]  # the first run used the whole limit: the other two never started
    report = run["report"]
    assert report["time_limit_reached"] and 0 < report["figures"]["events"] < 50_000_000
    assert report["figures"]["duration_s"] < 4 + 2  # ended at the limit (plus the call in flight)
    assert report["verification"]["ok"] and report["verification"]["counted"] == report["figures"]["events"]
    assert "--time-limit reached: 1 of 3 planned runs finished; the last inserted" in result.stdout


def test_a_scan_ends_at_the_limit_with_its_devices_checked(cli):
    inserted = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "40000", "--devices", "40000", "--batch", "5000")
    assert inserted.code == 0, inserted.stderr
    result = cli("scan", "--target", "sqlite", "-w", "1", "-r", "1", "--page-size", "100", "--time-limit", "2")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    scan = report["scan"]
    assert report["time_limit_reached"] and 0 < scan["devices"] < scan["devices_planned"] == 40_000
    assert scan["counts_checked"] and scan["count_problems"] == scan["order_problems"] == 0
    said = " ".join(result.stdout.split())  # the finding wraps at the terminal's width
    assert f"the last scanned {scan['devices']:,} of 40,000 devices" in said
    assert f" {scan['devices']:,}/40,000 devices " in said  # the progress line's count: what was done
