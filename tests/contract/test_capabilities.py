"""Every module's capabilities match what it implements, and the capability tables of README.md and
docs/workloads.md match the capabilities (no server needed). A module that declares an ability
without the role method behind it, or a table row that says otherwise, fails here by name. A module
split into roles plays each with a small class of its own."""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path

import pytest

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Location
from iotdb_bench.simulator.modules import DatabaseModule, module_class, module_names
from iotdb_bench.simulator.modules.base import OneClassModule, ReaderRole, RecordsRole, Role, SchemaRole, WriterRole
from iotdb_bench.simulator.roles import Reader, RecordStore, Schema, Writer
from iotdb_bench.simulator.spec import RunSpec

ROOT = Path(__file__).resolve().parents[2]
# The role methods behind each optional ability (simulator/roles.py).
METHODS = {"transactions": ("commit",), "markers": ("marker_visible",), "record": ("store_record", "stored_record"),
           "scans": ("scan_devices", "scan")}
ROLES = {"schema": Schema, "writer": Writer, "reader": Reader, "records": RecordStore}
ROLE_OF = {"commit": "writer", "marker_visible": "reader", "store_record": "records", "stored_record": "records", "scan_devices": "reader",
           "scan": "reader"}


def role_class(module: type[DatabaseModule], role: str) -> type:
    """The class that plays `role` (schema, writer, reader, records): the module itself, or the role
    class its property is annotated to return (a module split into roles)."""
    if issubclass(module, OneClassModule):
        return module
    return typing.get_type_hints(getattr(module, role).fget)["return"]


@pytest.mark.parametrize("name", module_names())
def test_each_ability_has_its_methods_and_each_method_its_ability(name):
    module = module_class(name)
    can = module.capabilities
    assert isinstance(can, Capabilities), f"module '{name}': capabilities must be a Capabilities record"
    assert not module.__abstractmethods__, f"module '{name}' does not implement {sorted(module.__abstractmethods__)}"
    for role, protocol in ROLES.items():
        played = role_class(module, role)
        assert not getattr(played, "__abstractmethods__", None), f"module '{name}': its {role} does not implement {sorted(played.__abstractmethods__)}"
        required = [method for method in protocol.__dict__ if not method.startswith("_") and callable(protocol.__dict__[method])]
        optional = {method for methods in METHODS.values() for method in methods}
        missing = [method for method in required if method not in optional and not callable(getattr(played, method, None))]
        assert not missing, f"module '{name}': its {role} lacks {missing}"
    for ability, methods in METHODS.items():
        declared = getattr(can, ability) is True
        for method in methods:
            owner = role_class(module, ROLE_OF[method])
            implemented = callable(getattr(owner, method, None))
            assert implemented == declared, (f"module '{name}' declares {ability}={getattr(can, ability)!r} but "
                                             f"{'does not implement' if declared else 'implements'} {method}()")
    assert can.shapes <= ALL_SHAPES and can.shapes, f"module '{name}': unknown or no shapes {sorted(can.shapes)}"
    assert (can.location is Location.none) == (name == "null")


# The modules split into role classes (a package each), with options that build them without a server.
SPLIT_MODULES = {
    "cassandra": lambda folder: {},
    "berkeleydb": lambda folder: {"home": str(folder / "env")},
    "mongodb": lambda folder: {},
    "arangodb": lambda folder: {},
    "azure_data_explorer": lambda folder: {"cluster_uri": "http://127.0.0.1:8080", "database": "iotbench", "auth": "none"},
}
ROLE_BASES = {"schema": SchemaRole, "writer": WriterRole, "reader": ReaderRole, "records": RecordsRole}
ROLE_CLASS_MOST_LINES = 200  # a role class beyond this is no longer small: split out what it uses (e.g. berkeleydb/walks.py)


def test_every_module_without_one_class_is_checked_as_split():
    split = {name for name in module_names() if not issubclass(module_class(name), OneClassModule)}
    assert split == set(SPLIT_MODULES), f"split modules {sorted(split)}, checked here {sorted(SPLIT_MODULES)}"


@pytest.mark.parametrize("name", [pytest.param(name, marks=[pytest.mark.berkeleydb] if name == "berkeleydb" else [])
                                  for name in SPLIT_MODULES])
def test_a_split_module_plays_each_role_with_a_small_class_of_its_own(name, tmp_path):
    module_type = module_class(name)
    assert not issubclass(module_type, OneClassModule), f"module '{name}' still plays every role in one class"
    module = module_type(RunSpec(run_id="roles", task="insert", target=name, module=name, workers=1, connection=SPLIT_MODULES[name](tmp_path)))
    played = {role: getattr(module, role) for role in ROLES}
    assert len({id(part) for part in played.values()}) == 4, f"module '{name}': one object plays several roles"
    assert len({type(part) for part in played.values()}) == 4, f"module '{name}': one class plays several roles"
    assert len({type(part).__module__ for part in played.values()}) == 4, f"module '{name}': two role classes share a file"
    can = module.capabilities
    optional = {method for ability, methods in METHODS.items() if getattr(can, ability) is not True for method in methods}
    for role, part in played.items():
        kind = type(part)
        assert getattr(module, role) is part, f"module '{name}': its {role} is a new object each time"
        assert kind is role_class(module_type, role), f"module '{name}': its {role} property is annotated to return another class"
        assert kind.__module__.startswith(f"iotdb_bench.simulator.modules.{name}."), f"module '{name}': its {role} lives outside its package"
        assert isinstance(part, Role) and part.module is module and part.spec is module.spec and part.options is module.options
        assert not isinstance(part, DatabaseModule), f"module '{name}': its {role} is a whole module"
        others = [base.__name__ for other, base in ROLE_BASES.items() if other != role and isinstance(part, base)]
        assert isinstance(part, ROLE_BASES[role]) and not others, f"module '{name}': its {role} ({kind.__name__}) also plays {others}"
        protocol = ROLES[role]
        required = [method for method in protocol.__dict__ if not method.startswith("_") and callable(protocol.__dict__[method])]
        missing = [method for method in required if method not in optional and not callable(getattr(part, method, None))]
        assert not missing, f"module '{name}': its {role} ({kind.__name__}) lacks {missing}"
        lines = len(inspect.getsource(kind).splitlines())
        assert lines <= ROLE_CLASS_MOST_LINES, f"module '{name}': its {role} ({kind.__name__}) is {lines} lines"


def table_rows(path: Path, header_start: str) -> list[list[str]]:
    """The rows of the markdown table whose header row starts with `header_start`."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def modules_of(cell: str) -> list[str]:
    return [name for name in re.findall(r"`([a-z_]+)`", cell) if name in module_names()]


def test_readme_capability_table_matches_the_capabilities():
    rows = table_rows(ROOT / "README.md", "| module | shapes |")
    named = set()
    for first, shapes, _, commit_interval, _ in rows:
        for name in modules_of(first):
            named.add(name)
            can = module_class(name).capabilities
            listed = ALL_SHAPES if shapes.startswith("all four") else set(re.findall(r"\b(events|slim|light|large)\b", shapes.split("(")[0]))
            assert listed == can.shapes, f"README.md: {name}'s shapes say {shapes!r}; it declares {sorted(can.shapes)}"
            assert commit_interval.startswith("yes") == (can.transactions is True), f"README.md: {name}'s --commit-interval says {commit_interval!r}"
    assert named == set(module_names()), f"README.md's capability table misses {sorted(set(module_names()) - named)}"


def test_workloads_capability_table_matches_the_capabilities():
    rows = table_rows(ROOT / "docs" / "workloads.md", "| module | `events` |")
    named = set()
    for first, *shapes, measurements, sensors, commit_interval, _ in rows:
        for name in modules_of(first):
            named.add(name)
            can = module_class(name).capabilities
            for shape, cell in zip(["events", "slim", "light", "large"], shapes):
                assert cell.startswith("yes") == (shape in can.shapes), f"docs/workloads.md: {name}'s {shape} says {cell!r}"
            assert (not measurements.startswith("refused")) == (can.measurements is True), f"docs/workloads.md: {name}'s --measurements"
            assert (not sensors.startswith("refused")) == (can.sensors is True), f"docs/workloads.md: {name}'s --sensors"
            assert commit_interval.startswith("yes") == (can.transactions is True), f"docs/workloads.md: {name}'s --commit-interval says {commit_interval!r}"
    assert named == set(module_names()), f"docs/workloads.md's capability table misses {sorted(set(module_names()) - named)}"
