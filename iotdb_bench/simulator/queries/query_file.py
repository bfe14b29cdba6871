"""A query file: the user's own queries, each with one text per query language, and parameters drawn
per execution from what the tool wrote (docs/query-files.md).

    queries:
      - name: devices-over-limit
        parameters:
          day: {kind: window, length: 1d}
          limit: {kind: threshold, between: [0.9, 0.99]}
        columns: [device]
        text:
          sql: SELECT DISTINCT device_id FROM events WHERE temperature > {{ limit }} AND ...
          influxql: ...

The file is data: it travels to the workers inside the run spec, each module says which languages it
reads (`Capabilities.query_languages`, most specific first) and runs a bound text through
`Reader.text_query`; nothing here knows a database's language beyond its name. A text's placeholders
(`{{ name }}`, `{{ name.attribute }}`: simulator/queries/binding.py) must name the query's parameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from iotdb_bench.simulator.durations import duration_ms
from iotdb_bench.simulator.queries import binding
from iotdb_bench.simulator.queries.parameters import Kind, RandomDevice, RandomMeasurement, RandomThreshold, RandomWindow
from iotdb_bench.simulator.validation import FileProblem, validation_problems, yaml_mapping

# Every query language a module may read, by the name a query file gives its text. A module reads the
# most specific text it finds (TimescaleDB: sql/timescaledb, else sql/postgresql, else sql).
LANGUAGES = {
    "sql": "SQL that every relational module runs as it is (names of the tool's tables and columns)",
    "sql/postgresql": "PostgreSQL's SQL (the postgres module: PostgreSQL, CockroachDB, YugabyteDB YSQL; TimescaleDB too)",
    "sql/timescaledb": "TimescaleDB's SQL (time_bucket, last...)",
    "sql/sqlite": "SQLite's SQL (timestamps are integer epoch milliseconds)",
    "sql/mysql": "MySQL's and MariaDB's SQL",
    "sql/questdb": "QuestDB's SQL (SAMPLE BY, LATEST ON)",
    "sql/clickhouse": "ClickHouse's SQL",
    "cql": "Cassandra's CQL (also ScyllaDB, YugabyteDB YCQL)",
    "influxql": "InfluxDB 1.x's InfluxQL",
    "promql": "PromQL / MetricsQL (VictoriaMetrics), an instant query",
    "iotdb": "IoTDB's SQL",
    "elasticsearch": "the JSON body of an Elasticsearch or OpenSearch _search request on the events index",
    "mongodb": "a MongoDB aggregation pipeline (a JSON list of stages) on the events collection",
}
NAME = r"^[a-z0-9][a-z0-9_.-]{0,59}$"
# What a kept answer's cells are: compared as text, as numbers (within `digits`), or as times (UTC).
ColumnKind = Literal["text", "number", "time"]
# Shipped query files, by name (`--query-file starter`), beside the study presets.
SHIPPED = Path(__file__).resolve().parents[2] / "queries"


class QueryFileProblem(Exception):
    """The file cannot be used (one line naming the file and, where there is one, the field)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DeviceParameter(_Strict):
    kind: Literal["device"]


class MeasurementParameter(_Strict):
    kind: Literal["measurement"]


class WindowParameter(_Strict):
    kind: Literal["window"]
    length: str = Field(description="a duration: 10m, 1h, 1d (inside the written time range; all of it when that is shorter)")

    @field_validator("length")
    @classmethod
    def _duration(cls, length: str) -> str:
        duration_ms(length)
        return length


class ThresholdParameter(_Strict):
    kind: Literal["threshold"]
    between: tuple[float, float] = Field((0.9, 0.99), description="fractions of the written values' range the threshold is drawn from")

    @field_validator("between")
    @classmethod
    def _fractions(cls, between: tuple[float, float]) -> tuple[float, float]:
        low, high = between
        if not 0 <= low <= high <= 1:
            raise ValueError("two fractions of the values' range, 0 <= low <= high <= 1")
        return between


Parameter = Annotated[DeviceParameter | MeasurementParameter | WindowParameter | ThresholdParameter, Field(discriminator="kind")]


class FileQuery(_Strict):
    name: str = Field(pattern=NAME)
    description: str = ""
    parameters: dict[str, Parameter] = Field(default_factory=dict)
    columns: list[str | dict[str, ColumnKind]] = Field(default_factory=list, description="the answer's columns: a name (its kind read "
                                                       "from the values) or {name: text | number | time}")
    ordered: bool = Field(False, description="the rows' order is part of the answer (ORDER BY ... LIMIT); else rows are sorted")
    digits: int = Field(9, ge=1, le=17, description="significant digits numbers are compared to")
    text: dict[str, str] = Field(min_length=1, description="one text per query language (LANGUAGES)")
    why_not: dict[str, str] = Field(default_factory=dict, description="languages it has no text for, and why (the question cannot be "
                                    "asked there): a target of that language skips the query, saying why")

    @field_validator("parameters", mode="before")
    @classmethod
    def _shorthand(cls, parameters: Any) -> Any:
        """`device: device` for `device: {kind: device}`."""
        if isinstance(parameters, dict):
            return {name: {"kind": value} if isinstance(value, str) else value for name, value in parameters.items()}
        return parameters

    @field_validator("parameters")
    @classmethod
    def _names(cls, parameters: dict[str, Parameter]) -> dict[str, Parameter]:
        bad = [name for name in parameters if not binding.is_name(name)]
        if bad:
            raise ValueError(f"{bad[0]}: a parameter's name is lower-case letters, digits and _, starting with a letter")
        return parameters

    @model_validator(mode="after")
    def _texts(self) -> FileQuery:
        for language in {**self.text, **self.why_not}:
            if language not in LANGUAGES:
                raise ValueError(f"text: '{language}' is no query language (known: {', '.join(LANGUAGES)})")
        both = sorted(set(self.text) & set(self.why_not))
        if both:
            raise ValueError(f"why_not: {both[0]} has a text")
        for language, text in self.text.items():
            problem = binding.unknown_placeholder(text, self.parameters)
            if problem:
                raise ValueError(f"text.{language}: {problem}")
        return self

    def kinds(self) -> tuple[Kind, ...]:
        """The parameters as the draws know them (simulator/queries/parameters.py)."""
        made: list[Kind] = []
        for name, parameter in self.parameters.items():
            if isinstance(parameter, WindowParameter):
                made.append(RandomWindow(name, duration_ms(parameter.length)))
            elif isinstance(parameter, ThresholdParameter):
                made.append(RandomThreshold(name, *parameter.between))
            elif isinstance(parameter, MeasurementParameter):
                made.append(RandomMeasurement(name))
            else:
                made.append(RandomDevice(name))
        return tuple(made)

    def column_kinds(self) -> dict[int, ColumnKind]:
        """The declared kinds of the answer's columns, by position."""
        return {index: next(iter(column.values())) for index, column in enumerate(self.columns) if isinstance(column, dict)}

    def language_for(self, languages: tuple[str, ...]) -> str | None:
        """The text's language a module reading `languages` (most specific first) runs; None: none."""
        return next((language for language in languages if language in self.text), None)

    def reason_for(self, languages: tuple[str, ...]) -> str | None:
        """Why the file says the query cannot be asked in any of `languages` (None: it does not say)."""
        return next((self.why_not[language] for language in languages if language in self.why_not), None)


class QueryFile(_Strict):
    """A validated query file; `source`: where it was read from (shown in messages and reports)."""

    source: str = ""
    description: str = ""
    queries: list[FileQuery] = Field(min_length=1)

    @field_validator("queries")
    @classmethod
    def _unique(cls, queries: list[FileQuery]) -> list[FileQuery]:
        names = [query.name for query in queries]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"query {repeated[0]} is named twice")
        return queries

    def query(self, name: str) -> FileQuery | None:
        return next((query for query in self.queries if query.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(query.name for query in self.queries)


def resolve(name_or_path: str) -> Path:
    """A query file's path: a file, or the name of a shipped one (`starter`)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    shipped = SHIPPED / f"{name_or_path}.yaml"
    if "/" not in name_or_path and shipped.is_file():
        return shipped
    known = ", ".join(sorted(p.stem for p in SHIPPED.glob("*.yaml")))
    raise QueryFileProblem(f"query file {name_or_path} not found (shipped: {known})")


def load(name_or_path: str) -> QueryFile:
    """The validated query file (a path, or a shipped file's name); every problem names its field."""
    path = resolve(name_or_path)
    try:
        raw = yaml_mapping(path, "query file", "queries: [...]")
    except FileProblem as problem:
        raise QueryFileProblem(str(problem)) from None
    try:
        return QueryFile.model_validate({**raw, "source": str(path)})
    except ValidationError as error:
        raise QueryFileProblem(f"invalid query file {path}: {_named(error, raw)}") from None


def _named(error: ValidationError, raw: dict[str, Any]) -> str:
    """The problems, a query's position replaced by its name (queries.devices-over-limit: text.sql: ...)."""
    listed = raw.get("queries") if isinstance(raw.get("queries"), list) else []
    problems = []
    for line in validation_problems(error, unknown="unknown key").split("; "):
        location, _, message = line.partition(": ")
        parts = location.split(".")
        if len(parts) > 1 and parts[0] == "queries" and parts[1].isdigit() and int(parts[1]) < len(listed):
            item = listed[int(parts[1])]
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                parts[1] = item["name"]
        problems.append(f"{'.'.join(parts)}: {message.removeprefix('Value error, ')}")
    return "; ".join(problems)
