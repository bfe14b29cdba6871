"""scripts/test_times.py: the seconds per test file CI prints come from pytest's JUnit XML, summed
per file (every test of a file, parametrised ones included)."""

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
    times = load().file_times([str(tmp_path / "a.xml"), str(tmp_path / "absent.xml")])
    assert times == {"tests/unit/test_x.py": 3.5, "tests/integration/test_y.py": 0.25}
    assert "no test times from" in capsys.readouterr().out
