"""Each panel's numbers are worked out once per change, by workbench, and kept by the document
(design.md: "it computes each analysis once per change and the panels only render what it
hands them")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from storage import Project
from ui import dialogs
from ui.main_window import MainWindow
from ui.panels import PANELS
from workbench import workspace

ANALYSES = Path(__file__).resolve().parents[2] / "workbench" / "analyses"
KINDS = [r.kind for r in PANELS]


@pytest.fixture(autouse=True)
def _no_blocking_dialogs(monkeypatch):
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda parent, name: dialogs.DISCARD)
    monkeypatch.setattr(dialogs, "show_message", lambda *a, **k: None)


@pytest.fixture
def window(qtbot, tmp_path) -> MainWindow:
    path = tmp_path / "analyses.swbproj"
    Project.create(path).close()
    window = MainWindow(Project.open(path))
    qtbot.addWidget(window)
    window.resize(1600, 900)
    window.show()
    qtbot.waitExposed(window)
    return window


def _type_gpus(qtbot, window, text: str) -> None:
    edit = window.context_toolbar.gpu_field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


@pytest.mark.parametrize("kind", KINDS)
def test_every_panel_kind_has_one_analysis_in_workbench_without_qt(kind):
    analyse = workspace.analysis_function(kind)
    assert analyse is not None and analyse.__module__ == f"workbench.analyses.{kind}"
    tree = ast.parse((ANALYSES / f"{kind}.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not [name for name in imported if name.split(".")[0] in ("PySide6", "pyqtgraph", "ui")]


def test_one_plan_edit_computes_the_shown_panel_once_and_each_hidden_one_when_it_is_read(qtbot, window):
    for kind in KINDS:
        window.panel(kind)  # every view built
    window.raise_panel("run_plan")
    for kind in KINDS:
        window.document.analysis(kind)
    computed = window.document.analyses.computed
    before = dict(computed)
    _type_gpus(qtbot, window, "64")
    assert window.document.plan().n_gpus == 64
    assert computed["run_plan"] == before["run_plan"] + 1  # in front: drawn at once
    assert {k: computed[k] - before[k] for k in KINDS if k != "run_plan"} == dict.fromkeys(KINDS[1:], 0)
    results = {kind: window.document.analysis(kind) for kind in KINDS}
    after_reading = dict(computed)
    assert all(after_reading[k] - before[k] <= 1 for k in KINDS)  # each at most once for the edit
    for kind in KINDS:  # read again, and as the panel reads it: the same object, nothing computed
        assert window.document.analysis(kind) is results[kind]
        assert window.panels[kind].analysis() is results[kind]
    assert dict(computed) == after_reading


def test_a_panel_read_before_it_is_built_is_not_worked_out_again_when_it_is(qtbot, window):
    assert not window.panels.is_built("power")
    _type_gpus(qtbot, window, "16")
    before = window.document.analyses.computed["power"]
    result = window.document.analysis("power")  # the document's kept scenario, as it follows the plan
    assert window.document.analyses.computed["power"] == before + 1
    window.raise_panel("power")
    qtbot.waitUntil(lambda: window.panels.is_built("power"))
    assert window.panels["power"].analysis() is result
    assert window.document.analyses.computed["power"] == before + 1
