"""The note that says a panel differs from the run plan sits beside the panel's toolbar.

It used to be a line of its own above the form and the chart: shown after an edit, it pushed
both down, under the pointer and away from the field just typed in. Now it takes the
toolbar's height in the toolbar's row; a short row cuts its text (the whole text in its
tooltip) before "Local override" goes into the toolbar's overflow menu.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication
from window_helpers import type_in

from ui import theme as th
from ui.widgets.elided_label import ElidedLabel


def _top(widget, window) -> int:
    return widget.mapTo(window, widget.rect().topLeft()).y()


def test_the_note_shown_after_an_edit_moves_nothing(qtbot, new_window):
    window = new_window()
    power = window.panel("power")
    window.raise_panel("power")
    power.action_override.setChecked(False)
    field = power.field("pue").edit
    before = (_top(power.splitter, window), _top(field, window), power.toolbar.height())
    assert not power.plan_banner.isVisibleTo(power)
    power.action_override.setChecked(True)
    type_in(qtbot, field, "1.8")
    qtbot.waitUntil(lambda: power.plan_banner.isVisible())
    QApplication.processEvents()  # the layouts the note asked for, done
    assert "Local override" in power.plan_banner_label.text()
    assert (_top(power.splitter, window), _top(field, window), power.toolbar.height()) == before
    # in the toolbar's row, to its right, no taller than it
    assert _top(power.plan_banner, window) == _top(power.toolbar, window)
    assert power.plan_banner.height() == power.toolbar.height()
    assert power.plan_banner.mapTo(window, power.plan_banner.rect().topLeft()).x() >= (
        power.toolbar.mapTo(window, power.toolbar.rect().topRight()).x())
    power.follow_button.click()
    QApplication.processEvents()
    assert not power.plan_banner.isVisibleTo(power) and _top(power.splitter, window) == before[0]


def test_in_a_narrow_panel_the_note_goes_under_the_toolbar_and_the_window_keeps_its_width(qtbot, new_window):
    from PySide6.QtCore import Qt

    window = new_window(size=(1300, 800))
    panel = window.panel("measured")
    window.raise_panel("measured")
    panel.action_override.setChecked(True)  # its note is a long one: the plan saved in the scenario
    qtbot.waitUntil(lambda: panel.plan_banner.isVisible())
    window.resizeDocks([window.browser_dock], [420], Qt.Orientation.Horizontal)  # a wide browser beside
    QApplication.processEvents()
    assert panel.width() < panel.toolbar.sizeHint().width() + panel.plan_banner.sizeHint().width()
    assert window.width() == 1300  # the note did not widen the window
    assert not panel.plan_note_in_toolbar_row()
    assert _top(panel.plan_banner, window) >= _top(panel.toolbar, window) + panel.toolbar.height()
    label = panel.plan_banner_label
    assert label.shown_text() == label.text() and label.toolTip() == ""  # the whole line is its own
    assert panel.toolbar.widgetForAction(panel.action_override).isVisible()  # not in the overflow menu
    assert panel.follow_button.width() >= panel.follow_button.sizeHint().width()
    window.resizeDocks([window.browser_dock], [150], Qt.Orientation.Horizontal)
    window.resize(1900, 900)  # room again: beside the toolbar
    qtbot.waitUntil(lambda: panel.plan_note_in_toolbar_row())
    QApplication.processEvents()
    assert _top(panel.plan_banner, window) == _top(panel.toolbar, window)


def test_a_label_too_short_for_its_text_ends_in_an_ellipsis_and_tips_the_whole(qtbot):
    label = ElidedLabel()
    qtbot.addWidget(label)
    label.setText("Local override: this panel keeps its own inputs, not the run plan's.")
    label.resize(120, label.sizeHint().height())
    label.show()
    qtbot.waitExposed(label)
    whole = label.text()
    assert label.shown_text().endswith("…") and whole.startswith(label.shown_text()[:-1])
    assert label.toolTip() == whole and label.text() == whole
    label.resize(label.sizeHint())
    qtbot.waitUntil(lambda: label.toolTip() == "")
    assert label.shown_text() == whole


def test_an_elided_label_is_plain_text_and_whole_when_there_is_room(qtbot):
    label = ElidedLabel()
    qtbot.addWidget(label)
    label.setText("<b>not bold</b> from a file")
    label.resize(label.sizeHint())
    label.show()
    qtbot.waitExposed(label)
    assert label.shown_text() == "<b>not bold</b> from a file" and label.toolTip() == ""
    assert label.minimumSizeHint().width() < label.sizeHint().width()


def test_the_note_grows_with_the_toolbar_in_presentation_mode(qtbot, new_window):
    window = new_window()
    scaling = window.panel("scaling")
    window.raise_panel("scaling")
    scaling.action_override.setChecked(True)
    qtbot.waitUntil(lambda: scaling.plan_banner.isVisible())
    normal = scaling.plan_banner_label.font().pointSizeF()
    window.enter_presentation("scaling")
    try:
        qtbot.waitUntil(lambda: scaling.plan_banner.isVisible())
        QApplication.processEvents()
        bigger = normal * th.scale_factor(True)
        for widget in (scaling.toolbar, scaling.plan_banner_label, scaling.follow_button, scaling.adopt_button):
            assert widget.font().pointSizeF() == bigger, widget.objectName()
        # wherever it is, it is whole: its buttons uncut, the toolbar's too
        for button in (scaling.follow_button, scaling.adopt_button):
            assert button.width() >= button.sizeHint().width(), button.text()
        assert scaling.toolbar.widgetForAction(scaling.action_override).isVisible()
        if scaling.plan_note_in_toolbar_row():
            assert scaling.plan_banner.height() == scaling.toolbar.height()
    finally:
        window.exit_presentation()
    assert scaling.plan_banner_label.font().pointSizeF() == normal


def test_a_panel_narrow_from_the_start_shows_the_note_under_its_toolbar(qtbot, new_window):
    """Built at its default width and never wide: the note must still be in a layout, under
    the toolbar, not left at its own corner over the toolbar's buttons."""
    window = new_window(size=(700, 700))
    power = window.panel("power")
    window.raise_panel("power")
    power.action_override.setChecked(True)
    qtbot.waitUntil(lambda: power.plan_banner.isVisible())
    QApplication.processEvents()
    assert not power.plan_note_in_toolbar_row()
    assert _top(power.plan_banner, window) >= _top(power.toolbar, window) + power.toolbar.height()
    assert power.plan_banner.width() > power.toolbar.width() // 2  # across the panel, not a corner


def test_beside_the_toolbar_the_note_never_squeezes_it_whatever_the_notes_text(qtbot, new_window):
    """Plan vs actual says its override its own, longer way: the place is chosen for that text."""
    window = new_window(size=(1300, 800))
    panel = window.panel("measured")
    window.raise_panel("measured")
    panel.action_override.setChecked(True)
    qtbot.waitUntil(lambda: panel.plan_banner.isVisible())
    assert "plan saved in this scenario" in panel.plan_banner_label.text()
    for width in range(1250, 1951, 50):
        panel.action_override.setChecked(False)
        window.resize(width, 800)
        QApplication.processEvents()
        panel.action_override.setChecked(True)  # the note shown at this width, with its own text
        QApplication.processEvents()
        if panel.plan_note_in_toolbar_row():
            assert panel.toolbar.width() >= panel.toolbar.sizeHint().width(), width
            assert panel.plan_banner_label.shown_text() == panel.plan_banner_label.text(), width
        assert panel.toolbar.widgetForAction(panel.action_override).isVisible(), width
