"""The entry point of `python run.py` and the `iotdb-bench` command, and the one group of its commands.

The group knows its commands by name and imports a command's module only when that command runs, so
`--help` and `--version` answer at once (the commands' modules bring pydantic, NumPy, the run and
report layers and every database module's options), and a command loads only its own. Every expected
failure, click's own usage errors included, ends in one line (see cli/terminal.py).
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from iotdb_bench.simulator import __version__

# name: (module, attribute, the command's summary for `--help`; tests/unit/test_entry.py keeps it the command's own)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "insert": ("iotdb_bench.cli.commands.insert", "insert", "Concurrent inserts of generated device events; reports inserts/s (and values/s) and call latencies."),
    "query": ("iotdb_bench.cli.commands.reads", "query", "Run the analytic queries against the data already in the database and check every answer against what the tool inserted (exit 1 on a wrong answer)."),
    "scan": ("iotdb_bench.cli.commands.reads", "scan", "Read every reading of every device back in time order, streaming, and check order and counts (exit 1 when wrong)."),
    "study": ("iotdb_bench.cli.commands.study", "study", "Run a whole comparison: every target x workload x worker count of a study FILE (a YAML file or the name of a shipped preset: seed-001, seed-002, seed-003, seed-004), resumable, with one ranking."),
    "report": ("iotdb_bench.cli.commands.saved_results", "report", "Print a saved run's tables again, redraw its plots and rewrite its report.html."),
    "compare": ("iotdb_bench.cli.commands.saved_results", "compare", "Compare saved runs in one Markdown/CSV table and a plot."),
    "attach": ("iotdb_bench.cli.commands.attach", "attach", "Follow a detached run (insert --detach) and, once it has finished, save its results folder and remove its release."),
    "cleanup": ("iotdb_bench.cli.commands.cleanup", "cleanup", "Remove the helm releases of runs whose CLI is gone."),
    "init": ("iotdb_bench.cli.commands.init", "init", "Write a commented starter config.yaml: a target of every database module, with its options and their defaults."),
}
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


class LazyCommands(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        return getattr(importlib.import_module(module), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, short) for name, (_, _, short) in COMMANDS.items()])


@click.group(cls=LazyCommands, context_settings=CONTEXT)
@click.version_option(package_name=None, version=__version__, prog_name="iotdb-bench")
def commands() -> None:
    """Benchmark databases for IoT workloads: concurrent inserts of device events and analytic queries."""


def main() -> None:
    """Run a command; click's own usage errors also become one line (click prints three by default)."""
    prog = "python run.py" if os.path.basename(sys.argv[0]) == "run.py" else "iotdb-bench"
    try:
        code = commands.main(prog_name=prog, standalone_mode=False)
    except click.UsageError as problem:
        from iotdb_bench.cli.terminal import error_line

        # the command path starts with the program's name, which may hold spaces itself ("python run.py")
        command = problem.ctx.command_path if problem.ctx else prog
        error_line(f"{problem.format_message()} (see: {command} --help)")
        sys.exit(problem.exit_code)
    except click.ClickException as problem:
        from iotdb_bench.cli.terminal import error_line

        error_line(problem.format_message())
        sys.exit(problem.exit_code)
    except click.Abort:
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
