"""pydantic validation errors as one line naming each field, for configs and module options alike."""

from __future__ import annotations

from pydantic import ValidationError


def validation_problems(error: ValidationError, unknown: str = "unknown option") -> str:
    """`a.b: message; c: message`; a key the model does not know is called `unknown`."""
    problems = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"]) or "value"
        message = unknown if item["type"] == "extra_forbidden" else item["msg"]
        problems.append(f"{location}: {message}")
    return "; ".join(problems)
