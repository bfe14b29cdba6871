"""Study files: validation with field-level errors, the order and keys of the cells, what a change
of the file reruns, and the ranking and score (docs/studies.md)."""

from __future__ import annotations

import math
import textwrap

import pytest

from iotdb_bench.cli import study_file
from iotdb_bench.cli.commands.study_cells import CELL_COMMANDS
from iotdb_bench.cli.config import load_config
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results.cost import Cost
from iotdb_bench.cli.results.study import ranking
from iotdb_bench.cli.results.study.document import CellRecord
from iotdb_bench.cli.run.study_plan import Passthrough, expand
from tests import factories
from tests.conftest import REPO_ROOT, run_cli

STUDY = """
name: unit
targets: [sqlite, "null"]
workers: [1, 2]
runs: 2
workloads:
  - name: copy
    insert: {num-inserts: 1000, batch: 100}
  - name: queries
    query: {queries: [count-events]}
    workers: [1]
  - name: scan
    scan: {page-size: 500}
    workers: [1]
"""


def write(tmp_path, text: str = STUDY, name: str = "study.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def plan(path, **load):
    study = study_file.load(path, **load)
    return study, expand(study, load_config(None), CELL_COMMANDS, Passthrough(), str(path))


def test_cells_run_target_by_target_workloads_in_file_order_then_worker_counts(tmp_path):
    _, found = plan(write(tmp_path))
    order = [(cell.target, cell.workload, cell.workers) for cell in found.cells]
    assert order == [("sqlite", "copy", 1), ("sqlite", "copy", 2), ("sqlite", "queries", 1), ("sqlite", "scan", 1),
                     ("null", "copy", 1), ("null", "copy", 2), ("null", "queries", 1), ("null", "scan", 1)]
    first = found.cells[0]
    assert first.args == ["--batch", "100", "--num-inserts", "1000", "-w", "1", "-r", "2", "--target", "sqlite"]
    # a query or scan reads the data of the last insert cell of its target before it
    assert found.cells[2].data_cell == found.cells[1].key and found.cells[3].data_cell == found.cells[1].key
    assert found.cells[6].data_cell == found.cells[5].key
    assert len({cell.key for cell in found.cells}) == 8
    # each cell was built by its command: the invocation it would run
    assert found.invocations[first.key].base.batch == 100 and found.invocations[first.key].runs == 2


def test_keys_survive_reordered_options_and_change_with_what_changes_figures(tmp_path):
    _, before = plan(write(tmp_path))
    reordered = STUDY.replace("{num-inserts: 1000, batch: 100}", "{batch: 100, num-inserts: 1000}")
    _, same = plan(write(tmp_path, reordered, "reordered.yaml"))
    assert [c.key for c in same.cells] == [c.key for c in before.cells]

    # another scan page size: only the scan cells change
    _, scan_changed = plan(write(tmp_path, STUDY.replace("page-size: 500", "page-size: 400"), "scan.yaml"))
    changed = [c.workload for c, b in zip(scan_changed.cells, before.cells, strict=True) if c.key != b.key]
    assert changed == ["scan", "scan"]

    # another insert: the inserts change, and so do the queries and scans that read their data
    _, insert_changed = plan(write(tmp_path, STUDY.replace("num-inserts: 1000", "num-inserts: 900"), "insert.yaml"))
    assert all(c.key != b.key for c, b in zip(insert_changed.cells, before.cells, strict=True))

    # a second target appended leaves the first one's cells alone
    _, more = plan(write(tmp_path, STUDY.replace('targets: [sqlite, "null"]', "targets: [sqlite]"), "one.yaml"))
    assert [c.key for c in more.cells] == [c.key for c in before.cells[:4]]


def test_scale_and_set_change_the_plan_like_the_file_would(tmp_path):
    path = write(tmp_path)
    study, scaled = plan(path, scale=0.5, overrides=["runs=1", "workloads.queries.query.queries=[count-events, temperature-stats]"])
    assert study.runs == 1 and "--num-inserts" in scaled.cells[0].args
    assert scaled.cells[0].args[scaled.cells[0].args.index("--num-inserts") + 1] == "500"
    assert scaled.cells[2].args[:2] == ["--queries", "count-events,temperature-stats"]
    _, picked = plan(path, targets=["null"])
    assert {cell.target for cell in picked.cells} == {"null"}


def test_validation_errors(tmp_path):
    cases = [
        ("runs: 2", "runs: 0", "runs: Input should be greater than or equal to 1"),
        ("name: unit", "name: unit\ncolour: red", "colour: unknown key"),
        ("{num-inserts: 1000, batch: 100}", "{num-inserts: 1000, batsh: 100}", "workloads.copy.insert.batsh: no such option of `insert`"),
        ("{num-inserts: 1000, batch: 100}", "{num-inserts: 1000, batch: -5}",
         "workloads.copy (insert) on target sqlite: Invalid value for '--batch': -5 is not in the range x>=1"),
        ("{num-inserts: 1000, batch: 100}", "{num-inserts: 1000, workers: 4}", "workers: set by the study for every cell"),
        ("    workers: [1]\n  - name: scan", "    workers: [1]\n    rank_by: rows_per_s\n  - name: scan",
         "workloads.queries.rank_by: 'rows_per_s' is not a figure of a query workload"),
        ('targets: [sqlite, "null"]', 'targets: [sqlite, sqlite]', "target sqlite given twice"),
        ("{num-inserts: 1000, batch: 100}", "{num-inserts: 1000, duration: 5}",
         "workloads.copy (insert) on target sqlite: --duration and --num-inserts both set the length of the timed phase"),
        ('targets: [sqlite, "null"]', 'targets: [sqlite, nosuch]', "unknown target 'nosuch'"),
        # a workload that repeats another's options would share its cell (its key): refused, not run once silently
        ("  - name: queries", "  - name: again\n    insert: {batch: 100, num-inserts: 1000}\n  - name: queries",
         "workloads.again runs the same command as workloads.copy on target sqlite (1 worker(s))"),
    ]
    for index, (old, new, expected) in enumerate(cases):
        assert old in STUDY, old
        path = write(tmp_path, STUDY.replace(old, new), f"bad{index}.yaml")
        with pytest.raises(UsageProblem) as raised:
            study = study_file.load(path)
            problems = ranking.figure_problems(study)
            if problems:
                raise UsageProblem("; ".join(problems))
            plan(path)
        assert expected in str(raised.value), (expected, str(raised.value))


def test_the_command_reports_a_bad_file_in_one_line_with_exit_2(tmp_path):
    path = write(tmp_path, STUDY.replace("batch: 100", "batsh: 100"))
    result = run_cli(["study", str(path), "--dry-run"], tmp_path)
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "workloads.copy.insert.batsh: no such option" in lines[0] and "Traceback" not in result.stderr
    assert run_cli(["study", "no-such-preset"], tmp_path).code == 2


def test_unsupported_cells_are_listed_not_run_when_the_file_says_skip(tmp_path):
    text = STUDY.replace("workloads:", "unsupported: skip\nworkloads:").replace(
        "{num-inserts: 1000, batch: 100}", "{num-inserts: 1000, batch: 100, extra-option: {use_values_lists: true}}")
    _, found = plan(write(tmp_path, text))
    refused = {(cell.target, cell.workload): cell.refused for cell in found.cells if cell.refused}
    assert "use_values_lists" in refused[("null", "copy")]
    # the null target's queries and scans have no data of the study to read: listed as not supported too
    assert "insert cells are not supported" in refused[("null", "queries")]
    assert not any(cell.refused for cell in found.cells if cell.target == "sqlite")
    with pytest.raises(UsageProblem, match="unsupported: skip"):
        plan(write(tmp_path, text.replace("unsupported: skip\n", ""), "fail.yaml"))


def test_every_shipped_preset_expands(tmp_path, monkeypatch):
    monkeypatch.setenv("MYSQL_PASSWORD", "x")
    monkeypatch.setenv("PGPASSWORD", "x")
    for name in ("seed-001", "seed-002", "seed-003", "seed-004"):
        study, found = plan(study_file.resolve(name), scale=0.001)
        assert found.cells and study.name == name
        assert not ranking.figure_problems(study)


# -- ranking and score ----------------------------------------------------------------------------

def insert_cell(target: str, throughput: float, key: str, workers: int = 1, ok: bool = True, status: str = "ok", p99: float = 5.0) -> CellRecord:
    document = factories.document([(workers, factories.insert_report([int(throughput)], 1.0, p99_ms=p99, ok=ok))])
    return CellRecord(key=key, index=0, target=target, database=target, workload="copy", task="insert", workers=workers, runs=1, args=[],
                      status=status, inserts=document.inserts, conditions={"platform": "local"})


def test_ranking_orders_checked_cells_and_never_ranks_a_failed_or_unchecked_one(tmp_path):
    study = study_file.load(write(tmp_path))
    cells = [insert_cell("sqlite", 1000, "a"), insert_cell("null", 3000, "b"), insert_cell("sqlite", 9000, "c", ok=False),
             insert_cell("null", 8000, "d", workers=2, status="failed")]
    table = ranking.ranking(study.workloads[0], ranking.FIGURES["inserts_per_s"], cells)
    assert [(row.cell, row.rank) for row in table.rows] == [("b", 1), ("a", 2), ("c", None), ("d", None)]
    assert table.rows[2].why == "count check FAILED" and table.rows[2].check == "FAILED"
    assert table.rows[3].why.startswith("the cell failed")
    assert table.rows[0].spread == "1 run: no spread"  # a single run has no min-max or CV to show


def test_score_is_the_weighted_geometric_mean_of_figures_relative_to_the_best(tmp_path):
    text = STUDY + textwrap.dedent("""
    score:
      - {workload: copy, figure: inserts_per_s, weight: 2}
      - {workload: copy, figure: p99_ms}
    """)
    study = study_file.load(write(tmp_path, text))
    cells = [insert_cell("sqlite", 1000, "a", p99=2.0), insert_cell("null", 4000, "b", p99=8.0), insert_cell("null", 2000, "c", workers=2, p99=4.0)]
    found = ranking.rankings(study, cells)
    found += ranking.extra_rankings(study, cells, found)
    scores = {item.target: item for item in ranking.scores(study, found)}
    # sqlite: throughput 1000/4000, p99 best (2 ms): (0.25^2 x 1)^(1/3); null: throughput best, p99 its best cell 4 ms: 2/4
    assert scores["sqlite"].score == pytest.approx(100 * math.exp((2 * math.log(0.25) + math.log(1.0)) / 3))
    assert scores["null"].score == pytest.approx(100 * math.exp((2 * math.log(1.0) + math.log(0.5)) / 3))
    assert scores["null"].rank == 1 and scores["sqlite"].rank == 2
    assert [term.relative for term in scores["null"].terms] == [pytest.approx(1.0), pytest.approx(0.5)]


def test_a_target_without_a_ranked_cell_for_an_input_has_no_score(tmp_path):
    study = study_file.load(write(tmp_path))
    cells = [insert_cell("sqlite", 1000, "a"), insert_cell("null", 4000, "b", ok=False)]
    scores = {item.target: item for item in ranking.scores(study, ranking.rankings(study, cells))}
    assert scores["sqlite"].score == pytest.approx(100.0)
    assert scores["null"].score is None and "no ranked cell for copy inserts_per_s" in scores["null"].why


def test_operations_per_cost_use_the_study_price():
    cell = insert_cell("sqlite", 3600, "a")
    cell.cost = Cost(per_hour=2.0, currency="USD")
    [priced] = ranking.cell_rows(cell)
    value = ranking.FIGURES["inserts_per_cost"].value(priced)
    assert value == pytest.approx(3600 * 3600 / 2.0)  # inserts one dollar buys at 3,600/s and 2 USD/h


def test_docs_list_every_figure_a_study_ranks_by_as_the_catalogue_declares_it():
    """docs/studies.md's table of figures: each ranked figure of the catalogue with its task, label, unit and direction."""
    table = (REPO_ROOT / "docs" / "studies.md").read_text().split("| figure | task | label")[1].split("\n\n")[0]
    rows = [[cell.strip(" `") for cell in line.strip("|").split("|")] for line in table.splitlines() if line.startswith("| `")]
    assert {row[0]: tuple(row[1:5]) for row in rows} == {
        name: (ranking.TASKS[name], figure.title, figure.unit, figure.better) for name, figure in ranking.FIGURES.items()}


def test_a_study_page_flags_what_its_cells_rows_show():
    """The study's flags list what its cells' rows show (an unstable row, here), as its tables do: the page
    said "none (stable runs, ...)" above a table of rows marked unstable."""
    from iotdb_bench.cli.results import findings
    from iotdb_bench.cli.results.compared import compare
    from iotdb_bench.cli.results.study.document import StudyDocument
    from tests import factories

    reports = [(1, factories.insert_report([400], 0.4 + run / 10, throughput=9_000_000.0 * (1 + run / 5), workers=1, counters=(0, 400)))
               for run in range(3)]
    cell = factories.document(reports, target="sqlite")
    assert cell.inserts[0].throughput.unstable
    study = StudyDocument(name="flags", file="study.yaml", file_sha256="0" * 64, cells=[], rankings=[], scores=[], score_formula="")
    found = findings.study_findings(study, compare([("sqlite · copy · w1", cell)]))
    unstable = [finding for finding in found if finding.kind == "unstable"]
    assert len(unstable) == 1 and unstable[0].sentence() in findings.flags(found)
    assert "differs" not in {finding.kind for finding in found}
