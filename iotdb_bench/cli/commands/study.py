"""`python run.py study FILE`: a whole comparison from one study file (docs/studies.md).

The file is validated and expanded into cells, each checked by its own command before anything runs;
the cells run in order, each saving its results folder inside the study folder; a rerun of the same
command resumes; at the end (and after every cell) study.json is written, then study.md, report.html
and the plot, with the comparison tables, the rankings and the score.
"""

from __future__ import annotations

import fcntl
import hashlib
import sys
from pathlib import Path

import click

from iotdb_bench import simulator
from iotdb_bench.cli import study_file
from iotdb_bench.cli.commands.run_options import checked_thresholds
from iotdb_bench.cli.commands.study_cells import CELL_COMMANDS
from iotdb_bench.cli.config import CONFIG_HELP, load_config
from iotdb_bench.cli.errors import RunFailed, UsageProblem
from iotdb_bench.cli.report import plots, study_report
from iotdb_bench.cli.results import agreement, results_files, thresholds
from iotdb_bench.cli.results.compared import Sources
from iotdb_bench.cli.results.study import ranking
from iotdb_bench.cli.results.study.document import CellRecord, StudyDocument
from iotdb_bench.cli.results.tables.study_catalogue import PlannedCell
from iotdb_bench.cli.run import study_plan, study_state, study_thresholds
from iotdb_bench.cli.run.study_estimate import Measured, StudyEstimate, rough_words
from iotdb_bench.cli.run.study_execute import StudyRun, now
from iotdb_bench.cli.run.study_plan import Passthrough, Plan
from iotdb_bench.cli.study_file import StudyFile
from iotdb_bench.cli.terminal import console, handle_errors, warning_line

STUDY_JSON = "study.json"


@click.command()
@click.argument("file")
@click.option("--dry-run", is_flag=True, help="List the cells (done, to run, not supported) and an estimate of the time; run nothing.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The study folder [default: results/study-NAME]; the same folder resumes.")
@click.option("--scale", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Multiply every amount of work (--num-inserts, --duration, --prefill, query executions; a TSBS insert's time range "
                   "down to an hour, then its hosts) by this factor (e.g. 0.01 for a quick try).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a field of the file (YAML value; list items by name), e.g. runs=1, workers=[1,2], workloads.copy.insert.batch=100.")
@click.option("--targets", "target_names", metavar="NAMES", help="Comma-separated targets to run instead of the file's (e.g. the ones you have).")
@click.option("--retry-failed", is_flag=True, help="Run again the cells that failed in an earlier invocation (kept by default).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help=CONFIG_HELP)
@click.option("--platform", type=click.Choice(["local", "kubernetes"]), help="Where every cell runs [default: each target's, else the config's].")
@click.option("--namespace", help="Kubernetes namespace [default: the config's].")
@click.option("--context", "kube_context", help="kubeconfig context [default: the current one].")
@click.option("--keep", is_flag=True, help="Kubernetes: leave each cell's helm release installed, for debugging.")
@click.option("--threshold", "given_thresholds", multiple=True, metavar="EXPR", callback=lambda ctx, param, values: checked_thresholds(values),
              help="A threshold of the whole study, as the file's thresholds: (repeatable); a cell that fails one fails the study, "
              "exit code 1 once everything is saved (docs/thresholds.md).")
@handle_errors
def study(file, dry_run, output, scale, overrides, target_names, retry_failed, config_path, platform, namespace, kube_context, keep,
          given_thresholds) -> None:
    """Run a whole comparison: every target x workload x worker count of a study FILE (a YAML file or the
    name of a shipped preset: seed-001, seed-002, seed-003, seed-004, tsbs-devops), resumable, with one ranking.

    Running the same command again skips the cells that completed and reruns the one that was cut."""
    path = study_file.resolve(file)
    targets = [name.strip() for name in target_names.split(",") if name.strip()] if target_names else None
    config = load_config(config_path)
    plan_file = study_file.load(path, list(overrides), scale, targets,
                                database_of=lambda name: config.targets[name].module if name in config.targets else None)
    problems = ranking.figure_problems(plan_file)
    if problems:
        raise UsageProblem(f"invalid study file {path}: {'; '.join(problems)}")
    passthrough = Passthrough(str(config_path) if config_path else None, platform, namespace, kube_context, keep)
    plan_file.thresholds += [thresholds.parse(text) for text in given_thresholds]
    plan = study_plan.expand(plan_file, config, CELL_COMMANDS, passthrough, str(path))
    study_thresholds.check(plan_file, plan, str(path))
    folder = output or Path("results") / f"study-{plan_file.name}"
    if dry_run:
        _dry_run(plan_file, plan, folder, retry_failed)
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageProblem(f"cannot create the study folder {folder}: {error.strerror}") from None
    with _lock(folder):
        _run(plan_file, plan, folder, path, passthrough, retry_failed)


class _lock:
    """One CLI per study folder: a second one would run the same cells into the same folders. The
    kernel drops the lock when its holder dies, even by kill -9."""

    def __init__(self, folder: Path):
        self.path = folder / ".lock"

    def __enter__(self):
        self.handle = self.path.open("w")
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.handle.close()
            raise UsageProblem(f"another study command is running in {self.path.parent}") from None
        return self

    def __exit__(self, *exc):
        self.handle.close()


def _run(plan_file: StudyFile, plan: Plan, folder: Path, path: Path, passthrough: Passthrough, retry_failed: bool) -> None:
    document = StudyDocument(name=plan_file.name, title=plan_file.title, description=plan_file.description, file=str(path),
                             file_sha256=hashlib.sha256(path.read_bytes()).hexdigest(), command=sys.argv, tool_version=simulator.__version__,
                             cells=[], score_formula=ranking.SCORE_FORMULA)

    def save(cells: list[CellRecord]) -> None:
        document.cells, document.updated = cells, now()
        study_state.write_atomically(folder / STUDY_JSON, document.model_dump_json(indent=2))

    run = StudyRun(plan_file, plan, folder, passthrough, retry_failed, commands=CELL_COMMANDS, on_cell_done=save)
    run.load_completed()
    document.stale_cells = run.stale()
    if document.stale_cells:
        console.print(f"{len(document.stale_cells)} cell folder(s) of an earlier version of the file are kept but not reported", highlight=False)
    try:
        run.run()
    except KeyboardInterrupt:
        document.status = "interrupted"
        save(run.cells)
        raise
    cells = run.cells
    document.status = "complete" if all(cell.status in ("ok", "not supported") for cell in cells) else "incomplete"
    document.agreements = agreement.study_agreements(cells)
    found = ranking.rankings(plan_file, cells, document.agreements)
    found += ranking.extra_rankings(plan_file, cells, found, document.agreements)
    document.rankings, document.scores = found, ranking.scores(plan_file, found)
    study_thresholds.judge(plan_file, plan, cells)
    save(cells)
    _write_views(document, folder)
    different = [row for row in document.agreements if row.differs]
    if different:
        first = different[0]
        raise RunFailed(f"answers differ across targets: {first.workload} · {first.query}: {first.verdict}"
                        f"{f' (and {len(different) - 1} more queries)' if len(different) > 1 else ''}; study saved in {folder}")
    failed = [cell for cell in cells if cell.status in ("failed", "skipped")]
    problems = [study_thresholds.failure(cells)]
    if failed:
        problems.insert(0, f"{len(failed)} of {len(cells)} cells did not pass ({', '.join(f'{c.target} · {c.workload} · w{c.workers}' for c in failed[:3])}"
                           f"{', ...' if len(failed) > 3 else ''})")
    if any(problems):
        raise RunFailed(f"{'; '.join(filter(None, problems))}; study saved in {folder}")


def _write_views(document: StudyDocument, folder: Path) -> None:
    """The tables on the terminal, study.md, the plot and report.html; a problem drawing is a warning."""
    sources = _sources(document, folder)
    for table in study_report.terminal_tables(document):
        console.print(table)
    (folder / study_report.MARKDOWN).write_text(study_report.markdown(document, sources))
    drawn: list[Path] = []
    try:
        drawn = study_report.draw(document, folder) if plots.wanted() else []
    except Exception as error:  # study.json and study.md hold every figure; the plot is a bonus
        warning_line(f"could not draw the study's plot: {type(error).__name__}: {error}")
    page = study_report.write_html(folder, document, sources, drawn)
    console.print(f"Study saved in {folder}: {STUDY_JSON}, {study_report.MARKDOWN}, {page.name}", highlight=False)


def _sources(document: StudyDocument, folder: Path) -> Sources:
    """The results documents of the cells that ran, labelled by cell, under the study's name of their target."""
    found = []
    for cell in document.cells:
        if cell.folder and cell.results_status is not None:
            try:
                results = results_files.read(folder / cell.folder)
            except UsageProblem as problem:
                warning_line(str(problem))
                continue
            results.target = cell.target
            found.append((f"{cell.target} · {cell.workload} · w{cell.workers}", results))
    return found


# -- --dry-run ------------------------------------------------------------------------------------

def _dry_run(plan_file: StudyFile, plan: Plan, folder: Path, retry_failed: bool = False) -> None:
    done = {}
    for path in study_state.known_cell_folders(folder):
        found = study_state.marker(path)
        if found is not None:
            done[found.key] = (path, found)
    estimate = StudyEstimate(plan.cells, plan.invocations, _measured(plan, done))
    rows = []
    to_run_s, assumed, limited = 0.0, False, False
    for cell in plan.cells:
        path, marker = done.get(cell.key, (None, None))
        if cell.refused:
            state, text = f"not supported: {cell.refused}", "-"
        elif marker is not None and (marker.status == "ok" or (marker.status == "failed" and not retry_failed)):
            state, text = f"{marker.status} (kept)", _duration(marker.seconds)
        else:
            cut = (study_state.cell_folder(folder, cell.folder_name())).exists()
            guess = estimate.of(cell)
            state, text = ("cut: runs again" if cut else "to run"), ("≤ " if guess.limited else "") + _duration(guess.seconds)
            to_run_s += guess.seconds
            assumed, limited = assumed or not guess.measured, limited or guess.limited
        rows.append(PlannedCell(number=cell.index + 1, target=cell.target, workload=cell.workload, workers=cell.workers, runs=cell.runs,
                                state=state, estimate=text, command=cell.command()))
    console.print(study_report.plan_table(rows, f"Study {plan_file.name}: {len(plan.cells)} cells in {folder}"))
    words = [f"rough where nothing was measured yet: assumes {rough_words()}"] if assumed else []
    words += ["≤: the cell's --time-limit ends it"] if limited else []
    console.print(f"To run: about {_duration(to_run_s)}" + (f" ({'; '.join(words)})" if words else ""), highlight=False)


def _measured(plan: Plan, done: dict) -> dict[str, Measured]:
    """What the completed cells of the plan measured, per database (config target)."""
    found: dict[str, Measured] = {}
    for cell in plan.cells:
        path, marker = done.get(cell.key, (None, None))
        if marker is None or marker.results is None or marker.status != "ok":
            continue
        try:
            document = results_files.read(path / marker.results)
        except UsageProblem:
            continue
        found.setdefault(cell.database, Measured()).add(cell, document, marker.seconds)
    return found


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
