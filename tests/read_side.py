"""The read side's end-to-end story, shared by every database's suite.

After an insert by the tool: `scan` reads every reading back in order with the right counts and
`query` answers every query right. Then one reading is changed behind the tool's back (its value
raised above anything generated) and the queries it affects answer `wrong` (exit 1, the others
still run and stay `ok`); then one reading is deleted, and `query` reports the count wrong and
`scan` fails on the count. Each suite says how to run the CLI against its target and how to change
and delete a reading in its database.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from tests.conftest import CliResult, downsample_minutes, rows_per_query

# Raised above every generated value (15-30 degrees): the new maximum everywhere it counts.
CHANGED_VALUE = 99.75
CHANGED_DEVICE = "w000000-d000000"  # the downsample device; its first reading is at the time origin
DELETED_DEVICE = "w000001-d000009"  # the newest reading of this device is deleted
AFFECTED_BY_CHANGE = {"temperature-min-max", "temperature-stats", "temperature-stats-per-device", "device-downsample"}
AFFECTED_BY_DELETE = {"count-events", "temperature-stats", "temperature-stats-per-device", "newest-per-device"}


def scan_row(result: CliResult) -> dict:
    return result.results()["scans"][0]


def assert_scan_ok(result: CliResult, rows: int, devices: int) -> dict:
    assert result.code == 0, result.stderr
    row = scan_row(result)
    assert (row["check"], row["rows"], row["devices"]) == ("ok", rows, devices), row
    return row


def report_page(result: CliResult) -> str:
    """The text of the report.html the command wrote, entities decoded."""
    return html.unescape((result.results_folders()[-1] / "report.html").read_text())


def assert_wrong(result: CliResult, wrong: set[str]) -> dict[str, tuple[str, str | None]]:
    """The query command failed (exit 1) because of wrong answers, exactly for `wrong`; every query ran."""
    assert result.code == 1, result.stderr
    assert "wrong answer from query" in result.stderr and "Traceback" not in result.stderr
    answers = result.answers()
    assert {name for name, (verdict, _) in answers.items() if verdict == "wrong"} == wrong, answers
    assert all(verdict == "ok" for name, (verdict, _) in answers.items() if name not in wrong), answers
    assert all(row["executions"] > 0 and not row["errors"] for row in result.results()["queries"])
    assert result.results()["status"] == "failed"
    return answers


def check_read_side(run: Callable[..., CliResult], change_value: Callable[[str, float], None], delete_newest: Callable[[str], None],
                    events_per_worker: int, workers: int = 2, devices_per_worker: int = 10) -> None:
    """The whole story on data the tool just inserted (`workers` x `events_per_worker` events).

    `run(task, *args)` runs the CLI; `change_value(device, value)` sets the value of the device's
    earliest reading; `delete_newest(device)` deletes the device's newest reading."""
    devices = workers * devices_per_worker
    per_device = events_per_worker // devices_per_worker
    assert_scan_ok(run("scan", "-w", "2", "--page-size", "300"), workers * events_per_worker, devices)
    assert run("query", "-w", "2").query_rows() == rows_per_query(devices, downsample_minutes(events_per_worker, devices_per_worker))

    change_value(CHANGED_DEVICE, CHANGED_VALUE)
    queried = run("query")
    answers = assert_wrong(queried, AFFECTED_BY_CHANGE)
    assert answers["temperature-min-max"][1].startswith(f"max is {CHANGED_VALUE}, expected ")
    assert answers["device-downsample"][1].startswith("minute 2026-01-01T00:00:00.000Z (1767225600000): avg is ")
    assert answers["temperature-stats-per-device"][1].startswith(f"device {CHANGED_DEVICE}: avg is ")
    page = report_page(queried)  # the HTML report marks them as the terminal does
    assert f'class="bad">WRONG: {answers["temperature-min-max"][1]}</td>' in page and "WRONG answer" in page
    assert_scan_ok(run("scan"), workers * events_per_worker, devices)  # a changed value changes no count

    delete_newest(DELETED_DEVICE)
    answers = assert_wrong(run("query"), AFFECTED_BY_CHANGE | AFFECTED_BY_DELETE)
    assert answers["count-events"][1] == f"count is {workers * events_per_worker - 1}, expected {workers * events_per_worker}"
    assert answers["newest-per-device"][1].startswith(f"device {DELETED_DEVICE}: newest timestamp is ")
    scan = run("scan", "-w", "2")
    assert scan.code == 1 and "scan check failed" in scan.stderr and "Traceback" not in scan.stderr
    problem = f"device {DELETED_DEVICE}: read {per_device - 1:,} readings, expected {per_device:,}"
    assert scan_row(scan)["check"] == "FAILED" and problem in scan_row(scan)["problem"] and problem in scan.stderr
    page = report_page(scan)
    assert "<h2>Scans</h2>" in page and 'class="bad">FAILED</td>' in page and problem in page
