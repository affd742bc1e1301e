"""The anatomy every panel shares, so that learning one panel teaches all five.

::

    +---------------------------------------------------------------+
    | [Save as scenario] [Compare] [Export v] [Explain]  [Override] |  panel toolbar
    +-------------+-------------------------------------------------+
    | inputs form |                                                 |
    | (scroll)    |                chart area                       |
    |             |                                                 |
    |             +-------------------------------------------------+
    | status      |  results table: quantity | value | unit         |
    +-------------+-------------------------------------------------+

A panel holds one scenario value. The form's fields are bound to scenario fields with
``add_quantity_field`` / ``add_int_field`` / ``add_choice`` / ``add_check``; a user edit
becomes ``edit(field=value)``, which builds the new scenario with ``with_changes`` and pushes
a :class:`~ui.commands.ScenarioCommand`. A validation error from the model is shown next to
the field and nothing is pushed. Undo and redo call ``set_scenario``, which refreshes the view
without touching the undo stack.

Subclasses set ``kind`` and ``title``, build their form and chart in ``__init__``, and
implement ``refresh()`` (draw the chart and fill the results from the current scenario,
asking ``workbench`` for every number).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QAction, QFont, QFontMetricsF, QGuiApplication, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ui import theme as th
from ui.accessibility import name_form_fields
from ui.charts import Chart
from ui.commands import push_scenario_edit
from ui.widgets.combo_items import set_choices
from ui.widgets.elided_label import ElidedLabel
from ui.widgets.quantity_edit import IntField, QuantityField
from workbench import units
from workbench._validate import InputError

log = logging.getLogger(__name__)

FORM_WIDTH = 300  # px: the inputs column, fixed-ish so the chart gets the rest
MIN_CHART_WIDTH = 560  # px: the form gives up width below this
#: Until the user drags the handle, the results table under the chart takes the height of its
#: rows, but never more than this share of the centre: the chart is what a meeting looks at.
RESULTS_SHARE = 0.4
RESULTS_SHARE_PRESENTING = 0.28


def _guarded_refresh(draw: Callable[[Any], None]) -> Callable[[Any], None]:
    """A panel's refresh that cannot take the window down: a scenario that validates but whose
    numbers cannot be computed (values that overflow, a hostile log) is reported in the panel's
    status line, and the scenario stays as it is, for the user to change or undo."""

    @functools.wraps(draw)
    def refresh(self) -> None:
        if getattr(self, "_refreshing", False):  # a refresh that triggers itself runs once
            return draw(self)
        if self.context_sink is not None and not self.on_screen() and not getattr(self, "_force_draw", False):
            # a panel hidden behind another tab draws when it is shown, not on every edit
            self._stale = True
            return None
        self._stale = False
        self._refreshing = True
        try:
            draw(self)
        except (ValueError, ArithmeticError) as exc:
            log.warning("%s cannot draw its scenario", type(self).__name__, exc_info=True)
            message = str(exc) or type(exc).__name__
            self._draw_problem = f"Cannot draw this scenario: {message}. Change that value, or undo."
            self.show_status(self._draw_problem)
        else:
            if self._draw_problem:
                self._draw_problem = ""
                self.clear_error()
        finally:
            self._refreshing = False

    return refresh


@dataclass(frozen=True)
class ResultRow:
    """One headline number: ``value`` in SI units (or ready text), ``unit`` from workbench.units."""

    quantity: str
    value: float | str | None
    unit: str = ""
    tooltip: str = ""
    binary: bool = False


def _split_quantity(value: float, unit: str, binary: bool) -> tuple[str, str]:
    """(number, prefixed unit): 3.35e12 B/s -> ("3.35", "TB/s")."""
    try:
        text = units.format_quantity(value, unit, binary=binary and unit in ("B", "B/s"))
    except ValueError:
        return f"{value:.4g}", unit
    if " " in text:
        number, shown_unit = text.split(" ", 1)
        return number, shown_unit
    if unit == "%":
        return text.rstrip("%"), "%"
    return text, unit


class ResultsTable(QTableWidget):
    """Read-only table of headline numbers: quantity, value (right-aligned), unit.
    Each row's tooltip says what the number means. Ctrl+C copies the selection as text."""

    HEADERS = ("Quantity", "Value", "Unit")

    def __init__(self, parent: QWidget | None = None):
        super().__init__(0, 3, parent)
        self.setObjectName("resultsTable")
        self.setAccessibleName("Results")
        self.before_read: Callable[[], None] | None = None
        #: the widest each column was sized to fit (a narrower one was narrowed by the user)
        self._fitted_widths: dict[int, int] = {}
        #: what each column needed when the content width was last measured
        self._measured_needs: dict[int, int] = {}
        #: quantities the table shows in other states of its panel (reserve_quantities)
        self._reserved_quantities: tuple[str, ...] = ()
        self.setHorizontalHeaderLabels(list(self.HEADERS))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        # quantity, value and unit side by side (read across a projector without hunting);
        # the spare width goes to the unit column, on the right
        # the quantity and value columns fit their text and only grow (set_rows): sized to
        # contents, a number one digit shorter re-laid the table out and painted it twice
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(60)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.horizontalHeaderItem(1).setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._base_point_size = self.font().pointSizeF()
        copy = QAction("Copy", self)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selection)
        self.addAction(copy)
        th.register(self)
        self.set_presentation(th.presentation_enabled())

    def set_rows(self, rows: Iterable[ResultRow | Sequence[Any]]) -> None:
        """Replace the rows. Each is a :class:`ResultRow` or (quantity, value, unit[, tooltip])."""
        rows = [r if isinstance(r, ResultRow) else ResultRow(*r) for r in rows]
        reshaped = len(rows) != self.rowCount()
        changed: set[tuple[int, int]] = set()  # (row, column) of the cells given new text
        if reshaped:
            # Lay the columns out once after the fill, not again for every cell set.
            self.scheduleDelayedItemsLayout()
            self.setRowCount(len(rows))
        for i, row in enumerate(rows):
            if row.value is None:
                number, unit = "–", row.unit
            elif isinstance(row.value, str):
                number, unit = row.value, row.unit
            else:
                number, unit = _split_quantity(float(row.value), row.unit, row.binary)
            cells = (row.quantity, number, unit)
            for col, text in enumerate(cells):
                item = self.item(i, col)
                if item is not None:
                    # A redraw mostly changes a few numbers: cells keep their items, and only
                    # changed text is set (a new item per cell re-laid the table out each time).
                    if item.text() != text:
                        item.setText(text)
                        changed.add((i, col))
                    if item.toolTip() != row.tooltip:
                        item.setToolTip(row.tooltip)
                    continue
                item = QTableWidgetItem(text)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                if row.tooltip:
                    item.setToolTip(row.tooltip)
                if col == 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(i, col, item)
                changed.add((i, col))
        needs = self._widths_needed(changed)
        if reshaped or any(need > self._measured_needs.get(col, 0) for col, need in needs.items()):
            # a column may have to be wider than when it was last measured (a text shorter
            # than that leaves the kept width as it is, see below)
            self._content_width_cache = None
        self._grow_columns(needs)
        if reshaped:
            self._fit_height()
        if self.keep_content_width:
            # a splitter beside it makes room (minimumSizeHint); the width only grows, so a
            # toggle that makes a label shorter and longer again does not move the neighbours
            # (and relay out and repaint the whole panel) every time
            width = self._content_width()
            if width > getattr(self, "_kept_width", 0):
                self._kept_width = width
                self.updateGeometry()

    def reserve_quantities(self, texts: Iterable[str]) -> None:
        """Quantity labels this table shows in other states of its panel (another precision,
        a sparse mode): the quantity column and the kept width are made wide enough for them
        from the start, so the first toggle to a longer label does not widen the table and lay
        out (and repaint) its neighbours."""
        self._reserved_quantities = tuple(texts)
        self._content_width_cache = None
        self._measured_needs = {}

    _reserved_kept: tuple | None = None  # (labels, font and style it was worked out for, width)

    def _reserved_width(self) -> int:
        """The quantity column's width for the widest reserved label (the cells' padding as
        a shown cell has it: the delegate measures text plus margins)."""
        if not self._reserved_quantities or self.rowCount() == 0 or self.item(0, 0) is None:
            return 0
        # the same for the same labels, font and style: worked out once (a toggle that renames
        # a quantity asks for it on every edit)
        key = (self._reserved_quantities, self.font().key(), self.style().name())
        kept = self._reserved_kept
        if kept is not None and kept[0] == key:
            return kept[1]
        metrics = QFontMetricsF(self.font(), self)  # fractional, rounded up as the item's layout is

        def text_width(text: str) -> int:
            return math.ceil(metrics.horizontalAdvance(text))

        padding = self.sizeHintForIndex(self.model().index(0, 0)).width() - text_width(self.item(0, 0).text())
        width = max(text_width(t) for t in self._reserved_quantities) + padding
        self._reserved_kept = (key, width)
        return width

    def _column_need(self, col: int) -> int:
        """The width the column's whole text needs (the quantity column: reserved labels too)."""
        need = self.sizeHintForColumn(col)
        return max(need, self._reserved_width()) if col == 0 else need

    def _widths_needed(self, cells: Iterable[tuple[int, int]]) -> dict[int, int]:
        """The width each column needs for these cells' texts (the column's widest of them).
        Only cells given new text can make a column need more: measuring them, not the whole
        column again, keeps a redraw that changes a few numbers cheap."""
        model = self.model()
        needs: dict[int, int] = {}
        for row, col in cells:
            width = self.sizeHintForIndex(model.index(row, col)).width()
            if width > needs.get(col, 0):
                needs[col] = width
        if 0 in needs:
            needs[0] = max(needs[0], self._reserved_width())
        return needs

    def _grow_columns(self, needs: dict[int, int]) -> None:
        """Widen the quantity and value columns to what their new texts need. A column the
        user made narrower than its text is fitted to its whole text again, as before."""
        header = self.horizontalHeader()
        for col, need in needs.items():
            if col not in (0, 1):
                continue
            size = header.sectionSize(col)
            if size < self._fitted_widths.get(col, 0):  # narrowed by hand
                need = self._column_need(col)
            need = max(need, header.sectionSizeHint(col))
            if need > size:
                header.resizeSection(col, need)
            self._fitted_widths[col] = max(self._fitted_widths.get(col, 0), need)

    def _fit_columns(self) -> None:
        """The quantity and value columns sized to their whole text, narrower too (a new font)."""
        header = self.horizontalHeader()
        for col in (0, 1):
            need = max(self._column_need(col), header.sectionSizeHint(col))
            if need != header.sectionSize(col):
                header.resizeSection(col, need)
            self._fitted_widths[col] = need

    #: set by a panel that puts the table beside something (a splitter then keeps the text
    #: whole); under the chart it has the panel's width anyway
    keep_content_width = False
    #: the widest the table asks to be kept (wider content scrolls sideways)
    MAX_MIN_WIDTH = 560

    def _content_width(self) -> int:
        """Width that shows the quantity and value columns whole, with a short unit column
        (measured again only after a text or the font changed: layouts ask for it often)."""
        cached = getattr(self, "_content_width_cache", None)
        if cached is not None:
            return cached
        self._content_width_cache = self._measure_content_width()
        return self._content_width_cache

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._content_width_cache = None
        super().changeEvent(event)

    def _measure_content_width(self) -> int:
        header = self.horizontalHeader()
        self._measured_needs = {c: self._column_need(c) for c in (0, 1, 2)}
        columns = sum(max(self._measured_needs[c], header.sectionSizeHint(c)) for c in (0, 1))
        unit = max(self._measured_needs[2], header.minimumSectionSize())
        return columns + unit + 2 * self.frameWidth() + 4

    def minimumSizeHint(self):  # noqa: N802 - Qt naming
        hint = super().minimumSizeHint()
        if self.keep_content_width:
            kept = max(getattr(self, "_kept_width", 0), self._content_width())
            hint.setWidth(max(hint.width(), min(kept, self.MAX_MIN_WIDTH)))
        return hint

    def _fit_height(self) -> None:
        """Tall enough to show every row without scrolling (up to a cap)."""
        self.setMinimumHeight(min(self.sizeHint().height(), 240))
        self.updateGeometry()
        parent = self.parentWidget()
        if isinstance(parent, ChartOverResults):
            parent.balance()

    def content_height(self) -> int:
        """The height that shows every row (header, rows, frame, a scroll bar if one shows)."""
        height = (self.horizontalHeader().height() + self.rowCount() * self.verticalHeader().defaultSectionSize()
                  + 2 * self.frameWidth() + 4)
        if self.horizontalScrollBar().isVisible():
            height += self.horizontalScrollBar().height()
        return height

    def rows(self) -> list[tuple[str, str, str]]:
        """The displayed text, row by row (for tests and copying)."""
        if self.before_read is not None:
            self.before_read()  # its panel draws what it put off while hidden
        out = []
        for i in range(self.rowCount()):
            out.append(tuple(self.item(i, c).text() if self.item(i, c) else "" for c in range(3)))
        return out

    def copy_selection(self) -> None:
        selected = sorted({index.row() for index in self.selectedIndexes()}) or range(self.rowCount())
        lines = ["\t".join(self.rows()[r]) for r in selected]
        QGuiApplication.clipboard().setText("\n".join(lines))

    def sizeHint(self):  # noqa: N802 - Qt naming
        hint = super().sizeHint()
        rows = max(self.rowCount(), 3)
        height = self.horizontalHeader().height() + rows * self.verticalHeader().defaultSectionSize() + 2 * self.frameWidth()
        hint.setHeight(min(height + 4, 260))
        return hint

    def set_presentation(self, enabled: bool) -> None:
        font = QFont(self.font())
        font.setPointSizeF(self._base_point_size * th.scale_factor(enabled))
        self.setFont(font)
        self.verticalHeader().setDefaultSectionSize(int(self.fontMetrics().height() * 1.5))
        self._kept_width = 0  # the width kept for the old font size no longer applies
        self._content_width_cache = None
        self._fit_columns()
        self._fit_height()


class ChartOverResults(QSplitter):
    """The centre of a panel: the chart area over the results table.

    Left to itself a splitter shares the height by size hints, and a table of seven rows took
    more than half the height under a squeezed chart, most of it blank. Until the user drags
    the handle, the table here gets the height of its rows (at most ``RESULTS_SHARE`` of the
    centre, at least its own minimum) and the chart everything else."""

    def __init__(self, results: ResultsTable, parent: QWidget | None = None):
        super().__init__(Qt.Orientation.Vertical, parent)
        self._results = results
        self._user_sized = False
        self.splitterMoved.connect(self._on_moved)

    def _on_moved(self, *_args) -> None:
        self._user_sized = True

    def user_sized(self) -> bool:
        return self._user_sized

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self.balance()

    def balance(self) -> None:
        """Give the chart the height the results do not need (unless the user chose sizes)."""
        if self._user_sized or self.count() != 2 or self.widget(1) is not self._results:
            return  # a panel that arranged its centre itself (roofline) keeps its own sizes
        total = self.height() - self.handleWidth()
        if total <= 0:
            return
        # on a projector the chart is what the room reads: the table scrolls in a smaller share
        share = RESULTS_SHARE_PRESENTING if th.presentation_enabled() else RESULTS_SHARE
        table = min(self._results.content_height(), int(total * share))
        table = max(table, self._results.minimumHeight())
        if table >= total:
            return
        self.setSizes([total - table, table])


class _PlanNote(QFrame):
    """The "differs from the plan" note. Its width never holds the panel (or the window) wider:
    the panel puts it where it has room (:meth:`PanelBase._place_plan_note`)."""

    def minimumSizeHint(self):  # noqa: N802 - Qt naming
        return QSize(0, super().minimumSizeHint().height())


class PanelBase(QWidget):
    """Base of the five panels: inputs form, chart area, results table, panel toolbar."""

    #: scenario kind this panel edits ("roofline", "collective", ...)
    kind: str = ""
    #: shown on the dock tab and in exports
    title: str = "Panel"

    scenarioChanged = Signal(object)
    saveRequested = Signal()
    compareRequested = Signal()
    exportRequested = Signal(str)  # "png", "svg" or "csv"
    explainRequested = Signal()
    overrideContextChanged = Signal(bool)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "refresh" in cls.__dict__:
            cls.refresh = _guarded_refresh(cls.__dict__["refresh"])

    def __init__(self, scenario: Any = None, parent: QWidget | None = None, *, undo_stack: QUndoStack | None = None):
        super().__init__(parent)
        self.setObjectName(f"panel.{self.kind or 'base'}")
        self._draw_problem = ""
        self._scenario = scenario
        self._own_stack = QUndoStack(self)
        self._stack: QUndoStack = undo_stack if undo_stack is not None else self._own_stack
        self._bindings: dict[str, tuple[QWidget, str]] = {}
        self._override_context = False
        self._context: Any = None
        self._view: Any = None  # the workbench.workspace.PlanView last followed
        self._analysis_cache: Any = None  # the document's AnalysisCache in a window, else the panel's own
        self._preset_lookup: Any = None  # self.catalog as workbench.catalog.Catalog, for the analysis
        self._syncing = False
        self._explain_box = None
        self._build()
        th.register(self)
        self.explainRequested.connect(self.show_explanation)
        if scenario is not None:
            self._sync_fields()

    # -- theme and presentation (called by ui.theme for every registered panel) ----------------
    #: ui.theme restyles the panel's charts before the panel redraws its series on them
    THEMED_AFTER_ITS_PARTS = True

    def apply_theme(self, theme: th.Theme) -> None:
        """Series drawn in the theme's ink or palette take the new theme's colours."""
        if self._scenario is not None:
            self.refresh()
        self._update_plan_banner()  # its background is the theme's notice colour

    def set_presentation(self, enabled: bool) -> None:
        """On a projector the inputs and the toolbar grow with the chart, and the form's column
        widens to keep its fields whole."""
        # only a presented (or stand-alone) panel: the docked ones behind it would grow the
        # window to their larger minimum size and keep it after the presentation ends
        from PySide6.QtWidgets import QMainWindow

        docked = isinstance(self.window(), QMainWindow)
        factor = th.scale_factor(enabled and not docked)
        for widget in self.presentation_widgets():
            base = widget.property("basePointSize")
            if base is None:
                base = widget.font().pointSizeF()
                widget.setProperty("basePointSize", base)
            font = QFont(widget.font())
            font.setPointSizeF(float(base) * factor)
            widget.setFont(font)
            for table in widget.findChildren(QTableView):  # rows as tall as their new text
                if not isinstance(table, ResultsTable):
                    table.verticalHeader().setDefaultSectionSize(int(table.fontMetrics().height() * 1.5))
        # the maximum only: a larger minimum would resize the window's docks behind the presented panel
        self.form_scroll.setMaximumWidth(int((FORM_WIDTH + 80) * factor))
        self._fit_form()
        self._place_plan_note()  # the toolbar and the note have grown or shrunk

    def presentation_widgets(self) -> list[QWidget]:
        """What grows in presentation mode besides the charts and results tables (a panel adds
        its own tables and buttons)."""
        # the plan note's own widgets: the note's style sheet (its colour) stops the font of
        # the note itself from reaching them
        return [self.toolbar, self.plan_banner_label, self.adopt_button, self.follow_button, self.form_widget]

    def showEvent(self, event) -> None:  # noqa: N802 - Qt naming
        name_form_fields(self)  # rows added since the last show get their label as accessible name
        super().showEvent(event)
        if self.on_screen():
            self._draw_what_is_owed()

    def on_screen(self) -> bool:
        """Whether the panel can be seen. A dock behind another tab stays "visible" to Qt, so
        the window says which panels are in front (:meth:`set_on_screen`)."""
        return getattr(self, "_on_screen", True) and self.isVisible()

    def set_on_screen(self, on: bool) -> None:
        self._on_screen = bool(on)
        if on:
            self._draw_what_is_owed()

    def _draw_what_is_owed(self) -> None:
        """Shown: follow the plan noted while hidden (which may redraw), then draw what is stale."""
        self._catch_up()
        if self.is_stale() and self.isVisible():
            self.refresh()

    def is_stale(self) -> bool:
        """Whether edits arrived while the panel was hidden and it has not drawn them yet."""
        return bool(getattr(self, "_stale", False))

    def ensure_drawn(self) -> None:
        """Draw now what a hidden panel has put off (an export or a reader of its numbers)."""
        if self.is_stale():
            self._force_draw = True
            try:
                self._catch_up()
                if self.is_stale():
                    self.refresh()
            finally:
                self._force_draw = False

    # -- layout --------------------------------------------------------------------------------
    def _build(self) -> None:
        self.toolbar = QToolBar(self)
        self.toolbar.setObjectName("panelToolbar")
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.toolbar.setMovable(False)
        self.action_save = self._action("Save as scenario…", "Save the current inputs as a named scenario in the project",
                                        self.saveRequested.emit, "actionSave")
        self.action_compare = self._action("Compare…", "Overlay saved scenarios on this chart",
                                           self.compareRequested.emit, "actionCompare")
        self.export_menu = QMenu("Export", self)
        self.action_export_png = self._action("PNG image…", "Export the chart as a PNG (scenario embedded)",
                                              lambda: self.exportRequested.emit("png"), "actionExportPng", add=False)
        self.action_export_svg = self._action("SVG drawing…", "Export the chart as an SVG vector drawing",
                                              lambda: self.exportRequested.emit("svg"), "actionExportSvg", add=False)
        self.action_export_csv = self._action("CSV numbers…", "Export the chart's numbers as CSV (units in headers)",
                                              lambda: self.exportRequested.emit("csv"), "actionExportCsv", add=False)
        for action in (self.action_export_png, self.action_export_svg, self.action_export_csv):
            self.export_menu.addAction(action)
        export_button = QToolButton(self.toolbar)
        export_button.setObjectName("exportButton")
        export_button.setText("Export")
        export_button.setToolTip("Export the chart as PNG or SVG, or its numbers as CSV")
        export_button.setMenu(self.export_menu)
        export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.toolbar.addWidget(export_button)
        self.action_explain = self._action("Explain", "What this panel computes, and from which formulas",
                                           self.explainRequested.emit, "actionExplain")
        spacer = QWidget(self.toolbar)
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.toolbar.addWidget(spacer)
        self.action_override = self._action(
            "Local override", "Use this panel's own hardware and GPU count instead of the shared context",
            None, "actionOverride")
        self.action_override.setCheckable(True)
        self.action_override.toggled.connect(self.set_override_context)

        # inputs column
        self.form_widget = QWidget()
        self.form_widget.setObjectName("inputsForm")
        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.status = QLabel()
        self.status.setObjectName("panelStatus")
        self.status.setWordWrap(True)
        self.status.setVisible(False)
        column = QVBoxLayout(self.form_widget)
        column.setContentsMargins(8, 8, 8, 8)
        column.addLayout(self.form)
        column.addWidget(self.status)
        column.addStretch(1)
        self.form_scroll = QScrollArea()
        self.form_scroll.setObjectName("inputsScroll")
        self.form_scroll.setWidget(self.form_widget)
        self.form_scroll.setWidgetResizable(True)
        self.form_scroll.setFrameShape(QFrame.Shape.NoFrame)
        # as needed, not off: squeezed (a laptop, a wide chart beside it) the form scrolls
        # instead of cutting its fields and buttons off at the right edge
        self.form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        # not a Tab stop of its own: Tab goes from the panel toolbar straight to the first
        # field (the scroll area still scrolls each focused field into view)
        self.form_scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.form_scroll.setMinimumWidth(FORM_WIDTH - 60)
        self.form_scroll.setMaximumWidth(FORM_WIDTH + 80)

        # chart area over results
        self.chart_area = QWidget()
        self.chart_area.setObjectName("chartArea")
        self.chart_layout = QVBoxLayout(self.chart_area)
        self.chart_layout.setContentsMargins(0, 0, 0, 0)
        self.results = ResultsTable()
        self.results.before_read = self.ensure_drawn
        self.center = ChartOverResults(self.results)
        self.center.setObjectName("centerSplitter")
        self.center.setChildrenCollapsible(False)
        self.center.addWidget(self.chart_area)
        self.center.addWidget(self.results)
        self.center.setStretchFactor(0, 4)
        self.center.setStretchFactor(1, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("panelSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.form_scroll)
        self.splitter.addWidget(self.center)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([FORM_WIDTH, 1000])
        self.splitter.splitterMoved.connect(self._form_width_chosen)
        self._form_user_sized = False

        # "differs from the plan" note: what this panel shows is not the plan's, and the way
        # back. Beside the toolbar, in its height, where the row has room: shown, it moves
        # nothing (a line above the form and chart pushed them down under the field just
        # typed in); in a narrow panel it is that line under the toolbar (_place_plan_note)
        self.plan_banner = _PlanNote(self)
        self.plan_banner.setObjectName("planBanner")
        banner = QHBoxLayout(self.plan_banner)
        banner.setContentsMargins(8, 1, 2, 1)
        banner.setSpacing(4)
        self.plan_banner_label = ElidedLabel(self.plan_banner)
        self.plan_banner_label.setObjectName("planBannerText")
        self.follow_button = self._banner_button("Follow the plan", "followPlanButton",
                                                 "Drop this panel's own inputs and show the run plan's",
                                                 self.return_to_plan)
        self.adopt_button = self._banner_button("Make this the plan", "adoptPlanButton",
                                                "Put this panel's hardware, GPUs, model and run into the run plan, "
                                                "so every panel shows them (one undo step)", self.adopt_as_plan)
        banner.addWidget(self.plan_banner_label, 1)
        banner.addWidget(self.adopt_button)
        banner.addWidget(self.follow_button)
        self.plan_banner.setVisible(False)
        self._header = QHBoxLayout()
        self._header.setContentsMargins(0, 0, 0, 0)
        self._header.setSpacing(0)
        self._header.addWidget(self.toolbar, 1)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addLayout(self._header)
        outer.addWidget(self.plan_banner)  # under the toolbar until the row has room for it
        outer.addWidget(self.splitter, 1)
        self._outer = outer
        self._place_plan_note()

    def plan_note_in_toolbar_row(self) -> bool:
        """Whether the plan note sits beside the toolbar (else on a line under it)."""
        return self._header.indexOf(self.plan_banner) >= 0

    def _place_plan_note(self) -> None:
        """Beside the toolbar when the row has room for both at their full width, else under
        the toolbar across the panel. Moved only when that changes (a resize, another font or
        text), never on an edit."""
        note = self.plan_banner
        beside = self.width() >= self.toolbar.sizeHint().width() + note.sizeHint().width()
        if beside == self.plan_note_in_toolbar_row():
            return
        if beside:
            self._outer.removeWidget(note)
            note.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)  # the toolbar's height
            self._header.addWidget(note)
        else:
            self._header.removeWidget(note)
            note.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
            self._outer.insertWidget(1, note)

    def _banner_button(self, text: str, name: str, tip: str, slot) -> QToolButton:
        """A button of the plan note, as tall as the toolbar's (a push button is taller)."""
        button = QToolButton(self.plan_banner)
        button.setObjectName(name)
        button.setText(text)
        button.setToolTip(tip)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    def _form_width_chosen(self, *_args) -> None:
        self._form_user_sized = True

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._fit_form()
        self._place_plan_note()

    def _fit_form(self) -> None:
        if not self._form_user_sized and self.splitter.count() == 2:
            # the inputs as wide as their fields need (no sideways scroll bar), within the
            # column's maximum (FORM_WIDTH + 80, larger in presentation mode), and narrower
            # only when the chart would get less than MIN_CHART_WIDTH: the rest goes to the chart
            inner = self.form_scroll.widget()
            need = (inner.sizeHint().width() + self.form_scroll.verticalScrollBar().sizeHint().width()
                    if inner is not None else FORM_WIDTH)
            form = min(need, self.form_scroll.maximumWidth())
            least_chart = int(MIN_CHART_WIDTH * th.scale_factor())  # larger type needs a wider chart
            if self.width() - form < least_chart:  # a narrow panel: the chart keeps its minimum
                form = self.width() - least_chart
            form = max(self.form_scroll.minimumWidth(), form)
            total = sum(self.splitter.sizes())
            if total > form and self.splitter.sizes()[0] != form:
                self.splitter.setSizes([form, total - form])

    def _action(self, text: str, tip: str, slot, name: str, add: bool = True) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        if slot is not None:
            action.triggered.connect(lambda _checked=False: slot())
        if add:
            self.toolbar.addAction(action)
        return action

    def add_chart(self, chart: QWidget, stretch: int = 1) -> QWidget:
        """Put a chart (usually a :class:`~ui.charts.Chart`) in the chart area."""
        self.chart_layout.addWidget(chart, stretch)
        return chart

    # -- form fields bound to scenario fields ---------------------------------------------------
    def _label_for(self, name: str, label: str | None) -> str:
        if label:
            return label
        try:
            from workbench.scenarios import FIELD_LABELS

            return FIELD_LABELS.get(name, name.replace("_", " ").capitalize())
        except ImportError:
            return name.replace("_", " ").capitalize()

    def add_section(self, text: str) -> QLabel:
        """A bold heading that groups the form's next rows ("Model", "Prices")."""
        label = QLabel(text, self.form_widget)
        font = QFont(label.font())
        font.setBold(True)
        label.setFont(font)
        label.setContentsMargins(0, 6, 0, 0)
        self.form.addRow(label)
        return label

    def add_quantity_field(self, name: str, label: str | None = None, unit: str = "", **kwargs) -> QuantityField:
        """A :class:`QuantityField` bound to scenario field ``name`` (SI units)."""
        label = self._label_for(name, label)
        field = QuantityField(unit, self.form_widget, label=label, **kwargs)
        field.setObjectName(f"field.{name}")
        field.valueEdited.connect(lambda v, name=name: self._field_edited(name, v))
        self.form.addRow(label, field)
        self._bindings[name] = (field, "quantity")
        self._sync_field(name)
        return field

    def add_int_field(self, name: str, label: str | None = None, **kwargs) -> IntField:
        """A whole-number field (counts) bound to scenario field ``name``."""
        label = self._label_for(name, label)
        field = IntField(self.form_widget, label=label, **kwargs)
        field.setObjectName(f"field.{name}")
        field.valueEdited.connect(lambda v, name=name: self._field_edited(name, int(v)))
        self.form.addRow(label, field)
        self._bindings[name] = (field, "quantity")
        self._sync_field(name)
        return field

    def add_choice(self, name: str, choices: Sequence[tuple[str, Any]], label: str | None = None) -> QComboBox:
        """A combo box of (text, value) bound to scenario field ``name``."""
        label = self._label_for(name, label)
        combo = QComboBox(self.form_widget)
        combo.setObjectName(f"field.{name}")
        for text, value in choices:
            combo.addItem(text, value)
        combo.activated.connect(lambda i, name=name, combo=combo: self._field_edited(name, combo.itemData(i)))
        self.form.addRow(label, combo)
        self._bindings[name] = (combo, "choice")
        self._sync_field(name)
        return combo

    def add_check(self, name: str, label: str | None = None) -> QCheckBox:
        """A check box bound to a boolean scenario field ``name``."""
        label = self._label_for(name, label)
        box = QCheckBox(label, self.form_widget)
        box.setObjectName(f"field.{name}")
        box.toggled.connect(lambda on, name=name: None if self._syncing else self._field_edited(name, bool(on)))
        self.form.addRow("", box)
        self._bindings[name] = (box, "check")
        self._sync_field(name)
        return box

    def fill_precision_choices(self, hw: Any) -> None:
        """The precision combo lists what ``hw`` has a rate for, plus the scenario's own, marked,
        when the device lacks it (the panel's message says what to do)."""
        from workbench.hardware import PRECISION_LABELS, PRECISIONS

        combo = self.field("precision")
        wanted = list(hw.precisions) if hw is not None else list(PRECISIONS)
        if self._scenario.precision not in wanted:
            wanted.append(self._scenario.precision)
        missing = {p for p in wanted if hw is not None and p not in hw.precisions}
        set_choices(combo, [(PRECISION_LABELS[p] + (" (not on this GPU)" if p in missing else ""), p) for p in wanted])
        self._sync_field("precision")

    def field(self, name: str) -> QWidget | None:
        binding = self._bindings.get(name)
        return binding[0] if binding else None

    def _field_edited(self, name: str, value: Any) -> None:
        if self._syncing:
            return
        if name in self.PLAN_DERIVED_FIELDS and self.follows_plan():
            self.edit_own(name, lambda: self.edit(**{name: value}))
            return
        if not self.edit_context(name, value, self.CONTEXT_FIELDS.get(name)):
            self.edit(**{name: value})
        self._update_plan_banner()

    def edit_context(self, name: str, value: Any, source: str | None) -> bool:
        """Send an edit of field ``name`` to the shared context field ``source`` when the panel
        follows the context in a window: it changes for every panel, as one undo step (the
        context's), as in the toolbar. Returns False (nothing done) when the panel keeps the
        edit itself: no such field, Local override on, no window, or the context already has
        the value (the panel showed a scenario of its own, opened or restored)."""
        if source is None or self.context_sink is None or self._override_context:
            return False
        try:
            return bool(self.context_sink({source: value}))
        except ValueError as exc:
            message = str(exc).split(": ", 1)[1] if str(exc).startswith(f"{source}: ") else str(exc)
            self.show_validation_error(InputError(name, message), {name: value})
            return True

    def context_values(self, ctx: Any) -> dict[str, Any]:
        """This panel's ``CONTEXT_FIELDS`` as the context ``ctx`` sets them."""
        return {name: getattr(ctx, source) for name, source in self.CONTEXT_FIELDS.items() if hasattr(ctx, source)}

    def _sync_field(self, name: str) -> None:
        widget, kind = self._bindings[name]
        if self._scenario is None or not hasattr(self._scenario, name):
            return
        value = getattr(self._scenario, name)
        self._syncing = True
        try:
            if kind == "quantity":
                widget.setValue(value)
            elif kind == "choice":
                index = widget.findData(value)
                if index >= 0:
                    widget.setCurrentIndex(index)
            elif kind == "check":
                widget.setChecked(bool(value))
        finally:
            self._syncing = False

    def _sync_fields(self) -> None:
        for name in self._bindings:
            self._sync_field(name)

    # -- scenario, editing, undo ----------------------------------------------------------------
    def scenario(self) -> Any:
        self._catch_up()
        return self._scenario

    def analysis(self) -> Any:
        """What workbench works out for this panel (``workbench.workspace.analyse`` of its kind)
        from its scenario and the plan it follows, computed once per change: in a window the
        document's cache keeps it, so a redraw, an export and the document all get one result.
        None for a kind without an analysis; raises ValueError with what to fix."""
        from workbench.workspace import AnalysisCache

        self._catch_up()
        if self._analysis_cache is None:
            self._analysis_cache = AnalysisCache()
        return self._analysis_cache.get(self.kind, self.analysed_scenario(), self._view, self.presets(),
                                        getattr(getattr(self, "catalog", None), "revision", None))

    def presets(self) -> Any:
        """``self.catalog`` (the window's hardware presets) as the ``workbench.catalog`` look-up
        the analyses take: the panel's own analysis, and a compared scenario's."""
        catalog = getattr(self, "catalog", None)
        if self._preset_lookup is None or getattr(self._preset_lookup, "_hardware", None) is not catalog:
            from ui.document import PresetCatalog

            self._preset_lookup = PresetCatalog(catalog)
        return self._preset_lookup

    def analysed_scenario(self) -> Any:
        """The scenario the analysis is worked out from (the shown one; a panel whose scenario
        holds view state, like the animation's step, hands over the one without it)."""
        return self._scenario

    def use_analysis_cache(self, cache: Any) -> None:
        """Keep this panel's analyses in ``cache`` (the document's, when it attaches the panel)."""
        self._analysis_cache = cache

    def set_scenario(self, scenario: Any) -> None:
        """Show ``scenario`` (from undo/redo, opening, or the scenario browser): no undo step."""
        self._scenario = scenario
        self._sync_fields()
        self.clear_error()
        self.refresh()
        self._update_plan_banner()
        self.scenarioChanged.emit(scenario)

    def drop_pending_work(self) -> None:
        """Forget work started for the project being closed (a file still being read): the
        window calls it before it shows another project. Nothing here."""

    def set_undo_stack(self, stack: QUndoStack | None) -> None:
        """Use the window's shared undo stack (None: the panel's own)."""
        self._stack = stack if stack is not None else self._own_stack

    def undo_stack(self) -> QUndoStack:
        return self._stack

    def edit(self, *, _text: str | None = None, _merge: bool = True, **changes: Any) -> bool:
        """Change scenario fields as one undoable step. Returns whether it was applied; a
        validation error is shown next to the field (or in the status line), nothing pushed.
        Consecutive edits of one field merge into one step unless ``_merge`` is False (a
        switch of mode rather than typing)."""
        self._catch_up()
        if self._scenario is None:
            self.show_status("No scenario to edit")
            return False
        try:
            new = self._scenario.with_changes(**changes)
        except ValueError as exc:
            self.show_validation_error(exc, changes)
            return False
        for name in changes:
            self._clear_field_error(name)
        self.status.setVisible(False)
        push_scenario_edit(self._stack, self, new, _text, mergeable=_merge)
        return True

    def show_validation_error(self, exc: ValueError, changes: dict[str, Any] | None = None) -> None:
        """Put a model error next to the field it names (or the edited one), else in the status."""
        changes = changes or {}
        name = getattr(exc, "parameter", None)
        if name not in self._bindings:
            name = next(iter(changes)) if len(changes) == 1 and next(iter(changes)) in self._bindings else None
        message = str(exc)
        if name is not None:
            widget, kind = self._bindings[name]
            if kind == "quantity":
                hint = message.split(": ", 1)[1] if message.startswith(f"{name}: ") else message
                widget.show_error(hint[:1].upper() + hint[1:], getattr(self._scenario, name, None))
                return
            self._sync_field(name)  # a combo or check box goes back to the model's value
        self.show_status(message)

    def show_status(self, message: str) -> None:
        self.status.setText(message)
        self.status.setStyleSheet(f"color: {th.current_theme().error};")
        self.status.setVisible(bool(message))

    def status_text(self) -> str:
        return self.status.text() if not self.status.isHidden() else ""

    def blocking_problem(self) -> str:
        """Why the panel could draw nothing for its scenario ("" when it could): a headless
        export fails with this instead of writing an empty chart."""
        return self._draw_problem

    def draw_problem(self) -> str:
        """Why the last refresh could not compute what the scenario asks ("" when it could)."""
        return self._draw_problem

    def _clear_field_error(self, name: str) -> None:
        binding = self._bindings.get(name)
        if binding and binding[1] == "quantity" and binding[0].error():
            self._sync_field(name)

    def clear_error(self) -> None:
        self.status.setVisible(False)
        self.status.clear()

    # -- the run plan ---------------------------------------------------------------------------
    def override_context(self) -> bool:
        return self._override_context

    def set_override_context(self, on: bool, follow: bool = True) -> None:
        """With a local override the panel keeps its own inputs instead of the run plan's;
        turning it off (``follow``) shows the plan's again."""
        on = bool(on)
        if on == self._override_context:
            return
        if on:
            self._catch_up()  # the local copy starts from the plan as it is now
        self._override_context = on
        if self.action_override.isChecked() != on:
            self.action_override.setChecked(on)
        if not on:
            self._override_note = ""
        self.overrideContextChanged.emit(on)
        if not on and follow and self._view is not None:
            self.follow_plan(self._view)
        self._update_plan_banner()

    #: scenario field -> run-plan field, for the fields that are the plan's: the panel takes
    #: them from the plan, and (with a ``context_sink``, as in the window) an edit of one of
    #: them in the form changes the plan, unless Local override is on.
    CONTEXT_FIELDS: ClassVar[dict[str, str]] = {}
    #: fields the plan computes for this panel (a throughput, a rank count): typing one makes
    #: the panel local (Local override) instead of changing the plan
    PLAN_DERIVED_FIELDS: ClassVar[frozenset[str]] = frozenset()
    #: set by the window: applies {plan field: value} as one undoable plan edit, returns
    #: whether the plan changed (raises ValueError with what to fix)
    context_sink: Callable[[dict[str, Any]], bool] | None = None
    _override_note = ""

    def edit_own(self, name: str, edit: Callable[[], Any]) -> Any:
        """Run ``edit``, an edit of field ``name``, a number the plan computes, and return what
        it returns. While this panel follows the plan, one's own number makes the panel local,
        in the same undo step, so the next plan edit does not put the plan's back over it."""
        if not self.follows_plan():
            return edit()
        label = self._label_for(name, None).split(" (", 1)[0]
        return self.go_local(f"Local override: {label} comes from the run plan; this panel now keeps its own.", edit)

    def go_local(self, note: str, then: Callable[[], Any]) -> Any:
        """Turn Local override on and run ``then`` (an edit), as one undo step, named after the
        edit: "Undo Change latency per step to 20 µs (Local override)". An edit that the
        scenario refused (its message says why) or that changed nothing leaves no step: the
        panel follows the plan as before. Returns what ``then`` returned."""
        from ui.commands import push_override

        before = self.scenario()
        self._stack.beginMacro("Local override")
        try:
            push_override(self._stack, self, True, note=note)
            result = then()
        finally:
            self._stack.endMacro()
        step = self._stack.command(self._stack.index() - 1)
        if step is not None and self.scenario() == before:
            # the override alone: turned off again, and its step dropped (an obsolete command
            # is deleted by undo() without being undone; the scenario is still the plan's)
            self.set_override_context(False, follow=True)
            step.setObsolete(True)
            self._stack.undo()
            return result
        if step is not None and step.childCount() > 1:
            edit = step.child(step.childCount() - 1).text()
            if edit:
                step.setText(f"{edit} (Local override)")
                self._stack.undoTextChanged.emit(self._stack.undoText())  # the Edit menu's Undo says it
        self.set_override_note(note)
        return result

    def set_override_note(self, note: str) -> None:
        """What the plan note says of this panel's Local override ("" for its usual words)."""
        self._override_note = note
        self._update_plan_banner()

    def follows_plan(self) -> bool:
        """In a window, without Local override: this panel shows the run plan's numbers."""
        return self.context_sink is not None and not self._override_context

    def follow_plan(self, view: Any) -> bool:
        """Receive the run plan (a :class:`workbench.workspace.PlanView`): the scenario follows
        it as ``workbench.workspace.follow_plan`` says, unless Local override is on. No undo
        step: the plan's edit is the step. Returns whether the scenario followed.

        A panel in a window but behind another tab only notes the plan: it follows it when it
        is shown, or when its scenario is asked for (:meth:`scenario`), whichever comes first."""
        behind_a_tab = getattr(self, "_on_screen", True) is False  # the window said so
        if self.context_sink is not None and behind_a_tab and not getattr(self, "_force_draw", False):
            from workbench.workspace import context_of, follows_alike

            pending = getattr(self, "_plan_pending", None)
            if pending is not None and not follows_alike(pending, view):
                self._follow_now(pending)  # what the new view cannot give stays as this one left it
            self._view = view
            self._context = context_of(view.plan, view.sparse)
            self._plan_pending = view
            self._stale = True
            return not self._override_context and self._scenario is not None
        self._plan_pending = None
        return self._follow_now(view)

    def _catch_up(self) -> None:
        """Follow the plan noted while the panel was hidden (see :meth:`follow_plan`)."""
        view = getattr(self, "_plan_pending", None)
        if view is not None:
            self._plan_pending = None
            self._follow_now(view)

    def _follow_now(self, view: Any) -> bool:
        from workbench.workspace import context_of, follow_plan

        changed = view is not self._view
        self._view = view
        self._context = context_of(view.plan, view.sparse)
        if self._override_context or self._scenario is None:
            if changed and self._scenario is not None:
                # its own inputs stay, but what it shows of the plan (the "run plan" rows, the
                # node size) is worked out from the new one
                self.plan_followed()
            self._update_plan_banner()
            return False
        new = follow_plan(self.kind, self._scenario, view)
        if new is not self._scenario and new != self._scenario:
            self.set_scenario(new)
        else:
            self.plan_followed()
        if view.prediction is None and self.PLAN_DERIVED_FIELDS and self.context_sink is not None:
            # its plan numbers would be the last plan's: say so rather than show them as this one's
            self.show_status("The run plan cannot be predicted" + (f": {view.problem}" if view.problem else "")
                             + ". The numbers here are not the plan's until it can.")
        self._update_plan_banner()
        return True

    def plan_followed(self) -> None:
        """The plan changed but this panel's scenario did not: redraw what shows plan numbers."""

    def apply_context(self, ctx: Any) -> bool:
        """Receive a shared context of earlier releases (hardware, GPU count, precision ...):
        the panel follows the plan it describes. Ignored while the panel has a local override;
        returns whether it was applied."""
        from ui.document import PresetCatalog
        from workbench import plan as plan_model
        from workbench.workspace import PlanView, plan_from_context

        plan, _ = plan_from_context(ctx)
        catalog = getattr(self, "catalog", None)
        lookup = PresetCatalog(catalog) if catalog is not None else None
        hardware = catalog.get(plan.hardware) if catalog is not None and plan.hardware in catalog else None
        try:
            prediction = plan_model.predict(plan, lookup)
        except (ValueError, ArithmeticError):
            prediction = None
        view = PlanView(plan=plan, sparse=ctx.sparse, hardware=hardware, prediction=prediction,
                        has_hardware=(lambda key: key in catalog) if catalog is not None else (lambda _k: True))
        if self._override_context:
            self._view = view
            self._context = ctx
            return False
        self.follow_plan(view)
        self._context = ctx
        return True

    def context(self) -> Any:
        """The plan as the shared context of earlier releases (a RunContext), or None."""
        return self._context

    def plan_view(self) -> Any:
        return self._view

    def differs_from_plan(self) -> bool:
        """Whether this panel shows something other than the plan's numbers."""
        from workbench.workspace import differs_from_plan

        if self._view is None or self.context_sink is None or self._scenario is None:
            return False
        return self._override_context or differs_from_plan(self.kind, self._scenario, self._view)

    def plan_note_text(self) -> str:
        """What the "differs from the plan" note says (a panel may say it its own way)."""
        return self._override_note or (
            "Local override: this panel keeps its own inputs, not the run plan's." if self._override_context
            else "This panel's inputs differ from the run plan.")

    def _update_plan_banner(self) -> None:
        differs = self.differs_from_plan()
        if differs:
            note = self.plan_note_text()
            # each of these asks the window for a new layout even when nothing changed: only if it did
            if self.plan_banner_label.text() != note:
                self.plan_banner_label.setText(note)
            if self.adopt_button.isVisibleTo(self.plan_banner) != bool(self.CONTEXT_FIELDS):
                self.adopt_button.setVisible(bool(self.CONTEXT_FIELDS))
            sheet = f"#planBanner {{ background: {th.current_theme().notice_bg}; }}"
            if self.plan_banner.styleSheet() != sheet:
                self.plan_banner.setStyleSheet(sheet)
            self._place_plan_note()  # another text: another width
        if self.plan_banner.isVisibleTo(self) != differs:
            self.plan_banner.setVisible(differs)

    def return_to_plan(self) -> None:
        """Drop the panel's own inputs: show the plan's again (Local override off; one undo
        step in a window)."""
        from ui.commands import push_override

        if self._override_context:
            if self.context_sink is not None:
                push_override(self._stack, self, False)
            else:
                self.set_override_context(False)
        elif self._view is not None:
            self.follow_plan(self._view)

    def adopt_as_plan(self) -> bool:
        """Make this panel's plan fields the run plan's (one undo step), then follow it."""
        if self.context_sink is None or self._scenario is None:
            return False
        changes = {plan: getattr(self._scenario, name) for name, plan in self.CONTEXT_FIELDS.items()
                   if hasattr(self._scenario, name)}
        from ui.commands import push_override

        self._stack.beginMacro("Make this the plan")
        try:
            self.context_sink(changes)
            if self._override_context:
                push_override(self._stack, self, False)
        except ValueError as exc:
            name = getattr(exc, "parameter", "")
            text = str(exc)
            if name and text.startswith(f"{name}: "):
                text = f"{self._label_for(name, None).split(' (', 1)[0]}: {text[len(name) + 2:]}"
            self.show_status(f"Not made the plan. {text[:1].upper() + text[1:]}; change it in the Run plan panel.")
            return False
        finally:
            self._stack.endMacro()
        if self._override_context:  # standalone: no stack to carry it
            self.set_override_context(False)
        return True

    # -- explanation ----------------------------------------------------------------------------
    def explanation(self) -> str:
        """What this panel computes and from which formulas (rich text). Override."""
        return (type(self).__doc__ or self.title).strip()

    def explanation_title(self) -> str:
        return self.title

    def show_explanation(self):
        """Show :meth:`explanation` in this panel's non-modal dialog (created once, reused)."""
        from ui.dialogs import ExplanationDialog

        if self._explain_box is None:
            self._explain_box = ExplanationDialog(self, self.explanation_title(), self.explanation())
        else:
            self._explain_box.set_text(self.explanation_title(), self.explanation())
        self._explain_box.show()
        self._explain_box.raise_()
        return self._explain_box

    # -- hooks for subclasses --------------------------------------------------------------------
    def refresh(self) -> None:
        """Redraw the chart and the results from ``self.scenario()``. Override."""

    def chart_for_export(self) -> QWidget | None:
        """The chart exported by PNG/SVG (default: the first Chart in the chart area)."""
        charts = self.chart_area.findChildren(Chart)
        return charts[0] if charts else None

    def csv_columns(self) -> list[tuple[str, Sequence]] | None:
        """Columns for the CSV export, headers naming units (default: the chart's data)."""
        chart = self.chart_for_export()
        return chart.csv_columns() if isinstance(chart, Chart) else None

    def scenario_json(self) -> str | None:
        to_json = getattr(self._scenario, "to_json", None)
        return to_json() if callable(to_json) else None

    def export_to(self, fmt: str, path, *, width_px: int = 1920, background="white"):
        """Write this panel's chart (png/svg) or numbers (csv) to ``path``."""
        from ui import export

        chart = self.chart_for_export()
        if fmt == "csv":
            columns = self.csv_columns()
            if columns:
                return export.export_csv(path, columns)
            if isinstance(chart, Chart):
                return export.export_chart_csv(chart, path)
            raise ValueError(f"{self.title}: nothing to export as CSV")
        if chart is None:
            raise ValueError(f"{self.title}: no chart to export")
        if fmt == "png":
            metadata = {"Title": self.title}
            if self.kind:
                metadata["scaling-workbench-kind"] = self.kind
            return export.export_png(chart, path, width_px, background, metadata, scenario_json=self.scenario_json())
        if fmt == "svg":
            return export.export_svg(chart, path, background, title=self.title)
        raise ValueError(f"export format must be 'png', 'svg' or 'csv', got {fmt!r}")
