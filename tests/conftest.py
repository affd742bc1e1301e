"""Test setup shared by every layer: headless Qt, isolated settings and data directories."""

from __future__ import annotations

import os

# Must be set before any Qt import anywhere in the test session.
os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
# shared/ sits beside the checkout (../shared from the project root), in CI as in a session.
SHARED = REPO_ROOT.parent / "shared"
REFERENCES = SHARED / "references"


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Redirect QSettings, the data directory and HOME so no test touches the real user's files."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("SCALING_WORKBENCH_DATA_DIR", str(home / "data" / "scaling-workbench"))
    yield


def references_or_skip(name: str) -> Path:
    """A file or folder of ../shared/references: skipped (with the reason) on a clone without it;
    .ci/run sets SCALING_WORKBENCH_REQUIRE_REFERENCES, so in CI it must be there."""
    path = REFERENCES / name
    if not path.exists():
        if os.environ.get("SCALING_WORKBENCH_REQUIRE_REFERENCES"):
            pytest.fail(f"{path} is required in CI and is missing")
        pytest.skip(f"public reference data not found at {path} (it sits beside the checkout in CI)")
    return path


@pytest.fixture
def published_runs_path() -> Path:
    return references_or_skip("published-runs.json")


@pytest.fixture
def nccl_logs_dir() -> Path:
    return references_or_skip("nccl-logs")
