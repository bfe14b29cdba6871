"""The starter config.yaml `iotdb-bench init` writes: one target of every database module with the options
it sets, each of the module's other options commented out with its default and what it means, and the
tool's own keys explained. Generated from the modules' option models (and, for the values a target sets,
the packaged config), so it never drifts from what the modules accept.
"""

from __future__ import annotations

import sys
import textwrap
import types
import typing
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from iotdb_bench import simulator
from iotdb_bench.cli.config import CONFIG_ENV, DEFAULT_CONFIG, Config, Image, Target, load_config
from iotdb_bench.simulator.modules import module_class, module_names

COMMENT_COLUMN = 40  # where an option's explanation starts, when the option leaves room
BOUNDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}  # pydantic's constraints of a number (annotated-types)


def starter_config() -> str:
    """The text of the starter config.yaml; it loads as a config (tests/unit/test_config_starter.py)."""
    packaged = load_config(DEFAULT_CONFIG)
    lines = [
        f"# iotdb-bench {simulator.__version__} config, written by `iotdb-bench init`: a target of every database module,",
        "# the options it sets, and each other option of its module commented out with its default.",
        "# The CLI reads ./config.yaml when the current folder has one; --config FILE or $" + CONFIG_ENV + " name another",
        "# (README.md, \"Targets and config.yaml\"; every module's options: docs/databases/).",
        "#",
        "# Passwords and tokens are never written here: reference environment variables as ${NAME} or",
        "# ${NAME:-default}; they are expanded only inside the collector and the workers (on Kubernetes the CLI",
        "# hands them to the pods through a Secret).",
        "#",
        "# Besides its module's options, a target may set:",
        *(line for name, field in Target.model_fields.items() if field.description
          for line in textwrap.wrap(f"{name}: {field.description}", 100, initial_indent="#   ", subsequent_indent="#     ")),
        "",
        *_setting("namespace", packaged.namespace, Config.model_fields["namespace"]),
        *_setting("platform", packaged.platform, Config.model_fields["platform"]),
        _commented_line("image:", Config.model_fields["image"].description or ""),
        *(line for name, field in Image.model_fields.items() for line in _setting(name, getattr(packaged.image, name), field, indent=2)),
        "",
        "targets:",
    ]
    for name, target in _one_target_per_module(packaged):
        lines += ["", *_target(name, target)]
    return "\n".join(lines) + "\n"


def _one_target_per_module(config: Config) -> list[tuple[str, Target]]:
    """For each module, the packaged config's first target of it that runs on this machine (else its first),
    in the packaged config's order; a module without one gets a target named after it."""
    chosen: dict[str, tuple[str, Target]] = {}
    for name, target in config.targets.items():
        current = chosen.get(target.module)
        if current is None or (current[1].platform != "local" and target.platform == "local"):
            chosen[target.module] = (name, target)
    order = list(config.targets)
    found = sorted(chosen.values(), key=lambda item: order.index(item[0]))
    return found + [(module, Target(module=module)) for module in module_names() if module not in chosen]


def _target(name: str, target: Target) -> list[str]:
    module = module_class(target.module)
    summary = (sys.modules[module.__module__].__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    lines = [f"  # {line}" for line in textwrap.wrap(f"{name}: {summary}", 100)]
    lines.append(f"  {_flow(name)}:")
    given = target.model_dump(exclude_unset=True, exclude_none=True)
    tool = {key: value for key, value in given.items() if key in Target.model_fields}
    options = module.Options.model_fields
    for key, value in tool.items():
        lines += _setting(key, value, indent=4)
    for key, value in target.connection.items():
        if key not in options:  # passed on as the packaged config has it (the module's check is the run's)
            lines += _setting(key, value, indent=4)
    for key, field in options.items():
        if key in target.connection:
            lines += _setting(key, target.connection[key], field, indent=4)
        elif field.is_required():
            lines += _setting(key, f"${{{key.upper()}}}", field, "required", indent=4)
        else:
            lines.append(_commented_line(f"    # {_flow(key, field.default)}", _explanation(field)))
    return lines


def _setting(key: str, value: Any, field: FieldInfo | None = None, note: str = "", indent: int = 0) -> list[str]:
    """A key set to its value (a mapping on the lines below it), explained after it."""
    words = "; ".join(filter(None, [note, _explanation(field) if field is not None else ""]))
    margin = " " * indent
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict) and value:
        nested = yaml.safe_dump(value, sort_keys=False).splitlines()
        return [_commented_line(f"{margin}{key}:", words), *(f"{margin}  {line}" for line in nested)]
    return [_commented_line(f"{margin}{_flow(key, value)}", words)]


def _flow(key: str, *value: Any) -> str:
    """`key: value` (or the key alone) as YAML writes it on one line: quoted where YAML would read it
    otherwise (a target named null, a tag 1.0)."""
    if not value:
        return yaml.safe_dump([key], default_flow_style=True, width=10_000).strip()[1:-1]
    return yaml.safe_dump({key: value[0]}, default_flow_style=True, width=10_000, sort_keys=False).strip()[1:-1]


def _commented_line(text: str, words: str) -> str:
    return f"{text.ljust(COMMENT_COLUMN - 1)} # {words}" if words else text


def _explanation(field: FieldInfo) -> str:
    """What an option means: its description, else what it accepts (the choices, the bounds, yes or no)."""
    parts = [field.description or ""]
    annotation = field.annotation
    arguments = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
    if typing.get_origin(annotation) is typing.Literal:
        parts.append("one of " + ", ".join(str(choice) for choice in typing.get_args(annotation)))
    elif annotation is bool:
        parts.append("true or false")
    elif typing.get_origin(annotation) in (typing.Union, types.UnionType) and arguments and all(
            typing.get_origin(argument) is typing.Literal for argument in arguments):
        parts.append("one of " + ", ".join(str(choice) for argument in arguments for choice in typing.get_args(argument)))
    bounds = [f"{symbol} {getattr(item, attribute)}" for item in field.metadata for attribute, symbol in BOUNDS.items()
              if getattr(item, attribute, None) is not None]
    if bounds:
        parts.append(", ".join(bounds))
    return "; ".join(part for part in parts if part)
