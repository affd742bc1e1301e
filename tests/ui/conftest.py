"""Qt fixtures: one QApplication (pytest-qt's), QSettings redirected, strict teardown."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_modal_prompts(monkeypatch):
    """A window closed with unsaved changes at teardown asks whether to save: answered Discard,
    so a test never hangs on a modal prompt. A test that checks the question installs its own."""
    from ui import dialogs

    monkeypatch.setattr(dialogs, "ask_save_changes", lambda parent, name: dialogs.DISCARD)
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, path, recovery: False)


@pytest.fixture(autouse=True)
def _qt_isolation(qapp, tmp_path, monkeypatch):
    from PySide6.QtCore import QCoreApplication, QEvent, QSettings
    from PySide6.QtWidgets import QApplication

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    qapp.setOrganizationName("Scaling Workbench Tests")
    qapp.setApplicationName("Scaling Workbench Tests")
    yield
    for widget in QApplication.topLevelWidgets():
        widget.close()
        widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()


@pytest.fixture
def new_window(qtbot, tmp_path):
    """Opens a main window on a new project (the built-in presets and samples), shown and
    exposed: ``new_window()`` at 1600 x 900, ``new_window(size=None)`` at the size it picks."""
    from storage import Project
    from ui.main_window import MainWindow

    def open_window(size: tuple[int, int] | None = (1600, 900), name: str = "project"):
        path = tmp_path / f"{name}.swbproj"
        Project.create(path).close()
        window = MainWindow(Project.open(path))
        qtbot.addWidget(window)
        if size is not None:
            window.resize(*size)
        window.show()
        qtbot.waitExposed(window)
        return window

    return open_window


@pytest.fixture
def chart(qtbot):
    """A log-log chart of times against sizes, 900 x 560, shown and exposed."""
    from ui.charts import Chart

    chart = Chart(title="Time", x_label="Size", x_unit="B", y_label="Time", y_unit="s", log_x=True, log_y=True)
    qtbot.addWidget(chart)
    chart.resize(900, 560)
    chart.show()
    qtbot.waitExposed(chart)
    return chart
