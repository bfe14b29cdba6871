"""What an insert run of a TSBS shape writes, in the few numbers every value follows from: the use
case, the seed, the entities (hosts or trucks), the start, the interval and the steps. The record of
expected answers keeps it (simulator/checks/expected.py), the generator and the checker read it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from iotdb_bench.simulator.spec import TSBS_INTERVAL_MS, TSBS_START_MS, RunSpec
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.iot_rows import rows_written
from iotdb_bench.simulator.workload.tsbs.usecases import UseCase


class TsbsData(BaseModel):
    """Entities 0..hosts-1 (host_i or truck_i), each with one row per measurement at start_ms + t x
    interval_ms for every step t in [0, steps) (IoT: those TSBS writes, iot_rows.py); the values of a
    row are those of the seed's walks at that step."""

    shape: str
    seed: int
    hosts: int = Field(ge=1, description="the entities: hosts, or the IoT use case's trucks")
    start_ms: int
    interval_ms: int = Field(ge=1)
    steps: int = Field(ge=0, description="steps written so far, from step 0")

    @classmethod
    def of(cls, spec: RunSpec) -> TsbsData:
        """The data once the insert run of `spec` has written its steps (continuing those before it)."""
        return cls(shape=spec.shape, seed=spec.seed, hosts=spec.all_devices, start_ms=spec.start_ms or TSBS_START_MS,
                   interval_ms=spec.interval_ms or TSBS_INTERVAL_MS, steps=spec.stream_offset + spec.tsbs_steps)

    @property
    def use_case(self) -> UseCase:
        return USE_CASES[self.shape]

    def rows_per_measurement(self, steps: range | None = None, hosts: range | None = None) -> list[int]:
        """Rows of each measurement over these steps and entities (default: all of them)."""
        steps = range(self.steps) if steps is None else steps
        hosts = range(self.hosts) if hosts is None else hosts
        if self.use_case.entity == "truck":
            return list(rows_written(self.seed, self.hosts, steps, hosts))
        return [len(steps) * len(hosts)] * len(self.use_case.measurements)

    @property
    def rows(self) -> int:
        return sum(self.rows_per_measurement())

    @property
    def points(self) -> int:
        """Fields written (TSBS's metrics; IoT's null fields count, as TSBS's loader counts them)."""
        return sum(rows * len(measurement.field_names) for rows, measurement in zip(self.rows_per_measurement(), self.use_case.measurements))

    @property
    def end_ms(self) -> int:
        """The end of the time range written (exclusive): TSBS's --timestamp-end."""
        return self.time_of(self.steps)

    def time_of(self, step):
        """Epoch milliseconds of a step (a number or an int64 array)."""
        return self.start_ms + step * self.interval_ms

    def steps_between(self, start_ms: int, end_ms: int) -> range:
        """The written steps whose time is in [start_ms, end_ms)."""
        first = max(0, -(-(start_ms - self.start_ms) // self.interval_ms))
        end = min(self.steps, max(0, -(-(end_ms - self.start_ms) // self.interval_ms)))
        return range(first, max(first, end))

    def same_series(self, other: TsbsData) -> bool:
        """Whether both describe the same entities' walks on the same time grid (one may have more steps)."""
        return self.model_dump(exclude={"steps"}) == other.model_dump(exclude={"steps"})
