"""Database modules: one file per database family, all behind `DatabaseModule` (see base.py)."""

from __future__ import annotations

import importlib

from simulator.modules.base import DatabaseModule, ModuleError


def module_class(name: str) -> type[DatabaseModule]:
    """The module class for a name in config.yaml; a missing module is a clear error, not a traceback."""
    try:
        module = importlib.import_module(f"simulator.modules.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"simulator.modules.{name}":
            raise
        raise ModuleError(f"database module '{name}' does not exist (no simulator/modules/{name}.py)") from None
    return module.Module


__all__ = ["DatabaseModule", "ModuleError", "module_class"]
