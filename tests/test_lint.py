"""The code stays clean: ruff's checks (pyproject's [tool.ruff]) pass on the whole tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).parent / "ruff"
    assert ruff.exists(), "ruff is a test dependency; install with .[test]"
    result = subprocess.run([str(ruff), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
