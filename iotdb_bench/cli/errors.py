"""The errors the CLI turns into one-line messages and exit codes (2: usage, 1: run failure)."""


class UsageProblem(Exception):
    """Bad options, config or environment: the user can fix it. Exit code 2."""

    exit_code = 2


class InputRefused(UsageProblem):
    """The database refused what the user gave the run (a query file's text) before its timed phase:
    a usage problem like a bad option, so no results folder is kept. Exit code 2."""


class RunFailed(Exception):
    """The run did not produce trustworthy figures (worker failed, timeout, count mismatch). Exit code 1."""

    exit_code = 1


class RunTimedOut(RunFailed):
    pass


class ReleaseLeft(RunFailed):
    """The run's release could not be removed. The run's report, if it finished, goes with it: its
    figures are sound and are kept, but the command must not end as a success."""

    def __init__(self, message: str, report: object | None = None):
        super().__init__(message)
        self.report = report
