"""The contract suite's one fixture: `contract`, a target of targets.py made ready (its server or
wire fake, a config.yaml in the test folder), parametrised over every target with its marker."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from iotdb_bench.simulator.capabilities import Capabilities
from iotdb_bench.simulator.modules import DatabaseModule, module_class
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import CliResult, run_cli
from tests.contract.targets import TARGETS, ContractTarget


def free_port() -> int:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Contract:
    target: ContractTarget
    folder: Path
    options: dict
    env: dict[str, str]

    @property
    def capabilities(self) -> Capabilities:
        return module_class(self.target.module).capabilities

    def write_config(self, options: dict) -> None:
        target = {"module": self.target.module, "platform": "local", **options}
        (self.folder / "config.yaml").write_text(yaml.safe_dump({"platform": "local", "targets": {"contract": target}}))

    def run(self, task: str, *args: str) -> CliResult:
        """The CLI as a user types it, against the target (one run)."""
        extra = [arg for key, value in self.target.extra.items() for arg in ("--extra-option", f"{key}={value}")]
        return run_cli([task, "--config", "config.yaml", "--target", "contract", "-r", "1", *extra, *args], self.folder, env=self.env, timeout=300)

    def module(self, **spec_fields) -> DatabaseModule:
        """The module in this process, as a worker of an insert into the contract's tables builds it."""
        fields = {"run_id": "contract", "task": "insert", "target": "contract", "module": self.target.module, "workers": 1, "batch": 100,
                  "clean": False, "connection": self.options, **spec_fields}
        return module_class(self.target.module)(RunSpec(**fields))


def target_param(target: ContractTarget):
    return pytest.param(target, id=target.name, marks=[getattr(pytest.mark, target.marker)] if target.marker else [])


@pytest.fixture(params=[target_param(target) for target in TARGETS])
def contract(request, tmp_path, monkeypatch) -> Contract:
    target: ContractTarget = request.param
    env = target.env()
    for name, value in env.items():  # the modules built in this process expand the same ${VARIABLES}
        monkeypatch.setenv(name, value)
    with (target.serve() if target.serve else _served_by_nobody()) as address:
        options = target.options(tmp_path, address)
        found = Contract(target, tmp_path, options, env)
        found.write_config(options)
        yield found


def _served_by_nobody():
    import contextlib

    return contextlib.nullcontext("")
