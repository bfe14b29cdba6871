"""apache-iotdb's wheel (every release up to 2.0.11, the newest on the index) installs a top-level `tests`
package into site-packages beside `iotdb`; README.md says so ("As a package"). The tool's own tests must
be the `tests` package a test run imports."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import tests
from tests.conftest import REPO_ROOT


def test_the_tests_package_of_a_test_run_is_this_repository_s():
    assert Path(tests.__file__).resolve().parent == REPO_ROOT / "tests"


def test_the_iotdb_driver_still_installs_a_tests_package_that_wins_outside_the_checkout(tmp_path):
    """When a release of apache-iotdb stops shipping it, pin that release and drop the warning in README.md."""
    assert "tests" in distribution("apache-iotdb").read_text("top_level.txt").split()
    elsewhere = subprocess.run([sys.executable, "-c", "import tests; print(tests.__file__)"], cwd=tmp_path, capture_output=True, text=True,
                               timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert elsewhere.returncode == 0 and "site-packages" in elsewhere.stdout, elsewhere.stdout + elsewhere.stderr
