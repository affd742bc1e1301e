"""What a demanding user noticed looking at the window at 1920x1080 and on a 1366x768 laptop:
the chart gets the height, nothing is cut off, Tab goes where it should, the title tells the
truth about a read-only project, every menu command shows its key."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from storage import Project
from ui import dialogs
from ui.main_window import MainWindow
from ui.panel import RESULTS_SHARE


@pytest.fixture(autouse=True)
def _no_blocking_dialogs(monkeypatch):
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda parent, name: dialogs.DISCARD)
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, path, rec: False)
    monkeypatch.setattr(dialogs, "show_message", lambda *a, **k: None)


@pytest.fixture
def project_path(tmp_path) -> Path:
    path = tmp_path / "plan.swbproj"
    Project.create(path).close()
    return path


def _window(qtbot, path: Path, size: tuple[int, int]) -> MainWindow:
    window = MainWindow(Project.open(path))
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    return window


def _raise(qtbot, window: MainWindow, kind: str):
    window.raise_panel(kind)
    QApplication.processEvents()
    panel = window.panels[kind]
    qtbot.waitUntil(lambda: panel.isVisible() and panel.center.height() > 0)
    QApplication.processEvents()
    return panel


# -- the chart takes the height, the results the height of their rows -------------------------
@pytest.mark.parametrize("kind", ["allreduce", "collective", "scaling", "power"])
def test_results_table_leaves_the_height_to_the_chart(qtbot, project_path, kind):
    """All-reduce showed seven result rows in more than half the height, under a squeezed
    chart: the table now gets its rows' height, at most RESULTS_SHARE of the centre."""
    window = _window(qtbot, project_path, (1920, 1080))
    panel = _raise(qtbot, window, kind)
    chart_h, table_h = panel.center.sizes()
    total = chart_h + table_h
    assert table_h <= max(panel.results.content_height(), panel.results.minimumHeight()) + 1
    assert table_h <= max(total * RESULTS_SHARE, panel.results.minimumHeight()) + 1
    assert chart_h >= total * (1 - RESULTS_SHARE) - 1 or table_h == panel.results.minimumHeight()


def test_a_short_table_shows_all_its_rows_without_blank_space(qtbot, project_path):
    window = _window(qtbot, project_path, (1920, 1080))
    panel = _raise(qtbot, window, "allreduce")
    table = panel.results
    assert table.rowCount() >= 5
    # every row visible, and no more than a row of blank space below the last one
    assert table.height() >= table.content_height() - 2
    assert table.height() <= table.content_height() + table.verticalHeader().defaultSectionSize()


def test_a_dragged_splitter_stays_where_the_user_put_it(qtbot, project_path):
    window = _window(qtbot, project_path, (1600, 900))
    panel = _raise(qtbot, window, "allreduce")
    total = sum(panel.center.sizes())
    handle = panel.center.handle(1)
    # drag the handle up, as a person does, to give the table more room
    start = handle.rect().center()
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(handle, start - type(start)(0, 150))
    qtbot.mouseRelease(handle, Qt.MouseButton.LeftButton, pos=start - type(start)(0, 150))
    QApplication.processEvents()
    assert panel.center.user_sized()
    chosen = panel.center.sizes()
    assert chosen[1] > total * RESULTS_SHARE  # the user asked for more than the automatic share
    window.resize(1600, 901)
    QApplication.processEvents()
    panel.results.set_rows([("Ring time", 1e-3, "s")])  # rows change: the user's sizes stay
    QApplication.processEvents()
    assert abs(panel.center.sizes()[1] - chosen[1]) <= 2


# -- nothing cut off on a laptop ---------------------------------------------------------------
@pytest.mark.parametrize("kind", ["roofline", "collective", "allreduce", "scaling", "power"])
def test_inputs_form_scrolls_instead_of_being_cut_off_on_a_laptop(qtbot, project_path, kind):
    """At 1366x768 the roofline form was cut at its right edge (combo boxes and the Measure
    button half shown, no way to reach them): a form narrower than its fields scrolls."""
    window = _window(qtbot, project_path, (1366, 768))
    panel = _raise(qtbot, window, kind)
    scroll = panel.form_scroll
    needed = panel.form_widget.minimumSizeHint().width()
    if scroll.viewport().width() < needed:
        assert scroll.horizontalScrollBar().isVisible()
        assert scroll.horizontalScrollBar().maximum() > 0
    else:
        assert panel.form_widget.width() >= needed


def test_power_charts_are_not_cut_off_on_a_laptop(qtbot, project_path):
    """The efficiency chart's long title kept its plot wider than its view at 1366x768: the
    right part, with the marked operating point, was cut off (worse in presentation mode)."""
    window = _window(qtbot, project_path, (1366, 768))
    panel = _raise(qtbot, window, "power")
    for chart in (panel.chart, panel.rate_chart):
        plot = chart.getPlotItem()
        assert plot.geometry().width() <= chart.viewport().width() + 1, chart._title


def test_power_charts_are_not_cut_off_in_presentation_on_a_small_projector(qtbot, project_path):
    window = _window(qtbot, project_path, (1366, 768))
    _raise(qtbot, window, "power")
    presentation = window.enter_presentation()
    presentation.showNormal()
    presentation.resize(1280, 800)
    QApplication.processEvents()
    panel = window.panels["power"]
    qtbot.waitUntil(lambda: panel.chart.isVisible())
    QApplication.processEvents()
    try:
        for chart in (panel.chart, panel.rate_chart):
            assert chart.getPlotItem().geometry().width() <= chart.viewport().width() + 1, chart._title
    finally:
        window.exit_presentation()


# -- keyboard ----------------------------------------------------------------------------------
def _tab_chain(start, count: int, window):
    widget, chain = start, []
    for _ in range(count):
        widget = widget.nextInFocusChain()
        while not (widget.focusPolicy() & Qt.FocusPolicy.TabFocus) or not widget.isVisibleTo(window) \
                or not widget.isEnabled():
            widget = widget.nextInFocusChain()
        chain.append(widget)
    return chain


def test_tab_goes_from_the_panel_toolbar_to_the_first_field(qtbot, project_path):
    """The inputs scroll area was a Tab stop of its own, an invisible one (nothing shows focus)."""
    window = _window(qtbot, project_path, (1920, 1080))
    panel = _raise(qtbot, window, "scaling")
    chain = _tab_chain(panel.toolbar, 40, window)
    assert panel.form_scroll not in chain
    fields = [w for w in chain if panel.form_widget.isAncestorOf(w)]
    assert fields, "Tab never reaches the inputs form"


def test_every_file_menu_command_that_needs_a_key_shows_one(qtbot, project_path):
    window = _window(qtbot, project_path, (1600, 900))
    assert not window.action_quit.shortcut().isEmpty()
    for action in (window.action_new, window.action_open, window.action_save, window.action_save_as,
                   window.action_undo, window.action_redo, window.action_presentation):
        assert not action.shortcut().isEmpty(), action.text()


# -- a read-only project -----------------------------------------------------------------------
def test_a_read_only_project_says_so_in_the_title(qtbot, project_path, tmp_path):
    mode = project_path.stat().st_mode
    os.chmod(project_path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        window = _window(qtbot, project_path, (1600, 900))
        assert window.project.read_only
        assert "(read-only)" in window.windowTitle()
        assert "read-only" in window.statusBar().currentMessage()
        # Save As to a writable file: the title drops the note
        target = tmp_path / "copy.swbproj"
        dialogs_ask = dialogs.ask_save_path
        try:
            dialogs.ask_save_path = lambda *a, **k: str(target)
            assert window.save_as()
        finally:
            dialogs.ask_save_path = dialogs_ask
        assert not window.project.read_only
        assert "(read-only)" not in window.windowTitle()
    finally:
        os.chmod(project_path, mode)


# -- the export dialog -------------------------------------------------------------------------
def test_export_dialog_button_says_export_and_enter_accepts(qtbot):
    dialog = dialogs.ExportOptionsDialog(None, "png", 1920, "white", title="Roofline")
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.export_button.text() == "Export…"
    assert dialog.export_button.isDefault() or dialog.export_button.autoDefault()
    with qtbot.waitSignal(dialog.accepted, timeout=1000):
        dialog.export_button.click()
    assert dialog.options().width_px == 1920
