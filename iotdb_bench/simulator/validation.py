"""pydantic validation errors as one line naming each field, for configs and module options alike, and
the mapping a YAML file (a study, a query file) holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError


def validation_problems(error: ValidationError, unknown: str = "unknown option") -> str:
    """`a.b: message; c: message`; a key the model does not know is called `unknown`."""
    problems = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"]) or "value"
        message = unknown if item["type"] == "extra_forbidden" else item["msg"]
        problems.append(f"{location}: {message}")
    return "; ".join(problems)


class FileProblem(ValueError):
    """A YAML file that cannot be read, or holds no mapping (one line naming the file)."""


def yaml_mapping(path: Path, what: str, holds: str) -> dict[str, Any]:
    """The mapping a YAML file holds (`what`: the file's kind in messages, `holds`: what it should hold)."""
    import yaml  # the CLI's (cli/requirements.txt): only the CLI reads files; the image's roles get parsed specs

    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as error:
        raise FileProblem(f"cannot read {what} {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        raise FileProblem(f"{what} {path} is not valid YAML{f' (line {where.line + 1})' if where else ''}") from None
    if not isinstance(raw, dict):
        raise FileProblem(f"{what} {path} must hold a mapping ({holds})")
    return raw
