"""The layer rule of the design, checked two ways that cannot both be fooled.

1. import-linter's static contracts in pyproject.toml (layers and forbidden imports).
2. A fresh interpreter imports each lower layer and every one of its modules, then looks at
   sys.modules: a dynamic import of Qt or SQLAlchemy hidden from the static check shows up there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_import_linter_contracts_hold():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    assert lint_imports.exists(), "import-linter is a test dependency; install with .[test]"
    result = subprocess.run(
        [str(lint_imports), "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # Guard against a run that checked nothing.
    assert "0 broken" in result.stdout and " kept" in result.stdout, result.stdout


PROBE = r"""
import importlib, pkgutil, sys
package = importlib.import_module({package!r})
for info in pkgutil.walk_packages(package.__path__, {package!r} + "."):
    importlib.import_module(info.name)
bad = sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r})
print(",".join(bad))
"""


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("workbench", {"PySide6", "pyqtgraph", "shiboken6", "sqlalchemy", "ui", "storage", "presets"}),
        ("presets", {"PySide6", "pyqtgraph", "shiboken6", "sqlalchemy", "ui", "storage"}),
        ("storage", {"PySide6", "pyqtgraph", "shiboken6", "ui"}),
    ],
)
def test_lower_layers_load_nothing_from_above(package, forbidden):
    code = PROBE.format(package=package, forbidden=forbidden)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"{package} pulled in: {result.stdout.strip()}"


def test_cli_new_and_list_do_not_import_qt():
    code = "import sys, ui.cli; print(','.join(m for m in sys.modules if m.startswith(('PySide6','pyqtgraph'))))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
