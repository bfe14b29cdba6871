"""A study file expanded into cells: each cell is the argument list of one `insert`, `query` or `scan`
command, parsed and checked by that very command (so an option means exactly what it means on the
command line; commands/study_cells.py gives the commands to this layer), in a fixed order: target by
target as the file lists them, the workloads in file order, then the worker counts. Queries and scans
of a target thus follow the inserts that made their data; a query or scan cell's key includes the key
of that insert cell.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from iotdb_bench.cli.config import Config
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results.study.document import CellPlan, cell_key
from iotdb_bench.cli.run.runner import Invocation
from iotdb_bench.cli.study_file import StudyFile, StudyTarget, Workload
from iotdb_bench.simulator.env_references import MissingVariable
from iotdb_bench.simulator.modules import ModuleError
from iotdb_bench.simulator.queries import query_file
from iotdb_bench.simulator.queries.query_file import QueryFileProblem


class CellCommand(Protocol):
    """One of the run commands as a study's cells use it. Usage problems (click's own included) are
    UsageProblem, a module's refusal a ModuleError."""

    def arguments(self, workload: Workload, target: StudyTarget, where: str) -> list[str]:
        """The workload's options, and the target's, as the command's arguments in a canonical order."""
        ...

    def check(self, args: list[str]) -> Invocation:
        """The invocation the arguments ask for, checked as the command checks it; nothing runs."""
        ...

    def run(self, args: list[str]) -> None:
        """The command run with the arguments as if typed: its results folder saved, a failure raised."""
        ...


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


def expand(study: StudyFile, config: Config, commands: Mapping[str, CellCommand], passthrough: Passthrough, where: str) -> Plan:
    """Every cell of the study in its order, each checked by its command; a problem names its field.
    `where` names the file in messages."""
    cells: list[CellPlan] = []
    invocations: dict[str, Invocation] = {}
    named: dict[str, str] = {}  # key -> the workload that has it (a cell's key is what decides its figures, not its name)
    for target in study.targets:
        target_config = config.target(target.config_target)
        platform = passthrough.platform or target_config.platform or config.platform
        config_of_target = target_config.model_dump(mode="json", exclude={"cost"})
        data_cell: str | None = None
        inserts_refused: str | None = None  # why the target's insert cells so far were all refused
        for workload in study.workloads:
            if workload.targets is not None and target.name not in workload.targets:
                continue
            options = commands[workload.task].arguments(workload, target, where)
            for workers in study.workers_of(workload):
                runs = study.runs_of(workload)
                limit = ["--time-limit", option_text(study.time_limit)] if study.time_limit and "time-limit" not in workload.options else []
                args = [*options, "-w", str(workers), "-r", str(runs), *(["--timeout", option_text(study.timeout)] if study.timeout else []),
                        *limit, "--target", target.config_target]
                reads = data_cell if workload.task != "insert" else None
                cell = CellPlan(key=cell_key(target.name, config_of_target, workload.task, args, reads, platform, input_digests(args)), index=len(cells),
                                target=target.name, database=target.config_target, workload=workload.name, task=workload.task, workers=workers, runs=runs, args=args,
                                data_cell=reads)
                if cell.key in named:
                    raise UsageProblem(f"invalid study file {where}: workloads.{workload.name} runs the same command as workloads.{named[cell.key]} "
                                       f"on target {target.name} ({workers} worker(s)): it would be one cell; remove one, or give it other options")
                named[cell.key] = workload.name
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


def check_cell(command: CellCommand, cell: CellPlan, passthrough: Passthrough, study: StudyFile, where: str) -> tuple[Invocation | None, str | None]:
    """(the invocation the command would run, None) or (None, why the module refuses it: unsupported: skip)."""
    place = f"invalid study file {where}: workloads.{cell.workload} ({cell.task}) on target {cell.target}"
    try:
        return command.check([*cell.args, *passthrough.args()]), None
    except ModuleError as problem:
        if isinstance(problem.__context__, MissingVariable):  # the user's environment, not the module, is missing something
            raise UsageProblem(f"target {cell.target} of the study: {problem}") from None
        if study.unsupported == "skip":
            return None, str(problem)
        raise UsageProblem(f"{place}: {problem} (unsupported: skip in the study file skips such cells)") from None
    except UsageProblem as problem:
        raise UsageProblem(f"{place}: {problem}") from None


def input_digests(args: list[str]) -> dict[str, str]:
    """The SHA-256 of the query file the arguments name (none: {}); a file that cannot be read is the cell's check's problem."""
    if "--query-file" not in args:
        return {}
    try:
        path = query_file.resolve(args[args.index("--query-file") + 1])
        return {"query-file": hashlib.sha256(path.read_bytes()).hexdigest()}
    except (QueryFileProblem, OSError, IndexError):
        return {}


def option_text(value: object) -> str:
    """An option's value as the command line spells it (a whole float without its `.0`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


