"""The terminal: where output goes, how wide it is, and how every expected failure becomes one line.

Every user mistake ends in a one-line error and exit code 2, every failed run in a one-line error and
exit code 1, Ctrl-C or SIGTERM in exit code 130; nothing of the run is left running in either case.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import sys

from rich.console import Console
from rich.markup import escape

from iotdb_bench.cli.errors import RunFailed, UsageProblem
from iotdb_bench.simulator.modules import ModuleError

# Width when no terminal tells us (output to a file): wide enough for every default table.
FALLBACK_WIDTH = 120


def output_width() -> int | None:
    """The terminal's width: $COLUMNS, else stdout's terminal, else (output piped or redirected) the
    terminal the command was started from, else a fallback. None lets rich measure stdout itself."""
    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        return None
    for stream in (sys.stderr, sys.stdin):
        try:
            return os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            continue
    return shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns


console = Console(width=output_width())
errors = Console(stderr=True)


def error_line(message: str) -> None:
    errors.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)


def warning_line(message: str) -> None:
    errors.print(f"[yellow]warning:[/yellow] {escape(message)}", highlight=False, soft_wrap=True)


def handle_errors(command):
    """Turn every expected failure of a command into one line on stderr and the right exit code."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        signal.signal(signal.SIGTERM, _terminate)
        try:
            return command(*args, **kwargs)
        except (UsageProblem, RunFailed) as problem:
            error_line(str(problem))
            sys.exit(problem.exit_code)
        except ModuleError as problem:
            error_line(str(problem))
            sys.exit(UsageProblem.exit_code)
        except KeyboardInterrupt:
            errors.print("[red]interrupted:[/red] stopped every process of the run; finished runs were saved", highlight=False)
            sys.exit(130)

    return wrapper


def _terminate(signum, frame):
    raise KeyboardInterrupt
