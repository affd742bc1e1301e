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


def test_a_short_row_cuts_the_notes_text_not_the_toolbar(qtbot, new_window):
    window = new_window()
    scaling = window.panel("scaling")
    window.raise_panel("scaling")
    scaling.action_override.setChecked(True)
    qtbot.waitUntil(lambda: scaling.plan_banner.isVisible())
    label = scaling.plan_banner_label
    whole = label.text()
    assert label.shown_text() == whole and label.toolTip() == ""  # room enough at 1600 px
    window.resize(1000, 800)
    qtbot.waitUntil(lambda: label.shown_text() != whole)
    assert label.shown_text().endswith("…") and whole.startswith(label.shown_text()[:-1])
    assert label.toolTip() == whole and label.text() == whole  # the whole text stays the label's
    # every toolbar button keeps its room: none went into the overflow menu
    toolbar = scaling.toolbar
    assert toolbar.width() >= toolbar.sizeHint().width()
    assert toolbar.widgetForAction(scaling.action_override).isVisible()


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
        bigger = normal * th.scale_factor(True)
        for widget in (scaling.toolbar, scaling.plan_banner_label, scaling.follow_button, scaling.adopt_button):
            assert widget.font().pointSizeF() == bigger, widget.objectName()
        assert scaling.plan_banner.height() == scaling.toolbar.height()
    finally:
        window.exit_presentation()
    assert scaling.plan_banner_label.font().pointSizeF() == normal
