"""`python run.py init`: a commented starter config.yaml in the current folder, which the CLI then reads."""

from __future__ import annotations

from pathlib import Path

import click

from iotdb_bench.cli.config_starter import starter_config
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.terminal import console, handle_errors


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path), default=Path("config.yaml"))
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@handle_errors
def init(file: Path, force: bool) -> None:
    """Write a commented starter config.yaml: a target of every database module, with its options and their defaults.

    FILE defaults to config.yaml in the current folder, which the CLI reads when it is there."""
    if file.exists() and not force:
        raise UsageProblem(f"{file} exists: edit it, or add --force to write the starter config over it")
    try:
        file.write_text(starter_config())
    except OSError as error:
        raise UsageProblem(f"cannot write {file}: {error.strerror or error}") from None
    prog = click.get_current_context().find_root().info_name
    where = "" if file.resolve() == Path("config.yaml").resolve() else f" --config {file}"
    console.print(f"Wrote {file}: a target of every database module, each option with its default. "
                  f"The run commands read it{' from this folder' if not where else ' with --config'}: {prog} insert --target sqlite{where}",
                  highlight=False, soft_wrap=True)
