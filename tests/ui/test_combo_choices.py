"""A combo box given the choices it already lists is left alone (issue 15: reopening a project
with the same presets refilled every hardware combo box, and the window repainted a frame
after the open to show the same lists)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from ui.widgets.combo_items import set_choices


def _rows_inserted(combo: QComboBox) -> list[int]:
    inserted = [0]
    combo.model().rowsInserted.connect(lambda *_: inserted.__setitem__(0, inserted[0] + 1))
    return inserted


def test_the_same_choices_again_leave_the_combo_and_its_current_item_alone(qtbot):
    combo = QComboBox()
    qtbot.addWidget(combo)
    assert set_choices(combo, [("H100 SXM", "h100-sxm", "80 GB"), ("B200", "b200")])
    assert [combo.itemText(i) for i in range(combo.count())] == ["H100 SXM", "B200"]
    assert combo.itemData(0, Qt.ItemDataRole.ToolTipRole) == "80 GB"
    assert combo.itemData(1, Qt.ItemDataRole.ToolTipRole) is None
    combo.setCurrentIndex(1)
    inserted = _rows_inserted(combo)
    changed = []
    combo.currentIndexChanged.connect(changed.append)

    assert not set_choices(combo, [("H100 SXM", "h100-sxm", "80 GB"), ("B200", "b200", None)])
    assert inserted[0] == 0 and combo.currentIndex() == 1 and changed == []

    # another tooltip, text or key is a new list: filled again, silently
    assert set_choices(combo, [("H100 SXM", "h100-sxm", "80 GB HBM3"), ("B200", "b200")])
    assert combo.itemData(0, Qt.ItemDataRole.ToolTipRole) == "80 GB HBM3"
    assert inserted[0] > 0 and changed == []


def test_an_item_added_by_someone_else_is_noticed(qtbot):
    combo = QComboBox()
    qtbot.addWidget(combo)
    choices = [("A", "a"), ("B", "b")]
    set_choices(combo, choices)
    combo.addItem("c (missing)", "c")  # what a panel appends for a key the catalog lacks
    assert set_choices(combo, choices)
    assert [combo.itemData(i) for i in range(combo.count())] == ["a", "b"]
    combo.setItemText(0, "A renamed")  # as many items as it had, another text
    assert set_choices(combo, choices)
    assert combo.itemText(0) == "A"
    assert not set_choices(combo, choices)


def test_reopening_a_project_with_the_same_presets_refills_no_hardware_combo(qtbot, new_window, tmp_path):
    from storage import Project

    window = new_window()
    other = tmp_path / "same-presets.swbproj"
    Project.create(other).close()
    combos = [window.context_toolbar.hardware_combo, window.panel("run_plan").hardware_combo]
    before = [[c.itemText(i) for i in range(c.count())] for c in combos]
    inserted = [_rows_inserted(c) for c in combos]
    assert window.open_path(other, confirm=False)
    assert [n[0] for n in inserted] == [0, 0]
    assert [[c.itemText(i) for i in range(c.count())] for c in combos] == before
