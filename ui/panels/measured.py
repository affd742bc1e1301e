"""Plan vs actual panel: training logs and a measured energy log against the run plan.

Open (or drop) training logs and an energy log; the panel draws tokens/s per GPU and MFU per
step for every log (its own colour, the legend naming the file, the steps that waited on data
marked, the plan's numbers as dashed lines) and sets the plan's prediction beside the
measured steady-state medians in its table. Every number comes from the panel's analysis,
:func:`workbench.analyses.measured.analyse` (kept once per change by the window's document);
reading a file is the user's action, done here with :mod:`workbench.measured`'s readers. This
module lays out, formats and routes files. Text from a log or a file name is shown as plain
text only.

"Adopt measured throughput" puts the selected log's steady throughput into the run plan
(``RunPlan.measured_tokens_per_s``, the log's name as its ``measured_source``) through the
window's document, as one undo step: the plan's step, days, energy, CO2e and cost are then the
measured run's in every panel that follows the plan, and undo (or "Use the model again" in the
Run plan panel) goes back to the prediction.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shiboken6
from PySide6.QtCore import QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui import dialogs, plain
from ui import theme as th
from ui.charts import Chart
from ui.panel import PanelBase, ResultsTable
from ui.panels.measured_files import MEASURED_SUFFIXES, OPEN_FILTER_ENTRY
from ui.widgets.quantity_edit import IntField
from workbench import energy, trainlog, units
from workbench import measured as ms
from workbench._validate import InputError
from workbench.analyses.measured import MeasuredAnalysis
from workbench.carbon import J_PER_KWH
from workbench.scenarios import FIELD_LABELS

#: Files the window routes to this panel (dropped, or opened with File > Open).
LOG_FILTER = "Training logs (*.log *.txt *.out *.err);;All files (*)"
ENERGY_FILTER = "Energy logs: CodeCarbon, nvidia-smi, power samples (*.csv *.txt *.log);;All files (*)"
_DASH = "–"
_HEADER_CHARS = 26
#: Entries of the charts' keys to the line styles and markers.
KEY_WAITED = "waited on data"
KEY_LOGGED = "MFU as logged"
KEY_RECOMPUTED = "MFU recomputed with the plan"
MAX_STEADY_LINES = 3
FORMAT_NAMES = {"codecarbon": "CodeCarbon", "nvidia-smi": "nvidia-smi", "power-samples": "power samples"}


def _run_color(theme: th.Theme, index: int) -> QColor:
    return theme.series_color(index)


def _swatch(color: QColor, size: int = 12) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(color)
    return QIcon(pixmap)


def _short(name: str, chars: int = _HEADER_CHARS) -> str:
    return name if len(name) <= chars else name[: chars - 1] + "…"


def _number(x: float) -> str:
    """3 significant digits, never in exponent form for everyday sizes."""
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _duration(seconds: float | None) -> str:
    return units.format_quantity(seconds, "s") if seconds else "unknown time"


# -- the plan-vs-actual table --------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One quantity: the plan's value and each column's measured one, in SI units (or text),
    the unit ("s", "W", "%", "tokens/s", "kWh", "days", "g" ...), and how to compare them."""

    quantity: str
    plan: float | str | None
    measured: tuple[float | str | None, ...]
    unit: str = ""
    tooltip: str = ""
    compare: str = "relative"  # "relative": (+9.6%); "share": of the gap; "": none
    signed: bool = False  # a difference: "+0.66"
    section: bool = False
    notes: tuple[str, ...] = ()  # per measured column, for its tooltip


def _scale(row: Row) -> tuple[float, str, bool]:
    """(divide by, unit shown, count suffixes in the cells) for the numbers of ``row``."""
    numbers = [x for x in (row.plan, *row.measured) if isinstance(x, (int, float)) and not isinstance(x, bool)]
    ref = abs(numbers[0]) if numbers else 0.0
    unit = row.unit
    if unit == "%":
        return 0.01, "%", False
    if unit in ("tokens/s", "tokens/J", "kWh", "days", "") or not numbers:
        return 1.0, unit, unit in ("tokens/s", "")
    if unit == "W" and ref < 1e4:  # 668 W beside 1275 W, not 0.668 kW
        return 1.0, "W", False
    if unit == "kg":  # CO2e: g, kg or t
        prefix, factor = units.best_prefix(ref * 1000.0, "g")
        return factor / 1000.0, units.unit_label("g", prefix), False
    prefix, factor = units.best_prefix(ref, unit)
    return factor, units.unit_label(unit, prefix), False


def _cell_text(value: float | str | None, factor: float, counts: bool, signed: bool) -> str:
    if value is None:
        return _DASH
    if isinstance(value, str):
        return value
    if counts:
        text = units.format_quantity(float(value), "")
    else:
        text = _number(float(value) / factor)
    return ("+" + text) if signed and float(value) > 0 else text


class ComparisonTable(ResultsTable):
    """Quantity | Plan | one column per measured log | Unit. A measured cell holds the value and
    its difference from the plan ("7.55 (+9.6%)"). Section rows span the table.

    :meth:`rows` gives the table as (quantity, value, unit) rows, one per plan and measured
    value, which is what an export puts above its numbers."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("comparisonTable")
        self.setAccessibleName("Plan against actual")
        self._rows: list[Row] = []
        self._columns: list[str] = ["Measured"]
        self._flat: list[tuple[str, str, str]] = []
        self._display: list[tuple[str, ...]] = []
        self.set_columns(["Measured"], [None])

    def set_columns(self, names: Sequence[str], colors: Sequence[QColor | None]) -> None:
        names = list(names) or ["Measured"]
        headers = ["Quantity", "Plan", *(_short(n) for n in names), "Unit"]
        self._columns = names
        if self.columnCount() != len(headers):
            self.setColumnCount(len(headers))
        self.setHorizontalHeaderLabels(headers)
        header = self.horizontalHeader()
        last = len(headers) - 1
        for col in range(len(headers)):
            mode = QHeaderView.ResizeMode.Stretch if col == last else QHeaderView.ResizeMode.ResizeToContents
            header.setSectionResizeMode(col, mode)
            item = self.horizontalHeaderItem(col)
            if col == 1:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if 2 <= col < last:  # the colour swatch, then the file's name (Qt draws the icon on the left)
                item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                full = names[col - 2]
                item.setToolTip(plain.tooltip(full))
                color = colors[col - 2] if col - 2 < len(colors) else None
                item.setIcon(_swatch(color) if color is not None else QIcon())

    def set_rows(self, rows: Sequence[Row]) -> None:  # type: ignore[override]
        self._rows = list(rows)
        n_measured = len(self._columns)
        width = n_measured + 3
        self.clearSpans()
        self.setRowCount(len(self._rows))
        self._flat = []
        self._display = []
        bold = QFont(self.font())
        bold.setBold(True)
        for r, row in enumerate(self._rows):
            if row.section:
                self._put(r, 0, row.quantity, row.tooltip, font=bold)
                for c in range(1, width):
                    self._put(r, c, "", "")
                self.setSpan(r, 0, 1, width)
                self._display.append((row.quantity,) + ("",) * (width - 1))
                continue
            factor, unit, counts = _scale(row)
            signed = row.signed
            plan_text = _cell_text(row.plan, factor, counts, signed)
            cells = [row.quantity, plan_text]
            self._flat.append((f"{row.quantity}: plan", plan_text if plan_text != _DASH else "", unit))
            for i in range(n_measured):
                value = row.measured[i] if i < len(row.measured) else None
                text = _cell_text(value, factor, counts, signed)
                flat_value = text
                extra = ""
                if isinstance(value, (int, float)) and isinstance(row.plan, (int, float)):
                    if row.compare == "relative" and row.plan:
                        extra = f"{float(value) / float(row.plan) - 1.0:+.1%}"
                if row.compare == "share" and isinstance(value, (int, float)) and r > 0:
                    total = self._gap_total(r, i)
                    if total:
                        extra = f"{float(value) / total:.0%} of the gap"
                if extra:
                    text = f"{text} ({extra})"
                cells.append(text)
                column = self._columns[i]
                if value is not None and not (isinstance(value, str) and not value):
                    self._flat.append((f"{row.quantity}: {column}", flat_value, unit))
                    if extra and row.compare == "relative":
                        self._flat.append((f"{row.quantity}: {column} against the plan", extra.rstrip("%"), "%"))
            cells.append(unit)
            for c, text in enumerate(cells):
                tip = row.tooltip
                if 2 <= c < width - 1 and c - 2 < len(row.notes) and row.notes[c - 2]:
                    tip = f"{tip}\n\n{row.notes[c - 2]}" if tip else row.notes[c - 2]
                self._put(r, c, text, tip, right=1 <= c < width - 1)
            self._display.append(tuple(cells))
        self._fit_height()

    def _gap_total(self, r: int, i: int) -> float | None:
        """The gap a "share" row is part of: the nearest row above that is not a share row."""
        for row in reversed(self._rows[:r]):
            if row.compare != "share":
                value = row.measured[i] if i < len(row.measured) else None
                return float(value) if isinstance(value, (int, float)) and value else None
        return None

    def _put(self, r: int, c: int, text: str, tip: str, *, right: bool = False, font: QFont | None = None) -> None:
        item = QTableWidgetItem(text)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        if tip:
            item.setToolTip(plain.tooltip(tip))
        if right:
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if font is not None:
            item.setFont(font)
        self.setItem(r, c, item)

    def _before_read(self) -> None:
        hook = getattr(self, "before_read", None)  # the panel draws what it put off while hidden
        if callable(hook):
            hook()

    def rows(self) -> list[tuple[str, str, str]]:
        """(quantity, value, unit) per plan and measured value (exports put these first)."""
        self._before_read()
        return list(self._flat)

    def table_rows(self) -> list[tuple[str, ...]]:
        """The rows as displayed: quantity, plan, each measured column, unit."""
        self._before_read()
        return list(self._display)

    def copy_selection(self) -> None:
        selected = sorted({index.row() for index in self.selectedIndexes()}) or range(self.rowCount())
        QGuiApplication.clipboard().setText("\n".join("\t".join(self._display[r]) for r in selected))

    def _content_width(self) -> int:
        header = self.horizontalHeader()
        return sum(max(self.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in range(self.columnCount())) + 8


# -- the panel ------------------------------------------------------------------------------------
class MeasuredPanel(PanelBase):
    """Plan vs actual: training logs and a measured energy log against the run plan."""

    kind = "measured"
    title = "Plan vs actual"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        self._shown: MeasuredAnalysis | None = None  # the analysis drawn last
        self._comparison: list[tuple[str, ms.MeasuredScenario]] = []
        # the compared scenarios' logs against the analysis drawn: (analysis, comparison list, logs)
        self._compared: tuple[MeasuredAnalysis, list, list[tuple[str, ms.RunAnalysis]]] | None = None
        self._adopt_note = ""
        self._extents: tuple[list[float], list[float], list[float]] = ([], [], [])  # steps, rates, MFUs drawn
        self._to_read: list[tuple[str, str, str | None]] = []  # long files waiting to be read
        self._reader: tuple[object, str] | None = None  # (token, name) of the long file being read
        super().__init__(scenario if scenario is not None else ms.MeasuredScenario(), parent,
                         undo_stack=undo_stack)
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # messages name files: data, not markup
        self.action_override.setToolTip("Compare with the plan saved in this scenario instead of the window's "
                                        "run plan")
        self._use_comparison_table()
        self._build_form()
        self._build_charts()
        self.setAcceptDrops(True)
        if hasattr(catalog, "changed"):
            catalog.changed.connect(self._on_catalog_changed)
        self.refresh()

    def _use_comparison_table(self) -> None:
        """Put the plan-vs-actual table where the results table sits, under the charts."""
        from ui.panel import ChartOverResults

        previous = self.center  # holds the chart area and the plain results table
        self.results = ComparisonTable()
        self.results.before_read = self._drawn
        center = ChartOverResults(self.results)
        center.setObjectName("centerSplitter")
        center.setChildrenCollapsible(False)
        center.addWidget(self.chart_area)
        center.addWidget(self.results)
        center.setStretchFactor(0, 3)
        center.setStretchFactor(1, 2)
        self.splitter.replaceWidget(self.splitter.indexOf(previous), center)
        previous.setParent(None)
        previous.deleteLater()
        self.center = center

    # -- form ----------------------------------------------------------------------------------
    def _build_form(self) -> None:
        self.add_section("Measurements")
        buttons = QWidget(self.form_widget)
        row = QVBoxLayout(buttons)  # one above the other: side by side they widen the form on a projector
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self.open_log_button = QPushButton("Open training log…", buttons)
        self.open_log_button.setObjectName("openLogButton")
        self.open_log_button.setToolTip("Read a training job's console log (Megatron-LM, NeMo, DeepSpeed, torchtitan, "
                                        "nanoGPT, llm.c, Composer ...) and compare its steps with the plan. "
                                        "You can also drop log files on the window.")
        self.open_log_button.clicked.connect(self.open_log_dialog)
        self.open_energy_button = QPushButton("Open energy log…", buttons)
        self.open_energy_button.setObjectName("openEnergyButton")
        self.open_energy_button.setToolTip("Read CodeCarbon's emissions.csv, an nvidia-smi power query or timestamped "
                                           "power samples and compare them with the plan's energy")
        self.open_energy_button.clicked.connect(self.open_energy_dialog)
        row.addWidget(self.open_log_button)
        row.addWidget(self.open_energy_button)
        self.form.addRow(buttons)
        self.reading_label = QLabel(self.form_widget)
        self.reading_label.setObjectName("readingLabel")
        self.reading_label.setTextFormat(Qt.TextFormat.PlainText)  # a file's name is data, not markup
        self.reading_label.setWordWrap(True)
        self.reading_label.setVisible(False)
        self.form.addRow(self.reading_label)

        self.run_list = QListWidget(self.form_widget)
        self.run_list.setObjectName("runList")
        self.run_list.setAccessibleName("Logs compared")
        self.run_list.setIconSize(QSize(12, 12))
        self.run_list.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # long names: the tooltip has them whole
        self.run_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.run_list.setMaximumHeight(120)
        self.run_list.currentRowChanged.connect(lambda _row: self._sync_buttons())
        self.form.addRow(self.run_list)
        remove_row = QWidget(self.form_widget)
        row = QHBoxLayout(remove_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.remove_button = QPushButton("Remove", remove_row)
        self.remove_button.setObjectName("removeLogButton")
        self.remove_button.setToolTip("Forget the selected log (undoable)")
        self.remove_button.clicked.connect(self.remove_selected)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        self.form.addRow(remove_row)

        self.add_section("Steady state")
        self.auto_warmup = QCheckBox("Skip the first 10% of each log", self.form_widget)
        self.auto_warmup.setObjectName("autoWarmup")
        self.auto_warmup.setToolTip("Medians are taken over the steps after the warm-up (compilation, the first "
                                    "batches, the loss spike): automatically the first 10% of the steps read, or "
                                    "every step up to the number you give")
        self.auto_warmup.toggled.connect(self._on_auto_warmup)
        self.form.addRow(self.auto_warmup)
        self.warmup_field = IntField(self.form_widget, label=FIELD_LABELS["warmup_steps"], minimum=0,
                                     description="Steps numbered up to this one are warm-up: not in the medians")
        self.warmup_field.setObjectName("field.warmup_steps")
        self.warmup_field.valueEdited.connect(lambda value: self._set_warmup(int(value)))
        self.form.addRow("Last warm-up step", self.warmup_field)

        self.add_section("Into the plan")
        self.adopt_throughput_button = QPushButton("Adopt measured throughput", self.form_widget)
        self.adopt_throughput_button.setObjectName("adoptThroughputButton")
        self.adopt_throughput_button.setToolTip(
            "Make the selected log's steady throughput the run plan's (one undo step): the plan's step, days, "
            "energy, CO2e and cost, in every panel, become the measured run's, its breakdown showing how far the "
            "model is off. Undo, or 'Use the model again' in the Run plan panel, goes back to the prediction.")
        self.adopt_throughput_button.clicked.connect(self.adopt_measured_throughput)
        self.form.addRow(self.adopt_throughput_button)

        self.add_section("Notes")
        self.notes_label = QLabel(self.form_widget)
        self.notes_label.setObjectName("notesLabel")
        self.notes_label.setTextFormat(Qt.TextFormat.PlainText)
        self.notes_label.setWordWrap(True)
        self.notes_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.form.addRow(self.notes_label)
        self.add_section("Lines not read")
        self.skipped_text = QPlainTextEdit(self.form_widget)
        self.skipped_text.setObjectName("skippedLines")
        self.skipped_text.setAccessibleName("Lines not read")
        self.skipped_text.setReadOnly(True)
        self.skipped_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.skipped_text.setMinimumHeight(90)
        self.skipped_text.setMaximumHeight(200)
        self.form.addRow(self.skipped_text)

    def presentation_widgets(self) -> list[QWidget]:
        return [*super().presentation_widgets(), self.charts_hint]

    def _build_charts(self) -> None:
        self.charts = QWidget(self.chart_area)
        self.charts.setObjectName("measuredCharts")
        column = QVBoxLayout(self.charts)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        self.rate_chart = Chart(title="Throughput per step", x_label="Step", x_unit="count",
                                y_label="Per GPU", y_unit="tokens/s")
        self.mfu_chart = Chart(title="MFU per step", x_label="Step", x_unit="count", y_label="MFU", y_unit="%")
        for chart in (self.rate_chart, self.mfu_chart):
            chart.axis("x").enableAutoSIPrefix(False)
            chart.axis("y").enableAutoSIPrefix(False)
        self.mfu_chart.setXLink(self.rate_chart)
        for chart in (self.rate_chart, self.mfu_chart):
            chart.getPlotItem().getViewBox().sigResized.connect(self._apply_ranges)
        self.rate_chart.enable_hover(formatter=lambda x, y: f"step {x:,.0f}\n{units.format_quantity(y, '')} "
                                                            "tokens/s per GPU")
        self.mfu_chart.enable_hover(formatter=lambda x, y: f"step {x:,.0f}\nMFU {y:.3g}%")
        column.addWidget(self.rate_chart, 1)
        column.addWidget(self.mfu_chart, 1)
        self.charts_hint = QLabel("Open a training log (or drop one on the window) to compare its steps with the "
                                  "run plan; add an energy log for the energy.", self.chart_area)
        self.charts_hint.setObjectName("chartsHint")
        self.charts_hint.setTextFormat(Qt.TextFormat.PlainText)
        self.charts_hint.setWordWrap(True)
        self.charts_hint.setContentsMargins(12, 6, 12, 6)
        self.chart_layout.addWidget(self.charts_hint)
        self.add_chart(self.charts)

    def chart_for_export(self) -> QWidget | None:
        """Both charts (throughput over MFU) export together, as shown."""
        return self.charts

    def _drawn(self) -> None:
        """Draw now what a panel hidden behind another tab put off, before its numbers are read."""
        self.ensure_drawn()
        try:
            current = self.analysis()
        except (ValueError, ArithmeticError):
            return  # the last refresh said why in the status line
        if current is not self._shown:
            self._force_draw = True
            try:
                self.refresh()
            finally:
                self._force_draw = False

    # -- the plan ------------------------------------------------------------------------------
    def plan_followed(self) -> None:
        self.refresh()

    def plan_note_text(self) -> str:
        if self.override_context() and not self._override_note:
            return "Local override: the logs are compared with the plan saved in this scenario, not the run plan."
        return super().plan_note_text()

    def _on_catalog_changed(self) -> None:
        if self.follows_plan():
            return  # the document follows the plan again on a preset change, and this panel with it
        self.refresh()  # the plan's device may be the one that changed

    # -- files -----------------------------------------------------------------------------------
    def open_log_dialog(self) -> bool:
        path = dialogs.ask_open_path(self, "Open training log", LOG_FILTER)
        return self.load_file(path, expect="run") if path else False

    def open_energy_dialog(self) -> bool:
        path = dialogs.ask_open_path(self, "Open energy log", ENERGY_FILTER)
        return self.load_file(path, expect="energy") if path else False

    def load_file(self, path: str | Path, expect: str | None = None) -> bool:
        """Read a training log (``expect="run"``), an energy log (``"energy"``) or whichever the
        file is (None) into the scenario as one undo step. A file that cannot be used leaves a
        message and changes nothing. A long one is read on a thread (:meth:`load_text`): True
        then says it is being read, and what it turns out to be comes when the reading ends."""
        path = Path(path)
        name = path.name
        try:
            size = path.stat().st_size
            if size > ms.MAX_LOG_BYTES:
                raise ms.MeasurementError("text", ms.too_large_message(size))
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            self.show_status(f"Could not read {name}: {exc.strerror or exc}. Nothing was changed.")
            return False
        except ms.MeasurementError as exc:
            self.show_status(f"{name} {_reason(exc)}. Nothing was changed.")
            return False
        return self.load_text(name, text, expect)

    def load_text(self, name: str, text: str, expect: str | None = None) -> bool:
        """As :meth:`load_file`, for text already read (``name`` names it in the legend).

        A text of :data:`READ_IN_BACKGROUND_CHARS` or more is read on a thread of its own (a
        20 MB log takes seconds): the window stays usable, the form says what is being read,
        and the log is taken when the reading ends (True here means it was accepted for
        reading). Several such files are read one after the other, in the order given."""
        if len(text) >= READ_IN_BACKGROUND_CHARS:
            self._to_read.append((name, text, expect))
            self._read_next()
            self._show_reading()  # the files waiting, counted
            return True
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            result = read_measurement_text(name, text, expect)
        finally:
            QGuiApplication.restoreOverrideCursor()
        return self._take(name, result)

    def _take(self, name: str, result: ms.RunLog | ms.EnergyRecord | str) -> bool:
        """Put what was read into the scenario (one undo step), or say why it cannot be used."""
        if isinstance(result, str):
            self.show_status(result)
            return False
        s = self.scenario()
        try:
            if isinstance(result, ms.RunLog):
                new = s.with_run(result)
                label = f"Open training log {new.runs[-1].name}"
            else:
                new = s.with_changes(energy=result)
                label = f"Open energy log {result.name}"
            ms.check_size(new)
        except InputError as exc:
            self.show_status(f"{name}: {_reason(exc)}. Nothing was changed.")
            return False
        applied = self._push(new, label)
        if applied and isinstance(result, ms.RunLog):
            self.run_list.setCurrentRow(len(new.runs) - 1)
        return applied

    # -- a long file read on a thread of its own --------------------------------------------------
    def reading(self) -> list[str]:
        """The names of the files being read or waiting to be, in order."""
        return ([self._reader[1]] if self._reader is not None else []) + [name for name, _t, _e in self._to_read]

    def _read_next(self) -> None:
        if self._reader is not None or not self._to_read:
            return
        name, text, expect = self._to_read.pop(0)
        self._reader = (_reading_relay().start(self, name, text, expect), name)

    def _read_done(self, token: object, result) -> None:
        if self._reader is None or token is not self._reader[0]:
            return  # forgotten (another project was opened meanwhile)
        name = self._reader[1]
        self._reader = None
        self._take(name, result)
        self._read_next()
        self._show_reading()

    def _show_reading(self) -> None:
        names = self.reading()
        if names:
            more = f" (then {len(names) - 1} more)" if len(names) > 1 else ""
            self.reading_label.setText(f"Reading {names[0]}{more}… The rest of the window can be used meanwhile.")
        self.reading_label.setVisible(bool(names))

    def drop_pending_work(self) -> None:
        """Forget the files being read: they were for the project being closed."""
        self._to_read.clear()
        self._reader = None  # its result, when it comes, has a token no longer ours (_read_done)
        self._show_reading()

    def load_files(self, paths: Sequence[str | Path]) -> int:
        """Read several files (a drop); returns how many were taken (a long one: accepted for
        reading, see :meth:`load_text`)."""
        return sum(1 for p in paths if self.load_file(p))

    def _push(self, new: ms.MeasuredScenario, text: str) -> bool:
        from ui.commands import push_scenario_edit

        if new == self.scenario():
            return False
        self.clear_error()
        push_scenario_edit(self._stack, self, new, text, mergeable=False)
        return True

    def remove_selected(self) -> bool:
        row = self.run_list.currentRow()
        s = self.scenario()
        if 0 <= row < len(s.runs):
            name = s.runs[row].name
            return self._push(s.without_run(name), f"Remove training log {name}")
        if row == len(s.runs) and s.energy is not None:
            return self._push(s.with_changes(energy=None), f"Remove energy log {s.energy.name}")
        return False

    def remove_run(self, name: str) -> bool:
        return self._push(self.scenario().without_run(name), f"Remove training log {name}")

    def _on_auto_warmup(self, on: bool) -> None:
        if self._syncing:
            return
        if on:
            self._push(self.scenario().with_changes(warmup_steps=None), "Skip the first 10% as warm-up")
            return
        first = next((a.first_steady_step for a in self.analyses() if a.first_steady_step is not None), None)
        self._set_warmup(max(0, (first or 1) - 1))

    def _set_warmup(self, steps: int) -> None:
        try:
            new = self.scenario().with_changes(warmup_steps=steps)
        except InputError as exc:
            self.warmup_field.show_error(_reason(exc), self.scenario().warmup_steps)
            return
        self._push(new, f"Warm-up: steps up to {steps:,}")

    # -- drops on the panel itself (the window routes drops anywhere on it here too) -----------
    @staticmethod
    def _paths(mime) -> list[Path]:
        if mime is None or not mime.hasUrls():
            return []
        return [Path(u.toLocalFile()) for u in mime.urls()
                if u.isLocalFile() and Path(u.toLocalFile()).suffix.lower() in MEASURED_SUFFIXES]

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt naming
        if self._paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 - Qt naming
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt naming
        paths = self._paths(event.mimeData())
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        QTimer.singleShot(0, lambda: self.load_files(paths))  # not inside the drag loop

    # -- adopting the measured throughput ----------------------------------------------------------
    def _selected_row(self) -> int | None:
        """The index of the log selected in the list (the first when the energy log or nothing is)."""
        self._drawn()
        n = len(self._shown.runs) if self._shown is not None else 0
        row = self.run_list.currentRow()
        if 0 <= row < n:
            return row
        return 0 if n else None

    def selected_analysis(self) -> ms.RunAnalysis | None:
        row = self._selected_row()
        return self._shown.runs[row] if row is not None and self._shown is not None else None

    def adopt_measured_throughput(self) -> bool:
        """Make the selected log's steady throughput the window's run plan's measured throughput
        (one undo step). Returns whether the plan changed."""
        row = self._selected_row()
        analysis = self._shown.runs[row] if row is not None and self._shown is not None else None
        if analysis is None or not analysis.median_tokens_per_s_per_gpu:
            self.show_status("No measured throughput to adopt: open a training log whose steady steps give tokens/s.")
            return False
        view = self.plan_view()
        if self.context_sink is None or view is None:
            self.show_status("Adopting the measured throughput puts it into the window's run plan: use this panel "
                             "in the main window.")
            return False
        plan = view.plan
        per_gpu = float(analysis.median_tokens_per_s_per_gpu)
        job = self._shown.adopt_tokens_per_s[row]  # the log's rate per GPU on the plan's GPUs
        try:
            changed = bool(self.context_sink({"measured_tokens_per_s": job, "measured_source": analysis.name,
                                              "_text": f"Adopt measured throughput from {analysis.name}"}))
        except ValueError as exc:
            self.show_status(f"The measured throughput cannot go into the run plan: {exc}")
            return False
        rate = units.format_quantity(per_gpu, "")
        scaled = (f", scaled from the log's {analysis.n_gpus:,} GPUs" if analysis.n_gpus_from_log
                  and analysis.n_gpus != plan.n_gpus else "")
        self._adopt_note = (f"The run plan uses {rate} tokens/s per GPU measured in {analysis.name} "
                            f"({units.format_quantity(job, '')} tokens/s on its {plan.n_gpus:,} GPUs{scaled}): "
                            "undo, or 'Use the model again' in the Run plan panel, goes back to the prediction.")
        self.refresh()
        return changed

    # -- comparison (Compare in the toolbar: another saved scenario's logs on the charts) ----------
    def set_comparison(self, items: list[tuple[str, ms.MeasuredScenario]]) -> None:
        self._comparison = [(str(name), s) for name, s in items if isinstance(s, ms.MeasuredScenario)]
        self.refresh()

    def clear_comparison(self) -> None:
        self._comparison = []
        self.refresh()

    def comparison(self) -> list[tuple[str, ms.MeasuredScenario]]:
        return list(self._comparison)

    # -- drawing ------------------------------------------------------------------------------------
    def analyses(self) -> list[ms.RunAnalysis]:
        """The logs on show, compared with the plan (in the order of the scenario)."""
        self._drawn()
        return list(self._shown.runs) if self._shown is not None else []

    def energy_analysis(self) -> ms.EnergyAnalysis | None:
        self._drawn()
        return self._shown.energy if self._shown is not None else None

    def blocking_problem(self) -> str:
        s = self.scenario()
        if s is not None and not s.runs and s.energy is None:
            return "no training log or energy log is loaded: open one first"
        return super().blocking_problem()

    def refresh(self) -> None:
        a: MeasuredAnalysis = self.analysis()
        self._shown = a  # first: what the form's signals read back is this analysis
        s: ms.MeasuredScenario = self.scenario()
        self._sync_form(s, a)
        self._draw(a)
        self._fill_table(a)
        self._fill_notes(a)

    def _sync_form(self, s: ms.MeasuredScenario, analysis: MeasuredAnalysis) -> None:
        theme = th.current_theme()
        self._syncing = True
        try:
            current = self.run_list.currentRow()
            self.run_list.clear()
            for i, (run, a) in enumerate(zip(s.runs, analysis.runs, strict=True)):
                item = QListWidgetItem(_swatch(_run_color(theme, i)), f"{run.name} · {run.framework}, {len(run)} steps")
                item.setToolTip(plain.tooltip(f"{run.name}\n{a.steady_rule}"))
                self.run_list.addItem(item)
            if s.energy is not None:
                e = s.energy
                gpus = f"{e.n_gpus} GPUs" if e.n_gpus else "GPUs not given"
                item = QListWidgetItem(f"Energy: {e.name} · {FORMAT_NAMES.get(e.format, e.format)}, {gpus}, "
                                       f"{_duration(e.duration_s)}")
                item.setToolTip(plain.tooltip(e.name))
                self.run_list.addItem(item)
            if self.run_list.count():
                self.run_list.setCurrentRow(min(max(current, 0), self.run_list.count() - 1))
            self.auto_warmup.setChecked(s.warmup_steps is None)
            self.warmup_field.setEnabled(s.warmup_steps is not None)
            if s.warmup_steps is not None:
                self.warmup_field.setValue(s.warmup_steps)
            else:
                first = next((a.first_steady_step for a in analysis.runs if a.first_steady_step is not None), None)
                self.warmup_field.setValue(max(0, first - 1) if first else 0)
        finally:
            self._syncing = False
        self._sync_buttons()

    def _sync_buttons(self) -> None:
        s = self.scenario()
        self.remove_button.setEnabled(self.run_list.currentRow() >= 0 and self.run_list.count() > 0)
        self.open_log_button.setEnabled(len(s.runs) < ms.MAX_RUNS)
        analysis = self.selected_analysis()
        self.adopt_throughput_button.setEnabled(bool(analysis and analysis.median_tokens_per_s_per_gpu))

    def _compared_logs(self, analysis: MeasuredAnalysis) -> list[tuple[str, ms.RunAnalysis]]:
        """The compared scenarios' logs against this panel's plan: the same analysis, on each
        scenario with this plan, its prediction handed over (kept until the plan or the list changes)."""
        kept = self._compared
        if kept is not None and kept[0] is analysis and kept[1] is self._comparison:
            return kept[2]
        from workbench.analyses.measured import analyse
        from workbench.workspace import PlanView

        view = PlanView(plan=analysis.plan, prediction=analysis.prediction, problem=analysis.problem)
        catalog = self.presets()
        out = []
        for label, other in self._comparison:
            theirs = analyse(other.with_changes(plan=analysis.plan, energy=None), view, catalog)
            out.extend((f"{label}: {a.name}", a) for a in theirs.runs)
        self._compared = (analysis, self._comparison, out)
        return out

    def _series(self, analysis: MeasuredAnalysis) -> list[tuple[str, ms.RunAnalysis, str]]:
        """(name, analysis, style) of every log drawn: this scenario's, then compared ones (dashed)."""
        return ([(a.name, a, "solid") for a in analysis.runs]
                + [(name, a, "dash") for name, a in self._compared_logs(analysis)])

    def _draw(self, analysis: MeasuredAnalysis) -> None:
        theme = self.rate_chart.theme()
        prediction = analysis.prediction
        drawn = self._series(analysis)
        self.charts_hint.setVisible(not drawn)
        steps_seen: list[float] = []
        rates: list[float] = []
        mfus: list[float] = []
        any_wait = any(a.waited_steps for _n, a, _s in drawn)
        with self.rate_chart.replacing_series(), self.mfu_chart.replacing_series():
            for i, (name, a, style) in enumerate(drawn):
                color = theme.tone(_run_color(theme, i))
                x = np.asarray(a.steps, dtype=float)
                steps_seen.extend(x.tolist())
                per_gpu = [np.nan if t is None else t for t in a.tokens_per_s_per_gpu]
                if any(t is not None for t in a.tokens_per_s_per_gpu):
                    # the legend names the files here; the MFU chart below uses the same colours
                    self.rate_chart.add_series(name, x, per_gpu, color=color, style=style)
                    rates.extend(t for t in a.tokens_per_s_per_gpu if t is not None)
                    waited = [q if w else np.nan for q, w in zip(per_gpu, a.waited, strict=True)]
                    if not all(np.isnan(w) for w in waited):
                        # markers only: the NaN between them leaves no line to draw
                        self.rate_chart.add_series(f"{name}: waited on data", x, waited, color=color,
                                                   symbol="t", width=0.01, in_legend=False)
                logged = [np.nan if m is None else 100.0 * m for m in a.mfu_logged]
                recomputed = [np.nan if m is None else 100.0 * m for m in a.mfu_recomputed]
                if any(m is not None for m in a.mfu_logged):
                    self.mfu_chart.add_series(f"{name}: logged", x, logged, color=color, style=style,
                                              in_legend=False)
                    mfus.extend(m for m in logged if not np.isnan(m))
                if any(m is not None for m in a.mfu_recomputed):
                    self.mfu_chart.add_series(f"{name}: recomputed with the plan", x, recomputed, color=color,
                                              style="dot" if style == "solid" else "dash",
                                              width=th.BASE_LINE_WIDTH * 0.9, in_legend=False)
                    mfus.extend(m for m in recomputed if not np.isnan(m))
            if drawn:
                # a key to the line styles, in ink: one entry each, whatever the number of logs
                if any_wait:
                    self.rate_chart.add_series(KEY_WAITED, [], [], color=theme.ink, symbol="t", width=0.01)
                self.mfu_chart.add_series(KEY_LOGGED, [], [], color=theme.ink)
                self.mfu_chart.add_series(KEY_RECOMPUTED, [], [], color=theme.ink, style="dot",
                                          width=th.BASE_LINE_WIDTH * 0.9)
        for chart in (self.rate_chart, self.mfu_chart):
            chart.clear_reference_lines()
        if prediction is not None:
            plan_rate = prediction.tokens_per_s_per_gpu
            # short labels: they start near the right end of the line (the numbers are in the table)
            self.rate_chart.add_reference_line(plan_rate, vertical=False, color=theme.ink, label="plan")
            self.mfu_chart.add_reference_line(100.0 * prediction.mfu, vertical=False, color=theme.ink, label="plan")
            rates.append(plan_rate)
            mfus.append(100.0 * prediction.mfu)
        # where each log's steady state starts (the medians are taken from there on)
        starts = sorted({a.first_steady_step for _n, a, _s in drawn
                         if a.first_steady_step is not None and a.first_steady_step != a.steps[0]})
        for step in starts[:MAX_STEADY_LINES]:
            for chart in (self.rate_chart, self.mfu_chart):
                chart.add_reference_line(float(step), color=theme.muted)
        self._set_ranges(steps_seen, rates, mfus)

    def _set_ranges(self, steps: list[float], rates: list[float], mfus: list[float]) -> None:
        self._extents = (steps, rates, mfus)
        self._apply_ranges()

    def _apply_ranges(self, *_args) -> None:
        """The steps across, each chart from 0 to its data plus room for its legend (top left):
        the legend's height in pixels, so presentation fonts and a short chart keep it clear."""
        steps, rates, mfus = self._extents
        lo, hi = (min(steps), max(steps)) if steps else (1.0, 100.0)  # no log: whole steps, not 0.1 ... 0.9
        margin = 0.02 * (hi - lo) if hi > lo else 1.0
        self.rate_chart.set_log_range(lo - margin, hi + margin)
        for chart, values in ((self.rate_chart, rates), (self.mfu_chart, mfus)):
            if not values:
                continue
            top = max(values)
            entries = sum(1 for series in chart.series() if series.in_legend) if chart.legend_visible() else 0
            line_px = th.BASE_TICK_FONT_PT * th.scale_factor(chart.presentation()) * 96.0 / 72.0 * 1.45
            legend_px = entries * line_px + 20.0 if entries else line_px  # the plan's label needs a line too
            legend = getattr(chart.getPlotItem(), "legend", None)  # pyqtgraph's public legend attribute
            if entries and legend is not None and legend.boundingRect().height() > 0:
                legend_px = legend.boundingRect().height() + 12.0 + 10.0  # its offset from the top, a gap
            height = chart.getPlotItem().getViewBox().height()
            if height > 1.5 * legend_px:
                share = min(3.0, height / (height - legend_px))
            else:  # not laid out yet, or squeezed: a fixed share
                share = 1.15 + 0.12 * entries if height <= 0 else 3.0
            chart.set_log_range(ymin=0.0, ymax=top * share if top > 0 else 1.0)

    # -- the table ---------------------------------------------------------------------------------------
    def _fill_table(self, analysis: MeasuredAnalysis) -> None:
        theme = th.current_theme()
        plan, p = analysis.plan, analysis.prediction
        analyses = analysis.runs
        names = [a.name for a in analyses] or ["Measured"]
        colors = [theme.tone(_run_color(theme, i)) for i in range(len(analyses))] or [None]
        self.results.set_columns(names, colors)
        n = len(names)

        def col(get) -> tuple:
            return tuple(get(a) for a in analyses) if analyses else (None,)

        def why(get) -> tuple[str, ...]:
            return tuple(get(a) for a in analyses) if analyses else ("",)

        rows = [
            Row("Step time (median)", p.step_time_s if p else None,
                col(lambda a: a.median_step_time_s), "s",
                "Seconds per optimizer step: the plan's prediction, and the median over each log's steady steps",
                notes=why(lambda a: "" if a.comparable_steps else "Its steps do not hold the plan's tokens: "
                                                                  "compare tokens/s instead.")),
            Row("Throughput, whole job (median)", p.tokens_per_s if p else None,
                col(lambda a: a.median_tokens_per_s), "tokens/s",
                "Tokens per second of the whole job", notes=why(lambda a: a.steady_rule)),
            Row("Throughput per GPU (median)", p.tokens_per_s_per_gpu if p else None,
                col(lambda a: a.median_tokens_per_s_per_gpu), "tokens/s",
                "Tokens per second of one GPU (whole job / GPUs)",
                notes=why(lambda a: f"{a.n_gpus:,} GPUs, from the " + ("log" if a.n_gpus_from_log else "plan"))),
            Row("MFU, recomputed with the plan", p.mfu if p else None, col(lambda a: a.median_mfu_recomputed), "%",
                "Model FLOPs utilisation from the measured tokens/s with the plan's model (6N + 12·L·d·T FLOPs per "
                "token) and the plan's peak (its GPU at its precision, dense)"),
            Row("MFU as logged", p.mfu if p else None, col(lambda a: a.median_mfu_logged), "%",
                "The MFU the log prints (or its TFLOP/s over the plan's dense peak), counted the framework's way",
                notes=why(lambda a: a.mfu_note)),
            Row("Data wait per step", p.breakdown["data_loading"] if p else None,
                col(lambda a: a.data_wait_s), "s",
                "Time per step the GPUs wait for input: the plan's data-loading term, and the mean over the "
                "steady steps of what the log reports", notes=why(lambda a: a.data_wait_basis)),
            Row("Steps that waited on data", None,
                tuple(f"{waited} of {a.steady_count}" if waited is not None else None
                      for a, waited in zip(analyses, analysis.steady_waited, strict=True)) or (None,),
                "steady steps",
                "Steps the log flags as waiting for data, or whose printed wait is more than "
                f"{ms.WAIT_MARK_SHARE:.0%} of the step (triangles on the chart)", compare=""),
            Row("Step-time gap to the plan", None, col(lambda a: a.gap.total_s if a.gap else None), "s",
                "Measured median step time minus the predicted one", compare="", signed=True),
            Row("  of which data loading", None,
                col(lambda a: a.gap.data_loading_s if a.gap else None), "s",
                "Measured data wait per step minus the plan's data-loading term", compare="share", signed=True),
            Row("  of which compute, communication, other", None, col(lambda a: a.gap.rest_s if a.gap else None), "s",
                "What the log cannot split: compute, communication, the optimizer, stalls", compare="share",
                signed=True),
            Row("Training time at this rate", p.train_days if p else None,
                col(lambda a: a.train_time_s / 86400.0 if a.train_time_s else None), "days",
                f"The plan's {units.format_quantity(plan.train_tokens, '')} tokens on its {plan.n_gpus:,} GPUs at "
                "the measured rate per GPU"),
            Row("Steady state", "",
                col(lambda a: f"steps {a.first_steady_step:,}–{a.steps[-1]:,}" if a.first_steady_step is not None
                    else "none"), "", "The steps the medians are taken over",
                compare="", notes=why(lambda a: a.steady_rule)),
        ]
        e = analysis.energy
        if e is not None:
            gpus = f"{e.n_gpus} GPUs" + ("" if e.n_gpus_from_file else " (assumed)")
            rows.append(Row(f"Energy: {e.name} ({FORMAT_NAMES.get(e.format, e.format)}, {gpus}, {_duration(e.duration_s)}), the plan for the "
                            "same time and GPUs", None, (), section=True,
                            tooltip="The measured energy against the plan's for the same duration and GPU count"))
            basis = "GPU + host" if e.basis == "node" else "GPU boards"

            def first(value) -> tuple:
                return (value,) + (None,) * (n - 1)

            def to_kwh(joules: float | None) -> float | None:
                return joules / J_PER_KWH if joules is not None else None

            rows += [
                Row(f"Energy ({basis})", to_kwh(e.planned_energy_j), first(to_kwh(e.measured_energy_j)), "kWh",
                    f"Energy over the measured {_duration(e.duration_s)} on {e.n_gpus} GPUs"),
                Row(f"Average power per GPU ({basis})", e.planned_power_w, first(e.measured_power_w), "W",
                    "Average draw per GPU; the plan's counts "
                    + ("the GPU and its share of the host" if e.basis == "node" else "the GPU board")),
            ]
            if e.measured_gpu_power_w is not None:
                rows.append(Row("GPU board power per GPU", e.planned_gpu_power_w, first(e.measured_gpu_power_w), "W",
                                "CodeCarbon's GPU part per GPU, against the plan's GPU power"))
            rows += [
                Row(f"Tokens per joule ({basis})", e.planned_tokens_per_j, first(e.measured_tokens_per_j), "tokens/J",
                    "Tokens per second per GPU / average power per GPU (the measured throughput is the first log's)"),
                Row("CO2e, the plan's grid and PUE", e.planned_co2e_kg, first(e.measured_co2e_kg), "kg",
                    f"Energy x PUE {plan.pue:g} x {plan.grid_g_per_kwh:g} gCO2e/kWh (the plan's)"),
            ]
            if e.reported_co2e_kg is not None:
                rows.append(Row("CO2e as CodeCarbon reported", None, first(e.reported_co2e_kg), "kg",
                                "CodeCarbon's own figure: " + e.reported_basis, compare=""))
        self.results.set_rows(rows)

    def _fill_notes(self, analysis: MeasuredAnalysis) -> None:
        lines: list[str] = []
        if analysis.prediction is None:
            lines.append("The run plan cannot be predicted" + (f": {analysis.problem}" if analysis.problem else "")
                         + ". Only the measured numbers are shown.")
        for a in analysis.runs:
            parts = [f"{a.name}: {a.steady_rule}."]
            if a.mfu_note:
                parts.append(a.mfu_note)
            parts.extend(a.notes)
            lines.append(" ".join(parts))
        if analysis.energy is not None and analysis.energy.notes:
            lines.append(f"{analysis.energy.name}: " + " ".join(analysis.energy.notes))
        view = self.plan_view()
        if self._adopt_note and view is not None and view.plan.measured_tokens_per_s is not None:
            lines.append(self._adopt_note)
        self.notes_label.setText("\n\n".join(lines) if lines else "No log loaded yet.")
        self.skipped_text.setPlainText(self.skipped_lines_text())

    def skipped_lines_text(self) -> str:
        """Every line not read, "name line N: reason (text)", log by log (plain text)."""
        s = self.scenario()
        out: list[str] = []
        for run in s.runs:
            for line, reason, text in run.notes:
                out.append(f"{run.name} line {line}: {reason}" + (f"  ({text})" if text else ""))
            more = run.lines_skipped + run.lines_unreadable - len(run.notes)
            if more > 0:
                out.append(f"{run.name}: {more:,} more lines not listed")
        if s.energy is not None:
            for line, reason, text in s.energy.skipped:
                out.append(f"{s.energy.name} line {line}: {reason}" + (f"  ({text})" if text else ""))
            more = s.energy.lines_skipped - len(s.energy.skipped)
            if more > 0:
                out.append(f"{s.energy.name}: {more:,} more lines not listed")
        return "\n".join(out) if out else "Every line was read."

    # -- reading the numbers back (tests, scripts) ----------------------------------------------------
    def table_row(self, quantity: str) -> tuple[str, ...]:
        """The displayed cells of the row ``quantity`` (quantity, plan, measured..., unit)."""
        for row in self.results.table_rows():
            if row[0] == quantity or row[0].strip() == quantity:
                return row
        raise KeyError(quantity)

    def notes_text(self) -> str:
        self._drawn()
        return self.notes_label.text()

    # -- export ----------------------------------------------------------------------------------------
    def csv_columns(self) -> list[tuple[str, Sequence]] | None:
        """The per-step series of every log (long format, one row per step), headers naming units;
        the export puts the plan-vs-actual table above them."""
        self._drawn()
        return (self._shown.csv_columns() if self._shown is not None else None) or None

    def export_to(self, fmt: str, path, *, width_px: int = 1920, background="white"):
        if fmt == "csv" and not self.scenario().runs:
            from ui import export

            rows = self.results.rows()
            if not rows:
                raise ValueError(f"{self.title}: nothing to export as CSV: open a training log first")
            return export.export_csv(path, [("quantity", [r[0] for r in rows]), ("value", [r[1] for r in rows]),
                                            ("unit", [r[2] for r in rows])])
        return super().export_to(fmt, path, width_px=width_px, background=background)

    def explanation(self) -> str:
        return (
            "<h3>Plan vs actual</h3>"
            "<p><b>Logs.</b> Training logs of Megatron-LM, NeMo, DeepSpeed, torchtitan, nanoGPT, llm.c, "
            "modded-nanogpt and Composer are read step by step; lines that are not steps are listed with "
            "their line numbers. Several logs (two runs, two clusters) share the charts, each in its own "
            "colour.</p>"
            "<p><b>Steady state.</b> The medians skip the warm-up: the first 10% of the steps read, or the "
            "steps up to the number you set.</p>"
            "<p><b>MFU.</b> The measured tokens/s per GPU &times; (6N + 12&middot;L&middot;d&middot;T) "
            "FLOPs per token of the plan's model / the plan's dense peak, beside the MFU the log reports. "
            "Frameworks count differently: 6N only, recomputed work (HFU), or a fixed peak; a note says "
            "which when the ratio shows it.</p>"
            "<p><b>The gap.</b> Measured minus predicted step time; the part the log explains (its data "
            "waits against the plan's data-loading term) and the rest.</p>"
            "<p><b>Energy.</b> The measured energy and power per GPU against the plan's for the same "
            "duration and GPUs (GPU + host for CodeCarbon, GPU boards for nvidia-smi), tokens per joule, and "
            "CO2e = energy &times; the plan's PUE &times; its grid intensity, beside CodeCarbon's own.</p>"
            "<p><b>Adopt measured throughput</b> makes the log's steady tokens/s per GPU, on the plan's GPUs, "
            "the run plan's throughput: its step, days, energy, CO2e and cost are then the measured run's in "
            "every panel, and its step chart shows what the model leaves unexplained. Undo, or <i>Use the model "
            "again</i> in the Run plan panel, returns to the prediction.</p>"
        )


#: texts this long (characters) are read on a thread of their own (about a quarter of a second)
READ_IN_BACKGROUND_CHARS = 1_000_000


def read_measurement_text(name: str, text: str, expect: str | None) -> ms.RunLog | ms.EnergyRecord | str:
    """A training log (``expect="run"``), an energy log (``"energy"``) or whichever ``text`` is
    (None), read; or the message that says why it cannot be used. No Qt: it runs on the
    reading thread as well."""
    readers = {"run": ms.run_from_text, "energy": ms.energy_from_text, None: ms.read_measurement}
    what = {"run": "a training log this app reads", "energy": "an energy log this app reads",
            None: "a training log or an energy log"}[expect]
    try:
        return readers[expect](name, text)
    except ms.MeasurementError as exc:
        reason = _reason(exc)
        if reason.startswith("is "):  # too large
            return f"{name} {reason}. Nothing was changed."
        return f"{name} is not {what} ({reason}). {READS} Nothing was changed."
    except (trainlog.TrainLogError, energy.EnergyLogError, InputError) as exc:
        return f"{name} is not {what} ({_reason(exc)}). {READS} Nothing was changed."


class _ReadingRelay(QObject):
    """Carries each finished reading back to the window's thread (a queued signal). One for
    the whole program, never deleted: a reading thread must not emit on an object the window
    may delete meanwhile (a panel closed, another project opened), which Qt would then use
    after it was freed. A panel that is gone gets nothing; one that has dropped its reading
    ignores it (its token is no longer the panel's)."""

    done = Signal(object, object)  # (token, what read_measurement_text gave)

    def __init__(self) -> None:
        super().__init__()
        self._waiting: dict[object, MeasuredPanel] = {}
        self.done.connect(self._deliver)

    def start(self, panel: MeasuredPanel, name: str, text: str, expect: str | None) -> object:
        """Read on a thread of its own; returns the reading's token."""
        token = object()
        self._waiting[token] = panel
        threading.Thread(target=self._read, args=(token, name, text, expect), name=f"read {name}",
                         daemon=True).start()
        return token

    def _read(self, token: object, name: str, text: str, expect: str | None) -> None:  # the reading thread
        try:
            result = read_measurement_text(name, text, expect)
        except Exception as exc:  # noqa: BLE001 - a reader's bug must not leave "Reading…" up for good
            result = f"{name} could not be read ({type(exc).__name__}: {exc}). Nothing was changed."
        self.done.emit(token, result)

    def _deliver(self, token: object, result) -> None:
        panel = self._waiting.pop(token, None)
        if panel is not None and shiboken6.isValid(panel):
            panel._read_done(token, result)


_relay: _ReadingRelay | None = None


def _reading_relay() -> _ReadingRelay:
    global _relay
    if _relay is None:
        _relay = _ReadingRelay()  # made on the window's thread, the first time a long file is read
    return _relay


#: What the readers take, in a status line (their own messages list every format in full).
READS = ("It reads logs of Megatron-LM, NeMo, DeepSpeed, torchtitan, nanoGPT, llm.c, modded-nanogpt, Composer "
         "and this app's seed line, and CodeCarbon, nvidia-smi and timestamped power samples for energy.")


def _reason(exc: Exception) -> str:
    """The reader's reason, without its list of formats (the status line says them once)."""
    text = str(exc)
    for prefix in ("text: ", "runs: "):
        text = text.removeprefix(prefix)
    for cut in ("; understood formats:", "; expected a CodeCarbon"):
        while cut in text:
            head, tail = text.split(cut, 1)
            rest = tail.split("; not ", 1)
            text = head + ("; not " + rest[1] if len(rest) == 2 else "")
    return text


__all__ = ["MeasuredPanel", "ComparisonTable", "MEASURED_SUFFIXES", "OPEN_FILTER_ENTRY", "LOG_FILTER",
           "ENERGY_FILTER"]
