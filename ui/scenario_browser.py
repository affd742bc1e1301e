"""The scenario browser: the project's saved scenarios, grouped by panel, in a narrow dock.

::

    [Open] [Compare] [Rename] [Duplicate] [Notes] [Delete]
    [Filter scenarios...                              (x)]
    v Roofline (1)
        Seed kernels on H100 vs B200        2026-05-09 14:03
    v Collectives (2)
        ...
    message line (what went wrong, what to do)

Keyboard first: arrow keys move, Enter opens, F2 renames, Delete deletes (after asking),
Ctrl+click or Shift+arrows select two scenarios to compare. Every modal question goes
through a module-level function (:func:`ask_confirm`, :func:`ask_text`, :func:`ask_notes`)
that tests replace, so no test ever blocks on a dialog. Refusals and failures (a name
clash, two scenarios of different kinds) go to the message line under the tree: nothing is
lost and nothing blocks.

The browser changes the project only through ``storage.Project``'s methods and emits
``projectChanged`` after each change it made; it never loads a scenario (the window does,
on ``openRequested``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QEvent, QItemSelectionModel, QSize, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QFont, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QSizePolicy,
    QStyle,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from storage.errors import NameConflictError, ProjectError
from ui import dialogs, plain
from ui.widgets.message_label import MessageLabel
from workbench import InputError

#: Item data roles.
ID_ROLE = Qt.ItemDataRole.UserRole  # scenario id (int) on scenario items, None on groups
KIND_ROLE = Qt.ItemDataRole.UserRole + 1  # kind on every item
PROBLEM_ROLE = Qt.ItemDataRole.UserRole + 2  # why the scenario cannot be loaded, or None

_NAME_COLUMN, _MODIFIED_COLUMN = 0, 1


def kind_label(kind: str) -> str:
    """The display name of a scenario kind ("allreduce" -> "All-reduce")."""
    from ui.panels import kind_labels

    return kind_labels().get(kind, kind.replace("_", " ").capitalize())


# -- modal questions: module-level so tests (and embedders) can replace them -----------------
def ask_confirm(parent: QWidget | None, text: str) -> bool:
    """Ask a yes/no question; True means go ahead. Defaults to No, so Enter is safe."""
    return dialogs.ask_yes(parent, "Scaling Workbench", text)


def ask_text(parent: QWidget | None, title: str, label: str, text: str) -> str | None:
    """Ask for one line of text; None when cancelled."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    layout = QVBoxLayout(dialog)
    prompt = QLabel(label, dialog)
    prompt.setTextFormat(Qt.TextFormat.PlainText)  # the label names the user's scenario
    prompt.setWordWrap(True)
    edit = QLineEdit(text, dialog)
    edit.selectAll()
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel,
                               dialog)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(prompt)
    layout.addWidget(edit)
    layout.addWidget(buttons)
    dialog.setMinimumWidth(360)
    try:
        return edit.text() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


def ask_notes(parent: QWidget | None, title: str, text: str) -> str | None:
    """Edit multi-line notes; None when cancelled."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    layout = QVBoxLayout(dialog)
    edit = QPlainTextEdit(dialog)
    edit.setPlainText(text)
    edit.setTabChangesFocus(True)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel,
                               dialog)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(QLabel("Notes (shown as the scenario's tooltip):", dialog))
    layout.addWidget(edit)
    layout.addWidget(buttons)
    dialog.resize(420, 260)
    try:
        return edit.toPlainText() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


def _local_time(moment: datetime) -> datetime:
    """The stored naive-UTC time in the local zone."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone()


def short_date(moment: datetime, now: datetime | None = None) -> str:
    """Compact for a narrow column: "14:03" today, "9 May" this year, "2025-11-29" before."""
    now = now or datetime.now(moment.tzinfo)
    if moment.date() == now.date():
        return moment.strftime("%H:%M")
    if moment.year == now.year:
        return f"{moment.day} {moment.strftime('%b')}"
    return moment.strftime("%Y-%m-%d")


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, ProjectError):
        # the problem and the advice, without the file path the user already knows
        text = exc.problem + (f"; {exc.advice}" if exc.advice else "")
    else:
        text = str(exc)
    return text[:1].upper() + text[1:]


NOTES_ROLE = Qt.ItemDataRole.UserRole + 3  # the scenario's notes (searched by the filter)

_DISPLAY = Qt.ItemDataRole.DisplayRole
_TOOLTIP = Qt.ItemDataRole.ToolTipRole
_FONT = Qt.ItemDataRole.FontRole
_FOREGROUND = Qt.ItemDataRole.ForegroundRole
_ALIGNMENT = Qt.ItemDataRole.TextAlignmentRole
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


class _ScenarioItem(QTreeWidgetItem):
    """One saved scenario. Everything but the name is answered from the listed record when
    the view (or a caller) asks: the modified date, the tooltip, and whether the scenario can
    be opened, which parses its payload the first time a row is shown or asked about. A
    browser of 10,000 scenarios fills without parsing any and checks only what it shows.

    Made as ``_ScenarioItem([name])`` with ``order`` set after: a Python ``__init__`` doubles
    what 10,000 items cost to make."""

    order = (0, 0)  # (group, row of the tree's listing): the tree's order, for the selection
    _record = None  # the storage.ScenarioRecord, once asked for
    _modified: str | None = None  # the column's text, made when first asked
    _problem: str | None | bool = False  # False: not checked yet

    @property
    def record(self):
        """The storage.ScenarioRecord (the listing makes it when first asked for)."""
        record = self._record
        if record is None:
            record = self._record = self.treeWidget().listing[self.order[1]]
        return record

    def problem(self) -> str | None:
        if self._problem is False:
            tree = self.treeWidget()
            listing = getattr(tree, "listing", None)
            try:
                self._problem = listing.problem_at(self.order[1]) if listing is not None else None
            except ProjectError:
                self._problem = None
        return self._problem

    def _modified_text(self) -> str:
        if self._modified is None:
            self._modified = short_date(_local_time(self.record.modified))
        return self._modified

    def data(self, column: int, role: int):
        if role == _DISPLAY:
            return self.record.name if column == _NAME_COLUMN else self._modified_text()
        if role == ID_ROLE:
            return self.record.id
        if role == KIND_ROLE:
            return self.record.kind
        if role == NOTES_ROLE:
            return self.record.notes
        if role == PROBLEM_ROLE:
            return self.problem()
        if role == _FOREGROUND:
            return self.treeWidget().problem_look()[0] if self.problem() else super().data(column, role)
        if role == _FONT:
            if column == _NAME_COLUMN and self.problem():
                return self.treeWidget().problem_look()[1]
            return super().data(column, role)
        if role == _ALIGNMENT and column == _MODIFIED_COLUMN:
            return _RIGHT
        if role == _TOOLTIP:
            if column == _MODIFIED_COLUMN:  # made when asked: the view asks only under the mouse
                return f"Modified {_local_time(self.record.modified).strftime('%Y-%m-%d %H:%M')}"
            record, problem = self.record, self.problem()
            if problem:
                tip = f"{record.name}: cannot be opened.\n{problem}\n\nRename it, fix it elsewhere or delete it."
            else:
                tip = f"{record.name}\n\n{record.notes.strip() or 'No notes.'}"
            return plain.tooltip(tip)
        return super().data(column, role)


class _ScenarioTree(QTreeWidget):
    """The tree, handling its own keys (no window shortcuts: nothing to clash with the menus)."""

    openKey = Signal()
    renameKey = Signal()
    deleteKey = Signal()

    #: the storage listing the rows check their scenarios against (set by the browser)
    listing = None
    _look: tuple[QBrush, QFont] | None = None

    def problem_look(self) -> tuple[QBrush, QFont]:
        """The grey and the italic of a scenario that cannot be opened (one of each for all)."""
        if self._look is None:
            grey = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
            font = QFont(self.font())
            font.setItalic(True)
            self._look = (QBrush(grey), font)
        return self._look

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt naming
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self._look = None  # follows a theme change
        super().changeEvent(event)

    _KEYS = {
        Qt.Key.Key_Return: "openKey",
        Qt.Key.Key_Enter: "openKey",
        Qt.Key.Key_F2: "renameKey",
        Qt.Key.Key_Delete: "deleteKey",
    }

    def _signal_for(self, event: QKeyEvent) -> str | None:
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if modifiers != Qt.KeyboardModifier.NoModifier:
            return None
        return self._KEYS.get(Qt.Key(event.key()))

    def event(self, event: QEvent) -> bool:
        # Claim our keys before any window-wide shortcut with the same key sees them.
        if event.type() == QEvent.Type.ShortcutOverride and self._signal_for(event) is not None:
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt naming
        name = self._signal_for(event)
        if name is None:
            super().keyPressEvent(event)
            return
        event.accept()
        getattr(self, name).emit()


class ScenarioBrowser(QWidget):
    """Saved scenarios of a project, grouped under the five panel kinds."""

    #: a scenario to open (double-click or Enter): its id
    openRequested = Signal(int)
    #: two scenarios of the same kind to compare: [id, id]
    compareRequested = Signal(list)
    #: emitted after every change this browser made to the project
    projectChanged = Signal()

    def __init__(self, project=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("scenarioBrowser")
        self._project = None
        self._groups: dict[str, QTreeWidgetItem] = {}
        self._items: dict[int, _ScenarioItem] = {}  # scenario id -> its row
        #: what the filter looks in, per row of the tree's listing (made on its first filtering)
        self._haystacks_made: list[str] | None = None

        self.open_action = self._action("Open", "Enter", "Open the scenario in its panel", self.open_selected)
        self.compare_action = self._action("Compare", "", "Compare two selected scenarios of the same kind "
                                           "(Ctrl+click to select the second)", self.compare_selected)
        self.rename_action = self._action("Rename", "F2", "Rename the scenario", self.rename_selected)
        self.duplicate_action = self._action("Duplicate", "", "Make a copy of the scenario",
                                             self.duplicate_selected)
        self.notes_action = self._action("Notes", "", "Edit the scenario's notes", self.edit_notes)
        self.delete_action = self._action("Delete", "Del", "Delete the selected scenarios", self.delete_selected)
        # Two rows of three: the dock is narrow, and a toolbar would hide half of them
        # behind its overflow arrow.
        self.buttons = QWidget(self)
        self.buttons.setObjectName("scenarioBrowser.buttons")
        grid = QGridLayout(self.buttons)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(2)
        actions = (self.open_action, self.compare_action, self.notes_action,
                   self.rename_action, self.duplicate_action, self.delete_action)
        self._buttons: dict[str, QToolButton] = {}
        for i, action in enumerate(actions):
            button = QToolButton(self.buttons)
            button.setDefaultAction(action)
            button.setAutoRaise(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keyboard users have the keys
            grid.addWidget(button, i // 3, i % 3)
            self._buttons[action.text()] = button

        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("scenarioBrowser.filter")
        self.filter_edit.setPlaceholderText("Filter by name or notes")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName("Filter scenarios")
        self.filter_edit.textChanged.connect(self._apply_filter)
        self.filter_edit.installEventFilter(self)

        self.tree = _ScenarioTree(self)
        self.tree.setObjectName("scenarioBrowser.tree")
        self.tree.setAccessibleName("Saved scenarios")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Scenario", "Modified"])
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setUniformRowHeights(True)
        self.tree.setAllColumnsShowFocus(True)
        self.tree.setRootIsDecorated(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        # The scroll bar keeps its place when the list is short: a bar that comes and goes
        # narrows the name column, which the tree repaints a frame later (a second repaint of
        # every opened project that fills it), and moves the dates sideways.
        self.tree.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(_NAME_COLUMN, QHeaderView.ResizeMode.Stretch)
        # as wide as the widest date short_date writes, not ResizeToContents: that measures a
        # thousand rows again after every change of the tree (and checks each one's scenario)
        header.setSectionResizeMode(_MODIFIED_COLUMN, QHeaderView.ResizeMode.Fixed)
        self._fit_modified_column()
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._show_context_menu)
        self.tree.itemDoubleClicked.connect(self._on_double_click)
        self.tree.itemSelectionChanged.connect(self._update_actions)
        self.tree.openKey.connect(self.open_selected)
        self.tree.renameKey.connect(self.rename_selected)
        self.tree.deleteKey.connect(self.delete_selected)

        self.message = MessageLabel(self, "scenarioBrowser.message")
        self.message.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.buttons)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.message)
        self.setFocusProxy(self.tree)

        self.set_project(project)

    def _action(self, text: str, key: str, tip: str, slot) -> QAction:
        action = QAction(text, self)
        # The key is shown, not registered: the tree handles it (see _ScenarioTree), so it
        # can never be ambiguous with a window-wide shortcut.
        action.setToolTip(f"{tip} ({key})" if key else tip)
        action.setStatusTip(tip)
        action.setData(key)
        action.triggered.connect(slot)
        return action

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt naming
        return QSize(320, 600)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt naming
        if event.type() == QEvent.Type.FontChange:
            self._fit_modified_column()
        super().changeEvent(event)

    def _fit_modified_column(self) -> None:
        """The Modified column's width: its widest possible text in the tree's font ("88:88",
        "28 Sep", "8888-88-88" for the widest digit), or its title, whichever is wider."""
        metrics = self.tree.fontMetrics()
        digit = max("0123456789", key=metrics.horizontalAdvance)
        months = {datetime(2000, month, 28).strftime("%b") for month in range(1, 13)}
        texts = [f"{digit * 2}:{digit * 2}", f"{digit * 4}-{digit * 2}-{digit * 2}",
                 *(f"{digit * 2} {month}" for month in months)]
        margin = 2 * (self.tree.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self.tree) + 1)
        header = self.tree.header()
        width = max(max(metrics.horizontalAdvance(t) for t in texts) + margin + 4,
                    header.sectionSizeFromContents(_MODIFIED_COLUMN).width())
        header.resizeSection(_MODIFIED_COLUMN, width)

    # -- project -------------------------------------------------------------------------------
    def project(self):
        return self._project

    def set_project(self, project) -> None:
        """Show ``project`` (a ``storage.Project``), or nothing with None."""
        self._project = project
        self.clear_message()
        self.refresh()

    def refresh(self) -> None:
        """Re-read the project, keeping the selection, the current item and collapsed groups.

        One storage query lists the scenarios (``Project.list_scenarios_with_problems``);
        the groups are filled while out of the tree and go in with one insertion, so the view
        lays out once; each row checks its scenario when first shown (:class:`_ScenarioItem`)."""
        selected = set(self.selected_ids())
        current = self.current_id()
        collapsed = {kind for kind, item in self._groups.items() if not item.isExpanded()}
        self.tree.blockSignals(True)
        try:
            self.tree.clear()
            self._groups = {}
            self._items = {}
            self.tree.listing = None
            self._haystacks_made = None  # the old listing's, let go
            project = self._project
            if project is None or getattr(project, "closed", False):
                self.tree.setEnabled(False)
                self.filter_edit.setEnabled(False)
                return
            self.tree.setEnabled(True)
            self.filter_edit.setEnabled(True)
            listing = self.tree.listing = project.list_scenarios_with_problems()
            from ui.panels import kind_labels

            known = list(kind_labels())
            summaries = list(listing.summaries())  # no record made: rows make theirs when shown
            kinds = known + sorted({kind for _sid, kind, _name in summaries} - set(known))
            bold = QFont(self.tree.font())
            bold.setBold(True)
            children: dict[str, list[QTreeWidgetItem]] = {kind: [] for kind in kinds}
            items = self._items
            rank = {kind: n for n, kind in enumerate(kinds)}
            for n, (sid, kind, name) in enumerate(summaries):
                item = _ScenarioItem([name])
                item.order = (rank[kind], n)  # n: its row of the listing
                children[kind].append(item)
                items[sid] = item
            groups = []
            for kind in kinds:
                group = QTreeWidgetItem()
                group.setData(0, ID_ROLE, None)
                group.setData(0, KIND_ROLE, kind)
                group.setFont(_NAME_COLUMN, bold)
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                group.addChildren(children[kind])
                self._groups[kind] = group
                groups.append(group)
            self.tree.addTopLevelItems(groups)
            for group in groups:
                group.setFirstColumnSpanned(True)
            self.tree.expandAll()  # one layout, not one per group
            for kind in collapsed & self._groups.keys():
                self._groups[kind].setExpanded(False)
            self._apply_filter(self.filter_edit.text(), fresh=True)
            current_item = items.get(current) if current is not None else None
            for sid in selected:
                item = items.get(sid)
                if item is not None and not item.isHidden():
                    item.setSelected(True)
            if current_item is not None:
                self.tree.setCurrentItem(current_item, 0, QItemSelectionModel.SelectionFlag.NoUpdate)
            elif self.tree.topLevelItemCount():
                self.tree.setCurrentItem(self.tree.topLevelItem(0), 0, QItemSelectionModel.SelectionFlag.NoUpdate)
        finally:
            self.tree.blockSignals(False)
            self._update_actions()

    # -- look-ups ------------------------------------------------------------------------------
    def _scenario_items(self) -> list[QTreeWidgetItem]:
        items = []
        for g in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(g)
            items.extend(group.child(i) for i in range(group.childCount()))
        return items

    def item_for(self, scenario_id: int) -> QTreeWidgetItem | None:
        """The tree item of a scenario (for tests and for the window to reveal one)."""
        return self._items.get(scenario_id)

    def group_item(self, kind: str) -> QTreeWidgetItem | None:
        return self._groups.get(kind)

    def _selected_items(self) -> list[QTreeWidgetItem]:
        # in the tree's order, not the order of clicking
        selected = [item for item in self.tree.selectedItems()
                    if isinstance(item, _ScenarioItem) and not item.isHidden()]
        selected.sort(key=lambda item: item.order)
        return selected

    def selected_ids(self) -> list[int]:
        return [item.data(0, ID_ROLE) for item in self._selected_items()]

    def current_id(self) -> int | None:
        item = self.tree.currentItem()
        return item.data(0, ID_ROLE) if item is not None else None

    def select(self, scenario_id: int) -> None:
        """Make one scenario the selection and current item, and scroll to it."""
        item = self.item_for(scenario_id)
        if item is None:
            return
        self.tree.clearSelection()
        if item.isHidden():
            self.filter_edit.clear()
        item.parent().setExpanded(True)
        self.tree.setCurrentItem(item)
        item.setSelected(True)
        self.tree.scrollToItem(item)

    def _target_item(self) -> QTreeWidgetItem | None:
        """The one scenario an action applies to: the single selection, else the current item."""
        selected = self._selected_items()
        if len(selected) == 1:
            return selected[0]
        if not selected:
            item = self.tree.currentItem()
            if item is not None and item.data(0, ID_ROLE) is not None:
                return item
        return None

    # -- messages ------------------------------------------------------------------------------
    def show_message(self, text: str, error: bool = True) -> None:
        """Show a one-paragraph message under the tree (not modal; cleared by the next action)."""
        self.message.show_message(text, error)

    def clear_message(self) -> None:
        self.message.clear_message()

    def message_text(self) -> str:
        return self.message.message_text()

    # -- filtering -----------------------------------------------------------------------------
    def _haystacks(self) -> list[str]:
        """What the filter looks in, per row of the listing: name and notes, casefolded (made on
        the first filtering of a listing, not again for each key typed)."""
        if self._haystacks_made is None:
            listing = self.tree.listing or ()
            self._haystacks_made = [f"{r.name}\n{r.notes}".casefold() for r in listing]
        return self._haystacks_made

    def _apply_filter(self, text: str, fresh: bool = False) -> None:
        """Show the scenarios whose name or notes hold every word of ``text``. ``fresh``: the
        items were just made (all shown, none selected), so without words nothing changes."""
        words = text.casefold().split()
        haystacks = self._haystacks() if words else ()
        for kind, group in self._groups.items():
            total = group.childCount()
            shown = total
            if words or not fresh:
                shown = 0
                for i in range(total):
                    item = group.child(i)
                    if words:
                        haystack = haystacks[item.order[1]]
                        visible = all(word in haystack for word in words)
                    else:
                        visible = True
                    if item.isHidden() == visible:
                        item.setHidden(not visible)
                    if not visible and item.isSelected():
                        item.setSelected(False)
                    shown += visible
            if words:
                group.setText(_NAME_COLUMN, f"{kind_label(kind)} ({shown} of {total})")
                group.setHidden(shown == 0)
                if shown:
                    group.setExpanded(True)
            else:
                group.setText(_NAME_COLUMN, f"{kind_label(kind)} ({total})")
                group.setHidden(False)
            group.setToolTip(_NAME_COLUMN, f"{total} saved {kind_label(kind)} scenario"
                             f"{'' if total == 1 else 's'}")
            if total == 0:
                muted = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
                group.setForeground(_NAME_COLUMN, muted)
            else:
                group.setData(_NAME_COLUMN, Qt.ItemDataRole.ForegroundRole, None)
        if words and not any(not g.isHidden() for g in self._groups.values()):
            self.show_message(f"No scenario matches “{text.strip()}”.", error=False)
        elif self.message.text().startswith("No scenario matches"):
            self.clear_message()
        self._update_actions()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt naming
        if watched is self.filter_edit and event.type() == QEvent.Type.KeyPress:
            if event.key() == Qt.Key.Key_Down or event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self._focus_first_match()
                return True
            if event.key() == Qt.Key.Key_Escape and self.filter_edit.text():
                self.filter_edit.clear()
                return True
        return super().eventFilter(watched, event)

    def _focus_first_match(self) -> None:
        self.tree.setFocus(Qt.FocusReason.TabFocusReason)
        current = self.tree.currentItem()
        if current is not None and not current.isHidden() and current.data(0, ID_ROLE) is not None:
            return
        for item in self._scenario_items():
            if not item.isHidden():
                self.tree.setCurrentItem(item)
                return

    # -- actions -------------------------------------------------------------------------------
    def _update_actions(self) -> None:
        has_project = self._project is not None and not getattr(self._project, "closed", False)
        selected = self._selected_items() if has_project else []
        one = self._target_item() if has_project else None
        self.open_action.setEnabled(one is not None)
        self.rename_action.setEnabled(one is not None)
        self.duplicate_action.setEnabled(one is not None)
        self.notes_action.setEnabled(one is not None)
        self.delete_action.setEnabled(bool(selected) or one is not None)
        self.compare_action.setEnabled(len(selected) == 2)

    def _show_context_menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        if item is not None and item.data(0, ID_ROLE) is not None and not item.isSelected():
            self.tree.clearSelection()
            self.tree.setCurrentItem(item)
            item.setSelected(True)
        menu = QMenu(self)
        for action in (self.open_action, self.compare_action, None, self.rename_action,
                       self.duplicate_action, self.notes_action, None, self.delete_action):
            if action is None:
                menu.addSeparator()
                continue
            key = action.data()
            entry = menu.addAction(f"{action.text()}\t{key}" if key else action.text())
            entry.setEnabled(action.isEnabled())
            entry.triggered.connect(action.trigger)
        menu.exec(self.tree.viewport().mapToGlobal(pos))
        menu.deleteLater()

    def _on_double_click(self, item: QTreeWidgetItem, column: int) -> None:
        if item.data(0, ID_ROLE) is not None:
            self._open_item(item)

    def open_selected(self) -> None:
        """Ask the window to open the current scenario (Enter)."""
        item = self._target_item()
        if item is None:
            current = self.tree.currentItem()
            if current is not None and current.data(0, ID_ROLE) is None:
                current.setExpanded(not current.isExpanded())  # Enter on a group folds it
            return
        self._open_item(item)

    def _open_item(self, item: QTreeWidgetItem) -> None:
        problem = item.data(0, PROBLEM_ROLE)
        if problem:
            self.show_message(f"“{item.text(_NAME_COLUMN)}” cannot be opened: {problem}")
            return
        self.clear_message()
        self.openRequested.emit(int(item.data(0, ID_ROLE)))

    def compare_selected(self) -> None:
        """Emit ``compareRequested`` for two selected scenarios of the same kind, else explain."""
        items = self._selected_items()
        if len(items) != 2:
            self.show_message("Select two scenarios of the same kind to compare "
                              "(click one, then Ctrl+click the other).")
            return
        first, second = items
        kind_a, kind_b = first.data(0, KIND_ROLE), second.data(0, KIND_ROLE)
        if kind_a != kind_b:
            self.show_message(
                f"Cannot compare scenarios of different kinds: “{first.text(0)}” is {kind_label(kind_a)}, "
                f"“{second.text(0)}” is {kind_label(kind_b)}. Select two of the same kind.")
            return
        for item in items:
            if item.data(0, PROBLEM_ROLE):
                self.show_message(f"“{item.text(0)}” cannot be compared: {item.data(0, PROBLEM_ROLE)}")
                return
        self.clear_message()
        self.compareRequested.emit([int(first.data(0, ID_ROLE)), int(second.data(0, ID_ROLE))])

    def rename_selected(self) -> None:
        """Ask for a new name (F2). A clash asks again with the reason; the old name stays
        until a free one is given."""
        item = self._target_item()
        if item is None or self._project is None:
            return
        sid, kind, old = int(item.data(0, ID_ROLE)), item.data(0, KIND_ROLE), item.text(_NAME_COLUMN)
        label = f"New name for the {kind_label(kind)} scenario “{old}”:"
        proposal = old
        while True:
            answer = ask_text(self, "Rename scenario", label, proposal)
            if answer is None or answer.strip() == old:
                return
            try:
                self._project.rename_scenario(sid, answer)
            except (NameConflictError, InputError, ProjectError) as exc:
                reason = (f"A {kind_label(kind)} scenario named “{answer.strip()}” already exists."
                          if isinstance(exc, NameConflictError) else _error_text(exc))
                self.show_message(f"Not renamed: {reason} “{old}” keeps its name.")
                if answer == proposal:
                    return  # the same answer twice: stop asking, the message says why
                label = f"{reason}\nChoose another name for “{old}”:"
                proposal = answer  # what was typed is kept for fixing
                continue
            break
        self.clear_message()
        self.refresh()
        self.select(sid)
        self.projectChanged.emit()

    def duplicate_selected(self) -> None:
        item = self._target_item()
        if item is None or self._project is None:
            return
        try:
            new_id = self._project.duplicate_scenario(int(item.data(0, ID_ROLE)))
        except (ProjectError, InputError) as exc:
            self.show_message(f"Not duplicated: {_error_text(exc)}")
            return
        self.clear_message()
        self.refresh()
        self.select(new_id)
        self.projectChanged.emit()

    def edit_notes(self) -> None:
        item = self._target_item()
        if item is None or self._project is None:
            return
        sid = int(item.data(0, ID_ROLE))
        old = item.data(0, NOTES_ROLE) or ""
        notes = ask_notes(self, f"Notes for {item.text(_NAME_COLUMN)}", old)
        if notes is None or notes == old:
            return
        try:
            self._project.set_notes(sid, notes)
        except (ProjectError, InputError) as exc:
            self.show_message(f"Notes not saved: {_error_text(exc)}")
            return
        self.clear_message()
        self.refresh()
        self.projectChanged.emit()

    def _neighbour_id(self, items: list[QTreeWidgetItem]) -> int | None:
        """The visible scenario after the last of ``items`` (else before the first), or None."""
        gone = {item.data(0, ID_ROLE) for item in items}
        visible = [item.data(0, ID_ROLE) for item in self._scenario_items()
                   if not item.isHidden() and not item.parent().isHidden()]
        positions = [i for i, sid in enumerate(visible) if sid in gone]
        if not positions:
            return None
        after = [sid for sid in visible[positions[-1] + 1:] if sid not in gone]
        before = [sid for sid in visible[:positions[0]] if sid not in gone]
        return after[0] if after else (before[-1] if before else None)

    def delete_selected(self) -> None:
        """Delete the selected scenarios (Del) after asking."""
        if self._project is None:
            return
        items = self._selected_items()
        if not items:
            one = self._target_item()
            items = [one] if one is not None else []
        if not items:
            return
        names = [item.text(_NAME_COLUMN) for item in items]
        if len(items) == 1:
            text = f"Delete the {kind_label(items[0].data(0, KIND_ROLE))} scenario “{names[0]}”?"
        else:
            shown = ", ".join(f"“{n}”" for n in names[:5]) + (", …" if len(names) > 5 else "")
            text = f"Delete {len(items)} scenarios ({shown})?"
        text += "\n\nThis cannot be undone; the file on disk changes only when you save."
        if not ask_confirm(self, text):
            return
        # the row after the last deleted one becomes current, so Delete can be pressed again
        next_id = self._neighbour_id(items)
        failures = []
        for item in items:
            try:
                self._project.delete_scenario(int(item.data(0, ID_ROLE)))
            except ProjectError as exc:
                failures.append(f"“{item.text(0)}”: {_error_text(exc)}")
        if failures:
            self.show_message("Not deleted: " + "; ".join(failures))
        else:
            self.clear_message()
        self.tree.clearSelection()
        self.refresh()
        if next_id is not None:
            self.select(next_id)
        if len(failures) < len(items):
            self.projectChanged.emit()


__all__ = [
    "ScenarioBrowser",
    "ask_confirm",
    "ask_notes",
    "ask_text",
    "kind_label",
]
