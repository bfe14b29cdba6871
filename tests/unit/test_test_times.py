"""scripts/test_times.py: the seconds per test file CI prints come from pytest's JUnit XML, summed
per file (every test of a file, parametrised ones included), and every failure or error of either half
is named at the end with its message on one line (a message repeated for the tests of one failed
fixture is given once)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "test_times.py"


def load():
    spec = importlib.util.spec_from_file_location("test_times", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seconds_are_summed_per_file_and_a_missing_file_is_said(tmp_path, capsys):
    (tmp_path / "a.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.unit.test_x" name="test_a[1]" time="1.5"/>'
        '<testcase classname="tests.unit.test_x.TestGroup" name="test_a[2]" time="2.0"/>'
        '<testcase classname="tests.integration.test_y" name="test_b" time="0.25"/>'
        '</testsuite></testsuites>')
    script = load()
    times = script.file_times(script.read_cases([str(tmp_path / "a.xml"), str(tmp_path / "absent.xml")]))
    assert times == {"tests/unit/test_x.py": 3.5, "tests/integration/test_y.py": 0.25}
    assert "no test results from" in capsys.readouterr().out


def test_failures_and_errors_of_both_files_are_listed_last(tmp_path, capsys):
    (tmp_path / "first.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.unit.test_x" name="test_ok" time="1"/>'
        '<testcase classname="tests.unit.test_x" name="test_bad" time="1">'
        '<failure message="AssertionError: 3 != 4&#10;second line">trace</failure></testcase>'
        '</testsuite></testsuites>')
    (tmp_path / "cluster.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.kubernetes.test_k" name="test_up" time="20">'
        '<error message="failed on setup with &quot;Failed: start failed:&#10;  [kwok] ERROR: no lease&#10;&quot;">trace</error></testcase>'
        '<testcase classname="tests.kubernetes.test_k" name="test_down" time="0">'
        '<error message="failed on setup with &quot;Failed: start failed:&#10;  [kwok] ERROR: no lease&#10;&quot;">trace</error></testcase>'
        '</testsuite></testsuites>')
    load().main([str(tmp_path / "first.xml"), str(tmp_path / "cluster.xml")])
    out = capsys.readouterr().out.splitlines()
    assert out[-4:] == [
        "==== failed tests, both halves (3)",
        "FAILED tests/unit/test_x.py::test_bad: AssertionError: 3 != 4 | second line",
        'ERROR tests/kubernetes/test_k.py::test_up: failed on setup with "Failed: start failed: | [kwok] ERROR: no lease | "',
        "ERROR tests/kubernetes/test_k.py::test_down: (the same as above)",
    ]


def test_nothing_failed_prints_no_failure_heading(tmp_path, capsys):
    (tmp_path / "a.xml").write_text(
        '<testsuites><testsuite><testcase classname="tests.unit.test_x" name="test_ok" time="1"/>'
        '</testsuite></testsuites>')
    load().main([str(tmp_path / "a.xml")])
    assert "failed tests" not in capsys.readouterr().out


def test_a_long_message_keeps_its_beginning_and_its_end():
    script = load()
    message = "AssertionError: (CLI exit 1) stdout: " + "progress " * 300 + "stderr: error: worker 1 (pod p-1) was deleted"
    short = script.shortened(message)
    assert len(short) <= script.MESSAGE_CHARS + 5
    assert short.startswith("AssertionError: (CLI exit 1) stdout: ") and short.endswith("stderr: error: worker 1 (pod p-1) was deleted")
    assert script.shortened("short") == "short"
