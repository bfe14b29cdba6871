"""Shell completion of the installed `iotdb-bench` command, click's own (README.md, "Shell completion"):
the scripts for bash, zsh and fish are produced, and bash itself, with the bash script loaded, completes a
command's name, an option and a target of the config the command would read."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow  # every completion starts the command (about 2 s each)

ENTRY = "from iotdb_bench.cli.commands.entry import main; main()"


@pytest.fixture
def command(tmp_path):
    """`iotdb-bench` on PATH (the console script `pip install .` makes, as a shell script)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "iotdb-bench"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -c '{ENTRY}' \"$@\"\n")
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}", "PYTHONPATH": str(REPO_ROOT)}


@pytest.mark.parametrize(("shell", "marker"), [("bash", "complete -o nosort -F _iotdb_bench_completion iotdb-bench"),
                                               ("zsh", "#compdef iotdb-bench"), ("fish", "complete --no-files --command iotdb-bench")])
def test_each_shell_s_script_is_produced(command, shell, marker):
    done = subprocess.run(["iotdb-bench"], env={**command, "_IOTDB_BENCH_COMPLETE": f"{shell}_source"}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and marker in done.stdout, done.stdout + done.stderr


def completed(command: dict[str, str], words: str, cwd) -> list[str]:
    """What bash offers for the last word of `words`, with the script loaded as the README says."""
    probe = (f'eval "$(_IOTDB_BENCH_COMPLETE=bash_source iotdb-bench)"\n'
             f'COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n'
             '_iotdb_bench_completion iotdb-bench\n'
             'printf "%s\\n" "${COMPREPLY[@]}"\n')
    done = subprocess.run(["bash", "-c", probe], env=command, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completes_a_command_an_option_and_a_target(command, tmp_path):
    assert completed(command, "iotdb-bench ins", tmp_path) == ["insert"]
    assert completed(command, "iotdb-bench in", tmp_path) == ["insert", "init"]
    assert completed(command, "iotdb-bench insert --thr", tmp_path) == ["--threshold"]
    assert completed(command, "iotdb-bench query --target postgresql", tmp_path) == ["postgresql-local", "postgresql"]
    (tmp_path / "config.yaml").write_text("targets: {mine: {module: sqlite}, mind: {module: sqlite}}\n")  # the config the command would read
    assert completed(command, "iotdb-bench scan --target min", tmp_path) == ["mine", "mind"]
