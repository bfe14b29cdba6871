"""Every execution of a run's named queries, prepared outside the timed call: the one place where a
parameterised query's parameters are drawn (parameters.py) and bound into the module's text.

The read side (worker/reading.py) and a mixed run's query clients (worker/query_client.py) ask for
the next execution of a query, time its `run` alone, and hand its `parameters` to the answer check.
A module offers the tool's queries ready to run (`Reader.queries`) and the parameterised ones as
functions that render their text for given parameters (`Reader.parameterised_queries`). A query
file's queries (simulator/queries/query_file.py) are bound here, in the language the module reads
(`Capabilities.query_languages`), and run by `Reader.text_query`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotdb_bench.simulator.checks.answers import Query
from iotdb_bench.simulator.queries import binding
from iotdb_bench.simulator.queries.parameters import ParameterDraws, ParameterProblem, Parameters
from iotdb_bench.simulator.queries.query_file import FileQuery, QueryFile
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS
from iotdb_bench.simulator.roles import Reader

# Every parameterised query type the tool knows, by name: what its parameters are.
PARAMETERISED = DEVOPS


@dataclass(frozen=True)
class Execution:
    name: str
    run: Query  # what the timer times: the module's call, its text already rendered
    parameters: Parameters | None = None
    file_query: FileQuery | None = None  # a query file's query: its answer is kept (simulator/checks/answer_digest.py)


class Executions:
    def __init__(self, reader: Reader, draws: ParameterDraws | None = None, file: QueryFile | None = None, languages: tuple[str, ...] = ()):
        """`draws`: the parameters' source (what the tool wrote); None where nothing is known. With a
        query `file`, its queries alone, each in the first of the module's `languages` it has a text for."""
        self._reader, self._draws = reader, draws
        self._plain, self._bound = ({}, {}) if file is not None else (reader.queries(), reader.parameterised_queries())
        self._file = {query.name: (query, language) for query in (file.queries if file else ()) if (language := query.language_for(languages))}
        self._numbers: dict[str, int] = {}

    def offers(self, name: str) -> bool:
        return name in self._plain or name in self._bound or name in self._file

    def next(self, name: str) -> Execution:
        """The query's next execution; raises ParameterProblem when its parameters cannot be drawn."""
        number = self._numbers[name] = self._numbers.get(name, -1) + 1
        if name in self._file:
            query, language = self._file[name]
            parameters = self._draw(name, number, query)
            return Execution(name, self._reader.text_query(language, binding.bind(query.text[language], parameters)), parameters, query)
        if name in self._plain:
            return Execution(name, self._plain[name])
        if self._draws is None:
            raise ParameterProblem("its parameters are drawn from the record of what the tool wrote, and there is none")
        parameters = self._draws.draw(name, number, PARAMETERISED[name].parameters)
        return Execution(name, self._bound[name](parameters), parameters)

    def _draw(self, name: str, number: int, query: FileQuery) -> Parameters:
        if not query.parameters:
            return Parameters({})
        if self._draws is None:
            raise ParameterProblem("its parameters are drawn from the record of what the tool wrote, and there is none")
        return self._draws.draw(name, number, query.kinds())
