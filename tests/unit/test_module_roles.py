"""Each variant a module's options pick (tests/contract/test_capabilities.py checks every module's
default) hands out four role objects (simulator/roles.py) of distinct small classes:
each a `Role` of its module playing exactly one role, with the methods of that role's protocol (their
parameters as the protocol names them; tests/contract/test_capabilities.py checks which of the
optional ones are its own), and the same object every time (no server needed)."""

from __future__ import annotations

import inspect

import pytest

from iotdb_bench.simulator.modules import DatabaseModule, module_class
from iotdb_bench.simulator.modules.base import ReaderRole, RecordsRole, Role, SchemaRole, WriterRole
from iotdb_bench.simulator.roles import Reader, RecordStore, Schema, Writer
from iotdb_bench.simulator.spec import RunSpec

# role property -> (its protocol, the base class of the classes that play it)
ROLES = {"schema": (Schema, SchemaRole), "writer": (Writer, WriterRole), "reader": (Reader, ReaderRole), "records": (RecordStore, RecordsRole)}
# Modules with variants, with the options that pick each of them.
SPLIT = [("cassandra", {}), ("influxdb", {}), ("influxdb", {"v1_compat": "true"}), ("iotdb", {}), ("iotdb", {"model": "table"}),
         ("elasticsearch", {}), ("elasticsearch", {"hosts": "http://localhost:9201"}), ("victoriametrics", {}),
         ("victoriametrics", {"ingestion": "influx"})]


def built(name: str, options: dict[str, str]) -> DatabaseModule:
    spec = RunSpec(run_id="roles", task="insert", target=name, module=name, workers=1, batch=1000, extra=options)
    return module_class(name)(spec)


def protocol_methods(protocol: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(value) for name, value in vars(protocol).items() if not name.startswith("_") and callable(value)}


@pytest.mark.parametrize(("name", "options"), SPLIT, ids=[f"{name}{'-' + '-'.join(o.values()) if o else ''}" for name, o in SPLIT])
def test_each_role_is_an_object_of_its_own_small_class(name, options):
    module = built(name, options)
    played = {role: getattr(module, role) for role in ROLES}
    assert len({type(player) for player in played.values()}) == len(ROLES), f"module '{name}': {played}"
    for role, (protocol, base) in ROLES.items():
        player = played[role]
        assert getattr(module, role) is player, f"module '{name}': {role} is a new object on every call"
        assert isinstance(player, Role) and player.module is module and not isinstance(player, DatabaseModule)
        others = [other for _, other in ROLES.values() if other is not base]
        assert isinstance(player, base) and not any(isinstance(player, other) for other in others), \
            f"module '{name}': its {role} ({type(player).__name__}) plays more than one role"
        for method, signature in protocol_methods(protocol).items():
            found = getattr(player, method, None)  # those of the abilities it lacks: the role base's refusal
            assert callable(found), f"module '{name}': its {role} lacks {method}()"
            wanted = [parameter for parameter in signature.parameters if parameter != "self"]
            assert list(inspect.signature(found).parameters) == wanted, f"module '{name}': {type(player).__name__}.{method} takes other parameters"
