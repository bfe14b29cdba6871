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


def test_no_two_test_files_share_a_name():
    """Test folders below tests/ are not packages, so pytest imports each file by its bare name: a second
    file of the same name fails collection (CI's whole run) with 'import file mismatch'."""
    seen: dict[str, Path] = {}
    for path in sorted((REPO_ROOT / "tests").rglob("test_*.py")):
        if (path.parent / "__init__.py").exists():
            continue
        assert path.name not in seen, f"{path} and {seen[path.name]} share a name"
        seen[path.name] = path
