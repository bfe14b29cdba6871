"""benchmarks/pool_rounds.py: the rounds of several saved postgres_overhead runs taken together."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

from tests.conftest import REPO_ROOT


def saved_run(path, workers: int, tool: list[float], reference: list[float], pregenerated: list[float], generating: list[float]) -> None:
    """A `postgres_overhead.py --json` output: its table lines, then the JSON object on the last line."""
    sides = {"tool": tool, "tool_pregenerated": pregenerated, "reference": reference, "reference_generating": generating}
    rounds = {side: [{"rate": rate, "client_cpu_s_per_million": 0.2, "tool_cpu_s_per_million": 0.25} for rate in rates]
              for side, rates in sides.items()}
    result = {"benchmark": "postgres_overhead", "results": [{"workers": workers, "rounds": rounds}]}
    path.write_text("COPY into PostgreSQL ... (the tables)\n" + json.dumps(result) + "\n")


def pool(*paths) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "benchmarks/pool_rounds.py", *map(str, paths)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)


def row(output: str, label: str) -> list[str]:
    [line] = [line for line in output.splitlines() if line.startswith(f"│ {label} ")]
    return [cell.strip() for cell in line.strip("│").split("│")]


def test_the_pooled_median_is_the_median_of_every_round_not_of_the_runs_medians(tmp_path):
    saved_run(tmp_path / "postgres_overhead-first.json", 2, tool=[90, 80, 100], reference=[100, 100, 100],
              pregenerated=[95, 95, 95], generating=[100, 100, 100])
    saved_run(tmp_path / "postgres_overhead-second.json", 2, tool=[99, 98], reference=[100, 100], pregenerated=[97, 96], generating=[100, 100])
    completed = pool(tmp_path / "postgres_overhead-first.json", tmp_path / "postgres_overhead-second.json")
    assert completed.returncode == 0, completed.stderr
    every_round = [0.90, 0.80, 1.00, 0.99, 0.98]
    pooled = row(completed.stdout, "all rounds together")
    assert pooled[1] == "5" and pooled[2].startswith(f"{statistics.median(every_round):.3f} (")  # 0.980; the runs' medians: 0.90, 0.985
    assert pooled[2].endswith("; 0.80-1.00)") and row(completed.stdout, "first")[2].startswith("0.900 (")
    assert pooled[3].startswith("0.950 (") and pooled[4].startswith("1.000 (") and pooled[6].startswith("1.250 (")


def test_a_file_without_the_benchmarks_output_is_one_line_and_exit_1(tmp_path):
    (tmp_path / "log.txt").write_text("some other log\n{\"benchmark\": \"fast_paths\"}\n")
    completed = pool(tmp_path / "log.txt")
    assert completed.returncode == 1 and "Traceback" not in completed.stderr
    assert completed.stderr.strip().splitlines() == [f"{tmp_path / 'log.txt'}: no output of `postgres_overhead.py --json` in it "
                                                      "(its last line that is a JSON object)"]
    missing = pool(tmp_path / "absent.json")
    assert missing.returncode == 1 and missing.stderr.strip() == f"cannot read {tmp_path / 'absent.json'}: No such file or directory"


def test_a_run_of_an_older_benchmark_without_a_side_gives_a_dash_for_its_figures_not_a_traceback(tmp_path):
    saved_run(tmp_path / "postgres_overhead-old.json", 1, tool=[95], reference=[100], pregenerated=[99], generating=[100])
    run = json.loads((tmp_path / "postgres_overhead-old.json").read_text().splitlines()[-1])
    del run["results"][0]["rounds"]["tool_pregenerated"]  # measured only since --pregenerate existed
    (tmp_path / "postgres_overhead-old.json").write_text(json.dumps(run) + "\n")
    completed = pool(tmp_path / "postgres_overhead-old.json")
    assert completed.returncode == 0, completed.stderr
    assert row(completed.stdout, "old")[2:4] == ["0.950", "-"]
