"""The Power panel's "Where and when" tab: the same run's CO2e on every grid region of the
presets (sorted, each with its data year and source, this run's region marked), and a
24-hour intensity profile the user types or imports with the best start time for a run of
the plan's length.

The panel gets the regions and the best start from ``workbench.analyses.power.where`` and hands
rows here; this module lays them out and draws."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui import theme as th
from ui.charts import Chart
from ui.panels.power_bars import Bar, HBarChart
from ui.panels.power_draw import Curve, LineSet, SeriesSet
from workbench import units

if TYPE_CHECKING:  # the values drawn; the panel hands them over
    from workbench import footprint

INTENSITY = "grid intensity"
WINDOW = "run average from this start"
BEST = "best start"


@dataclass(frozen=True)
class RegionRow:
    """One grid region as the comparison shows it (CO2e in kg)."""

    key: str
    name: str
    g_per_kwh: float
    year: int | None
    source: str
    co2e_kg: float
    current: bool


def clock(seconds: float) -> str:
    """Seconds after midnight as "HH:MM"."""
    minutes = int(round(seconds / 60.0)) % (24 * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _mass(kg: float, tonnes: bool) -> str:
    return f"{kg / 1000.0:.3g} t" if tonnes else f"{kg:.3g} kg"


class WhereView(QWidget):
    """Regions on the left, the time-of-day profile on the right."""

    #: the text typed in the profile field (24 values), after Enter or leaving the field
    profileTyped = Signal(str)
    importRequested = Signal()
    clearRequested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("powerWhere")
        self._rows: list[RegionRow] = []
        self._tonnes = True
        self._best: footprint.BestStart | None = None
        #: called before the drawn rows or best start are read (a panel that draws this tab
        #: only when it is shown)
        self.before_read = None

        # -- regions --
        self.region_chart = HBarChart(title="CO2e by region", x_label="CO2e", x_unit="t")
        self.region_chart.enable_hover(formatter=self._region_hover)
        self.sources = QTableWidget(0, 4, self)
        self.sources.setObjectName("regionSources")
        self.sources.setHorizontalHeaderLabels(["Region", "gCO2e/kWh", "Data year", "Source"])
        self.sources.verticalHeader().setVisible(False)
        self.sources.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.sources.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.sources.setWordWrap(False)
        header = self.sources.horizontalHeader()
        for column in range(3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.sources.setMinimumHeight(120)
        self.sources.verticalHeader().setDefaultSectionSize(int(self.sources.fontMetrics().height() * 1.5))
        # the chart asks for the height its rows need; on a short screen or a projector it scrolls
        self.region_scroll = QScrollArea(self)
        self.region_scroll.setObjectName("regionScroll")
        self.region_scroll.setWidgetResizable(True)
        self.region_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.region_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.region_scroll.setWidget(self.region_chart)
        regions = QWidget(self)
        left = QVBoxLayout(regions)
        left.setContentsMargins(0, 0, 0, 0)
        left.setSpacing(2)
        left.addWidget(self.region_scroll, 1)

        # -- time of day --
        self.profile_edit = QLineEdit(self)
        self.profile_edit.setObjectName("profileEdit")
        self.profile_edit.setPlaceholderText("24 hourly values in gCO2e/kWh, midnight first: 420, 410, ...")
        self.profile_edit.setToolTip("Type 24 hourly grid intensities (gCO2e/kWh) from 00:00 to 23:00, separated "
                                     "by commas or spaces, then press Enter; or import a CSV of timestamp and "
                                     "intensity (hours as written in the file, several days averaged).")
        self.profile_edit.setAccessibleName("Hourly grid intensity profile")
        self.profile_edit.returnPressed.connect(self._typed)
        self.profile_edit.editingFinished.connect(self._typed)
        self.import_button = QPushButton("Import CSV…", self)
        self.import_button.setObjectName("importProfileButton")
        self.import_button.setToolTip("Read a CSV export with a timestamp column and a gCO2e/kWh column "
                                      "(hourly or finer); each hour of the day becomes its mean")
        self.import_button.clicked.connect(self.importRequested)
        self.clear_button = QPushButton("Clear", self)
        self.clear_button.setObjectName("clearProfileButton")
        self.clear_button.setToolTip("Remove the profile")
        self.clear_button.clicked.connect(self.clearRequested)
        self.profile_message = QLabel(self)
        self.profile_message.setObjectName("profileMessage")
        self.profile_message.setTextFormat(Qt.TextFormat.PlainText)
        self.profile_message.setWordWrap(True)
        self.profile_message.setVisible(False)
        self.profile_chart = Chart(title="When: grid intensity by hour of day", x_label="Start time",
                                   y_label="Intensity", y_unit="gCO2e/kWh")
        self.profile_chart.axis("x").enableAutoSIPrefix(False)
        self.profile_chart.axis("y").enableAutoSIPrefix(False)
        self.profile_chart.axis("x").setTicks([[(h, f"{h:02d}:00") for h in range(0, 25, 3)], []])
        self.profile_chart.enable_hover(formatter=lambda x, y: f"{clock(x * 3600.0)}\n{y:.0f} gCO2e/kWh")
        self._profile_series = SeriesSet(self.profile_chart)
        self._profile_lines = LineSet(self.profile_chart)
        self.best_label = QLabel(self)
        self.best_label.setObjectName("bestStartLabel")
        self.best_label.setTextFormat(Qt.TextFormat.PlainText)
        self.best_label.setWordWrap(True)
        when = QWidget(self)
        right = QVBoxLayout(when)
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(3)
        inputs = QHBoxLayout()
        inputs.setContentsMargins(6, 4, 6, 0)
        inputs.addWidget(self.profile_edit, 1)
        inputs.addWidget(self.import_button)
        inputs.addWidget(self.clear_button)
        right.addLayout(inputs)
        self.profile_message.setContentsMargins(6, 0, 6, 0)
        right.addWidget(self.profile_message)
        right.addWidget(self.profile_chart, 1)
        self.best_label.setContentsMargins(6, 0, 6, 4)
        right.addWidget(self.best_label)
        self.region_note = QLabel("Grid regions: the same energy and cost on each, only the intensity changes. "
                                  "Data year in each label; the source here (and on hover).", when)
        self.region_note.setWordWrap(True)
        self.region_note.setContentsMargins(6, 4, 6, 0)
        right.addWidget(self.region_note)
        right.addWidget(self.sources)
        self.sources.setMaximumHeight(int(self.sources.verticalHeader().defaultSectionSize() * 6.5))

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("whereSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(regions)
        self.splitter.addWidget(when)
        self.splitter.setStretchFactor(0, 11)
        self.splitter.setStretchFactor(1, 9)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.splitter)

    # -- regions ---------------------------------------------------------------------------
    def show_regions(self, rows: Sequence[RegionRow]) -> None:
        """Bars lowest CO2e first (top), the current region bold in the operating point's colour."""
        self._rows = list(rows)
        self._tonnes = max((r.co2e_kg for r in rows), default=0.0) >= 1000.0
        unit = "t" if self._tonnes else "kg"
        self.region_chart.set_axis_labels(x_unit=unit)
        scale = 1000.0 if self._tonnes else 1.0
        bars = []
        for r in self._rows:
            year = f" ({r.year})" if r.year is not None else ""
            bars.append(Bar(label=f"{r.name}{year}", value=r.co2e_kg / scale,
                            color=th.OPERATING_POINT if r.current else th.SKY,
                            text=_mass(r.co2e_kg, self._tonnes) + ("  ◀" if r.current else ""),
                            bold=r.current))
        self.region_chart.set_bars(bars)
        table = self.sources
        if table.rowCount() != len(self._rows):
            table.setRowCount(len(self._rows))
        for i, r in enumerate(self._rows):
            cells = [r.name, f"{r.g_per_kwh:g}", str(r.year) if r.year is not None else "not given",
                     r.source]
            for column, text in enumerate(cells):
                tip = r.source if column == 3 else f"{r.name}: {r.g_per_kwh:g} gCO2e/kWh"
                item = table.item(i, column)
                if item is None:  # cells keep their items: a new run changes few of them
                    item = QTableWidgetItem(text)
                    if column in (1, 2):
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    table.setItem(i, column, item)
                elif item.text() != text:
                    item.setText(text)
                if item.toolTip() != tip:
                    item.setToolTip(tip)
                font = item.font()
                if font.bold() != r.current:
                    font.setBold(r.current)
                    item.setFont(font)
        current = next((i for i, r in enumerate(self._rows) if r.current), None)
        if current is not None and table.currentRow() != current:
            table.selectRow(current)

    def _drawn(self) -> None:
        if self.before_read is not None:
            self.before_read()

    def region_rows(self) -> list[RegionRow]:
        self._drawn()
        return list(self._rows)

    def _region_hover(self, x: float, y: float) -> str:
        i = int(round(-y))
        if not 0 <= i < len(self._rows):
            return ""
        r = self._rows[i]
        source = r.source if len(r.source) <= 90 else r.source[:88] + "…"
        year = f", data {r.year}" if r.year is not None else ""
        return f"{r.name}: {r.g_per_kwh:g} gCO2e/kWh{year}\n{_mass(r.co2e_kg, self._tonnes)} CO2e\n{source}"

    # -- time of day -----------------------------------------------------------------------
    def _typed(self) -> None:
        text = self.profile_edit.text()
        if text != getattr(self, "_shown_profile_text", None):
            self.profileTyped.emit(text)

    def set_profile_text(self, text: str) -> None:
        self._shown_profile_text = text
        if self.profile_edit.text() != text:
            self.profile_edit.setText(text)
            self.profile_edit.setCursorPosition(0)  # midnight first in view

    def show_profile_error(self, message: str) -> None:
        self.profile_message.setText(message)
        self.profile_message.setStyleSheet(f"color: {th.current_theme().error};")
        self.profile_message.setVisible(bool(message))

    def show_profile(self, values: Sequence[float], best: footprint.BestStart | None, summary: str) -> None:
        """The hourly profile as steps, the run's average intensity from each start hour, the
        best start marked; ``summary`` under the chart."""
        self._best = best
        chart = self.profile_chart
        self.best_label.setText(summary)
        if not values:
            self._profile_series.draw([])
            self._profile_lines.draw([])
            chart.set_log_range(0.0, 24.0, 0.0, 500.0)
            return
        p = np.asarray(values, dtype=float)
        hours = np.arange(25, dtype=float)
        xs = np.repeat(hours, 2)[1:-1]
        ys = np.repeat(p, 2)
        curves = [Curve(INTENSITY, xs, ys, {"color": th.BLUE})]
        lines = []
        top = float(p.max())
        if best is not None:
            starts = np.append(best.hourly_starts_s, 24 * 3600.0) / 3600.0
            window = np.append(best.hourly_window_g_per_kwh, best.hourly_window_g_per_kwh[0])
            curves.append(Curve(WINDOW, starts, window, {"color": th.ORANGE, "style": "dash"}))
            # the best start is named in the legend: a label on its line would meet the legend
            curves.append(Curve(f"{BEST} {clock(best.start_s)}", [best.start_s / 3600.0], [best.best_g_per_kwh],
                                {"color": th.GREEN, "symbol": "d", "width": 0.01}))
            lines.append((best.start_s / 3600.0, "", th.GREEN))
            top = max(top, float(window.max()))
        self._profile_series.draw(curves)
        self._profile_lines.draw(lines)
        chart.set_log_range(-0.3, 24.3, 0.0, (top or 1.0) * 1.45)

    def best(self) -> footprint.BestStart | None:
        self._drawn()
        return self._best


def best_start_summary(best: footprint.BestStart, profile_name: str = "") -> str:
    """One paragraph under the profile chart: when to start and what it saves."""
    hours = best.duration_s / 3600.0
    length = units.format_quantity(best.duration_s, "s")
    wrap = " (longer than a day: it wraps around the profile)" if hours > 24 else ""
    source = f" Profile: {profile_name}." if profile_name else ""
    tonnes = max(best.mean_co2e_kg, best.worst_co2e_kg) >= 1000.0
    return (f"A run of {length}{wrap} started at {clock(best.start_s)} meets {best.best_g_per_kwh:.0f} gCO2e/kWh "
            f"on average: {_mass(best.best_co2e_kg, tonnes)} CO2e, "
            f"{_mass(best.saving_vs_mean_kg, tonnes)} ({best.saving_fraction:.0%}) less than at the profile's daily "
            f"mean of {best.daily_mean_g_per_kwh:.0f} g/kWh and {_mass(best.saving_vs_worst_kg, tonnes)} less "
            f"than starting at {clock(best.worst_start_s)}, the worst time.{source}")


__all__ = ["WhereView", "RegionRow", "best_start_summary", "clock", "INTENSITY", "WINDOW", "BEST"]
