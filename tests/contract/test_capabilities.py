"""Every module's capabilities match what it implements, and the capability tables of README.md and
docs/workloads.md match the capabilities (no server needed). A module that declares an ability
without the role method behind it, or a table row that says otherwise, fails here by name."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Location
from iotdb_bench.simulator.modules import DatabaseModule, module_class, module_names
from iotdb_bench.simulator.modules.base import ModuleError, PlayedBy, ReaderRole, RecordsRole, SchemaRole, WriterRole
from iotdb_bench.simulator.roles import Reader, RecordStore, Schema, Writer
from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES, TSBS_IOT_QUERIES, RunSpec, default_queries

ROOT = Path(__file__).resolve().parents[2]
# The role methods behind each optional ability (simulator/roles.py).
METHODS = {"transactions": ("commit",), "markers": ("marker_visible",), "record": ("store_record", "stored_record"),
           "scans": ("scan_devices", "scan")}
ROLES = {"schema": Schema, "writer": Writer, "reader": Reader, "records": RecordStore}
ROLE_OF = {"commit": "writer", "marker_visible": "reader", "store_record": "records", "stored_record": "records", "scan_devices": "reader",
           "scan": "reader"}


# The base each role class builds on (modules/base.py), whose methods of the optional abilities only refuse.
ROLE_BASES = {"schema": SchemaRole, "writer": WriterRole, "reader": ReaderRole, "records": RecordsRole}


def role_class(module: type[DatabaseModule], role: str) -> type:
    """The class that plays `role` (schema, writer, reader, records): the one the module names (`PlayedBy`)."""
    declared = getattr(module, role)
    assert isinstance(declared, PlayedBy), f"{module.__module__}: its {role} is not declared with PlayedBy"
    return declared.role_class


def implements(module: type[DatabaseModule], method: str) -> bool:
    """Whether the module's role class has `method` of its own (the role base's default only refuses)."""
    role = ROLE_OF[method]
    return getattr(role_class(module, role), method) is not getattr(ROLE_BASES[role], method)


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
            implemented = implements(module, method)
            assert implemented == declared, (f"module '{name}' declares {ability}={getattr(can, ability)!r} but "
                                             f"{'does not implement' if declared else 'implements'} {method}()")
    assert can.shapes <= ALL_SHAPES and can.shapes, f"module '{name}': unknown or no shapes {sorted(can.shapes)}"
    assert (can.location is Location.none) == (name == "null")


def protocol_methods(protocol: type) -> set[str]:
    return {method for method, value in protocol.__dict__.items() if not method.startswith("_") and callable(value)}


# The options a module cannot be built without.
REQUIRED_OPTIONS = {"azure_data_explorer": {"cluster_uri": "http://127.0.0.1:8080", "database": "bench", "auth": "none"}}
# A role class is small: one job, a screenful or three (the largest, Cassandra's writer, is about 150 lines).
MOST_LINES_PER_ROLE = 200


@pytest.mark.parametrize("name", module_names())
def test_every_module_plays_each_role_with_a_small_class_of_its_own(name):
    """Built as a worker builds it (no connection needed), each role is an object of its own class: the
    class the module names for it (`PlayedBy`), built on the role's base, holding the role's protocol
    methods and none of another role's."""
    spec = RunSpec(run_id="roles", task="insert", target=name, module=name, workers=1, batch=100, connection=REQUIRED_OPTIONS.get(name, {}))
    module = module_class(name)(spec)
    played = {role: getattr(module, role) for role in ROLES}
    assert len({type(role) for role in played.values()}) == len(ROLES), f"module '{name}': roles share a class: {played}"
    optional = {method for methods in METHODS.values() for method in methods}
    for role, found in played.items():
        cls = type(found)
        assert not isinstance(found, DatabaseModule), f"module '{name}': its {role} is the module itself"
        assert cls is role_class(type(module), role), f"module '{name}': its {role} is another class than the one it names ({cls.__name__})"
        assert isinstance(found, ROLE_BASES[role]) and getattr(found, "module", None) is module
        own = protocol_methods(ROLES[role])
        missing = sorted(method for method in own - optional if not callable(getattr(found, method, None)))
        assert not missing, f"module '{name}': its {role} ({cls.__name__}) lacks {missing}"
        others = set().union(*(protocol_methods(protocol) for other, protocol in ROLES.items() if other != role))
        foreign = sorted(method for method in others if callable(getattr(found, method, None)))
        assert not foreign, f"module '{name}': its {role} ({cls.__name__}) also plays another role: {foreign}"
        lines = len(inspect.getsource(cls).splitlines())
        assert lines <= MOST_LINES_PER_ROLE, f"module '{name}': its {role} ({cls.__name__}) has {lines} lines"


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


def _answered(can, queries: tuple[str, ...], cell: str, reads: set[str]) -> bool:
    """Whether a table cell says how many of these query types the module answers: all N, K of N (it
    refuses the others), none (it stores the data, answers nothing), not yet (it does not store the data they read)."""
    answered = sum(can.tsbs_query(query) is True for query in queries)
    if answered == len(queries):
        return cell.startswith(f"all {answered}")
    if answered:
        return cell.startswith(f"{answered} of {len(queries)}")
    return cell.startswith("none" if reads & can.tsbs_shapes else "not yet")


def test_tsbs_table_matches_the_capabilities():
    """docs/tsbs.md's table: which modules store which of TSBS's shapes and answer how many of its query types."""
    rows = table_rows(ROOT / "docs" / "tsbs.md", "| module | `tsbs-cpu` data |")
    named = set()
    for first, cpu, devops, devops_queries, iot, iot_queries, _ in rows:
        for name in modules_of(first):
            named.add(name)
            can = module_class(name).capabilities
            for shape, data in (("tsbs-cpu", cpu), ("tsbs-devops", devops), ("tsbs-iot", iot)):
                assert data.startswith("yes") == (shape in can.tsbs_shapes), f"docs/tsbs.md: {name}'s {shape} data says {data!r}"
            assert _answered(can, TSBS_DEVOPS_QUERIES, devops_queries, {"tsbs-cpu", "tsbs-devops"}), f"docs/tsbs.md: {name}'s DevOps types say {devops_queries!r}"
            assert _answered(can, TSBS_IOT_QUERIES, iot_queries, {"tsbs-iot"}), f"docs/tsbs.md: {name}'s IoT types say {iot_queries!r}"
    assert named == set(module_names()), f"docs/tsbs.md's table misses {sorted(set(module_names()) - named)}"


@pytest.mark.parametrize("name", module_names())
@pytest.mark.parametrize(("shape", "query"), [("tsbs-cpu", "lastpoint"), ("tsbs-devops", "lastpoint"), ("tsbs-iot", "last-loc")])
def test_tsbs_data_and_queries_are_refused_in_one_line_where_not_stored(name, shape, query):
    """A module that does not name a TSBS shape refuses it, and the query types of that data, before anything starts."""
    can = module_class(name).capabilities
    connection = REQUIRED_OPTIONS.get(name, {})
    insert = {"run_id": "tsbs", "task": "insert", "target": name, "module": name, "workers": 1, "batch": 100, "connection": connection, "shape": shape,
              "num_inserts": 0, "primary_key": "none"}
    reading = {"run_id": "tsbs", "task": "query", "target": name, "module": name, "workers": 1, "connection": connection, "queries": (query,)}
    if shape in can.tsbs_shapes:
        module_class(name)(RunSpec(**insert))
    else:
        with pytest.raises(ModuleError, match=f"^module '{name}' does not support --schema {shape}: not yet: "):
            module_class(name)(RunSpec(**insert))
    if can.tsbs_query(query) is True:
        module_class(name)(RunSpec(**reading))
    else:
        with pytest.raises(ModuleError, match=re.escape(f"module '{name}' does not answer TSBS's {query}: {can.tsbs_query(query).because}")):
            module_class(name)(RunSpec(**reading))


@pytest.mark.parametrize("name", module_names())
@pytest.mark.parametrize("shape", ["tsbs-cpu", "tsbs-iot"])
def test_a_datas_own_queries_are_those_the_module_answers(name, shape):
    """Without --queries (query, or a mixed run's clients) the data's types run, less those the module
    refuses: the module takes them all; none of data it does not store."""
    can = module_class(name).capabilities
    own = can.answered(default_queries(shape))
    if shape not in can.tsbs_shapes:
        assert own == ()
        return
    module_class(name)(RunSpec(run_id="own", task="query", target=name, module=name, workers=1, connection=REQUIRED_OPTIONS.get(name, {}),
                               queries=own))
