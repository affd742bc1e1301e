"""The Power panel's "Energy and time" tab: Zeus's cost of the whole run against the power cap,
eta x energy + (1 - eta) x max power x time, with eta on a slider and its optimum marked.

The panel hands over the curve its analysis holds (``workbench.analyses.power``, a
``workbench.footprint.ZeusCurve``); this module lays out the slider and draws."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget

from ui import theme as th
from ui.charts import Chart
from ui.panels.power_draw import Curve, LineSet, SeriesSet, move_operating_point
from workbench import units

if TYPE_CHECKING:  # the values drawn; the panel hands them over
    from workbench import footprint

#: slider positions per unit of eta (0.01 steps)
ETA_STEPS = 100

COST = "Zeus cost"
ENERGY_TERM = "η × energy"
TIME_TERM = "(1 − η) × max power × time"
BEST = "least cost"


def _joules(value: float) -> str:
    return units.format_quantity(value, "J")


class TradeoffView(QWidget):
    """η slider over the cost chart. ``etaEdited(eta)`` when the user moves the slider."""

    etaEdited = Signal(float)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("powerTradeoff")
        self._syncing = False
        self._curve: footprint.ZeusCurve | None = None
        self.eta_slider = QSlider(Qt.Orientation.Horizontal, self)
        self.eta_slider.setObjectName("etaSlider")
        self.eta_slider.setRange(0, ETA_STEPS)
        self.eta_slider.setSingleStep(1)
        self.eta_slider.setPageStep(10)
        self.eta_slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.eta_slider.setTickInterval(10)
        self.eta_slider.setAccessibleName("Energy weight eta")
        self.eta_slider.setToolTip("η weighs energy against time: 1 counts only energy (the deepest cap that "
                                   "pays), 0 only time (no cap). Zeus uses 0.5. A whole drag is one undo step.")
        self.eta_slider.valueChanged.connect(self._on_slider)
        self.eta_label = QLabel(self)
        self.eta_label.setObjectName("etaLabel")
        self.eta_label.setTextFormat(Qt.TextFormat.PlainText)
        self.eta_label.setMinimumWidth(self.eta_label.fontMetrics().horizontalAdvance("η = 0.00 ") + 8)
        time_end = QLabel("time only", self)
        energy_end = QLabel("energy only", self)
        row = QHBoxLayout()
        row.setContentsMargins(8, 4, 8, 0)
        row.setSpacing(12)
        row.addWidget(QLabel("Energy weight", self))
        row.addWidget(self.eta_label)
        row.addWidget(time_end)
        row.addWidget(self.eta_slider, 1)
        row.addWidget(energy_end)
        self.chart = Chart(title="Energy against time: Zeus's cost of the run", x_label="Power cap", x_unit="W",
                           y_label="Cost", y_unit="J")
        self.chart.axis("x").enableAutoSIPrefix(False)
        self.chart.enable_hover(formatter=lambda x, y: f"cap {x:.0f} W\n{_joules(y)}")
        self._series = SeriesSet(self.chart)
        self._lines = LineSet(self.chart)
        #: called before the drawn curve is read (a panel that draws this tab only when shown)
        self.before_read = None
        self.summary = QLabel(self)
        self.summary.setObjectName("tradeoffSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.summary.setContentsMargins(8, 2, 8, 4)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addLayout(row)
        column.addWidget(self.chart, 1)
        column.addWidget(self.summary)

    # -- input ------------------------------------------------------------------------------
    def set_eta(self, eta: float) -> None:
        self._syncing = True
        try:
            self.eta_slider.setValue(round(eta * ETA_STEPS))
        finally:
            self._syncing = False
        self.eta_label.setText(f"η = {eta:.2f}")
        self.eta_label.setMinimumWidth(self.eta_label.fontMetrics().horizontalAdvance("η = 0.00") + 6)

    def _on_slider(self, position: int) -> None:
        eta = position / ETA_STEPS
        self.eta_label.setText(f"η = {eta:.2f}")
        if not self._syncing:
            self.etaEdited.emit(eta)

    # -- drawing ----------------------------------------------------------------------------
    def clear(self, message: str = "") -> None:
        self._curve = None
        self._series.clear()
        self._lines.clear()
        self.chart.clear_operating_point()
        self.summary.setText(message)

    def show_curve(self, curve: footprint.ZeusCurve, cap_w: float, cap_text: str, current_cost_j: float) -> None:
        """Draw ``curve`` with the current cap (``cap_w``, labelled ``cap_text``) marked."""
        self._curve = curve
        chart = self.chart
        self._series.draw([
            Curve(COST, curve.cap_w, curve.cost_j, {"color": th.BLUE}),
            Curve(ENERGY_TERM, curve.cap_w, curve.energy_term_j, {"color": th.GREEN, "style": "dash"}),
            Curve(TIME_TERM, curve.cap_w, curve.time_term_j, {"color": th.ORANGE, "style": "dot"}),
            # the optimum is named in the legend: a label on its line would meet the legend or the edge
            Curve(f"{BEST} {curve.best_cap_w:.0f} W", [curve.best_cap_w], [curve.best_cost_j],
                  {"color": th.GREEN, "symbol": "d", "width": 0.01}),
        ])
        self._lines.draw([(curve.best_cap_w, "", th.GREEN)])
        lo, hi = float(curve.cap_w.min()), float(curve.cap_w.max())
        span = hi - lo or 50.0
        ys = [float(curve.cost_j.max()), float(curve.energy_term_j.max()), float(curve.time_term_j.max())]
        top = max(ys) or 1.0
        chart.set_log_range(lo - 0.04 * span, hi + 0.04 * span, 0.0, top * 1.45)  # room above for the legend
        # the point moves once the new range is set: its label is placed (when the chart
        # settles) against the new range, never the old one
        move_operating_point(chart, cap_w, current_cost_j, cap_text)
        extra = current_cost_j - curve.best_cost_j
        self.summary.setText(
            f"Least cost at {curve.best_cap_w:.0f} W: {_joules(curve.best_cost_j)} "
            f"(GPU energy {units.format_quantity(float(curve.energy_j[curve.best]), 'J')}, "
            f"time {units.format_quantity(float(curve.time_s[curve.best]), 's')}). "
            f"The current cap costs {_joules(current_cost_j)}"
            + (f", {extra / curve.best_cost_j:.1%} more." if extra > 1e-9 * curve.best_cost_j else ", the least.")
            + f" Max power = GPUs × TDP = {units.format_quantity(curve.max_power_w, 'W')}.")

    def curve(self) -> footprint.ZeusCurve | None:
        if self.before_read is not None:
            self.before_read()
        return self._curve


__all__ = ["TradeoffView", "ETA_STEPS", "COST", "ENERGY_TERM", "TIME_TERM", "BEST"]
