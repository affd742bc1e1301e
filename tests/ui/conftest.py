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
