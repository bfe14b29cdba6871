"""A real Prometheus-compatible scraper for the metrics tests: a VictoriaMetrics of the test's own
(Debian's `victoria-metrics`, which scripts/servers/start-victoriametrics.sh installs), on a free port
with its data under the test's folder, scraping with `-promscrape.config` and answering PromQL on
/api/v1/query_range. It never touches the shared instance on 8428, and is stopped at the end.

Also the shipped Grafana dashboard's queries (deployment/dashboards/iotdb-bench.json), read from the
JSON, so that the tests run exactly what the dashboard runs.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from iotdb_bench.cli.run.platforms.local import free_port
from tests.conftest import REPO_ROOT

DASHBOARD = REPO_ROOT / "iotdb_bench" / "deployment" / "dashboards" / "iotdb-bench.json"
BINARY = "victoria-metrics"
SCRAPE_INTERVAL_S = 1


@dataclass(frozen=True)
class DashboardQuery:
    panel: str
    ref: str
    expr: str

    def promql(self, run_id: str, rate_interval: str) -> str:
        """The expression as Grafana sends it for this run and this $__rate_interval."""
        return self.expr.replace("$run_id", run_id).replace("$__rate_interval", rate_interval)


def dashboard_queries() -> list[DashboardQuery]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [DashboardQuery(panel["title"], target["refId"], target["expr"]) for panel in panels for target in panel["targets"]]


def run_variable_query() -> str:
    """The dashboard's `run_id` variable: Grafana's label_values(METRIC, LABEL)."""
    [variable] = [v for v in json.loads(DASHBOARD.read_text())["templating"]["list"] if v["name"] == "run_id"]
    return variable["query"]["query"]


Series = dict[tuple[tuple[str, str], ...], list[tuple[float, float]]]


class Scraper:
    """VictoriaMetrics scraping `scrape_configs` every SCRAPE_INTERVAL_S."""

    def __init__(self, folder: Path, scrape_configs: list[dict]):
        if shutil.which(BINARY) is None:
            raise RuntimeError(f"{BINARY} not found: scripts/servers/start-victoriametrics.sh installs Debian's package")
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = config = folder / "scrape.yaml"
        self.reconfigure(scrape_configs)
        self.log = folder / "victoria-metrics.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [BINARY, f"-httpListenAddr=127.0.0.1:{self.port}", f"-storageDataPath={folder / 'data'}", f"-promscrape.config={config}",
                 # the newest samples answer at once (the default hides the last 30 s), no cached answers; the
                 # config and the cluster's pods read again every second (the defaults: never and 30 s)
                 "-search.latencyOffset=0s", "-search.disableCache", "-memory.allowedPercent=10", "-loggerLevel=WARN",
                 "-promscrape.configCheckInterval=1s", "-promscrape.kubernetesSDCheckInterval=1s"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        self._wait_until_up()

    def reconfigure(self, scrape_configs: list[dict]) -> None:
        """Scrape these from now on (read again within a second)."""
        self.config.write_text(yaml.safe_dump({"global": {"scrape_interval": f"{SCRAPE_INTERVAL_S}s"}, "scrape_configs": scrape_configs}))

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"victoria-metrics exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                if answer.read().strip() == b"OK":
                    return
            time.sleep(0.1)
        raise RuntimeError("victoria-metrics did not answer /health within 30 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _get(self, path: str, **params: str) -> dict:
        with urllib.request.urlopen(f"{self.url}{path}?{urllib.parse.urlencode(params)}", timeout=30) as answer:
            body = json.loads(answer.read())
        assert body["status"] == "success", body
        return body["data"]

    def query_range(self, expr: str, start: float, end: float, step_s: float = 1.0) -> Series:
        """Each series of `expr` (by its labels) and its points [(time, value)]."""
        data = self._get("/api/v1/query_range", query=expr, start=f"{start:.3f}", end=f"{end:.3f}", step=f"{step_s:g}s")
        return {tuple(sorted(item["metric"].items())): [(float(t), float(v)) for t, v in item["values"]] for item in data["result"]}

    def label_values(self, label: str, match: str) -> list[str]:
        return self._get(f"/api/v1/label/{label}/values", **{"match[]": match})

    def wait_for(self, expr: str, start: float, limit_s: float = 60.0) -> None:
        """Until `expr` has a sample (the scraper has the target)."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if self.query_range(expr, start, time.time()):
                return
            time.sleep(0.5)
        raise AssertionError(f"no sample of {expr} within {limit_s:g} s; targets: {self.targets()}")

    def wait_until_gone(self, expr: str, limit_s: float = 60.0) -> None:
        """Until `expr` has no value now: its target went away and the scraper marked its series stale.
        Every sample scraped before is then searchable too (the scraper keeps the newest samples in
        memory for a moment before a query sees them)."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if not self._get("/api/v1/query", query=expr, time=f"{time.time():.3f}")["result"]:
                return
            time.sleep(0.5)
        raise AssertionError(f"{expr} still has a value {limit_s:g} s after the run; targets: {self.targets()}")

    def targets(self) -> str:
        with urllib.request.urlopen(f"{self.url}/api/v1/targets", timeout=10) as answer:
            return answer.read().decode()[:3000]


@contextlib.contextmanager
def scraping(folder: Path, scrape_configs: list[dict]) -> Iterator[Scraper]:
    scraper = Scraper(folder, scrape_configs)
    try:
        yield scraper
    finally:
        scraper.stop()


def pod_monitor_scrape_config(monitor: dict, kubeconfig: Path) -> dict:
    """A rendered PodMonitor as the prometheus-operator turns it into a scrape config: the pods of its
    namespace, kept when they carry every label of its selector and a container port of the
    endpoint's name; its path and interval. (The scraper finds the pods through the API server.)"""
    [endpoint] = monitor["spec"]["podMetricsEndpoints"]
    keep = [{"source_labels": [f"__meta_kubernetes_pod_label_{re.sub('[^a-zA-Z0-9_]', '_', name)}"], "regex": re.escape(value), "action": "keep"}
            for name, value in monitor["spec"]["selector"]["matchLabels"].items()]
    keep.append({"source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": re.escape(endpoint["port"]), "action": "keep"})
    named = [{"source_labels": [f"__meta_kubernetes_{source}"], "target_label": target}
             for source, target in (("namespace", "namespace"), ("pod_name", "pod"), ("pod_container_name", "container"))]
    namespace = monitor["metadata"]["namespace"]
    return {"job_name": f"podMonitor/{namespace}/{monitor['metadata']['name']}/0", "scrape_interval": endpoint["interval"],
            "metrics_path": endpoint["path"], "relabel_configs": keep + named,
            "kubernetes_sd_configs": [{"role": "pod", "kubeconfig_file": str(kubeconfig), "namespaces": {"names": [namespace]}}]}
