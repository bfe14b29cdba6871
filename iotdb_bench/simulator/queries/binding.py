"""Placeholders in a query file's texts, and their values for one execution's parameters.

`{{ name }}` is a parameter's value as text; `{{ name.attribute }}` one of its forms. Mustache's braces
were chosen because no other syntax of the languages here uses two in a row (JSON opens an object with
one brace and a key), so a text of any language stays as it is written around them.

    device, measurement   the name                       {{ device }}
    threshold             the number                     {{ limit }}
    window                start, end                     ISO 8601 in UTC with milliseconds (2026-01-01T00:00:00.000Z)
                          start_text, end_text           the same without T and zone (2026-01-01 00:00:00.000), for DATETIME literals
                          start_ms, end_ms, length_ms    epoch (or length) milliseconds; _us, _ns: micro-, nanoseconds
                          start_s, end_s, length_s       seconds (with three decimals when not whole)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from iotdb_bench.simulator.queries.parameters import Parameters, Window, iso_ms

PLACEHOLDER = re.compile(r"\{\{\s*([^{}\s]*)\s*\}\}")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
WINDOW_FORMS = ("start", "end", "start_text", "end_text", "start_ms", "end_ms", "length_ms", "start_us", "end_us", "start_ns", "end_ns",
                "start_s", "end_s", "length_s")


def is_name(name: str) -> bool:
    return bool(_NAME.match(name))


def unknown_placeholder(text: str, parameters: Mapping[str, Any]) -> str | None:
    """Why a placeholder of the text names nothing the query's parameters give (one line), or None."""
    for match in PLACEHOLDER.finditer(text):
        name, _, form = match.group(1).partition(".")
        if name not in parameters:
            known = ", ".join(parameters) or "none"
            return f"{match.group(0)} is not a parameter of the query (its parameters: {known})"
        kind = getattr(parameters[name], "kind", None)
        if form and (kind != "window" or form not in WINDOW_FORMS):
            forms = ", ".join(WINDOW_FORMS) if kind == "window" else "none"
            return f"{match.group(0)}: a {kind} parameter has no form '{form}' (its forms: {forms})"
        if not form and kind == "window":
            return f"{match.group(0)}: a window is written by one of its forms, e.g. {{{{ {name}.start }}}} (forms: {', '.join(WINDOW_FORMS)})"
    return None


def bind(text: str, parameters: Parameters) -> str:
    """The text with every placeholder replaced by its value for these parameters."""
    return PLACEHOLDER.sub(lambda match: _value(parameters, match.group(1)), text)


def _value(parameters: Parameters, placeholder: str) -> str:
    name, _, form = placeholder.partition(".")
    value = parameters[name]
    if isinstance(value, Window):
        return window_form(value, form)
    return str(value)


def window_form(window: Window, form: str) -> str:
    if form == "length_ms":
        return str(window.end_ms - window.start_ms)
    if form == "length_s":
        return _seconds(window.end_ms - window.start_ms)
    edge, _, unit = form.partition("_")
    ms = window.start_ms if edge == "start" else window.end_ms
    if unit == "":
        return iso_ms(ms)
    if unit == "text":
        return iso_ms(ms).replace("T", " ").removesuffix("Z")
    if unit == "s":
        return _seconds(ms)
    return str(ms * {"ms": 1, "us": 1000, "ns": 1_000_000}[unit])


def _seconds(ms: int) -> str:
    whole, rest = divmod(ms, 1000)
    return str(whole) if not rest else f"{whole}.{rest:03d}"
