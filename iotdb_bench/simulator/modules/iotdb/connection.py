"""The iotdb module's connection: one Session for both data models (the table model's as
TableSession sets it up), and its statements and queries as the roles use them."""

from __future__ import annotations

import logging
from typing import Any

from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.modules.base import ModuleError
from iotdb_bench.simulator.modules.iotdb.options import IotdbOptions

log = logging.getLogger("iotdb")


class IotdbConnection:
    def __init__(self, options: IotdbOptions):
        self.options = options
        self.session: Any = None  # the driver's Session (apache-iotdb, untyped), once connected

    def connect(self) -> None:
        from iotdb.Session import Session
        from iotdb.utils.exception import IoTDBConnectionException, StatementExecutionException

        options = self.options
        session = Session.init_from_node_urls(
            [f"{options.host}:{options.port}"], user=options.user, password=options.password, fetch_size=options.fetch_size,
            zone_id="UTC", connection_timeout_in_ms=round(options.connect_timeout * 1000),
        )
        if options.model != "tree":
            # What TableSession does; one Session type for both models. The database need not exist yet.
            session.sql_dialect, session.database = "table", options.database
        try:
            session.open(options.rpc_compression)
        except (IoTDBConnectionException, StatementExecutionException, OSError) as error:
            raise ModuleError(f"cannot connect to IoTDB at {options.host}:{options.port}: {one_line(error)}") from None
        self.session = session

    def close(self) -> None:
        if self.session is not None:
            try:
                self.session.close()
            except Exception as error:  # a dead connection cannot be closed politely
                log.debug("closing the session: %s", one_line(error))
            self.session = None

    def statement(self, statement: str) -> None:
        from iotdb.utils.exception import StatementExecutionException

        try:
            self.session.execute_non_query_statement(statement)
        except StatementExecutionException as error:
            raise ModuleError(f"IoTDB refused '{statement}': {one_line(error)}") from None

    def fetch(self, statement: str, timeout_s: float = 0) -> list[list[Any]]:
        """Every row of a query, as lists of Python values (all rows are fetched)."""
        return self.fetch_named(statement, timeout_s)[1]

    def fetch_named(self, statement: str, timeout_s: float = 0) -> tuple[list[str], list[list[Any]]]:
        """Every row of a query, and its column names (as `fetch`)."""
        with self.session.execute_query_statement(statement, timeout=round(timeout_s * 1000)) as data:
            frame = data.todf()
        rows: list[list[Any]] = frame.to_numpy().tolist()
        return [str(name) for name in frame.columns], rows

    def first_row(self, statement: str) -> list[Any]:
        rows = self.fetch(statement)
        return rows[0] if rows else []

    def column(self, statement: str, name: str) -> list[Any]:
        with self.session.execute_query_statement(statement) as data:
            frame = data.todf()
        return frame[name].tolist() if name in frame else []


def literal(text: str) -> str:
    """A string literal of IoTDB's SQL."""
    return "'" + text.replace("'", "''") + "'"

