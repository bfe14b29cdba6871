"""The conditions of a results document in words: for the tables' caption, the HTML reports and
`compare`, which marks rows measured under conditions that differ in ways that matter.

Everything here reads the typed document (cli/results/document.py) and the run reports' conditions
(simulator/measurement/conditions.py); nothing asks a database or a cluster.
"""

from __future__ import annotations

import shlex
from collections import Counter

from iotdb_bench.cli.results.document import ResultsDocument
from iotdb_bench.simulator.measurement.conditions import Node, RunConditions

# Spec fields that describe the workload's shape, where the spec has them (workload generators).
SHAPE_FIELDS = ("shape", "schema", "measurements", "fields_per_event")


def short_commit(commit: str, modified: bool | None = None) -> str:
    if not commit or commit == "unknown":
        return "commit unknown"
    text = commit[:12] if len(commit) >= 40 else commit
    return text + (" (modified)" if modified else "")


def server_versions(document: ResultsDocument) -> list[str]:
    """The server versions the runs reported, in order, without repeats (the full text)."""
    found = []
    for run in document.runs:
        conditions = run.report.conditions
        if conditions is None:
            continue
        text = conditions.server_version or (f"not read ({conditions.server_version_error})" if conditions.server_version_error else None)
        if text and text not in found:
            found.append(text)
    return found


def short_server_version(text: str) -> str:
    """PostgreSQL's version() names the compiler too: the part before it is the version (an extension's
    version after "; ", TimescaleDB's, stays)."""
    server, _, extension = text.partition("; ")
    short = server.split(", compiled by")[0].split(" on x86_64")[0].split(" on aarch64")[0]
    return f"{short}; {extension}" if extension else short


def run_conditions(document: ResultsDocument) -> list[RunConditions]:
    return [run.report.conditions for run in document.runs if run.report.conditions is not None]


def drivers(document: ResultsDocument) -> dict[str, str]:
    found: dict[str, str] = {}
    for conditions in run_conditions(document):
        if conditions.software:
            found.update(conditions.software.drivers)
    return found


def nodes(document: ResultsDocument) -> list[Node]:
    """Every node that ran part of the invocation, once (roles merged)."""
    merged: dict[str, Node] = {}
    for conditions in run_conditions(document):
        for node in conditions.placement.nodes if conditions.placement else []:
            if node.name in merged:
                merged[node.name].roles = list(dict.fromkeys([*merged[node.name].roles, *node.roles]))
            else:
                merged[node.name] = node.model_copy(deep=True)
    return list(merged.values())


def node_type(node: Node) -> str:
    return node.instance_type or f"{node.cpu or '?'} CPU, {node.memory or '?'} memory"


def gib(size: int | None) -> str:
    return "?" if size is None else f"{size / 2**30:.1f} GiB"


def machine(document: ResultsDocument) -> str:
    """The local machine in one phrase (the CLI's; on the local platform also the run's)."""
    host = document.environment.host
    if host is None:
        return f"{document.environment.machine or '?'} with {document.environment.cpus or '?'} CPUs"
    return f"{host.cpu_model or 'CPU ?'}, {host.logical_cpus or '?'} CPUs, {gib(host.memory_bytes)}, {host.os or '?'}"


def placement_phrase(document: ResultsDocument) -> str:
    if document.platform != "kubernetes":
        return f"local: {machine(document)}"
    found = nodes(document)
    if not found:
        return "kubernetes: nodes not recorded"
    return "kubernetes: " + "; ".join(f"{', '.join(node.roles)} on {node.name} ({node_type(node)}, kubelet {node.kubelet or '?'})" for node in found)


def caption(document: ResultsDocument) -> str:
    """The conditions in one line under the tables (the files and the HTML report hold them all)."""
    environment = document.environment
    parts = [f"iotdb-bench {environment.tool_version or '?'} {short_commit(environment.commit, environment.modified)}"]
    versions = server_versions(document)
    if versions:
        parts.append("server " + " / ".join(short_server_version(version) for version in versions))
    found = drivers(document)
    if found:
        parts.append(", ".join(f"{name} {version}" for name, version in found.items()))
    parts.append(f"Python {environment.python or '?'}")
    parts.append(placement_phrase(document))
    if environment.config is not None:
        parts.append(environment.config.phrase())
    pregenerated = pregenerated_phrase(document)
    if pregenerated:
        parts.append(pregenerated)
    return "Conditions: " + "; ".join(parts) + "."


def pregenerated_phrase(document: ResultsDocument) -> str:
    """--pregenerate in words ("" without it): the figures then leave out making the events."""
    if not document.spec.pregenerate:
        return ""
    held = [worker.pregenerated_bytes for run in document.runs for worker in run.report.workers if worker.pregenerated_bytes is not None]
    size = f", up to {max(held) / 2**20:,.0f} MiB per worker" if held else ""
    return f"batches pre-generated before the timed phase (--pregenerate{size}): the figures leave out making the events"


def facts(document: ResultsDocument) -> list[tuple[str, str]]:
    """Every condition as (what, value) rows, for the reports."""
    environment = document.environment
    rows = [
        ("Tool", f"iotdb-bench {environment.tool_version or '?'}, {short_commit(environment.commit, environment.modified)}"
                 + (f" (full: {environment.commit})" if len(environment.commit) >= 40 else "")),
        ("Started", environment.created or "?"),
        ("Command", " ".join(environment.command) or "?"),
        ("Target", f"{document.target} (module {document.spec.module})"),
        ("Platform", document.platform),
    ]
    if environment.config is not None:
        rows.append(("Config file", f"{environment.config.path} (chosen by: {environment.config.chosen_by})"))
    for version in server_versions(document) or ["not recorded"]:
        rows.append(("Database server", version))
    software = [conditions.software for conditions in run_conditions(document) if conditions.software]
    if software:
        build = software[0].build
        rows.append(("Collector and workers", f"iotdb-bench {build.version}, {short_commit(build.commit, build.modified)}, Python {software[0].python}"))
    for name, version in drivers(document).items():
        rows.append((f"Driver {name}", version))
    rows.append(("CLI Python", environment.python or "?"))
    host = environment.host
    if host is not None:
        rows += [
            ("CLI machine" if document.platform == "kubernetes" else "Machine", environment.machine or "?"),
            ("CPU", f"{host.cpu_model or '?'} ({host.logical_cpus or '?'} usable CPUs, {host.architecture or '?'})"),
            ("Memory", gib(host.memory_bytes)),
            ("Operating system", f"{host.os or '?'}, kernel {host.kernel or '?'}"),
        ]
    for node in nodes(document):
        rows.append((f"Node {node.name}", f"{', '.join(node.roles)}: {node_type(node)}, zone {node.zone or '-'}, {node.architecture or '?'}, "
                                          f"{node.os_image or '?'}, kernel {node.kernel or '?'}, kubelet {node.kubelet or '?'}, "
                                          f"{node.container_runtime or '?'}"))
    placements = [conditions.placement for conditions in run_conditions(document) if conditions.placement]
    if placements:
        rows.append(("Database nodes", placements[0].database))
        images = list(dict.fromkeys(f"{p.image or '?'} ({p.image_digest or 'digest unknown'})" for p in placements))
        rows += [("Image", image) for image in images]
    return rows


def command_line(document: ResultsDocument) -> str:
    """The command that reproduces the invocation, every option as the CLI spells it ("" when the
    results predate its recording: see the Options the runs recorded)."""
    words = document.environment.command_line
    return shlex.join(["iotdb-bench", *words]) if words else ""


def run_specs(document: ResultsDocument) -> list[tuple[str, str]]:
    """What each run was built from, where runs differ (worker count, rate, step): one line per run."""
    fields = ("workers", "rate", "num_inserts", "duration_s", "batch", "clean", "query_workers")
    specs = [(run.label, run.report.spec.model_dump(mode="json")) for run in document.runs]
    varying = [name for name in fields if len({str(spec.get(name)) for _, spec in specs}) > 1] or ["workers"]
    return [(label, ", ".join(f"{name.replace('_', ' ')} {_value(spec.get(name))}" for name in varying)) for label, spec in specs]


def _value(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "-"
    if isinstance(value, dict):
        return ", ".join(f"{key}={item}" for key, item in value.items()) or "-"
    return "-" if value is None else str(value)


# -- compare ------------------------------------------------------------------------------------

def key_conditions(document: ResultsDocument) -> dict[str, str]:
    """The conditions that change figures, in words that compare across documents. The server
    version is keyed by module: two databases differ in it by nature, two runs of one must not."""
    spec = document.spec
    conditions = {
        f"server version ({spec.module})": " / ".join(short_server_version(v) for v in server_versions(document)) or "not recorded",
        "platform": document.platform if document.platform == "kubernetes" else f"local on {machine(document)}",
    }
    if document.task == "insert":
        conditions["batch"] = str(spec.batch) if spec.batch else "single inserts"
        conditions["events made"] = "before the timed phase (--pregenerate)" if spec.pregenerate else "during the timed phase"
    dumped = spec.model_dump(mode="json")
    for name in SHAPE_FIELDS:
        if name in dumped:
            conditions[name] = str(dumped[name])
    if document.task == "insert":
        conditions["tables"] = str(dumped.get("tables"))
    found = nodes(document)
    if found:
        conditions["node type"] = "; ".join(f"{', '.join(node.roles)}: {node_type(node)}" for node in found)
    return conditions


def differences(rows: list[dict[str, str]]) -> list[list[str]]:
    """For each row's key conditions, what sets it apart from the other rows: per condition, the rows
    whose value is not the most common one (the first row's on a tie) are marked, e.g.
    'batch 100 (others: 1000)'. Conditions a row does not have (batch of a query run) are ignored."""
    marks: list[list[str]] = [[] for _ in rows]
    names = list(dict.fromkeys(name for row in rows for name in row))
    for name in names:
        values = [row.get(name) for row in rows]
        present = [value for value in values if value is not None]
        if len(set(present)) < 2:
            continue
        counts = Counter(present)
        usual = max(counts, key=lambda value: (counts[value], -present.index(value)))
        for index, value in enumerate(values):
            if value is not None and value != usual:
                marks[index].append(f"{name} {value} (others: {usual})")
    return marks
