"""The entry point: the installed `iotdb-bench` command works, and `--help` answers without importing
the commands' modules (pydantic, NumPy, every database module's options)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import click

from iotdb_bench.cli.commands import entry
from tests.conftest import REPO_ROOT


def test_the_group_lists_every_command_with_its_own_short_help():
    ctx = click.Context(entry.commands)
    assert entry.commands.list_commands(ctx) == list(entry.COMMANDS)
    for name, (_, _, short) in entry.COMMANDS.items():
        command = entry.commands.get_command(ctx, name)
        assert isinstance(command, click.Command) and not isinstance(command, click.Group) and command.name == name
        assert short == command.get_short_help_str(1000), name
    assert entry.commands.get_command(ctx, "no-such-command") is None


def test_help_and_version_import_none_of_the_commands_modules():
    probe = ("import atexit, sys\n"
             "heavy = ('numpy', 'pydantic', 'rich', 'iotdb_bench.cli.config', 'iotdb_bench.cli.commands.insert')\n"
             "atexit.register(lambda: print('loaded:', [m for m in heavy if m in sys.modules], file=sys.stderr))\n"
             "sys.argv = ['run.py', sys.argv[1]]\n"
             "from iotdb_bench.cli.commands.entry import main\n"
             "main()\n")
    for option in ("--help", "--version"):
        done = subprocess.run([sys.executable, "-c", probe, option], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "loaded: []" in done.stderr, done.stderr
    assert "insert" in done.stdout or "version" in done.stdout


def test_pip_install_gives_the_iotdb_bench_command(tmp_path):
    """`pip install .` (here without dependencies and build isolation: they are this environment's) puts
    the console script and the package data (chart, default config, templates, studies) in place."""
    source = tmp_path / "source"
    skipped = {".git", "__pycache__", ".pytest_cache", ".venv"}
    top_level_only = {"results", "build"}  # the repository's own; iotdb_bench/cli/results is code
    # as a clone has them: the top level's config.yaml, cli/, simulator/ and deployment/ are links into the package
    shutil.copytree(REPO_ROOT, source, symlinks=True, ignore=lambda folder, names: [
        name for name in names if name in skipped or name.endswith(".egg-info") or (name in top_level_only and folder == str(REPO_ROOT))])
    target = tmp_path / "installed"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    package = target / "iotdb_bench"
    for data in ("config.yaml", "deployment/Chart.yaml", "deployment/templates", "cli/report/templates/report.html.j2",
                 "studies/seed-001.yaml", "studies/workloads/named.yaml"):
        assert (package / data).exists(), data
    assert sorted(path.name for path in target.iterdir() if path.is_dir() and not path.name.endswith(".dist-info")) == ["bin", "iotdb_bench"]
    version = subprocess.run([str(target / "bin" / "iotdb-bench"), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             env={**os.environ, "PYTHONPATH": str(target)})
    assert version.returncode == 0 and version.stdout.startswith("iotdb-bench, version "), version.stderr
    bad = subprocess.run([str(target / "bin" / "iotdb-bench"), "insert", "--no-such-option"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": str(target)})
    assert bad.returncode == 2 and "(see: iotdb-bench insert --help)" in bad.stderr and "Traceback" not in bad.stderr

    # `iotdb-bench init` in an empty folder, then a run that reads the config it wrote
    empty = tmp_path / "empty"
    empty.mkdir()
    installed = {**os.environ, "PYTHONPATH": str(target), "IOTBENCH_PLOTS": "0"}
    installed.pop("IOTBENCH_CONFIG", None)
    init = subprocess.run([str(target / "bin" / "iotdb-bench"), "init"], cwd=empty, capture_output=True, text=True, timeout=60, env=installed)
    assert init.returncode == 0 and (empty / "config.yaml").is_file(), init.stderr
    run = subprocess.run([str(target / "bin" / "iotdb-bench"), "insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "500"],
                         cwd=empty, capture_output=True, text=True, timeout=300, env=installed)
    assert run.returncode == 0, run.stderr
    assert "config ./config.yaml." in " ".join(run.stdout.split())


def test_the_top_level_holds_what_the_design_card_lists():
    """config.yaml, cli/, simulator/ and deployment/ at the top, as the seed tool has them: links into the package."""
    for name in ("config.yaml", "cli", "simulator", "deployment"):
        link = REPO_ROOT / name
        assert link.is_symlink() and link.resolve() == (REPO_ROOT / "iotdb_bench" / name).resolve(), name
    assert (REPO_ROOT / "simulator" / "Dockerfile").is_file() and (REPO_ROOT / "deployment" / "Chart.yaml").is_file()


def test_a_usage_error_through_run_py_names_the_command_to_ask_for_help_once():
    bad = subprocess.run([sys.executable, "run.py", "insert", "--no-such-option"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.strip().endswith("(see: python run.py insert --help)"), bad.stderr
    assert "run.py run.py" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
