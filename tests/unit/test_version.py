"""One source of the version, iotdb_bench/simulator/__init__.py: every other place that states it agrees, and a
release tag must be "v" + it (the release workflow checks the tag with scripts/release-version.sh)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE = "iotdb_bench/simulator/__init__.py __version__"
RELEASE_HEADING = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", re.MULTILINE)


def _python(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def version_sources(root: Path) -> dict[str, str]:
    """Every place that states the tool's version, read the way a user, helm or a release reads it."""
    init = re.search(r'^__version__ = "([^"]*)"$', (root / "iotdb_bench" / "simulator" / "__init__.py").read_text(), re.MULTILINE)
    chart = yaml.safe_load((root / "iotdb_bench" / "deployment" / "Chart.yaml").read_text())
    config = yaml.safe_load((root / "iotdb_bench" / "config.yaml").read_text())
    releases = RELEASE_HEADING.findall((root / "CHANGELOG.md").read_text())
    return {
        SOURCE: init.group(1) if init else "",
        "deployment/Chart.yaml version": str(chart["version"]),
        "deployment/Chart.yaml appVersion": str(chart["appVersion"]),
        "config.yaml image.tag": str(config["image"]["tag"]),
        "python run.py --version": _python(root, "run.py", "--version").removeprefix("iotdb-bench, version "),
        "default image tag of a config without image:": _python(root, "-c", "from iotdb_bench.cli.config import Image; print(Image().tag)"),
        "CHANGELOG.md latest release": releases[0] if releases else "",
    }


def disagreements(root: Path) -> list[str]:
    sources = version_sources(root)
    version = sources[SOURCE]
    return [name for name, value in sources.items() if value != version]


def test_every_version_source_agrees():
    sources = version_sources(REPO_ROOT)
    assert re.fullmatch(r"\d+\.\d+\.\d+", sources[SOURCE]), sources[SOURCE]
    assert disagreements(REPO_ROOT) == [], sources


def _copy_of_the_repo(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(REPO_ROOT, copy, ignore=lambda folder, names: [n for n in names if n in {".git", "__pycache__", ".pytest_cache"} or (n == "results" and folder == str(REPO_ROOT))])
    return copy


@pytest.mark.parametrize(("path", "line", "replacement", "named"), [
    ("iotdb_bench/deployment/Chart.yaml", r"^version:.*$", "version: 9.9.9", ["deployment/Chart.yaml version"]),
    ("iotdb_bench/deployment/Chart.yaml", r"^appVersion:.*$", 'appVersion: "9.9.9"', ["deployment/Chart.yaml appVersion"]),
    ("iotdb_bench/config.yaml", r"^  tag:.*$", '  tag: "9.9.9"', ["config.yaml image.tag"]),
    ("CHANGELOG.md", r"^## \[\d+\.\d+\.\d+\]", "## [9.9.9]", ["CHANGELOG.md latest release"]),
    # The CLI's --version and default tag follow the source; everything written down must follow too.
    ("iotdb_bench/simulator/__init__.py", r"^__version__ = .*$", '__version__ = "9.9.9"',
     ["deployment/Chart.yaml version", "deployment/Chart.yaml appVersion", "config.yaml image.tag", "CHANGELOG.md latest release"]),
], ids=["chart-version", "chart-appVersion", "config-tag", "changelog", "source"])
def test_a_source_that_differs_is_caught(tmp_path, path, line, replacement, named):
    copy = _copy_of_the_repo(tmp_path)
    file = copy / path
    changed, count = re.subn(line, replacement, file.read_text(), count=1, flags=re.MULTILINE)
    assert count == 1, f"no line matching {line} in {path}"
    file.write_text(changed)
    assert disagreements(copy) == named


def test_changelog_has_an_unreleased_section_above_the_releases():
    text = (REPO_ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## .*$", text, re.MULTILINE)
    assert headings[0] == "## [Unreleased]"
    assert all(RELEASE_HEADING.fullmatch(heading) for heading in headings[1:]), headings
    versions = [tuple(map(int, RELEASE_HEADING.fullmatch(h).group(1).split("."))) for h in headings[1:]]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)


def _release_version(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(REPO_ROOT / "scripts" / "release-version.sh"), *args],
                          capture_output=True, text=True, timeout=30)


def test_release_tag_must_be_v_and_the_version():
    version = version_sources(REPO_ROOT)[SOURCE]
    done = _release_version(f"v{version}")
    assert (done.returncode, done.stdout.strip()) == (0, version), done.stderr
    for wrong in (version, f"v{version}.1", "v0.0.0"):
        done = _release_version(wrong)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.startswith(f"error: tag '{wrong}' is not the version in iotdb_bench/simulator/__init__.py: tag v{version}")
