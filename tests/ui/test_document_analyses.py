"""Each panel's numbers are worked out once per change, by workbench, and kept by the document
(design.md: "it computes each analysis once per change and the panels only render what it
hands them")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from window_helpers import in_front, type_in

from ui import dialogs
from ui.panels import PANELS
from workbench import workspace

ANALYSES = Path(__file__).resolve().parents[2] / "workbench" / "analyses"
KINDS = [r.kind for r in PANELS]


@pytest.fixture(autouse=True)
def _no_blocking_messages(monkeypatch):
    """No message box waits on a click (the save question is the conftest's)."""
    monkeypatch.setattr(dialogs, "show_message", lambda *a, **k: None)


@pytest.fixture
def window(new_window):
    return new_window(name="analyses")


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
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
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
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "16")
    before = window.document.analyses.computed["power"]
    result = window.document.analysis("power")  # the document's kept scenario, as it follows the plan
    assert window.document.analyses.computed["power"] == before + 1
    in_front(qtbot, window, "power")
    assert window.panels["power"].analysis() is result
    assert window.document.analyses.computed["power"] == before + 1


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "run_plan"])  # the Run plan panel shows the plan itself
def test_a_panel_on_local_override_shows_the_new_plans_numbers_it_lists(qtbot, new_window, kind):
    window = new_window()
    panel = in_front(qtbot, window, kind)
    panel.action_override.trigger()  # its own inputs from now on
    assert panel.override_context()
    plan = window.document.plan()
    window.document.edit_plan(train_tokens=plan.train_tokens * 3, n_gpus=plan.n_gpus * 2, gpus_per_node=4)
    shown = panel.results.rows()
    panel.refresh()  # drawn afresh from the same scenario and the same plan
    assert panel.results.rows() == shown  # nothing on screen was the last plan's


def test_a_floating_panel_redraws_on_a_plan_edit_as_one_in_front_does(qtbot, new_window):
    window = new_window()
    panel = in_front(qtbot, window, "power")
    window.docks["power"].setFloating(True)  # torn off onto a second screen
    qtbot.waitUntil(lambda: panel.window() is window.docks["power"] and panel.isVisible())
    assert panel.on_screen()
    before = window.document.analyses.computed["power"]
    window.document.edit_plan(n_gpus=window.document.plan().n_gpus * 2)
    assert not panel.is_stale()  # drawn at once, not put off as for a tab behind another
    assert window.document.analyses.computed["power"] == before + 1
