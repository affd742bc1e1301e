"""Start the GUI: one QApplication, the main window on a project; the app's identity on a desktop.

``run_gui(path)`` opens PROJECT, or the default project in the user's data directory (created
and seeded on first start), with nothing to configure. A file that fails to open gets one
clear message, and the window falls back to the default project.

The application id below is the one name a Linux desktop knows the app by: Qt's desktop file
name (the Wayland app id), the ``.desktop`` file, the AppStream component and its launchable,
and the icon, all under ``packaging/`` and checked against this module by
``tests/test_packaging.py``. This module imports Qt only inside its functions, so the
command line's Qt-free commands and the desktop installer can read these names.

Smoke runs (the test suite, the bundle's check in ``.ci/run``) set
``SCALING_WORKBENCH_QUIT_AFTER_START``: a number of milliseconds after the main window is
shown, or ``stdin`` to wait until standard input reaches its end. The window then closes the
way a user closes it and the process exits with the event loop's code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import workbench

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication, QMainWindow

APP_NAME = "Scaling Workbench"
# Reverse DNS of the project's home, all lower case, no hyphen or underscore: valid as a D-Bus
# name, an AppStream component id (pedantic checks included) and a file name.
APP_ID = "io.github.scalingworkbench.workbench"
HOMEPAGE = "https://scalingworkbench.github.io/"
# The project file's MIME type (packaging/<APP_ID>.mime.xml): the glob is storage's
# FILE_SUFFIX, the magic is SQLite's header plus storage's PRAGMA application_id.
PROJECT_MIME_TYPE = "application/x-scaling-workbench-project"

QUIT_AFTER_START_ENV = "SCALING_WORKBENCH_QUIT_AFTER_START"


def packaging_dir() -> Path | None:
    """The folder with the desktop files and icons: inside the bundle, or the source tree's."""
    bundle = getattr(sys, "_MEIPASS", None)  # set by PyInstaller's bootloader
    candidates = [Path(bundle) / "packaging"] if bundle else []
    candidates.append(Path(__file__).resolve().parent.parent / "packaging")
    for folder in candidates:
        if (folder / f"{APP_ID}.desktop").is_file():
            return folder
    return None


def icon_path() -> Path | None:
    """The scalable application icon, or None when neither the bundle nor a clone is around."""
    folder = packaging_dir()
    path = folder / "icons/hicolor/scalable/apps" / f"{APP_ID}.svg" if folder else None
    return path if path is not None and path.is_file() else None


def app_icon() -> QIcon:
    """The window icon: the packaged SVG, else the icon theme's (after ``install-desktop``)."""
    from PySide6.QtGui import QIcon

    path = icon_path()
    fallback = QIcon(str(path)) if path is not None else QIcon()
    return QIcon.fromTheme(APP_ID, fallback)


def create_application(argv: list[str] | None = None) -> QApplication:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setOrganizationDomain("scaling-workbench.example")
    app.setApplicationVersion(workbench.__version__)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    return app


def _arm_quit_after_start(app: QApplication, window: QMainWindow) -> None:
    """Close ``window`` and leave the event loop once it is up, when the smoke-run hook asks."""
    value = os.environ.get(QUIT_AFTER_START_ENV, "").strip()
    if not value:
        return
    import faulthandler

    from PySide6.QtCore import QSocketNotifier, QTimer

    faulthandler.enable()  # a crash on the way out prints a Python traceback

    def close() -> None:
        if window.isWindowModified():  # closing would ask: nobody is there to answer
            print(f"scaling-workbench: {QUIT_AFTER_START_ENV}: the window has unsaved changes",
                  file=sys.stderr)
            app.exit(3)
            return
        window.close()
        app.quit()

    platform = app.platformName()
    print(f"scaling-workbench: main window shown on the {platform} platform", file=sys.stderr, flush=True)
    if value == "stdin":
        notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read, window)

        def readable() -> None:
            if not os.read(sys.stdin.fileno(), 4096):  # end of input
                notifier.setEnabled(False)
                close()

        notifier.activated.connect(readable)
        return
    try:
        delay_ms = int(value)
    except ValueError:
        delay_ms = -1
    if delay_ms < 0:
        print(f"scaling-workbench: {QUIT_AFTER_START_ENV} must be a number of milliseconds or "
              f"'stdin', not {value!r}", file=sys.stderr)
        delay_ms = 0
    QTimer.singleShot(delay_ms, close)


def run_gui(project: str | None = None) -> int:
    app = create_application()
    from ui.main_window import MainWindow

    drop_read_sources()
    window = MainWindow()
    window.statusBar().showMessage("Opening the project…")
    window.show()
    # The window is painted first; the project, and the database layer it needs, right after.
    window.after_first_paint(lambda: _open_start_project(app, window, project))
    return app.exec()


def _open_start_project(app, window, project: str | None) -> None:
    from storage import ProjectError, default_project_path, open_or_create_default
    from ui import dialogs

    # a log, an energy CSV, a PNG or a scenario file is read into a panel of a project: the
    # default one opens first, then the file goes to its panel (it had opened no project)
    into_a_panel = bool(project) and window.opens_in_a_panel(project)
    # open_path offers a recovery file and shows one clear message when the file fails to open
    if project and not into_a_panel and window.open_path(project, confirm=False):
        freeze_start_up_objects()
        _arm_quit_after_start(app, window)
        return
    default = default_project_path()
    if not (default.exists() and window.open_path(default, confirm=False)):
        try:
            window.set_project(open_or_create_default())
        except ProjectError as exc:
            dialogs.show_message(window, "Could not open the default project", str(exc))
    if into_a_panel and window.project is not None:
        window.open_path(project, confirm=False)  # the panel says what it could not read
    elif project:
        window.statusBar().showMessage(f"{Path(project).name} did not open; the default project is open instead",
                                       15000)
    freeze_start_up_objects()
    _arm_quit_after_start(app, window)


def drop_read_sources() -> None:
    """Let go of the source text read while the modules were imported.

    PySide6's import hook reads the source of every module imported after it (to see whether
    it names PySide6), and Python keeps each file it read in ``linecache``: by the first window
    about 4 MiB of text nobody reads again. Dropped before the window is built, its memory
    serves the window instead; a traceback reads the lines it prints again when it needs them."""
    import linecache

    linecache.clearcache()


def freeze_start_up_objects() -> None:
    """The objects made at start-up (modules, widgets, presets) live as long as the app: out of
    the garbage collector's way, so that its full collections, which walk every object, do not
    land in the middle of an edit or an animation step (about 2 ms each). The sources read
    while the project's modules were imported go first (:func:`drop_read_sources`)."""
    import gc

    drop_read_sources()
    gc.freeze()
