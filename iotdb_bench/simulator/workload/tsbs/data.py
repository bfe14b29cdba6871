"""What an insert run of a TSBS shape writes, in the few numbers every value follows from: the use
case, the seed, the hosts, the start, the interval and the steps. The record of expected answers
keeps it (simulator/checks/expected.py), the generator and the checker read it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from iotdb_bench.simulator.spec import TSBS_INTERVAL_MS, TSBS_START_MS, RunSpec


class TsbsData(BaseModel):
    """Hosts host_0..host_{hosts-1}, each with one row at start_ms + t x interval_ms for every step t
    in [0, steps); the values of a row are those of the seed's walks at that step."""

    shape: str
    seed: int
    hosts: int = Field(ge=1)
    start_ms: int
    interval_ms: int = Field(ge=1)
    steps: int = Field(ge=0, description="steps written so far, from step 0")

    @classmethod
    def of(cls, spec: RunSpec) -> TsbsData:
        """The data once the insert run of `spec` has written its steps (continuing those before it)."""
        return cls(shape=spec.shape, seed=spec.seed, hosts=spec.all_devices, start_ms=spec.start_ms or TSBS_START_MS,
                   interval_ms=spec.interval_ms or TSBS_INTERVAL_MS, steps=spec.stream_offset + spec.tsbs_steps)

    @property
    def rows(self) -> int:
        return self.hosts * self.steps

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
        """Whether both describe the same hosts' walks on the same time grid (one may have more steps)."""
        return self.model_dump(exclude={"steps"}) == other.model_dump(exclude={"steps"})
