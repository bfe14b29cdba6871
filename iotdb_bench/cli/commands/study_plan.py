"""A study file expanded into cells: each cell is the argument list of one `insert`, `query` or `scan`
command, parsed and checked by that very click command (so an option means exactly what it means on
the command line), in a fixed order: target by target as the file lists them, the workloads in file
order, then the worker counts. Queries and scans of a target thus follow the inserts that made their
data; a query or scan cell's key includes the key of that insert cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from iotdb_bench.cli.config import Config
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results.study_document import CellPlan, cell_key
from iotdb_bench.cli.results.study_file import StudyFile, StudyTarget, Workload
from iotdb_bench.cli.run.runner import Invocation, PlanOnly
from iotdb_bench.simulator.env_references import MissingVariable
from iotdb_bench.simulator.modules import ModuleError


@dataclass
class Passthrough:
    """The study command's options every cell gets; they are not part of a cell's key (the platform is)."""

    config: str | None = None
    platform: str | None = None
    namespace: str | None = None
    kube_context: str | None = None
    keep: bool = False

    def args(self) -> list[str]:
        found = []
        for flag, value in (("--config", self.config), ("--platform", self.platform), ("--namespace", self.namespace),
                            ("--context", self.kube_context)):
            if value:
                found += [flag, value]
        return found + (["--keep"] if self.keep else [])


@dataclass
class Plan:
    cells: list[CellPlan]
    invocations: dict[str, Invocation] = field(default_factory=dict)  # key -> what the cell will run (for the estimate)


def expand(study: StudyFile, config: Config, commands: dict[str, click.Command], passthrough: Passthrough, where: str) -> Plan:
    """Every cell of the study in its order, each checked by its command; a problem names its field.
    `where` names the file in messages."""
    cells: list[CellPlan] = []
    invocations: dict[str, Invocation] = {}
    for target in study.targets:
        target_config = config.target(target.config_target)
        platform = passthrough.platform or target_config.platform or config.platform
        config_of_target = target_config.model_dump(mode="json", exclude={"cost"})
        data_cell: str | None = None
        inserts_refused: str | None = None  # why the target's insert cells so far were all refused
        for workload in study.workloads:
            if workload.targets is not None and target.name not in workload.targets:
                continue
            options = option_args(commands[workload.task], workload, target, where)
            for workers in study.workers_of(workload):
                runs = study.runs_of(workload)
                args = [*options, "-w", str(workers), "-r", str(runs), *(["--timeout", _text(study.timeout)] if study.timeout else []),
                        "--target", target.config_target]
                reads = data_cell if workload.task != "insert" else None
                cell = CellPlan(key=cell_key(target.name, config_of_target, workload.task, args, reads, platform), index=len(cells),
                                target=target.name, database=target.config_target, workload=workload.name, task=workload.task, workers=workers, runs=runs, args=args,
                                data_cell=reads)
                invocation, refused = check_cell(commands[workload.task], cell, passthrough, study, where)
                if refused is None and workload.task != "insert" and data_cell is None and inserts_refused:
                    refused = f"its data's insert cells are not supported ({inserts_refused})"
                if workload.task == "insert" and refused is not None and data_cell is None:
                    inserts_refused = refused
                if refused is not None:
                    cell.refused = refused
                else:
                    invocations[cell.key] = invocation
                    if workload.task == "insert":
                        data_cell = cell.key
                cells.append(cell)
    return Plan(cells, invocations)


def check_cell(command: click.Command, cell: CellPlan, passthrough: Passthrough, study: StudyFile, where: str) -> tuple[Invocation | None, str | None]:
    """(the invocation the command would run, None) or (None, why the module refuses it: unsupported: skip)."""
    collected = PlanOnly()
    place = f"invalid study file {where}: workloads.{cell.workload} ({cell.task}) on target {cell.target}"
    try:
        context = command.make_context(cell.task, [*cell.args, *passthrough.args()], obj=collected)
        with context:
            context.invoke(command.callback.__wrapped__, **context.params)
    except click.ClickException as problem:
        raise UsageProblem(f"{place}: {problem.format_message()}") from None
    except ModuleError as problem:
        if isinstance(problem.__context__, MissingVariable):  # the user's environment, not the module, is missing something
            raise UsageProblem(f"target {cell.target} of the study: {problem}") from None
        if study.unsupported == "skip":
            return None, str(problem)
        raise UsageProblem(f"{place}: {problem} (unsupported: skip in the study file skips such cells)") from None
    except UsageProblem as problem:
        raise UsageProblem(f"{place}: {problem}") from None
    if not collected.invocations:
        raise UsageProblem(f"{place}: the command did not plan a run")
    return collected.invocations[0], None


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
            items = [f"{key}={_text(item)}" for key, item in sorted(value.items())] if isinstance(value, dict) else value if isinstance(value, list) else [value]
            for item in items:
                args += [opt, _text(item)]
        else:
            if isinstance(value, dict):
                raise UsageProblem(f"{place}: a value or a list, not a mapping")
            args += [opt, ",".join(_text(item) for item in value) if isinstance(value, list) else _text(value)]
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


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
