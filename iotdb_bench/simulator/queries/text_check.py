"""Before the timed phase, the database reads every text of the run's query file it will run: one it
refuses (a syntax error, a table or column it does not have) fails the run in one line naming the
query and the target, before any query is timed. The collector asks (collector/service.py), with
parameters drawn as the first execution of worker 0 would draw them from what the run's spec says.
"""

from __future__ import annotations

from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.queries import binding
from iotdb_bench.simulator.queries import written as data_written
from iotdb_bench.simulator.queries.parameters import ParameterDraws, Parameters
from iotdb_bench.simulator.roles import Reader
from iotdb_bench.simulator.spec import RunSpec

# Database messages can be long (a plan, a stack of causes): the line keeps this much of it.
MESSAGE_LIMIT = 300


def refused_text(spec: RunSpec, reader: Reader, languages: tuple[str, ...]) -> str | None:
    """The first of the run's query-file texts the database refuses, in one line; None when it reads them all."""
    file = spec.query_file
    if file is None:
        return None
    draws = ParameterDraws(spec.seed, 0, data_written.of_spec(spec))
    for name in spec.queries:
        query = file.query(name)
        language = query.language_for(languages) if query is not None else None
        if query is None or language is None:
            continue
        parameters = draws.draw(name, 0, query.kinds()) if query.parameters else Parameters({})
        try:
            reader.check_text(language, binding.bind(query.text[language], parameters))
        except Exception as error:  # the database's own words
            return f"query {name} on target {spec.target}: the database refuses its {language} text: {one_line(error, MESSAGE_LIMIT)}"
    return None
