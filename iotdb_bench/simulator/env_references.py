"""`${VAR}` and `${VAR:-default}` references in connection options.

Options are kept as written wherever they travel (config, spec, ConfigMap) and expanded only inside
the simulator processes, so passwords stay in the environment. The CLI lists the references to hand
the variables to Kubernetes pods through a Secret.
"""

from __future__ import annotations

import os
import re
from typing import Any

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MissingVariable(Exception):
    """A referenced variable is not set and has no default."""


def expand(value: Any) -> Any:
    """Replace the references in a string; other values are returned as they are."""
    if not isinstance(value, str):
        return value

    def replace(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise MissingVariable(f"environment variable {name} is not set (referenced as ${{{name}}} in the target's options)")

    return REFERENCE.sub(replace, value)


def referenced_names(values: Any) -> list[str]:
    """Names of the variables referenced in the string values of a mapping."""
    return sorted({name for value in values.values() if isinstance(value, str) for name, _ in REFERENCE.findall(value)})
