"""Saved results: one folder per invocation with results.json (everything) and summary.csv."""

from __future__ import annotations

import csv
import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import simulator


def results_folder(output: Path, target: str, task: str) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = output / f"{stamp}-{target}-{task}"
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = output / f"{stamp}-{target}-{task}-{suffix}"
    folder.mkdir(parents=True)
    return folder


def environment() -> dict[str, Any]:
    return {
        "tool_version": simulator.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": sys.argv,
    }


def save(folder: Path, document: dict[str, Any], summary_rows: list[dict[str, Any]]) -> None:
    (folder / "results.json").write_text(json.dumps(document, indent=2, default=str))
    write_csv(folder / "summary.csv", summary_rows)


def flatten(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts become dotted columns (throughput.avg); lists are joined with ';'."""
    flat: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, list):
            flat[name] = ";".join(str(item) for item in value)
        else:
            flat[name] = value
    return flat


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    flat_rows = [flatten(row) for row in rows]
    columns = list(dict.fromkeys(column for row in flat_rows for column in row))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(flat_rows)


def load(folder: Path) -> dict[str, Any]:
    return json.loads((Path(folder) / "results.json").read_text())
