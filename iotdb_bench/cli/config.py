"""config.yaml: targets (name -> module and its connection options), namespace, image, placement.

Validated with pydantic; every problem is reported with the field it concerns. Connection options
are kept as written (with their `${VAR}` references): they are expanded only where they are used,
so passwords stay in the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results.cost import Cost
from iotdb_bench.simulator import __version__
from iotdb_bench.simulator.env_references import referenced_names
from iotdb_bench.simulator.modules import module_names
from iotdb_bench.simulator.validation import validation_problems

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "config.yaml"
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


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    namespace: str = "default"
    platform: Platform = "kubernetes"
    image: Image = Field(default_factory=Image)
    targets: dict[str, Target]

    def target(self, name: str) -> Target:
        if name not in self.targets:
            known = ", ".join(sorted(self.targets))
            raise UsageProblem(f"unknown target '{name}'; targets in the config: {known}")
        return self.targets[name]


def load_config(path: Path | None) -> Config:
    path = Path(path) if path else DEFAULT_CONFIG
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise UsageProblem(f"config file {path} not found") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise UsageProblem(f"config file {path} is not valid YAML{line}") from None
    if not isinstance(raw, dict):
        raise UsageProblem(f"config file {path} must hold a mapping with a 'targets' key")
    try:
        return Config.model_validate(raw)
    except ValidationError as error:
        raise UsageProblem(f"invalid config {path}: {validation_problems(error, unknown='unknown key')}") from None
