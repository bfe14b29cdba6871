"""--find-max-rate: which rate to try next, and what the search found (saved in results.json).

Short open-loop runs at rising rates: doubling from START_RATE until a rate fails (its response-time
p99 above the target, or the run fell behind its schedule), then bisection between the highest rate
that passed and the lowest that failed until they are within 5% of each other. The answer is the
highest rate that passed. A first rate that fails halves instead, down to MIN_RATE.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

START_RATE = 1000.0
MIN_RATE = 1.0
PRECISION = 0.05  # bisection stops when the failing rate is within 5% of the passing one
MAX_STEPS = 24


class RateStep(BaseModel):
    """One run of the search."""

    run_id: str
    target_rate: float
    achieved_rate: float
    response_p50_ms: float
    response_p99_ms: float
    service_p99_ms: float
    sustained: bool
    passed: bool = Field(description="sustained, and response-time p99 within the target")


class NumberedStep(RateStep):
    """A step of the search as its table shows it: numbered in the order it ran."""

    number: int


class MaxRateSearch(BaseModel):
    latency_p99_ms: float = Field(description="the response-time p99 target (--latency-p99)")
    max_rate: float | None = Field(default=None, description="--max-rate: no rate above it is tried")
    step_s: float = Field(description="length of each run")
    steps: list[RateStep] = Field(default_factory=list)
    answer: float | None = Field(default=None, description="the highest rate that passed; None: none did")
    limited_by_max_rate: bool = Field(default=False, description="the answer is --max-rate itself: the database may hold more")
    finished: bool = Field(default=False, description="the search reached its answer (False: interrupted or a run failed)")

    def sentence(self) -> str:
        target = f"response-time p99 <= {self.latency_p99_ms:g} ms"
        if not self.finished:
            return f"Highest sustainable rate: search not finished ({len(self.steps)} rate(s) tried)"
        if self.answer is None:
            return f"Highest sustainable rate: none of the rates tried (down to {MIN_RATE:g} events/s) met {target}"
        if self.limited_by_max_rate:
            return f"Highest sustainable rate: at least {self.answer:,.0f} events/s ({target}; --max-rate reached)"
        return f"Highest sustainable rate: {self.answer:,.0f} events/s ({target}, sustained; within {PRECISION:.0%})"


def numbered(search: MaxRateSearch) -> list[NumberedStep]:
    return [NumberedStep(number=number, **step.model_dump()) for number, step in enumerate(search.steps, 1)]


def passed(step_p99_ms: float, sustained: bool, target_ms: float) -> bool:
    return sustained and step_p99_ms <= target_ms


def next_rate(steps: list[RateStep], max_rate: float | None) -> float | None:
    """The rate to try next, or None when the search is over."""
    if len(steps) >= MAX_STEPS:
        return None
    good = [step.target_rate for step in steps if step.passed]
    bad = [step.target_rate for step in steps if not step.passed]
    if not steps:
        return min(START_RATE, max_rate) if max_rate else START_RATE
    if not bad:
        best = max(good)
        if max_rate and best >= max_rate:
            return None
        return min(best * 2, max_rate) if max_rate else best * 2
    lowest_bad = min(bad)
    below = [rate for rate in good if rate < lowest_bad]
    if not below:
        lower = lowest_bad / 2
        return lower if lower >= MIN_RATE else None
    highest_good = max(below)
    if lowest_bad - highest_good <= PRECISION * highest_good:
        return None
    return (highest_good + lowest_bad) / 2


def answer(steps: list[RateStep]) -> float | None:
    """The highest rate that passed below the lowest that failed."""
    bad = [step.target_rate for step in steps if not step.passed]
    good = [step.target_rate for step in steps if step.passed and (not bad or step.target_rate < min(bad))]
    return max(good) if good else None
