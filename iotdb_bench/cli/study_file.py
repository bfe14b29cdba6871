"""A study file: the plan of a whole comparison (docs/studies.md). Targets, workloads (an insert,
query or scan invocation with its options, or a named workload), worker counts, runs, optional
per-target cost, and how the score is made. Validated like config.yaml: every problem with its field.

Overrides from the command line (`--set key=value`, `--scale F`, `--targets a,b`) are applied to the
raw mapping before validation, so an override is validated exactly like the file.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results import thresholds
from iotdb_bench.cli.results.cost import Cost
from iotdb_bench.cli.results.document import Threshold
from iotdb_bench.simulator.spec import TSBS_TABLES, duration_ms
from iotdb_bench.simulator.validation import FileProblem, validation_problems, yaml_mapping

PRESETS = Path(__file__).resolve().parent.parent / "studies"
Task = Literal["insert", "query", "scan"]
NAME = r"^[a-z0-9][a-z0-9_-]{0,39}$"
# Options the study sets itself for every cell: a workload may not give them.
STUDY_OWNED = {"target", "workers", "w", "runs", "r", "output", "config", "platform", "namespace", "context", "keep", "details", "threshold"}
# Options whose value is an amount of work, multiplied by --scale (at least 1; seconds at least 1 s).
SCALED = {"num-inserts", "duration", "prefill"}
# TSBS's shapes (--schema tsbs-...): --scale shrinks their time range to an hour at least, then their hosts to 8 at least.
TSBS_MIN_RANGE_MS, TSBS_MIN_HOSTS = 3_600_000, 8

# Named workloads a study may use with `preset: NAME` (options can still be added or overridden): data,
# in the presets' folder beside the studies that use them (module options are the config's business,
# never the CLI's code).
NAMED_WORKLOADS: dict[str, dict[str, Any]] = yaml.safe_load((PRESETS / "workloads" / "named.yaml").read_text())


OptionValue = str | int | float | bool | list[str | int | float] | dict[str, str | int | float | bool] | None
# A threshold is written as on the command line (inserts_per_s>=100000) and checked as it is read.
ThresholdText = Annotated[Threshold, BeforeValidator(lambda value: thresholds.parse(value) if isinstance(value, str) else value)]


class StudyTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME, description="the target's name in the study (and, unless `target` says otherwise, in the config file)")
    target: str | None = Field(None, min_length=1, description="the config file's target, when the study runs one under several names "
                               "(e.g. with other extra_options)")
    cost: Cost | None = Field(None, description="price of this target for the study's cost figures (else the config's)")
    extra_options: dict[str, str | int | float | bool] = Field(default_factory=dict, description="--extra-option for every cell of this target")
    options: dict[str, OptionValue] = Field(default_factory=dict, description="command options for every cell of this target whose "
                                            "command has them (e.g. primary-key: none), over the workload's")

    @field_validator("options")
    @classmethod
    def _not_owned(cls, options: dict) -> dict:
        owned = sorted(set(options) & (STUDY_OWNED | {"extra-option"}))
        if owned:
            raise ValueError(f"{', '.join(owned)}: not a target's option (extra-option: use extra_options)")
        return options

    @property
    def config_target(self) -> str:
        return self.target or self.name


class Workload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME)
    preset: str | None = Field(None, description="a named workload (NAMED_WORKLOADS); the task's options below are added to it")
    insert: dict[str, OptionValue] | None = None
    query: dict[str, OptionValue] | None = None
    scan: dict[str, OptionValue] | None = None
    workers: list[int] | None = Field(None, description="worker counts of this workload [default: the study's]")
    runs: int | None = Field(None, ge=1, description="runs (query: executions per worker) [default: the study's]")
    targets: list[str] | None = Field(None, description="only these targets run this workload")
    rank_by: str | None = Field(None, description="the figure its ranking is ordered by [default: the task's main figure]")
    thresholds: list[ThresholdText] = Field(default_factory=list, description="lines every cell of this workload must not cross "
                                            "(docs/thresholds.md); the study's own apply too")

    @field_validator("workers")
    @classmethod
    def _positive(cls, counts: list[int] | None) -> list[int] | None:
        if counts is not None and (not counts or any(count < 1 for count in counts)):
            raise ValueError("a list of positive worker counts")
        return counts

    @model_validator(mode="after")
    def _one_task(self) -> Workload:
        if self.preset is not None:
            if self.preset not in NAMED_WORKLOADS:
                raise ValueError(f"unknown preset '{self.preset}' (known: {', '.join(NAMED_WORKLOADS)})")
            named = NAMED_WORKLOADS[self.preset]
            task = next(iter(named))
            given = [name for name in ("insert", "query", "scan") if getattr(self, name) is not None]
            if given and given != [task]:
                raise ValueError(f"preset '{self.preset}' is a {task} workload: options go under '{task}'")
            setattr(self, task, {**named[task], **(getattr(self, task) or {})})
        tasks = [name for name in ("insert", "query", "scan") if getattr(self, name) is not None]
        if len(tasks) != 1:
            raise ValueError("give exactly one of insert, query, scan (or a preset)")
        owned = sorted(set(self.options) & STUDY_OWNED)
        if owned:
            raise ValueError(f"{', '.join(owned)}: set by the study for every cell (use the workload's workers/runs, or the study command's options)")
        return self

    @property
    def task(self) -> Task:
        return next(name for name in ("insert", "query", "scan") if getattr(self, name) is not None)

    @property
    def options(self) -> dict[str, OptionValue]:
        return getattr(self, self.task) or {}


class ScoreInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workload: str
    figure: str | None = Field(None, description="[default: the workload's rank_by]")
    query: str | None = Field(None, description="query workloads: which query's figure")
    workers: int | None = Field(None, ge=1, description="the figure at this worker count [default: each target's best]")
    weight: float = Field(1.0, gt=0)


class StudyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME)
    title: str = ""
    description: str = ""
    targets: list[StudyTarget] = Field(min_length=1)
    workloads: list[Workload] = Field(min_length=1)
    workers: list[int] = Field([1], description="worker counts of every workload that does not set its own")
    runs: int = Field(3, ge=1)
    timeout: float = Field(0, ge=0, description="seconds one run may take (--timeout of every cell); 0 = none")
    time_limit: float = Field(0, ge=0, description="seconds one cell may take (--time-limit of every cell that sets none): its run going "
                                                   "on then ends with the figures of what it did; 0 = none. Not scaled by --scale: a bound "
                                                   "on the cell's cost, which does not shrink with its data (a scan's devices stay)")
    unsupported: Literal["fail", "skip"] = Field("fail", description="a cell its target's module refuses: fail the study, or skip the cell")
    score: list[ScoreInput] | None = Field(None, description="the score's inputs and weights [default: every ranking, weight 1]")
    thresholds: list[ThresholdText] = Field(default_factory=list, description="lines every cell whose task has the figure must not cross "
                                            "(docs/thresholds.md)")

    @field_validator("targets", mode="before")
    @classmethod
    def _names(cls, targets: Any) -> Any:
        """A target may be written as its bare name."""
        return [{"name": target} if isinstance(target, str) else target for target in targets] if isinstance(targets, list) else targets

    @field_validator("workers")
    @classmethod
    def _positive(cls, counts: list[int]) -> list[int]:
        if not counts or any(count < 1 for count in counts):
            raise ValueError("a list of positive worker counts")
        return counts

    @model_validator(mode="after")
    def _consistent(self) -> StudyFile:
        names = [target.name for target in self.targets]
        for collection, label in ((names, "target"), ([w.name for w in self.workloads], "workload")):
            repeated = sorted({name for name in collection if collection.count(name) > 1})
            if repeated:
                raise ValueError(f"{label} {', '.join(repeated)} given twice")
        for workload in self.workloads:
            unknown = [name for name in workload.targets or [] if name not in names]
            if unknown:
                raise ValueError(f"workload {workload.name}: targets {', '.join(unknown)} are not targets of the study")
        workloads = {w.name: w for w in self.workloads}
        for item in self.score or []:
            if item.workload not in workloads:
                raise ValueError(f"score: unknown workload '{item.workload}'")
            if item.query is not None and workloads[item.workload].task != "query":
                raise ValueError(f"score: 'query' applies to a query workload, not '{item.workload}'")
        currencies = {target.cost.currency for target in self.targets if target.cost}
        if len(currencies) > 1:
            raise ValueError(f"the targets' costs are in several currencies ({', '.join(sorted(currencies))}): operations per cost need one")
        return self

    def workers_of(self, workload: Workload) -> list[int]:
        return workload.workers or self.workers

    def runs_of(self, workload: Workload) -> int:
        return workload.runs or self.runs


def resolve(name_or_path: str) -> Path:
    """A study file's path: a file, or the name of a shipped preset (`seed-001`)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    preset = PRESETS / f"{name_or_path}.yaml"
    if preset.is_file() and "/" not in name_or_path:
        return preset
    known = ", ".join(sorted(p.stem for p in PRESETS.glob("*.yaml")))
    raise UsageProblem(f"study file {name_or_path} not found (shipped presets: {known})")


def load(path: Path, overrides: list[str] = (), scale: float = 1.0, targets: list[str] | None = None,
         database_of: Callable[[str], str | None] = lambda name: None) -> StudyFile:
    """The validated study: the file, then `--targets`, the `--set` overrides and `--scale` applied.
    `database_of`: a config target's database module (what a target picked by --targets under another
    name keeps the file's cost of)."""
    try:
        raw = yaml_mapping(path, "study file", "name, targets, workloads, ...")
    except FileProblem as problem:
        raise UsageProblem(str(problem)) from None
    if targets:  # before the overrides: `--set targets.NAME.cost=...` may price a target --targets picked
        raw["targets"] = pick_targets(raw.get("targets"), targets, database_of)
    for override in overrides:
        apply_override(raw, override)
    try:
        study = StudyFile.model_validate(raw)
    except ValidationError as error:
        raise UsageProblem(f"invalid study file {path}: {validation_problems(error, unknown='unknown key')}") from None
    for workload in study.workloads:
        beside_study(workload.options, path)
    if scale != 1.0:
        for workload in study.workloads:
            scaled(workload.options, scale)
            if workload.task == "query":  # executions of each query: an amount of work too
                workload.runs = max(1, math.ceil(study.runs_of(workload) * scale))
    return study


def beside_study(options: dict[str, OptionValue], path: Path) -> None:
    """A workload's files (`query-file`) named relative to the study file are found beside it."""
    named = options.get("query-file")
    if isinstance(named, str) and not Path(named).is_absolute() and (path.parent / named).is_file():
        options["query-file"] = str((path.parent / named).resolve())


def apply_override(raw: dict[str, Any], override: str) -> None:
    """`a.b.c=VALUE` (VALUE read as YAML) into the raw mapping; a list item by its position or, in
    `workloads` and `targets`, by its name (`workloads.copy.insert.batch=100`)."""
    path, separator, text = override.partition("=")
    if not separator or not path.strip():
        raise UsageProblem(f"--set '{override}' is not of the form key.path=value")
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        raise UsageProblem(f"--set '{override}': the value is not valid YAML") from None
    node: Any = raw
    parts = path.strip().split(".")
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(node, list):
            index = _list_index(node, part)
            if index is None:
                raise UsageProblem(f"--set '{override}': no item '{part}' in {'.'.join(parts[:depth]) or 'the file'}")
            if last:
                node[index] = value
            else:
                node[index] = {"name": node[index]} if isinstance(node[index], str) else node[index]
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise UsageProblem(f"--set '{override}': {'.'.join(parts[:depth])} is not a mapping or list")


def _list_index(items: list[Any], part: str) -> int | None:
    if part.isdigit():
        return int(part) if int(part) < len(items) else None
    for index, item in enumerate(items):
        if item == part or (isinstance(item, dict) and item.get("name") == part):
            return index
    return None


def scaled_tsbs(options: dict[str, OptionValue], scale: float) -> None:
    """A TSBS insert's rows times `scale`: the time range first, down to an hour (TSBS's hour-long query
    windows still fit in it), then the hosts (devices), at least TSBS_MIN_HOSTS (the types that draw 8 random
    hosts still find them). Rows = hosts x time range // interval."""
    if scale >= 1:
        return
    try:
        time_range = duration_ms(str(options.get("time-range", "1d")))
    except ValueError:  # left as written: the cell's command refuses it in one line
        return
    kept = max(min(time_range, TSBS_MIN_RANGE_MS), round(time_range * scale))
    options["time-range"] = _duration_words(kept)
    rest = scale * time_range / kept
    devices = options.get("devices")
    if rest < 1 and isinstance(devices, int) and not isinstance(devices, bool):
        options["devices"] = min(devices, max(TSBS_MIN_HOSTS, math.ceil(devices * rest)))


def _duration_words(ms: int) -> str:
    """Milliseconds as a TSBS duration word (3d, 1h, 259200s...)."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def pick_targets(listed: Any, wanted: list[str], database_of: Callable[[str], str | None] = lambda name: None) -> list[Any]:
    """`--targets a,b`: the file's entries of these targets (with their cost and options); a target the
    file does not name keeps the cost of the file's entry for the same database (the preset's
    `timescaledb` price for `timescaledb-local`), else it is a bare name."""
    entries = [entry for entry in (listed if isinstance(listed, list) else []) if isinstance(entry, str | dict)]
    by_name = {(entry if isinstance(entry, str) else entry.get("name")): entry for entry in entries}
    costs = {}
    for entry in entries:
        if isinstance(entry, dict) and entry.get("cost") is not None:
            costs.setdefault(database_of(str(entry.get("target") or entry.get("name"))), entry["cost"])
    costs.pop(None, None)
    picked: list[Any] = []
    for name in wanted:
        database = database_of(name)
        picked.append(by_name.get(name) or ({"name": name, "cost": costs[database]} if database in costs else name))
    return picked


def scaled(options: dict[str, OptionValue], scale: float) -> None:
    """Amounts of work times `scale`: whole numbers at least 1, seconds at least 1; a TSBS shape's rows
    (hosts x time range) through `scaled_tsbs`."""
    if str(options.get("schema", "")) in TSBS_TABLES:
        scaled_tsbs(options, scale)
        return
    for name in SCALED & set(options):
        value = options[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if name == "duration":
            options[name] = max(1.0, round(value * scale, 1))
        else:
            options[name] = max(1, math.ceil(value * scale)) if value > 0 else value
