"""The suite's fast path for the CLI (tests/cli_forkserver.py) gives what a new interpreter gives: the same
output at each terminal width, the same one-line errors and exit codes, the child's own folder and
environment; and a run past its timeout is killed with everything it started."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from tests import cli_forkserver
from tests.conftest import REPO_ROOT


def _fresh(args: list[str], cwd, env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("args", [["insert", "--help"], ["insert", "--target", "no-such-target"], ["query", "--queries", "nope"], ["init", "--stdout"]])
@pytest.mark.parametrize("columns", ["80", "120"])
def test_a_forked_run_prints_what_a_new_interpreter_prints(tmp_path, args, columns):
    env = {**os.environ, "COLUMNS": columns}
    forked = cli_forkserver.run(args, tmp_path, env, timeout=120)
    assert forked == _fresh(args, tmp_path, env)
    assert forked[0] in (0, 2) and "Traceback" not in forked[2]


def test_a_forked_run_has_its_own_folder_and_environment(tmp_path):
    for plots in ("0", "1"):
        code, _, stderr = cli_forkserver.run(["insert", "--target", "null", "--num-inserts", "200", "-r", "1", "--output", f"out{plots}"],
                                             tmp_path, {**os.environ, "IOTBENCH_PLOTS": plots}, timeout=120)
        assert code == 0, stderr
    assert not list((tmp_path / "out0").rglob("*.png"))  # the relative folder is the run's own, and so is its environment
    assert list((tmp_path / "out1").rglob("*.png"))


def test_a_run_past_its_timeout_is_killed_with_what_it_started(tmp_path):
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            cli_forkserver.run(["insert", "--target", "null", "--duration", "60", "-r", "1", "--output", "out"], tmp_path,
                               {**os.environ, "IOTBENCH_PLOTS": "0", "IOTBENCH_TEST_TAG": str(tmp_path)}, timeout=8)
        except BaseException as raised:
            outcome.append(raised)

    runner = threading.Thread(target=run)
    runner.start()
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and not _tagged(str(tmp_path)):
        time.sleep(0.1)
    assert _tagged(str(tmp_path)), "the run started processes of its own (its zygote, collector and workers)"
    runner.join(60)
    assert [type(raised) for raised in outcome] == [subprocess.TimeoutExpired]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _tagged(str(tmp_path)):
        time.sleep(0.2)
    assert not _tagged(str(tmp_path))


def _tagged(tag: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    if f"IOTBENCH_TEST_TAG={tag}".encode() in environ.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                continue
    return [pid for pid in found if pid != os.getpid() and _alive(pid)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
