"""Start the GUI: one QApplication, the main window on a project."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

import workbench


def create_application(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("Scaling Workbench")
    app.setOrganizationName("Scaling Workbench")
    app.setApplicationVersion(workbench.__version__)
    return app


def run_gui(project: str | None = None) -> int:
    app = create_application()
    from ui.main_window import MainWindow

    window = MainWindow()
    window.show()
    return app.exec()
