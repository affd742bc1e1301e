"""The main window driven as a person would: type into the toolbar, use the menus, save,
reopen, undo, answer the unsaved-changes prompt, export and drop files back in."""

from __future__ import annotations

import csv
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QMimeData, QObject, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage
from PySide6.QtWidgets import QApplication

from storage import Project
from ui import dialogs
from ui import theme as th
from ui.export import read_png_scenario
from ui.main_window import KEY_RECENT, KEY_STATE, KEY_THEME, WORKSPACE_KEY, MainWindow
from ui.panels import PANELS


# -- fixtures ----------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _no_blocking_dialogs(monkeypatch):
    """Nothing in these tests may block on exec(): every asking function is replaced; a test
    that expects a question installs its own answer."""
    asked: dict[str, list] = {"save": [], "messages": []}

    def ask_save_changes(parent, name):
        asked["save"].append(name)
        return dialogs.DISCARD

    def show_message(parent, title, text, *, error=True):
        asked["messages"].append((title, text))

    monkeypatch.setattr(dialogs, "ask_save_changes", ask_save_changes)
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, path, rec: False)
    monkeypatch.setattr(dialogs, "ask_overwrite_external",
                        lambda *a, **k: pytest.fail("unexpected changed-on-disk question"))
    monkeypatch.setattr(dialogs, "show_message", show_message)
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a, **k: pytest.fail("unexpected file dialog"))
    monkeypatch.setattr(dialogs, "ask_open_path", lambda *a, **k: pytest.fail("unexpected file dialog"))
    return asked


@pytest.fixture
def asked(_no_blocking_dialogs):
    return _no_blocking_dialogs


@pytest.fixture
def project_path(tmp_path) -> Path:
    path = tmp_path / "plan.swbproj"
    Project.create(path).close()
    return path


def _open_window(qtbot, path: Path) -> MainWindow:
    window = MainWindow(Project.open(path))
    qtbot.addWidget(window)
    window.resize(1600, 900)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture
def window(qtbot, project_path) -> MainWindow:
    return _open_window(qtbot, project_path)


def _type_gpus(qtbot, window: MainWindow, text: str) -> None:
    edit = window.context_toolbar.gpu_field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def _shown_gpus(panel) -> int | None:
    field = panel.field("n_gpus")
    return field.value() if field is not None else None


# -- window, title, docks ----------------------------------------------------------------------
def test_title_docks_and_view_menu(window, project_path):
    assert window.windowTitle() == "plan[*] - Scaling Workbench"
    assert not window.isWindowModified()
    names = {dock.objectName() for dock in window.docks.values()} | {window.browser_dock.objectName()}
    assert names == {"dock.run_plan", "dock.roofline", "dock.collective", "dock.allreduce", "dock.scaling",
                     "dock.power", "dock.measured", "dock.browser"}
    assert window.history_dock.objectName() == "dock.history" and window.history_dock.isHidden()
    view_actions = {a.text() for a in window.view_menu.actions()}
    for dock in window.docks.values():
        assert dock.toggleViewAction().text() in view_actions
        assert dock.features() & dock.DockWidgetFeature.DockWidgetClosable
        assert dock.features() & dock.DockWidgetFeature.DockWidgetFloatable
    assert len(window.tabifiedDockWidgets(window.docks["run_plan"])) == len(PANELS) - 1
    assert window.active_kind() == "run_plan"  # the Run plan panel is in front
    assert window.recent_files()[0] == str(project_path.resolve())


def test_closed_dock_reopens_from_view_menu(qtbot, window):
    dock = window.docks["power"]
    dock.close()
    assert dock.isHidden()
    dock.toggleViewAction().trigger()
    assert not dock.isHidden()


def test_ctrl_number_raises_a_panel(qtbot, window):
    window.raise_actions[4].trigger()
    assert window.active_kind() == "scaling"
    qtbot.waitUntil(lambda: window.docks["scaling"].widget().isVisible())


# -- the shared context ------------------------------------------------------------------------
def test_changing_gpus_in_toolbar_updates_panels(qtbot, window):
    scaling, power = window.panel("scaling"), window.panel("power")
    assert scaling.scenario().n_gpus == 8 and power.scenario().n_gpus == 8
    with qtbot.waitSignal(window.context_model.changed, timeout=2000):
        _type_gpus(qtbot, window, "512")
    assert window.context_model.context().n_gpus == 512
    for panel in (scaling, power):
        assert panel.context().n_gpus == 512
        assert panel.scenario().n_gpus == 512
        assert _shown_gpus(panel) == 512  # the panel's own form shows it
    assert "512 ×" in window.summary_label.text()
    assert window.isWindowModified()


def test_the_run_summary_follows_the_model_size_typed_in_the_toolbar(qtbot, window):
    days_8b = window.run_summary().train_time_s
    assert "The run plan" in window.summary_label.toolTip()
    edit = window.context_toolbar.model_field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "70B")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    plan = window.document.plan()
    assert window.context_model.context().model_params == 70e9 and plan.n_params == 70e9
    assert plan.n_layers > 32 and plan.d_model > 4096  # reshaped in the 8B model's proportions
    assert window.panel("power").scenario().n_params == 70e9
    assert window.run_summary().train_time_s > 5 * days_8b  # ~9x the FLOPs per token, at a higher MFU
    shown_days = float(window.summary_label.text().split(" days")[0].split("│")[-1].replace("&nbsp;", "")
                       .replace(",", "").strip())
    assert shown_days == pytest.approx(window.run_summary().train_days, abs=0.05)
    # the power panel's own accounting agrees with the status bar
    assert window.panel("power").plan().summary.duration_s == pytest.approx(window.run_summary().train_time_s)


def _type_in_panel(qtbot, panel, name: str, text: str) -> None:
    edit = panel.field(name).edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_a_context_field_typed_in_a_panel_changes_it_for_every_panel(qtbot, window):
    power, scaling = window.panel("power"), window.panel("scaling")
    days_8b = window.run_summary().train_time_s
    n_8b = window.document.plan().n_params
    _type_in_panel(qtbot, scaling, "n_params", "70B")
    assert window.context_model.context().model_params == 70e9
    assert window.context_toolbar.model_field.value() == 70e9  # the toolbar shows it
    assert power.scenario().n_params == 70e9  # and the other panels follow
    assert power.plan().summary.duration_s == pytest.approx(window.run_summary().train_time_s)
    assert window.run_summary().train_time_s > 5 * days_8b
    assert window.undo_stack.count() == 1  # one step: the plan's
    window.undo_stack.undo()
    assert window.context_model.context().model_params == n_8b
    assert power.scenario().n_params == n_8b and scaling.scenario().n_params == n_8b
    # a bad value is refused next to the field, nothing changes
    _type_in_panel(qtbot, scaling, "n_gpus", "0")
    assert window.context_model.context().n_gpus == 8
    assert scaling.field("n_gpus").edit.error()
    # with Local override on, the panel keeps its own value
    power.set_override_context(True)
    _type_in_panel(qtbot, power, "n_gpus", "64")
    assert power.scenario().n_gpus == 64
    assert window.context_model.context().n_gpus == 8 and scaling.scenario().n_gpus == 8


def test_the_roofline_device_and_sparsity_are_the_shared_contexts(qtbot, window):
    roofline, power, scaling = window.panel("roofline"), window.panel("power"), window.panel("scaling")
    window.raise_panel("roofline")
    roofline.sparse_check.click()
    assert window.context_model.context().sparse is True
    assert window.context_toolbar.sparse_check.isChecked()
    assert roofline.scenario().sparse is True and scaling.scenario().sparse is True
    combo = roofline.hardware_combo
    _pick_in(combo, "b200")
    assert window.context_model.context().hardware == "b200"
    assert roofline.scenario().primary == "b200" and power.scenario().hardware == "b200"
    assert window.undo_stack.count() == 2
    window.undo_stack.undo()
    assert window.context_model.context().hardware == "h100-sxm"
    assert roofline.scenario().primary == "h100-sxm" and combo.currentData() == "h100-sxm"


def test_a_new_projects_panels_start_from_the_shared_context(qtbot, window):
    ctx = window.context_model.context()
    assert ctx.interconnect == "nvlink-4"
    allreduce = window.panel("allreduce")
    assert allreduce.scenario().interconnect == "nvlink-4"  # not "Custom" beside the toolbar's NVLink 4
    assert allreduce.field("interconnect").currentData() == "nvlink-4"
    assert window.panel("power").scenario().n_params == ctx.model_params


def _pick_in(combo, data) -> None:
    combo.setCurrentIndex(combo.findData(data))
    combo.activated.emit(combo.currentIndex())  # as a pick in the list does


def test_a_device_picked_in_a_panel_keeps_the_context_one_the_presets_can_show(qtbot, window, project_path):
    window.context_toolbar.apply(precision="fp8")
    power, scaling = window.panel("power"), window.panel("scaling")
    _pick_in(power.hardware_combo, "a100-sxm-80gb")  # the A100 has no FP8 rate
    ctx = window.context_model.context()
    assert (ctx.hardware, ctx.precision) == ("a100-sxm-80gb", "bf16")  # its best default instead
    assert window.context_toolbar.precision_combo.currentData() == "bf16"
    _type_in_panel(qtbot, power, "n_gpus", "64")
    assert window.context_toolbar.gpu_field.value() == 64  # the toolbar still follows
    # a precision the device lacks is refused where it was picked
    _pick_in(scaling.field("precision"), "fp8")
    assert window.context_model.context().precision == "bf16"
    assert "no FP8 rate" in scaling.status_text()
    assert window.save()
    window.close()
    again = _open_window(qtbot, project_path)  # and the project opens again
    assert again.context_model.context().hardware == "a100-sxm-80gb"


def test_a_panel_showing_its_own_scenario_takes_an_edit_the_context_already_has(qtbot, window):
    from workbench.scenarios import PowerScenario

    power = window.panel("power")
    window.open_scenario(PowerScenario(hardware="a100-sxm-80gb", n_gpus=64), "Open scenario 'A100 run'")
    assert window.context_model.context().hardware == "h100-sxm"
    _pick_in(power.hardware_combo, "h100-sxm")  # the context's own device
    assert power.scenario().hardware == "h100-sxm" and power.hardware_combo.currentData() == "h100-sxm"
    _type_in_panel(qtbot, power, "n_gpus", "8")  # the context's own count
    assert power.scenario().n_gpus == 8


def test_undoing_a_roofline_primary_pick_keeps_the_comparison(qtbot, window):
    roofline = window.panel("roofline")
    window.raise_panel("roofline")
    pick_compare = roofline.compare_combos
    _pick_in(pick_compare[0], "a100-sxm-80gb")
    _pick_in(pick_compare[1], "b200")
    assert roofline.scenario().hardware == ("h100-sxm", "a100-sxm-80gb", "b200")
    _pick_in(roofline.hardware_combo, "a100-sxm-80gb")
    assert roofline.scenario().hardware == ("a100-sxm-80gb", "h100-sxm", "b200")  # swapped places
    window.undo_stack.undo()
    assert roofline.scenario().hardware == ("h100-sxm", "a100-sxm-80gb", "b200")


def test_gpu_edits_are_one_undo_step_with_a_readable_name(qtbot, window):
    _type_gpus(qtbot, window, "512")
    assert window.undo_stack.undoText() == "Change GPU count to 512"
    assert "Change GPU count to 512" in window.action_undo.text()
    _type_gpus(qtbot, window, "1k")  # a second GPU edit merges into the same step
    assert window.undo_stack.count() == 1
    assert window.undo_stack.undoText() == "Change GPU count to 1,000"

    window.history_dock.toggleViewAction().trigger()  # View > Undo history lists the step
    assert window.history.model().rowCount() == 2  # "Opened project" + the edit
    window.action_undo.trigger()
    assert window.context_model.context().n_gpus == 8
    assert window.panel("scaling").scenario().n_gpus == 8
    assert window.context_toolbar.gpu_field.value() == 8
    assert not window.isWindowModified()
    assert window.undo_stack.redoText() == "Change GPU count to 1,000"

    window.action_redo.trigger()
    assert window.panel("power").scenario().n_gpus == 1000
    assert window.context_toolbar.gpu_field.edit.text() == "1,000"
    assert window.isWindowModified()


def test_bad_gpu_count_is_refused_with_a_message(qtbot, window):
    _type_gpus(qtbot, window, "many")
    assert window.context_model.context().n_gpus == 8
    assert window.undo_stack.count() == 0
    assert window.statusBar().currentMessage()  # says what to type instead


def test_precision_lists_only_the_presets_precisions(qtbot, window):
    toolbar = window.context_toolbar
    index = toolbar.hardware_combo.findData("v100-sxm2")
    toolbar.hardware_combo.setCurrentIndex(index)
    toolbar.hardware_combo.activated.emit(index)
    ctx = window.context_model.context()
    assert ctx.hardware == "v100-sxm2" and ctx.precision in ("fp16", "fp32")
    shown = [toolbar.precision_combo.itemData(i) for i in range(toolbar.precision_combo.count())]
    assert shown == ["fp32", "fp16"]
    assert not toolbar.sparse_check.isEnabled()  # V100 has no sparse rate
    assert window.undo_stack.undoText().startswith("Change hardware")


def test_hardware_and_interconnect_undo_labels_use_preset_names(qtbot, window):
    toolbar = window.context_toolbar
    index = toolbar.hardware_combo.findData("h200-sxm")
    toolbar.hardware_combo.activated.emit(index)
    assert window.undo_stack.undoText() == "Change hardware to NVIDIA H200 SXM"
    index = toolbar.network_combo.findData("nic-200g")
    toolbar.network_combo.activated.emit(index)
    assert window.undo_stack.undoText() == "Change network to InfiniBand / Ethernet NIC, 200 Gb/s"
    assert window.document.plan().inter_node == "nic-200g"
    index = toolbar.interconnect_combo.findData("nvlink-3")
    toolbar.interconnect_combo.activated.emit(index)
    assert window.undo_stack.undoText() == "Change node link to NVLink 3 (A100)"
    window.action_undo.trigger()
    window.action_undo.trigger()
    assert toolbar.network_combo.currentData() == "nic-400g"
    # a new device takes its own link (H200's NVLink), shown as such
    assert toolbar.interconnect_combo.currentData() is None
    window.action_undo.trigger()
    assert toolbar.interconnect_combo.currentData() == "nvlink-4" and window.document.plan().hardware == "h100-sxm"


def test_local_override_keeps_a_panel_out_of_the_context(qtbot, window):
    power = window.panel("power")
    power.set_override_context(True)
    _type_gpus(qtbot, window, "64")
    assert power.scenario().n_gpus == 8
    assert window.panel("scaling").scenario().n_gpus == 64


# -- save, reopen, unsaved changes -------------------------------------------------------------
def test_save_reopen_and_find_the_change(qtbot, window, project_path):
    _type_gpus(qtbot, window, "512")
    assert window.isWindowModified()
    window.action_save.trigger()
    assert not window.isWindowModified()
    assert json.loads(window.project.get_meta(WORKSPACE_KEY))["plan"]["n_gpus"] == 512
    window.close()

    again = _open_window(qtbot, project_path)
    assert again.context_model.context().n_gpus == 512
    assert again.context_toolbar.gpu_field.value() == 512
    assert again.panel("scaling").scenario().n_gpus == 512
    assert again.panel("power").scenario().n_gpus == 512
    assert not again.isWindowModified()
    assert again.undo_stack.count() == 0


@pytest.mark.parametrize(("answer", "closes", "saved"), [
    (dialogs.CANCEL, False, False),
    (dialogs.DISCARD, True, False),
    (dialogs.SAVE, True, True),
])
def test_unsaved_changes_prompt(qtbot, window, project_path, monkeypatch, answer, closes, saved):
    calls = []

    def ask(parent, name):
        calls.append(name)
        return answer

    monkeypatch.setattr(dialogs, "ask_save_changes", ask)
    _type_gpus(qtbot, window, "512")
    assert window.close() is closes
    assert calls == ["plan"]
    assert window.isVisible() is (not closes)
    if not closes:
        assert window.context_model.context().n_gpus == 512  # nothing lost
        assert window.isWindowModified()
        return
    with Project.open(project_path) as project:
        workspace = project.get_meta(WORKSPACE_KEY)
    n_gpus = json.loads(workspace)["plan"]["n_gpus"] if workspace else 8
    assert n_gpus == (512 if saved else 8)


def test_no_prompt_without_changes(qtbot, window, asked):
    assert window.close()
    assert asked["save"] == []


def test_opening_another_project_asks_first(qtbot, window, tmp_path, monkeypatch):
    other = tmp_path / "other.swbproj"
    Project.create(other).close()
    _type_gpus(qtbot, window, "512")
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda parent, name: dialogs.CANCEL)
    monkeypatch.setattr(dialogs, "ask_open_path", lambda *a, **k: str(other))
    window.action_open.trigger()
    assert window.project.name == "plan"
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda parent, name: dialogs.DISCARD)
    window.action_open.trigger()
    assert window.project.name == "other"
    assert window.windowTitle() == "other[*] - Scaling Workbench"
    assert window.context_model.context().n_gpus == 8
    assert not window.isWindowModified()


def test_save_as_and_new(qtbot, window, tmp_path, monkeypatch):
    target = tmp_path / "copy"
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a, **k: str(target))
    _type_gpus(qtbot, window, "256")
    window.action_save_as.trigger()
    assert window.project.path == target.with_suffix(".swbproj")
    assert target.with_suffix(".swbproj").exists()
    assert not window.isWindowModified()
    assert window.windowTitle() == "copy[*] - Scaling Workbench"

    fresh = tmp_path / "fresh.swbproj"
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a, **k: str(fresh))
    window.action_new.trigger()
    assert window.project.path == fresh and fresh.exists()
    assert window.context_model.context().n_gpus == 8
    assert window.recent_files()[:2] == [str(fresh.resolve()), str(target.with_suffix(".swbproj").resolve())]


def test_bad_or_newer_workspace_falls_back_to_defaults(qtbot, project_path):
    for text, expected in (("{not json", "not restored"), (json.dumps({"version": 99}), "newer version")):
        with Project.open(project_path) as project:
            project.set_meta(WORKSPACE_KEY, text)
            project.save()
        window = _open_window(qtbot, project_path)
        assert window.context_model.context().n_gpus == 8
        assert expected in window.statusBar().currentMessage()
        window.close()


def test_recovery_file_is_offered_on_open(qtbot, window, project_path, monkeypatch):
    _type_gpus(qtbot, window, "384")
    recovery = window.write_recovery()
    assert recovery is not None and recovery.exists()
    # a crash: the window goes away without saving and without deleting the recovery file
    window.project._recovery_files.clear()
    window.project.close()
    window.project = None
    window.undo_stack.clear()
    window.close()

    offered = []
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, path, rec: offered.append(rec) or True)
    again = MainWindow()
    qtbot.addWidget(again)
    assert again.open_path(project_path, confirm=False)
    assert offered == [recovery]
    assert again.project.recovered
    assert again.context_model.context().n_gpus == 384
    assert again.isWindowModified()


def test_undoing_back_after_a_recovery_write_leaves_nothing_unsaved(qtbot, window):
    assert not window.isWindowModified()
    _type_gpus(qtbot, window, "384")
    assert window.isWindowModified()
    recovery = window.write_recovery()
    assert recovery is not None and recovery.exists()
    window.undo_stack.undo()
    assert window.context_model.context().n_gpus == 8
    assert not window.isWindowModified()  # no '*' left behind by the recovery write
    assert not window.project.dirty
    # and a crash now would not offer to restore the change the user took back
    assert not recovery.exists()
    assert Project.recovery_for(window.project.path) is None


def test_recent_files_menu_lists_projects(qtbot, window, project_path):
    window._fill_recent_menu()
    texts = [a.text() for a in window.recent_menu.actions()]
    assert texts[0].endswith("plan.swbproj")
    settings = QSettings()
    assert settings.value(KEY_RECENT, [], type=list)[0] == str(project_path.resolve())


# -- scenarios: browser, save as scenario, compare ------------------------------------------------
def test_browser_opens_a_saved_scenario_as_an_undoable_edit(qtbot, window):
    record = next(r for r in window.project.list_scenarios("scaling") if r.name.startswith("70B"))
    window.browser.openRequested.emit(record.id)
    scaling = window.panel("scaling")
    assert scaling.scenario() == window.project.load_scenario(record.id)
    assert window.active_kind() == "scaling"
    assert window.undo_stack.undoText() == f"Open scenario '{record.name}'"
    window.action_undo.trigger()
    assert scaling.scenario() != window.project.load_scenario(record.id)


def test_save_panel_state_as_scenario(qtbot, window, monkeypatch):
    monkeypatch.setattr(dialogs, "ask_text", lambda *a, **k: "My 512-GPU plan")
    _type_gpus(qtbot, window, "512")
    window.panel("scaling").saveRequested.emit()
    names = [r.name for r in window.project.list_scenarios("scaling")]
    assert "My 512-GPU plan" in names
    saved = window.project.load_scenario(("scaling", "My 512-GPU plan"))
    assert saved.n_gpus == 512
    assert window.isWindowModified()


def test_compare_two_scenarios_overlays_them(qtbot, window):
    records = window.project.list_scenarios("scaling")
    assert len(records) >= 2
    window.browser.compareRequested.emit([r.id for r in records[:2]])
    panel = window.panel("scaling")
    if hasattr(panel, "comparison"):
        assert [name for name, _ in panel.comparison()] == [r.name for r in records[:2]]
    assert window.active_kind() == "scaling"


# -- export ------------------------------------------------------------------------------------
def test_export_png_svg_csv_and_read_them_back(qtbot, window, tmp_path):
    window.raise_panel("scaling")
    png = window.export_active("png", tmp_path / "scaling.png", width_px=1280)
    image = QImage(str(png))
    assert not image.isNull() and image.width() == 1280
    scenario = json.loads(read_png_scenario(png))
    assert scenario["kind"] == "scaling"
    assert scenario["n_gpus"] == window.panel("scaling").scenario().n_gpus

    svg = window.export_active("svg", tmp_path / "scaling.svg")
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")

    csv_path = window.export_active("csv", tmp_path / "scaling.csv")
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    # the panel's results table first (as shown), then an empty line, then the chart's series
    assert rows[0] == ["quantity", "value", "unit"]
    shown = [tuple(r) for r in window.panel("scaling").results.rows()]
    gap = rows.index([])
    assert [(r[0], r[2]) for r in rows[1:gap]] == [(q, u) for q, _v, u in shown]
    numeric_headers = [h for h in rows[gap + 1] if h != "series"]
    assert numeric_headers and all("(" in h and h.endswith(")") for h in numeric_headers)
    assert len(rows) > gap + 2


def test_transparent_png_export(qtbot, window, tmp_path):
    png = window.export_active("png", tmp_path / "roof.png", width_px=800, background="transparent")
    image = QImage(str(png))
    assert image.width() == 800 and image.hasAlphaChannel()
    assert image.pixelColor(1, 1).alpha() == 0


def test_export_menu_asks_options_and_path(qtbot, window, tmp_path, monkeypatch):
    target = tmp_path / "slide.png"
    monkeypatch.setattr(dialogs, "get_export_options",
                        lambda parent, fmt, **k: dialogs.ExportOptions("png", 2400, "white"))
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a, **k: str(target))
    window.raise_panel("roofline")
    window.action_export_png.trigger()
    assert QImage(str(target)).width() == 2400
    assert json.loads(read_png_scenario(target))["kind"] == "roofline"


def _drop(window: MainWindow, path: Path) -> bool:
    """What Qt does when a file is dropped: drag enter, then drop (QApplication only delivers
    these during a real drag, so the handlers are called as Qt calls them)."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(QPoint(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    if not enter.isAccepted():
        return False
    drop = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    return drop.isAccepted()


def test_dropping_an_exported_png_reopens_its_scenario(qtbot, window, tmp_path):
    window.raise_panel("power")
    _type_gpus(qtbot, window, "512")
    exported = window.panel("power").scenario()
    png = window.export_active("png", tmp_path / "power.png", width_px=640)
    window.action_undo.trigger()
    assert window.panel("power").scenario() != exported
    window.raise_panel("roofline")

    assert _drop(window, png)
    qtbot.waitUntil(lambda: window.panel("power").scenario() == exported, timeout=3000)
    assert window.active_kind() == "power"
    assert window.undo_stack.undoText() == "Open scenario from power.png"


def test_png_without_scenario_says_so(qtbot, window, tmp_path, asked):
    plain = tmp_path / "plain.png"
    image = QImage(40, 30, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.white)
    image.save(str(plain))
    assert not window.open_path(plain)
    assert not _drop(window, tmp_path / "notes.txt")  # not a file the window takes
    assert asked["messages"] and "carries no Scaling Workbench scenario" in asked["messages"][-1][1]


def test_file_open_accepts_a_png(qtbot, window, tmp_path, monkeypatch):
    window.raise_panel("scaling")
    png = window.export_active("png", tmp_path / "s.png", width_px=400)
    monkeypatch.setattr(dialogs, "ask_open_path", lambda *a, **k: str(png))
    window.raise_panel("roofline")
    window.action_open.trigger()
    assert window.active_kind() == "scaling"
    assert window.project.name == "plan"  # the project stays open


# -- presentation, layout, theme ---------------------------------------------------------------
def _layout(window):
    """What a person sees of the layout: the window's size, each dock's area, floating and
    shown state, the tab groups, and the size of every dock in front. (saveState's bytes also
    hold the last sizes of docks behind a tab, which a presentation lays out anew.)"""
    front = {k: (d.width(), d.height()) for k, d in window.docks.items() if not d.visibleRegion().isEmpty()}
    return (window.size().toTuple(), front,
            {k: (window.dockWidgetArea(d), d.isFloating(), d.isHidden(),
                 sorted(o.objectName() for o in window.tabifiedDockWidgets(d))) for k, d in window.docks.items()})


def test_presentation_mode_toggles_and_restores(qtbot, window):
    window.raise_panel("scaling")
    panel, dock = window.panel("scaling"), window.docks["scaling"]
    before = _layout(window)
    window.action_presentation.trigger()
    presenting = window._presentation
    assert presenting is not None and panel.window() is presenting
    qtbot.waitUntil(presenting.isVisible)
    assert presenting.isFullScreen()
    assert th.presentation_enabled()

    window.action_presentation.trigger()  # F11 again (Esc does the same)
    assert window._presentation is None
    assert dock.widget() is panel
    assert not th.presentation_enabled()
    assert _layout(window) == before
    assert window.active_kind() == "scaling"


def test_layout_persists_and_resets(qtbot, window, project_path):
    window.docks["power"].close()
    window.close()
    assert not QSettings().value(KEY_STATE, b"", type=bytes) == b""
    again = _open_window(qtbot, project_path)
    assert again.docks["power"].isHidden()
    again.action_reset_layout.trigger()
    assert not again.docks["power"].isHidden()
    assert len(again.tabifiedDockWidgets(again.docks["run_plan"])) == len(PANELS) - 1


def test_theme_choice_is_stored(qtbot, window):
    window.theme_actions["dark"].trigger()
    assert th.current_theme().dark
    assert QSettings().value(KEY_THEME, "", type=str) == "dark"
    window.theme_actions["system"].trigger()
    assert QSettings().value(KEY_THEME, "", type=str) == "system"


def test_explain_opens_a_non_modal_dialog(qtbot, window):
    dialog = window.explain_panel("power")
    qtbot.addWidget(dialog)
    assert dialog.isVisible() and not dialog.isModal()
    assert dialog.browser.toPlainText().strip()


# -- preset manager and browser edits ----------------------------------------------------------
def test_preset_manager_duplicate_is_undoable_and_reaches_the_toolbar(qtbot, window):
    window.action_presets.trigger()
    manager = window._preset_manager
    qtbot.waitUntil(manager.isVisible)
    assert not manager.isModal()
    manager.select("h100-sxm")
    key = manager.duplicate_current()
    assert key is not None
    combo = window.context_toolbar.hardware_combo
    assert combo.findData(key) >= 0  # the new user preset is offered in the toolbar
    assert window.isWindowModified()
    assert window.undo_stack.undoText()
    window.action_undo.trigger()
    assert combo.findData(key) < 0


def test_browser_edits_mark_the_project_modified(qtbot, window):
    record = window.project.list_scenarios("power")[0]
    window.project.rename_scenario(record.id, "Renamed")
    window.browser.projectChanged.emit()
    assert window.isWindowModified()
    window.action_save.trigger()
    assert not window.isWindowModified()


def test_export_then_import_a_scenario_file(qtbot, window, tmp_path, monkeypatch):
    window.raise_panel("scaling")
    _type_gpus(qtbot, window, "96")
    target = tmp_path / "plan.swbscenario"
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a, **k: str(target))
    window.action_export_scenario.trigger()
    assert json.loads(target.read_text())["scenario"]["n_gpus"] == 96

    window.action_undo.trigger()
    monkeypatch.setattr(dialogs, "ask_open_path", lambda *a, **k: str(target))
    window.action_import.trigger()
    imported = [r for r in window.project.list_scenarios("scaling") if "exported" in r.name]
    assert len(imported) == 1
    assert window.panel("scaling").scenario().n_gpus == 96
    assert window.isWindowModified()


def test_close_project_returns_to_the_default_project(qtbot, window, asked):
    _type_gpus(qtbot, window, "96")
    window.action_close.trigger()
    assert asked["save"] == ["plan"]
    assert window.project.name == "default"
    assert window.context_model.context().n_gpus == 8
    assert not window.isWindowModified()


# -- start-up ----------------------------------------------------------------------------------
def _run_gui_without_event_loop(qtbot, qapp, monkeypatch, path):
    """run_gui with the event loop the test's: the window shows, then opens its project."""
    from ui.app import run_gui

    monkeypatch.setattr(qapp, "exec", lambda: 0)
    assert run_gui(path) == 0
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    assert len(windows) == 1
    window = windows[0]
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.project is not None, timeout=10000)
    return window


def test_run_gui_opens_the_given_project(qtbot, qapp, monkeypatch, project_path):
    window = _run_gui_without_event_loop(qtbot, qapp, monkeypatch, str(project_path))
    assert window.project.path == project_path


def test_run_gui_given_a_training_log_opens_the_default_project_and_reads_the_log(qtbot, qapp, monkeypatch):
    # a data file on the command line goes to its panel, in a project: it had opened none
    from storage import default_project_path

    log = Path(__file__).resolve().parent.parent / "fixtures" / "trainlogs" / "plan_vs_actual_a.log"
    window = _run_gui_without_event_loop(qtbot, qapp, monkeypatch, str(log))
    assert window.project.path == default_project_path()
    qtbot.waitUntil(lambda: window.active_kind() == "measured")
    assert [r.name for r in window.panel("measured").scenario().runs] == [log.name]


def test_run_gui_paints_the_window_before_it_opens_the_project(qtbot, qapp, monkeypatch, project_path):
    from ui.app import run_gui

    monkeypatch.setattr(qapp, "exec", lambda: 0)
    painted_with: list = []

    class Watch(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
            if event.type() == QEvent.Type.Paint and obj.isWidgetType() and isinstance(obj.window(), MainWindow):
                window = obj.window()
                painted_with.append((window.project, window.summary_label.text(),
                                     window.statusBar().currentMessage()))
            return False

    watch = Watch()
    qapp.installEventFilter(watch)
    try:
        run_gui(str(project_path))
        window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow))
        qtbot.addWidget(window)
        assert window.project is None  # nothing opened before the window is on screen
        qtbot.waitUntil(lambda: window.project is not None, timeout=10000)
    finally:
        qapp.removeEventFilter(watch)
    # the first paint came first, without the default plan's numbers, saying what comes next
    assert painted_with and painted_with[0] == (None, "", "Opening the project…")
    assert "days" in window.summary_label.text()
    # the panel in front is built once the project is in, and shows its plan
    qtbot.waitUntil(lambda: window.panels.is_built("run_plan"), timeout=10000)
    assert window.panels["run_plan"].scenario() == window.document.plan()
    assert not [k for k in window.panels if k != "run_plan" and window.panels.is_built(k)]


def test_run_gui_lets_go_of_the_sources_read_by_the_imports(qtbot, qapp, monkeypatch, project_path):
    import linecache

    import ui.main_window as main_window_module

    linecache.getlines(main_window_module.__file__)  # as PySide6's import hook reads each module
    assert main_window_module.__file__ in linecache.cache
    built_with: list[int] = []
    real_init = MainWindow.__init__

    def init(self, *args, **kwargs):
        built_with.append(len(linecache.cache))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(MainWindow, "__init__", init)
    window = _run_gui_without_event_loop(qtbot, qapp, monkeypatch, str(project_path))
    assert window.project is not None
    assert built_with == [0]  # dropped before the window was built, its memory free for it
    assert main_window_module.__file__ not in linecache.cache


def test_run_gui_falls_back_to_the_default_project(qtbot, qapp, monkeypatch, tmp_path, asked):
    bad = tmp_path / "broken.swbproj"
    bad.write_text("not a project")
    window = _run_gui_without_event_loop(qtbot, qapp, monkeypatch, str(bad))
    assert window.project.name == "default"
    assert len(asked["messages"]) == 1
    title, text = asked["messages"][0]
    assert str(bad) in text and "\n" not in text


def test_escape_leaves_presentation_mode(qtbot, window):
    presenting = window.enter_presentation("power")
    qtbot.waitExposed(presenting)
    presenting.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is presenting)
    qtbot.keyClick(presenting, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.presentation_active())
    assert window.docks["power"].widget() is window.panel("power")


def test_dropping_a_png_on_a_chart_reaches_the_window(qtbot, window, tmp_path):
    """Charts accept drops themselves (QGraphicsView): the window filters their drag events."""
    from PySide6.QtWidgets import QGraphicsView

    window.raise_panel("scaling")
    _type_gpus(qtbot, window, "128")
    exported = window.panel("scaling").scenario()
    png = window.export_active("png", tmp_path / "scaling.png", width_px=400)
    window.action_undo.trigger()
    viewport = window.panel("roofline").findChildren(QGraphicsView)[0].viewport()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(png))])
    enter = QDragEnterEvent(QPoint(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(viewport, enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(viewport, drop)
    qtbot.waitUntil(lambda: window.panel("scaling").scenario() == exported, timeout=3000)


# -- the file changed by another program --------------------------------------------------------
def _change_behind_our_back(path: Path) -> None:
    other = Project.open(path)  # a second copy of the app, or a sync tool
    other.save_scenario("written elsewhere", other.load_scenario(other.list_scenarios()[0].id))
    other.save()
    other.close()


@pytest.mark.parametrize("answer", [dialogs.CANCEL, dialogs.OVERWRITE])
def test_saving_over_a_file_changed_elsewhere_asks_first(qtbot, window, project_path, monkeypatch, answer):
    questions = []
    monkeypatch.setattr(dialogs, "ask_overwrite_external",
                        lambda parent, name, detail: questions.append(detail) or answer)
    _type_gpus(qtbot, window, "96")
    _change_behind_our_back(project_path)
    saved = window.save()
    assert len(questions) == 1 and "changed by another program" in questions[0]
    names = [r.name for r in Project.open(project_path).list_scenarios()]
    if answer == dialogs.CANCEL:
        assert not saved and window.isWindowModified()
        assert "written elsewhere" in names  # the other program's version is untouched
    else:
        assert saved and not window.isWindowModified()
        assert "written elsewhere" not in names  # ours replaced it, as the user chose


def test_open_reports_what_storage_noticed_in_the_status_bar(qtbot, project_path):
    stale = project_path.with_name(project_path.name + ".tmp-0123abcd")
    stale.write_bytes(b"half a save")
    os.utime(stale, (1, 1))  # older than the project: left by a killed save
    window = _open_window(qtbot, project_path)
    assert not stale.exists()
    assert "temporary file" in window.statusBar().currentMessage()


def test_a_letter_in_the_gpu_field_is_explained_and_loses_nothing(qtbot, window):
    _type_gpus(qtbot, window, "64")
    messages = []
    window.context_toolbar.messageChanged.connect(messages.append)
    _type_gpus(qtbot, window, "6a4")
    assert window.context_model.context().n_gpus == 64  # the last good value stays
    assert messages and messages[-1]  # a message says what to fix
    assert window.context_toolbar.gpu_field.edit.toolTip() == messages[-1]


def test_the_run_summary_keeps_its_width_when_an_edit_shortens_it(qtbot, window):
    window.document.edit_plan(n_gpus=4096)
    label = window.summary_label
    wide = label.minimumWidth()
    assert wide >= label.sizeHint().width() > 0
    window.document.edit_plan(n_gpus=8)  # fewer digits
    assert label.minimumWidth() == wide and "8 ×" in label.text()
    # the room it keeps is on the left: the figures stay against the window's right edge
    assert label.alignment() & Qt.AlignmentFlag.AlignRight


def test_start_up_objects_are_out_of_the_garbage_collector_s_way(qtbot, qapp, monkeypatch, project_path):
    import gc

    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    frozen: list = []
    _run_gui_without_event_loop(qtbot, qapp, monkeypatch, str(project_path))
    assert frozen == [True]
