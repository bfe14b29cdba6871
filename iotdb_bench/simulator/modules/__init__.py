"""Database modules: one package (or, for the tiny null module, one file) per database family, each a
`DatabaseModule` (see base.py) with its role classes.

Every package and file here except base.py is a database module that a target can name; shared
wire formats live in simulator/wire/, so nothing else can be selected by mistake.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError

_NOT_MODULES = {"base"}


def module_names() -> list[str]:
    """The database modules a target can name (file names, without importing them)."""
    return sorted(info.name for info in pkgutil.iter_modules([str(Path(__file__).parent)]) if info.name not in _NOT_MODULES)


def module_class(name: str) -> type[DatabaseModule]:
    """The module class for a name in config.yaml; an unknown name is a clear error, not a traceback."""
    if name not in module_names():
        raise ModuleError(f"database module '{name}' does not exist (known: {', '.join(module_names())})")
    found = getattr(importlib.import_module(f"iotdb_bench.simulator.modules.{name}"), "Module", None)
    if not (isinstance(found, type) and issubclass(found, DatabaseModule)):
        raise ModuleError(f"simulator/modules/{name}.py defines no database module (a class Module(DatabaseModule))")
    return found


__all__ = ["DatabaseModule", "ModuleError", "module_class", "module_names"]
