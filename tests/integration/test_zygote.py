"""The local platform forks every collector and worker of a command from one template process (the
zygote): each shows its own command line, keeps the CLI's environment, and goes when the template
goes; a killed template fails the run in one line and leaves nothing running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, processes_with_env

pytestmark = pytest.mark.slow
RUN = ["insert", "--target", "null", "-w", "2", "-r", "2", "--duration", "3"]


def _start(tmp_path: Path, tag: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(REPO_ROOT / "run.py"), *RUN], cwd=tmp_path, env={**os.environ, "IOTB_TEST_TAG": tag},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _processes(tag: str) -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of the tagged processes (the tag is in their environment)."""
    found = {}
    for pid in processes_with_env(tag):
        try:
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            found[pid] = (parent, Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip())
        except (OSError, ValueError):
            continue
    return found


def _wait_for_roles(tag: str, limit: float = 60.0) -> dict[int, tuple[int, str]]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = _processes(tag)
        if sum(" worker " in command for _, command in found.values()) == 2 and any(" collector " in c for _, c in found.values()):
            return found
        time.sleep(0.1)
    pytest.fail(f"the run's processes did not appear: {_processes(tag)}")


def _gone(tag: str, limit: float = 10.0) -> bool:
    deadline = time.monotonic() + limit
    while processes_with_env(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not processes_with_env(tag)


def test_each_runs_processes_are_forked_from_one_template_per_command_and_show_their_own_command_line(tmp_path):
    tag = uuid.uuid4().hex
    cli = _start(tmp_path, tag)
    try:
        first = _wait_for_roles(tag)
        [template] = [pid for pid, (_, command) in first.items() if "platforms.zygote" in command]
        assert first[template][0] == cli.pid
        roles = {pid: command for pid, (parent, command) in first.items() if parent == template}
        assert sorted(command.split(" -m ")[1].split()[1] for command in roles.values()) == ["collector", "worker", "worker"]
        assert all("--spec " in command and "platforms.zygote" not in command for command in roles.values())
        # the second run of the same command: new processes, from the same template
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and set(roles) & set(_processes(tag)):
            time.sleep(0.1)
        second = _wait_for_roles(tag)
        assert not set(roles) & set(second)
        assert {parent for pid, (parent, command) in second.items() if pid not in (template, cli.pid)} == {template}, second
        _, stderr = cli.communicate(timeout=120)
        assert cli.returncode == 0, stderr
    finally:
        cli.kill()
    assert _gone(tag)


def test_a_killed_template_takes_the_runs_processes_along_and_the_run_fails_in_one_line(tmp_path):
    tag = uuid.uuid4().hex
    cli = _start(tmp_path, tag)
    try:
        found = _wait_for_roles(tag)
        [template] = [pid for pid, (_, command) in found.items() if "platforms.zygote" in command]
        os.kill(template, signal.SIGKILL)
        _, stderr = cli.communicate(timeout=60)
    finally:
        cli.kill()
    assert cli.returncode == 1 and "Traceback" not in stderr, stderr
    [line] = [line for line in stderr.splitlines() if line.strip()]
    assert line.startswith("error:") and "exited with code -9" in line, line
    assert _gone(tag)
