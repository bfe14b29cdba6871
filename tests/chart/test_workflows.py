"""actionlint, with shellcheck on the `run:` scripts, finds nothing in .github/workflows.

scripts/actionlint.sh installs the pinned actionlint (go install, cached under /var/cache/iotbench) and
Debian's shellcheck when they are missing, so this test needs no tool installed by hand.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))


def actionlint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts" / "actionlint.sh"), *args],
                          capture_output=True, text=True, timeout=900)


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
