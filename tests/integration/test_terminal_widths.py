"""Every command's output at 80, 100 and 120 columns: no line wider than the terminal, no table cut at
its edge, no figure or name cut short ("…"), every figure of the results present whole, on real runs
(SQLite, the null target). tests/unit/test_table_widths.py renders the same tables, and a study's,
from typed documents with the widest cells.

The commands run once each at 80 columns (the narrowest, progress included); `report` and
`report --details` on their folders, and `compare` on all of them, print at every width.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli

# One xdist group: the module-scoped fixture is made once, not once in each process that gets a test.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("terminal_widths")]

WIDTHS = (80, 100, 120)
COMMANDS = {
    "insert": ["insert", "--target", "sqlite", "-w", "1,2", "-r", "2", "--num-inserts", "2000"],
    "query": ["query", "--target", "sqlite", "-w", "1", "-r", "2"],
    "scan": ["scan", "--target", "sqlite", "-w", "1", "-r", "1"],
    "steps": ["insert", "--target", "null", "--platform", "local", "-w", "1", "-r", "1", "--steps", "3", "--num-inserts", "2000"],
    "open loop": ["insert", "--target", "null", "--platform", "local", "-w", "1", "-r", "1", "--rate", "2000", "--duration", "1"],
    "mixed": ["insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "2000", "--query-workers", "1"],
    "find-max-rate": ["insert", "--target", "null", "--platform", "local", "-w", "1", "--find-max-rate", "--latency-p99", "50",
                      "--duration", "1", "--max-rate", "4000"],
}


def assert_fits(output: str, width: int, what: str) -> None:
    lines = output.splitlines()
    wide = [line for line in lines if len(line) > width]
    assert not wide, f"{what} at {width} columns: {len(wide)} lines wider, e.g. {wide[0]!r}"
    assert "…" not in output, f"{what} at {width} columns cut a figure or a name: " + next(line for line in lines if "…" in line)
    cut = [line for line in lines if line[:1] in "┏┃┡│└" and line.rstrip()[-1:] not in "┃│┓┐┫┤┩┛┘"]
    assert not cut, f"{what} at {width} columns: a table cut at the terminal's edge: {cut[0]!r}"  # rich crops what does not fit


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """Each command's results folder and its own output, run once at 80 columns."""
    cwd = tmp_path_factory.mktemp("widths")
    found = {}
    for name, args in COMMANDS.items():
        before = set((cwd / "results").glob("*"))
        result = run_cli(args, cwd, env={"COLUMNS": "80"})
        assert result.code == 0, f"{name}: {result.stderr[-2000:]}"
        [folder] = set((cwd / "results").glob("*")) - before
        found[name] = (folder, result.stdout)
    return found


def test_every_command_fits_80_columns_as_it_runs(folders):
    for name, (folder, stdout) in folders.items():
        assert_fits(stdout, 80, name)
        assert f"Results saved in {folder.relative_to(folder.parent.parent)}" in stdout.replace("\n", "")
    # --find-max-rate: one progress line for the whole search, not one per rate tried
    search = folders["find-max-rate"][1]
    assert sum(1 for line in search.splitlines() if line.startswith("step ")) == 1
    assert not re.search(r"(?<![/\d,])1 workers", "".join(stdout for _, stdout in folders.values()))  # "1/1 workers done" is a count


@pytest.mark.parametrize("width", WIDTHS)
def test_report_and_details_fit_every_width_with_every_figure_whole(folders, width):
    for name, (folder, _) in folders.items():
        for extra in ([], ["--details"]):
            result = run_cli(["report", str(folder), *extra], folder.parent.parent, env={"COLUMNS": str(width)})
            assert result.code == 0, result.stderr
            assert_fits(result.stdout, width, f"report {name} {' '.join(extra)}")
            assert "Report written from" in result.stdout and "Results saved" not in result.stdout
            document = json.loads((folder / "results.json").read_text())
            for row in document["inserts"] if not document["max_rate"] else []:
                assert f"{row['throughput']['avg']:,.0f}" in result.stdout
            for row in document["queries"]:
                assert row["query"] in result.stdout  # every query's name whole
                assert f"{row['avg_s'] * 1000:.3g}"[:3] in result.stdout or row["avg_s"] * 1000 >= 100
            if document["runs_per_worker_count"] == 1 and not document["max_rate"] and document["task"] == "insert":
                assert "% unstable" not in result.stdout  # a single run has no spread (CV "-")


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_fits_every_width_names_every_source_and_skips_what_it_cannot_read(folders, width):
    cwd = next(iter(folders.values()))[0].parent.parent
    (cwd / "results" / f"empty-{width}").mkdir()  # what a killed run leaves
    first = run_cli(["compare", *(str(folder) for folder, _ in folders.values()), "--output", f"results/compare-first-{width}"], cwd,
                    env={"COLUMNS": str(width)})
    assert first.code == 0, first.stderr
    # the glob holds the first comparison's folder and the empty one: both are handled in a line
    result = run_cli(["compare", *sorted(str(path) for path in (cwd / "results").glob("*")), "--output", str(cwd / f"out-{width}")],
                     cwd, env={"COLUMNS": str(width)})
    assert result.code == 0, result.stderr
    assert_fits(result.stdout, width, "compare")
    assert f"Skipped results/empty-{width}: no results.json" in result.stdout.replace("\n", " ").replace("  ", " ") or \
        f"empty-{width}: no results.json" in result.stdout.replace("\n", "")
    for folder, _ in folders.values():
        assert folder.name[:16] in result.stdout  # every source named (folded if need be, never cut)
    markdown = (cwd / f"out-{width}" / "compare.md").read_text()
    for folder, _ in folders.values():
        assert f"| {folder.name} |" in markdown
