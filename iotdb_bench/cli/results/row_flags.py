"""Why a row's figures are not worth reading as they stand, typed and worded in this one place: every
view (terminal table, results.json, report.html) shows `RowFlag.text`.

- a timed phase under a second: the start, the last worker's end and a moment's noise decide the rate;
- more local worker processes than the machine's CPUs: they take turns on the CPUs, so the rate is
  the machine's limit as much as the database's;
- CPU figures that cannot be true, refused (cli/results/resource_figures.py).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from iotdb_bench.cli.results.resource_figures import ResourceFigures
from iotdb_bench.simulator.report import RunReport

SHORT_PHASE_S = 1.0
FlagKind = Literal["short-phase", "short-tsbs-phase", "more-workers-than-cores", "impossible-cpu"]

WORDING: dict[str, str] = {
    "short-phase": "timed phase {detail}, under {limit:g} s: too short for a stable figure (more events: --num-inserts, or --duration)",
    # TSBS's shapes write every host's rows over the time range: their length is not --num-inserts'.
    "short-tsbs-phase": "timed phase {detail}, under {limit:g} s: too short for a stable figure (more rows: --time-range, or --devices)",
    "more-workers-than-cores": "{detail}: they take turns on the CPUs, so the rate is the machine's limit as much as the database's",
    "impossible-cpu": "CPU figures refused, they cannot be true: {detail}",
}


class RowFlag(BaseModel):
    kind: FlagKind
    detail: str = Field(description="the figures behind the flag")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented way: mypy does not follow decorators on properties
    @property
    def text(self) -> str:
        return WORDING[self.kind].format(detail=self.detail, limit=SHORT_PHASE_S)


def insert_row_flags(reports: list[RunReport], resources: ResourceFigures | None, local_cores: int | None) -> list[RowFlag]:
    """The flags of one insert row (a worker count's runs); `local_cores`: the machine's CPUs when the
    runs' processes ran on it (the local platform), else None."""
    flags = []
    shortest = min(report.figures.duration_s for report in reports if report.figures is not None)
    if shortest < SHORT_PHASE_S:
        flags.append(RowFlag(kind="short-tsbs-phase" if reports[0].spec.tsbs else "short-phase", detail=f"{shortest:.2f} s" if len(reports) == 1 else f"as short as {shortest:.2f} s"))
    processes = reports[0].spec.processes
    if local_cores and processes > local_cores:
        flags.append(RowFlag(kind="more-workers-than-cores", detail=f"{processes} local worker processes on {local_cores} CPUs"))
    if resources is not None and resources.impossible_cpu:
        flags.append(RowFlag(kind="impossible-cpu", detail=resources.impossible_cpu))
    return flags
