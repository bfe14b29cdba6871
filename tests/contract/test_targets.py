"""Every database module keeps the contract against a real server (or its named wire fake): each one
has a target in targets.py, and every target names a module that exists (no server needed)."""

from __future__ import annotations

from iotdb_bench.simulator.modules import module_names
from tests.contract.targets import TARGETS


def test_every_module_has_a_contract_target():
    covered = {target.module for target in TARGETS}
    missing = sorted(set(module_names()) - covered)
    assert not missing, f"modules without a target in tests/contract/targets.py (the contract suite never runs them): {missing}"
    unknown = sorted(covered - set(module_names()))
    assert not unknown, f"tests/contract/targets.py names modules that do not exist: {unknown}"


def test_target_names_are_unique():
    names = [target.name for target in TARGETS]
    assert len(names) == len(set(names)), f"tests/contract/targets.py repeats a target name: {sorted(names)}"
