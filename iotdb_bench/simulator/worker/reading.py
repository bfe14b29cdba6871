"""The read side of a worker: the named queries (`query`; parameterised ones, TSBS's, drawn per
execution by simulator/queries/executions.py) and the scan (`scan`), and the record of
expected answers they check against. A query or scan reads the tables the record's insert wrote
(it has no --tables option) and refuses data of a workload it cannot read. Every query and every
scan page is timed by the one timer (timing.py); the query clients of a mixed run are beside this
file (query_client.py)."""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from collections.abc import Callable, Iterator

from iotdb_bench.simulator.checks import answer_digest
from iotdb_bench.simulator.checks.answers import AnswerChecker, Check, difference
from iotdb_bench.simulator.checks.computed import ComputedAnswers
from iotdb_bench.simulator.checks.expected import ExpectedRecord
from iotdb_bench.simulator.checks.scan import ScanCheck
from iotdb_bench.simulator.errors import described, one_line
from iotdb_bench.simulator.measurement import live_figures
from iotdb_bench.simulator.measurement.stats import CallRecorder
from iotdb_bench.simulator.measurement.timing import CallTimer, clock
from iotdb_bench.simulator.modules import DatabaseModule, ModuleError, module_class
from iotdb_bench.simulator.protocol import QueryProgress, QueryRuns, ScanOutcome
from iotdb_bench.simulator.queries import written as data_written
from iotdb_bench.simulator.queries.executions import Execution, Executions, tsbs_checks
from iotdb_bench.simulator.queries.parameters import ParameterDraws, ParameterProblem, Written
from iotdb_bench.simulator.spec import TSBS_QUERIES, RunSpec, default_queries

log = logging.getLogger("worker")

SETTLE_ROWS = 100_000  # the most rows of answers held for checking after the timed calls (memory stays bounded)
NOT_COMPUTED = ("the query file declares no answer the tool computes (answer:): a study (or compare) compares its answers across the "
                "targets")


class ReadSide:
    """`module` may be replaced (`follow_record`): read it from here after that."""

    def __init__(self, spec: RunSpec, index: int, module: DatabaseModule, check_stop: Callable[[], None]):
        self.spec, self.index, self.module, self.check_stop = spec, index, module, check_stop
        self.timer = CallTimer()
        self.runs: dict[str, QueryRuns] = {}  # the queries' executions, filled while they run
        # The progress line's: query executions done (or given up) and devices scanned, of all this worker has to do.
        self.work_done = self.work_total = 0
        # --time-limit: no execution or device starts after this moment (on `clock`)
        self.deadline = math.inf
        self.time_limit_reached = False

    # -- the record of expected answers ---------------------------------------------------
    def follow_record(self) -> None:
        """Read the record's tables, refusing data of a workload this module cannot read. Without a
        record, the run's own tables are read."""
        record, missing = self.expected_record()
        if self.spec.task == "query" and not self.spec.queries:  # no --queries: the data's own (a TSBS use case's types, or the tool's)
            # ... those the module answers: a type it refuses is left out, not an error
            own = self.module.capabilities.answered(default_queries(record.shape if record is not None else "events"))
            self.spec = self.spec.model_copy(update={"queries": own})
        if record is not None:
            self._read_recorded_tables(record)
        elif self.spec.task == "query" and (tsbs := [name for name in self.spec.queries if name in TSBS_QUERIES]):
            raise ModuleError(f"query refused: TSBS's query types ({tsbs[0]}, ...) draw their hosts and time windows from the record "
                              f"of what the tool wrote, and there is none: {missing or 'the data was not written by the tool'}")
        if self.index == 0:
            # A count before any query is timed: a missing table or index fails the run here, in the
            # database's own words (e.g. "no such table: events"), instead of failing every query.
            with self._bookkeeping_session() as reader:
                self._count_something(reader, record)

    def _count_something(self, reader: DatabaseModule, record: ExpectedRecord | None) -> None:
        """Every module's way to say the database holds nothing of this tool: its count fails (no such
        table) or, with no record either, finds no event. Either way the user is told to insert first."""
        first = f"run insert first (python run.py insert --target {self.spec.target})"
        try:
            count = reader.schema.count()
        except ModuleError as error:
            raise ModuleError(f"{error}: if nothing was inserted there yet, {first}") from None
        except Exception as error:  # the database's own words: a missing table, index or series
            raise ModuleError(f"counting the events failed ({described(error)}): if nothing was inserted there yet, {first}") from None
        if count == 0 and record is None:
            raise ModuleError(f"target '{self.spec.target}' holds no events of this tool: {first}")

    def _read_recorded_tables(self, record: ExpectedRecord) -> None:
        # A query file's texts say themselves what they read: no shape is refused for them.
        refusal = None if self.spec.query_file is not None and self.spec.task == "query" else record.unreadable(self.spec.task, self.spec.queries)
        if refusal:
            raise ModuleError(f"{self.spec.task} refused: {refusal}")
        if record.tables and record.tables != self.spec.table_names:
            spec = self.spec.model_copy(update={"tables": len(record.tables), "shape": record.shape})
            if spec.table_names != record.tables:
                raise ModuleError(f"the record names tables {','.join(record.tables)}, which this version does not write")
            self._reopen(spec)

    def _reopen(self, spec: RunSpec) -> None:
        """The module again for another spec (the record's tables, the data's own queries): it checks
        what it is asked before it connects."""
        self.module.close()
        self.spec = spec
        self.module = module_class(spec.module)(spec)
        self.module.connect()

    @contextlib.contextmanager
    def _bookkeeping_session(self) -> Iterator[DatabaseModule]:
        """The module, or with --query-timeout a session without it: the limit is the queries', not the
        bookkeeping's (counts, the record)."""
        if not self.spec.query_timeout:
            yield self.module
            return
        reader = module_class(self.spec.module)(self.spec.model_copy(update={"query_timeout": 0}))
        reader.connect()
        try:
            yield reader
        finally:
            reader.close()

    def expected_record(self) -> tuple[ExpectedRecord | None, str | None]:
        """The record of expected answers saved with the data, or why there is none to check against."""
        keeps = self.module.capabilities.record
        if keeps is not True:
            return None, f"module '{self.spec.module}' keeps no record of expected answers: {keeps.because}"
        with self._bookkeeping_session() as reader:
            return ExpectedRecord.load(reader.records.stored_record()), None

    # -- queries ----------------------------------------------------------------------------
    def query(self) -> dict[str, QueryRuns]:
        record, missing = self.expected_record()
        # Parameters come from what the record says was written even when it no longer describes the
        # data exactly (the answers are then "not checked", with the record's reason).
        tsbs = tsbs_checks(record.tsbs) if record is not None and record.tsbs is not None else None
        checker = AnswerChecker(record, missing, tsbs[1] if tsbs else None)
        computed = ComputedAnswers(record) if record is not None else None
        executions = self._executions(record, tsbs[0] if tsbs else None)
        data = data_written.fingerprint(record)
        runs = self.runs
        self.work_total = len(self.spec.queries) * self.spec.query_runs
        for name in self.spec.queries:
            runs[name] = outcome = QueryRuns()
            before = self.work_done
            if executions.offers(name):
                self._run_query(name, executions, checker, computed, outcome, data)
            else:
                outcome.error = f"module '{self.spec.module}' does not offer the query '{name}'"
            self.work_done = before + self.spec.query_runs  # those given up after an error count as done
        return runs

    def _run_query(self, name: str, executions: Executions, checker: AnswerChecker, computed: ComputedAnswers | None,
                   outcome: QueryRuns, data: str | None) -> None:
        """The query's executions, timed, their answers checked after them (see _settle); the first error
        ends them (recorded in `outcome`)."""
        answered: list[tuple[Execution, list[tuple]]] = []
        for _ in range(self.spec.query_runs):
            self.check_stop()
            if self._out_of_time():
                break
            try:
                execution = executions.next(name)  # untimed: parameters drawn, text rendered
            except ParameterProblem as problem:
                outcome.error = f"{name}: {problem}"
                break
            try:
                answer, timed = self.timer.call(execution.run)
                rows = answer.normalised()  # untimed: the common form the check reads
            except Exception as error:  # recorded, and the other queries still run
                outcome.error = one_line(error)
                log.warning("query %s failed: %s", name, outcome.error)
                self.recover()
                break
            outcome.seconds.append(timed.service_s)
            outcome.rows = len(rows)
            outcome.empty += not rows
            self.work_done += 1
            answered.append((execution, rows))
            if len(answered) * max(len(rows), 1) >= SETTLE_ROWS:  # about the rows held: answers of one query are alike in size
                self._settle(answered, checker, computed, outcome, data)
        self._settle(answered, checker, computed, outcome, data)

    def _settle(self, answered: list[tuple[Execution, list[tuple]]], checker: AnswerChecker, computed: ComputedAnswers | None,
                outcome: QueryRuns, data: str | None) -> None:
        """Check (or keep) the answers of the executions so far, in their order, and forget them. Done
        between the timed calls, a check's milliseconds of CPU (the expected rows recomputed) made the
        next call measurably slower on a busy machine (the scheduler, the caches): a 0.6 ms query took
        1.5-4 ms (docs/performance.md, "Side by side with TSBS"). So answers wait, up to SETTLE_ROWS rows."""
        began = clock()
        for execution, rows in answered:
            if execution.file_query is not None:
                self._keep_answer(self._computed_check(checker, computed, execution, rows), execution, rows, outcome, data)
            else:
                self._check_answer(checker, execution, rows, outcome)
        answered.clear()
        outcome.check_s += clock() - began

    def _out_of_time(self) -> bool:
        if clock() < self.deadline:
            return False
        self.time_limit_reached = True
        return True

    def _executions(self, record: ExpectedRecord | None, tsbs: Written | None) -> Executions:
        """The run's queries: a query file's, drawing their parameters from what the record says was
        written; else the tool's, TSBS's drawing from the TSBS data written."""
        reader, file = self.module.reader, self.spec.query_file
        if file is not None:
            draws = ParameterDraws(self.spec.seed, self.index, data_written.of_record(record)) if record is not None else None
            return Executions(reader, draws, file, self.module.capabilities.query_languages)
        return Executions(reader, ParameterDraws(self.spec.seed, self.index, tsbs) if tsbs else None)

    @staticmethod
    def _computed_check(checker: AnswerChecker, computed: ComputedAnswers | None, execution: Execution, rows: list[tuple]) -> Check:
        """A query file's answer checked against the one the tool computes, where the query declares it
        (`answer:`) and the record says exactly what was stored; else not checked, saying why."""
        query = execution.file_query
        assert query is not None
        if query.answer is None:
            return Check("not checked", checker.reason or NOT_COMPUTED)
        reason = checker.reason or (computed.problem() if computed is not None else None)
        if reason or computed is None or execution.parameters is None:
            return Check("not checked", reason)
        columns, expected = computed.expected(execution.name, query.answer, execution.parameters, query.column_names())
        problem = difference(columns, rows, expected)
        if problem is None:
            return Check("ok")
        return Check("wrong", f"with {execution.parameters}: {problem}" if execution.parameters.values else problem)

    @staticmethod
    def _keep_answer(check: Check, execution: Execution, rows: list[tuple], outcome: QueryRuns, data: str | None) -> None:
        """A query file's answer, normalised and kept with its digest for the comparison across targets,
        and its check (the first wrong one is kept; docs/query-files.md)."""
        query = execution.file_query
        assert query is not None
        normal = answer_digest.normalised(rows, query.column_kinds(), query.ordered, query.digits)
        answer_digest.add(outcome.answers, answer_digest.kept(normal, str(execution.parameters or "")))
        outcome.data = data
        ReadSide._note(check, execution.name, outcome)

    def live_queries(self) -> dict[str, QueryProgress]:
        """Each query's executions so far (read by the progress reporter while they run); a query that
        failed or could not run counts one error."""
        return {name: QueryProgress(latency=live_figures.of_seconds(list(outcome.seconds)), errors=1 if outcome.error else 0)
                for name, outcome in list(self.runs.items())}

    @staticmethod
    def _check_answer(checker: AnswerChecker, execution: Execution, rows: list[tuple], outcome: QueryRuns) -> None:
        ReadSide._note(checker.check(execution.name, rows, execution.parameters), execution.name, outcome)

    @staticmethod
    def _note(check: Check, name: str, outcome: QueryRuns) -> None:
        """One execution's check; the first wrong one is kept (the others still run)."""
        if outcome.answer != "wrong":
            outcome.answer, outcome.answer_detail = check.answer, check.detail
        if check.answer == "wrong":
            log.warning("query %s answered wrong: %s", name, check.detail)

    def recover(self) -> None:
        """A failed statement can leave the session unusable; start a fresh one."""
        self.module.close()
        self.module.connect()

    # -- the scan ---------------------------------------------------------------------------
    def scan(self, devices: list[str], record: ExpectedRecord | None, missing: str | None, recorder: CallRecorder) -> ScanOutcome:
        """Read every reading of each of these devices in timestamp order, a page at a time (each
        page a timed call)."""
        reader, timer = self.module.reader, CallTimer(recorder=recorder)
        check = ScanCheck(record, clock(), missing)
        self.work_total = check.outcome.devices_planned = len(devices)
        for device in devices:
            if self._out_of_time():
                break
            check.start_device(device)
            next_page = functools.partial(next, reader.scan(device, self.spec.scan_page_size), None)
            while True:
                done = timer.begin(0)
                page = next_page()
                if page is None:  # the end of the device's readings: no page, not a call
                    break
                ended = done(len(page)).ended
                check.page(page, ended)
                check.outcome.check_s += clock() - ended
            began = clock()
            check.end_device()
            check.outcome.check_s += clock() - began
            self.work_done += 1
        return check.finish()
