"""config.yaml: targets (name -> module and its connection options), namespace, image, placement.

Validated with pydantic; every problem is reported with the field it concerns. Connection options
are kept as written (with their `${VAR}` references): they are expanded only where they are used,
so passwords stay in the environment.

Which file: what the user named (`--config`, else $IOTBENCH_CONFIG), else ./config.yaml when the
current folder has one (as the seed tool's users edit config.yaml where they run it), else the one the
package ships. The loaded config says which (`Config.source`); results.json and the run's conditions
record it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results.cost import Cost
from iotdb_bench.simulator import __version__
from iotdb_bench.simulator.env_references import referenced_names
from iotdb_bench.simulator.modules import module_names
from iotdb_bench.simulator.validation import validation_problems

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "config.yaml"
CONFIG_ENV = "IOTBENCH_CONFIG"
LOCAL_CONFIG = Path("config.yaml")
PACKAGED = "the packaged default"
# The help of every command's --config.
CONFIG_HELP = f"Config file [default: ${CONFIG_ENV}, else ./config.yaml when the current folder has one, else the packaged one]."
Platform = Literal["local", "kubernetes"]
# Keys of a target that configure the tool itself rather than the database module.
TOOL_KEYS = {"module", "platform", "existing_secret", "database_pod_labels", "avoid_database_nodes", "database_process", "cost"}


class Target(BaseModel):
    model_config = ConfigDict(extra="allow")

    module: str = Field(pattern=r"^[a-z_][a-z0-9_]*$")
    platform: Platform | None = Field(None, description="set to 'local' for targets that only run on the laptop")
    existing_secret: str | None = Field(None, description="Kubernetes Secret holding the env vars the options reference")
    database_pod_labels: dict[str, str] = Field(default_factory=dict, description="keeps workers off these pods' nodes; their resources are sampled")
    avoid_database_nodes: bool = Field(True, description="keep workers off the nodes of the database_pod_labels pods")
    database_process: str | int | None = Field(None, description="local platform: the database's process (a pid or a process name), "
                                               "when it is not the one listening on the target's address")
    cost: Cost | None = Field(None, description="price of the database per hour or month: cost figures of the runs")

    @field_validator("module")
    @classmethod
    def _known_module(cls, module: str) -> str:
        if module not in module_names():
            raise ValueError(f"unknown database module '{module}' (known: {', '.join(module_names())})")
        return module

    @property
    def connection(self) -> dict[str, Any]:
        return {key: value for key, value in (self.model_extra or {}).items() if key not in TOOL_KEYS}

    def env_references(self) -> list[str]:
        """Names of the environment variables the connection options reference."""
        return referenced_names(self.connection)


class Image(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repository: str = "ghcr.io/iotdb-bench/simulator"
    tag: str = Field(__version__, pattern=r"^[\w][\w.-]{0,127}$")
    pull_policy: Literal["Always", "IfNotPresent", "Never"] = "IfNotPresent"

    @field_validator("tag")
    @classmethod
    def _versioned(cls, tag: str) -> str:
        if tag == "latest":
            raise ValueError("use a versioned tag, not 'latest'")
        return tag


class ConfigSource(BaseModel):
    """Which config file a command read, and why that one."""

    path: str
    chosen_by: str = Field(description="--config, IOTBENCH_CONFIG, the current folder, or the packaged default")

    def phrase(self) -> str:
        if self.chosen_by == PACKAGED:
            return f"config {PACKAGED}"
        return f"config {self.path}" + ("" if self.chosen_by == "the current folder" else f" ({self.chosen_by})")


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    namespace: str = Field("default", description="Kubernetes namespace of the runs")
    platform: Platform = Field("kubernetes", description="where a target runs that does not say (local or kubernetes)")
    image: Image = Field(default_factory=Image, description="the simulator image the Kubernetes pods run")
    targets: dict[str, Target] = Field(description="name -> the database module that drives it and that module's options")
    _source: ConfigSource | None = PrivateAttr(default=None)

    @property
    def source(self) -> ConfigSource | None:
        """The file it was read from (None: built in code)."""
        return self._source

    def target(self, name: str) -> Target:
        if name not in self.targets:
            known = ", ".join(sorted(self.targets))
            where = f" ({self._source.phrase()})" if self._source else ""
            raise UsageProblem(f"unknown target '{name}'; targets in the config{where}: {known or 'none'}")
        return self.targets[name]


def config_file(given: Path | None) -> tuple[Path, str]:
    """The config file to read and what chose it: --config, then $IOTBENCH_CONFIG (what the user asked for),
    then ./config.yaml when present, then the packaged default."""
    if given:
        return Path(given), "--config"
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV]), CONFIG_ENV
    if LOCAL_CONFIG.is_file():
        return LOCAL_CONFIG, "the current folder"
    return DEFAULT_CONFIG, PACKAGED


def load_config(given: Path | None) -> Config:
    path, chosen_by = config_file(given)
    named = f"./{path}" if chosen_by == "the current folder" else str(path)
    why = f" ({chosen_by})" if chosen_by == CONFIG_ENV else ""
    config = _read(path, f"{named}{why}")
    config._source = ConfigSource(path=named, chosen_by=chosen_by)
    return config


def _read(path: Path, named: str) -> Config:
    try:
        raw = yaml.safe_load(path.read_text())
    except (FileNotFoundError, IsADirectoryError):
        raise UsageProblem(f"config file {named} not found") from None
    except OSError as error:
        raise UsageProblem(f"cannot read config file {named}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise UsageProblem(f"config file {named} is not valid YAML{line}") from None
    if not isinstance(raw, dict):
        raise UsageProblem(f"config file {named} must hold a mapping with a 'targets' key")
    try:
        return Config.model_validate(raw)
    except ValidationError as error:
        raise UsageProblem(f"invalid config {named}: {validation_problems(error, unknown='unknown key')}") from None
