"""All-reduce calculator: ring against tree in the alpha-beta model, bus bandwidth as
nccl-tests reports it, and measured nccl-tests logs drawn over the model.

Every number comes from the panel's analysis (:mod:`workbench.analyses.allreduce`, kept by
the document once per change); this module only lays them out. Two tabs of charts:

- against message size: time (ring, tree, the crossover size, the current size as the
  operating point) and bus bandwidth (with the link bandwidth as a reference);
- against rank count (2 to 100,000 at the chosen size: the latency term taking over) and
  against link bandwidth (the preset link classes marked).

Several logs can be loaded at once (two nodes, two dates): each is drawn in its own colour and
marker, named in the legend by its file (its host or date when files share a name), against
the model of its own collective and rank count on the link its devices should reach (across
nodes the hierarchical ring: NVLink inside, NICs between). The list under the charts gives
each log's collective, ranks, device, link-health verdict and fit; the selected one's details
are in the form, its fitted line on the time chart, its numbers in the results table.
Everything read from a log is shown as plain text: it is data from a file.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import (
    QAction,
    QColor,
    QIcon,
    QKeySequence,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

import presets
from ui import theme as th
from ui.charts import Chart, LogUnitAxis, discard_legend, si_label
from ui.panel import PanelBase, ResultRow
from workbench import units
from workbench.analyses.allreduce import AllReduceAnalysis, LogAnalysis, analyse, read_log
from workbench.comms import MIN_POINTS_PER_REGION
from workbench.comms_sweep import RANKS_MIN, CommsSweep, MeasuredLog
from workbench.link_health import (
    DEGRADED,
    HEALTHY_RATIO,
    LARGE_MESSAGE_BYTES,
    MIN_LARGE_SIZES,
    NodeLayout,
)
from workbench.nccl import GB, SIZE_OVER_TIME
from workbench.scenarios import COLLECTIVES, MAX_JSON_CHARS, VALUE_LABELS, AllReduceScenario

#: Largest total of log text a scenario holds (the scenario, logs included, must still fit in
#: a project).
MAX_LOG_CHARS = MAX_JSON_CHARS // 2
_LOG2_10 = math.log10(2.0)

RING_COLOR = th.BLUE
TREE_COLOR = th.ORANGE


def _tone(color) -> QColor:
    """A palette colour as the current theme draws it: lifted on a dark background, and the
    palette's black as the theme's ink (never black on black)."""
    theme = th.current_theme()
    return QColor(theme.ink) if color == th.BLACK else theme.tone(color)
MEASURED_COLOR = th.MEASURED
COMPARISON_COLORS = (th.PURPLE, th.SKY, th.BLACK, th.VERMILLION)
#: One colour and one marker per loaded log (black stands for the theme's ink); the marker
#: tells them apart without colour, and the list under the charts repeats both.
LOG_STYLES = ((th.GREEN, "o"), (th.PURPLE, "s"), (th.SKY, "t"), (th.BLACK, "d"), (th.VERMILLION, "x"),
              (th.YELLOW, "+"))
#: Which link classes of the chart against link bandwidth (the analysis's LINK_CLASS_MARKS and
#: the NIC between nodes) keep their label first where labels would touch (the NIC comes after
#: NVLink 4 and PCIe Gen4; the form's own interconnect always keeps its label).
LINK_MARK_PRIORITY = ("nvlink-4", "pcie-4-x16", "nvlink-5", "nic-100g", "nic-200g", "nic-400g", "nic-800g",
                      "pcie-5-x16", "nvlink-3")

RING_TIP = ("Ring: every rank sends and receives 2(n-1)/n of the message over its link, in 2(n-1) steps: "
            "t = 2(n-1)/n · S/B + 2(n-1)·α")
TREE_TIP = ("Double binary tree: a pipelined reduce up the tree, then a broadcast down; each sends the whole "
            "message once each way and pays one latency per tree level: t = 2·S/B + 2·⌈log2 n⌉·α")
FACTOR_TIPS = {
    "all_reduce": "2(n-1)/n",
    "reduce_scatter": "(n-1)/n", "all_gather": "(n-1)/n", "all_to_all": "(n-1)/n", "scatter": "(n-1)/n",
    "gather": "(n-1)/n", "broadcast": "1", "reduce": "1", "sendrecv": "1",
}
#: Where the parser found a log's rank count (NcclResult.n_ranks_source), in words.
RANK_SOURCES = {
    "devices": "device lines",
    "nccl-info": "NCCL INFO lines",
    "command": "command line",
    "algbw": "read from the algbw",
}
#: The chart tabs: against message size; against ranks and link bandwidth.
SIZE_TAB, SCALE_TAB = 0, 1
#: The logs table's link-health column (the last: its one line gets the spare width).
HEALTH_COLUMN = 5
#: The legend entry for the dashed curves of the logs' own models.
MODEL_LEGEND = "dashed: each log's own model"
#: How many skipped lines the details list before "and N more".
SHOWN_SKIPPED = 5


def _label(collective: str | None) -> str:
    if collective is None:
        return "collective not named"
    if collective == "sendrecv":
        return "send/receive"
    return VALUE_LABELS["collective"].get(collective, collective.replace("_", "-"))


def _size_text(value: float) -> str:
    return units.format_quantity(value, "B", binary=True)


def _tip(text: str) -> str:
    """A tooltip of plain text: Qt reads a tooltip that looks like markup as rich text, and
    text from a log must never be (an ``<img src=...>`` in it would make Qt read a file)."""
    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"


class SizeAxis(LogUnitAxis):
    """A log axis for message sizes with ticks at powers of two ("32 KiB", "1 MiB", "1 GiB"),
    the sizes nccl-tests sweeps, instead of decades that read "9.54 MiB" in binary units."""

    def logTickValues(self, minVal, maxVal, size, stdTicks):  # noqa: N802, N803 - pyqtgraph naming
        lo, hi = sorted((minVal, maxVal))
        first, last = math.ceil(lo / _LOG2_10), math.floor(hi / _LOG2_10)
        if last < first:
            return super().logTickValues(minVal, maxVal, size, stdTicks)
        room = max(2, int(size / (70 * th.scale_factor())))  # about one label per 70 px (more on a projector)
        step = next((s for s in (1, 2, 5) if (last - first) / s <= room), 10)  # 10: KiB, MiB, GiB
        start = math.ceil(first / step) * step
        return [(step * _LOG2_10, [k * _LOG2_10 for k in range(start, last + 1, step)])]

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph naming
        return [si_label(2.0 ** round(v / _LOG2_10), self.unit, binary=True) for v in values]


class SizeChart(Chart):
    """A chart whose ``legend_at`` places the legend where the curves never are, with an
    optional second legend at ``side_legend_at`` for the series named in
    :meth:`set_side_legend` (the measured logs, in the chart's other empty corner). Both are
    kept through theme and presentation changes, which rebuild the legends."""

    def __init__(self, *args, legend_at: tuple[tuple[float, float], tuple[float, float], tuple[int, int]]
                 | None = None, side_legend_at=None, **kwargs):
        self._legend_at = legend_at
        self._side_at = side_legend_at
        self._side_names: tuple[str, ...] = ()
        self._side_legend: pg.LegendItem | None = None
        super().__init__(*args, **kwargs)

    def set_side_legend(self, names: Sequence[str]) -> None:
        """List the series ``names`` (drawn with ``in_legend=False``) in the second legend."""
        names = tuple(names)
        if names != self._side_names:
            self._side_names = names
            self._legend_changed()  # placed with the rest of the change, by settle()

    def side_legend_names(self) -> list[str]:
        """The names the second legend shows (for tests and a reader of the chart)."""
        self.settle()
        legend = self._side_legend
        return [label.text for _sample, label in legend.items] if legend is not None and legend.isVisible() else []

    def update_legend(self) -> None:
        super().update_legend()
        legend = self.getPlotItem().legend
        if legend is not None and self._legend_at is not None:
            item_pos, parent_pos, offset = self._legend_at
            legend.anchor(itemPos=item_pos, parentPos=parent_pos, offset=offset)
        self._update_side_legend()

    def _update_side_legend(self) -> None:
        """The second legend, kept and updated in place as the first is (its entries follow
        the logs drawn); hidden, not removed, when there is nothing to list."""
        legend = self._side_legend
        shown = [s for s in self.series() if s.name in self._side_names] if self._side_at is not None else []
        if not shown:
            if legend is not None:
                legend.setVisible(False)
            return
        if legend is None:
            legend = self._side_legend = self._new_legend()
        self._fill_legend(legend, shown)
        item_pos, parent_pos, offset = self._side_at
        legend.anchor(itemPos=item_pos, parentPos=parent_pos, offset=offset)
        legend.setVisible(True)

    def _rebuild_legend(self) -> None:
        """A theme or presentation change: both legends made again in the new style."""
        if self._side_legend is not None:
            discard_legend(self._side_legend)
            self._side_legend = None
        super()._rebuild_legend()


def _size_chart(title: str, y_label: str, y_unit: str, log_y: bool, legend_at=None, side_legend_at=None) -> Chart:
    chart = SizeChart(legend_at=legend_at, side_legend_at=side_legend_at, title=title, x_label="Message size", x_unit="B", y_label=y_label,
                      y_unit=y_unit, log_x=True, log_y=log_y, x_binary=True)
    axis = SizeAxis("bottom", "B", binary=True, unit_in_ticks=True)
    chart.getPlotItem().setAxisItems({"bottom": axis})
    axis.setLogMode(True)  # the plot is in log mode already, so it does not tell a new axis
    chart.set_log_axes(True, log_y)
    if log_y:
        chart.axis("left").unit_in_ticks = True  # "10 µs", "1 ms" rather than "10 µ"
    chart.apply_theme(chart.theme())  # style the new axis like the others
    return chart


def _log_log_chart(title: str, x_label: str, x_unit: str, legend_at=None) -> Chart:
    chart = SizeChart(legend_at=legend_at, title=title, x_label=x_label, x_unit=x_unit, y_label="Time",
                      y_unit="s", log_x=True, log_y=True)
    chart.axis("left").unit_in_ticks = True
    chart.axis("bottom").unit_in_ticks = bool(x_unit)
    chart.apply_theme(chart.theme())
    return chart


def _marker_icon(color: QColor, symbol: str, size: int = 14) -> QIcon:
    """A swatch of a log's colour in the shape of its chart marker."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    p = QPainter(pixmap)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(QPen(color, 2.5) if symbol in "+x" else Qt.PenStyle.NoPen)
    p.setBrush(color)
    m, e = 2.0, size - 2.0
    c = size / 2.0
    if symbol == "s":
        p.drawRect(int(m), int(m), int(e - m), int(e - m))
    elif symbol == "t":
        p.drawPolygon(QPolygonF([QPointF(c, m), QPointF(e, e), QPointF(m, e)]))
    elif symbol == "d":
        p.drawPolygon(QPolygonF([QPointF(c, m), QPointF(e, c), QPointF(c, e), QPointF(m, c)]))
    elif symbol == "+":
        p.drawLine(QPointF(c, m), QPointF(c, e))
        p.drawLine(QPointF(m, c), QPointF(e, c))
    elif symbol == "x":
        p.drawLine(QPointF(m, m), QPointF(e, e))
        p.drawLine(QPointF(m, e), QPointF(e, m))
    else:
        p.drawEllipse(QPointF(c, c), c - m, c - m)
    p.end()
    return QIcon(pixmap)


@dataclass(frozen=True)
class LoadedLog:
    """One log of the scenario as the panel shows it: ``entry`` what the analysis made of it
    (the parsed log, None with the reason in ``error`` when the stored text cannot be read,
    its link health and the model curve it is compared with), ``label`` its legend name
    (unique among the loaded logs), ``model_name`` its model's, and its colour and marker."""

    index: int
    label: str
    text: str
    entry: LogAnalysis
    model_name: str
    color: QColor
    symbol: str

    @property
    def name(self) -> str:
        return self.entry.name  # as stored (the file name)

    @property
    def log(self) -> MeasuredLog | None:
        return self.entry.log

    @property
    def error(self) -> str:
        return self.entry.error

    @property
    def health(self):
        return self.entry.health

    @property
    def model(self) -> CommsSweep | None:
        return self.entry.model


class AllReducePanel(PanelBase):
    """Ring against tree all-reduce cost, bus bandwidth, and measured nccl-tests logs."""

    kind = "allreduce"
    title = "All-reduce"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        self._interconnects = {ic.key: ic for ic in presets.load_interconnects()}
        self._comparison: list[tuple[str, AllReduceScenario]] = []
        #: each compared scenario's curve over this panel's sizes, kept while both are the same
        self._compared: dict[tuple, tuple[AllReduceScenario, CommsSweep | None]] = {}
        self._loaded: list[LoadedLog] = []
        self._selected = 0
        self._crossover_line = None
        self._crossover_value: float | None = None
        self._latency_from: int | None = None
        self._result_count = 0
        self._shown = False
        #: what each chart tab was last drawn from; the tab behind is drawn when it is chosen
        self._drawn_from: dict[int, tuple] = {}
        self._undrawn: set[int] = set()
        #: what the size tab's curves (everything beside the size, _beside_the_size, with the
        #: selected log and the comparison) and the logs' list were last drawn from: a new size
        #: alone moves the operating points and leaves the rest as it is
        self._size_curves: tuple | None = None
        self._listed: tuple | None = None
        super().__init__(scenario if scenario is not None else AllReduceScenario(), parent, undo_stack=undo_stack)
        # messages name files and quote lines of them: never read as markup
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self._build_form()
        self._build_charts()
        self.refresh()

    # -- building ---------------------------------------------------------------------------
    def _build_form(self) -> None:
        collective = self.add_choice("collective", [(VALUE_LABELS["collective"][c].capitalize(), c) for c in COLLECTIVES])
        collective.setToolTip("The collective operation; sizes are what nccl-tests prints in "
                              "its size column (the whole array)")
        self.add_quantity_field("size_bytes", unit="B", binary=True, minimum=0, min_inclusive=False,
                                description="Message size S: the whole buffer, as nccl-tests prints it.")
        self.add_int_field("n_ranks", minimum=2, description="Total number of ranks (GPUs) n taking part.")
        choices = [("Custom", "")] + [(ic.name, key) for key, ic in self._interconnects.items()]
        combo = self.add_choice("interconnect", choices)
        combo.setToolTip("A link preset: sets the link bandwidth (its achievable per-direction rate) and the "
                         "latency per step together")
        for i in range(combo.count()):
            ic = self._interconnects.get(combo.itemData(i))
            if ic is not None:
                combo.setItemData(i, self._interconnect_tip(ic), Qt.ItemDataRole.ToolTipRole)
        self.add_quantity_field("link_bw", unit="B/s", minimum=0, min_inclusive=False,
                                description="Link bandwidth B per direction, bytes/s (GB = 1e9 B).")
        self.add_quantity_field("alpha", unit="s", minimum=0,
                                description="Latency α of one algorithm step (a few µs on NVLink, 5-20 µs "
                                            "across nodes).")
        self.add_quantity_field("size_min", unit="B", binary=True, minimum=0, min_inclusive=False,
                                description="Left end of the size sweep on the charts.")
        self.add_quantity_field("size_max", unit="B", binary=True, minimum=0, min_inclusive=False,
                                description="Right end of the size sweep on the charts.")

        self.logs_heading = self.add_section("Measured logs")
        nics = [(ic.name.removeprefix("InfiniBand / Ethernet NIC, ") + " NIC", key)
                for key, ic in self._interconnects.items() if key.startswith("nic-")]
        nic = self.add_choice("inter_node", nics, label="Between nodes")
        nic.setToolTip("The NIC each GPU has to the other nodes (one per GPU), for logs whose ranks sit on several hosts "
                       "(an nccl-tests log does not print it): their model and link health use the "
                       "hierarchical ring, min(NVLink, ranks per node × NIC)")
        for i in range(nic.count()):
            ic = self._interconnects.get(nic.itemData(i))
            if ic is not None:
                nic.setItemData(i, self._interconnect_tip(ic), Qt.ItemDataRole.ToolTipRole)
        for box in (collective, combo, nic):  # long preset names must not widen the form
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(10)

        buttons = QWidget(self.form_widget)
        row = QHBoxLayout(buttons)
        row.setContentsMargins(0, 2, 0, 0)
        self.load_button = QPushButton("Load nccl-tests log…", buttons)
        self.load_button.setObjectName("loadLogButton")
        self.load_button.setToolTip("Read the output of an nccl-tests binary (all_reduce_perf, sendrecv_perf, ...) "
                                    f"and draw it over the model; up to {AllReduceScenario.MAX_LOGS} logs at once")
        self.load_button.clicked.connect(self.choose_log)
        self.remove_log_button = QPushButton("Remove", buttons)
        self.remove_log_button.setObjectName("removeLogButton")
        self.remove_log_button.setToolTip("Remove the log selected in the list under the charts (undoable)")
        self.remove_log_button.clicked.connect(lambda: self.remove_log())
        row.addWidget(self.load_button, 1)
        row.addWidget(self.remove_log_button)
        self.form.addRow(buttons)
        self.fit_button = QPushButton("Use fitted latency and bandwidth", self.form_widget)
        self.fit_button.setObjectName("useFitButton")
        self.fit_button.clicked.connect(self.use_fit)
        self.form.addRow(self.fit_button)
        self.log_label = QLabel(self.form_widget)
        self.log_label.setObjectName("logLabel")
        self.log_label.setWordWrap(True)
        self.log_label.setTextFormat(Qt.TextFormat.PlainText)
        self.log_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.form.addRow(self.log_label)

    def _build_charts(self) -> None:
        # times rise to the right: the top left is empty (the model's legend) and so is the
        # bottom right, under the large messages (the logs' legend)
        self.chart = _size_chart("Time per collective", "Time", "s", log_y=True,
                                 side_legend_at=((1, 1), (1, 1), (-8, -8)))
        # busbw is ~0 for small messages: the left middle of that chart is always empty
        self.busbw_chart = _size_chart("Bus bandwidth", "busbw", "B/s", log_y=False,
                                       legend_at=((0, 0.5), (0, 0.45), (6, 0)))
        self.chart.enable_hover(formatter=lambda x, y: f"size {si_label(x, 'B', binary=True)}\n"
                                                       f"time {si_label(y, 's')}")
        self.busbw_chart.enable_hover(formatter=lambda x, y: f"size {si_label(x, 'B', binary=True)}\n"
                                                             f"busbw {si_label(y, 'B/s')}")
        self.charts = self._pair(self.chart, self.busbw_chart, "chartsSplitter")
        # the curves rise to the right and the latency term climbs from the bottom left: the bottom
        # right is empty (the top left holds the measured points of small runs)
        self.ranks_chart = _log_log_chart("Time against rank count", "Ranks", "",
                                          legend_at=((1, 1), (1, 1), (-8, -8)))
        # falling lines: the bottom left is empty (the top right holds the link classes' labels)
        self.link_chart = _log_log_chart("Time against link bandwidth", "Link bandwidth", "B/s",
                                         legend_at=((0, 1), (0, 1), (8, -8)))
        self.ranks_chart.enable_hover(formatter=lambda x, y: f"{x:,.0f} ranks\ntime {si_label(y, 's')}")
        self.link_chart.enable_hover(formatter=lambda x, y: f"link {si_label(x, 'B/s')}\ntime {si_label(y, 's')}")
        link_view = self.link_chart.getPlotItem().getViewBox()
        link_view.sigResized.connect(self._thin_link_labels)
        link_view.sigXRangeChanged.connect(self._thin_link_labels)
        self.scale_charts = self._pair(self.ranks_chart, self.link_chart, "scaleChartsSplitter")
        self.chart_tabs = QTabWidget(self.chart_area)
        self.chart_tabs.setObjectName("chartTabs")
        self.chart_tabs.setDocumentMode(True)
        self.chart_tabs.addTab(self.charts, "Against message size")
        self.chart_tabs.addTab(self.scale_charts, "Against ranks and link bandwidth")
        self.chart_tabs.setTabToolTip(0, "Time and bus bandwidth over the size sweep, with the loaded logs")
        self.chart_tabs.setTabToolTip(1, "Time of one message of the chosen size against the rank count "
                                         "(the latency term takes over) and against the link bandwidth")
        self.chart_tabs.currentChanged.connect(self._tab_changed)

        self.logs_table = QTableWidget(0, 6, self.chart_area)
        self.logs_table.setObjectName("logsTable")
        self.logs_table.setAccessibleName("Measured logs")
        self.logs_table.setHorizontalHeaderLabels(["Log", "Collective", "Ranks", "Device", "Fit", "Link health"])
        self.logs_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.logs_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.logs_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.logs_table.verticalHeader().setVisible(False)
        self.logs_table.setShowGrid(False)
        self.logs_table.setWordWrap(False)
        self.logs_table.setAlternatingRowColors(True)
        header = self.logs_table.horizontalHeader()
        for col in range(5):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(HEALTH_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.logs_table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.logs_table.itemSelectionChanged.connect(self._table_selection_changed)
        remove = QAction("Remove log", self.logs_table)
        remove.setShortcuts([QKeySequence(QKeySequence.StandardKey.Delete), QKeySequence(Qt.Key.Key_Backspace)])
        remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        remove.triggered.connect(lambda: self.remove_log())
        self.logs_table.addAction(remove)
        self.logs_table.setVisible(False)
        area = QWidget(self.chart_area)
        column = QVBoxLayout(area)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addWidget(self.chart_tabs, 1)
        column.addWidget(self.logs_table, 0)
        self.add_chart(area)

    def _pair(self, left: Chart, right: Chart, name: str) -> QSplitter:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName(name)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([600, 400])
        return splitter

    @staticmethod
    def _interconnect_tip(ic) -> str:
        lines = [f"<b>{html.escape(ic.name)}</b>",
                 f"Per direction: {units.format_quantity(ic.bw_per_direction, 'B/s')} nominal"]
        if ic.achievable_fraction:
            lines.append(f"The model uses the achievable rate: {units.format_quantity(ic.achievable_bw, 'B/s')} "
                         f"({ic.achievable_fraction:.0%} of nominal)")
        lines.append(f"Latency per step: {units.format_quantity(ic.latency_s, 's')}")
        lines.append(f"Bandwidth source: {html.escape(ic.source)}")
        if ic.latency_source:
            lines.append(f"Latency source: {html.escape(ic.latency_source)}")
        if ic.note:
            lines.append(html.escape(ic.note))
        return "<br>".join(lines)

    def presentation_widgets(self) -> list[QWidget]:
        return [*super().presentation_widgets(), self.logs_table, self.chart_tabs.tabBar()]

    def set_presentation(self, enabled: bool) -> None:
        super().set_presentation(enabled)
        # the header does not always follow its hidden table's new font: it is told
        self.logs_table.horizontalHeader().setFont(self.logs_table.font())
        self.logs_table.verticalHeader().setDefaultSectionSize(int(self.logs_table.fontMetrics().height() * 1.5))
        self.refresh()  # the logs list and the results take their new heights
        self._fit_results_height()

    # -- editing ----------------------------------------------------------------------------
    def _field_edited(self, name, value) -> None:
        if self._syncing:
            return
        s = self.scenario()
        if name == "interconnect":
            edit = lambda: self.choose_interconnect(value)  # noqa: E731 - run now or inside go_local
        elif name in ("link_bw", "alpha") and s.interconnect:
            # a hand-typed link is no longer the preset: the combo says "Custom"
            edit = lambda: self.edit(**{name: value, "interconnect": ""})  # noqa: E731
        else:
            super()._field_edited(name, value)
            return
        self.edit_own(name, edit)  # the plan's link: typing one's own goes local, as any plan number

    def choose_interconnect(self, key: str) -> bool:
        """Use preset ``key`` ("" for custom): link bandwidth and latency in one undo step."""
        ic = self._interconnects.get(key)
        if ic is None:
            return self.edit(interconnect=key or "")
        return self.edit(_text=f"Use interconnect {ic.name}", interconnect=key, link_bw=ic.achievable_bw,
                         alpha=ic.latency_s)

    def _sync_field(self, name: str) -> None:
        if name in ("interconnect", "inter_node") and self.scenario() is not None:
            combo = self.field(name)
            key = getattr(self.scenario(), name)
            if combo is not None and key and combo.findData(key) < 0:
                combo.addItem(f"{key} (not a built-in preset)", key)
        super()._sync_field(name)

    #: the plan's gradient sync sets these; typing one explores locally (Local override)
    PLAN_DERIVED_FIELDS = frozenset({"n_ranks", "size_bytes", "link_bw", "alpha", "interconnect"})

    # -- measured logs ----------------------------------------------------------------------
    def choose_log(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Load nccl-tests logs", "",
                                                "nccl-tests output (*.txt *.log *.out);;All files (*)")
        for path in paths:
            if not self.load_log_from(path):
                break

    def load_log_from(self, path) -> bool:
        """Add an nccl-tests log to the scenario (one undo step). The first log also sets the
        model's rank count and collective; any log widens the size sweep to its sizes. A
        file that is not a log (or one already loaded) gives a message and changes nothing."""
        path = Path(path)
        s = self.scenario()
        if len(s.logs) >= AllReduceScenario.MAX_LOGS:
            self.show_status(f"{path.name} was not loaded: {AllReduceScenario.MAX_LOGS} logs are loaded already "
                             "(remove one first).")
            return False
        room = MAX_LOG_CHARS - sum(len(text) for _name, text in s.logs)
        try:
            if path.stat().st_size > room:
                raise ValueError(f"it is larger than the {_size_text(max(room, 0))} left for logs in this "
                                 "scenario" if s.logs else f"it is larger than {_size_text(MAX_LOG_CHARS)}")
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.show_status(f"Could not read {path.name}: {exc.strerror or exc}")
            return False
        except ValueError as exc:
            self.show_status(f"{path.name} is not an nccl-tests log ({exc}). Nothing was changed.")
            return False
        log, reason = read_log(text, s.collective)  # kept: the analysis of the edit finds it parsed
        if log is None:
            self.show_status(f"{path.name} is not an nccl-tests log ({reason}). Nothing was changed.")
            return False
        if len(text) > room:
            self.show_status(f"{path.name} was not loaded: it is larger than the room left for logs.")
            return False
        if any(text == other for _name, other in s.logs):
            self.show_status(f"{path.name} is loaded already. Nothing was changed.")
            return False
        changes = AllReduceScenario.log_fields([*s.logs, (path.name[:AllReduceScenario.MAX_LOG_NAME], text)])
        if not s.logs:  # the model follows the first log
            if log.n_ranks is not None and log.n_ranks >= 2:
                changes["n_ranks"] = log.n_ranks
            if log.collective in COLLECTIVES:
                changes["collective"] = log.collective
        if len(log.sizes):  # the model curves span the measured sizes too
            changes["size_min"] = min(s.size_min, float(log.sizes.min()))
            changes["size_max"] = max(s.size_max, float(log.sizes.max()))
        self._selected = len(s.logs)
        if not self._edit_keeping(changes, _text=f"Load nccl-tests log {path.name}", _merge=False):
            self._selected = max(0, len(s.logs) - 1)
            return False
        return True

    def _edit_keeping(self, changes: dict, **options) -> bool:
        """``edit(**changes)``; when that sets a number the plan gives (the first log's ranks, a
        fitted link) while following the plan, Local override goes on in the same undo step,
        so the next plan edit does not put the plan's back."""
        s = self.scenario()
        own = [name for name in changes if name in self.PLAN_DERIVED_FIELDS and changes[name] != getattr(s, name)]
        own.sort(key=lambda name: name == "interconnect")  # the note names the number, not the preset cleared
        edit = lambda: self.edit(**changes, **options)  # noqa: E731
        return bool(self.edit_own(own[0], edit) if own else edit())

    def remove_log(self, index: int | None = None) -> bool:
        """Remove log ``index`` (default: the selected one) as one undo step."""
        logs = list(self.scenario().logs)
        index = self._selected if index is None else index
        if not 0 <= index < len(logs):
            return False
        name = self._loaded[index].label if index < len(self._loaded) else logs[index][0]
        del logs[index]
        self._selected = min(index, max(0, len(logs) - 1))
        return self.edit(_text=f"Remove log {name or index + 1}", _merge=False,
                         **AllReduceScenario.log_fields(logs))

    def clear_log(self) -> bool:
        """Remove every log (one undo step)."""
        if not self.scenario().logs:
            return False
        return self.edit(_text="Remove every measured log", _merge=False, **AllReduceScenario.log_fields([]))

    def loaded_logs(self) -> list[LoadedLog]:
        """The logs as drawn: legend names, analyses, health, colours."""
        return list(self._loaded)

    def selected_log(self) -> LoadedLog | None:
        return self._loaded[self._selected] if 0 <= self._selected < len(self._loaded) else None

    def select_log(self, index: int) -> None:
        """Show log ``index``'s details, numbers and fitted line (navigation, not an edit)."""
        if 0 <= index < len(self._loaded) and index != self._selected:
            self._selected = index
            self.refresh()

    def _table_selection_changed(self) -> None:
        rows = {i.row() for i in self.logs_table.selectedIndexes()}
        if len(rows) == 1 and not getattr(self, "_filling_table", False):
            self.select_log(rows.pop())

    def measured(self) -> MeasuredLog | None:
        """The selected log, parsed and fitted (None without one or when it cannot be read)."""
        loaded = self.selected_log()
        return loaded.log if loaded is not None else None

    def _log_views(self, s: AllReduceScenario, a: AllReduceAnalysis) -> list[LoadedLog]:
        """The analysis's logs with their legend names, colours and markers."""
        labels = _legend_labels([(entry.name, entry.log) for entry in a.logs])
        views = []
        for i, ((_name, text), entry, label) in enumerate(zip(s.logs, a.logs, labels, strict=True)):
            color, symbol = LOG_STYLES[i % len(LOG_STYLES)]
            model_name = (f"{_label(entry.log.collective)} model, {entry.log.n_ranks:,} ranks, {entry.model_link}"
                          if entry.model is not None else "")
            views.append(LoadedLog(i, label, text, entry, model_name, _tone(color), symbol))
        return views

    def use_fit(self) -> bool:
        """Set the model's link to the ring that reproduces the selected log's fitted line:
        bandwidth and latency when the fit measured both, only what it measured otherwise."""
        selected = self.selected_log()
        log = selected.log if selected is not None else None
        params = selected.entry.ring_parameters if log is not None else None
        if params is None:
            self.show_status("No fitted measurement to use: load an nccl-tests log with at least two sizes.")
            return False
        fit = log.fit
        bw, alpha = params
        changes = {"interconnect": ""}
        if fit.bandwidth_measured:
            changes["link_bw"] = bw
        if fit.alpha_measured:
            changes["alpha"] = alpha
        if len(changes) == 1:
            self.show_status(f"The fit measured neither latency nor bandwidth: {fit.reason}.")
            return False
        what = ("latency and bandwidth" if len(changes) == 3 else
                "bandwidth" if "link_bw" in changes else "latency")
        return self._edit_keeping(changes, _text=f"Use fitted {what}", _merge=False)

    # -- comparison -------------------------------------------------------------------------
    def set_comparison(self, items: Sequence[tuple[str, AllReduceScenario]]) -> None:
        """Overlay saved scenarios' time curves (dashed, named) on the time chart."""
        self._comparison = [(str(name), sc) for name, sc in items if isinstance(sc, AllReduceScenario)]
        self.refresh()

    def clear_comparison(self) -> None:
        self._comparison = []
        self.refresh()

    def comparison(self) -> list[tuple[str, AllReduceScenario]]:
        return list(self._comparison)

    # -- drawing ----------------------------------------------------------------------------
    def _tab_changed(self, index: int) -> None:
        if index in self._undrawn:  # edits came while it was behind the other tab
            self.refresh()

    def crossover_marker(self) -> float | None:
        """Where the crossover line is drawn (bytes), None when it is not drawn."""
        return self._crossover_value

    def latency_marker(self) -> int | None:
        """The rank count marked on the rank chart where the ring's latency term takes over."""
        return self._latency_from

    def _beside_the_size(self, s: AllReduceScenario) -> tuple:
        """Everything the size tab's curves and the logs' list are drawn from, except the
        message size: a new size moves their operating points only."""
        fields = tuple((f.name, getattr(s, f.name)) for f in dataclasses.fields(s) if f.name != "size_bytes")
        return fields, th.current_theme(), th.presentation_enabled()

    def refresh(self) -> None:
        s = self.scenario()
        # both tabs' numbers, so that a scenario one of them cannot show is reported now
        a = self.analysis()
        point, sw = a.point, a.sweep
        beside = self._beside_the_size(s)
        front = self.chart_tabs.currentIndex()
        self._loaded = self._log_views(s, a)
        self._selected = min(max(self._selected, 0), max(0, len(self._loaded) - 1))
        self._latency_from = a.latency_from
        # only the charts of the tab in front are drawn; the other tab's are when it is chosen
        if front == SCALE_TAB:
            self._draw_ranks_chart(s, a)
            self._draw_link_chart(s, a)
        else:
            curves = (beside, self._selected, tuple(self._comparison))
            if curves == self._size_curves:
                self._mark_time_point(point, sw)
                self._mark_busbw_point(point)
            else:
                self._size_curves = None
                self._draw_time_chart(s, sw, point)
                self._draw_busbw_chart(s, sw, point)
                self._size_curves = curves
        key = (s, self._selected, tuple(self._comparison), th.current_theme(), th.presentation_enabled())
        self._drawn_from[front] = key
        self._undrawn = {tab for tab in (SIZE_TAB, SCALE_TAB) if self._drawn_from.get(tab) != key}
        listed = (beside, self._selected)
        if listed != self._listed:  # the logs' list shows neither the size nor its numbers
            self._fill_logs_table()
            self._listed = listed
        self._fill_results(s, point, self.selected_log())
        self._update_log_widgets(s, self.selected_log())

    def _draw_time_chart(self, s, sw, point) -> None:
        c = self.chart
        c.clear_series()
        c.clear_reference_lines()
        c.set_title(f"{_label(s.collective).capitalize()} time, {s.n_ranks:,} ranks")
        if sw.tree is not None:
            c.add_series("ring", sw.sizes, sw.ring, color=_tone(RING_COLOR))
            c.add_series("tree", sw.sizes, sw.tree, color=_tone(TREE_COLOR))
        else:
            c.add_series("ring (model)", sw.sizes, sw.ring, color=_tone(RING_COLOR))
        for i, (name, other) in enumerate(self._comparison):
            osw = self._compared_sweep(other, s)
            if osw is None:
                continue
            c.add_series(name, osw.sizes, osw.best, color=_tone(COMPARISON_COLORS[i % len(COMPARISON_COLORS)]),
                         style="dash" if i % 2 == 0 else "dot")
        selected = self.selected_log()
        models = 0
        for view in self._loaded:
            if view.log is None or not len(view.log.sizes):
                continue
            c.add_series(view.label, view.log.sizes, view.log.times, color=view.color, symbol=view.symbol,
                         width=1.0, in_legend=False)
            if view.model is not None:
                # named (CSV, hover) but not in the legend: one entry below says what the dashes are
                c.add_series(f"{view.label}: {view.model_name}", view.model.sizes, view.model.best,
                             color=view.color, style="dash", width=1.5, in_legend=False)
                models += 1
        if models:
            c.add_series(MODEL_LEGEND, [], [], color=th.current_theme().muted, style="dash", width=1.5)
        if selected is not None and selected.log is not None and selected.log.fit is not None:
            log = selected.log
            xs, ys = selected.entry.fit_sizes, selected.entry.fit_times
            if len(xs) > 1:
                alpha = si_label(log.fit.alpha, "s") if log.fit.alpha_measured else "α?"
                c.add_series(f"fit: {alpha} + S / {si_label(log.fit.bandwidth, 'B/s')}",
                             xs, ys, color=selected.color, style="dot", width=2.0)
        c.set_side_legend([view.label for view in self._loaded if view.log is not None and len(view.log.sizes)])
        self._crossover_value = None
        if point.crossover is not None and point.crossover > 0:
            line = c.add_reference_line(point.crossover, label=f"crossover {_size_text(point.crossover)}")
            line.setToolTip("Tree is faster for smaller messages, ring for larger ones")
            if getattr(line, "label", None) is not None:
                # written up the line, on its left near the top: left of the crossover every curve
                # is below the crossover time, so nothing is drawn there
                line.label.setAngle(90)
                line.label.setPosition(0.97)
                line.label.anchors = [(1.0, 1.0), (1.0, 1.0)]
                line.label.updatePosition()
            self._crossover_value = point.crossover
        self._mark_time_point(point, sw)
        c.getPlotItem().getViewBox().enableAutoRange()

    def _compared_sweep(self, other: AllReduceScenario, s: AllReduceScenario) -> CommsSweep | None:
        """A compared scenario's model over this panel's sizes (its own analysis, without its
        logs), None when it cannot be computed; kept while both are the same."""
        key = (id(other), s.size_min, s.size_max)
        kept = self._compared.get(key)
        if kept is None or kept[0] is not other:
            try:
                shape = other.with_changes(size_min=s.size_min, size_max=s.size_max,
                                           **AllReduceScenario.log_fields([]))
                kept = (other, analyse(shape, None, self.presets()).sweep)
            except (ValueError, ArithmeticError):
                kept = (other, None)
            compared = {id(sc) for _name, sc in self._comparison}
            self._compared = {k: v for k, v in self._compared.items() if k[0] in compared}
            self._compared[key] = kept
        return kept[1]

    def _mark_time_point(self, point, sw) -> None:
        self.chart.set_operating_point(point.size_bytes, point.best_time,
                                       f"{_size_text(point.size_bytes)}: {si_label(point.best_time, 's')}"
                                       + (f" ({point.best_algorithm})" if sw.tree is not None else ""))

    def _draw_busbw_chart(self, s, sw, point) -> None:
        c = self.busbw_chart
        c.clear_series()
        c.clear_reference_lines()
        if sw.tree_busbw is not None:
            c.add_series("ring", sw.sizes, sw.ring_busbw, color=_tone(RING_COLOR))
            c.add_series("tree", sw.sizes, sw.tree_busbw, color=_tone(TREE_COLOR))
        else:
            c.add_series("ring (model)", sw.sizes, sw.ring_busbw, color=_tone(RING_COLOR))
        tops = [s.link_bw, float(sw.best_busbw.max(initial=0.0))]
        for view in self._loaded:
            if view.log is None or not len(view.log.sizes):
                continue
            # the time chart beside it names the logs: this legend keeps to the model, clear of the curves
            c.add_series(view.label, view.log.sizes, view.log.busbw, color=view.color, symbol=view.symbol,
                         width=1.0, in_legend=False)
            tops.append(float(view.log.busbw.max(initial=0.0)))
            if view.model is not None:
                c.add_series(f"{view.label} (model)", view.model.sizes, view.model.best_busbw, color=view.color,
                             style="dash", width=1.5, in_legend=False)
                tops.append(float(view.model.best_busbw.max(initial=0.0)))
        line = c.add_reference_line(s.link_bw, vertical=False, label=f"link bandwidth {si_label(s.link_bw, 'B/s')}",
                                    color=th.current_theme().muted)
        if getattr(line, "label", None) is not None:  # above the line at the left end: clear of the curves
            line.label.setPosition(0.02)
            line.label.anchors = [(0, 1), (0, 1)]
            line.label.updatePosition()
        self._mark_busbw_point(point)
        vb = c.getPlotItem().getViewBox()
        # x follows the data; y is set (enabling both made pyqtgraph fit y to the data at once,
        # then set it back: two range changes, each redoing every curve, per redraw)
        vb.enableAutoRange(axis=pg.ViewBox.XAxis)
        vb.setYRange(0.0, max(tops) * 1.12, padding=0)  # the link line and the labels stay in view

    def _mark_busbw_point(self, point) -> None:
        self.busbw_chart.set_operating_point(point.size_bytes, point.busbw, si_label(point.busbw, "B/s"))

    def _draw_ranks_chart(self, s, a: AllReduceAnalysis) -> None:
        rs = a.ranks
        c = self.ranks_chart
        c.clear_series()
        c.clear_reference_lines()
        c.set_title(f"Against rank count ({_label(s.collective)} of {_size_text(s.size_bytes)})")
        if rs.tree is not None:
            c.add_series("ring", rs.ranks, rs.ring, color=_tone(RING_COLOR))
            c.add_series("tree", rs.ranks, rs.tree, color=_tone(TREE_COLOR))
        else:
            c.add_series("ring (model)", rs.ranks, rs.ring, color=_tone(RING_COLOR))
        if s.alpha > 0:
            c.add_series("ring latency term", rs.ranks, rs.ring_latency, color=_tone(RING_COLOR), style="dot", width=1.5)
        positive = rs.ring_transfer > 0
        if positive.any():
            c.add_series("ring transfer term", rs.ranks[positive], rs.ring_transfer[positive], color=th.current_theme().muted,
                         style="dash", width=1.5)
        if rs.latency_from is not None and rs.latency_from > RANKS_MIN:
            line = c.add_reference_line(float(rs.latency_from), label=f"latency dominates from n = {rs.latency_from:,}")
            line.setToolTip("From this rank count on, the ring spends more time in its 2(n-1) latency steps than "
                            "in moving the bytes")
            if getattr(line, "label", None) is not None:
                line.label.setAngle(90)
                line.label.setPosition(0.97)
                line.label.anchors = [(1.0, 1.0), (1.0, 1.0)]
                line.label.updatePosition()
        for view in self._loaded:
            t = view.entry.time_at_size  # None for a log not of this collective, or without ranks
            if t is not None:
                c.add_series(view.label, [float(view.log.n_ranks)], [t],
                             color=view.color, symbol=view.symbol, width=1.0)
        best = a.rank_point_time
        c.set_operating_point(float(s.n_ranks), best, f"{s.n_ranks:,} ranks: {si_label(best, 's')}")
        c.getPlotItem().getViewBox().enableAutoRange()

    def _draw_link_chart(self, s, a: AllReduceAnalysis) -> None:
        bs, point = a.bandwidths, a.point
        c = self.link_chart
        c.clear_series()
        c.clear_reference_lines()
        c.set_title(f"Against link bandwidth ({_size_text(s.size_bytes)}, {s.n_ranks:,} ranks)")
        if bs.tree is not None:
            c.add_series("ring", bs.bandwidths, bs.ring, color=_tone(RING_COLOR))
            c.add_series("tree", bs.bandwidths, bs.tree, color=_tone(TREE_COLOR))
        else:
            c.add_series("ring (model)", bs.bandwidths, bs.ring, color=_tone(RING_COLOR))
        self._link_marks = []
        for ic in a.link_classes:  # slowest first
            name = ic.name.split(" (", 1)[0].removeprefix("InfiniBand / Ethernet NIC, ")
            line = c.add_reference_line(ic.bw_per_direction, label=f"{name} NIC" if ic.key.startswith("nic-") else name)
            line.setToolTip(f"{ic.name}: {units.format_quantity(ic.bw_per_direction, 'B/s')} per direction (nominal)")
            if getattr(line, "label", None) is not None:
                # written up the line, ending near the top: the falling curves leave the top right empty
                line.label.setAngle(90)
                line.label.setPosition(0.97)
                line.label.anchors = [(1.0, 1.0), (1.0, 1.0)]
                line.label.updatePosition()
            rank = LINK_MARK_PRIORITY.index(ic.key) if ic.key in LINK_MARK_PRIORITY else len(LINK_MARK_PRIORITY)
            self._link_marks.append((0 if ic.key == s.interconnect else 1 + rank, ic.bw_per_direction, line))
        self._thin_link_labels()
        c.set_operating_point(s.link_bw, point.best_time,
                              f"{si_label(s.link_bw, 'B/s')}: {si_label(point.best_time, 's')}")
        c.getPlotItem().getViewBox().enableAutoRange()

    def _thin_link_labels(self, *_args) -> None:
        """Hide the labels of link-class lines that would touch a label kept before them (in
        priority order); their lines stay, and their tooltips name them."""
        marks = getattr(self, "_link_marks", [])
        if not marks:
            return
        c = self.link_chart
        vb = c.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        width = vb.width()
        if width <= 0 or not x1 > x0:
            for _rank, _value, line in marks:
                if getattr(line, "label", None) is not None:
                    line.label.setVisible(True)
            return
        label_height = 1.3 * th.BASE_TICK_FONT_PT * 0.9 * th.scale_factor(c.presentation()) * 96 / 72
        kept: list[float] = []
        for _rank, value, line in sorted(marks, key=lambda m: m[0]):
            px = (math.log10(value) - x0) / (x1 - x0) * width
            free = all(abs(px - other) >= label_height for other in kept)
            if getattr(line, "label", None) is not None:
                line.label.setVisible(free)
            if free:
                kept.append(px)

    def _fill_logs_table(self) -> None:
        table = self.logs_table
        self._filling_table = True
        try:
            table.setRowCount(len(self._loaded))
            for view in self._loaded:
                cells = _table_cells(view)
                for col, (text, tip) in enumerate(cells):
                    item = QTableWidgetItem(text)
                    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                    if tip:
                        item.setToolTip(_tip(tip))
                    if col == 0:
                        item.setIcon(_marker_icon(view.color, view.symbol))
                    if col == HEALTH_COLUMN and view.health is not None and view.health.verdict == DEGRADED:
                        item.setForeground(QColor(th.current_theme().error))
                    table.setItem(view.index, col, item)
            if self._loaded:
                table.selectRow(self._selected)
        finally:
            self._filling_table = False
        table.setVisible(bool(self._loaded))
        rows = len(self._loaded)
        row_height = table.verticalHeader().defaultSectionSize()
        scroll = table.horizontalScrollBar().sizeHint().height() if table.horizontalScrollBar().isVisible() else 0
        table.setFixedHeight(table.horizontalHeader().sizeHint().height() + rows * row_height
                             + 2 * table.frameWidth() + scroll + 2)

    def _fill_results(self, s, point, selected: LoadedLog | None) -> None:
        factor_formula = FACTOR_TIPS.get(s.collective, "?")
        rows = [
            ResultRow("Ring time", point.ring_time, "s",
                      RING_TIP if s.collective == "all_reduce" else
                      f"Ring {_label(s.collective)} time at this size (alpha-beta model)"),
        ]
        if point.tree_time is not None:
            rows.append(ResultRow("Tree time", point.tree_time, "s", TREE_TIP))
            rows.append(ResultRow("Best algorithm", point.best_algorithm, "",
                                  "The faster of ring and tree at this size in the model (NCCL's tuner "
                                  "makes the same choice from its own cost tables)"))
            if point.crossover and point.crossover > 0:
                rows.append(ResultRow("Crossover size", point.crossover, "B",
                                      "Size where ring and tree take the same time: tree is faster below it, "
                                      "ring above. S* = α·B·n·(n-1-⌈log2 n⌉)", binary=True))
            else:
                rows.append(ResultRow("Crossover size", "none", "",
                                      "Ring is never slower than tree here (n <= 3 or zero latency)"))
        else:
            rows.append(ResultRow("Tree time", "n/a", "", "The model has a tree algorithm for all-reduce only"))
        rows += [
            ResultRow(f"Algorithm bandwidth ({point.best_algorithm})", point.algbw, "B/s",
                      "algbw = S / t: message size over the time of the faster algorithm (nccl-tests' algbw)"),
            ResultRow(f"Bus bandwidth ({point.best_algorithm})", point.busbw, "B/s",
                      f"busbw = algbw × factor, with factor {factor_formula} for {_label(s.collective)} "
                      "(nccl-tests' busbw: comparable with the link bandwidth whatever n is)"),
            ResultRow(f"Bus factor, n = {s.n_ranks:,}", f"{point.bus_factor:.4g}", "",
                      f"busbw / algbw for {_label(s.collective)}: {factor_formula}, n = total ranks"),
        ]
        if self._latency_from is not None:
            rows.append(ResultRow("Latency takes over from", f"{self._latency_from:,} ranks", "",
                                  "The rank count from which the ring's latency term (ring steps × α) is at least "
                                  "its transfer term at this size"))
        log = selected.log if selected is not None else None
        if log is not None:
            rows += self._log_rows(selected, log)
        self.results.set_rows(rows)
        if len(rows) != self._result_count:
            self._result_count = len(rows)
            self._fit_results_height()

    @staticmethod
    def _log_rows(selected: LoadedLog, log: MeasuredLog) -> list[ResultRow]:
        r = log.result
        ranks = _ranks_text(log)
        rows = [ResultRow("Log: rows parsed, ranks", f"{log.row_count:,} rows, {ranks}", "",
                          _tip(f"{selected.label}: result rows read from the log (one per size, each with "
                               "out-of-place and in-place times), and its rank count with where it was read"
                               + (f"; {len(r.skipped_lines)} unreadable line(s) skipped" if r.skipped_lines else ""))),
                ResultRow("Avg busbw, printed",
                          f"{log.printed_avg_busbw / GB:.3f}" if log.printed_avg_busbw is not None else "not printed",
                          "GB/s" if log.printed_avg_busbw is not None else "",
                          "The log's '# Avg bus bandwidth' line (GB = 1e9 B)"),
                ResultRow("Avg busbw, recomputed", f"{log.computed_avg_busbw / GB:.3f}", "GB/s",
                          "Mean busbw over every printed row, out-of-place and in-place, zero sizes "
                          "included: how nccl-tests computes its average")]
        health = selected.health
        if health is not None:
            rows.append(ResultRow("Link health", health.verdict, "", _tip(health.summary)))
        fit = log.fit
        if fit is None:
            rows.append(ResultRow("Fit", "not possible", "", _tip(log.fit_error)))
            return rows
        rows.append(ResultRow("Fit", f"{fit.verdict}, {fit.rel_rms:.0%} RMS", "",
                              _tip(f"t = α + S/B fitted to the out-of-place times (relative errors): {fit.reason}. "
                                   f"R² = {fit.r2:.3f} (on plain times: dominated by the largest messages)")))
        if fit.alpha_measured:
            rows.append(ResultRow("Fitted latency (whole op)", fit.alpha, "s",
                                  "α of the fit t = α + S/B: the latency of the whole collective, measured by "
                                  f"{fit.n_latency} latency-dominated sizes"))
        else:
            rows.append(ResultRow("Fitted latency (whole op)", "not measured", "",
                                  _tip(f"The line's α ({units.format_quantity(fit.alpha, 's')}) is not a "
                                       f"measurement: {fit.reason}")))
        if fit.bandwidth_measured:
            rows.append(ResultRow("Fitted bandwidth (algbw)", fit.bandwidth, "B/s",
                                  "B of the fit t = α + S/B: an algorithm bandwidth; × bus factor for busbw"))
        else:
            rows.append(ResultRow("Fitted bandwidth (algbw)", "not measured", "", _tip(fit.reason)))
        return rows

    def _fit_results_height(self) -> None:
        """Give the results table room for every row, up to 45% of the height (a third with
        logs loaded: their list takes its share under the charts; the table then scrolls).
        The cap is the table's maximum height too, so the centre's own balancing keeps to it."""
        table = self.results
        total = self.center.height()
        if total <= 0:
            return
        share = 0.45 if not self._loaded else 0.25 if th.presentation_enabled() else 0.33
        cap = int(total * share)
        table.setMaximumHeight(max(cap, table.minimumHeight()))
        if self.center.user_sized():
            return
        want = (table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() + 4
                + table.rowCount() * table.verticalHeader().defaultSectionSize())
        want = min(want, cap)
        self.center.setSizes([total - want, want])

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._fit_results_height()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            self._fit_results_height()

    def _update_log_widgets(self, s, selected: LoadedLog | None) -> None:
        has_logs = bool(s.logs)
        self.remove_log_button.setEnabled(selected is not None)
        self.load_button.setEnabled(len(s.logs) < AllReduceScenario.MAX_LOGS)
        log = selected.log if selected is not None else None
        params = selected.entry.ring_parameters if log is not None else None
        fit = log.fit if log is not None else None
        self.fit_button.setVisible(log is not None)
        usable = params is not None and fit is not None and (fit.alpha_measured or fit.bandwidth_measured)
        self.fit_button.setEnabled(usable)
        if fit is not None and usable:
            what = ("latency and bandwidth" if fit.alpha_measured and fit.bandwidth_measured else
                    "bandwidth" if fit.bandwidth_measured else "latency")
            self.fit_button.setText(f"Use fitted {what}")
            bw, alpha = params
            parts = []
            if fit.bandwidth_measured:
                parts.append(f"link bandwidth {units.format_quantity(bw, 'B/s')} (fitted algbw × bus factor)")
            if fit.alpha_measured:
                parts.append(f"latency per step {units.format_quantity(alpha, 's')} (fitted α / ring steps)")
            self.fit_button.setToolTip(_tip("Set the model to the ring that reproduces the fitted line of "
                                            f"{selected.label}: " + ", ".join(parts)
                                            + ("" if fit.alpha_measured and fit.bandwidth_measured
                                               else f". Not the rest: {fit.reason}")))
        else:
            self.fit_button.setText("Use fitted latency and bandwidth")
            self.fit_button.setToolTip(_tip(fit.reason) if fit is not None else "")
        if not has_logs:
            self.log_label.setText("No measured log. Load the output of all_reduce_perf (or another "
                                   "nccl-tests binary) to compare it with the model; load several to compare "
                                   "two nodes or two dates.")
        elif selected is None:
            self.log_label.setText("")
        else:
            self.log_label.setText(_details(selected))
        # a palette, not a style sheet: a label with a style sheet stops following its form's font
        # (presentation mode would leave it small)
        palette = self.form_widget.palette()
        if not has_logs:
            palette.setColor(QPalette.ColorRole.WindowText, QColor(th.current_theme().muted))
        self.log_label.setPalette(palette)

    # -- explanation, export ----------------------------------------------------------------
    def explanation(self) -> str:
        return (
            "<h3>All-reduce in the alpha-beta model</h3>"
            "<p>Each step costs a latency <i>α</i>; moving <i>S</i> bytes over a link costs <i>S/B</i> "
            "(<i>B</i> per direction). For <i>n</i> ranks:</p>"
            "<ul>"
            "<li><b>Ring</b>: t = 2(n-1)/n · S/B + 2(n-1)·α. Bandwidth-optimal, latency grows with n.</li>"
            "<li><b>Double binary tree</b>: t = 2·S/B + 2·⌈log2 n⌉·α. Latency grows with log n, so it "
            "wins for small messages; the crossover size is where both are equal.</li>"
            "</ul>"
            "<p><b>Bus bandwidth</b> (nccl-tests): algbw = S/t, busbw = algbw × factor with factor "
            "2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter, all-gather and all-to-all, 1 for "
            "broadcast, reduce and send/receive. busbw is comparable with the link bandwidth whatever n is.</p>"
            "<p><b>Against rank count</b>: the ring's latency term 2(n-1)·α grows with n while its transfer "
            "term approaches 2·S/B, so from n ≈ S/(α·B) on latency dominates; the tree's grows with log n.</p>"
            "<p><b>Rules of thumb</b>: NVLink reaches about 80% of its nominal per-direction rate; "
            "expect about 24 GB/s busbw per 200 Gb/s NIC; α is a few µs per step on NVLink and "
            "5-20 µs across nodes.</p>"
            "<p><b>Measured logs</b>: each is drawn against the model of its own collective and rank count "
            "on the link its devices should reach (NVLink generation or PCIe, from the interconnect presets; "
            "across nodes the hierarchical ring, min(NVLink, ranks per node × NIC)). Its out-of-place times "
            "are fitted with t = α + S/B; the fit says how far to trust it: α counts as measured only with "
            f"at least {MIN_POINTS_PER_REGION} sizes below S½ = α·B (latency-dominated), B only with "
            "as many above. “Use fitted latency and bandwidth” turns the line into the ring model's B and α.</p>"
            f"<p><b>Link health</b>: the highest busbw at {_size_text(LARGE_MESSAGE_BYTES)} and "
            f"above against the expected link's nominal rate: healthy from {HEALTHY_RATIO:.0%}, "
            "degraded below it (and placed in the slowest link class that covers it: a node whose NVLink "
            "is down shows PCIe-class numbers), not comparable without devices the presets know or with "
            f"fewer than {MIN_LARGE_SIZES} large sizes.</p>"
        )

    def chart_for_export(self) -> QWidget | None:
        """The charts of the tab shown (two side by side), as on screen."""
        return self.chart_tabs.currentWidget()

    def csv_columns(self) -> list[tuple[str, Sequence]] | None:
        """Model sweep (size, ring and tree time, busbw) plus every loaded log's measured rows."""
        s = self.scenario()
        a = self.analysis()
        sw = a.sweep
        n = len(sw.sizes)
        sizes = [float(x) for x in sw.sizes]
        ring = [float(x) for x in sw.ring]
        tree = [float(x) for x in sw.tree] if sw.tree is not None else [None] * n
        busbw = [float(x) for x in sw.best_busbw]
        logs = [view for view in self._log_views(s, a) if view.log is not None]
        if not logs:
            return [("size (B)", sizes), ("ring time (s)", ring), ("tree time (s)", tree), ("busbw (B/s)", busbw)]
        source, m_sizes, m_busbw, m_times = ["model"] * n, [], [], []
        for view in logs:
            count = len(view.log.sizes)
            source += [f"measured (out-of-place): {view.label}"] * count
            m_sizes += [float(x) for x in view.log.sizes]
            m_busbw += [float(x) for x in view.log.busbw]
            m_times += [float(x) for x in view.log.times]
        m = len(m_sizes)
        return [
            ("source", source),
            ("size (B)", sizes + m_sizes),
            ("ring time (s)", ring + [None] * m),
            ("tree time (s)", tree + [None] * m),
            ("busbw (B/s)", busbw + m_busbw),
            ("measured time (s)", [None] * n + m_times),
        ]


def _legend_labels(entries: Sequence[tuple[str, MeasuredLog | None]]) -> list[str]:
    """A legend name per log: its file name, then its host and its date where files share a
    name, then its position where even those are the same."""
    base = [name or f"log {i + 1}" for i, (name, _log) in enumerate(entries)]

    def host(log):
        hosts = log.result.hosts if log is not None else ()
        return ", ".join(hosts[:2]) + (" …" if len(hosts) > 2 else "") if hosts else ""

    def date(log):
        return (log.result.date or "") if log is not None else ""

    labels = list(base)
    for extra in (host, date):
        seen = [labels.count(label) > 1 for label in labels]
        labels = [f"{label} ({extra(log)})" if dup and extra(log) else label
                  for label, dup, (_name, log) in zip(labels, seen, entries, strict=True)]
    return [f"{label} #{i + 1}" if labels.count(label) > 1 else label for i, label in enumerate(labels)]


def _ranks_text(log: MeasuredLog) -> str:
    r = log.result
    if not log.n_ranks:
        return "ranks not listed"
    source = RANK_SOURCES.get(r.n_ranks_source or "", r.n_ranks_source or "")
    return f"{log.n_ranks:,} rank{'s' if log.n_ranks != 1 else ''}" + (f" ({source})" if source else "")


def _collective_text(log: MeasuredLog) -> str:
    r = log.result
    if log.collective is None:
        return "collective not named"
    if r.collective_source == "inferred":
        return f"{_label(log.collective)} (inferred)"
    if r.collective is None:
        return f"{_label(log.collective)} (assumed: the form's)"
    return _label(log.collective)


def _device_text(log: MeasuredLog, layout: NodeLayout) -> str:
    r = log.result
    names = r.device_names
    if not names:
        return "not listed"
    hosts = f", {layout.nodes} hosts" if layout.nodes and layout.nodes > 1 else ""
    return " / ".join(names) + hosts


def _table_cells(view: LoadedLog) -> list[tuple[str, str]]:
    """(text, tooltip) of each column of the logs table for one log."""
    log = view.log
    if log is None:
        return [(view.label, view.name), ("unreadable", view.error), ("", ""), ("", ""), ("", ""), ("", "")]
    health = view.health
    fit = log.fit
    fit_text = "not possible" if fit is None else fit.verdict
    fit_tip = log.fit_error if fit is None else fit.reason
    r = log.result
    label_tip = "\n".join(x for x in (view.name, ", ".join(r.hosts), r.date or "") if x)
    health_tip = health.summary if health is not None else ""
    if health is not None and health.expected is not None:
        health_tip = "\n".join((health.summary, health.expected.rule, *health.expected.sources))
    return [
        (view.label, label_tip),
        (_collective_text(log), f"Compared with: {view.model_name}" if view.model_name else
         "Compared with the form's model (same collective, ranks and link)"),
        (_ranks_text(log), ""),
        (_device_text(log, view.entry.layout), ", ".join(r.hosts)),
        (fit_text, fit_tip),
        (health.summary if health is not None else "", health_tip),
    ]


def _details(view: LoadedLog) -> str:
    """Everything the selected log says about itself, as plain text lines."""
    log = view.log
    if log is None:
        return f"{view.label}: the stored log cannot be read: {view.error}"
    r = log.result
    lines = [view.label if view.label == view.name else f"{view.label}\n{view.name}"]
    lines.append(f"{_collective_text(log)}, {_ranks_text(log)}, {log.row_count:,} sizes")
    if r.device_names:
        layout = view.entry.layout
        hosts = ", ".join(layout.hosts[:4]) + (" …" if len(layout.hosts) > 4 else "")
        lines.append(f"Device: {' / '.join(r.device_names)} on {layout.nodes} host"
                     f"{'s' if (layout.nodes or 0) > 1 else ''} ({hosts})")
    elif r.hosts:
        lines.append(f"Hosts: {', '.join(r.hosts[:4])}")
    tools = ", ".join(x for x in (
        f"{r.tool} {r.tool_version}" if r.tool and r.tool_version else (r.tool or ""),
        f"NCCL {r.library_version}" if r.library_version else "") if x)
    if r.date or tools:
        lines.append(" · ".join(x for x in (r.date or "", tools) if x))
    if r.algbw_convention != SIZE_OVER_TIME:
        lines.append(f"algbw convention: {r.algbw_convention}")
    if r.time_unit != "us":
        lines.append(f"times printed in {r.time_unit}")
    if r.other_runs:
        lines.append(f"the first of {r.other_runs + 1} runs in the file; the others are not shown")
    if view.health is not None:
        lines.append(view.health.summary)
    if log.fit is not None:
        lines.append(f"Fit {log.fit.verdict}: {log.fit.reason}")
    else:
        lines.append(f"No fit: {log.fit_error}")
    if r.out_of_bounds:
        lines.append(f"{r.out_of_bounds:,} out-of-bounds values reported")
    if r.skipped_lines:
        shown = [str(s) for s in r.skipped_lines[:SHOWN_SKIPPED]]
        more = len(r.skipped_lines) - len(shown)
        lines.append("Skipped: " + "; ".join(shown) + (f"; and {more} more" if more else ""))
    lines += [f"Note: {note}" for note in r.notes]
    return "\n".join(lines)
