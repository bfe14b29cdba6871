"""A benchmark script that cannot reach its database says so in one line and exits 1 (no traceback)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.postgres


def test_postgres_overhead_with_a_wrong_password_says_so_in_one_line():
    completed = subprocess.run([sys.executable, "benchmarks/postgres_overhead.py", "--rounds", "1", "--events", "1000"],
                               cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
                               env={**os.environ, "PGPASSWORD": "not-the-password"})
    assert completed.returncode == 1
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cannot log in to PostgreSQL at "), completed.stderr
    assert "password authentication failed" in lines[0] and "Traceback" not in completed.stderr
