"""Text from a project, a log or a file name is data: it is never rendered as markup.

A preset called ``<img src="...">`` rendered as rich text makes Qt open the file it names (and
``/dev/zero`` hangs the app). These tests put such names where a user's data reaches the window
and then walk every label, tooltip, combo item and message box to check that no markup from the
data is live."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QMessageBox, QWidget

from presets import hardware_by_key
from storage import Project
from ui import dialogs
from ui.charts import Chart, _StaticLabel
from ui.main_window import MainWindow

# A tag Qt would act on if it were rendered: the test's own file, so nothing is ever opened.
TAG = '<img src="/nonexistent/hostile.png">'
HOSTILE = f"{TAG}Evil GPU"


def _live_markup(text: str, fmt: Qt.TextFormat) -> bool:
    """True when ``text`` holds the hostile tag and would be shown as rich text."""
    if TAG not in text:
        return False
    # AutoText renders anything that looks like a tag as markup, so only PlainText is safe.
    return fmt != Qt.TextFormat.PlainText


def _offenders(root: QWidget) -> list[str]:
    found = []
    widgets = [root, *root.findChildren(QWidget)]
    for w in widgets:
        name = f"{type(w).__name__}({w.objectName()})"
        if isinstance(w, QLabel) and _live_markup(w.text(), w.textFormat()):
            found.append(f"label {name}: {w.text()[:80]}")
        # Tooltips are always shown as rich text when they look like it.
        if TAG in w.toolTip():
            found.append(f"tooltip of {name}: {w.toolTip()[:80]}")
        if isinstance(w, QComboBox):
            for i in range(w.count()):
                tip = w.itemData(i, Qt.ItemDataRole.ToolTipRole)
                if isinstance(tip, str) and TAG in tip:
                    found.append(f"item tooltip {i} of {name}: {tip[:80]}")
        if isinstance(w, QAbstractButton) and TAG in w.toolTip():
            found.append(f"button tooltip {name}")
    for plot in root.findChildren(pg.PlotWidget):  # legend labels and titles are HTML in pyqtgraph
        # the charts' legend names and titles are painted as plain text (shown as they are)
        legend = plot.getPlotItem().legend
        for _sample, label in (legend.items if legend is not None else []):
            if TAG in label.text and not isinstance(label, _StaticLabel):
                found.append(f"legend label in {plot.objectName()}: {label.text[:80]}")
        title = plot.getPlotItem().titleLabel
        if TAG in title.text and not isinstance(title, _StaticLabel):
            found.append(f"title of {plot.objectName()}")
    for action in root.findChildren(QAction):
        if TAG in action.toolTip():
            found.append(f"action tooltip {action.objectName()}")
    return found


@pytest.fixture
def hostile_window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda parent, name: dialogs.DISCARD)
    monkeypatch.setattr(dialogs, "ask_recover", lambda *a: False)
    path = tmp_path / "hostile.swbproj"
    project = Project.create(path)
    h100 = hardware_by_key("h100-sxm")
    key = project.add_preset(h100.with_changes(key="evil-gpu", name=HOSTILE, vendor=TAG,
                                               note=TAG, tdp_source=TAG, interconnect=TAG))
    from presets import sample_scenarios

    for name, scenario in sample_scenarios():
        project.save_scenario(f"{TAG}{name}", scenario, notes=TAG)
    project.save()
    project.close()
    window = MainWindow(Project.open(path))
    qtbot.addWidget(window)
    window.resize(1600, 900)
    window.show()
    qtbot.waitExposed(window)
    return window, key


def test_a_hostile_preset_as_the_plans_hardware_is_shown_as_text(qtbot, hostile_window):
    window, key = hostile_window
    window.document.edit_plan(hardware=key)
    qtbot.waitUntil(lambda: HOSTILE in window.summary_label.text()
                    or "Evil GPU" in window.summary_label.text())
    found = []
    for kind in window.panels:
        window.raise_panel(kind)
        found += _offenders(window)
    assert sorted(set(found)) == []


def test_saved_scenarios_with_hostile_names_open_as_text(qtbot, hostile_window):
    window, _ = hostile_window
    rows = [r for r in window.project.list_scenarios() if r.name.startswith(TAG)]
    assert rows
    found = []
    for row in rows:
        assert window.open_saved_scenario(row.id)
        found += _offenders(window)
    assert sorted(set(found)) == []


def test_message_boxes_show_names_as_plain_text(qtbot):
    box = dialogs.show_message(None, "Cannot open", f"{HOSTILE} is not a project")
    qtbot.addWidget(box)
    labels = box.findChildren(QLabel)
    assert any("Evil GPU" in label.text() for label in labels)
    assert [label.text() for label in labels if _live_markup(label.text(), label.textFormat())] == []


@pytest.mark.parametrize("build", [
    lambda: dialogs.build_save_prompt(None, HOSTILE),
])
def test_questions_show_names_as_plain_text(qtbot, build):
    box: QMessageBox = build()
    qtbot.addWidget(box)
    labels = box.findChildren(QLabel)
    assert any("Evil GPU" in label.text() for label in labels)
    assert [label.text() for label in labels if _live_markup(label.text(), label.textFormat())] == []


def test_the_preset_manager_shows_a_hostile_preset_as_text(qtbot, hostile_window):
    window, key = hostile_window
    window.show_preset_manager()
    dialog = window._preset_manager
    qtbot.waitExposed(dialog)
    dialog.select(key)
    assert "Evil GPU" in dialog.title.text()
    assert _offenders(dialog) == []


def test_a_chart_title_holding_markup_is_painted_as_the_text_it_is(qtbot):
    chart = Chart(title=HOSTILE)
    qtbot.addWidget(chart)
    chart.resize(700, 400)
    chart.show()
    qtbot.waitExposed(chart)
    title = chart.getPlotItem().titleLabel
    assert title.plain_text() == HOSTILE
    assert title._prepared.static.textFormat() == Qt.TextFormat.PlainText
    # as wide as the characters of the tag and the name, not as the name alone
    plain = Chart(title="Evil GPU")
    qtbot.addWidget(plain)
    assert title.text_width() > 2 * plain.getPlotItem().titleLabel.text_width()


def test_a_reference_line_named_with_braces_shows_its_name(qtbot):
    # pyqtgraph formats a line label with the line's value: "{x}" in a name raised inside Qt
    chart = Chart()
    qtbot.addWidget(chart)
    line = chart.add_reference_line(2.0, label="Link {fast} 400 Gb/s")
    assert line.label.toPlainText() == "Link {fast} 400 Gb/s"
    line.setPos(3.0)
    assert line.label.toPlainText() == "Link {fast} 400 Gb/s"


def test_a_reference_line_moved_keeps_its_text_laid_out(qtbot, monkeypatch):
    chart = Chart()
    qtbot.addWidget(chart)
    line = chart.add_reference_line(2.0, label="Ridge")
    set_texts = []
    monkeypatch.setattr(type(line.label), "setText", lambda self, *a, **k: set_texts.append(a))
    chart.clear_reference_lines()
    again = chart.add_reference_line(5.0, label="Ridge")  # the same words at another value
    assert again is line and set_texts == []
    chart.clear_reference_lines()
    chart.add_reference_line(5.0, label="Knee")
    assert set_texts == [("Knee",)]
