"""The TSBS query types a SQL module offers on the data of a run: those of the data's use case
(DevOps on tsbs-cpu and tsbs-devops, IoT on tsbs-iot), each rendering its text for one execution in the
module's dialect (tsbs_sql.py, tsbs_iot_sql.py) and fetching its rows with the module's `fetch`."""

from __future__ import annotations

import functools
from collections.abc import Callable

from iotdb_bench.simulator.checks.answers import Query, Rows
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS
from iotdb_bench.simulator.queries.tsbs_iot import IOT
from iotdb_bench.simulator.spec import TSBS_IOT_QUERIES, RunSpec, default_queries
from iotdb_bench.simulator.wire.tsbs_iot_sql import iot
from iotdb_bench.simulator.wire.tsbs_sql import Dialect, answer, devops


def tsbs_queries(spec: RunSpec, dialect: Dialect, fetch: Callable[[str], Rows]) -> dict[str, Callable[[Parameters], Query]]:
    if not spec.tsbs:
        return {}
    if default_queries(spec.shape) == TSBS_IOT_QUERIES:
        return {name: functools.partial(answer, iot, query, dialect=dialect, fetch=fetch) for name, query in IOT.items()}
    return {name: functools.partial(answer, devops, query, dialect=dialect, fetch=fetch) for name, query in DEVOPS.items()}
