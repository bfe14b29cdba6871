"""`--query-file F [--queries a,b]` of `query` and of `insert --query-workers`: the file loaded and
validated, and each chosen query checked against the target's module before anything runs: it must
have a text in one of the languages the module reads (its capabilities), or say why it cannot be asked
there (`why_not`: the query is then left out for that target, with a warning). The texts themselves
are read by the database before the timed phase (simulator/queries/text_check.py)."""

from __future__ import annotations

import click

from iotdb_bench.cli.commands.options import parse_queries
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.terminal import warning_line
from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.queries import query_file
from iotdb_bench.simulator.queries.query_file import QueryFile, QueryFileProblem

# The run spec travels in a ConfigMap on Kubernetes (at most 1 MiB with everything else): a query file is a few kB.
MAX_FILE_BYTES = 256 * 1024

query_file_option = click.option("--query-file", "query_file", metavar="FILE", help="Your own queries (a YAML query file, or the name of a "
                                 "shipped one: starter), each with a text per query language: --queries then names some of them (docs/query-files.md).")


def chosen_queries(file_name: str, names: str | None, target: str, module: str) -> tuple[QueryFile, tuple[str, ...]]:
    """The query file (only the chosen queries the target's module can be asked) and their names."""
    try:
        file = query_file.load(file_name)
    except QueryFileProblem as problem:
        raise UsageProblem(str(problem)) from None
    chosen = parse_queries(names, file.names)
    languages = module_class(module).capabilities.query_languages
    if not languages:
        raise UsageProblem(f"target {target}: module '{module}' runs no query file (it reads none of the query languages: {', '.join(query_file.LANGUAGES)})")
    asked = []
    for name in chosen:
        query = file.query(name)
        assert query is not None  # parse_queries knows only the file's names
        if query.language_for(languages) is not None:
            asked.append(name)
            continue
        reason = query.reason_for(languages)
        if reason is None:
            raise UsageProblem(f"query {name} has no text for target {target}: module '{module}' reads {' or '.join(languages)} ({file.source})")
        warning_line(f"query {name} is not asked on target {target}: {reason}")
    if not asked:
        raise UsageProblem(f"none of the queries can be asked on target {target} ({file.source})")
    selected = file.model_copy(update={"queries": [query for query in file.queries if query.name in asked]})
    if len(selected.model_dump_json()) > MAX_FILE_BYTES:
        raise UsageProblem(f"query file {file.source}: the chosen queries take more than {MAX_FILE_BYTES // 1024} kB (they travel in the run's spec)")
    return selected, tuple(asked)
