"""The preset manager, driven as a person would: select, click Duplicate, type figures, undo."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtGui import QUndoStack

from storage import Project
from ui.catalog import HardwareCatalog
from ui.preset_manager import PresetManagerDialog, unique_copy_name, user_source

H100 = "h100-sxm"


@pytest.fixture
def project(tmp_path):
    project = Project.create(tmp_path / "plan.swbproj")
    yield project
    project.close()


@pytest.fixture
def parts(qtbot, project):
    catalog = HardwareCatalog(project)
    stack = QUndoStack()
    dialog = PresetManagerDialog(project, catalog, stack)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    yield dialog, catalog, stack
    stack.clear()


def click_preset(qtbot, dialog, key):
    item = dialog.item_for(key)
    dialog.preset_list.scrollToItem(item)
    rect = dialog.preset_list.visualItemRect(item)
    qtbot.mouseClick(dialog.preset_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert dialog.current_key() == key


def type_into(qtbot, field, text):
    """Select all, type, press Enter: what a person does in a field."""
    edit = field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def duplicate_h100(qtbot, dialog, project):
    click_preset(qtbot, dialog, H100)
    qtbot.mouseClick(dialog.duplicate_button, Qt.MouseButton.LeftButton)
    return next(r.key for r in project.list_presets() if r.name == "NVIDIA H100 SXM (copy)")


def test_open_does_not_block_the_window(qtbot, parts):
    dialog, _, _ = parts
    dialog.hide()
    dialog.open()  # what the main window calls
    assert dialog.isVisible()
    assert not dialog.isModal()
    assert dialog.windowModality() == Qt.WindowModality.NonModal
    with qtbot.waitSignal(dialog.finished, timeout=1000):
        dialog.close()


def test_built_ins_show_their_figures_with_sources_and_are_read_only(qtbot, parts, project):
    dialog, _, _ = parts
    click_preset(qtbot, dialog, H100)
    item = dialog.item_for(H100)
    assert "built-in" in item.text()
    assert not item.icon().isNull()  # the lock
    rows = dialog.figure_rows()
    value, source, _note = rows["BF16 dense rate"]
    assert value == "989 TFLOP/s"
    assert "NVIDIA" in source
    assert rows["HBM bandwidth (HBM3)"][0] == "3.35 TB/s"
    assert rows["BF16 with 2:4 sparsity"][0] == "1.978 PFLOP/s"
    assert rows["TDP"][0] == "700 W"
    assert rows["Interconnect bandwidth (NVLink 4)"][0] == "900 GB/s"
    assert all(source for _, source, _ in rows.values())  # every figure says where it came from
    # cannot be edited or deleted; the reason says what to do
    assert not dialog.delete_button.isEnabled()
    assert "duplicate it first" in dialog.delete_button.toolTip()
    assert dialog.editor_area.isHidden()
    assert dialog.fields == {}
    assert "Duplicate it first" in dialog.read_only_hint.text()


def test_duplicate_makes_an_editable_copy_in_project_and_catalog(qtbot, parts, project):
    dialog, catalog, stack = parts
    seen = []
    catalog.changed.connect(lambda: seen.append(True))
    key = duplicate_h100(qtbot, dialog, project)
    assert seen
    assert stack.count() == 1 and stack.text(0) == "Duplicate preset NVIDIA H100 SXM"
    copy = project.get_preset(key)
    assert not copy.builtin
    assert copy.mem_bw == 3.35e12
    assert key in catalog and catalog.get(key).name == "NVIDIA H100 SXM (copy)"
    # the copy is selected, editable, and keeps the sources of its figures
    assert dialog.current_key() == key
    assert "your preset" in dialog.item_for(key).text()
    assert dialog.delete_button.isEnabled()
    assert not dialog.editor_area.isHidden()
    assert dialog.fields["mem_bw"].value() == 3.35e12
    assert "NVIDIA" in dialog.figure_rows()["BF16 dense rate"][1]


def test_type_bandwidth_then_undo_twice(qtbot, parts, project):
    dialog, catalog, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    type_into(qtbot, dialog.fields["mem_bw"], "3 TB/s")
    assert project.get_preset(key).mem_bw == 3e12
    assert catalog.get(key).mem_bw == 3e12
    assert stack.count() == 2
    assert stack.text(1) == "Change memory bandwidth of NVIDIA H100 SXM (copy) to 3 TB/s"
    # the typed figure says it was typed; capacity keeps its datasheet source
    source = project.get_preset(key).memory_level("HBM").source
    assert source.startswith(f"bandwidth {user_source()}")
    assert "capacity: NVIDIA" in source
    assert dialog.figure_rows()["HBM bandwidth (HBM3)"][0] == "3 TB/s"
    # the built-in is untouched
    assert project.get_preset(H100).mem_bw == 3.35e12

    stack.undo()
    assert project.get_preset(key).mem_bw == 3.35e12
    assert catalog.get(key).mem_bw == 3.35e12
    assert dialog.fields["mem_bw"].value() == 3.35e12
    assert "NVIDIA" in project.get_preset(key).memory_level("HBM").source

    stack.undo()
    assert key not in {r.key for r in project.list_presets()}
    assert key not in catalog
    assert dialog.item_for(key) is None
    assert dialog.current_key() is not None  # something sensible is selected

    stack.redo()
    stack.redo()
    assert project.get_preset(key).mem_bw == 3e12


def test_typing_nonsense_shows_the_message_and_changes_nothing(qtbot, parts, project):
    dialog, catalog, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    before = project.get_preset(key)
    field = dialog.fields["mem_bw"]
    type_into(qtbot, field, "abc")
    assert field.message_text()  # says what to type instead
    assert "bandwidth" in field.message_text().lower()
    assert stack.count() == 1
    assert project.get_preset(key) == before
    assert catalog.get(key).mem_bw == 3.35e12
    # a compute rate in a bandwidth field is refused too
    type_into(qtbot, field, "900 TFLOP/s")
    assert field.message_text()
    assert stack.count() == 1


def test_out_of_range_sparsity_is_refused_inline(qtbot, parts, project):
    dialog, _, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    field = dialog.fields["sparsity:bf16"]
    type_into(qtbot, field, "0.5")
    assert field.message_text()
    assert stack.count() == 1
    type_into(qtbot, field, "4")
    assert project.get_preset(key).rate("bf16").sparsity_factor == 4.0
    assert stack.text(stack.count() - 1) == "Change BF16 sparsity factor of NVIDIA H100 SXM (copy) to 4×"


def test_model_error_is_shown_next_to_the_field(qtbot, parts, project):
    dialog, _, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    field = dialog.fields["source:tdp"]
    field.edit.setFocus()
    field.edit.selectAll()
    qtbot.keyClick(field.edit, Qt.Key.Key_Delete)
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    assert "must not be empty" in field.message_text()
    assert stack.count() == 1
    assert project.get_preset(key).tdp_source.startswith("NVIDIA")
    type_into(qtbot, field, "measured with nvidia-smi, 2026-05")
    assert field.message_text() == ""
    assert project.get_preset(key).tdp_source == "measured with nvidia-smi, 2026-05"
    assert stack.text(stack.count() - 1) == "Change source of TDP of NVIDIA H100 SXM (copy)"


def test_rename_and_clear_an_optional_figure(qtbot, parts, project):
    dialog, catalog, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    type_into(qtbot, dialog.fields["name"], "My H100")
    assert project.get_preset(key).name == "My H100"
    assert catalog.name(key) == "My H100"
    assert dialog.item_for(key).text().startswith("My H100")
    assert dialog.title.text() == "My H100"
    assert stack.text(stack.count() - 1) == "Rename preset NVIDIA H100 SXM (copy) to My H100"
    # emptying the TDP removes the figure (it is optional), one undoable step
    field = dialog.fields["tdp"]
    field.edit.setFocus()
    field.edit.selectAll()
    qtbot.keyClick(field.edit, Qt.Key.Key_Delete)
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    assert project.get_preset(key).tdp_w is None
    assert field.message_text() == ""
    assert stack.text(stack.count() - 1) == "Remove TDP of My H100"
    stack.undo()
    assert project.get_preset(key).tdp_w == 700.0
    assert dialog.fields["tdp"].value() == 700.0


def test_delete_a_user_preset_and_undo(qtbot, parts, project):
    dialog, catalog, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    type_into(qtbot, dialog.fields["name"], "My H100")
    qtbot.mouseClick(dialog.delete_button, Qt.MouseButton.LeftButton)
    assert stack.text(stack.count() - 1) == "Delete preset My H100"
    assert key not in catalog
    assert dialog.item_for(key) is None
    stack.undo()
    assert project.get_preset(key).name == "My H100"
    assert key in catalog


def test_built_in_delete_is_refused(qtbot, parts, project):
    dialog, _, stack = parts
    click_preset(qtbot, dialog, H100)
    dialog.delete_current()  # even if called directly
    assert stack.count() == 0
    assert "duplicate it first" in dialog.message_text()
    assert H100 in {r.key for r in project.list_presets()}


def test_second_duplicate_gets_a_new_name(qtbot, parts, project):
    dialog, _, stack = parts
    duplicate_h100(qtbot, dialog, project)
    click_preset(qtbot, dialog, H100)
    qtbot.mouseClick(dialog.duplicate_button, Qt.MouseButton.LeftButton)
    names = {r.name for r in project.list_presets()}
    assert {"NVIDIA H100 SXM (copy)", "NVIDIA H100 SXM (copy 2)"} <= names
    assert unique_copy_name("X", {"X (copy)", "X (copy 2)"}) == "X (copy 3)"


def test_undo_buttons_follow_the_stack(qtbot, parts, project):
    dialog, _, stack = parts
    assert not dialog.undo_action.isEnabled()
    duplicate_h100(qtbot, dialog, project)
    assert dialog.undo_action.isEnabled()
    assert dialog.undo_action.toolTip() == "Undo Duplicate preset NVIDIA H100 SXM"
    qtbot.mouseClick(dialog.undo_button, Qt.MouseButton.LeftButton)
    assert stack.index() == 0
    assert dialog.redo_action.isEnabled()


def test_commands_outlive_the_dialog(qtbot, project):
    catalog = HardwareCatalog(project)
    stack = QUndoStack()
    dialog = PresetManagerDialog(project, catalog, stack)
    dialog.show()
    key = duplicate_h100(qtbot, dialog, project)
    dialog.close()
    dialog.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    stack.undo()
    assert key not in catalog
    stack.redo()
    assert key in catalog


# -- memory levels (issue 16) ----------------------------------------------------------------------
def add_level(qtbot, dialog, name, bandwidth, capacity="", source=""):
    """Fill the new-level row as a person would and click Add level."""
    f = dialog.fields
    for key, text in (("new_level_name", name), ("new_level_bw", bandwidth),
                      ("new_level_capacity", capacity), ("new_level_source", source)):
        edit = f[key].edit
        edit.setFocus()
        edit.selectAll()
        if text:
            qtbot.keyClicks(edit, text)
        else:
            qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.mouseClick(f["add_level"], Qt.MouseButton.LeftButton)


def test_add_an_l2_level_then_undo_removes_it(qtbot, parts, project):
    dialog, catalog, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    assert dialog.fields["new_level_name"].text() == "L2"  # what a person most likely adds
    add_level(qtbot, dialog, "L2", "12 TB/s", "50 MiB", "my own L2 microbenchmark, 2026-05")
    hw = project.get_preset(key)
    l2 = hw.memory_level("L2")
    assert (l2.bandwidth, l2.capacity, l2.source) == (12e12, 50 * 2**20, "my own L2 microbenchmark, 2026-05")
    assert hw.mem_bw == 3.35e12  # device memory as it was
    assert [m.name for m in catalog.get(key).cache_levels] == ["L2"]
    assert stack.text(stack.count() - 1) == "Add memory level L2 (12 TB/s) to NVIDIA H100 SXM (copy)"
    assert dialog.figure_rows()["L2 bandwidth"][:2] == ("12 TB/s", "my own L2 microbenchmark, 2026-05")
    # the editor now has the level's own row
    assert dialog.fields["level_bw:L2"].value() == 12e12
    assert dialog.fields["level_capacity:L2"].value() == 50 * 2**20
    stack.undo()
    assert [m.name for m in project.get_preset(key).memory] == ["HBM"]
    assert catalog.get(key).cache_levels == ()
    assert "L2 bandwidth" not in dialog.figure_rows()
    assert "level_bw:L2" not in dialog.fields
    stack.redo()
    assert project.get_preset(key).memory_level("L2").bandwidth == 12e12


def test_an_added_level_without_a_source_says_it_was_typed(qtbot, parts, project):
    dialog, _, _ = parts
    key = duplicate_h100(qtbot, dialog, project)
    add_level(qtbot, dialog, "L2", "12 TB/s")
    l2 = project.get_preset(key).memory_level("L2")
    assert l2.source == user_source() and l2.capacity is None


def test_edit_and_remove_a_cache_level(qtbot, parts, project):
    dialog, catalog, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    add_level(qtbot, dialog, "L2", "12 TB/s", "", "a paper")
    type_into(qtbot, dialog.fields["level_bw:L2"], "10 TB/s")
    l2 = project.get_preset(key).memory_level("L2")
    assert l2.bandwidth == 10e12 and l2.source == user_source()
    assert stack.text(stack.count() - 1) == "Change L2 bandwidth of NVIDIA H100 SXM (copy) to 10 TB/s"
    type_into(qtbot, dialog.fields["source:level:L2"], "Chips and Cheese, measured")
    assert project.get_preset(key).memory_level("L2").source == "Chips and Cheese, measured"
    assert stack.text(stack.count() - 1) == "Change source of L2 figures of NVIDIA H100 SXM (copy)"
    type_into(qtbot, dialog.fields["level_capacity:L2"], "50 MB")
    assert project.get_preset(key).memory_level("L2").capacity == 50e6
    # emptying the capacity removes it (it is optional)
    field = dialog.fields["level_capacity:L2"]
    field.edit.setFocus()
    field.edit.selectAll()
    qtbot.keyClick(field.edit, Qt.Key.Key_Delete)
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    assert project.get_preset(key).memory_level("L2").capacity is None
    assert stack.text(stack.count() - 1) == "Remove L2 capacity of NVIDIA H100 SXM (copy)"
    qtbot.mouseClick(dialog.fields["remove_level:L2"], Qt.MouseButton.LeftButton)
    assert [m.name for m in project.get_preset(key).memory] == ["HBM"]
    assert stack.text(stack.count() - 1) == "Remove memory level L2 from NVIDIA H100 SXM (copy)"
    stack.undo()
    assert project.get_preset(key).memory_level("L2").bandwidth == 10e12
    assert catalog.get(key).memory_level("L2").bandwidth == 10e12


def test_a_new_level_needs_a_free_name_and_a_bandwidth(qtbot, parts, project):
    dialog, _, stack = parts
    key = duplicate_h100(qtbot, dialog, project)
    steps = stack.count()
    add_level(qtbot, dialog, "L2", "")
    assert "bandwidth" in dialog.fields["new_level_bw"].message_text()
    add_level(qtbot, dialog, "HBM", "12 TB/s")
    assert "already has a level named HBM" in dialog.fields["new_level_name"].message_text()
    add_level(qtbot, dialog, "", "12 TB/s")
    assert "Name the new cache level" in dialog.fields["new_level_name"].message_text()
    add_level(qtbot, dialog, "L2", "12 TFLOP/s")  # not a bandwidth
    assert dialog.fields["new_level_bw"].message_text()
    assert stack.count() == steps
    assert [m.name for m in project.get_preset(key).memory] == ["HBM"]
