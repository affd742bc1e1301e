"""The hardware preset manager: every preset's figures with their sources, and an editor
for the user's own presets.

::

    +----------------------+------------------------------------------------------------+
    | [lock] NVIDIA H100   | NVIDIA H100 SXM                    [Duplicate] [Delete]     |
    |        NVIDIA        | NVIDIA · built-in, read-only                                |
    | [lock] NVIDIA H200   +------------------------------------------------------------+
    | ...                  | Figure          | Value        | Source          | Note     |
    |        My H100       | BF16 dense rate | 989 TFLOP/s  | NVIDIA spec ... | ...      |
    |        NVIDIA        | ...                                                         |
    |                      +------------------------------------------------------------+
    |                      | editor (user presets): name, vendor, one row per figure:    |
    |                      | value field, source field                                   |
    +----------------------+------------------------------------------------------------+
    | [Undo] [Redo]                                                              [Close] |

Built-in presets are read-only: "Duplicate" makes an editable copy ("X (copy)"). Every
change (duplicate, edit of one field, delete) is one ``QUndoCommand`` on the window's undo
stack with a readable text; its ``redo``/``undo`` apply it to the project and reload the
:class:`~ui.catalog.HardwareCatalog`, so every panel sees it. The commands hold the project
and the catalog, never this dialog, which may be closed while they stay on the stack; the
dialog follows ``catalog.changed``.

A figure typed by the user says so: changing a value sets that figure's source to
"entered by user YYYY-MM-DD" (the source field stays editable, to name a datasheet or a
measurement instead).

Cache levels (L2, or another cache in front of device memory) are listed under the memory
figures, one row each (bandwidth, optional capacity, source, Remove), with a last row that adds
one: each is drawn as a roof of its own on the roofline. Adding, editing and removing a level
are undo steps like the other edits.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import date

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QIcon,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
    QUndoCommand,
    QUndoStack,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from storage.errors import ProjectError
from ui import plain, theme
from ui.widgets.message_label import MessageLabel
from ui.widgets.quantity_edit import QuantityField
from workbench import InputError
from workbench.hardware import PRECISION_LABELS, Hardware, MemoryLevel
from workbench.units import format_quantity

log = logging.getLogger(__name__)

KEY_ROLE = Qt.ItemDataRole.UserRole
BUILTIN_ROLE = Qt.ItemDataRole.UserRole + 1

READ_ONLY_TIP = "Built-in presets cannot be edited or deleted: duplicate it first and edit the copy."
USER_SOURCE = "entered by user"


# -- small helpers ------------------------------------------------------------------------------
def user_source(today: date | None = None) -> str:
    """The source of a figure the user typed: "entered by user 2026-05-09"."""
    return f"{USER_SOURCE} {(today or date.today()).isoformat()}"


def _shared_user_source(old: str, changed: str, kept: str | None) -> str:
    """Source of a level after ``changed`` was typed, when ``kept`` still has the old source."""
    if kept is None or old.startswith(USER_SOURCE):
        return user_source()
    return f"{changed} {user_source()}; {kept}: {old}"


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    try:
        return format_quantity(value, unit, digits=4)  # as the editor's fields show it
    except (ValueError, TypeError):
        return f"{value:g} {unit}".strip()


def _factor_text(factor: float) -> str:
    return f"{factor:g}×"


def unique_copy_name(name: str, taken: set[str]) -> str:
    """ "X (copy)", else "X (copy 2)", "X (copy 3)", ... not in ``taken``."""
    candidate = f"{name} (copy)"
    n = 2
    while candidate in taken:
        candidate = f"{name} (copy {n})"
        n += 1
    return candidate


def _lock_icon(color: QColor, size: int = 16) -> QIcon:
    """A small padlock, drawn (icon themes are not there on every desktop, nor offscreen)."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 16.0
    pen = QPen(color, 1.6 * s)
    painter.setPen(pen)
    shackle = QPainterPath()
    shackle.moveTo(QPointF(5 * s, 7.5 * s))
    shackle.lineTo(QPointF(5 * s, 5 * s))
    shackle.arcTo(QRectF(5 * s, 2 * s, 6 * s, 6 * s), 180, -180)
    shackle.lineTo(QPointF(11 * s, 7.5 * s))
    painter.drawPath(shackle)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    painter.drawRoundedRect(QRectF(3 * s, 7 * s, 10 * s, 7.5 * s), 1.5 * s, 1.5 * s)
    painter.end()
    return QIcon(pixmap)


# -- undo commands ------------------------------------------------------------------------------
class _PresetCommand(QUndoCommand):
    """Base: a change to the project's presets, followed by ``catalog.reload()``."""

    def __init__(self, project, catalog, text: str, parent: QUndoCommand | None = None):
        super().__init__(text, parent)
        self.project = project
        self.catalog = catalog

    def _run(self, step) -> None:
        if getattr(self.project, "closed", False):
            return  # the project was closed under the stack: nothing left to change
        try:
            step()
        except ProjectError:
            log.exception("%s failed", self.text())
        self.catalog.reload()


class DuplicatePresetCommand(_PresetCommand):
    """Copy a preset (built-in or not) as a user preset; undo deletes the copy."""

    def __init__(self, project, catalog, source_key: str, new_name: str, source_name: str = ""):
        super().__init__(project, catalog, f"Duplicate preset {source_name or source_key}")
        self.source_key = source_key
        self.new_name = new_name
        self.key: str | None = None  # the copy's key, known after the first redo
        self._copy: Hardware | None = None

    def redo(self) -> None:
        def step():
            if self._copy is None:
                self.key = self.project.duplicate_preset(self.source_key, self.new_name)
                self._copy = self.project.get_preset(self.key)
            else:
                self.project.add_preset(self._copy)

        self._run(step)

    def undo(self) -> None:
        if self.key is not None:
            self._run(lambda: self.project.delete_preset(self.key))


class EditPresetCommand(_PresetCommand):
    """Replace the user preset ``key``'s value ``old`` with ``new``."""

    def __init__(self, project, catalog, key: str, old: Hardware, new: Hardware, text: str):
        super().__init__(project, catalog, text)
        self.key = key
        self.old = old
        self.new = new

    def redo(self) -> None:
        self._run(lambda: self.project.update_preset(self.key, self.new))

    def undo(self) -> None:
        self._run(lambda: self.project.update_preset(self.key, self.old))


class DeletePresetCommand(_PresetCommand):
    """Delete the user preset ``key``; undo puts it back."""

    def __init__(self, project, catalog, key: str, hardware: Hardware):
        super().__init__(project, catalog, f"Delete preset {hardware.name}")
        self.key = key
        self.hardware = hardware

    def redo(self) -> None:
        self._run(lambda: self.project.delete_preset(self.key))

    def undo(self) -> None:
        self._run(lambda: self.project.add_preset(self.hardware))


# -- editor pieces ------------------------------------------------------------------------------
class TextField(QWidget):
    """A line edit with a message line under it, like :class:`QuantityField`.

    ``textCommitted(str)`` fires on Enter or leaving the field, only when the text changed.
    """

    textCommitted = Signal(str)

    def __init__(self, text: str = "", parent: QWidget | None = None, *, label: str = "",
                 placeholder: str = ""):
        super().__init__(parent)
        self.edit = QLineEdit(text, self)
        self.edit.setAccessibleName(label)
        self.edit.setPlaceholderText(placeholder)
        self.edit.setCursorPosition(0)
        self.message = MessageLabel(self)
        font = QFont(self.message.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        self.message.setFont(font)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.edit)
        layout.addWidget(self.message)
        self.setFocusProxy(self.edit)
        self._committed = text
        self.edit.editingFinished.connect(self._commit)

    def text(self) -> str:
        return self.edit.text()

    def setText(self, text: str) -> None:  # noqa: N802 - Qt naming
        self._committed = text
        if self.edit.text() != text:
            self.edit.setText(text)
            self.edit.setCursorPosition(0)
        self.edit.setToolTip(plain.tooltip(text) if len(text) > 40 else "")
        self.show_error("")

    def _commit(self) -> None:
        text = self.edit.text()
        if text != self._committed:
            self.textCommitted.emit(text)

    def show_error(self, message: str) -> None:
        self.message.show_message(message)
        self.edit.setStyleSheet(theme.error_style_sheet() if message else "")

    def error(self) -> str:
        return self.message.message_text()

    message_text = error


class PresetManagerDialog(QDialog):
    """Browse every hardware preset with its sources; duplicate, edit and delete user ones."""

    def __init__(self, project, catalog, undo_stack: QUndoStack, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("presetManager")
        self.setWindowTitle("Hardware presets")
        self.setModal(False)
        self.setSizeGripEnabled(True)
        self.project = project
        self.catalog = catalog
        self.undo_stack = undo_stack
        self._key: str | None = None  # selected preset
        self._hw: Hardware | None = None  # its value as shown
        self._editor_shape: tuple | None = None
        self._editable_layout: bool | None = None
        self.fields: dict[str, QWidget] = {}  # editor fields by name (see _build_editor)

        # left: the list
        self.preset_list = QListWidget(self)
        self.preset_list.setObjectName("presetManager.list")
        self.preset_list.setAccessibleName("Hardware presets")
        self.preset_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.preset_list.setUniformItemSizes(False)
        self.preset_list.setIconSize(QSize(16, 16))
        self.preset_list.currentItemChanged.connect(self._on_current_changed)
        self.preset_list.setMinimumWidth(220)

        # right: title, actions, figures table, editor
        self.title = QLabel(self)
        title_font = QFont(self.title.font())
        title_font.setPointSizeF(title_font.pointSizeF() * 1.35)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setTextFormat(Qt.TextFormat.PlainText)  # a preset's name is the user's text
        self.subtitle = QLabel(self)
        self.subtitle.setTextFormat(Qt.TextFormat.PlainText)
        self.subtitle.setWordWrap(True)
        self.duplicate_button = QPushButton("Duplicate", self)
        self.duplicate_button.setToolTip("Make an editable copy of this preset (your own preset)")
        self.duplicate_button.clicked.connect(self.duplicate_current)
        self.delete_button = QPushButton("Delete", self)
        self.delete_button.clicked.connect(self.delete_current)
        self.duplicate_button.setAutoDefault(False)
        self.delete_button.setAutoDefault(False)

        self.table = QTableWidget(0, 4, self)
        self.table.setObjectName("presetManager.figures")
        self.table.setAccessibleName("Figures and their sources")
        self.table.setHorizontalHeaderLabels(["Figure", "Value", "Source", "Note"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        self.table.setAlternatingRowColors(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        # wrapped sources need taller rows once the columns know their widths
        header.sectionResized.connect(lambda *_: self._fit_rows())

        self.editor_area = QScrollArea(self)
        self.editor_area.setObjectName("presetManager.editor")
        self.editor_area.setWidgetResizable(True)
        self.editor_area.setFrameShape(QFrame.Shape.NoFrame)
        self.editor: QWidget | None = None
        self.read_only_hint = QLabel(self)
        self.read_only_hint.setWordWrap(True)
        self.read_only_hint.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.read_only_hint.setMargin(8)

        self.message = MessageLabel(self, "presetManager.message")

        head = QHBoxLayout()
        titles = QVBoxLayout()
        titles.setSpacing(0)
        titles.addWidget(self.title)
        titles.addWidget(self.subtitle)
        head.addLayout(titles, 1)
        head.addWidget(self.duplicate_button, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(self.delete_button, 0, Qt.AlignmentFlag.AlignTop)

        lower = QWidget(self)
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        self.editor_heading = QLabel("Edit", lower)
        heading_font = QFont(self.editor_heading.font())
        heading_font.setBold(True)
        self.editor_heading.setFont(heading_font)
        lower_layout.addWidget(self.editor_heading)
        lower_layout.addWidget(self.editor_area, 1)
        lower_layout.addWidget(self.read_only_hint, 1)

        self.right_splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.right_splitter.setChildrenCollapsible(False)
        self.right_splitter.addWidget(self.table)
        self.right_splitter.addWidget(lower)
        self.right_splitter.setStretchFactor(0, 1)
        self.right_splitter.setStretchFactor(1, 1)

        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addLayout(head)
        right_layout.addWidget(self.message)
        right_layout.addWidget(self.right_splitter, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.preset_list)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([260, 840])

        # bottom: undo / redo (the window's shortcuts do not reach this window), close
        self.undo_action = QAction("Undo", self)
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.undo_action.triggered.connect(self.undo_stack.undo)
        self.redo_action = QAction("Redo", self)
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        self.redo_action.triggered.connect(self.undo_stack.redo)
        self.addAction(self.undo_action)
        self.addAction(self.redo_action)
        self.undo_button = QToolButton(self)
        self.undo_button.setDefaultAction(self.undo_action)
        self.redo_button = QToolButton(self)
        self.redo_button.setDefaultAction(self.redo_action)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        bottom = QHBoxLayout()
        bottom.addWidget(self.undo_button)
        bottom.addWidget(self.redo_button)
        bottom.addStretch(1)
        bottom.addWidget(buttons)

        layout = QVBoxLayout(self)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(bottom)

        self.undo_stack.indexChanged.connect(self._update_undo_actions)
        self.catalog.changed.connect(self.reload)
        self._update_undo_actions()
        self.reload()
        self.resize(1100, 700)

    # -- list ----------------------------------------------------------------------------------
    def set_project(self, project) -> None:
        """Show another project's presets (the window opened another file)."""
        self.project = project
        self._key = None
        self.reload()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.preset_list.count():
            self.reload()  # the padlocks are drawn in the palette's text colour

    def reload(self) -> None:
        """Re-read the presets, keeping the selection (or the row nearest to it)."""
        if self.project is None or getattr(self.project, "closed", False):
            self.preset_list.clear()
            self._show_preset(None)
            return
        keep, row = self._key, max(self.preset_list.currentRow(), 0)
        records = self.project.list_presets()
        lock = _lock_icon(self.palette().color(QPalette.ColorRole.Text))
        blank = QPixmap(16, 16)
        blank.fill(Qt.GlobalColor.transparent)
        blank_icon = QIcon(blank)
        self.preset_list.blockSignals(True)
        try:
            self.preset_list.clear()
            for record in records:
                kind = "built-in" if record.builtin else "your preset"
                item = QListWidgetItem(f"{record.name}\n{record.vendor} · {kind}")
                item.setIcon(lock if record.builtin else blank_icon)
                item.setData(KEY_ROLE, record.key)
                item.setData(BUILTIN_ROLE, record.builtin)
                try:
                    problem = self.project.preset_problem(record.key)
                except ProjectError:
                    problem = None
                if problem:
                    item.setForeground(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
                    item.setToolTip(plain.tooltip(f"Cannot be loaded: {problem}"))
                elif record.builtin:
                    item.setToolTip(plain.tooltip(f"{record.name}: built-in, read-only. Duplicate it to edit a copy."))
                else:
                    item.setToolTip(plain.tooltip(f"{record.name}: your preset, editable."))
                self.preset_list.addItem(item)
            target = self._row_of(keep) if keep is not None else None
            if target is None and self.preset_list.count():
                target = min(row, self.preset_list.count() - 1)
            if target is not None:
                self.preset_list.setCurrentRow(target)
        finally:
            self.preset_list.blockSignals(False)
        current = self.preset_list.currentItem()
        self._show_preset(current.data(KEY_ROLE) if current is not None else None)

    def _row_of(self, key: str) -> int | None:
        for i in range(self.preset_list.count()):
            if self.preset_list.item(i).data(KEY_ROLE) == key:
                return i
        return None

    def item_for(self, key: str) -> QListWidgetItem | None:
        row = self._row_of(key)
        return self.preset_list.item(row) if row is not None else None

    def select(self, key: str) -> None:
        row = self._row_of(key)
        if row is not None:
            self.preset_list.setCurrentRow(row)
            self.preset_list.scrollToItem(self.preset_list.item(row))

    def current_key(self) -> str | None:
        return self._key

    def _on_current_changed(self, current: QListWidgetItem | None, _previous) -> None:
        self.clear_message()
        self._show_preset(current.data(KEY_ROLE) if current is not None else None)

    # -- messages ------------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.message.show_message(text)

    def clear_message(self) -> None:
        self.message.clear_message()

    def message_text(self) -> str:
        return self.message.message_text()

    # -- the selected preset -------------------------------------------------------------------
    def _show_preset(self, key: str | None) -> None:
        hw, problem, builtin = None, None, False
        if key is not None:
            item = self.item_for(key)
            builtin = bool(item.data(BUILTIN_ROLE)) if item is not None else False
            try:
                hw = self.project.get_preset(key)
            except ProjectError as exc:
                problem = exc.problem
        self._key, self._hw = key, hw
        if key is None:
            self.title.setText("No preset")
            self.subtitle.setText("")
        elif hw is None:
            self.title.setText(key)
            self.subtitle.setText(f"Cannot be loaded: {problem}. Delete it, or fix the project file.")
        else:
            self.title.setText(hw.name)
            state = "built-in, read-only" if builtin else "your preset, editable"
            self.subtitle.setText(f"{hw.vendor} · {state}" + (f" · {hw.note}" if hw.note else ""))
        self.duplicate_button.setEnabled(hw is not None)
        self.delete_button.setEnabled(key is not None and not builtin)
        self.delete_button.setToolTip(READ_ONLY_TIP if builtin else "Delete this preset (Undo brings it back)")
        self._fill_table(hw)
        editable = hw is not None and not builtin
        self.editor_area.setVisible(editable)
        self.read_only_hint.setVisible(not editable)
        self.editor_heading.setText("Edit" if editable else "Read-only")
        if builtin:
            self.read_only_hint.setText(
                "Built-in presets are read-only, so their figures always match their sources. "
                "Duplicate it first: the copy is your own preset, with every figure editable.")
            self.read_only_hint.setToolTip(READ_ONLY_TIP)
        else:
            self.read_only_hint.setText("")
            self.read_only_hint.setToolTip("")
        if editable:
            self._fill_editor(hw)
        else:
            self._drop_editor()
        if editable != self._editable_layout:
            # the editor needs room; a read-only preset gives it all to the figures
            self._editable_layout = editable
            total = max(sum(self.right_splitter.sizes()), 400)
            share = 0.4 if editable else 0.8
            self.right_splitter.setSizes([int(total * share), total - int(total * share)])

    def _fill_table(self, hw: Hardware | None) -> None:
        rows: list[tuple[str, str, str, str]] = []
        if hw is not None:
            for rate in sorted(hw.compute, key=lambda r: hw.precisions.index(r.precision)):
                label = PRECISION_LABELS.get(rate.precision, rate.precision)
                rows.append((f"{label} dense rate", _fmt(rate.dense_flops, "FLOP/s"), rate.source, rate.note))
                if rate.sparsity_factor is not None:
                    rows.append((f"{label} with 2:4 sparsity", _fmt(rate.flops(sparse=True), "FLOP/s"),
                                 rate.source, f"dense rate × {rate.sparsity_factor:g}"))
            for level in hw.memory:
                tech = f" ({level.technology})" if level.technology else ""
                rows.append((f"{level.name} bandwidth{tech}", _fmt(level.bandwidth, "B/s"), level.source,
                             level.note))
                if level.capacity is not None:
                    rows.append((f"{level.name} capacity", _fmt(level.capacity, "B"), level.source, ""))
            if hw.tdp_w is not None:
                rows.append(("TDP", _fmt(hw.tdp_w, "W"), hw.tdp_source, ""))
            if hw.interconnect_bw is not None:
                name = f" ({hw.interconnect})" if hw.interconnect else ""
                rows.append((f"Interconnect bandwidth{name}", _fmt(hw.interconnect_bw, "B/s"),
                             hw.interconnect_source, "both directions, per GPU"))
        self.table.setRowCount(len(rows))
        for r, values in enumerate(rows):
            for c, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setToolTip(plain.tooltip(text) if c >= 2 else "")
                if c == 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self._fit_rows()

    def _fit_rows(self) -> None:
        """Rows as tall as their wrapped text, at most three lines (the tooltip has the rest)."""
        self.table.resizeRowsToContents()
        limit = self.table.fontMetrics().lineSpacing() * 3 + 8
        for r in range(self.table.rowCount()):
            if self.table.rowHeight(r) > limit:
                self.table.setRowHeight(r, limit)

    def figure_rows(self) -> dict[str, tuple[str, str, str]]:
        """The table as {figure: (value, source, note)}, for tests and accessibility checks."""
        out = {}
        for r in range(self.table.rowCount()):
            out[self.table.item(r, 0).text()] = tuple(self.table.item(r, c).text() for c in (1, 2, 3))
        return out

    # -- editor --------------------------------------------------------------------------------
    def _drop_editor(self) -> None:
        if self.editor is not None:
            old = self.editor_area.takeWidget()
            old.deleteLater()
            self.editor = None
            self.fields = {}
            self._editor_shape = None

    @staticmethod
    def _shape(hw: Hardware, key: str) -> tuple:
        return key, hw.precisions, tuple(m.name for m in hw.cache_levels)

    def _fill_editor(self, hw: Hardware) -> None:
        shape = self._shape(hw, self._key)
        if shape != self._editor_shape:
            self._drop_editor()
            self._build_editor(hw)
            self._editor_shape = shape
        self._set_editor_values(hw)

    def _build_editor(self, hw: Hardware) -> None:
        editor = QWidget()
        grid = QGridLayout(editor)
        grid.setContentsMargins(4, 4, 4, 4)
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(4)
        grid.setColumnStretch(3, 1)
        fields: dict[str, QWidget] = {}
        row = 0

        def header(texts):
            nonlocal row
            for c, text in enumerate(texts):
                label = QLabel(text, editor)
                font = QFont(label.font())
                font.setBold(True)
                label.setFont(font)
                grid.addWidget(label, row, c)
            row += 1

        def add(label_text: str, name: str, value_widget: QWidget | None = None,
                extra: QWidget | None = None, source: QWidget | None = None, span: bool = False) -> None:
            nonlocal row
            label = QLabel(label_text, editor)
            label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            label.setContentsMargins(0, 4, 0, 0)
            grid.addWidget(label, row, 0)
            if value_widget is not None:
                label.setBuddy(value_widget.focusProxy() or value_widget)
                if span:
                    grid.addWidget(value_widget, row, 1, 1, 3)
                else:
                    grid.addWidget(value_widget, row, 1, Qt.AlignmentFlag.AlignTop)
                fields[name] = value_widget
            if extra is not None:
                grid.addWidget(extra, row, 2, Qt.AlignmentFlag.AlignTop)
            if source is not None:
                grid.addWidget(source, row, 3, Qt.AlignmentFlag.AlignTop)
            row += 1

        def quantity(unit: str, label: str, name: str, **kwargs) -> QuantityField:
            field = QuantityField(unit, editor, label=label, **kwargs)
            field.setMinimumWidth(130)
            field.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
            field.valueEdited.connect(lambda value, n=name: self._on_value(n, value))
            field.edit.validityChanged.connect(lambda ok, _msg, n=name: self._on_invalid(n, ok))
            fields[name] = field
            return field

        def text(label: str, name: str, placeholder: str = "") -> TextField:
            field = TextField("", editor, label=label, placeholder=placeholder)
            field.textCommitted.connect(lambda value, n=name: self._on_text(n, value))
            fields[name] = field
            return field

        add("Name", "name", text("Name", "name"), span=True)
        add("Vendor", "vendor", text("Vendor", "vendor"), span=True)
        header(["Figure", "Value", "2:4 sparsity", "Source"])
        for precision in hw.precisions:
            label = PRECISION_LABELS.get(precision, precision)
            dense = quantity("FLOP/s", f"{label} dense rate", f"dense:{precision}", minimum=0, min_inclusive=False)
            factor = quantity("", f"{label} sparsity factor", f"sparsity:{precision}", minimum=1,
                              min_inclusive=False, maximum=16)
            factor.edit.setPlaceholderText("none")
            factor.setMinimumWidth(70)
            factor.setMaximumWidth(110)
            factor.setToolTip(f"Sparse rate / dense rate at {label} (2 for NVIDIA 2:4); empty if unsupported.")
            source = text(f"Source of {label} rates", f"source:{precision}", "where the figure comes from")
            add(f"{label} dense rate", f"dense:{precision}", dense, factor, source)
        bw = quantity("B/s", "Memory bandwidth", "mem_bw", minimum=0, min_inclusive=False)
        add("Memory bandwidth", "mem_bw", bw, None, text("Source of memory figures", "source:memory"))
        capacity = quantity("B", "Memory capacity", "mem_capacity", minimum=0, min_inclusive=False)
        capacity.edit.setPlaceholderText("unknown")
        same = QLabel("same source as the bandwidth", editor)
        same.setEnabled(False)
        add("Memory capacity", "mem_capacity", capacity, None, same)
        row = self._build_cache_rows(hw, editor, grid, row, quantity, text, fields)
        tdp = quantity("W", "TDP", "tdp", minimum=0, min_inclusive=False)
        tdp.edit.setPlaceholderText("unknown")
        add("TDP", "tdp", tdp, None, text("Source of the TDP", "source:tdp"))
        link = quantity("B/s", "Interconnect bandwidth", "interconnect_bw", minimum=0, min_inclusive=False)
        link.edit.setPlaceholderText("none")
        link.setToolTip("GPU-to-GPU bandwidth per GPU, both directions, as vendors print it "
                        "(NVLink 4: 900 GB/s); empty if there is none.")
        add("Interconnect bandwidth", "interconnect_bw", link, None,
            text("Source of the interconnect bandwidth", "source:interconnect"))
        add("Interconnect", "interconnect", text("Interconnect", "interconnect", "e.g. NVLink 4"))
        add("Note", "note", text("Note", "note", "anything a reader of this preset should know"), span=True)
        grid.setRowStretch(row, 1)
        self.fields = fields
        self.editor = editor
        self.editor_area.setWidget(editor)

    def _build_cache_rows(self, hw: Hardware, editor: QWidget, grid: QGridLayout, row: int,
                          quantity, text, fields: dict[str, QWidget]) -> int:
        """The cache levels (L2, ...; each a roof of the roofline): bandwidth, capacity and
        source per level with a Remove button, then a row that adds one."""
        grid.addWidget(QLabel("", editor), row, 0)  # a gap before the section
        row += 1
        for c, title in enumerate(["Cache level", "Bandwidth", "Capacity", "Source"]):
            label = QLabel(title, editor)
            font = QFont(label.font())
            font.setBold(True)
            label.setFont(font)
            if c == 0:
                label.setToolTip("Caches in front of device memory (L2, ...): the roofline draws a roof "
                                 "for each. Give a figure only with its source.")
            grid.addWidget(label, row, c)
        row += 1
        for level in hw.cache_levels:
            name = level.name
            label = QLabel(f"{name} bandwidth", editor)
            label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            label.setContentsMargins(0, 4, 0, 0)
            bw = quantity("B/s", f"{name} bandwidth", f"level_bw:{name}", minimum=0, min_inclusive=False)
            label.setBuddy(bw.focusProxy() or bw)
            capacity = quantity("B", f"{name} capacity", f"level_capacity:{name}", minimum=0, min_inclusive=False)
            capacity.edit.setPlaceholderText("unknown")
            capacity.setMinimumWidth(100)
            source = text(f"Source of {name} figures", f"source:level:{name}", "where the figures come from")
            remove = QPushButton("Remove", editor)
            remove.setObjectName(f"presetManager.removeLevel.{name}")
            remove.setAccessibleName(f"Remove the {name} level")
            remove.setToolTip(f"Remove the {name} level from this preset (Undo brings it back)")
            remove.setAutoDefault(False)
            remove.clicked.connect(lambda _checked=False, n=name: self.remove_memory_level(n))
            fields[f"remove_level:{name}"] = remove
            grid.addWidget(label, row, 0)
            grid.addWidget(bw, row, 1, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(capacity, row, 2, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(source, row, 3, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(remove, row, 4, Qt.AlignmentFlag.AlignTop)
            row += 1
        # the new level: its name, bandwidth and (optional) capacity and source, then Add
        new_name = TextField("", editor, label="Name of the new cache level", placeholder="e.g. L2")
        new_bw = QuantityField("B/s", editor, label="Bandwidth of the new cache level", minimum=0,
                               min_inclusive=False)
        new_bw.edit.setPlaceholderText("e.g. 7 TB/s")
        new_bw.setMinimumWidth(130)
        new_capacity = QuantityField("B", editor, label="Capacity of the new cache level", minimum=0,
                                     min_inclusive=False)
        new_capacity.edit.setPlaceholderText("unknown")
        new_capacity.setMinimumWidth(100)
        new_source = TextField("", editor, label="Source of the new cache level",
                               placeholder="a datasheet or a measurement (else: entered by user)")
        add_button = QPushButton("Add level", editor)
        add_button.setObjectName("presetManager.addLevel")
        add_button.setToolTip("Add this cache level to the preset: the roofline can then draw its roof "
                              "(Undo removes it)")
        add_button.setAutoDefault(False)
        add_button.clicked.connect(lambda _checked=False: self.add_memory_level())
        for key, widget in (("new_level_name", new_name), ("new_level_bw", new_bw),
                            ("new_level_capacity", new_capacity), ("new_level_source", new_source),
                            ("add_level", add_button)):
            fields[key] = widget
        grid.addWidget(new_name, row, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(new_bw, row, 1, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(new_capacity, row, 2, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(new_source, row, 3, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(add_button, row, 4, Qt.AlignmentFlag.AlignTop)
        row += 1
        grid.addWidget(QLabel("", editor), row, 0)  # and after it
        return row + 1

    def _set_editor_values(self, hw: Hardware) -> None:
        f = self.fields
        f["name"].setText(hw.name)
        f["vendor"].setText(hw.vendor)
        for rate in hw.compute:
            f[f"dense:{rate.precision}"].setValue(rate.dense_flops)
            f[f"sparsity:{rate.precision}"].setValue(rate.sparsity_factor)
            f[f"source:{rate.precision}"].setText(rate.source)
        level = self._memory(hw)
        f["mem_bw"].setValue(level.bandwidth)
        f["mem_capacity"].setValue(level.capacity)
        f["source:memory"].setText(level.source)
        for cache in hw.cache_levels:
            f[f"level_bw:{cache.name}"].setValue(cache.bandwidth)
            f[f"level_capacity:{cache.name}"].setValue(cache.capacity)
            f[f"source:level:{cache.name}"].setText(cache.source)
        if not any(m.name == "L2" for m in hw.memory) and not f["new_level_name"].text():
            f["new_level_name"].setText("L2")
        f["tdp"].setValue(hw.tdp_w)
        f["source:tdp"].setText(hw.tdp_source)
        f["interconnect_bw"].setValue(hw.interconnect_bw)
        f["source:interconnect"].setText(hw.interconnect_source)
        f["interconnect"].setText(hw.interconnect)
        f["note"].setText(hw.note)

    @staticmethod
    def _memory(hw: Hardware) -> MemoryLevel:
        return hw.device_memory

    # -- cache levels --------------------------------------------------------------------------
    def add_memory_level(self) -> bool:
        """Add the cache level typed in the last row (one undo step); says what is missing."""
        hw, f = self._hw, self.fields
        if hw is None or "new_level_name" not in f:
            return False
        name = " ".join(f["new_level_name"].text().split())
        bw_field, cap_field = f["new_level_bw"], f["new_level_capacity"]

        def typed(field: QuantityField) -> float | None:
            # committed as leaving the field does (the value kept, not its rounded display)
            if not field.edit.text().strip():
                return None
            return field.value() if field.edit.commit() else None

        bandwidth = typed(bw_field)
        capacity_text = cap_field.edit.text().strip()
        capacity = typed(cap_field)
        problem = ""
        if not name:
            problem = "Name the new cache level (e.g. L2)."
            f["new_level_name"].show_error(problem)
        elif any(m.name == name for m in hw.memory):
            problem = f"{hw.name} already has a level named {name}: change its figures in its row."
            f["new_level_name"].show_error(problem)
        elif bandwidth is None:
            problem = "Give the new level's bandwidth (e.g. 7 TB/s)."
            bw_field.show_error(problem)
        elif capacity_text and capacity is None:
            problem = "The capacity is not a size (e.g. 50 MiB); leave it empty if unknown."
            cap_field.show_error(problem)
        if problem:
            return False
        source = f["new_level_source"].text().strip() or user_source()
        try:
            level = MemoryLevel(name=name, bandwidth=bandwidth, source=source, capacity=capacity)
            new = hw.with_changes(memory=(*hw.memory, level))
        except (InputError, ValueError, TypeError) as exc:
            bw_field.show_error(_model_message(exc))
            return False
        for key in ("new_level_name", "new_level_source"):
            f[key].setText("")
        bw_field.setValue(None)
        cap_field.setValue(None)
        self._push_edit(hw, new, f"Add memory level {name} ({_fmt(bandwidth, 'B/s')}) to {hw.name}")
        return True

    def remove_memory_level(self, name: str) -> bool:
        """Remove the cache level ``name`` (one undo step; device memory stays)."""
        hw = self._hw
        if hw is None:
            return False
        level = next((m for m in hw.cache_levels if m.name == name), None)
        if level is None:
            return False
        memory = tuple(m for m in hw.memory if m is not level)
        self._push_edit(hw, hw.with_changes(memory=memory), f"Remove memory level {name} from {hw.name}")
        return True

    # -- edits ---------------------------------------------------------------------------------
    _OPTIONAL = {"mem_capacity", "tdp", "interconnect_bw"}
    _OPTIONAL_PREFIXES = ("sparsity:", "level_capacity:")

    def _on_invalid(self, name: str, ok: bool) -> None:
        """An emptied optional field means "none": remove the figure instead of complaining."""
        if ok:
            return
        field = self.fields.get(name)
        if field is None or field.edit.text().strip():
            return
        optional = name in self._OPTIONAL or name.startswith(self._OPTIONAL_PREFIXES)
        if not optional:
            return
        had_value = field.value() is not None
        field.edit.revert()
        if had_value:
            self._on_value(name, None)

    def _on_value(self, name: str, value: float | None) -> None:
        hw = self._hw
        if hw is None:
            return
        name_of = hw.name
        try:
            new, text = self._changed(hw, name, value)
        except (InputError, ValueError, TypeError) as exc:
            field = self.fields.get(name)
            if isinstance(field, QuantityField):
                field.show_error(_model_message(exc))  # the typed text stays, to be fixed
            else:
                self.show_message(_model_message(exc))
            return
        self._push_edit(hw, new, text or f"Change {name} of {name_of}")

    @staticmethod
    def _level_edit(hw, level, label: str, bandwidth: bool, value):
        """``hw`` with one memory level's bandwidth (or capacity) set to ``value``, and the undo
        text: device memory ("memory") and cache levels (by their name) are edited alike."""
        n = hw.name
        if bandwidth:
            kept = "capacity" if level.capacity is not None else None
            new_level = replace(level, bandwidth=value, source=_shared_user_source(level.source, "bandwidth", kept))
            text = f"Change {label} bandwidth of {n} to {_fmt(value, 'B/s')}"
        else:
            new_level = replace(level, capacity=value,
                                source=_shared_user_source(level.source, "capacity", "bandwidth"))
            text = (f"Change {label} capacity of {n} to {_fmt(value, 'B')}" if value is not None
                    else f"Remove {label} capacity of {n}")
        memory = tuple(new_level if m is level else m for m in hw.memory)
        return hw.with_changes(memory=memory), text

    def _changed(self, hw: Hardware, name: str, value: float | None) -> tuple[Hardware, str]:
        n = hw.name
        if name.startswith("dense:") or name.startswith("sparsity:"):
            what, precision = name.split(":", 1)
            label = PRECISION_LABELS.get(precision, precision)
            rates = []
            for rate in hw.compute:
                if rate.precision == precision:
                    if what == "dense":
                        kept = "sparsity factor" if rate.sparsity_factor is not None else None
                        source = _shared_user_source(rate.source, "dense rate", kept)
                        rate = replace(rate, dense_flops=value, source=source)
                    else:
                        source = _shared_user_source(rate.source, "sparsity factor", "dense rate")
                        rate = replace(rate, sparsity_factor=value, source=source)
                rates.append(rate)
            new = hw.with_changes(compute=tuple(rates))
            if what == "dense":
                return new, f"Change {label} dense rate of {n} to {_fmt(value, 'FLOP/s')}"
            if value is None:
                return new, f"Remove {label} sparsity factor of {n}"
            return new, f"Change {label} sparsity factor of {n} to {_factor_text(value)}"
        if name in ("mem_bw", "mem_capacity"):
            return self._level_edit(hw, self._memory(hw), "memory", name == "mem_bw", value)
        if name.startswith(("level_bw:", "level_capacity:")):
            what, level_name = name.split(":", 1)
            return self._level_edit(hw, hw.memory_level(level_name), level_name, what == "level_bw", value)
        if name == "tdp":
            if value is None:
                return hw.with_changes(tdp_w=None), f"Remove TDP of {n}"
            return (hw.with_changes(tdp_w=value, tdp_source=user_source()),
                    f"Change TDP of {n} to {_fmt(value, 'W')}")
        if name == "interconnect_bw":
            if value is None:
                return hw.with_changes(interconnect_bw=None), f"Remove interconnect bandwidth of {n}"
            return (hw.with_changes(interconnect_bw=value, interconnect_source=user_source()),
                    f"Change interconnect bandwidth of {n} to {_fmt(value, 'B/s')}")
        raise KeyError(name)

    def _on_text(self, name: str, value: str) -> None:
        hw = self._hw
        field = self.fields.get(name)
        if hw is None or field is None:
            return
        n = hw.name
        cleaned = " ".join(value.split())
        try:
            if name == "name":
                new, text = hw.with_changes(name=cleaned), f"Rename preset {n} to {cleaned}"
            elif name == "vendor":
                new, text = hw.with_changes(vendor=cleaned), f"Change vendor of {n} to {cleaned}"
            elif name == "note":
                new, text = hw.with_changes(note=value.strip()), f"Change note of {n}"
            elif name == "interconnect":
                new, text = hw.with_changes(interconnect=cleaned), f"Change interconnect of {n} to {cleaned}"
            elif name.startswith("source:"):
                what = name.split(":", 1)[1]
                new, text = self._with_source(hw, what, value.strip())
            else:
                raise KeyError(name)
            if name in ("name", "vendor") and not cleaned:
                raise InputError(name, "must not be empty")
        except (InputError, ValueError, TypeError) as exc:
            field.show_error(_model_message(exc))
            return
        field.show_error("")
        if new == hw:
            field.setText(value)
            return
        self._push_edit(hw, new, text)

    def _with_source(self, hw: Hardware, what: str, source: str) -> tuple[Hardware, str]:
        n = hw.name
        if what == "memory" or what.startswith("level:"):
            level = self._memory(hw) if what == "memory" else hw.memory_level(what.split(":", 1)[1])
            memory = tuple(replace(m, source=source) if m is level else m for m in hw.memory)
            if what == "memory":
                return hw.with_changes(memory=memory), f"Change source of memory figures of {n}"
            return hw.with_changes(memory=memory), f"Change source of {level.name} figures of {n}"
        if what == "tdp":
            return hw.with_changes(tdp_source=source), f"Change source of TDP of {n}"
        if what == "interconnect":
            return (hw.with_changes(interconnect_source=source),
                    f"Change source of interconnect bandwidth of {n}")
        label = PRECISION_LABELS.get(what, what)
        rates = tuple(replace(r, source=source) if r.precision == what else r for r in hw.compute)
        return hw.with_changes(compute=rates), f"Change source of {label} rates of {n}"

    def _push_edit(self, old: Hardware, new: Hardware, text: str) -> None:
        self.clear_message()
        self.undo_stack.push(EditPresetCommand(self.project, self.catalog, self._key, old, new, text))

    # -- duplicate / delete --------------------------------------------------------------------
    def duplicate_current(self) -> str | None:
        """Duplicate the selected preset as "NAME (copy)" and select the copy; returns its key."""
        hw = self._hw
        if hw is None or self._key is None:
            return None
        taken = {r.name for r in self.project.list_presets()}
        command = DuplicatePresetCommand(self.project, self.catalog, self._key,
                                         unique_copy_name(hw.name, taken), hw.name)
        self.undo_stack.push(command)
        if command.key is not None:
            self.select(command.key)
            name_field = self.fields.get("name")
            if name_field is not None:
                name_field.setFocus(Qt.FocusReason.OtherFocusReason)
                name_field.edit.selectAll()
        return command.key

    def delete_current(self) -> None:
        """Delete the selected user preset (one undoable step: no question asked)."""
        key = self._key
        if key is None:
            return
        item = self.item_for(key)
        if item is not None and item.data(BUILTIN_ROLE):
            self.show_message(READ_ONLY_TIP)
            return
        hw = self._hw
        if hw is None:
            # an unreadable preset: delete without undo data would lose it for good
            self.show_message("This preset cannot be loaded, so it cannot be deleted with undo; "
                              "fix or remove it in the project file.")
            return
        self.undo_stack.push(DeletePresetCommand(self.project, self.catalog, key, hw))

    def _update_undo_actions(self, *_args) -> None:
        stack = self.undo_stack
        self.undo_action.setEnabled(stack.canUndo())
        self.redo_action.setEnabled(stack.canRedo())
        self.undo_action.setToolTip(plain.tooltip(f"Undo {stack.undoText()}") if stack.canUndo() else "Nothing to undo")
        self.redo_action.setToolTip(plain.tooltip(f"Redo {stack.redoText()}") if stack.canRedo() else "Nothing to redo")

    def open(self) -> None:
        """Show without blocking the window (``QDialog.open`` would make it window-modal):
        the panels stay usable while presets are edited, and ``finished`` still fires on close."""
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.show()
        self.raise_()
        self.activateWindow()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        # a field being edited commits on focus-out; do it before the window goes
        focus = self.focusWidget()
        if isinstance(focus, QLineEdit):
            focus.editingFinished.emit()
        super().closeEvent(event)


def _model_message(exc: BaseException) -> str:
    text = str(exc)
    return text[:1].upper() + text[1:]


__all__ = [
    "DeletePresetCommand",
    "DuplicatePresetCommand",
    "EditPresetCommand",
    "PresetManagerDialog",
    "TextField",
    "unique_copy_name",
    "user_source",
]
