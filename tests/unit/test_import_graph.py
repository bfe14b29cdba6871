"""Dependencies point one way: cli -> simulator, never back, and no import circle inside either."""

from __future__ import annotations

import ast

from tests.conftest import REPO_ROOT

PACKAGES = ("iotdb_bench/cli", "iotdb_bench/simulator")


def module_name(path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (at any depth in the file, lazy imports included)."""
    modules = {module_name(path): path for package in PACKAGES for path in (REPO_ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                candidates = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            targets |= {candidate for candidate in candidates if candidate in modules and candidate != name}
        graph[name] = targets
    return graph


def test_simulator_never_imports_cli():
    offenders = {name: sorted(t for t in targets if t.startswith("iotdb_bench.cli"))
                 for name, targets in import_graph().items() if name.startswith("iotdb_bench.simulator")}
    assert not {name: found for name, found in offenders.items() if found}


def test_no_import_circle():
    graph = import_graph()
    # A package's __init__ importing its own submodules is how packages re-export; not a circle.
    edges = {name: {t for t in targets if not name.startswith(t + ".") and not t.startswith(name + ".")} for name, targets in graph.items()}
    circles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(edges.get(node, ())):
            if state.get(target) == "open":
                circles.append([*path[path.index(target):], target] if target in path else [node, target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = "done"

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert not circles, "import circles: " + "; ".join(" -> ".join(circle) for circle in circles)


# The CLI's layers: commands on top; run and report each below it and beside each other; results
# (the typed document and its figures) below both. A layer imports only the layers under it.
LAYERS_BELOW = {
    "iotdb_bench.cli.commands": {"iotdb_bench.cli.run", "iotdb_bench.cli.report", "iotdb_bench.cli.results"},
    "iotdb_bench.cli.run": {"iotdb_bench.cli.results"},
    "iotdb_bench.cli.report": {"iotdb_bench.cli.results"},
    "iotdb_bench.cli.results": set(),
}


def test_cli_layers_import_only_what_is_below_them():
    offenders = {}
    for name, targets in import_graph().items():
        layer = next((layer for layer in LAYERS_BELOW if name == layer or name.startswith(layer + ".")), None)
        if layer is None:
            continue
        for target in targets:
            other = next((other for other in LAYERS_BELOW if target == other or target.startswith(other + ".")), None)
            if other is not None and other != layer and other not in LAYERS_BELOW[layer]:
                offenders.setdefault(name, []).append(target)
    assert not offenders, f"a layer reaches up or sideways: {offenders}"


def test_cli_top_level_modules_serve_the_layers_and_import_none_above_results():
    """The input files' models (config.py, study_file.py), the errors and the terminal are used by every
    layer: they import at most the results layer (a price, `results/cost.py`), never commands, run or report."""
    above = [layer for layer in LAYERS_BELOW if layer != "iotdb_bench.cli.results"]
    offenders = {name: sorted(t for t in targets if any(t == layer or t.startswith(layer + ".") for layer in above))
                 for name, targets in import_graph().items() if name.count(".") == 2 and name.startswith("iotdb_bench.cli.") and name not in LAYERS_BELOW}
    assert not {name: found for name, found in offenders.items() if found}


# The simulator's folders by concern, in three tiers. The processes (collector, worker, detached run's
# conductor) sit on top, beside each other: none imports another (they talk over HTTP). The database
# modules and the wire formats they share are below them. At the bottom: the contracts at the
# simulator's top level (spec, report, protocol, roles, capabilities...) and the folders every tier
# uses (workload generation, measurement, checks), which never import a module or a process.
SIMULATOR = "iotdb_bench.simulator"
PROCESSES = {f"{SIMULATOR}.{name}" for name in ("collector", "worker", "detached")}
MODULES = {f"{SIMULATOR}.{name}" for name in ("modules", "wire")}


def simulator_tier(module: str) -> tuple[str, str]:
    """(tier, folder) of a simulator module: the folder is its first package under simulator/, or the
    module itself for a file at the top level."""
    parts = module.split(".")
    folder = ".".join(parts[:3])
    if folder in PROCESSES or folder == f"{SIMULATOR}.__main__":
        return "process", folder
    if folder in MODULES:
        return "module", folder
    return "base", folder


def test_simulator_tiers_import_only_downwards():
    offenders = {}
    for name, targets in import_graph().items():
        if not name.startswith(SIMULATOR + "."):
            continue
        tier, folder = simulator_tier(name)
        for target in targets:
            if not target.startswith(SIMULATOR + "."):
                continue
            other_tier, other_folder = simulator_tier(target)
            sideways = tier == "process" and other_tier == "process" and other_folder != folder and folder != f"{SIMULATOR}.__main__"
            upwards = (tier == "base" and other_tier != "base") or (tier == "module" and other_tier == "process")
            wire_to_module = folder == f"{SIMULATOR}.wire" and other_folder == f"{SIMULATOR}.modules"
            if sideways or upwards or wire_to_module:
                offenders.setdefault(name, []).append(target)
    assert not offenders, f"a simulator folder reaches up or sideways: {offenders}"


def test_no_flat_folder():
    """Folders by concern: no package of the project is a flat heap of files."""
    crowded = {str(folder.relative_to(REPO_ROOT)): count for package in PACKAGES for folder in [REPO_ROOT / package, *(REPO_ROOT / package).rglob("*/")]
               if folder.is_dir() and (count := len(list(folder.glob("*.py")))) > 16}
    assert not crowded, f"folders of more than 16 files: {crowded}"
