"""Every third-party import in the tree is named by a requirements file.

A package installed by hand on a development machine once hid a missing requirement until CI ran on
a fresh machine; this test fails on the development machine instead. It must run in the virtual
environment that scripts/venv.sh makes from the requirements files (scripts/test.sh does), where a
missing requirement is also simply not installed.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

from tests.conftest import REPO_ROOT

SKIPPED_FOLDERS = {".git", "results", "__pycache__", "node_modules", ".venv"}


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def named_distributions(path: Path) -> set[str]:
    """Distributions a requirements file names, following `-r other.txt`."""
    named: set[str] = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            named |= named_distributions(path.parent / line[3:].strip())
        elif line and not line.startswith("-"):
            named.add(_normalised(re.split(r"[\[=<>!~; ]", line, maxsplit=1)[0]))
    return named


def python_files() -> list[Path]:
    return [path for path in REPO_ROOT.rglob("*.py") if not SKIPPED_FOLDERS & set(path.relative_to(REPO_ROOT).parts)]


def _imported(nodes) -> set[str]:
    """The top-level names of the absolute imports among `nodes`."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def top_level_imports(path: Path) -> set[str]:
    """Every absolute import of a file, lazy ones inside functions included."""
    return _imported(ast.walk(ast.parse(path.read_text(), str(path))))


def test_every_import_has_a_pinned_requirement():
    files = python_files()
    named = set()
    for requirements in REPO_ROOT.rglob("requirements*.txt"):
        if not SKIPPED_FOLDERS & set(requirements.relative_to(REPO_ROOT).parts):
            named |= named_distributions(requirements)
    local = {path.stem for path in files} | {path.name for path in REPO_ROOT.iterdir() if path.is_dir()}
    installed = packages_distributions()
    problems = []
    for path in files:
        for module in sorted(top_level_imports(path) - set(sys.stdlib_module_names) - local):
            distributions = {_normalised(name) for name in installed.get(module, [])}
            if not distributions:
                problems.append(f"{path.relative_to(REPO_ROOT)}: '{module}' is not installed from the requirements files")
            elif not distributions & named:
                problems.append(f"{path.relative_to(REPO_ROOT)}: '{module}' (distribution {', '.join(sorted(distributions))}) is in no requirements file")
    assert not problems, "\n".join(problems)


def module_level_imports(path: Path) -> set[str]:
    """The absolute imports a file makes when it is imported (not those inside functions)."""
    return _imported(ast.parse(path.read_text(), str(path)).body)


def test_the_image_installs_what_the_simulator_imports():
    """The image installs simulator/requirements.txt only: a module-level import of another file's
    requirement (PyYAML, once) made every worker pod fail at start, which only the cluster's tests saw."""
    simulator = REPO_ROOT / "iotdb_bench" / "simulator"
    named = named_distributions(simulator / "requirements.txt")
    installed = packages_distributions()
    local = {path.stem for path in python_files()} | {"iotdb_bench"}
    problems = []
    for path in sorted(simulator.rglob("*.py")):
        for module in sorted(module_level_imports(path) - set(sys.stdlib_module_names) - local):
            distributions = {_normalised(name) for name in installed.get(module, [])}
            if not distributions & named:
                problems.append(f"{path.relative_to(REPO_ROOT)}: '{module}' is not in simulator/requirements.txt")
    assert not problems, "\n".join(problems)


def test_requirements_are_pinned():
    loose = []
    for requirements in REPO_ROOT.rglob("requirements*.txt"):
        for line in requirements.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-") and "==" not in line:
                loose.append(f"{requirements.relative_to(REPO_ROOT)}: {line}")
    assert not loose, "unpinned requirements:\n" + "\n".join(loose)


def _included_files(path: Path) -> set[Path]:
    """The file and every requirements file it includes with `-r`, transitively."""
    found = {path.resolve()}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            found |= _included_files(path.parent / line[3:].strip())
    return found


def test_the_test_environment_is_made_anew_when_any_requirements_file_changes():
    """scripts/venv.sh reuses an environment while the hash of the files it names is unchanged: a file
    it does not name (the CLI's requirements once) could change and the old environment be reused."""
    import glob
    import shlex

    script = (REPO_ROOT / "scripts" / "venv.sh").read_text()
    [listed] = re.findall(r"^requirements=\((.*)\)$", script, flags=re.MULTILINE)
    hashed: set[Path] = set()
    for word in shlex.split(listed):
        hashed |= {Path(name).resolve() for name in glob.glob(word.replace("$repo", str(REPO_ROOT)))}
    assert _included_files(REPO_ROOT / "requirements-dev.txt") <= hashed
