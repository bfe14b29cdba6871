"""The run commands (insert, query, scan) as a study's cells use them (run/study_plan.py's CellCommand):
a cell's arguments parsed by the command's own click options into its typed options, checked and
launched by the same functions as the command typed by hand; results.json records the cell's command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from iotdb_bench.cli.commands.insert import insert, plan_insert
from iotdb_bench.cli.commands.insert_options import InsertOptions
from iotdb_bench.cli.commands.launch import Launch, launch
from iotdb_bench.cli.commands.reads import QueryOptions, ScanOptions, plan_query, plan_scan, query, scan
from iotdb_bench.cli.commands.run_options import OptionGroup, parse
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.run.runner import Invocation
from iotdb_bench.cli.run.study_plan import option_text
from iotdb_bench.cli.study_file import StudyTarget, Workload


@dataclass(frozen=True)
class RunCommand:
    """insert, query or scan as a study's cells run it (run/study_plan.py's CellCommand)."""

    command: click.Command
    model: type[OptionGroup]
    plan: Callable[[Any], Launch]

    def arguments(self, workload: Workload, target: StudyTarget, where: str) -> list[str]:
        return option_args(self.command, workload, target, where)

    def check(self, args: list[str]) -> Invocation:
        return self._planned(args, []).invocation

    def run(self, args: list[str]) -> None:
        launch(self._planned(args, [sys.argv[0], str(self.command.name), *args]))

    def _planned(self, args: list[str], argv: list[str]) -> Launch:
        try:
            return self.plan(parse(self.command, self.model, args, argv))
        except click.ClickException as problem:  # as on the command line: the option and what is wrong with it
            raise UsageProblem(problem.format_message()) from None


CELL_COMMANDS = {"insert": RunCommand(insert, InsertOptions, plan_insert), "query": RunCommand(query, QueryOptions, plan_query),
                 "scan": RunCommand(scan, ScanOptions, plan_scan)}


def option_args(command: click.Command, workload: Workload, target: StudyTarget, where: str) -> list[str]:
    """The workload's options as command-line arguments, in a canonical order (option names sorted),
    the target's extra options after the workload's (a target's wins)."""
    params = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for opt in [*param.opts, *param.secondary_opts]:
                if opt.startswith("--"):
                    params[opt[2:]] = (param, opt)
    options = dict(workload.options)
    options.update({name: value for name, value in target.options.items() if name in params})
    extra = {**_mapping(options.pop("extra-option", None), workload, where), **target.extra_options}
    if extra:
        options["extra-option"] = extra
    args: list[str] = []
    for name in sorted(options):
        value = options[name]
        place = f"invalid study file {where}: workloads.{workload.name}.{workload.task}.{name}"
        if name not in params:
            known = ", ".join(sorted(n for n, (p, _) in params.items() if n not in ("target", "output", "workers", "runs", "config")))
            raise UsageProblem(f"{place}: no such option of `{workload.task}` (options: {known})")
        if value is None:
            continue
        param, opt = params[name]
        if param.is_flag:
            if not isinstance(value, bool):
                raise UsageProblem(f"{place}: true or false")
            if param.secondary_opts:  # --clean/--no-clean: the name given says which way true goes
                positive = opt in param.opts
                args.append(param.opts[0] if value == positive else param.secondary_opts[0])
            elif value:
                args.append(opt)
        elif param.multiple:
            items = [f"{key}={option_text(item)}" for key, item in sorted(value.items())] if isinstance(value, dict) else value if isinstance(value, list) else [value]
            for item in items:
                args += [opt, option_text(item)]
        else:
            if isinstance(value, dict):
                raise UsageProblem(f"{place}: a value or a list, not a mapping")
            args += [opt, ",".join(option_text(item) for item in value) if isinstance(value, list) else option_text(value)]
    return args


def _mapping(value, workload: Workload, where: str) -> dict:
    if value is None:
        return {}
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        pairs = [str(item).partition("=") for item in value]
        return {key.strip(): setting.strip() for key, _, setting in pairs}
    raise UsageProblem(f"invalid study file {where}: workloads.{workload.name}.{workload.task}.extra-option: a mapping of option: value")
