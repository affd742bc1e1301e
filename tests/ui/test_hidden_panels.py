"""A panel hidden behind another tab draws when it is shown, not on every edit (issue 15):
an edit in the toolbar redraws the panel on show only, and once shown it has the new numbers."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt


@pytest.fixture
def window(new_window):
    return new_window()


def _count_draws(panel, monkeypatch) -> list[int]:
    drawn = [0]
    real = panel.results.set_rows

    def set_rows(rows):
        drawn[0] += 1
        return real(rows)

    monkeypatch.setattr(panel.results, "set_rows", set_rows)
    return drawn


def test_an_edit_redraws_only_the_visible_panel_and_a_hidden_one_on_show(qtbot, window, monkeypatch):
    window.raise_panel("run_plan")
    qtbot.waitUntil(lambda: window.panel("run_plan").on_screen())
    hidden = [k for k in ("power", "scaling", "allreduce", "roofline") if not window.panel(k).on_screen()]
    assert hidden == ["power", "scaling", "allreduce", "roofline"]
    draws = {k: _count_draws(window.panel(k), monkeypatch) for k in [*hidden, "run_plan"]}

    edit = window.context_toolbar.gpu_field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "64")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert window.document.plan().n_gpus == 64
    assert draws["run_plan"][0] == 1
    assert {k: draws[k][0] for k in hidden} == dict.fromkeys(hidden, 0)
    # the panels whose numbers depend on the GPU count owe a redraw (the roofline does not)
    assert window.panel("power").is_stale() and window.panel("scaling").is_stale()

    window.raise_panel("power")
    qtbot.waitUntil(lambda: window.panel("power").on_screen())
    assert draws["power"][0] == 1
    assert not window.panel("power").is_stale()
    assert window.panel("power").scenario().n_gpus == 64
    gpus = dict((q, v) for q, v, _u in window.panel("power").results.rows())
    assert "Throughput, all GPUs" in gpus


def test_opening_a_project_draws_the_run_plan_once(qtbot, window, tmp_path, monkeypatch):
    from storage import Project

    other = tmp_path / "other.swbproj"
    Project.create(other).close()
    window.raise_panel("run_plan")
    qtbot.waitUntil(lambda: window.panel("run_plan").on_screen())
    draws = _count_draws(window.panel("run_plan"), monkeypatch)
    assert window.open_path(other, confirm=False)
    assert draws[0] == 1  # not once for the new presets and again for the workspace
    # a preset changed in the window: the document predicts again, the panel draws once
    window.catalog.reload()
    assert draws[0] == 2


# -- panels nobody opened are not built -----------------------------------------------------------
def _painted(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window._painted and window.panels.is_built(window.active_kind()), timeout=10000)


def test_only_the_panel_in_front_is_built_and_a_tab_builds_its_panel_when_shown(qtbot, window):
    _painted(qtbot, window)
    built = [k for k in window.panels if window.panels.is_built(k)]
    assert built == [window.active_kind()] == ["run_plan"]
    assert window.docks["power"].widget().objectName() == "panelPlaceholder"
    window.docks["power"].raise_()  # what clicking its tab does
    qtbot.waitUntil(lambda: window.panels.is_built("power"))
    power = window.panels["power"]
    assert window.docks["power"].widget() is power
    qtbot.waitUntil(power.on_screen)
    assert not power.is_stale() and power.results.rows()  # drawn once shown


def test_a_panel_built_late_shows_the_plan_as_edited_before(qtbot, window):
    _painted(qtbot, window)
    assert window.document.edit_plan(n_gpus=96)
    assert not window.panels.is_built("scaling")
    assert window.document.scenario("scaling").n_gpus == 96  # the document follows for it
    window.raise_panel("scaling")
    assert window.panel("scaling").scenario().n_gpus == 96
    window.action_undo.trigger()
    assert window.panel("scaling").scenario().n_gpus == 8


def test_the_saved_workspace_is_the_same_whether_panels_were_built_or_not(qtbot, window):
    _painted(qtbot, window)
    window.document.edit_plan(n_gpus=64)
    unbuilt = window.workspace_json()
    for kind in window.panels:
        window.panels[kind]
    assert [k for k in window.panels if not window.panels.is_built(k)] == []
    assert window.workspace_json() == unbuilt


def test_a_local_override_of_a_panel_never_opened_survives_save_and_reopen(qtbot, window):
    _painted(qtbot, window)
    power = window.panel("power")
    power.set_override_context(True)
    power.edit(n_gpus=24)
    assert window.save()
    path = window.project.path
    window.close()

    from storage import Project
    from ui.main_window import MainWindow

    again = MainWindow(Project.open(path))
    qtbot.addWidget(again)
    assert not again.panels.is_built("power")
    again.document.edit_plan(n_gpus=128)  # the plan moves on; the local panel keeps its own
    assert again.document.override("power") and again.document.scenario("power").n_gpus == 24
    assert again.panel("power").override_context() and again.panel("power").scenario().n_gpus == 24


def test_a_built_panel_behind_a_tab_follows_the_plan_when_shown_or_read(qtbot, window, monkeypatch):
    _painted(qtbot, window)
    power = window.panel("power")  # built, behind the Run plan's tab
    assert not power.on_screen()
    followed = []
    real = type(power)._follow_now
    monkeypatch.setattr(type(power), "_follow_now", lambda self, view: followed.append(self.kind) or real(self, view))
    for n in (16, 32, 64):
        window.document.edit_plan(n_gpus=n)
    assert "power" not in followed  # three edits, not one followed while hidden
    assert power.context().n_gpus == 64  # what it will follow is noted
    window.raise_panel("power")
    qtbot.waitUntil(power.on_screen)
    assert followed.count("power") == 1 and power.field("n_gpus").value() == 64
    window.raise_panel("run_plan")
    qtbot.waitUntil(lambda: not power.on_screen())
    window.document.edit_plan(n_gpus=128)
    assert window.document.scenario("power").n_gpus == 128  # asked for: it follows first
    assert followed.count("power") == 2


def test_an_edit_that_leaves_the_banner_as_it_was_does_not_restyle_it(qtbot, window, monkeypatch):
    _painted(qtbot, window)
    window.raise_panel("power")
    panel = window.panel("power")
    qtbot.waitUntil(panel.on_screen)
    panel.set_override_context(True)  # the banner says so, and stays through the edits
    assert panel.plan_banner.isVisibleTo(panel)
    sheets, texts = [], []
    monkeypatch.setattr(panel.plan_banner, "setStyleSheet", lambda sheet: sheets.append(sheet))
    monkeypatch.setattr(panel.plan_banner_label, "setText", lambda text: texts.append(text))
    for share in (0.35, 0.4, 0.45):
        assert panel.edit(static_fraction=share)
    assert sheets == [] and texts == [] and panel.plan_banner.isVisibleTo(panel)


def test_a_plan_that_cannot_be_predicted_leaves_unopened_and_hidden_panels_as_the_last_plan_left_them(qtbot, window):
    _painted(qtbot, window)
    power = window.panel("power")  # built, behind the Run plan's tab; scaling and the rest not built
    assert not power.on_screen() and not window.panels.is_built("scaling")
    window.document.edit_plan(n_gpus=64)  # predicted: the panels owe this plan's numbers
    planned = window.document.prediction().tokens_per_s
    # a device whose preset has no GPU link: the plan cannot be predicted
    window.document.edit_plan(hardware="a100-pcie-80gb")
    assert window.document.prediction() is None
    scaling = window.document.scenario("scaling")
    assert scaling.throughput_source == "planned" and scaling.tokens_per_s == pytest.approx(planned)
    assert power.scenario().tokens_per_s_per_gpu == pytest.approx(planned / 64)
    unbuilt = window.workspace_json()
    for kind in window.panels:
        window.panels[kind]
    assert window.workspace_json() == unbuilt
