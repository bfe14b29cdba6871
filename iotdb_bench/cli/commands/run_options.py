"""The run commands' options as typed groups: click parses and checks each option, then one object of
frozen groups is built from its values (`options_of`), and the command's code takes that object
instead of one parameter per option. The options every run command shares (`target_options`) are one
group."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar, get_type_hints

import click
from click.core import ParameterSource

from iotdb_bench.cli.config import CONFIG_HELP, load_config
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results import thresholds

DEFAULT_HEARTBEAT_TIMEOUT_S = 30.0

Group = TypeVar("Group", bound="OptionGroup")


@dataclass(frozen=True)
class OptionGroup:
    """Options that go together. Each field is an option, named as click names it, or a group of them."""

    @classmethod
    def of(cls: type[Group], values: Mapping[str, Any]) -> Group:
        """The group from click's values, by name; a group inside it is built the same way."""
        hints = get_type_hints(cls)
        return cls(**{field.name: hints[field.name].of(values) if _is_group(hints[field.name]) else values[field.name] for field in fields(cls)})

    @classmethod
    def names(cls) -> set[str]:
        """Every value this group is built from, its groups' included."""
        hints = get_type_hints(cls)
        return set().union(*(hints[field.name].names() if _is_group(hints[field.name]) else {field.name} for field in fields(cls)))


def _is_group(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, OptionGroup)


@dataclass(frozen=True)
class Recording:
    """What results.json records of the invocation: every option with its value (defaults included), the
    command line that repeats it (report.html prints it), and the arguments the process was started with."""

    options: dict[str, Any]
    command_line: list[str]
    argv: list[str]

    @classmethod
    def of(cls, ctx: click.Context, argv: list[str]) -> Recording:
        options = {name: value for name, value in ctx.params.items() if name != "heartbeat_timeout"}
        options["heartbeat_timeout"] = ctx.params["heartbeat_timeout"]  # last, where results.json has always had it
        return cls(options, _command_line(ctx), argv)


def _command_line(ctx: click.Context) -> list[str]:
    """The command with every option as the CLI spells it, defaults included: pasted into a shell it runs
    the same invocation."""
    assert ctx.command.name is not None
    words = [ctx.command.name]
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name not in ctx.params or param.name == "details":
            continue
        value, flag = ctx.params[param.name], max(param.opts, key=len)
        if param.is_flag:
            if param.secondary_opts:
                words.append(flag if value else max(param.secondary_opts, key=len))
            elif value:
                words.append(flag)
        elif value is not None:
            for item in value if param.multiple else [value]:
                words += [flag, ",".join(map(str, item)) if isinstance(item, list | tuple) else str(item)]
    return words


def parse(command: click.Command, model: type[Group], args: list[str], argv: list[str]) -> Group:
    """The command's typed options from `args`, checked by click as on the command line."""
    with command.make_context(command.name, list(args)) as ctx:
        return options_of(ctx, model, argv)


def options_of(ctx: click.Context, model: type[Group], argv: list[str]) -> Group:
    """The typed options of a parsed command line; `argv` is what results.json records as the process's arguments."""
    given = ctx.get_parameter_source("runs") is ParameterSource.COMMANDLINE
    return model.of({**ctx.params, "runs_given": given, "recording": Recording.of(ctx, argv)})


@dataclass(frozen=True)
class TargetOptions(OptionGroup):
    """Every run command's: the target, where its workers run, how long a run may take, where results go."""

    target: str
    config_path: Path | None
    timeout: float
    extra_options: tuple[str, ...]
    platform: str | None
    output: Path
    namespace: str | None
    kube_context: str | None
    keep: bool
    heartbeat_timeout: float
    time_limit: float
    thresholds: tuple[str, ...]


def options_decorator(options: list[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """One decorator of several click options, listed in the order `--help` shows them."""

    def decorate(command: Any) -> Any:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


target_options = options_decorator([
    click.option("--target", required=True, shell_complete=lambda ctx, param, incomplete: target_names(ctx, incomplete),
                 help="Target name from the config (e.g. sqlite, postgresql-local)."),
    click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help=CONFIG_HELP),
    click.option("--timeout", type=click.FloatRange(min=0), default=0, show_default=True, help="Seconds one run may take; 0 = no limit."),
    click.option("--extra-option", "extra_options", multiple=True, metavar="KEY=VALUE", help="Option of the target's database module, repeatable (see docs/databases/)."),
    click.option("--platform", type=click.Choice(["local", "kubernetes"]), help="Where the workers run [default: the target's, else local for a target without a database (null), else the config's]."),
    click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("results"), show_default=True, help="Folder for the results folders."),
    click.option("--namespace", help="Kubernetes namespace [default: the config's]."),
    click.option("--context", "kube_context", help="kubeconfig context [default: the current one; KUBECONFIG is honoured]."),
    click.option("--keep", is_flag=True, help="Kubernetes: leave the helm release installed after the run, for debugging."),
    click.option("--time-limit", type=click.FloatRange(min=0), default=0, show_default=True,
                 help="Seconds the invocation may take: the run going on then ends at once with the figures of what it did "
                      "(its calls, devices or executions so far), and no other run starts; 0 = no limit."),
    click.option("--heartbeat-timeout", type=click.FloatRange(min=0), default=DEFAULT_HEARTBEAT_TIMEOUT_S, show_default=True,
                 help="Seconds without word from this command after which a run stops by itself (a killed CLI); 0 = never."),
    click.option("--threshold", "thresholds", multiple=True, metavar="EXPR", callback=lambda ctx, param, values: checked_thresholds(values),
                 help="A line a figure must not cross, repeatable: e.g. inserts_per_s>=100000, p99_ms<=20, query.NAME.avg_ms<50, "
                 "count_check==ok; every row must pass, else exit code 1 once everything is saved (docs/thresholds.md)."),
])


def target_names(ctx: click.Context, incomplete: str) -> list[str]:
    """The config's targets that start with what was typed, for shell completion (none when the config
    cannot be read: completion never prints an error)."""
    try:
        config = load_config(ctx.params.get("config_path"))
    except UsageProblem:
        return []
    return [name for name in config.targets if name.startswith(incomplete)]


def checked_thresholds(values: tuple[str, ...]) -> tuple[str, ...]:
    """--threshold's texts, each checked to be a threshold (else click's usage error, exit code 2); kept
    as texts, as results.json records the options and the command line repeats them."""
    try:
        for value in values:
            thresholds.parse(value)
    except ValueError as problem:
        raise click.BadParameter(str(problem), param_hint="'--threshold'") from None
    return values
