"""One-line wording of the driver's errors."""

from __future__ import annotations

from iotdb_bench.simulator.errors import one_line


def describe(error: Exception) -> str:
    """One line; the per-host errors of NoHostAvailable instead of its tuple repr."""
    from cassandra.cluster import NoHostAvailable

    if isinstance(error, NoHostAvailable) and error.errors:
        return "; ".join(f"{getattr(host, 'endpoint', host)}: {describe(inner)}" for host, inner in error.errors.items())
    return one_line(error)


def reason(error: Exception) -> str:
    """The useful end of a driver connection error ("... Last error: Connection refused")."""
    return one_line(error).rsplit("Last error: ", 1)[-1] or type(error).__name__
