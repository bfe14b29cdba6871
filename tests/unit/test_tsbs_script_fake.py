"""scripts/tsbs.sh's install path with TSBS absent, as on a fresh machine: a shared folder of the test's
own whose vendor/tsbs/build.sh is a fake (it records its calls and makes the two binaries the script
looks for), a cache folder of its own. The first call builds and prints the bin folder; the second finds
it built and does not build again; two at once build once; without go, or without the vendored source,
one line says what is missing and nothing is left in the cache. The real build (go build of TSBS) is
what scripts/test.sh runs for CI and the comparisons with TSBS's generator then use."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "tsbs.sh"
FAKE_BUILD = """#!/usr/bin/env bash
# fake build.sh OUT: records the call, makes the binaries (slowly: a second caller must wait), prints the bin folder
echo "$1" >> "$(dirname "$0")/calls"
sleep 1
mkdir -p "$1/bin"
for name in tsbs_generate_data tsbs_run_queries_clickhouse; do printf '#!/bin/sh\\n' > "$1/bin/$name"; chmod +x "$1/bin/$name"; done
echo "$1/bin"
"""


@pytest.fixture
def fake(tmp_path: Path):
    shared = tmp_path / "shared"
    build = shared / "vendor" / "tsbs" / "build.sh"
    build.parent.mkdir(parents=True)
    build.write_text(FAKE_BUILD)
    build.chmod(0o755)
    cache = tmp_path / "cache" / "tsbs-fake"
    # The tools the script uses, and a `go` that only says its version: a PATH of links to them alone.
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("bash", "mkdir", "flock", "dirname", "cut", "sleep", "chmod", "printf"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    go = tools / "go"
    go.write_text("#!/bin/sh\necho 'go version go1.99 linux/amd64'\n")
    go.chmod(0o755)
    env = {**os.environ, "IOTBENCH_SHARED": str(shared), "TSBS_CACHE": str(cache), "PATH": str(tools)}

    def run(**changes: str) -> subprocess.Popen:
        return subprocess.Popen(["bash", str(SCRIPT)], env={**env, **changes}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    return run, build.parent / "calls", cache, tools


def finished(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def test_absent_it_is_built_once_and_then_found(fake):
    run, calls, cache, _ = fake
    code, out, err = finished(run())
    assert code == 0, err
    assert out.splitlines()[-1] == f"{cache}/bin" and "building TSBS into" in err and "go1.99" in err
    assert calls.read_text().splitlines() == [str(cache)]
    code, out, err = finished(run())
    assert (code, out.splitlines()[-1], err) == (0, f"{cache}/bin", "")
    assert calls.read_text().splitlines() == [str(cache)]  # warm: not built again


def test_two_at_once_build_it_once(fake):
    run, calls, cache, _ = fake
    first, second = run(), run()
    assert [finished(first)[:2], finished(second)[:2]] == [(0, f"{cache}/bin\n")] * 2
    assert calls.read_text().splitlines() == [str(cache)]


def test_without_go_or_without_the_source_one_line_says_what_is_missing(fake, tmp_path):
    run, calls, cache, tools = fake
    (tools / "go").unlink()
    code, out, err = finished(run())
    assert (code, out) == (1, "")
    assert err == "scripts/tsbs.sh: go not found on PATH (TSBS is built with go build, its modules from the Go module proxy)\n"
    code, _, err = finished(run(IOTBENCH_SHARED=str(tmp_path / "nowhere")))
    assert code == 1 and err == f"scripts/tsbs.sh: no TSBS source at {tmp_path / 'nowhere'}/vendor/tsbs (build.sh missing); set IOTBENCH_SHARED\n"
    assert not calls.exists() and not cache.exists()
