"""Start the GUI: one QApplication, the main window on a project.

``run_gui(path)`` opens PROJECT, or the default project in the user's data directory (created
and seeded on first start), with nothing to configure. A file that fails to open gets one
clear message, and the window falls back to the default project.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

import workbench


def create_application(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("Scaling Workbench")
    app.setOrganizationName("Scaling Workbench")
    app.setOrganizationDomain("scaling-workbench.example")
    app.setApplicationVersion(workbench.__version__)
    app.setDesktopFileName("io.github.scaling_workbench")
    return app


def run_gui(project: str | None = None) -> int:
    app = create_application()
    from storage import ProjectError, default_project_path, open_or_create_default
    from ui import dialogs
    from ui.main_window import MainWindow

    window = MainWindow()
    window.show()
    # open_path offers a recovery file and shows one clear message when the file fails to open
    if project and window.open_path(project, confirm=False):
        return app.exec()
    default = default_project_path()
    if not (default.exists() and window.open_path(default, confirm=False)):
        try:
            window.set_project(open_or_create_default())
        except ProjectError as exc:
            dialogs.show_message(window, "Could not open the default project", str(exc))
    if project:
        window.statusBar().showMessage(f"{Path(project).name} did not open; the default project is open instead",
                                       15000)
    return app.exec()
