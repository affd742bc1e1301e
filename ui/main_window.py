"""The main window: docked panels around one run plan, the project workflow, undo, export.

::

    +--------------------------------------------------------------------------------+
    | File  Edit  View  Export  Hardware  Help                                       |
    | Hardware [H100 SXM v]  GPUs [512]  Precision [BF16 v] [ ] sparse  ...          |  plan toolbar
    +-----------+--------------------------------------------------------------------+
    | Scenarios | [Run plan] [Roofline] [Collectives] [All-reduce] [Scaling] [Power] |  tabbed docks
    | browser   |                                                                    |
    |           |                     the active panel                               |
    +-----------+--------------------------------------------------------------------+
    | messages                          GPU-hours | energy | CO2e | cost of the run  |  status bar
    +--------------------------------------------------------------------------------+

State lives in three places, never mixed: the document (saved scenarios, presets and the
workspace: the run plan and the panels' scenarios, held by ``ui.document.Document``) in the
project file; per-user UI state (geometry,
layout, recent files, theme) in QSettings; edits in one window-level QUndoStack whose clean
state, together with ``project.dirty``, drives the title's ``[*]`` marker.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
    QShortcut,
    QUndoStack,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QUndoView,
    QVBoxLayout,
    QWidget,
)

import storage
from storage.constants import FILE_SUFFIX
from storage.errors import ProjectChangedOnDiskError, ProjectError, ProjectLockedError
from ui import dialogs, plain
from ui import theme as th
from ui.catalog import HardwareCatalog
from ui.commands import push_override, push_scenario_edit
from ui.context_toolbar import ContextModel, ContextToolbar
from ui.document import Document
from ui.panels import PANELS
from ui.panels import record as panel_record
from ui.run_summary import summary_runs
from ui.scenario_browser import ScenarioBrowser
from ui.widgets.steady_label import SteadyLabel
from workbench.scenarios import scenario_from_json

if TYPE_CHECKING:
    from storage import Project
    from ui.export import Caption
    from ui.preset_manager import PresetManagerDialog

log = logging.getLogger(__name__)

APP_NAME = "Scaling Workbench"
#: Bump when the set of docks changes: Qt then ignores a stale saved layout by itself.
LAYOUT_VERSION = 2
MAX_RECENT = 8
RECOVERY_INTERVAL_MS = 3 * 60 * 1000
WORKSPACE_KEY = "workspace"
BROWSER_WIDTH = 330
SCENARIO_SUFFIXES = (".swbscenario", ".json")
#: How long start-up work waits for a window that is never painted (started minimised).
FIRST_PAINT_WAIT_MS = 1000
SHOWN_AFTER_PAINT_MS = 15

# QSettings keys
KEY_GEOMETRY = "window/geometry"
KEY_STATE = "window/state"
KEY_RECENT = "recentFiles"
KEY_THEME = "view/theme"


def _settings() -> QSettings:
    return QSettings()


def _repaint_in_one_pass(window: QWidget, event) -> None:
    """Before ``window`` (the main window, a floating panel, the presentation) repaints: every
    chart an edit changed in it is painted in this one repaint, not in one pass per chart."""
    if event.type() == QEvent.Type.UpdateRequest:
        charts = sys.modules.get("ui.charts")  # none before the first panel is built
        if charts is not None:
            charts.hand_over_scene_changes(window)


class _PanelDock(QDockWidget):
    """A panel's dock: floating, it is a window of its own and repaints as one too."""

    def event(self, event) -> bool:
        _repaint_in_one_pass(self, event)
        return super().event(event)


class PresentationWindow(QWidget):
    """A top-level window holding one panel full screen; Esc or F11 ends it."""

    def __init__(self, owner: MainWindow):
        super().__init__(owner, Qt.WindowType.Window)
        self.setObjectName("presentationWindow")
        self.owner = owner
        self.setWindowTitle(f"{APP_NAME}: presentation")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        keys = {QKeySequence(Qt.Key.Key_Escape), QKeySequence(Qt.Key.Key_F11),
                QKeySequence(QKeySequence.StandardKey.FullScreen)}
        for key in (k for k in keys if not k.isEmpty()):
            shortcut = QShortcut(key, self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(owner.exit_presentation)

    def event(self, event) -> bool:
        _repaint_in_one_pass(self, event)
        return super().event(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt naming
        if self.owner.presentation_active():
            self.owner.exit_presentation()
        super().closeEvent(event)


class _PanelPlaceholder(QWidget):
    """What a dock holds until its panel is built (the moment its tab is first shown)."""

    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("panelPlaceholder")
        layout = QVBoxLayout(self)
        label = QLabel(f"Opening {title}…", self)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setEnabled(False)
        layout.addWidget(label)


def _in_front(dock: QDockWidget) -> bool:
    """Whether a dock can be seen: floating, or docked and not behind another tab (Qt calls a
    dock behind a tab visible)."""
    return dock.isVisible() and (dock.isFloating() or not dock.visibleRegion().isEmpty())


class _FirstPaint(QObject):
    """Calls ``then`` once ``window`` has been painted for the first time (after that repaint
    is flushed), or after ``FIRST_PAINT_WAIT_MS`` if it is never painted (started minimised)."""

    def __init__(self, window: QWidget, then):
        super().__init__(window)
        self._window = window
        self._then = then
        self._done = False
        QApplication.instance().installEventFilter(self)
        QTimer.singleShot(FIRST_PAINT_WAIT_MS, self, self._finish)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt naming
        if (event.type() == QEvent.Type.Paint and not self._done and obj.isWidgetType()
                and obj.window() is self._window):
            QApplication.instance().removeEventFilter(self)
            # once this repaint has been flushed, and a moment more for the compositor to show
            # it before the GUI thread is busy (opening the project takes a good half second)
            QTimer.singleShot(SHOWN_AFTER_PAINT_MS, self, self._finish)
        return False

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        QApplication.instance().removeEventFilter(self)
        self._then()


class PanelViews(Mapping):
    """The window's panels by kind, each built the first time it is asked for. Iterating gives
    the kinds without building anything; :meth:`built` gives the panels that exist."""

    def __init__(self, kinds: list[str], build):
        self._kinds = list(kinds)
        self._build = build
        self._built: dict[str, Any] = {}

    def __getitem__(self, kind: str):
        panel = self._built.get(kind)
        if panel is None:
            if kind not in self._kinds:
                raise KeyError(kind)
            panel = self._built[kind] = self._build(kind)
        return panel

    def __contains__(self, kind: object) -> bool:
        return kind in self._kinds

    def __iter__(self):
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def is_built(self, kind: str) -> bool:
        return kind in self._built

    def built(self) -> dict[str, Any]:
        return dict(self._built)


class MainWindow(QMainWindow):
    """Docked panels, the shared context toolbar, the project workflow, undo and export."""

    def __init__(self, project: Project | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("MainWindow")
        self.setWindowTitle(APP_NAME)
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)
        self.setDockOptions(QMainWindow.DockOption.AllowTabbedDocks | QMainWindow.DockOption.AllowNestedDocks
                            | QMainWindow.DockOption.AnimatedDocks)
        self.setTabPosition(Qt.DockWidgetArea.AllDockWidgetAreas, QTabWidget.TabPosition.North)

        self.project: Project | None = None
        self.undo_stack = QUndoStack(self)
        self.catalog = HardwareCatalog(None, self)
        self.document = Document(self.catalog, self.undo_stack, self)
        self.context_model = ContextModel(self.document, self)
        self.panels = PanelViews([], lambda kind: None)  # filled by _build_panels
        self.docks: dict[str, QDockWidget] = {}
        self._active_kind = PANELS[0].kind
        self._layout_restored = False
        self._painted = False
        self._after_paint: list = []
        self._paint_watch = None
        self._presentation: PresentationWindow | None = None
        self._presentation_state: tuple[str, QByteArray, QWidget] | None = None
        self._preset_manager = None
        self._open_notes: list[str] = []
        self._explain_dialogs: list[QWidget] = []
        self._compare_active: set[str] = set()
        self._closed = False

        self._build_toolbar()
        self._build_panels()
        self._build_browser()
        self._build_status_bar()
        self._build_actions()
        self._build_menus()
        self._default_layout()

        self._catch_file_drops()
        self.undo_stack.cleanChanged.connect(self._update_modified)
        self.undo_stack.indexChanged.connect(self._update_modified)
        self.document.planChanged.connect(self._update_run_summary)
        QApplication.instance().focusChanged.connect(self._on_focus_changed)

        self.recovery_timer = QTimer(self)
        self.recovery_timer.setObjectName("recoveryTimer")
        self.recovery_timer.setInterval(RECOVERY_INTERVAL_MS)
        self.recovery_timer.timeout.connect(self.write_recovery)
        self.recovery_timer.start()

        self.apply_theme_mode(self.theme_mode(), store=False)
        if project is not None:
            self.set_project(project)
        else:
            self.document.restore(None, self._defaults())
            self._update_title()

    # =========================================================================================
    # construction
    # =========================================================================================
    def _build_toolbar(self) -> None:
        self.context_toolbar = ContextToolbar(self.context_model, self.catalog, self)
        self.context_toolbar.setObjectName("toolbar.context")
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.context_toolbar)
        self.context_toolbar.messageChanged.connect(self._show_field_message)

    def _build_panels(self) -> None:
        """A dock per panel; each panel itself is built when its tab is first shown (or first
        asked for): a tab nobody opens costs nothing at start-up."""
        for index, record in enumerate(PANELS):
            kind = record.kind
            dock = _PanelDock(record.title, self)
            dock.setObjectName(f"dock.{kind}")
            dock.setWidget(_PanelPlaceholder(record.title, dock))
            dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                             | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                             | QDockWidget.DockWidgetFeature.DockWidgetClosable)
            dock.visibilityChanged.connect(lambda visible, kind=kind: self._on_dock_visible(kind, visible))
            toggle = dock.toggleViewAction()
            toggle.setText(record.title)
            toggle.setShortcut(QKeySequence(f"Ctrl+Shift+{index + 1}"))
            self.docks[kind] = dock
            self.document.declare(kind, record.default(), saves_scenario=record.saves_scenario)
        self.panels = PanelViews([r.kind for r in PANELS], self._make_panel)
        self.document.set_view_builder(lambda kind: self.panels[kind])

    def _make_panel(self, kind: str):
        """Build panel ``kind`` from the document: its scenario as the document keeps it."""
        record = panel_record(kind)
        dock = self.docks[kind]
        panel = record.build(self.document)
        panel.saveRequested.connect(lambda kind=kind: self.save_panel_scenario(kind))
        panel.compareRequested.connect(lambda kind=kind: self.compare_in_panel(kind))
        panel.exportRequested.connect(lambda fmt, kind=kind: self.export_interactive(fmt, kind))
        # the panel's GPU, GPU count, model size ... fields edit the run plan
        panel.context_sink = lambda changes: self.document.edit_plan(**changes)
        # off screen until its dock says it is in front (visibilityChanged): a dock behind
        # another tab would draw (again) on the way
        panel.set_on_screen(False)
        self.document.attach(panel)
        placeholder = dock.widget()
        dock.setWidget(panel)
        if isinstance(placeholder, _PanelPlaceholder):
            placeholder.deleteLater()
        panel.set_on_screen(_in_front(dock))
        return panel

    def _build_browser(self) -> None:
        self.browser = ScenarioBrowser(None, self)
        self.browser.setObjectName("scenarioBrowser")
        self.browser.openRequested.connect(self.open_saved_scenario)
        self.browser.compareRequested.connect(self.compare_saved_scenarios)
        self.browser.projectChanged.connect(self._on_project_changed)
        self.browser_dock = QDockWidget("Scenarios", self)
        self.browser_dock.setObjectName("dock.browser")
        self.browser_dock.setWidget(self.browser)
        self.browser_dock.setMinimumWidth(200)
        self.browser_dock.toggleViewAction().setText("Scenario browser")
        self.browser_dock.toggleViewAction().setShortcut(QKeySequence("Ctrl+Shift+B"))

        self.history = QUndoView(self.undo_stack, self)
        self.history.setObjectName("undoHistory")
        self.history.setEmptyLabel("Opened project")
        self.history_dock = QDockWidget("Undo history", self)
        self.history_dock.setObjectName("dock.history")
        self.history_dock.setWidget(self.history)
        self.history_dock.toggleViewAction().setText("Undo history")

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        bar.setObjectName("statusBar")
        self.summary_label = SteadyLabel(self)
        self.summary_label.setObjectName("runSummary")
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        # right-aligned: the room it keeps to grow into stays on the left, the figures where
        # they were against the window's edge
        self.summary_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.summary_label.setContentsMargins(8, 0, 8, 0)
        bar.addPermanentWidget(self.summary_label)

    def _plain_undo_tips(self) -> None:
        for action in (self.action_undo, self.action_redo):
            action.setToolTip(plain.tooltip(plain.without_mnemonic(action.text())))

    def _action(self, text: str, slot, shortcut=None, name: str = "", tip: str = "") -> QAction:
        action = QAction(text, self)
        if name:
            action.setObjectName(name)
        if shortcut is not None:
            if isinstance(shortcut, (list, tuple)):
                action.setShortcuts([QKeySequence(s) for s in shortcut])
            else:
                action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        self.addAction(action)  # shortcuts work even when the menu bar is hidden
        return action

    def _build_actions(self) -> None:
        sk = QKeySequence.StandardKey
        self.action_new = self._action("&New Project…", self.new_project, sk.New, "action.new",
                                       "Create a new project with the built-in presets and samples")
        self.action_open = self._action("&Open…", self.open_dialog, sk.Open, "action.open",
                                        "Open a project, or an exported PNG to reopen its scenario")
        self.action_save = self._action("&Save", self.save, sk.Save, "action.save", "Save the project")
        self.action_save_as = self._action("Save &As…", self.save_as, sk.SaveAs, "action.saveAs",
                                           "Save the project under a new name")
        self.action_close = self._action("&Close Project", self.close_project, sk.Close, "action.close",
                                         "Close this project and return to the default project")
        self.action_import = self._action("&Import Scenario…", self.import_scenario_dialog, None,
                                          "action.importScenario", "Add a scenario file to the project")
        self.action_export_scenario = self._action(
            "E&xport Scenario…", self.export_scenario_dialog, None, "action.exportScenario",
            "Write the active panel's scenario to a file")
        # some platforms (and their themes) bind no key to StandardKey.Quit: Ctrl+Q then
        quit_keys = sk.Quit if QKeySequence.keyBindings(sk.Quit) else "Ctrl+Q"
        self.action_quit = self._action("&Quit", self.close, quit_keys, "action.quit")
        self.action_quit.setMenuRole(QAction.MenuRole.QuitRole)

        self.action_undo = self.undo_stack.createUndoAction(self, "&Undo")
        self.action_undo.setShortcuts(sk.Undo)
        self.action_undo.setObjectName("action.undo")
        self.action_redo = self.undo_stack.createRedoAction(self, "&Redo")
        self.action_redo.setShortcuts(sk.Redo)
        self.action_redo.setObjectName("action.redo")
        self.addAction(self.action_undo)
        self.addAction(self.action_redo)
        # The commands' texts name presets and scenarios: their tooltips must not be read as markup.
        self.undo_stack.undoTextChanged.connect(self._plain_undo_tips)
        self.undo_stack.redoTextChanged.connect(self._plain_undo_tips)

        self.action_export_png = self._action("Chart as &PNG…", lambda: self.export_interactive("png"),
                                              "Ctrl+E", "action.exportPng")
        self.action_export_svg = self._action("Chart as &SVG…", lambda: self.export_interactive("svg"),
                                              "Ctrl+Shift+E", "action.exportSvg")
        self.action_export_csv = self._action("Numbers as &CSV…", lambda: self.export_interactive("csv"),
                                              None, "action.exportCsv")

        # the platform's full-screen key (F11 on KDE and Windows, Ctrl+F11 on GNOME), and F11 everywhere
        full_screen = [QKeySequence(sk.FullScreen).toString(), "F11"]
        self.action_presentation = self._action("&Presentation Mode", self.toggle_presentation,
                                                list(dict.fromkeys(k for k in full_screen if k)),
                                                "action.presentation",
                                                "Show the active panel full screen, large and thick")
        self.action_presentation.setCheckable(True)
        self.action_reset_layout = self._action("&Reset Layout", self.reset_layout, None, "action.resetLayout")
        self.raise_actions = []
        for i, record in enumerate(PANELS[:9]):
            action = self._action(f"Show {record.title}", lambda kind=record.kind: self.raise_panel(kind),
                                  f"Ctrl+{i + 1}", f"action.raise.{record.kind}")
            self.raise_actions.append(action)

        self.theme_group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for mode, text in (("system", "&System"), ("light", "&Light"), ("dark", "&Dark")):
            action = QAction(text, self)
            action.setObjectName(f"action.theme.{mode}")
            action.setCheckable(True)
            action.triggered.connect(lambda _c=False, mode=mode: self.apply_theme_mode(mode))
            self.theme_group.addAction(action)
            self.theme_actions[mode] = action

        self.action_presets = self._action("Hardware &Presets…", self.show_preset_manager, None,
                                           "action.presets",
                                           "Browse the built-in presets and edit your own")
        self.action_about = self._action("&About Scaling Workbench", self.show_about, None, "action.about")
        self.action_explain = self._action("&Explain This Panel", lambda: self.explain_panel(), sk.HelpContents,
                                           "action.explain",
                                           "What the active panel computes, and from which formulas")
        self.action_user_guide = self._action("&User Guide", self.show_user_guide, None, "action.userGuide",
                                              "The guide that ships with the app")
        self.action_about_qt = self._action("About &Qt", QApplication.aboutQt, None, "action.aboutQt")
        self._user_guide = None

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.action_new)
        file_menu.addAction(self.action_open)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.setObjectName("menu.recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.action_save)
        file_menu.addAction(self.action_save_as)
        file_menu.addAction(self.action_close)
        file_menu.addSeparator()
        file_menu.addAction(self.action_import)
        file_menu.addAction(self.action_export_scenario)
        file_menu.addSeparator()
        file_menu.addAction(self.action_quit)
        self.file_menu = file_menu

        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.action_undo)
        edit_menu.addAction(self.action_redo)
        self.edit_menu = edit_menu

        view_menu = bar.addMenu("&View")
        view_menu.addAction(self.browser_dock.toggleViewAction())
        view_menu.addAction(self.history_dock.toggleViewAction())
        view_menu.addSeparator()
        for kind in self.docks:
            view_menu.addAction(self.docks[kind].toggleViewAction())
        view_menu.addSeparator()
        go_menu = view_menu.addMenu("&Go to Panel")
        for action in self.raise_actions:
            go_menu.addAction(action)
        view_menu.addAction(self.action_presentation)
        theme_menu = view_menu.addMenu("&Theme")
        for action in self.theme_actions.values():
            theme_menu.addAction(action)
        view_menu.addSeparator()
        view_menu.addAction(self.action_reset_layout)
        self.view_menu = view_menu

        export_menu = bar.addMenu("E&xport")
        export_menu.addAction(self.action_export_png)
        export_menu.addAction(self.action_export_svg)
        export_menu.addAction(self.action_export_csv)
        self.export_menu = export_menu

        hardware_menu = bar.addMenu("&Hardware")
        hardware_menu.addAction(self.action_presets)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.action_explain)
        help_menu.addAction(self.action_user_guide)
        help_menu.addSeparator()
        help_menu.addAction(self.action_about)
        help_menu.addAction(self.action_about_qt)
        self.help_menu = help_menu

    def _default_layout(self) -> None:
        """Browser narrow on the left, the five panels tabbed in the rest, roofline in front.

        Both live in the left dock area, split side by side: the window has no central
        widget, and docks that share one area size predictably (``resizeDocks``)."""
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.browser_dock)
        self.browser_dock.setFloating(False)
        self.browser_dock.show()
        docks = list(self.docks.values())
        first = docks[0]
        first.setFloating(False)
        self.splitDockWidget(self.browser_dock, first, Qt.Orientation.Horizontal)
        first.show()
        for dock in docks[1:]:
            dock.setFloating(False)
            self.tabifyDockWidget(first, dock)
            dock.show()
        first.raise_()
        # the undo history sits under the browser, closed until asked for (View menu)
        self.history_dock.setFloating(False)
        self.splitDockWidget(self.browser_dock, self.history_dock, Qt.Orientation.Vertical)
        self.history_dock.hide()
        self._active_kind = PANELS[0].kind
        self._fit_browser()

    # =========================================================================================
    # layout persistence
    # =========================================================================================
    def showEvent(self, event) -> None:  # noqa: N802 - Qt naming
        if not self._layout_restored:
            self._layout_restored = True
            self.restore_layout()
            self._paint_watch = _FirstPaint(self, self._after_first_paint)
        super().showEvent(event)

    def after_first_paint(self, callback) -> None:
        """Run ``callback`` once the window has been painted (now, if it has): start-up work
        that can wait a moment (opening the project) comes after the window is on screen."""
        if self._painted:
            callback()
        else:
            self._after_paint.append(callback)

    def _after_first_paint(self) -> None:
        self._painted = True
        self._paint_watch = None
        callbacks, self._after_paint = self._after_paint, []
        for callback in callbacks:
            callback()
        for kind in self.docks:  # the panels in front, built now that the window is on screen
            self._build_if_shown(kind)

    def fit_to_screen(self, share: float = 0.9) -> None:
        """The first start: most of the screen the window is on, centred (a fixed 1600 x 960
        is cramped on a 4K screen and too big for a 1366 x 768 laptop)."""
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        width = max(min(area.width(), 1024), int(area.width() * share))
        height = max(min(area.height(), 700), int(area.height() * share))
        self.resize(width, height)
        self.move(area.x() + (area.width() - width) // 2, area.y() + (area.height() - height) // 2)

    def restore_layout(self) -> bool:
        settings = _settings()
        geometry = settings.value(KEY_GEOMETRY, QByteArray(), type=QByteArray)
        state = settings.value(KEY_STATE, QByteArray(), type=QByteArray)
        if geometry is not None and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        elif not self.testAttribute(Qt.WidgetAttribute.WA_Resized):  # nobody chose a size yet
            self.fit_to_screen()
        restored = bool(state is not None and not state.isEmpty() and self.restoreState(state, LAYOUT_VERSION))
        if not restored:
            # dock sizes only take once the window has its size: after the show is processed
            QTimer.singleShot(0, self._fit_browser)
        return restored

    def _fit_browser(self) -> None:
        first = self.docks[PANELS[0].kind]
        # a sixth of a laptop's 1366 px, BROWSER_WIDTH on a wide screen: the charts get the rest
        browser = max(self.browser_dock.minimumWidth(), min(BROWSER_WIDTH, int(self.width() * 0.17)))
        rest = max(400, self.width() - browser)
        self.resizeDocks([self.browser_dock, first], [browser, rest], Qt.Orientation.Horizontal)

    def save_layout(self) -> None:
        settings = _settings()
        settings.setValue(KEY_GEOMETRY, self.saveGeometry())
        settings.setValue(KEY_STATE, self.saveState(LAYOUT_VERSION))

    def reset_layout(self) -> None:
        if self.presentation_active():
            self.exit_presentation()
        settings = _settings()
        settings.remove(KEY_STATE)
        self._default_layout()
        self.statusBar().showMessage("Layout reset", 4000)

    # =========================================================================================
    # panels, the active panel, the shared context
    # =========================================================================================
    def panel(self, kind: str):
        return self.panels[kind]

    def active_kind(self) -> str:
        return self._active_kind

    def active_panel(self):
        return self.panels[self._active_kind]

    def set_active_panel(self, kind: str) -> None:
        if kind in self.panels:
            self._active_kind = kind

    def raise_panel(self, kind: str) -> None:
        dock = self.docks[kind]
        if dock.isHidden():
            dock.show()
        dock.raise_()
        self._active_kind = kind
        self.panels[kind].setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _on_dock_visible(self, kind: str, visible: bool) -> None:
        if visible and not self.docks[kind].isFloating():
            self._active_kind = kind
        if visible and not self.panels.is_built(kind):
            # the window's first show shows every dock, tabs behind others included, before
            # the tab bars hide them: build the panel once the show has settled, if still shown
            QTimer.singleShot(0, self, lambda kind=kind: self._build_if_shown(kind))
            return
        panel = self.panels.built().get(kind)
        # a presented panel is on screen in the presentation, whatever its dock does; a floating
        # one is in a window of its own, and its dock says when that is shown
        if panel is not None and not isinstance(panel.window(), PresentationWindow):
            panel.set_on_screen(visible)

    def _build_if_shown(self, kind: str) -> None:
        if not self._painted:
            return  # the first paint shows the window first; its panels come right after
        dock = self.docks[kind]
        if not self._closed and _in_front(dock) and not self.panels.is_built(kind):
            self.panels[kind]  # builds it

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        widget = new
        while widget is not None:
            for kind, panel in self.panels.built().items():
                if widget is panel:
                    self._active_kind = kind
                    return
            widget = widget.parentWidget()

    def _show_field_message(self, message: str) -> None:
        if message:
            self.statusBar().showMessage(message)
        else:
            self.statusBar().clearMessage()

    # =========================================================================================
    # run summary (status bar)
    # =========================================================================================
    def run_summary(self):
        """The planned run's prediction (days, GPU-hours, energy, CO2e, cost), or None."""
        return self.document.prediction()

    def _update_run_summary(self, *_args) -> None:
        if self.project is None:  # starting: the default plan's numbers are not the project's
            self.summary_label.clear()
            self.summary_label.setToolTip("")
            return
        plan = self.document.plan()
        runs, tip = summary_runs(self.document.prediction(), plan, self.catalog.name(plan.hardware),
                                 self.document.prediction_problem())
        self.summary_label.show_runs(runs)  # its size only grows: no relayout per edit
        if tip != self.summary_label.toolTip():
            self.summary_label.setToolTip(tip)

    # =========================================================================================
    # project life cycle
    # =========================================================================================
    def is_modified(self) -> bool:
        dirty = self.project is not None and not self.project.closed and self.project.dirty
        return dirty or not self.undo_stack.isClean()

    def _update_modified(self, *_args) -> None:
        modified = self.is_modified()
        if modified != self.isWindowModified():  # Qt sets the title again even when it is the same
            self.setWindowModified(modified)
        self.action_save.setEnabled(self.project is not None)
        if not modified and self.project is not None and not self.project.closed:
            # undone back to the saved state: a recovery file written meanwhile holds changes
            # the user took back, and must not be offered after a crash
            self.project.discard_written_recovery()

    def _update_title(self) -> None:
        name = self.project.name if self.project is not None else "No project"
        if self.project is not None and self.project.read_only:
            # the status-bar note fades after a few seconds; the title says it while it is true
            name += " (read-only)"
        self.setWindowTitle(f"{name}[*] - {APP_NAME}")
        if self.project is not None:
            self.setWindowFilePath(str(self.project.path))
        self._update_modified()

    def _on_project_changed(self) -> None:
        """The browser renamed, duplicated, deleted or annotated scenarios."""
        self._update_modified()

    def set_project(self, project: Project) -> None:
        """Show ``project`` (closing nothing: callers close the previous one after asking)."""
        old = self.project
        self.project = project
        if self._preset_manager is not None:  # it edits the previous project's presets
            self._preset_manager.close()
            self._preset_manager.deleteLater()
            self._preset_manager = None
        self.document.pause(True)  # the new presets wait for the new workspace: one follow
        try:
            self.catalog.set_project(project)
        finally:
            self.document.pause(False)
        self.browser.set_project(project)
        for panel in self.panels.built().values():  # a panel not built yet has nothing pending
            panel.drop_pending_work()  # a log still being read was for the previous project
        self.undo_stack.clear()
        message = self.restore_workspace()
        self.undo_stack.setClean()
        if old is not None and old is not project and not old.closed:
            old.close()
        self._add_recent(project.path)
        self._update_title()
        # One status line for everything worth knowing about this open (each showMessage
        # would replace the last).
        notes = [message] if message else []
        notes += list(getattr(project, "notices", ()))
        if project.read_only and not any("read-only" in note for note in notes):
            notes.append(f"read-only ({project.read_only_reason}); use Save As to keep changes")
        self._open_notes = notes
        self._show_open_notes(project)
        # Which saved items cannot be loaded means parsing every payload (half a second for
        # 10,000 scenarios): counted a frame's worth at a time once the project is shown, so
        # edits are answered meanwhile, then added here.
        QTimer.singleShot(50, self, lambda p=project: self._count_problems(p))  # dropped with the window

    def _show_open_notes(self, project: Project) -> None:
        notes = self._open_notes
        if notes:
            self.statusBar().showMessage(f"{project.name}: " + "; ".join(notes), 20000)
        else:
            self.statusBar().showMessage(f"Opened {project.path}", 5000)

    #: rows looked at per check_items_step call, and how long one turn of the event loop may
    #: spend on them: a machine that parses slowly does fewer rows a turn, so a repaint or an
    #: edit waiting behind the count is never held up by more than about this
    COUNT_BATCH = 25
    COUNT_TURN_S = 0.008

    def _count_problems(self, project: Project) -> None:
        if project is not self.project or project.closed:
            return  # another project was opened meanwhile
        deadline = time.perf_counter() + self.COUNT_TURN_S
        try:
            done = project.check_items_step(self.COUNT_BATCH)
            while not done and time.perf_counter() < deadline:
                done = project.check_items_step(self.COUNT_BATCH)
        except ProjectError as exc:
            log.warning("could not check the saved items of %s: %s", project.path, exc)
            return
        if done:
            self._report_problems(project)
        else:
            QTimer.singleShot(0, self, lambda: self._count_problems(project))

    def _report_problems(self, project: Project) -> None:
        if project is not self.project or project.closed:
            return
        problems = project.problems
        if problems:
            self._open_notes = [*self._open_notes, f"{len(problems)} item(s) cannot be loaded: {problems[0]}"]
            self._show_open_notes(project)

    def _confirm_discard(self) -> bool:
        """Before losing unsaved changes: True to go on (saved or discarded), False to stop."""
        if self.project is None or not self.is_modified():
            return True
        answer = dialogs.ask_save_changes(self, self.project.name)
        if answer == dialogs.SAVE:
            return self.save()
        return answer == dialogs.DISCARD

    @staticmethod
    def _holds_a_scenario(path: str | Path) -> bool:
        """A PNG export or a scenario file: its scenario opens in its panel."""
        suffix = Path(path).suffix.lower()
        return suffix == ".png" or suffix in SCENARIO_SUFFIXES

    def opens_in_a_panel(self, path: str | Path) -> bool:
        """Whether ``path`` is read into a panel of the open project (a PNG or scenario file, a
        training log, an energy CSV) rather than opened as a project."""
        return self._holds_a_scenario(path) or self._data_panel_for(path) is not None

    def open_path(self, path: str | Path, *, confirm: bool = True) -> bool:
        """Open a project file (or a PNG/scenario file, whose scenario opens in its panel)."""
        path = Path(path)
        if self._holds_a_scenario(path):
            return self.open_scenario_file(path)
        if self._data_panel_for(path) is not None:
            return self.open_measurement(path)
        if self.project is not None and not self.project.closed and path.resolve() == self.project.path.resolve():
            self.statusBar().showMessage(f"{path.name} is already open", 4000)
            return True
        if confirm and not self._confirm_discard():
            return False
        use_recovery = False
        recovery = storage.Project.recovery_for(path) if path.exists() else None
        if recovery is not None:
            use_recovery = dialogs.ask_recover(self, path, recovery)
            if not use_recovery:
                storage.Project.discard_recovery(path)
        try:
            project = storage.Project.open(path, use_recovery=use_recovery)
        except ProjectLockedError as exc:  # busy, not broken: it stays in the recent files
            dialogs.show_message(self, "The project is busy", str(exc))
            return False
        except ProjectError as exc:
            dialogs.show_message(self, "Could not open the project", str(exc))
            self._remove_recent(path)
            return False
        self.set_project(project)
        return True

    def open_dialog(self) -> bool:
        # training logs and energy CSVs open in the Plan vs actual panel (before "All files")
        entries = "".join(f";;{r.open_filter}" for r in PANELS if r.opens and r.open_filter and r.kind in self.panels)
        filters = dialogs.OPEN_FILTER.replace(";;All files (*)", f"{entries};;All files (*)")
        path = dialogs.ask_open_path(self, "Open project or exported chart", filters, self._dialog_dir())
        return self.open_path(path) if path else False

    def _data_panel_for(self, path: str | Path) -> str | None:
        """The kind of the panel that reads data files like ``path`` (a training log, an
        energy CSV), from the registry; None for a project, scenario or image."""
        suffix = Path(path).suffix.lower()
        return next((r.kind for r in PANELS if suffix in r.opens and r.kind in self.panels), None)

    def open_measurement(self, path: str | Path) -> bool:
        """A data file (a training log, an energy log): read into the panel that reads it (one
        undo step), which comes to the front and says what it could not read (a long log: once
        its reading, on a thread of its own, ends)."""
        kind = self._data_panel_for(path)
        if kind is None:
            return False
        self.raise_panel(kind)
        return self.panels[kind].load_file(path)

    def new_project(self) -> bool:
        if not self._confirm_discard():
            return False
        path = dialogs.ask_save_path(self, "New project", dialogs.PROJECT_FILTER, self._dialog_dir())
        if not path:
            return False
        path = Path(path)
        if not path.suffix:
            path = path.with_suffix(FILE_SUFFIX)
        try:
            # the file dialog has asked before replacing an existing file
            project = storage.Project.create(path, overwrite=path.exists())
        except (ProjectError, ValueError) as exc:
            dialogs.show_message(self, "Could not create the project", str(exc))
            return False
        self.set_project(project)
        return True

    def close_project(self) -> bool:
        """Close the project and go back to the default project."""
        if not self._confirm_discard():
            return False
        current = self.project
        try:
            default = storage.open_or_create_default()
        except ProjectError as exc:
            dialogs.show_message(self, "Could not open the default project", str(exc))
            return False
        if current is not None and not current.closed:
            current.close()
        self.project = None
        self.set_project(default)
        return True

    def workspace_json(self) -> str:
        return self.document.workspace_json(self._active_kind)

    def _defaults(self) -> dict[str, Any]:
        return {record.kind: record.default() for record in PANELS}

    def restore_workspace(self) -> str:
        """Put the project's saved workspace (run plan, panel scenarios) back; defaults when
        there is none. Returns a message for the status bar when something was not restored."""
        text = self.project.get_meta(WORKSPACE_KEY) if self.project is not None else None
        active, problems = self.document.restore(text, self._defaults())
        self.context_toolbar.sync()
        if active in self.docks:
            self.docks[active].raise_()
            self._active_kind = active
        self._update_run_summary()
        if problems:
            return "Workspace: " + "; ".join(problems)
        return ""

    def _write_workspace(self) -> None:
        self.project.set_meta(WORKSPACE_KEY, self.workspace_json())

    def save(self) -> bool:
        if self.project is None:
            return False
        if self.project.read_only:
            return self.save_as()
        try:
            self._write_workspace()
            try:
                self.project.save()
            except ProjectChangedOnDiskError as exc:
                # Another program (or a second copy of this app) wrote the file meanwhile.
                answer = dialogs.ask_overwrite_external(self, self.project.name, str(exc))
                if answer == dialogs.SAVE_AS:
                    return self.save_as()
                if answer != dialogs.OVERWRITE:
                    return False
                self.project.save(overwrite_external=True)
        except ProjectError as exc:
            dialogs.show_message(self, "Could not save the project", str(exc))
            self._update_modified()
            return False
        self.undo_stack.setClean()
        self._update_title()
        self.statusBar().showMessage(f"Saved {self.project.path}", 5000)
        return True

    def save_as(self) -> bool:
        if self.project is None:
            return False
        path = dialogs.ask_save_path(self, "Save project as", dialogs.PROJECT_FILTER, str(self.project.path))
        if not path:
            return False
        path = Path(path)
        if not path.suffix:
            path = path.with_suffix(FILE_SUFFIX)
        try:
            self._write_workspace()
            self.project.save_as(path)
        except ProjectError as exc:
            dialogs.show_message(self, "Could not save the project", str(exc))
            self._update_modified()
            return False
        self.undo_stack.setClean()
        self._add_recent(path)
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def write_recovery(self) -> Path | None:
        """Called by the recovery timer: the working copy, with the workspace, to the recovery file."""
        if self.project is None or self.project.closed or not self.is_modified():
            return None
        try:
            # the workspace goes into the recovery file only: undoing back to the saved state
            # afterwards leaves nothing unsaved (and no '*' in the title)
            return self.project.write_recovery(meta={WORKSPACE_KEY: self.workspace_json()})
        except ProjectError as exc:
            self.statusBar().showMessage(f"Could not write the recovery file: {exc}", 10000)
            return None

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt naming
        if self.presentation_active():
            self.exit_presentation()
        if not self._confirm_discard():
            event.ignore()
            return
        self.save_layout()
        self.recovery_timer.stop()
        if self._preset_manager is not None:
            # it listens to the undo stack: delete it before the window (and the stack) go
            self._preset_manager.close()
            self._preset_manager.deleteLater()
            self._preset_manager = None
        if self.project is not None and not self.project.closed:
            self.project.close()
        app = QApplication.instance()
        if app is not None and not self._closed:
            app.focusChanged.disconnect(self._on_focus_changed)
        self._closed = True
        event.accept()
        super().closeEvent(event)

    # -- recent files ----------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = _settings().value(KEY_RECENT, [], type=list)
        return [str(v) for v in value if v][:MAX_RECENT]

    def _add_recent(self, path: Path) -> None:
        text = str(Path(path).resolve())
        files = [f for f in self.recent_files() if f != text]
        _settings().setValue(KEY_RECENT, [text, *files][:MAX_RECENT])

    def _remove_recent(self, path: Path) -> None:
        text = str(Path(path).resolve())
        _settings().setValue(KEY_RECENT, [f for f in self.recent_files() if f != text])

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for i, name in enumerate(files):
            action = self.recent_menu.addAction(f"&{i + 1} {Path(name).name}")
            action.setToolTip(name)
            action.setStatusTip(name)
            action.triggered.connect(lambda _c=False, name=name: self.open_path(name))
        if not files:
            self.recent_menu.addAction("(none)").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear Menu", lambda: _settings().setValue(KEY_RECENT, []))

    def _dialog_dir(self) -> str:
        if self.project is not None:
            return str(self.project.path.parent)
        return str(Path.home())

    # =========================================================================================
    # scenarios: browser, files, PNG drop, save, compare
    # =========================================================================================
    def open_scenario(self, scenario, label: str) -> bool:
        """Show ``scenario`` in its panel as one undoable edit ("Open scenario 'X'")."""
        panel = self.panels.get(scenario.kind)
        if panel is None:
            dialogs.show_message(self, "Cannot open the scenario", f"No panel shows {scenario.kind!r} scenarios")
            return False
        if not getattr(panel, "saves_scenario", True):
            self.document.replace_plan(scenario, label)  # a saved run plan becomes the plan
        else:
            # the opened scenario stays as saved (Local override, in the same undo step) until
            # the user follows the plan again or makes it the plan: the panel's banner offers both
            self.undo_stack.beginMacro(label)
            push_override(self.undo_stack, panel, True)
            push_scenario_edit(self.undo_stack, panel, scenario, label, mergeable=False)
            self.undo_stack.endMacro()
        self.raise_panel(scenario.kind)
        self.statusBar().showMessage(label, 5000)
        return True

    def open_saved_scenario(self, scenario_id: int) -> bool:
        if self.project is None:
            return False
        try:
            records = {r.id: r for r in self.project.list_scenarios()}
            scenario = self.project.load_scenario(int(scenario_id))
        except ProjectError as exc:
            dialogs.show_message(self, "Cannot open the scenario", str(exc))
            return False
        name = records[int(scenario_id)].name if int(scenario_id) in records else str(scenario_id)
        return self.open_scenario(scenario, f"Open scenario '{name}'")

    def open_scenario_file(self, path: str | Path) -> bool:
        """A PNG exported with its scenario, or a scenario file: opens in its panel."""
        path = Path(path)
        try:
            if path.suffix.lower() == ".png":
                from ui.export import read_png_scenario

                text = read_png_scenario(path)
                if text is None:
                    dialogs.show_message(
                        self, "No scenario in this image",
                        f"{path.name} carries no Scaling Workbench scenario: only PNGs exported from a "
                        "panel can be reopened.")
                    return False
                scenario = scenario_from_json(text)
            else:
                scenario, _name, _notes = storage.read_scenario_file(path)
        except (ValueError, OSError, ProjectError) as exc:
            dialogs.show_message(self, "Cannot open the scenario", f"{path.name}: {exc}")
            return False
        return self.open_scenario(scenario, f"Open scenario from {path.name}")

    def save_panel_scenario(self, kind: str | None = None) -> int | None:
        """Save the panel's current state as a named scenario in the project."""
        kind = kind or self._active_kind
        panel = self.panels[kind]
        if self.project is None or panel.scenario() is None:
            return None
        existing = {r.name for r in self.project.list_scenarios(kind)}
        default = f"{panel.title} {len(existing) + 1}"
        name = dialogs.ask_text(self, "Save as scenario", f"Name of the {panel.title.lower()} scenario:", default)
        if not name:
            return None
        if name in existing and not dialogs.ask_replace(self, name):
            return None
        try:
            sid = self.project.save_scenario(name, panel.scenario())
        except (ProjectError, ValueError) as exc:
            dialogs.show_message(self, "Could not save the scenario", str(exc))
            return None
        self.browser.refresh()
        self._update_modified()
        self.statusBar().showMessage(f"Saved scenario '{name}'", 5000)
        return sid

    def _set_comparison(self, kind: str, items: list[tuple[str, Any]]) -> bool:
        panel = self.panels[kind]
        set_comparison = getattr(panel, "set_comparison", None)
        if not callable(set_comparison):
            self.statusBar().showMessage(f"The {panel.title} panel cannot overlay scenarios yet", 6000)
            return False
        set_comparison(items)
        self._compare_active.add(kind)
        self.raise_panel(kind)
        self.statusBar().showMessage(f"Comparing {', '.join(name for name, _ in items)}", 6000)
        return True

    def compare_saved_scenarios(self, ids: list) -> bool:
        """Overlay saved scenarios (same kind) on their panel's chart."""
        if self.project is None or not ids:
            return False
        records = {r.id: r for r in self.project.list_scenarios()}
        items = []
        try:
            for sid in ids:
                items.append((records[int(sid)].name, self.project.load_scenario(int(sid))))
        except (ProjectError, KeyError) as exc:
            dialogs.show_message(self, "Cannot compare", str(exc))
            return False
        kinds = {s.kind for _, s in items}
        if len(kinds) != 1:
            dialogs.show_message(self, "Cannot compare", "Only scenarios of the same panel can be compared")
            return False
        return self._set_comparison(kinds.pop(), items)

    def compare_in_panel(self, kind: str) -> bool:
        """The panel's Compare button: overlay one saved scenario of its kind (or clear)."""
        if self.project is None:
            return False
        panel = self.panels[kind]
        records = self.project.list_scenarios(kind)
        names = [r.name for r in records]
        if kind in self._compare_active:
            names = ["(clear comparison)", *names]
        choice = dialogs.ask_item(self, "Compare", f"Overlay a saved {panel.title.lower()} scenario:", names)
        if choice is None:
            return False
        if choice == "(clear comparison)":
            clear = getattr(panel, "clear_comparison", None)
            if callable(clear):
                clear()
            self._compare_active.discard(kind)
            return True
        record = next(r for r in records if r.name == choice)
        return self.compare_saved_scenarios([record.id])

    def import_scenario_dialog(self) -> bool:
        if self.project is None:
            return False
        path = dialogs.ask_open_path(self, "Import scenario", dialogs.SCENARIO_FILTER, self._dialog_dir())
        if not path:
            return False
        if Path(path).suffix.lower() == ".png":
            return self.open_scenario_file(path)
        try:
            sid = self.project.import_scenario(path)
        except ProjectError as exc:
            dialogs.show_message(self, "Could not import the scenario", str(exc))
            return False
        self.browser.refresh()
        self._update_modified()
        return self.open_saved_scenario(sid)

    def export_scenario_dialog(self) -> bool:
        panel = self.active_panel()
        if panel.scenario() is None:
            return False
        path = dialogs.ask_save_path(self, "Export scenario", dialogs.SCENARIO_FILTER,
                                     str(Path(self._dialog_dir()) / f"{panel.kind}.swbscenario"))
        if not path:
            return False
        try:
            self.export_scenario_file(path)
        except (ProjectError, OSError) as exc:
            dialogs.show_message(self, "Could not export the scenario", str(exc))
            return False
        self.statusBar().showMessage(f"Exported the scenario to {path}", 5000)
        return True

    def export_scenario_file(self, path: str | Path, kind: str | None = None) -> Path:
        """Write the panel's current scenario as a scenario file (the project's file format)."""
        import workbench
        from storage import fileio
        from storage.project import SCENARIO_FILE_FORMAT, SCENARIO_FILE_VERSION

        panel = self.panels[kind or self._active_kind]
        document = {
            "format": SCENARIO_FILE_FORMAT,
            "format_version": SCENARIO_FILE_VERSION,
            "app_version": workbench.__version__,
            "name": f"{panel.title} (exported)",
            "notes": "",
            "scenario": panel.scenario().to_dict(),
        }
        path = Path(path)
        data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        fileio.atomic_write_bytes(data, path, "export the scenario")
        return path

    # -- drag and drop -----------------------------------------------------------------------
    def _droppable(self, urls: list[QUrl]) -> Path | None:
        for url in urls:
            if url.isLocalFile():
                path = Path(url.toLocalFile())
                if path.suffix.lower() in (".png", FILE_SUFFIX, *SCENARIO_SUFFIXES):
                    return path
                if self._data_panel_for(path) is not None and path.is_file():  # a log or an energy CSV
                    return path
        return None

    def _catch_file_drops(self) -> None:
        """Charts (QGraphicsView) and text fields accept drops themselves, so a PNG dropped
        on the biggest part of the window would never reach it: filter their drag events."""
        for widget in self.findChildren(QWidget):
            if widget.acceptDrops() and widget is not self:
                widget.installEventFilter(self)

    def event(self, event) -> bool:
        _repaint_in_one_pass(self, event)
        return super().event(event)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt naming
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop):
            mime = event.mimeData()
            if mime is not None and mime.hasUrls() and self._droppable(mime.urls()) is not None:
                if kind == QEvent.Type.Drop:
                    self.dropEvent(event)
                else:
                    event.acceptProposedAction()
                return True
        return super().eventFilter(watched, event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt naming
        if event.mimeData().hasUrls() and self._droppable(event.mimeData().urls()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 - Qt naming
        if event.mimeData().hasUrls() and self._droppable(event.mimeData().urls()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt naming
        path = self._droppable(event.mimeData().urls()) if event.mimeData().hasUrls() else None
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        # several logs dropped at once all open (two runs to compare); any other file alone
        paths = [path]
        if self._data_panel_for(path) is not None:
            paths = [Path(u.toLocalFile()) for u in event.mimeData().urls()
                     if u.isLocalFile() and self._data_panel_for(u.toLocalFile()) is not None]
        # open after the drop returns, so a message box never runs inside the drag loop
        QTimer.singleShot(0, lambda: [self.open_path(p) for p in paths])

    # =========================================================================================
    # export
    # =========================================================================================
    def _background(self, background: str):
        if background == "theme":
            return th.current_theme().background
        return background

    def export_active(self, fmt: str, path: str | Path, width_px: int = 1920, background: str = "white",
                      kind: str | None = None, caption: Caption | None = None) -> Path:
        """Export the active panel's chart (png/svg, with an optional slide caption) or its
        numbers (csv: the results table, then the chart's series) to ``path``.
        Raises ``ExportError``/``ValueError``/``OSError`` with a readable message."""
        panel = self.panels[kind or self._active_kind]
        panel.ensure_drawn()
        from ui import export  # with the chart exporters: loaded for the first export

        return export.export_panel(panel, fmt, path, width_px=int(width_px),
                                   background=self._background(background), caption=caption)

    def _hardware_name(self, key: str) -> str:
        try:
            return self.catalog.get(key).name
        except (KeyError, ValueError):
            return key

    def export_interactive(self, fmt: str, kind: str | None = None) -> Path | None:
        """Export with the options dialog (PNG/SVG) and a file chooser."""
        from ui import export

        if kind is not None:
            self._active_kind = kind
        panel = self.active_panel()
        width, background, caption = 1920, "white", None
        if fmt in ("png", "svg"):
            scenario = panel.scenario()
            assumptions = export.default_assumptions(scenario, self._hardware_name) if scenario is not None else ""
            options = dialogs.get_export_options(self, fmt, title=panel.title, caption_title=panel.title,
                                                 caption_assumptions=assumptions)
            if options is None:
                return None
            fmt, width, background = options.fmt, options.width_px, options.background
            caption = export.Caption(options.caption_title, options.caption_assumptions) or None
        suggested = Path(self._dialog_dir()) / f"{panel.kind}.{fmt}"
        path = dialogs.ask_save_path(self, f"Export {panel.title}", dialogs.EXPORT_FILTERS[fmt], str(suggested))
        if not path:
            return None
        path = Path(path)
        if not path.suffix:
            path = path.with_suffix(f".{fmt}")
        try:
            written = self.export_active(fmt, path, width, background, caption=caption)
        except (OSError, ValueError) as exc:
            dialogs.show_message(self, "Export failed", str(exc))
            return None
        self.statusBar().showMessage(f"Exported {panel.title} to {written}", 6000)
        return written

    # =========================================================================================
    # presentation mode, themes, presets, explanations
    # =========================================================================================
    def presentation_active(self) -> bool:
        return self._presentation is not None

    def toggle_presentation(self) -> None:
        if self.presentation_active():
            self.exit_presentation()
        else:
            self.enter_presentation()

    def enter_presentation(self, kind: str | None = None) -> PresentationWindow:
        if self._presentation is not None:
            return self._presentation
        kind = kind or self._active_kind
        dock, panel = self.docks[kind], self.panels[kind]
        state = self.saveState(LAYOUT_VERSION)
        placeholder = QLabel("Shown in presentation mode: press Esc or F11 to return", dock)
        placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        dock.setWidget(placeholder)
        window = PresentationWindow(self)
        window.layout().addWidget(panel)
        panel.show()
        panel.set_on_screen(True)
        self._presentation = window
        self._presentation_state = (kind, state, placeholder)
        th.set_presentation(True)
        self.action_presentation.setChecked(True)
        window.showFullScreen()
        return window

    def exit_presentation(self) -> None:
        window, saved = self._presentation, self._presentation_state
        if window is None or saved is None:
            return
        self._presentation = None
        self._presentation_state = None
        kind, _state, placeholder = saved
        dock, panel = self.docks[kind], self.panels[kind]
        dock.setWidget(panel)
        panel.show()
        panel.set_on_screen(_in_front(dock))
        placeholder.deleteLater()
        th.set_presentation(False)
        self.action_presentation.setChecked(False)
        window.hide()
        window.deleteLater()
        # The panel went back into its own dock, which never moved: the layout is as it was.
        # (restoreState here would rebuild the tab bars and leave a stale one on screen.)
        dock.raise_()
        self._active_kind = kind
        self.activateWindow()

    def theme_mode(self) -> str:
        mode = _settings().value(KEY_THEME, "system", type=str)
        return mode if mode in ("system", "light", "dark") else "system"

    def apply_theme_mode(self, mode: str, store: bool = True) -> None:
        th.apply_theme(QApplication.instance(), mode)
        if mode in self.theme_actions:
            self.theme_actions[mode].setChecked(True)
        if store:
            _settings().setValue(KEY_THEME, mode)

    def show_preset_manager(self) -> PresetManagerDialog:
        """The hardware preset manager (non-modal; its edits go on the window's undo stack)."""
        if self._preset_manager is None:
            from ui.preset_manager import PresetManagerDialog

            self._preset_manager = PresetManagerDialog(self.project, self.catalog, self.undo_stack, self)
            self._preset_manager.finished.connect(self._preset_manager_closed)
        self._preset_manager.open()
        return self._preset_manager

    def _preset_manager_closed(self, *_args) -> None:
        self.catalog.reload()
        self._update_modified()

    def explain_panel(self, kind: str | None = None):
        """Help > Explain: the active (or named) panel's explanation, in its own dialog."""
        return self.panels[kind or self._active_kind].show_explanation()

    def show_user_guide(self):
        """Help > User Guide: the README, in a window that stays open beside the panels."""
        from ui.help import UserGuideDialog

        if self._user_guide is None:
            self._user_guide = UserGuideDialog(self)
        self._user_guide.show()
        self._user_guide.raise_()
        return self._user_guide

    def show_about(self) -> QMessageBox:
        """Help > About: the version, the homepage and the licences of what ships with the app."""
        from ui.about import about_text

        box = QMessageBox(QMessageBox.Icon.Information, f"About {APP_NAME}", about_text(),
                          QMessageBox.StandardButton.Ok, self)
        box.setObjectName("aboutBox")
        plain.plain_labels(box)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box
