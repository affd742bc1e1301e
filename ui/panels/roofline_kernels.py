"""The roofline panel's kernels: the editable table, the kernel builder, file import.

- :class:`KernelTableModel` shows the scenario's kernels with their placement under the primary
  roof (intensity, roof, achieved, fraction of roof, bound). It never changes the scenario:
  an edit is parsed here and handed to the panel as ``kernelEdited(row, Kernel)``, and the panel
  pushes it as one undo step; the table then shows the new scenario.
- :class:`KernelBuilderDialog` makes kernels from shapes with ``workbench.kernels`` (GEMM,
  elementwise, layer norm, unfused and fused attention, or plain counts).
- :func:`read_kernel_file` reads a plain kernel CSV or an Nsight Compute ``--csv`` export
  (workbench's reader decides which), and :class:`ImportReport` shows what the import said:
  rows not imported, notes, and the ``ncu`` command for missing counters, copyable.

Every count comes from ``workbench``; this module only parses and formats at the edge.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import (
    QAbstractProxyModel,
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QAccessible, QBrush, QColor, QGuiApplication, QRegion
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ui import theme as th
from ui.widgets.quantity_edit import IntField, QuantityField
from workbench import kernels as wk
from workbench import units
from workbench._validate import InputError
from workbench.hardware import PRECISION_LABELS, PRECISIONS
from workbench.kernel_import import ImportResult, parse_kernel_csv, parse_ncu_csv
from workbench.kernels import Kernel
from workbench.roofline import Placements

#: Largest kernel file read (a 10,000-kernel CSV is well under 1 MiB).
MAX_IMPORT_BYTES = 64 * 2**20


# -- import ---------------------------------------------------------------------------------
def looks_like_ncu(text: str) -> bool:
    """Whether ``text`` holds an Nsight Compute CSV table, as workbench's reader decides it:
    a "Kernel Name" column beside an "ID" or "Metric Name" column or a ``__`` metric name,
    anywhere in the text (program output and ``==PROF==`` lines may come first)."""
    try:
        parse_ncu_csv(text)
    except InputError:
        return False
    return True


def read_kernel_file(path) -> tuple[ImportResult, str]:
    """Read kernels from ``path``: (result, format name). An ``ncu --csv`` export or a plain
    CSV (name, flops, bytes [, time_s]): workbench's Nsight Compute reader looks for its table
    first (one decision, the reader's own) and a text where it finds none is a plain CSV.
    Raises ``ValueError`` (a file that cannot be read as either) or ``OSError``."""
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_IMPORT_BYTES:
        raise ValueError(f"{path.name} is {size / 2**20:.0f} MiB; kernel files over "
                         f"{MAX_IMPORT_BYTES // 2**20} MiB are not read")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = raw.decode("utf-16")
        except UnicodeDecodeError:
            raise ValueError(f"{path.name} is not a text file (not UTF-8 or UTF-16)") from None
    try:
        return parse_ncu_csv(text), "Nsight Compute CSV"
    except InputError:  # no Nsight Compute table in it (the only error for text input)
        return parse_kernel_csv(text), "kernel CSV"


def import_report_lines(result: ImportResult) -> tuple[list[str], list[str]]:
    """(row problems as "line N: reason", notes) of an import, as a person reads them."""
    return [f"line {e.line}: {e.reason}" for e in result.errors], [str(note) for note in result.notes]


class ImportReport(QWidget):
    """What an import said, beside the kernel table: a heading, the rows not imported, the
    notes (what the numbers do and do not include) and, when the export lacks counters, the
    ``ncu`` command that collects them in a read-only field with a Copy button. Every text is
    plain: file names and rows come from the file."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("importReport")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.head = QLabel(self)
        self.head.setObjectName("importReportHead")
        self.head.setWordWrap(True)
        self.head.setTextFormat(Qt.TextFormat.PlainText)
        self.problems = QListWidget(self)
        self.problems.setObjectName("importReportProblems")
        self.problems.setMaximumHeight(90)
        self.notes = QLabel(self)
        self.notes.setObjectName("importReportNotes")
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.PlainText)
        self.command_label = QLabel("Collect the missing counters with:", self)
        self.command = QLineEdit(self)
        self.command.setObjectName("ncuCommand")
        self.command.setReadOnly(True)
        self.command.setToolTip("An ncu command line that writes an export with every counter the roofline needs "
                                "(select and copy it, or use Copy)")
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setObjectName("copyNcuCommand")
        self.copy_button.setToolTip("Copy the ncu command to the clipboard")
        self.copy_button.clicked.connect(self.copy_command)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.command, 1)
        row.addWidget(self.copy_button)
        layout.addWidget(self.head)
        layout.addWidget(self.problems)
        layout.addWidget(self.notes)
        layout.addWidget(self.command_label)
        layout.addLayout(row)
        self.clear()

    def show_result(self, result: ImportResult, fmt: str, name: str) -> None:
        """Show what importing ``name`` (read as ``fmt``) gave."""
        problems, notes = import_report_lines(result)
        n = len(result.kernels)
        head = f"{n:,} kernel{'s' if n != 1 else ''} imported from {name} ({fmt})"
        if problems:
            head += f"; {len(problems):,} row(s) not imported:"
        elif not n:
            head = f"{name} has no kernel rows ({fmt})."
        self.head.setText(head)
        self.head.setStyleSheet(f"color: {th.current_theme().error};" if problems or not n else "")
        self.problems.clear()
        self.problems.addItems(problems)  # list items are plain text
        self.problems.setVisible(bool(problems))
        self.notes.setText("\n".join(f"Note: {note}" for note in notes))
        self.notes.setVisible(bool(notes))
        missing = bool(result.missing_counters and result.ncu_command)
        self.command.setText(result.ncu_command or "")
        self.command.setCursorPosition(0)
        for widget in (self.command_label, self.command, self.copy_button):
            widget.setVisible(missing)
        if missing:
            self.command_label.setText(f"Collect the missing counters ({', '.join(result.missing_counters)}) with:")
        self.setVisible(True)

    def clear(self) -> None:
        self.head.clear()
        self.problems.clear()
        self.notes.clear()
        self.command.clear()
        self.setVisible(False)

    def copy_command(self) -> None:
        QGuiApplication.clipboard().setText(self.command.text())


# -- the table ------------------------------------------------------------------------------
def _role_value(role) -> int:
    """A role as Qt hands it to a slot (an int, or an ItemDataRole) as an int."""
    return role.value if hasattr(role, "value") else int(role)



# Roles as plain ints: Qt hands them to data() as ints, and comparing against the enum members
# (or or-ing flags together) on every call was a good part of a table repaint.
_DISPLAY = Qt.ItemDataRole.DisplayRole.value
_DECORATION = Qt.ItemDataRole.DecorationRole.value
_EDIT = Qt.ItemDataRole.EditRole.value
_TOOLTIP = Qt.ItemDataRole.ToolTipRole.value
_ALIGNMENT = Qt.ItemDataRole.TextAlignmentRole.value
_FOREGROUND = Qt.ItemDataRole.ForegroundRole.value
_SORT = Qt.ItemDataRole.UserRole.value
_ALIGN_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
#: the roles a change of which may change a column's sort key (UserRole is the key itself)
_SORTED_ROLES = frozenset((_DISPLAY, _EDIT, _SORT))
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_FLAGS_EDITABLE = _FLAGS | Qt.ItemFlag.ItemIsEditable


class KernelTableModel(QAbstractTableModel):
    """Kernels and their placements; name, FLOPs, bytes and time are editable."""

    #: (header, unit used to parse and format, editable)
    COLUMNS = (
        ("Name", "", True),
        ("FLOPs", "FLOP", True),
        ("Bytes", "B", True),
        ("Time", "s", True),
        ("Intensity", "FLOP/B", False),
        ("Roof", "FLOP/s", False),
        ("Achieved", "FLOP/s", False),
        ("Of roof", "%", False),
        ("Bound", "", False),
    )
    NAME, FLOPS, BYTES, TIME, INTENSITY, ROOF, ACHIEVED, FRACTION, BOUND = range(9)
    TOOLTIPS = (
        "Kernel name (double-click to edit)",
        "Floating-point operations the kernel does (a multiply-add is 2)",
        "Bytes moved to and from device memory by the kernel",
        "Measured run time (optional); blank places the kernel on the roof",
        "Arithmetic intensity: FLOPs per byte moved",
        "Attainable FLOP/s at this intensity on the primary device",
        "FLOPs / measured time (the roof itself without a time)",
        "Achieved / roof",
        "Memory-bound (left of the ridge) or compute-bound",
    )

    #: (row, new Kernel) after the user edits a cell; the panel applies it
    kernelEdited = Signal(int, object)
    #: a cell edit that could not be read, with what to fix
    editRejected = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._kernels: tuple[Kernel, ...] = ()
        self._placements: Placements | None = None
        self._changed: dict[int, np.ndarray] | None = None
        self._colors = (QColor(th.MEMORY_BOUND), QColor(th.COMPUTE_BOUND))

    # -- content ------------------------------------------------------------------------------
    def set_kernels(self, kernels: tuple[Kernel, ...], placements: Placements | None) -> None:
        """Show ``kernels``; only the computed columns change when the kernels are the same."""
        kernels = tuple(kernels)
        same = len(kernels) == len(self._kernels) and (kernels is self._kernels or kernels == self._kernels)
        old = self._placements
        self._placements = placements if placements is not None and len(placements) == len(kernels) else None
        if same:
            self._kernels = kernels
            if kernels:
                # Only the columns a new roof changes (the intensity is the kernel's own); the
                # name column is left out of the signal, as before: a sort proxy sorted by name
                # would sort all the rows again. While the signal is delivered, changed_cells()
                # says which rows changed, the name's swatch (it follows the bound) included,
                # so the kernel table repaints only those cells.
                self._changed = self._changed_rows(old, self._placements)
                if self._changed is not None and not any(rows.any() for rows in self._changed.values()):
                    self._changed = None
                    return  # the same numbers (a redraw that changed nothing here)
                try:
                    self.dataChanged.emit(self.index(0, self.ROOF), self.index(len(kernels) - 1, self.BOUND))
                finally:
                    self._changed = None
            return
        self.beginResetModel()
        self._kernels = kernels
        self.endResetModel()

    def _changed_rows(self, old: Placements | None, new: Placements | None):
        if old is None or new is None or len(old) != len(new):
            return None
        bound = old.compute_bound != new.compute_bound
        return {self.NAME: bound, self.ROOF: old.ceiling != new.ceiling,
                self.ACHIEVED: old.achieved != new.achieved,
                self.FRACTION: old.fraction_of_roof != new.fraction_of_roof, self.BOUND: bound}

    def sort_key(self, col: int) -> np.ndarray | None:
        """Values of column ``col`` for every kernel, for sorting: numbers (a missing one as
        -1), names in lower case, the bound as 0 (compute) or 1 (memory); None for a column
        that is not there."""
        kernels = self._kernels
        p = self._placements
        if col == self.NAME:
            return np.array([k.name.lower() for k in kernels], dtype=str) if kernels else np.zeros(0)
        if col == self.FLOPS:
            return np.fromiter((k.flops for k in kernels), dtype=float, count=len(kernels))
        if col == self.BYTES:
            return np.fromiter((k.bytes for k in kernels), dtype=float, count=len(kernels))
        if col == self.TIME:
            return np.fromiter((-1.0 if k.time_s is None else k.time_s for k in kernels), dtype=float,
                               count=len(kernels))
        if col == self.INTENSITY and p is None:
            return np.fromiter((k.intensity for k in kernels), dtype=float, count=len(kernels))
        if col in (self.INTENSITY, self.ROOF, self.ACHIEVED, self.FRACTION, self.BOUND):
            if p is None:
                return np.full(len(kernels), -1.0)
            column = {self.INTENSITY: p.intensity, self.ROOF: p.ceiling, self.ACHIEVED: p.achieved,
                      self.FRACTION: p.fraction_of_roof}.get(col)
            return (~p.compute_bound).astype(int) if column is None else np.asarray(column, dtype=float)
        return None

    def changed_cells(self) -> dict[int, np.ndarray] | None:
        """While ``set_kernels`` announces new placements of the same kernels: column -> which
        rows changed (boolean per row; the name column: its swatch, when the bound changed).
        None otherwise, or when every cell may have changed."""
        return self._changed

    def kernels(self) -> tuple[Kernel, ...]:
        return self._kernels

    def placements(self) -> Placements | None:
        return self._placements

    def set_theme(self, theme: th.Theme) -> None:
        self._colors = (theme.color("memory_bound"), theme.color("compute_bound"))

    # -- Qt model API -------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt naming and signature
        return 0 if parent.isValid() else len(self._kernels)

    def columnCount(self, parent=QModelIndex()):  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return self.COLUMNS[section][0]
            if role == Qt.ItemDataRole.ToolTipRole:
                return self.TOOLTIPS[section]
        elif role == Qt.ItemDataRole.DisplayRole:
            return str(section + 1)
        return None

    def flags(self, index):
        if index.isValid() and self.COLUMNS[index.column()][2]:
            return _FLAGS_EDITABLE
        return _FLAGS

    def _raw(self, row: int, col: int):
        """The cell's value in SI units (or text); None when there is none."""
        k = self._kernels[row]
        p = self._placements
        if col == self.NAME:
            return k.name
        if col == self.FLOPS:
            return k.flops
        if col == self.BYTES:
            return k.bytes
        if col == self.TIME:
            return k.time_s
        if p is None:
            return k.intensity if col == self.INTENSITY else None
        if col == self.INTENSITY:
            return float(p.intensity[row])
        if col == self.ROOF:
            return float(p.ceiling[row])
        if col == self.ACHIEVED:
            return float(p.achieved[row])
        if col == self.FRACTION:
            return float(p.fraction_of_roof[row])
        if col == self.BOUND:
            return "compute" if p.compute_bound[row] else "memory"
        return None

    def _text(self, row: int, col: int, digits: int = 3) -> str:
        value = self._raw(row, col)
        if value is None:
            return "–" if col != self.TIME else ""
        if isinstance(value, str):
            return value
        unit = self.COLUMNS[col][1]
        try:
            return units.format_quantity(value, unit, digits=digits)
        except ValueError:
            return f"{value:.{digits}g} {unit}".strip()

    def tooltip(self, row: int) -> str:
        """What one kernel's point says: its numbers and where it sits."""
        k = self._kernels[row]
        lines = [k.name,
                 f"intensity {self._text(row, self.INTENSITY)}",
                 f"FLOPs {self._text(row, self.FLOPS)}, bytes {self._text(row, self.BYTES)}"]
        if self._placements is not None:
            p = self._placements
            achieved = "measured" if p.measured[row] else "on the roof (no measured time)"
            lines += [f"roof {self._text(row, self.ROOF)}",
                      f"achieved {self._text(row, self.ACHIEVED)} ({achieved})",
                      f"{self._text(row, self.FRACTION)} of roof, {self._text(row, self.BOUND)}-bound"]
        return "\n".join(lines)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        return self.role_data(index.row(), index.column(), int(role))

    def multiData(self, index, span):  # noqa: N802 - Qt naming
        """Every role a view asks for in one call (Qt's default asks data() once per role)."""
        if index.isValid():
            self.fill_roles(index.row(), index.column(), span)
        else:
            for role_data in span:
                role_data.clearData()

    def fill_roles(self, row: int, col: int, span) -> None:
        """Fill a QModelRoleDataSpan for the cell (row, col) of this model."""
        for role_data in span:
            value = self.role_data(row, col, role_data.role())
            if value is None:
                role_data.clearData()
            else:
                role_data.setData(value)

    def role_data(self, row: int, col: int, role: int):
        """What data(index, role) returns, for a row and column (roles as ints, the ones a
        repaint asks for first)."""
        if row >= len(self._kernels):
            return None
        if role == _DISPLAY:
            return self._text(row, col)
        if role == _ALIGNMENT:
            return _ALIGN_LEFT if col in (self.NAME, self.BOUND) else _ALIGN_RIGHT
        if role == _DECORATION:
            if col == self.NAME and self._placements is not None:
                return self._colors[1 if self._placements.compute_bound[row] else 0]
            return None
        if role == _FOREGROUND:
            if col == self.BOUND and self._placements is not None:
                return QBrush(self._colors[1 if self._placements.compute_bound[row] else 0])
            return None
        if role == _EDIT:
            return self._text(row, col, digits=6)
        if role == _SORT:
            value = self._raw(row, col)
            return -1.0 if value is None else value
        if role == _TOOLTIP:
            return self.tooltip(row)
        return None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole):  # noqa: N802
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        row, col = index.row(), index.column()
        text = str(value).strip()
        if text == self._text(row, col, digits=6).strip():
            return False  # opened and closed the editor: no edit
        kernel = self._kernels[row]
        header, unit, editable = self.COLUMNS[col]
        if not editable:
            return False
        try:
            if col == self.NAME:
                new = replace(kernel, name=text)
            elif col == self.TIME and not text:
                new = replace(kernel, time_s=None)
            else:
                number = units.parse_quantity(text, unit, name=header.lower())
                field = {self.FLOPS: "flops", self.BYTES: "bytes", self.TIME: "time_s"}[col]
                new = replace(kernel, **{field: number})
        except ValueError as exc:
            self.editRejected.emit(f"{kernel.name}: {exc}")
            return False
        if new == kernel:
            return False
        self.kernelEdited.emit(row, new)
        return True


class KernelSortProxy(QAbstractProxyModel):
    """The kernel table in the order the user sorted it, sorted with numpy.

    A QSortFilterProxyModel compares rows through Python (``lessThan``): sorting 10,000
    kernels, or keeping them sorted by a computed column while the roof changes, took ~0.3 s
    per redraw. Here the order is one ``argsort`` of the column's values
    (:meth:`KernelTableModel.sort_key`), stable, with ties kept in the scenario's order in
    both directions, as Qt's proxy does. Column -1 is the scenario's order. The source model
    only resets or changes data (never inserts rows), so those are the signals followed: a data
    change in the sorted column sorts again (selected rows stay selected)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._column = -1
        self._order_flag = Qt.SortOrder.AscendingOrder
        self._to_source = np.zeros(0, dtype=np.intp)  # proxy row -> source row
        self._from_source = np.zeros(0, dtype=np.intp)  # source row -> proxy row
        self._identity = True

    # -- source ---------------------------------------------------------------------------
    def setSourceModel(self, model):  # noqa: N802 - Qt naming
        old = self.sourceModel()
        if old is not None:
            for signal, slot in self._source_signals(old):
                signal.disconnect(slot)
        self.beginResetModel()
        super().setSourceModel(model)
        self._resort()
        self.endResetModel()
        if model is not None:
            for signal, slot in self._source_signals(model):
                signal.connect(slot)

    def _source_signals(self, model):
        return ((model.modelAboutToBeReset, self.beginResetModel), (model.modelReset, self._source_reset),
                (model.dataChanged, self._source_data_changed),
                (model.headerDataChanged, self.headerDataChanged))

    def _source_reset(self) -> None:
        self._resort()
        self.endResetModel()

    def _source_data_changed(self, top_left, bottom_right, roles=()) -> None:
        if self._identity:
            self.dataChanged.emit(self.mapFromSource(top_left), self.mapFromSource(bottom_right), roles)
            return
        # a change of what is shown only (a colour, an icon, a tip: the roles say) leaves the order
        if top_left.column() <= self._column <= bottom_right.column() and (
                not roles or any(_role_value(r) in _SORTED_ROLES for r in roles)):
            self._sort_again()
        rows = self.rowCount()
        if rows:
            self.dataChanged.emit(self.index(0, top_left.column()), self.index(rows - 1, bottom_right.column()), roles)

    # -- order ----------------------------------------------------------------------------
    def sort(self, column, order=Qt.SortOrder.AscendingOrder):
        self._column = int(column)
        self._order_flag = Qt.SortOrder(order)
        self._sort_again()

    def sortColumn(self) -> int:  # noqa: N802 - Qt naming
        return self._column

    def sortOrder(self):  # noqa: N802 - Qt naming
        return self._order_flag

    def source_rows(self) -> np.ndarray:
        """Source row of each proxy row, top to bottom (a copy)."""
        return self._to_source.copy()

    def source_rows_in(self, first: int, last: int) -> np.ndarray:
        """Source rows of proxy rows ``first`` to ``last`` (a copy)."""
        return self._to_source[first:last + 1].copy()

    def _sort_again(self) -> None:
        """A new order, with the persistent indexes (the selection, the current cell) moved.
        The same order as before changes nothing (a layout change repaints the whole view)."""
        order, identity = self._order()
        if identity == self._identity and np.array_equal(order, self._to_source):
            return
        # emitted without arguments: PySide6 6.11 crashes emitting ([], VerticalSortHint)
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        sources = [(self._to_source[i.row()], i.column()) if i.isValid() and i.row() < len(self._to_source)
                   else None for i in persistent]
        self._resort(order, identity)
        if persistent:
            moved = [self.index(int(self._from_source[s[0]]), s[1]) if s is not None and s[0] < len(self._from_source)
                     else QModelIndex() for s in sources]
            self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    def _order(self) -> tuple[np.ndarray, bool]:
        """(source row of each proxy row, whether that is the scenario's order)."""
        source = self.sourceModel()
        n = source.rowCount() if source is not None else 0
        key = source.sort_key(self._column) if (isinstance(source, KernelTableModel) and self._column >= 0) else None
        if key is None or n == 0:
            return np.arange(n, dtype=np.intp), True
        if self._order_flag == Qt.SortOrder.AscendingOrder:
            order = np.argsort(key, kind="stable")
        else:  # descending, ties still in the scenario's order
            order = (n - 1 - np.argsort(key[::-1], kind="stable"))[::-1]
        return np.ascontiguousarray(order, dtype=np.intp), False

    def _resort(self, order: np.ndarray | None = None, identity: bool | None = None) -> None:
        if order is None:
            order, identity = self._order()
        n = len(order)
        self._identity = bool(identity)
        inverse = np.empty(n, dtype=np.intp)
        inverse[order] = np.arange(n, dtype=np.intp)
        self._to_source, self._from_source = order, inverse

    # -- QAbstractProxyModel --------------------------------------------------------------
    def mapToSource(self, index):  # noqa: N802 - Qt naming
        source = self.sourceModel()
        if source is None or not index.isValid() or index.row() >= len(self._to_source):
            return QModelIndex()
        return source.index(int(self._to_source[index.row()]), index.column())

    def mapFromSource(self, index):  # noqa: N802 - Qt naming
        if not index.isValid() or index.row() >= len(self._from_source):
            return QModelIndex()
        return self.index(int(self._from_source[index.row()]), index.column())

    def index(self, row, column, parent=QModelIndex()):  # noqa: B008 - Qt signature
        if parent.isValid() or not (0 <= row < len(self._to_source)) or not (0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index=None):
        # parent() with no index is QObject.parent(); a table's cells have no parent cell
        return super().parent() if index is None else QModelIndex()

    def rowCount(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt naming and signature
        return 0 if parent.isValid() else len(self._to_source)

    def columnCount(self, parent=QModelIndex()):  # noqa: N802, B008
        source = self.sourceModel()
        return 0 if parent.isValid() or source is None else source.columnCount()

    def flags(self, index):
        # by column, without mapping the index: a selection of 10,000 rows asks every cell
        source = self.sourceModel()
        if isinstance(source, KernelTableModel) and index.isValid():
            return _FLAGS_EDITABLE if source.COLUMNS[index.column()][2] else _FLAGS
        return super().flags(index)

    def multiData(self, index, span):  # noqa: N802 - Qt naming
        # one Python call fills every role a view asks for (the default asks data() per role)
        source = self.sourceModel()
        if isinstance(source, KernelTableModel) and index.isValid() and index.row() < len(self._to_source):
            source.fill_roles(int(self._to_source[index.row()]), index.column(), span)
            return
        super().multiData(index, span)


class KernelTableView(QTableView):
    """The kernel table: fixed row heights (fast with 10,000 rows), sortable, multi-select."""

    deleteRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._rows_before_layout: np.ndarray | None = None
        self.setObjectName("kernelTable")
        self.setAccessibleName("Kernels")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setSortingEnabled(True)
        vh = self.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(int(self.fontMetrics().height() * 1.5))
        vh.setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        self._fitting = False
        self._name_user_sized = False
        header.sectionResized.connect(self._name_resized)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

    #: the widest text each number column shows (a column is as wide as it or its header);
    #: the name column takes what the others leave (at least NAME_MIN_CHARS, at most
    #: NAME_MAX_CHARS), so the numbers are seen without scrolling
    WIDEST = ("", "88.8 GFLOP", "88.8 MB", "88.8 ms", "0.888 FLOP/B", "888 TFLOP/s", "888 TFLOP/s", "100%",
              "compute")
    NAME_MIN_CHARS, NAME_MAX_CHARS = 18, 48

    def set_column_widths(self) -> None:
        fm = self.fontMetrics()
        header_fm = self.horizontalHeader().fontMetrics()
        model = self.model()
        for col, text in enumerate(self.WIDEST):
            if col == 0:
                continue
            title = model.headerData(col, Qt.Orientation.Horizontal) if model is not None else ""
            width = max(fm.horizontalAdvance(text), header_fm.horizontalAdvance(str(title or "")) + 8) + 16
            self.setColumnWidth(col, width)
        self._fit_name_column()

    def _chars(self, n: int) -> int:
        return self.fontMetrics().horizontalAdvance("x") * n + 12

    def _name_resized(self, index: int, _old: int, _new: int) -> None:
        if index == 0 and not self._fitting:
            self._name_user_sized = True  # the user dragged it: keep their width

    def _fit_name_column(self) -> None:
        if self._name_user_sized:
            return
        header = self.horizontalHeader()
        others = sum(header.sectionSize(c) for c in range(1, header.count()) if not self.isColumnHidden(c))
        free = self.viewport().width() - others
        width = min(max(free, self._chars(self.NAME_MIN_CHARS)), self._chars(self.NAME_MAX_CHARS))
        if header.count() and header.sectionSize(0) != width:
            self._fitting = True
            try:
                self.setColumnWidth(0, width)
            finally:
                self._fitting = False

    def resizeEvent(self, event):  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._fit_name_column()

    def changeEvent(self, event):  # noqa: N802 - Qt naming
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # presentation mode: columns for the new text
            self.set_column_widths()

    def setModel(self, model):  # noqa: N802 - Qt naming
        old = self.model()
        if isinstance(old, KernelSortProxy):
            old.layoutAboutToBeChanged.disconnect(self._note_rows_on_screen)
        super().setModel(model)
        if isinstance(model, KernelSortProxy):
            model.layoutAboutToBeChanged.connect(self._note_rows_on_screen)

    def _rows_on_screen(self) -> np.ndarray | None:
        """The source rows (kernels) of the rows on screen, top to bottom; None if unknown."""
        model = self.model()
        if not isinstance(model, KernelSortProxy) or not self.isVisible():
            return None
        first = self.rowAt(0)
        if first < 0:
            return None
        last = self.rowAt(self.viewport().height() - 1)
        return model.source_rows_in(first, model.rowCount() - 1 if last < 0 else last)

    def _note_rows_on_screen(self, *_args) -> None:
        self._rows_before_layout = self._rows_on_screen()

    def doItemsLayout(self):  # noqa: N802 - Qt naming
        """After the sort proxy's new order (a layout change, with a new roof when the table is
        sorted by a computed column) Qt lays the rows out again and repaints every one. When
        the rows on screen show the same kernels as before, only the geometry is brought up to
        date: the cells whose numbers changed are repainted by their data change."""
        before, self._rows_before_layout = self._rows_before_layout, None
        if before is not None and self.state() != QAbstractItemView.State.EditingState:
            now = self._rows_on_screen()
            if now is not None and np.array_equal(before, now):
                self.updateGeometries()
                return
        super().doItemsLayout()

    def dataChanged(self, top_left, bottom_right, roles=()):  # noqa: N802 - Qt naming
        """Qt repaints the whole viewport when more than one cell changes. A new roof changes a
        few columns of some rows: when the model says which (``changed_cells``), only the
        visible cells that changed are repainted. Anything else (a single cell, an open
        editor, accessibility on, a hidden view, no word from the model) is Qt's own handling."""
        if (top_left == bottom_right or not top_left.isValid() or not bottom_right.isValid()
                or self.state() == QAbstractItemView.State.EditingState or not self.isVisible()
                or QAccessible.isActive()):
            super().dataChanged(top_left, bottom_right, roles)
            return
        region = self._changed_region(top_left.column(), bottom_right.column())
        if region is None:
            super().dataChanged(top_left, bottom_right, roles)
        elif not region.isEmpty():
            self.viewport().update(region)

    def _changed_region(self, first_col: int, last_col: int) -> QRegion | None:
        """The visible cells the source model reports changed, or None if it does not say."""
        model = self.model()
        proxy = isinstance(model, QAbstractProxyModel)
        source = model.sourceModel() if proxy else model
        changed = source.changed_cells() if isinstance(source, KernelTableModel) else None
        if changed is None:
            return None
        region = QRegion()
        first = self.rowAt(0)
        if first < 0:
            return region
        last = self.rowAt(self.viewport().height() - 1)
        if last < 0:
            last = model.rowCount() - 1
        bound_changed = first_col <= KernelTableModel.BOUND <= last_col  # the name's swatch follows it
        columns = [(col, rows) for col, rows in changed.items()
                   if (first_col <= col <= last_col or (col == KernelTableModel.NAME and bound_changed))
                   and not self.isColumnHidden(col)]
        # the kernels on screen in numpy (mapping each row through the proxy in Python was
        # most of the work), then the cells of those whose column changed
        if isinstance(model, KernelSortProxy):
            sources = model.source_rows_in(first, last)
        elif proxy:
            sources = np.array([model.mapToSource(model.index(row, 0)).row() for row in range(first, last + 1)],
                               dtype=np.intp)
        else:
            sources = np.arange(first, last + 1)
        for col, rows in columns:
            mapped = (sources >= 0) & (sources < len(rows))
            hit = np.zeros(len(sources), dtype=bool)
            hit[mapped] = rows[sources[mapped]]
            for offset in np.flatnonzero(hit):
                region = region.united(self.visualRect(model.index(first + int(offset), col)))
        return region

    def keyPressEvent(self, event):  # noqa: N802 - Qt naming
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and self.state() != QAbstractItemView.State.EditingState:
            self.deleteRequested.emit()
            event.accept()
            return
        super().keyPressEvent(event)


# -- the builder ----------------------------------------------------------------------------
#: kind -> (title, [(parameter, label, default)])
BUILDERS: dict[str, tuple[str, list[tuple[str, str, int]]]] = {
    "gemm": ("GEMM (matrix multiply)", [("m", "M (rows of A)", 8192), ("n", "N (columns of B)", 8192),
                                        ("k", "K (inner dimension)", 8192)]),
    "elementwise": ("Elementwise op", [("n_elements", "Elements", 1 << 26), ("reads", "Input tensors", 2),
                                       ("writes", "Output tensors", 1), ("flops_per_element", "FLOPs per element", 1)]),
    "layer_norm": ("Layer norm", [("rows", "Rows (tokens)", 32768), ("cols", "Columns (width)", 8192)]),
    "attention_unfused": ("Attention, unfused (Q Kᵀ, softmax, P V)",
                          [("batch", "Batch", 8), ("heads", "Heads", 32), ("seq_len", "Sequence length", 4096),
                           ("head_dim", "Head size", 128)]),
    "attention_fused": ("Attention, fused (FlashAttention-style)",
                        [("batch", "Batch", 8), ("heads", "Heads", 32), ("seq_len", "Sequence length", 4096),
                         ("head_dim", "Head size", 128)]),
    "custom": ("Counts (FLOPs and bytes)", []),
}
_BUILDER_FUNCS = {
    "gemm": wk.gemm,
    "elementwise": wk.elementwise,
    "layer_norm": wk.layer_norm,
    "attention_unfused": wk.attention_unfused,
    "attention_fused": wk.attention_fused,
}


class KernelBuilderDialog(QDialog):
    """Build kernels from shapes. "Add" emits ``kernelBuilt`` and keeps the dialog open, so a
    few classic kernels are placed in seconds; "Close" closes it. Non-modal."""

    kernelBuilt = Signal(object)  # Kernel

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("kernelBuilder")
        self.setWindowTitle("Add kernel from shapes")
        self.setModal(False)
        self.kind_combo = QComboBox(self)
        self.kind_combo.setObjectName("builderKind")
        for kind, (title, _params) in BUILDERS.items():
            self.kind_combo.addItem(title, kind)
        self.dtype_combo = QComboBox(self)
        self.dtype_combo.setObjectName("builderDtype")
        for p in PRECISIONS:
            self.dtype_combo.addItem(PRECISION_LABELS[p], p)
        self.dtype_combo.setCurrentIndex(self.dtype_combo.findData("bf16"))
        self.name_edit = QLineEdit(self)
        self.name_edit.setObjectName("builderName")
        self.name_edit.setPlaceholderText("automatic")
        self.time_field = QuantityField("s", self, label="Measured time", minimum=0, min_inclusive=False)
        self.time_field.setObjectName("builderTime")
        self.time_field.edit.setPlaceholderText("optional, e.g. 1.2 ms")

        self.fields: dict[str, dict[str, QuantityField]] = {}
        self.pages = QStackedWidget(self)
        for kind, (_title, params) in BUILDERS.items():
            page = QWidget(self.pages)
            form = QFormLayout(page)
            form.setContentsMargins(0, 0, 0, 0)
            form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            fields: dict[str, QuantityField] = {}
            if kind == "custom":
                for name, label, unit in (("flops", "FLOPs", "FLOP"), ("bytes", "Bytes moved", "B")):
                    f = QuantityField(unit, page, label=label, minimum=0, min_inclusive=False)
                    f.setValue(1e9)
                    fields[name] = f
                    form.addRow(label, f)
            else:
                for name, label, default in params:
                    f = IntField(page, label=label, minimum=0 if name in ("reads", "writes") else 1)
                    f.setValue(default)
                    fields[name] = f
                    form.addRow(label, f)
            for name, f in fields.items():
                f.setObjectName(f"builder.{kind}.{name}")
                f.edit.textChanged.connect(self._update_preview)
            self.fields[kind] = fields
            self.pages.addWidget(page)

        self.preview = QLabel(self)
        self.preview.setObjectName("builderPreview")
        self.preview.setWordWrap(True)
        self.preview.setTextFormat(Qt.TextFormat.PlainText)
        self.message = QLabel(self)
        self.message.setObjectName("builderMessage")
        self.message.setWordWrap(True)

        top = QFormLayout()
        top.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        top.addRow("Kernel", self.kind_combo)
        top.addRow("Data type", self.dtype_combo)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.pages)
        rest = QFormLayout()
        rest.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        rest.addRow("Name", self.name_edit)
        rest.addRow("Measured time", self.time_field)
        layout.addLayout(rest)
        layout.addWidget(self.preview)
        layout.addWidget(self.message)
        buttons = QDialogButtonBox(self)
        self.add_button = QPushButton("Add", self)
        self.add_button.setObjectName("builderAdd")
        self.add_button.setDefault(True)
        self.add_button.setToolTip("Add this kernel to the table and keep the dialog open for the next one")
        buttons.addButton(self.add_button, QDialogButtonBox.ButtonRole.ActionRole)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.clicked.connect(self.close)
        self.add_button.clicked.connect(self.add)
        layout.addWidget(buttons)

        self.kind_combo.currentIndexChanged.connect(self._kind_changed)
        self.dtype_combo.currentIndexChanged.connect(self._update_preview)
        self.name_edit.textChanged.connect(self._update_preview)
        self.time_field.edit.textChanged.connect(self._update_preview)
        self._kind_changed()

    # -- driving it (people and tests) -----------------------------------------------------
    def kind(self) -> str:
        return self.kind_combo.currentData()

    def set_kind(self, kind: str) -> None:
        index = self.kind_combo.findData(kind)
        if index < 0:
            raise ValueError(f"kernel kind must be one of {', '.join(BUILDERS)}, got {kind!r}")
        self.kind_combo.setCurrentIndex(index)

    def set_values(self, *, dtype: str | None = None, name: str | None = None, time_s: float | None = None,
                   **params: float) -> None:
        """Fill the current kind's fields (``m=4096``...), the data type, name and time."""
        if dtype is not None:
            index = self.dtype_combo.findData(dtype)
            if index < 0:
                raise ValueError(f"dtype must be one of {', '.join(PRECISIONS)}, got {dtype!r}")
            self.dtype_combo.setCurrentIndex(index)
        if name is not None:
            self.name_edit.setText(name)
        if time_s is not None:
            self.time_field.setValue(time_s)
        fields = self.fields[self.kind()]
        for key, value in params.items():
            if key not in fields:
                raise ValueError(f"{self.kind()} has no parameter {key!r}; it has {', '.join(fields)}")
            fields[key].setValue(value)
        self._update_preview()

    def kernel(self) -> Kernel:
        """The kernel the fields describe; ``ValueError`` says what to fix."""
        kind = self.kind()
        values = {}
        for key, f in self.fields[kind].items():
            values[key] = f.edit.parse(f.edit.text())
        time_text = self.time_field.edit.text().strip()
        time_s = self.time_field.edit.parse(time_text) if time_text else None
        name = self.name_edit.text().strip() or None
        if kind == "custom":
            return Kernel(name=name or "custom kernel", flops=values["flops"], bytes=values["bytes"], time_s=time_s)
        ints = {k: int(v) for k, v in values.items()}
        kernel = _BUILDER_FUNCS[kind](dtype=self.dtype_combo.currentData(), name=name, **ints)
        return replace(kernel, time_s=time_s) if time_s is not None else kernel

    def add(self) -> Kernel | None:
        """Build and emit the kernel (the "Add" button); None with the reason shown if it fails."""
        try:
            kernel = self.kernel()
        except ValueError as exc:
            self._show_message(str(exc), error=True)
            return None
        self.kernelBuilt.emit(kernel)
        self._show_message(f"Added '{kernel.name}'", error=False)
        return kernel

    # -- internals -------------------------------------------------------------------------
    def _kind_changed(self, *_args) -> None:
        self.pages.setCurrentIndex(self.kind_combo.currentIndex())
        self.dtype_combo.setEnabled(self.kind() != "custom")
        self._update_preview()

    def _show_message(self, text: str, error: bool) -> None:
        color = th.current_theme().error if error else th.current_theme().muted
        self.message.setStyleSheet(f"color: {color};")
        self.message.setText(text)

    def _update_preview(self, *_args) -> None:
        try:
            k = self.kernel()
        except ValueError as exc:
            self.preview.setText(f"({exc})")
            return
        self.message.clear()
        self.preview.setText(
            f"{k.name}\n{units.format_quantity(k.flops, 'FLOP')}, {units.format_quantity(k.bytes, 'B')} moved: "
            f"intensity {units.format_quantity(k.intensity, 'FLOP/B')}"
        )
