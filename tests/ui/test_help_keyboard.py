"""Help and keyboard as a desktop user expects them: F1 explains the active panel, a Help menu
with the user guide and About Qt, the platform's full-screen key, a first window that uses the
screen, and an accessible name on every control."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollBar,
    QTextEdit,
    QWidget,
)


@pytest.fixture
def window(new_window):
    return new_window(size=None)


def test_the_first_window_uses_most_of_the_screen(window):
    area = window.screen().availableGeometry()
    assert window.width() >= 0.85 * area.width() or window.width() >= 1024
    assert window.height() >= 0.85 * area.height() or window.height() >= 700
    least = window.minimumSizeHint()  # the offscreen screen is smaller than the docks' minimum
    assert window.width() <= max(area.width(), least.width())
    assert window.height() <= max(area.height(), least.height())


def test_f1_explains_the_active_panel(qtbot, window):
    assert QKeySequence(QKeySequence.StandardKey.HelpContents) in window.action_explain.shortcuts()
    window.raise_panel("allreduce")
    window.action_explain.trigger()
    box = window.panel("allreduce")._explain_box
    assert box is not None and box.isVisible()
    assert "Ring" in box.findChild(type(box.findChildren(QTextEdit)[0])).toPlainText()


def test_the_help_menu_has_explain_the_guide_and_about_qt(qtbot, window):
    texts = [a.text().replace("&", "") for a in window.help_menu.actions() if not a.isSeparator()]
    assert texts == ["Explain This Panel", "User Guide", "About Scaling Workbench", "About Qt"]
    guide = window.show_user_guide()
    qtbot.waitExposed(guide)
    assert "Scaling Workbench" in guide.text()
    assert "pytest" in guide.text()  # the README's test command: the real guide, not the fallback


def test_presentation_takes_the_platforms_full_screen_key_and_f11(window):
    keys = [k.toString() for k in window.action_presentation.shortcuts()]
    assert "F11" in keys
    full = QKeySequence(QKeySequence.StandardKey.FullScreen).toString()
    if full:
        assert full in keys


def test_about_lists_the_version_and_the_licences_of_what_ships(qtbot, window):
    import workbench

    box = window.show_about()
    qtbot.waitExposed(box)
    text = " ".join(label.text() for label in box.findChildren(QLabel))
    assert workbench.__version__ in text
    for name in ("Qt", "LGPL", "PySide6", "pyqtgraph", "numpy", "SQLAlchemy"):
        assert name in text, name
    box.close()
def _unnamed_controls(root):
    unnamed = []
    kinds = (QAbstractButton, QComboBox, QLineEdit, QAbstractSpinBox, QAbstractSlider, QAbstractItemView,
             QPlainTextEdit, QTextEdit)
    for w in root.findChildren(QWidget):
        if not isinstance(w, kinds) or not w.isVisibleTo(root) or isinstance(w.parent(), QAbstractSpinBox | QComboBox):
            continue  # a spin box's or combo's own line edit is named through its owner
        if isinstance(w, QHeaderView | QScrollBar) or w.objectName().startswith("qt_"):
            continue  # parts of a named view, and Qt's own (toolbar overflow, table corner) buttons
        if w.accessibleName().strip():
            continue
        if isinstance(w, QAbstractButton) and w.text().replace("&", "").strip():
            continue  # a button's text is its accessible name
        unnamed.append(f"{type(w).__name__} {w.objectName()!r} in {type(w.parent()).__name__}")
    return unnamed


def test_every_control_has_an_accessible_name(qtbot, window):
    found = set()
    for kind in window.panels:
        window.raise_panel(kind)
        found |= set(_unnamed_controls(window))
    assert sorted(found) == [], "\n".join(sorted(found))
