"""Static checks of iotdb_bench/simulator/Dockerfile against the pod contract the chart relies on."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "iotdb_bench" / "simulator" / "Dockerfile").read_text()


def instructions(name: str) -> list[str]:
    """Arguments of every instruction `name` (continuation lines joined)."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    return [m.group(1).strip() for m in re.finditer(rf"^{name}\s+(.*)$", text, re.MULTILINE)]


def test_base_image_is_a_pinned_python_3_11_slim():
    (default,) = [a for a in instructions("ARG") if a.startswith("PYTHON_IMAGE=")]
    image = default.split("=", 1)[1]
    assert re.fullmatch(r"python:3\.11\.\d+-slim(-\w+)?", image), image
    assert all(f == "${PYTHON_IMAGE}" or f.startswith("${PYTHON_IMAGE} ") for f in instructions("FROM"))


def test_runs_as_user_10001_with_the_simulator_entrypoint():
    assert instructions("USER")[-1] == "10001:10001"
    assert json.loads(instructions("ENTRYPOINT")[-1]) == ["python", "-m", "iotdb_bench.simulator"]
    assert not instructions("CMD"), "the chart passes the role as args; a CMD would only be replaced"


def test_installs_only_the_simulator_requirements():
    copies = instructions("COPY")
    assert "iotdb_bench/simulator/requirements.txt /tmp/requirements.txt" in copies
    assert any(c.startswith("iotdb_bench/simulator/ ") for c in copies)
    assert not any(re.search(r"(^|\s)(requirements(-dev)?\.txt|cli/|\.)(\s|$)", c) for c in copies), copies
    pip_runs = [r for r in instructions("RUN") if "pip install" in r]
    assert pip_runs and all("-r /tmp/requirements.txt" in r for r in pip_runs)
