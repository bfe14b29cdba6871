"""report.html and compare.html opened in a real headless Chromium (Debian's, installed by
scripts/install-chromium.sh): the key figures and conditions are in the rendered page, the page
fetches nothing, a screenshot at phone and desktop width is not blank, and it prints to PDF."""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import subprocess
from html import unescape
from pathlib import Path

import click
import pytest

from tests.conftest import REPO_ROOT

# One xdist group: the module-scoped browser is started once, not once in each process that gets a test.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("html_report"), pytest.mark.plots]

# As the machine notes say: without the background-networking flags Chromium tries to reach the
# network at start, which this machine (and CI's) refuses.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic", "--hide-scrollbars"]
PHONE = "412,915"
MEASURE = """<script>
for (const part of document.querySelectorAll("details")) part.open = true;
const wide = [...document.querySelectorAll(".scroll")].filter(box => box.scrollWidth > box.clientWidth + 1)
  .map(box => [box.scrollWidth, box.clientWidth, (box.querySelector("th") || {}).textContent]);
document.body.setAttribute("data-measure", JSON.stringify({width: document.documentElement.scrollWidth, wide: wide,
  command: (document.querySelector("pre.command code") || {}).textContent || ""}));
</script>"""
DESKTOP = "1280,2000"


@pytest.fixture(scope="module")
def chromium() -> str:
    done = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "install-chromium.sh")], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"scripts/install-chromium.sh failed:\n{done.stderr[-3000:]}"
    return done.stdout.strip().splitlines()[-1]


class Browser:
    def __init__(self, binary: str, scratch: Path):
        self.binary, self.scratch, self.profiles = binary, scratch, 0

    def _run(self, page: Path, *args: str) -> subprocess.CompletedProcess:
        self.profiles += 1
        profile = self.scratch / f"profile-{self.profiles}"  # a fresh profile for every start
        done = subprocess.run([self.binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    def dom(self, page: Path) -> str:
        """The page as Chromium rendered it (--dump-dom), tags stripped to text."""
        html = self._run(page, "--dump-dom").stdout
        assert "<table" in html
        return " ".join(re.sub(r"<[^>]+>", " ", html).replace("&nbsp;", " ").replace("&amp;", "&").split())

    def measure(self, page: Path) -> dict:
        """At 1280 px with every expandable part open: the page's scroll width, every table container
        wider than its box, and the command the page prints (a script added to a copy of the page:
        the page itself has none)."""
        copy = self.scratch / ("measured-" + page.name)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
        html = self._run(copy, f"--window-size={DESKTOP}", "--dump-dom").stdout
        return json.loads(unescape(re.search(r'data-measure="([^"]*)"', html)[1]))

    def screenshot(self, page: Path, size: str, name: str) -> Path:
        """A screenshot beside the browser's profiles (never in a results folder)."""
        path = self.scratch / name
        path.parent.mkdir(parents=True, exist_ok=True)
        self._run(page, f"--window-size={size}", f"--screenshot={path}")
        assert_not_blank(path)
        return path

    def pdf(self, page: Path) -> Path:
        path = self.scratch / (page.stem + ".pdf")
        self._run(page, f"--print-to-pdf={path}", "--no-pdf-header-footer")
        data = path.read_bytes()
        assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page[^s]", data)) >= 1
        return path


@pytest.fixture
def browser(chromium, tmp_path) -> Browser:
    return Browser(chromium, tmp_path / "chromium")


def assert_not_blank(path: Path) -> None:
    """A screenshot of a page that rendered: many colours, and a fair share of pixels not background."""
    from matplotlib.image import imread

    pixels = imread(path)[:, :, :3]
    colours = {tuple(pixel) for pixel in pixels.reshape(-1, 3)[::7].round(2).tolist()}
    inked = float((pixels.min(axis=2) < 0.9).mean())
    assert len(colours) > 30, f"{path}: only {len(colours)} colours"
    assert inked > 0.01, f"{path}: {inked:.1%} of the pixels differ from white"


def assert_self_contained(page: Path) -> None:
    """Nothing is fetched when the page is opened: no script, every image inline."""
    html = page.read_text()
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert re.findall(r'src="([^"]*)"', html) == [source for source in re.findall(r'src="([^"]*)"', html) if source.startswith("data:image/png;base64,")]
    assert not re.search(r'(src|href)="(https?:)?//', html)


def assert_reads_at_1280_and_reproduces(browser: Browser, page: Path, document: dict) -> None:
    """No table scrolls sideways at 1280 px (expandable parts open), and the printed command, fed to the
    CLI's own click parser, gives back every option the invocation recorded."""
    from iotdb_bench.cli.commands.entry import commands

    measured = browser.measure(page)
    assert measured["width"] <= 1280 and measured["wide"] == [], measured
    words = shlex.split(measured["command"])
    assert words[0] == "iotdb-bench" and words[1] == document["task"]
    command = commands.get_command(click.Context(commands), words[1])
    context = command.make_context(words[1], words[2:])
    recorded = document["environment"]["options"]
    parsed = {name: value for name, value in context.params.items() if name in recorded}
    normal = json.loads(json.dumps({name: list(v) if isinstance(v, tuple) else (str(v) if isinstance(v, Path) else v)
                                    for name, v in parsed.items()}))
    assert normal == {name: value for name, value in recorded.items() if name in normal}
    assert set(recorded) - set(normal) <= {"details"}


def git_head() -> str:
    return subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_insert_report_in_a_real_browser(cli, browser):
    result = cli("insert", "--target", "sqlite", "-w", "1,2", "-r", "2", "--num-inserts", "3000", "--batch", "500",
                 "--threshold", "inserts_per_s>=1", "--threshold", "count_check==ok")
    assert result.code == 0, result.stderr
    folder = result.results_folders()[-1]
    document = json.loads((folder / "results.json").read_text())

    # The conditions in results.json, against the machine and the server.
    environment = document["environment"]
    assert environment["commit"] == git_head()
    assert environment["host"]["memory_bytes"] == int(re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text())[1]) * 1024
    assert environment["host"]["cpu_model"] in Path("/proc/cpuinfo").read_text()
    assert environment["options"]["worker_counts"] == [1, 2] and environment["options"]["batch"] == 500
    assert environment["options"]["heartbeat_timeout"] == 30
    conditions = document["runs"][0]["report"]["conditions"]
    assert conditions["server_version"] == f"SQLite {sqlite3.sqlite_version}"
    assert conditions["software"]["build"]["commit"] == git_head()
    assert "Conditions: iotdb-bench" in result.stdout and f"SQLite {sqlite3.sqlite_version}" in result.stdout

    page = folder / "report.html"
    assert f"Report: {page.relative_to(result.cwd)}" in result.stdout
    assert_self_contained(page)
    text = browser.dom(page)
    for row in document["inserts"]:
        assert f"{row['throughput']['avg']:,.0f}" in text  # every row's average inserts/s
        assert f"{row['throughput']['min']:,.0f}" in text
    for run in document["runs"]:
        assert run["report"]["run_id"] in text  # every run, by its id
    assert "Count checks and database-side cross-check" in text and " ok " in text
    assert f"SQLite {sqlite3.sqlite_version}" in text and git_head()[:12] in text
    assert "--batch 500" in text and "--heartbeat-timeout 30.0" in text and "1 worker, run 1/2" in text
    assert "Thresholds: all 2 passed" in text and "count_check==ok pass 1 worker: ok; 2 workers: ok" in text  # the thresholds' table
    assert_reads_at_1280_and_reproduces(browser, page, document)
    assert text.count("Plots") == 1
    pngs = sorted(path.name for path in folder.glob("*.png"))
    # the insert plots, and one plot of the resources for each worker count
    assert len([name for name in pngs if not name.startswith("resources")]) == 3
    assert [name for name in pngs if name.startswith("resources")] == ["resources.png"]  # one series per worker count
    assert page.read_text().count("data:image/png;base64,") == len(pngs)
    browser.screenshot(page, PHONE, "report-phone.png")
    browser.screenshot(page, DESKTOP, "report-desktop.png")
    browser.pdf(page)

    # `report DIR` writes it again from results.json.
    page.unlink()
    again = cli("report", str(folder))
    assert again.code == 0, again.stderr
    assert page.is_file() and f"{document['inserts'][0]['throughput']['avg']:,.0f}" in browser.dom(page)


def test_query_report_and_compare_in_a_real_browser(cli, browser, tmp_path):
    inserts = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "2000", "--batch", "1000")
    other_batch = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "2000", "--batch", "100")
    null = cli("insert", "--target", "null", "--platform", "local", "-w", "2", "-r", "1", "--num-inserts", "2000", "--batch", "1000")
    queries = cli("query", "--target", "sqlite", "-w", "1", "-r", "2")
    assert inserts.code == other_batch.code == null.code == queries.code == 0
    query_folder = queries.results_folders()[-1]
    document = json.loads((query_folder / "results.json").read_text())
    text = browser.dom(query_folder / "report.html")
    for row in document["queries"]:
        assert row["query"] in text
    assert "Milliseconds per execution" in text
    assert_reads_at_1280_and_reproduces(browser, query_folder / "report.html", document)
    browser.screenshot(query_folder / "report.html", PHONE, "query-report-phone.png")

    output = tmp_path / "comparison"
    result = cli("compare", *(str(path) for path in queries.results_folders()), "--output", str(output))
    assert result.code == 0, result.stderr
    page = output / "compare.html"
    assert_self_contained(page)
    text = browser.dom(page)
    rows = [json.loads((folder / "results.json").read_text()) for folder in queries.results_folders()]
    for document in rows:
        for row in document["inserts"]:
            assert f"{row['throughput']['avg']:,.0f}" in text
    # The sqlite run with batch 100 is marked: its conditions differ from the other rows'.
    assert "batch 100 (others: 1000)" in text and "sqlite †" in text
    assert "batch 100 (others: 1000)" in result.stdout
    assert "count-events" in text and "null" in text
    measured = browser.measure(page)
    assert measured["width"] <= 1280 and measured["wide"] == [], measured
    for folder in queries.results_folders():
        assert f"{folder.name}" in text  # every row's source
    browser.screenshot(page, DESKTOP, "compare-desktop.png")
    browser.screenshot(page, PHONE, "compare-phone.png")
    browser.pdf(page)
