"""What a study folder says about its cells: which completed, which were cut, what data each target
holds. Everything is written atomically (a temporary file renamed over the old one), so a CLI killed at
any moment (Ctrl-C, kill -9, a lost laptop) leaves either the old state or the new one.

    STUDY/cells/<target>-<workload>-w<N>-<key>/          one cell: its results folder(s) inside
    STUDY/cells/<...>/cell.json                          written after results.json: the cell completed
    STUDY/state.json                                     per target, the insert cell whose data it holds

A cell folder without cell.json was cut (the CLI died during it): it is removed and the cell runs again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from iotdb_bench.cli.results.results_files import write_atomically

MARKER = "cell.json"
STATE = "state.json"


class CellMarker(BaseModel):
    key: str
    status: str = Field(description="ok or failed: the cell ran to its end and saved its results")
    results: str | None = Field(None, description="its results folder, relative to the cell folder")
    error: str | None = None
    started: str
    finished: str
    seconds: float


class StudyState(BaseModel):
    data: dict[str, str] = Field(default_factory=dict, description="config target (the database) -> key of the last insert cell started on it")


def cells_folder(study_folder: Path) -> Path:
    return study_folder / "cells"


def cell_folder(study_folder: Path, name: str) -> Path:
    return cells_folder(study_folder) / name


def marker(folder: Path) -> CellMarker | None:
    """The cell's completion marker; None when the cell did not complete (or never started)."""
    try:
        return CellMarker.model_validate_json((folder / MARKER).read_text())
    except (OSError, ValidationError, ValueError):
        return None


def start(folder: Path) -> None:
    """An empty folder for a cell about to run: what a cut run of it left is removed."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)


def complete(folder: Path, done: CellMarker) -> None:
    write_atomically(folder / MARKER, done.model_dump_json(indent=2))


def results_folder(folder: Path) -> Path | None:
    """The results folder the cell's command wrote (the one holding results.json)."""
    found = sorted(path.parent for path in folder.glob("*/results.json"))
    return found[-1] if found else None


def known_cell_folders(study_folder: Path) -> list[Path]:
    root = cells_folder(study_folder)
    return sorted(path for path in root.iterdir() if path.is_dir()) if root.is_dir() else []


def read_state(study_folder: Path) -> StudyState:
    try:
        return StudyState.model_validate_json((study_folder / STATE).read_text())
    except (OSError, ValidationError, ValueError):
        return StudyState()


def write_state(study_folder: Path, state: StudyState) -> None:
    write_atomically(study_folder / STATE, state.model_dump_json(indent=2))
