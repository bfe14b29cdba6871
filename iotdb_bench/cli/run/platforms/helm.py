"""The helm command line, for installing and uninstalling one run's release.

Credentials never appear in helm's arguments (the process list is public): they go in a values file.
Helm runs in its own session and is always allowed to finish: a Ctrl-C (or SIGTERM) reaches only the
CLI, which waits for helm and re-raises the interrupt afterwards, so a release is never left half
installed or half removed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from iotdb_bench.cli.errors import RunFailed, UsageProblem

INSTALL_LIMIT_S = 300.0
UNINSTALL_TIMEOUT_S = 180
KILLED = -9


class Helm:
    def __init__(self, namespace: str, context: str | None):
        binary = shutil.which("helm")
        if binary is None:
            raise UsageProblem("helm not found on PATH; the kubernetes platform needs helm 3")
        self.binary = binary
        self.scope = ["--namespace", namespace] + (["--kube-context", context] if context else [])

    def install(self, release: str, chart: Path, values_files: list[Path], spec_file: Path) -> None:
        """Install without --wait: the platform watches the pods itself, to report failures early.
        Later values files win over earlier ones."""
        values = [argument for path in values_files for argument in ("--values", str(path))]
        code, output = self._run(
            ["install", release, str(chart), *self.scope, *values, "--set-file", f"spec={spec_file}"], INSTALL_LIMIT_S,
        )
        if code != 0:
            raise RunFailed(f"helm install {release} failed: {_last_line(output)}")

    def uninstall(self, release: str) -> str | None:
        """Remove the release and wait until its objects (pods included) are gone; return a problem or None."""
        code, output = self._run(
            ["uninstall", release, *self.scope, "--wait", "--cascade", "foreground", "--ignore-not-found",
             "--timeout", f"{UNINSTALL_TIMEOUT_S}s"],
            UNINSTALL_TIMEOUT_S + 30,
        )
        return None if code == 0 else f"helm uninstall {release} failed: {_last_line(output)}"

    def releases(self) -> list[str]:
        code, output = self._run(["list", *self.scope, "--all", "--short"], 60)
        return output.split() if code == 0 else []

    def _run(self, args: list[str], limit_s: float) -> tuple[int, str]:
        with tempfile.TemporaryFile("w+") as output:
            process = subprocess.Popen(
                [self.binary, *args], stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, text=True,
                start_new_session=True,
            )
            code = _wait_to_end(process, limit_s)
            output.seek(0)
            text = output.read()
        if code == KILLED:
            text += f"\nhelm did not finish within {limit_s:g} s"
        return code, text


def _wait_to_end(process: subprocess.Popen, limit_s: float) -> int:
    """Wait for the process even through interrupts (re-raised afterwards); kill it only past the limit."""
    deadline = time.monotonic() + limit_s
    interrupt: BaseException | None = None
    while True:
        try:
            code = process.wait(max(0.0, deadline - time.monotonic()))
            break
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            code = KILLED
            break
        except KeyboardInterrupt as caught:
            interrupt = caught
    if interrupt is not None:
        raise interrupt
    return code


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    if not lines:
        return "no output"
    return lines[-1].removeprefix("Error: ")
