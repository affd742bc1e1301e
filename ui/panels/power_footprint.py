"""The Power panel's "Footprint" tab: the run's energy by part and CO2e by source (operational
beside embodied), and the whole summary per run as a table that exports to CSV.

The panel takes the footprint from its analysis (``workbench.analyses.power``) and hands bars
and rows here; this module lays them out and draws."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from ui.panel import ResultRow, ResultsTable
from ui.panels.power_bars import Bar, HBarChart


class FootprintView(QWidget):
    """Two bar charts (energy by part, CO2e by source) beside the summary table."""

    exportRequested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("powerFootprint")
        self.energy_chart = HBarChart(title="Energy by part", x_label="Facility energy", x_unit="MWh")
        self.co2_chart = HBarChart(title="CO2e by source", x_label="CO2e", x_unit="t")
        charts = QWidget(self)
        column = QVBoxLayout(charts)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.energy_chart, 1)
        column.addWidget(self.co2_chart, 1)
        self.table = ResultsTable()
        self.table.setObjectName("footprintSummary")
        self.export_button = QPushButton("Export summary CSV…", self)
        self.export_button.setObjectName("exportSummaryButton")
        self.export_button.setToolTip("Write the run's kWh, CO2e and cost with the plan's numbers to a CSV file "
                                      "(quantity, value, unit)")
        self.export_button.clicked.connect(self.exportRequested)
        self.note = QLabel(self)
        self.note.setObjectName("footprintNote")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        side = QWidget(self)
        right = QVBoxLayout(side)
        right.setContentsMargins(6, 4, 6, 4)
        right.setSpacing(4)
        top = QHBoxLayout()
        top.addWidget(QLabel("The whole run, per run", side))
        top.addStretch(1)
        top.addWidget(self.export_button)
        right.addLayout(top)
        right.addWidget(self.table, 1)
        right.addWidget(self.note)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("footprintSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(charts)
        self.splitter.addWidget(side)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.splitter)

    def clear(self, message: str = "") -> None:
        self.energy_chart.clear_bars()
        self.co2_chart.clear_bars()
        self.table.set_rows([])
        self.note.setText(message)

    def show_footprint(self, energy: Sequence[Bar], energy_unit: str, co2: Sequence[Bar], co2_unit: str,
             rows: Sequence[ResultRow], note: str) -> None:
        self.energy_chart.set_axis_labels(x_unit=energy_unit)
        self.energy_chart.set_bars(energy)
        self.co2_chart.set_axis_labels(x_unit=co2_unit)
        self.co2_chart.set_bars(co2)
        self.table.set_rows(rows)
        self.note.setText(note)


__all__ = ["FootprintView"]
