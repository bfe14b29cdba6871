"""What the database costs to run, from a price the user gives per target (config.yaml `cost:`), and
what a run's operations cost at that price. Without a price there are no cost figures at all.

    cost: {per_hour: 0.192, currency: USD}     # the database's nodes or pods, per hour
    cost: {per_month: 140, currency: EUR}      # or per month (730 hours, as cloud price lists count)
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

HOURS_PER_MONTH = 730


class Cost(BaseModel):
    model_config = ConfigDict(extra="forbid")

    per_hour: float | None = Field(default=None, gt=0, description="price of running the database for one hour")
    per_month: float | None = Field(default=None, gt=0, description="price of running the database for one month (730 hours)")
    currency: str = Field(min_length=1, max_length=10, pattern=r"^[A-Za-z$€£¥]+$")

    @model_validator(mode="after")
    def _one_price(self) -> Cost:
        if (self.per_hour is None) == (self.per_month is None):
            raise ValueError("give exactly one of per_hour and per_month")
        return self

    @property
    def hourly(self) -> float:
        if self.per_hour is not None:
            return self.per_hour
        assert self.per_month is not None  # the validator: exactly one of them
        return self.per_month / HOURS_PER_MONTH

    def per_million(self, operations_per_second: float) -> float | None:
        """Price of one million operations at this rate."""
        return self.per_operations(operations_per_second, 1_000_000)

    def per_operations(self, operations_per_second: float, operations: int) -> float | None:
        if operations_per_second <= 0:
            return None
        return self.hourly / 3600 / operations_per_second * operations

    def operations_per_unit(self, operations_per_second: float) -> float:
        """Operations one unit of the currency buys at this rate (seed 003's operations per cost)."""
        return operations_per_second * 3600 / self.hourly


class InsertCost(BaseModel):
    currency: str
    per_million_inserts: float | None
    inserts_per_unit: float = Field(description="inserts one unit of the currency buys at the measured rate")


class QueryCost(BaseModel):
    currency: str
    per_thousand_queries: float | None
    queries_per_unit: float


def insert_cost(cost: Cost | None, inserts_per_second: float) -> InsertCost | None:
    if cost is None:
        return None
    return InsertCost(currency=cost.currency, per_million_inserts=cost.per_million(inserts_per_second),
                      inserts_per_unit=cost.operations_per_unit(inserts_per_second))


def query_cost(cost: Cost | None, workers: int, avg_s: float | None) -> QueryCost | None:
    """`workers` run the query back to back, each execution taking `avg_s` on average: workers / avg_s
    executions per second."""
    if cost is None or not avg_s:
        return None
    rate = workers / avg_s
    return QueryCost(currency=cost.currency, per_thousand_queries=cost.per_operations(rate, 1000),
                     queries_per_unit=cost.operations_per_unit(rate))
