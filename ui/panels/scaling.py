"""Scaling and MFU panel: how well a training run uses its GPUs, and how it scales with more.

The panel edits a :class:`~workbench.scenarios.ScalingScenario` and draws its analysis,
:func:`workbench.analyses.scaling.analyse` (read through :meth:`PanelBase.analysis`, so the
window's document computes it once per change): model FLOPs per token, MFU and HFU with their
rating and traps, the predicted step, the speedup curve (Amdahl for strong scaling, Gustafson
for weak) with Amdahl's ceiling drawn, and the measured scaling table (rows typed, pasted or
imported; each read against the first row) with the law fitted to it. No formula lives here.
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction, QFont, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui import theme as th
from ui.charts import Chart
from ui.panel import RESULTS_SHARE, RESULTS_SHARE_PRESENTING, PanelBase, ResultRow
from ui.widgets.combo_items import set_choices
from workbench import measured_scaling as ms  # parsing typed rows and writing numbers as labels
from workbench._validate import InputError
from workbench.analyses import scaling as analysis_of
from workbench.hardware import PRECISION_LABELS
from workbench.plan import TERM_LABELS
from workbench.scaling_analysis import LAW_NAMES
from workbench.scenarios import CHOICES, ScalingScenario

#: Colours of compared scenarios' curves (the law curve is palette blue, measured data green,
#: the operating point vermillion: these stay clear of all three).
_COMPARE_COLORS = (th.ORANGE, th.PURPLE, th.SKY, th.BLACK, th.YELLOW)
#: Scenario fields the planned throughput depends on: a change re-plans it.
_PLAN_INPUTS = ("hardware", "precision", "n_gpus", "n_params", "seq_len", "recompute")


def _count_label(n: int) -> str:
    """Tick text for a power of two: 1 ... 65536, then 128k, 256k ..."""
    return f"{n}" if n <= 65536 else f"{n // 1024}k"


def _power_of_two_ticks(top: float, max_labels: int = 12) -> list[list[tuple[float, str]]]:
    """Major (labelled) and minor ticks at powers of two from 1 to ``top``, in log10 view units."""
    exponents = list(range(0, int(math.floor(math.log2(top))) + 1))
    step = max(1, math.ceil(len(exponents) / max_labels))
    major = [(k * math.log10(2), _count_label(2**k)) for k in exponents if k % step == 0]
    minor = [(k * math.log10(2), "") for k in exponents if k % step]
    return [major, minor]


def _times(x: float) -> str:
    return f"{ms.plain_number(x)}×"


def _one_value(line: str) -> bool:
    """Whether a pasted line is one number ("553,518" with digit groups), not a row of cells."""
    if "\t" in line or ";" in line:
        return False
    try:
        ms.parse_throughput(line)
    except InputError:
        return False
    return True


def _message_of(exc: Exception) -> str:
    """An InputError's message without its parameter name, first letter capitalised."""
    text = str(exc)
    name = getattr(exc, "parameter", "")
    if name and text.startswith(f"{name}: "):
        text = text[len(name) + 2:]
    return text[:1].upper() + text[1:]


class SpeedupChart(Chart):
    """The speedup chart, its legend in the bottom right corner: the curves rise from the bottom
    left to the top right, and the top left is where the ceilings are labelled."""

    def update_legend(self) -> None:
        super().update_legend()
        legend = self.getPlotItem().legend
        if legend is not None:
            legend.anchor(itemPos=(1, 1), parentPos=(1, 1), offset=(-10, -10))


# -- the measured table ---------------------------------------------------------------------------


class MeasuredTable(QTableWidget):
    """Rows of (GPUs, tokens/s) typed in, one empty row at the end for a new point, and what
    each row says against the first one beside them (read-only).

    It only reports what the user did: ``cellTyped(row, column, text)`` when a cell is
    committed, ``pasteRequested(text)`` for Ctrl+V, ``deleteRequested(rows)`` for Delete. The
    panel turns each into one undoable edit and fills the table again from the scenario."""

    cellTyped = Signal(int, int, str)
    pasteRequested = Signal(str)
    deleteRequested = Signal(list)

    GPUS, THROUGHPUT, SPEEDUP, EFFICIENCY, SERIAL = range(5)
    EDITABLE = (GPUS, THROUGHPUT)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(0, 5, parent)
        self.setObjectName("measuredTable")
        self.setAccessibleName("Measured scaling table")
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed
                             | QAbstractItemView.EditTrigger.SelectedClicked)
        header = self.horizontalHeader()
        for col in range(5):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self._filling = False
        self.itemChanged.connect(self._on_item_changed)
        for key, slot, name in ((QKeySequence.StandardKey.Paste, self.paste, "actionPasteRows"),
                                (QKeySequence.StandardKey.Copy, self.copy_selection, "actionCopyRows"),
                                (QKeySequence.StandardKey.Delete, self.delete_selected, "actionDeleteRows")):
            action = QAction(self)
            action.setObjectName(name)
            action.setShortcut(key)
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            action.triggered.connect(slot)
            self.addAction(action)

    def set_headers(self, labels: list[tuple[str, str]]) -> None:
        """Column titles and their tooltips."""
        for col, (text, tip) in enumerate(labels):
            item = self.horizontalHeaderItem(col)
            if item is None:
                item = QTableWidgetItem()
                self.setHorizontalHeaderItem(col, item)
            item.setText(text)
            item.setToolTip(tip)

    def fill(self, rows: list[tuple[str, ...]], pending: tuple[str, str]) -> None:
        """Show ``rows`` (five texts each) and the new-row line with ``pending`` texts."""
        self._filling = True
        try:
            self.setRowCount(len(rows) + 1)
            for i, texts in enumerate([*rows, (*pending, "", "", "")]):
                new_row = i == len(rows)
                head = QTableWidgetItem("+" if new_row else str(i + 1))
                head.setToolTip("Type a GPU count and its tokens/s here to add a row" if new_row else
                                ("The base row: the others are read against it" if i == 0 else ""))
                self.setVerticalHeaderItem(i, head)
                for col, text in enumerate(texts):
                    item = self.item(i, col)
                    if item is None:
                        item = QTableWidgetItem()
                        self.setItem(i, col, item)
                    item.setText(text)
                    flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                    if col in self.EDITABLE:
                        flags |= Qt.ItemFlag.ItemIsEditable
                    item.setFlags(flags)
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        finally:
            self._filling = False

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if not self._filling and item.column() in self.EDITABLE:
            self.cellTyped.emit(item.row(), item.column(), item.text())

    def paste(self) -> None:
        text = QGuiApplication.clipboard().text()
        if text:
            self.pasteRequested.emit(text)

    def selected_rows(self) -> list[int]:
        return sorted({index.row() for index in self.selectedIndexes()})

    def delete_selected(self) -> None:
        rows = [r for r in self.selected_rows() if r < self.rowCount() - 1]
        if rows:
            self.deleteRequested.emit(rows)

    def copy_selection(self) -> None:
        """The selected rows (all rows without a selection) as tab-separated text, with a header."""
        rows = [r for r in self.selected_rows() if r < self.rowCount() - 1] or list(range(self.rowCount() - 1))
        header = [self.horizontalHeaderItem(c).text() for c in range(self.columnCount())]
        lines = ["\t".join(header)] + ["\t".join(self.item(r, c).text() for c in range(self.columnCount()))
                                       for r in rows]
        QGuiApplication.clipboard().setText("\n".join(lines))

    def texts(self) -> list[tuple[str, ...]]:
        """Every row's cell texts, the new-row line last (for tests and reading aloud)."""
        return [tuple(self.item(r, c).text() if self.item(r, c) else "" for c in range(self.columnCount()))
                for r in range(self.rowCount())]

    def sizeHint(self):  # noqa: N802 - Qt naming
        """As tall as its rows and as wide as its columns (the panel sizes its room from this)."""
        hint = super().sizeHint()
        height = (self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth() + 2
                  + self.rowCount() * self.verticalHeader().defaultSectionSize())
        hint.setHeight(height)
        hint.setWidth(self.content_width())
        return hint

    def content_width(self) -> int:
        columns = sum(max(self.sizeHintForColumn(c), self.horizontalHeader().sectionSizeHint(c))
                      for c in range(self.columnCount()))
        return (columns + self.verticalHeader().width() + 2 * self.frameWidth()
                + self.verticalScrollBar().sizeHint().width() + 4)


class Notice(QFrame):
    """One warning line above the chart: what is wrong and, where there is one, the way out."""

    def __init__(self, name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName(name)
        self.label = QLabel(self)
        self.label.setObjectName(f"{name}Text")
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # hardware names are user text
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(8, 4, 8, 4)
        self._row.addWidget(self.label, 1)
        self.buttons: list[QPushButton] = []
        self.setVisible(False)

    def add_button(self, text: str, name: str, slot) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.clicked.connect(lambda _checked=False: slot())
        self._row.addWidget(button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.buttons.append(button)
        return button

    def show_text(self, text: str, severe: bool = False) -> None:
        if text:
            theme = th.current_theme()
            edge = theme.error if severe else theme.muted
            self.setStyleSheet(f"#{self.objectName()} {{ background: {theme.notice_bg}; "
                               f"border-left: 4px solid {edge}; }}")
            self.label.setText(text)
        self.setVisible(bool(text))

    def text(self) -> str:
        return self.label.text() if not self.isHidden() else ""


# -- the panel ----------------------------------------------------------------------------------


class ScalingPanel(PanelBase):
    """Scaling and MFU: utilisation of the GPUs and speedup with more of them."""

    kind = "scaling"
    title = "Scaling and MFU"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        self._comparison: list[tuple[str, ScalingScenario]] = []
        self._compared: dict[tuple, analysis_of.ScalingAnalysis] = {}  # a compared scenario on this GPU axis
        self._shown: analysis_of.ScalingAnalysis | None = None  # the analysis drawn last
        self._problem = ""
        self._pending: dict[int, float] = {}  # the new-row line: column -> value typed so far
        self._user_sized = False  # the user dragged the chart/results splitter: keep their sizes
        self._box_sized = False  # the user dragged the results/measured table splitter
        self._ceiling_labels: list[str] = []
        self._filled: tuple | None = None  # what the measured table shows (_measured_key)
        super().__init__(scenario if scenario is not None else ScalingScenario(), parent, undo_stack=undo_stack)
        self._build_form()
        self.chart = SpeedupChart(
            title="Speedup vs GPU count",
            x_label="GPUs",
            x_unit="count",
            y_label="Speedup",
            y_unit="×",
            log_x=True,
            log_y=True,
        )
        self._build_chart_area()
        self.chart.enable_hover(formatter=lambda x, y: f"GPUs: {ms.plain_number(x)}\nSpeedup: {_times(y)}")
        self.center.installEventFilter(self)
        self.center.splitterMoved.connect(self._on_user_sized)
        catalog.changed.connect(self._reload_hardware)
        if th.presentation_enabled():  # made while presenting: the form and table grow too
            self.set_presentation(True)
        self.refresh()

    # -- form ----------------------------------------------------------------------------------
    def _build_form(self) -> None:
        self.add_section("Hardware")
        self.hardware_combo = self.add_choice("hardware", self._hardware_choices())
        self.hardware_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.hardware_combo.setMinimumContentsLength(12)
        self._ensure_hardware_item()
        self._sync_field("hardware")
        self.add_choice("precision", [(PRECISION_LABELS[p], p) for p in CHOICES["precision"]])
        sparse = self.add_check("sparse", "2:4 sparsity (not in MFU)")
        sparse.setToolTip("Structured 2:4 sparsity. MFU and HFU always use the dense peak.")
        self.add_int_field("n_gpus", minimum=1, maximum=ScalingScenario.MAX_GPUS,
                           description="GPUs in the whole job (all data, tensor and pipeline ranks).")

        self.add_section("Model")
        self.add_quantity_field("n_params", unit="", minimum=0, min_inclusive=False,
                                description="Parameter count N, e.g. 6.66B.")
        self.add_int_field("n_layers", minimum=0, description="Transformer layers L (0 with d and T 0: 6N only).")
        self.add_int_field("d_model", minimum=0, description="Heads x head size d (the model width for MHA).")
        self.add_int_field("seq_len", minimum=0, description="Sequence length T in tokens.")

        self.add_section("Throughput")
        self.add_quantity_field("tokens_per_s", "Tokens/s (global)", unit="", minimum=0, min_inclusive=False,
                                description="Global throughput of the whole job, tokens/s. A number typed here "
                                            "is measured, on the hardware above.")
        source = self.add_choice("throughput_source", [("planned (run plan model)", "planned"),
                                                        ("measured", "measured")], "Source")
        source.setToolTip("Planned: the run plan's model predicts the throughput for this hardware, GPU count "
                          "and model, and predicts it again when they change. Measured: the number you typed, "
                          "measured on one GPU model; it stays when the hardware changes, and the panel warns.")
        self.source_note = QLabel(self.form_widget)
        self.source_note.setObjectName("throughputSourceNote")
        self.source_note.setTextFormat(Qt.TextFormat.PlainText)
        self.source_note.setWordWrap(True)
        self.form.addRow("", self.source_note)
        self.add_choice("recompute", [("none", "none"), ("full (HFU = MFU x 4/3)", "full")], "Recompute")

        self.add_section("Scaling")
        self.add_choice("mode", [("strong (Amdahl)", "strong"), ("weak (Gustafson)", "weak")], "Mode")
        self.field("mode").setToolTip("Strong scaling: a fixed problem on more GPUs (Amdahl). Weak scaling: "
                                      "the same work per GPU, the problem grows with them (Gustafson). "
                                      "The measured table is read the same way.")
        self.add_quantity_field("serial_fraction", unit="%", minimum=0, maximum=1,
                                description="Share of the work that does not parallelise (Amdahl's s); "
                                            "strong scaling never exceeds 1/s.")

        self.add_section("Step overheads")
        self.add_int_field("pipeline_stages", minimum=1, description="Pipeline-parallel stages p.")
        self.add_int_field("microbatches", minimum=1, description="Microbatches per step m.")
        self.add_quantity_field("comm_time_s", "Comm time / step", unit="s", minimum=0,
                                description="Communication time per step, before overlap.")
        self.add_quantity_field("overlap", "Comm overlap", unit="%", minimum=0, maximum=1,
                                description="Share of communication hidden behind compute.")
        self.add_quantity_field("dataloader_wait_s", "Loader wait / step", unit="s", minimum=0,
                                description="Time per step the GPUs wait for input data.")

        self.add_section("Storage")
        self.add_quantity_field("bytes_per_token", unit="B", minimum=0,
                                description="Bytes read per trained token (2 for uint16 token ids).")
        self.add_quantity_field("checkpoint_bytes", unit="B", minimum=0, binary=True,
                                description="One checkpoint; 0 estimates 14 B per parameter (mixed-precision Adam).")
        self.add_quantity_field("checkpoint_interval_s", unit="s", minimum=0, min_inclusive=False,
                                description="Time between checkpoints, e.g. 1 h.")

    def _build_chart_area(self) -> None:
        area = QWidget(self.chart_area)
        column = QVBoxLayout(area)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        self.stale_notice = Notice("staleThroughputNotice", area)
        self.use_planned_button = self.stale_notice.add_button("Use planned throughput", "usePlannedButton",
                                                               self.use_planned_throughput)
        self.measured_here_button = self.stale_notice.add_button("Measured on this GPU", "measuredHereButton",
                                                                 self.mark_measured_here)
        self.impossible_notice = Notice("impossibleMfuNotice", area)
        self.sparse_notice = Notice("sparsePeakNotice", area)
        for notice in (self.stale_notice, self.impossible_notice, self.sparse_notice):
            column.addWidget(notice)

        column.addWidget(self.chart, 1)
        self.add_chart(area)

        # the measured table sits beside the results, under the chart: the results' unit column
        # has room to spare, and the chart keeps the panel's whole width
        self.measured_box = QWidget()
        self.measured_box.setObjectName("measuredBox")
        box = QVBoxLayout(self.measured_box)
        box.setContentsMargins(6, 2, 2, 2)
        box.setSpacing(3)
        head = QHBoxLayout()
        head.setSpacing(4)
        self.measured_title = QLabel("Measured scaling", self.measured_box)
        self.measured_title.setObjectName("measuredTitle")
        font = QFont(self.measured_title.font())
        font.setBold(True)
        self.measured_title.setFont(font)
        head.addWidget(self.measured_title)
        head.addStretch(1)
        self.measured_hint = QLabel(self.measured_box)
        self.measured_hint.setObjectName("measuredHint")
        self.measured_hint.setWordWrap(True)
        self.measured_table = MeasuredTable(self.measured_box)
        self.measured_table.cellTyped.connect(self._measured_cell_typed)
        self.measured_table.pasteRequested.connect(self.paste_measured)
        self.measured_table.deleteRequested.connect(self.delete_measured_rows)
        self.import_button = QPushButton("Import…", self.measured_box)
        self.import_button.setObjectName("importMeasuredButton")
        self.import_button.setToolTip("Import CSV: read (GPUs, tokens/s) rows from a CSV file: a header names the columns, "
                                      "e.g. gpus,throughput_tokens_per_s (tokens_per_s_per_gpu is multiplied "
                                      "by the GPU count). The rows replace the table (one undo step).")
        self.import_button.clicked.connect(lambda _checked=False: self.import_measured_csv())
        self.export_button = QPushButton("Export…", self.measured_box)
        self.export_button.setObjectName("exportMeasuredButton")
        self.export_button.setToolTip("Export CSV: the table with its speedup, efficiency and serial fraction per row; "
                                      "every header names its unit.")
        self.export_button.clicked.connect(lambda _checked=False: self.export_measured_csv())
        self.delete_button = QPushButton("Delete", self.measured_box)
        self.delete_button.setObjectName("deleteMeasuredButton")
        self.delete_button.setToolTip("Delete the selected rows (Delete key)")
        self.delete_button.clicked.connect(lambda _checked=False: self.measured_table.delete_selected())
        for button in (self.import_button, self.export_button, self.delete_button):
            head.addWidget(button)
        self.measured_message = QLabel(self.measured_box)
        self.measured_message.setObjectName("measuredMessage")
        self.measured_message.setWordWrap(True)
        self.measured_message.setTextFormat(Qt.TextFormat.PlainText)
        self.measured_message.setVisible(False)
        box.addLayout(head)
        box.addWidget(self.measured_hint)
        box.addWidget(self.measured_table, 1)
        box.addWidget(self.measured_message)

        self.bottom_split = QSplitter(Qt.Orientation.Horizontal)
        self.bottom_split.setObjectName("resultsTableSplitter")
        self.bottom_split.setChildrenCollapsible(False)
        self.center.replaceWidget(1, self.bottom_split)
        self.bottom_split.addWidget(self.results)
        self.bottom_split.addWidget(self.measured_box)
        self.results.setVisible(True)  # replaceWidget hid it
        self.results.keep_content_width = True  # the splitter keeps its text whole
        self.bottom_split.setStretchFactor(0, 1)
        self.bottom_split.setStretchFactor(1, 0)
        self.bottom_split.splitterMoved.connect(self._on_box_sized)
        self.bottom_split.installEventFilter(self)

    def field(self, name: str) -> QWidget | None:
        if name == "measured":
            return self.measured_table
        return super().field(name)

    def presentation_widgets(self) -> list[QWidget]:
        # a notice's label and buttons do not inherit a font through the notice's style sheet
        notices = [w for n in (self.stale_notice, self.impossible_notice, self.sparse_notice)
                   for w in (n.label, *n.buttons)]
        return [*super().presentation_widgets(), self.measured_box, *notices]

    def set_presentation(self, enabled: bool) -> None:
        super().set_presentation(enabled)
        # the results' new width decides the measured table's room: have it now, whichever of the
        # two the theme module reaches first (the call is idempotent)
        self.results.set_presentation(enabled)
        table = self.measured_table
        for header in (table.horizontalHeader(), table.verticalHeader()):
            header.setFont(table.font())  # a header polished before the change keeps its old font
        # how to fill the table is for the person at the keyboard, not the room: a tooltip then
        self.measured_hint.setVisible(not enabled)
        self.measured_table.setToolTip(self.measured_hint.text() if enabled else "")
        # the form's size hint follows its new fonts once its layout has run: fit the column again
        self.form_widget.layout().activate()
        self._fit_form()
        self._size_box()
        if not self._user_sized:
            self._fit_results()

    def _hardware_choices(self) -> list[tuple[str, str]]:
        return [(self.catalog.name(key), key) for key in self.catalog.keys()]

    def _reload_hardware(self) -> None:
        combo = self.hardware_combo
        set_choices(combo, self._hardware_choices())
        combo.blockSignals(True)
        self._ensure_hardware_item()
        combo.setCurrentIndex(combo.findData(self.scenario().hardware))
        combo.blockSignals(False)
        self.refresh()

    def _ensure_hardware_item(self) -> None:
        """A hardware key the catalog lacks stays visible ("(not in catalog)"), never silently
        shown as another preset."""
        combo = getattr(self, "hardware_combo", None)
        key = self.scenario().hardware
        if combo is not None and combo.findData(key) < 0:
            combo.addItem(f"{key} (not in catalog)", key)

    def _sync_fields(self) -> None:
        self._ensure_hardware_item()
        super()._sync_fields()

    # -- throughput source ------------------------------------------------------------------------
    def edit(self, *, _text: str | None = None, _merge: bool = True, **changes) -> bool:
        """A typed throughput is measured, on the hardware it runs on; while the throughput is
        planned, a change of the run (hardware, GPUs, model) plans it again in the same step."""
        s = self.scenario()
        if s is not None:
            if "tokens_per_s" in changes and "throughput_source" not in changes:
                changes["throughput_source"] = "measured"
                changes.setdefault("measured_on", changes.get("hardware", s.hardware))
                if _text is None and s.throughput_source == "planned":
                    _text = f"Change throughput to {ms.plain_number(changes['tokens_per_s'])} tokens/s (measured)"
            source = changes.get("throughput_source", s.throughput_source)
            switched = source == "planned" and s.throughput_source != "planned"
            moved = any(k in changes and changes[k] != getattr(s, k) for k in _PLAN_INPUTS)
            try:
                candidate = s.with_changes(**changes)
            except ValueError:
                candidate = None  # the edit itself is refused below, next to its field
            if candidate is not None and source == "planned" and "tokens_per_s" not in changes and (switched or moved):
                try:
                    changes["tokens_per_s"] = self.planned_throughput(candidate)
                except ValueError as exc:
                    if switched:
                        self.show_status(f"No planned throughput: {_message_of(exc)}")
                        self._sync_field("throughput_source")
                        return False
                    changes["throughput_source"] = "measured"  # the old number no longer is a plan
                    changes["measured_on"] = s.hardware
        return super().edit(_text=_text, _merge=_merge, **changes)

    def planned_throughput(self, scenario: ScalingScenario | None = None) -> float:
        """The tokens/s the run plan's model predicts for ``scenario`` (default: the current one):
        the window's plan (or the default plan) with this panel's hardware, GPUs and model."""
        from workbench.workspace import DEFAULT_PLAN

        view = self.plan_view()
        base = view.plan if view is not None else DEFAULT_PLAN
        return ms.planned_tokens_per_s(scenario or self.scenario(), base, self.presets())

    def use_planned_throughput(self) -> bool:
        """The stale notice's way out: plan the throughput for the hardware now chosen."""
        name = self.catalog.name(self.scenario().hardware)
        return self.edit(throughput_source="planned", _text=f"Use the planned throughput on {name}", _merge=False)

    def mark_measured_here(self) -> bool:
        """The other way out: the throughput was in fact measured on the hardware now chosen."""
        s = self.scenario()
        name = self.catalog.name(s.hardware)
        return self.edit(measured_on=s.hardware, _text=f"Mark the throughput as measured on {name}", _merge=False)

    # -- the measured table: each action one undo step ------------------------------------------
    def _measured_cell_typed(self, row: int, column: int, text: str) -> None:
        rows = list(self.scenario().measured)
        text = text.strip()
        if row >= len(rows) and not text:
            self._pending.pop(column, None)
            self._fill_measured()
            return
        try:
            value = ms.parse_gpus(text) if column == MeasuredTable.GPUS else ms.parse_throughput(text)
        except InputError as exc:
            what = "GPU count" if column == MeasuredTable.GPUS else "throughput"
            hint = " Delete a row with the Delete key." if row < len(rows) and not text else ""
            self._measured_problem(f"Row {row + 1}, {what}: {_message_of(exc)}.{hint}")
            self._fill_measured()  # the cell shows its old value again
            return
        self._measured_problem("")
        if row < len(rows):
            gpus, rate = rows[row]
            new = (int(value), rate) if column == MeasuredTable.GPUS else (gpus, float(value))
            if new == rows[row]:
                self._fill_measured()
                return
            rows[row] = new
            self._edit_measured(rows, f"Change measured row {row + 1} to {new[0]:,} GPUs, "
                                      f"{ms.plain_number(new[1])} tokens/s")
            return
        self._pending[column] = value
        if len(self._pending) == 2:
            new = (int(self._pending[MeasuredTable.GPUS]), float(self._pending[MeasuredTable.THROUGHPUT]))
            self._pending = {}
            rows.append(new)
            self._edit_measured(rows, f"Add measured row: {new[0]:,} GPUs, {ms.plain_number(new[1])} tokens/s")
        else:
            self._fill_measured()

    def _edit_measured(self, rows, text: str) -> bool:
        done = self.edit(measured=tuple(rows), _text=text, _merge=False)
        if not done:
            self._fill_measured()
        return done

    def paste_measured(self, text: str) -> bool:
        """Rows pasted from a spreadsheet or a text file (tab, comma or ';' separated, a header
        line optional): from the current row down, over the rows there (the whole table when
        every row is selected). A single value goes into the current cell. One undo step."""
        table = self.measured_table
        try:
            parsed = ms.parse_table_text(text)
        except InputError as exc:
            self._measured_problem(f"Nothing pasted: {_message_of(exc)}")
            return False
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) == 1 and (parsed.columns <= 1 and not parsed.header or _one_value(lines[0])):
            column = max(table.currentColumn(), 0)
            if column not in MeasuredTable.EDITABLE:
                self._measured_problem("Paste a value into the GPUs or tokens/s column.")
                return False
            self._measured_cell_typed(max(table.currentRow(), 0), column, lines[0])
            return True
        rows = list(self.scenario().measured)
        problems = "; ".join(f"line {p.line}: {p.reason}" for p in parsed.problems[:3])
        if len(parsed.problems) > 3:
            problems += f" (and {len(parsed.problems) - 3} more)"
        if not parsed.rows:
            self._measured_problem(f"Nothing pasted: {problems or 'no rows'}.")
            return False
        selected = table.selected_rows()
        if rows and set(range(len(rows))) <= set(selected):
            start, rows = 0, []
        else:
            start = table.currentRow() if 0 <= table.currentRow() < len(rows) else len(rows)
        new = rows[:start] + list(parsed.rows) + rows[start + len(parsed.rows):]
        n = len(parsed.rows)
        done = self._edit_measured(new, f"Paste {n} measured row{'s' if n != 1 else ''}")
        self._measured_problem(f"{len(parsed.problems)} line(s) not pasted: {problems}." if problems else "")
        return done

    def import_measured_csv(self, path=None) -> ms.TableText | None:
        """Rows from a CSV file (asked for without ``path``) replace the table: one undo step.
        Returns what was read (None when nothing was)."""
        if path is None:
            path, _filter = QFileDialog.getOpenFileName(self, "Import measured scaling", "",
                                                        "CSV files (*.csv *.tsv *.txt);;All files (*)")
            if not path:
                return None
        path = Path(path)
        try:
            data = path.read_bytes()
            if len(data) > 10_000_000:
                raise InputError("file", f"is too large for a scaling table ({len(data):,} bytes)")
            parsed = ms.parse_table_text(data.decode("utf-8-sig"))
        except UnicodeDecodeError:
            self._measured_problem(f"Could not import {path.name}: it is not UTF-8 text.")
            return None
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else _message_of(exc)
            self._measured_problem(f"Could not import {path.name}: {reason}.")
            return None
        problems = "; ".join(f"line {p.line}: {p.reason}" for p in parsed.problems[:3])
        if not parsed.rows:
            self._measured_problem(f"Nothing imported from {path.name}: {problems or 'no rows'}.")
            return None
        n = len(parsed.rows)
        self._edit_measured(parsed.rows, f"Import {n} measured row{'s' if n != 1 else ''} from {path.name}")
        notes = []
        if parsed.per_gpu:
            notes.append("tokens/s per GPU multiplied by the GPU count")
        if parsed.problems:
            notes.append(f"{len(parsed.problems)} line(s) not imported: {problems}")
        self._measured_problem(f"{n} rows from {path.name}; " + "; ".join(notes) + "." if notes else "",
                               error=bool(parsed.problems))
        return parsed

    def export_measured_csv(self, path=None) -> Path | None:
        """The table and what each row says, as CSV (headers name their units)."""
        from ui import export

        if path is None:
            path, _filter = QFileDialog.getSaveFileName(self, "Export measured scaling", "measured-scaling.csv",
                                                        "CSV files (*.csv)")
            if not path:
                return None
        try:
            return export.write_export(path, self.analysis().measured_csv().encode("utf-8"), "CSV file")
        except (OSError, ValueError) as exc:
            self._measured_problem(str(exc))
            return None

    def delete_measured_rows(self, rows: list[int]) -> bool:
        measured = list(self.scenario().measured)
        gone = sorted({r for r in rows if 0 <= r < len(measured)})
        if not gone:
            return False
        kept = [pair for i, pair in enumerate(measured) if i not in gone]
        text = f"Delete measured row {gone[0] + 1}" if len(gone) == 1 else f"Delete {len(gone)} measured rows"
        return self._edit_measured(kept, text)

    def _measured_problem(self, message: str, error: bool = True) -> None:
        label = self.measured_message
        label.setText(message)
        label.setStyleSheet(f"color: {th.current_theme().error};" if error else "")
        label.setVisible(bool(message))

    def measured_message_text(self) -> str:
        return self.measured_message.text() if not self.measured_message.isHidden() else ""

    def _measured_key(self) -> tuple:
        s = self.scenario()
        return s.measured, s.mode, tuple(sorted(self._pending.items()))

    def _fill_measured(self) -> None:
        self._filled = self._measured_key()
        s = self.scenario()
        t = self.analysis().measured
        strong = s.mode == "strong"
        base = t.base if t is not None else None
        against = f"{base.gpus:,} GPU{'s' if base.gpus != 1 else ''}" if base is not None else "row 1"
        self.measured_table.set_headers([
            ("GPUs", "GPUs of the run (the whole job)"),
            ("Tokens/s", "Throughput of the whole job, tokens/s"),
            ("Speedup" if strong else "Scaled speedup",
             f"Throughput / the base row's ({against}): S = X / X0"),
            ("Efficiency", "Scaling efficiency = (X / X0) / (n / n0): 100% is linear"),
            ("Karp-Flatt" if strong else "Serial (Gustafson)",
             "Karp-Flatt serial fraction against the base row: e = (1/S - 1/p) / (1 - 1/p), p = n / n0, "
             "a share of the base run's time. Growing with n points to overhead (communication), not a "
             "fixed serial part."
             if strong else
             "The serial fraction Gustafson's law implies against the base row: s = (p - S) / (p - 1), "
             "p = n / n0."),
        ])
        texts = []
        for i, (gpus, rate) in enumerate(s.measured):
            row = t.rows[i] if t is not None and i < len(t.rows) else None
            texts.append((
                f"{gpus:,}", ms.plain_number(rate, 6),
                _times(row.speedup) if row else "–",
                ms.plain_percent(row.efficiency) if row else "–",
                "base" if i == 0 else (ms.plain_percent(row.serial_fraction, 2) if row and row.serial_fraction
                                       is not None else "–"),
            ))
        pending = (f"{int(self._pending[0]):,}" if 0 in self._pending else "",
                   ms.plain_number(self._pending[1], 6) if 1 in self._pending else "")
        self.measured_table.fill(texts, pending)
        mode = "strong scaling: a fixed problem" if strong else "weak scaling: fixed work per GPU"
        self.measured_hint.setText(f"{mode.capitalize()}; rows against the first ({against}). Type in the "
                                   "last line, paste rows (Ctrl+V) or import a CSV.")
        self._size_box()

    def _on_box_sized(self, *_args) -> None:
        self._box_sized = True

    def _size_box(self, width: int | None = None) -> None:
        """The measured table as wide as its columns (at most 55% of the width under the
        chart), the results the rest."""
        if self._box_sized:
            return
        total = (self.bottom_split.width() if width is None else width) - self.bottom_split.handleWidth()
        if total <= 0:
            return
        want = max(self.measured_table.content_width(), self.measured_box.minimumSizeHint().width()) + 8
        # the headline numbers keep their text whole first; the table then scrolls sideways
        results = self.results.minimumSizeHint().width() + self.results.verticalScrollBar().sizeHint().width()
        want = min(want, max(total - results, int(total * 0.35)))
        if self.bottom_split.sizes()[1] != want:
            self.bottom_split.setSizes([total - want, want])

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._size_box()


    # -- context and comparison -------------------------------------------------------------------
    CONTEXT_FIELDS = {"hardware": "hardware", "precision": "precision", "sparse": "sparse",
                      "n_gpus": "n_gpus", "n_params": "n_params", "n_layers": "n_layers",
                      "d_model": "d_model", "seq_len": "seq_len"}
    #: the plan predicts the throughput and its overheads; typing them (or saying the throughput
    #: is measured) explores locally
    PLAN_DERIVED_FIELDS = frozenset({"tokens_per_s", "throughput_source", "pipeline_stages", "microbatches",
                                     "comm_time_s", "overlap", "dataloader_wait_s"})

    def plan_followed(self) -> None:
        self.refresh()  # the training tokens may have changed

    def set_comparison(self, items: list[tuple[str, ScalingScenario]]) -> None:
        """Overlay other saved scenarios' speedup curves (dashed, named)."""
        self._comparison = [(str(name), scenario) for name, scenario in items]
        self._compared = {}
        self.refresh()

    def clear_comparison(self) -> None:
        self._comparison = []
        self._compared = {}
        self.refresh()

    def _compared_analyses(self, n_gpus: int) -> list[tuple[str, ScalingScenario, analysis_of.ScalingAnalysis]]:
        """Each compared scenario's analysis, on this chart's GPU axis (the scenario at this
        panel's GPU count, so its curve spans the same range): kept while the count is the same."""
        if any(count != n_gpus for _other, count in self._compared):
            self._compared = {}  # another axis: the curves kept for the last one are of no use
        out = []
        for name, other in self._comparison:
            key = (other, n_gpus)
            if key not in self._compared:
                self._compared[key] = analysis_of.analyse(other.with_changes(n_gpus=n_gpus), None, self.presets())
            out.append((name, other, self._compared[key]))
        return out

    def comparison(self) -> list[tuple[str, ScalingScenario]]:
        return list(self._comparison)

    # -- drawing --------------------------------------------------------------------------------
    def refresh(self) -> None:
        a = self.analysis()
        self._shown = a
        problem = a.problem or a.measured_problem
        if problem:
            self.show_status(problem)
        elif self._problem:
            self.clear_error()
        self._problem = problem
        self._draw_chart(a)
        if self._measured_key() != self._filled:  # a value elsewhere leaves the table as it is
            self._fill_measured()
        else:
            self._size_box()  # the results beside it may need another width
        self._update_notices(a)
        self._update_source_note(a)
        self.results.set_rows(self._rows(a))
        if not self._user_sized:
            self._fit_results()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt naming
        if obj is self.center and event.type() == QEvent.Type.Resize and not self._user_sized:
            self._fit_results(event.size().height() - self.center.handleWidth())
        elif obj is self.bottom_split and event.type() == QEvent.Type.Resize:
            self._size_box(event.size().width())
        return super().eventFilter(obj, event)

    def _on_user_sized(self, *_args) -> None:
        self._user_sized = True

    def _fit_results(self, total: int | None = None) -> None:
        """Give the results table the height of all its rows, once the panel has a size (the
        chart keeps the rest; a user's later drag of the splitter is left alone)."""
        table = self.results
        needed = (table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() + 4
                  + table.rowCount() * table.verticalHeader().defaultSectionSize())
        needed = max(needed, self.measured_box.sizeHint().height())
        total = sum(self.center.sizes()) if total is None else total
        if total > 0:
            # the chart keeps the most of the height, as in every panel; the tables scroll
            share = RESULTS_SHARE_PRESENTING if th.presentation_enabled() else RESULTS_SHARE
            rows = min(needed, int(total * share))
            if self.center.sizes() != [total - rows, rows]:  # setSizes lays both tables out again
                self.center.setSizes([total - rows, rows])

    def _law_name(self, scenario: ScalingScenario) -> str:
        return f"{LAW_NAMES[scenario.mode]}, s = {ms.plain_percent(scenario.serial_fraction)}"

    def _draw_chart(self, a: analysis_of.ScalingAnalysis) -> None:
        s = self.scenario()
        chart = self.chart
        top = a.gpus_top
        chart.clear_series()
        chart.clear_reference_lines()
        theme = chart.theme()
        n = a.curve_gpus
        chart.add_series(self._law_name(s), n, a.curve_speedup, width=th.BASE_LINE_WIDTH * 1.5)
        chart.add_series("Ideal (linear)", n, n, color=theme.muted, style="dash", width=th.BASE_LINE_WIDTH * 0.75)
        y_top = float(top)
        fit = a.measured.fit if a.measured is not None else None
        if fit is not None:
            chart.add_series(f"{fit.law} fit to measured, s = {ms.plain_percent(fit.serial_fraction)}", n,
                             a.fit_speedup, color=th.MEASURED, style="dot")
            chart.add_series("Measured", a.measured_gpus, a.measured_speedup, color=th.MEASURED, symbol="o")
            self._points_only("Measured")
            y_top = max(y_top, float(max(a.measured_speedup)))
        for i, (name, other, compared) in enumerate(self._compared_analyses(s.n_gpus)):
            chart.add_series(f"{name} ({self._law_name(other)})", n, compared.curve_speedup,
                             color=_COMPARE_COLORS[i % len(_COMPARE_COLORS)], style="dash")
        colors = {"law": theme.series_color(0), "fit": theme.tone(th.MEASURED)}
        self._ceiling_labels = [c.label for c in a.ceilings]
        for i, ceiling in enumerate(a.ceilings):
            value = ceiling.value
            line = chart.add_reference_line(value, vertical=False, label=ceiling.label, color=colors[ceiling.source])
            text = getattr(line, "label", None)
            if text is not None:
                # at the left, where the curves are far below their ceiling; of two ceilings the
                # lower one is labelled under its line
                below = i == 1
                text.setPosition(0.015)
                text.anchors = [(0.0, 0.0 if below else 1.0)] * 2
                text.updatePosition()
            y_top = max(y_top, value * 2.0)
        op = a.operating_speedup
        chart.set_operating_point(s.n_gpus, op, f"{s.n_gpus:,} GPUs: {_times(op)}")
        ticks = _power_of_two_ticks(top)
        chart.axis("x").setTicks(ticks)
        chart.axis("y").setTicks(_power_of_two_ticks(y_top * 1.5, max_labels=9))
        chart.set_log_range(1, top, 0.8, y_top * 1.5, padding=0.02, hold=True)  # room for the "1" tick label

    def ceiling_labels(self) -> list[str]:
        """The labels of the ceilings drawn on the chart (for tests and reading aloud)."""
        return list(self._ceiling_labels)

    def _points_only(self, name: str) -> None:
        """Measured points are markers, not a line (kept through restyles)."""
        for series in self.chart.series():
            if series.name == name:
                series.style = Qt.PenStyle.NoPen
                series.item.setPen(None)

    # -- notices ----------------------------------------------------------------------------------
    def _update_notices(self, a: analysis_of.ScalingAnalysis) -> None:
        # a measured throughput from another GPU is the panel's own exploration: not while it
        # shows the plan's numbers
        self.stale_notice.show_text(a.stale_message if not self.follows_plan() else "")
        self.measured_here_button.setText(f"Measured on {a.hardware_name}")
        self.impossible_notice.show_text(a.impossible_message, severe=True)
        self.sparse_notice.show_text(a.sparse_message)

    def _update_source_note(self, a: analysis_of.ScalingAnalysis) -> None:
        s = self.scenario()
        if self.follows_plan() and s.throughput_source == "planned":
            note = "From the run plan's prediction."
        elif s.throughput_source == "planned":
            note = f"Planned for {a.hardware_name} by the run plan's model."
        else:
            note = f"Measured on {a.measured_on_name}."
        self.source_note.setText(note)

    def notices(self) -> dict[str, str]:
        """The warnings on show, by kind ("stale", "impossible", "sparse")."""
        return {kind: notice.text() for kind, notice in (("stale", self.stale_notice),
                                                          ("impossible", self.impossible_notice),
                                                          ("sparse", self.sparse_notice)) if notice.text()}

    # -- results --------------------------------------------------------------------------------
    def _plan_step_rows(self, step: analysis_of.PlanStep | None) -> list[ResultRow]:
        """While the panel follows the run plan, its step is the plan's (the overheads are in the
        predicted throughput, so this panel's own step model would count them twice)."""
        if not self.follows_plan() or step is None:
            return []
        rows = [ResultRow(f"Step: {TERM_LABELS[term].lower()}", seconds, "s",
                          "From the run plan's prediction (Run plan panel; workbench.plan).")
                for term, seconds in step.terms]
        rows.append(ResultRow("Step time (run plan)", step.step_time_s, "s",
                              f"The run plan's step: {step.global_batch:,} sequences of {step.seq_len:,} tokens."))
        rows.append(ResultRow("MFU (run plan)", step.mfu, "%", "The run plan's MFU, 6N + 12·L·d·T per token."))
        return rows

    def _rows(self, analysis: analysis_of.ScalingAnalysis) -> list[ResultRow]:
        s = self.scenario()
        a = analysis.figures
        t = analysis.measured
        law = LAW_NAMES[s.mode]
        n = f"{s.n_gpus:,}"
        precision = PRECISION_LABELS[s.precision]

        def val(get):
            if a is None:
                return None
            return get(a)

        def pct(fraction: float | None, digits: int = 3) -> str | None:
            return None if fraction is None else ms.plain_number(fraction * 100.0, digits)

        b = a.breakdown if a is not None else None
        no_step = "Needs the sequence length (the step is one sequence per replica per microbatch)."
        step_note = (
            "ScalingScenario has no batch size: one step is one sequence per data-parallel replica "
            "per microbatch, T x m x max(1, GPUs / p) tokens, and the measured throughput is taken "
            "as the rate of the compute alone."
        )
        shape = "6N" if s.six_n_only else "6N + 12·L·d·T"
        band = analysis.mfu_band
        rating = analysis.mfu_rating

        rows = [
            ResultRow("Model FLOPs per token", val(lambda a: a.flops_per_token), "FLOP",
                      f"Training FLOPs per token (forward + backward): {shape}, N parameters, L layers, "
                      "d = heads x head size, T sequence length (attention not halved for causal masking)."),
            ResultRow(f"Peak per GPU (dense {precision})", val(lambda a: a.peak_flops), "FLOP/s",
                      "The dense peak of one GPU at the precision, from the hardware preset. Structured "
                      "sparsity is never counted in MFU peaks" + (" (sparsity is on, and ignored here)." if s.sparse
                                                                  else ".")),
            ResultRow(f"MFU ({band})" if band else "MFU", val(lambda a: pct(a.mfu)), "%",
                      "Model FLOPs utilisation = FLOPs per token x tokens/s / (GPUs x dense peak per GPU). "
                      + (f"{rating[:1].upper()}{rating[1:]}. " if rating else "")
                      + "Well-tuned large runs reach 35-55%; above 60% is excellent; above 100% is "
                        "impossible (a sparse peak or a wrong input)."),
            ResultRow("HFU", val(lambda a: pct(a.hfu)), "%",
                      "Hardware FLOPs utilisation: MFU counting recomputed work too; full activation "
                      "recomputation re-runs the forward pass, HFU = MFU x 4/3."),
        ]
        rows += self._plan_step_rows(analysis.plan_step) or [
            ResultRow("Step: compute", b.compute_s if b else None, "s",
                      f"Compute time of one step = tokens per step / measured tokens/s. {step_note}"
                      if b else no_step),
            ResultRow("Step: exposed communication", b.exposed_comm_s if b else None, "s",
                      "Communication not hidden behind compute = comm time x (1 - overlap)." if b else no_step),
            ResultRow("Step: pipeline bubble", b.bubble_s if b else None, "s",
                      "Pipeline fill and drain = compute x (p - 1) / m, p stages, m microbatches "
                      f"(bubble fraction (p - 1) / (m + p - 1) = {b.bubble_fraction:.1%})." if b else no_step),
            ResultRow("Step: data-loader wait", b.dataloader_wait_s if b else None, "s",
                      "Time per step the GPUs wait for input (an input value)." if b else no_step),
            ResultRow("Predicted step time", b.total_s if b else None, "s",
                      "compute + exposed communication + pipeline bubble + data-loader wait." if b else no_step),
            ResultRow("Predicted MFU", val(lambda a: pct(a.predicted_mfu)), "%",
                      "MFU once the step's overheads are counted = MFU x compute / step time."
                      if b else no_step),
        ]
        cap = analysis.ceiling
        largest = t.largest if t is not None else None
        base = t.base if t is not None else None
        kf_name = "Karp-Flatt" if s.mode == "strong" else "Gustafson serial fraction"
        kf_note = ""
        if largest is not None and largest.serial_fraction is not None:
            kf_label = f"{kf_name} at {largest.gpus:,} GPUs (vs {base.gpus:,})"
            kf_value = pct(largest.serial_fraction, 2)
            one = analysis.one_gpu_serial_fraction
            if one is not None:
                kf_note = (f" It is a share of the {base.gpus:,}-GPU base run's time; as a share of one GPU's "
                           f"time, e / (n0 - (n0 - 1) e) = {ms.plain_percent(one)}, comparable with the fit's s.")
        else:
            kf_label, kf_value = kf_name, None
        fit = t.fit if t is not None else None
        rows += [
            ResultRow(f"{law} speedup at {n} GPUs", None if a is None else ms.plain_number(a.speedup), "×",
                      "Strong scaling (Amdahl): S(n) = 1 / (s + (1 - s) / n), at most min(n, 1/s)."
                      if s.mode == "strong" else
                      "Weak scaling (Gustafson): scaled speedup S(n) = s + (1 - s) n."),
            ResultRow(f"{law} efficiency at {n} GPUs", val(lambda a: pct(a.efficiency)), "%",
                      "Parallel efficiency = speedup / n (1 = perfect linear scaling)."),
            ResultRow("Amdahl ceiling (1/s)", ms.plain_number(cap) if cap is not None else
                      ("none (weak scaling)" if s.mode == "weak" else "none (s = 0)"), "×" if cap else "",
                      "The most speedup any GPU count gives at serial fraction s: 1/s "
                      f"({analysis.ceiling_label or 'no serial part, no ceiling'}). Weak scaling "
                      "(Gustafson) has no ceiling: the problem grows with the GPUs."),
            ResultRow(f"Fitted serial fraction ({fit.law if fit else law})",
                      pct(fit.serial_fraction) if fit else None, "%",
                      "The law of the mode fitted to every measured row: least squares in throughput of "
                      "X(n) = X1 x law(s, n), X1 the fit's own single-GPU throughput. Needs two or more GPU "
                      "counts."),
            ResultRow(kf_label, kf_value, "%",
                      "The serial fraction of the row with the most GPUs, measured against the table's first "
                      "row (p = n / n0, S = X / X0): Karp-Flatt e = (1/S - 1/p) / (1 - 1/p) in strong scaling, "
                      "Gustafson's (p - S) / (p - 1) in weak. Every row's value is in the measured table."
                      + kf_note),
            ResultRow("Input read bandwidth", val(lambda a: a.read_bytes_per_s), "B/s",
                      "Sustained read rate that keeps the job fed = tokens/s x bytes per token."),
            ResultRow("Checkpoint write bandwidth" + (" (size est.)" if s.checkpoint_bytes <= 0 else ""),
                      val(lambda a: a.checkpoint_write_bytes_per_s), "B/s",
                      "Average write rate = checkpoint size / checkpoint interval"
                      + (" (size estimated at 14 B per parameter: BF16 weights, FP32 master weights, "
                         "Adam moments)." if s.checkpoint_bytes <= 0 else ".")),
            ResultRow("Training time", val(lambda a: a.training_time_s), "s",
                      f"Training tokens of the run ({analysis.train_tokens:.3g}, from the shared context) / "
                      "tokens/s."),
        ]
        return rows

    def measured_analysis(self) -> ms.MeasuredScaling | None:
        """The measured table as the panel reads it (rows against the first, the fitted law)."""
        return self.analysis().measured

    # -- explain, export ------------------------------------------------------------------------------
    def explanation(self) -> str:
        return (
            "<h3>Scaling and MFU</h3>"
            "<p><b>Model FLOPs per token</b> = 6N + 12·L·d·T (forward 2N + backward 4N, plus "
            "attention scores and values; d = heads × head size; 6N alone when the shape is not given).</p>"
            "<p><b>MFU</b> = FLOPs per token × tokens/s ÷ (GPUs × <i>dense</i> peak per GPU). "
            "Sparsity is never counted in MFU peaks: the dense peak is used even with 2:4 sparsity on. "
            "Well-tuned large runs reach 35–55%; above 60% is excellent; above 100% is impossible and "
            "means a wrong input. A preset whose dense figure is another GPU's sparse one is flagged. "
            "<b>HFU</b> adds recomputed work: full activation recomputation gives HFU = MFU × 4/3.</p>"
            "<p><b>Throughput</b>: planned (the run plan's model, predicted again when the hardware, "
            "GPUs or model change) or measured on one GPU model. A measured number kept after the "
            "hardware changes still describes the old GPU: the panel says so.</p>"
            "<p><b>Predicted step</b>: compute + communication × (1 − overlap) + pipeline bubble "
            "compute × (p − 1)/m + data-loader wait; predicted MFU = MFU × compute ÷ step. "
            "Without a batch size, a step is one sequence per data-parallel replica per microbatch, "
            "and the measured throughput is taken as the rate of the compute alone.</p>"
            "<p><b>Speedup</b>: Amdahl (strong scaling) S = 1 / (s + (1 − s)/n), never above 1/s "
            "(5% serial caps you at 20×); Gustafson (weak scaling) S = s + (1 − s)·n; efficiency = S / n.</p>"
            "<p><b>Measured table</b>: each row against the first (n0 GPUs, X0 tokens/s): speedup "
            "S = X/X0, efficiency = (X/X0) / (n/n0), and with p = n/n0 the Karp-Flatt serial fraction "
            "e = (1/S − 1/p) / (1 − 1/p) (weak scaling: Gustafson's (p − S)/(p − 1)). The law fitted "
            "to all rows has its own single-GPU throughput; the chart shows the rows as speedups over it.</p>"
            "<p><b>Storage</b>: read = tokens/s × bytes per token; checkpoint write = size ÷ interval "
            "(size 0: 14 B per parameter). <b>Training time</b> = training tokens ÷ tokens/s.</p>"
        )

    def csv_columns(self):
        """The speedup curve at every power of two (and the current GPU count), with units;
        compared scenarios' speedups as extra columns."""
        a = self.analysis()
        columns = [("GPUs (count)", list(a.csv_gpus)), ("speedup (x)", list(a.csv_speedup)),
                   ("efficiency (fraction)", list(a.csv_efficiency))]
        for name, _other, compared in self._compared_analyses(self.scenario().n_gpus):
            columns.append((f"{name} speedup (x)", list(compared.csv_speedup)))
        return columns
