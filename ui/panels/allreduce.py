"""All-reduce calculator: ring against tree in the alpha-beta model, bus bandwidth as
nccl-tests reports it, and measured nccl-tests logs drawn over the model.

Every number comes from :mod:`workbench.comms` and :mod:`workbench.comms_sweep`; this module
only lays them out. Charts: time against message size (log-log; ring, tree, the crossover
size, the current size as the operating point, measured points and their fitted line) and
bus bandwidth against size (model, measured, the link bandwidth as a reference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QWidget,
)

import presets
from ui import theme as th
from ui.charts import Chart, LogUnitAxis, si_label
from ui.panel import PanelBase, ResultRow
from workbench import comms_sweep, units
from workbench._validate import InputError
from workbench.nccl import GB
from workbench.scenarios import COLLECTIVES, MAX_JSON_CHARS, VALUE_LABELS, AllReduceScenario

#: Largest log accepted (the scenario, log included, must still fit in a project).
MAX_LOG_CHARS = MAX_JSON_CHARS // 2
_LOG2_10 = math.log10(2.0)

RING_COLOR = th.BLUE
TREE_COLOR = th.ORANGE
MEASURED_COLOR = th.MEASURED
COMPARISON_COLORS = (th.PURPLE, th.SKY, th.BLACK, th.VERMILLION)

RING_TIP = ("Ring: every rank sends and receives 2(n-1)/n of the message over its link, in 2(n-1) steps: "
            "t = 2(n-1)/n · S/B + 2(n-1)·α")
TREE_TIP = ("Double binary tree: a pipelined reduce up the tree, then a broadcast down; each sends the whole "
            "message once each way and pays one latency per tree level: t = 2·S/B + 2·⌈log2 n⌉·α")
FACTOR_TIPS = {
    "all_reduce": "2(n-1)/n",
    "reduce_scatter": "(n-1)/n", "all_gather": "(n-1)/n", "all_to_all": "(n-1)/n", "scatter": "(n-1)/n",
    "broadcast": "1", "reduce": "1",
}


def _label(collective: str) -> str:
    return VALUE_LABELS["collective"].get(collective, collective)


def _size_text(value: float) -> str:
    return units.format_quantity(value, "B", binary=True)


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
    """A chart over message size; ``legend_at`` places the legend where the curves never are
    (kept through theme and presentation changes, which rebuild the legend)."""

    def __init__(self, *args, legend_at: tuple[tuple[float, float], tuple[float, float], tuple[int, int]]
                 | None = None, **kwargs):
        self._legend_at = legend_at
        super().__init__(*args, **kwargs)

    def update_legend(self) -> None:
        super().update_legend()
        legend = self.getPlotItem().legend
        if legend is not None and getattr(self, "_legend_at", None) is not None:
            item_pos, parent_pos, offset = self._legend_at
            legend.anchor(itemPos=item_pos, parentPos=parent_pos, offset=offset)


def _size_chart(title: str, y_label: str, y_unit: str, log_y: bool, legend_at=None) -> Chart:
    chart = SizeChart(legend_at=legend_at, title=title, x_label="Message size", x_unit="B", y_label=y_label, y_unit=y_unit,
                  log_x=True, log_y=log_y, x_binary=True)
    axis = SizeAxis("bottom", "B", binary=True, unit_in_ticks=True)
    chart.getPlotItem().setAxisItems({"bottom": axis})
    axis.setLogMode(True)  # the plot is in log mode already, so it does not tell a new axis
    chart.set_log_axes(True, log_y)
    if log_y:
        chart.axis("left").unit_in_ticks = True  # "10 µs", "1 ms" rather than "10 µ"
    chart.apply_theme(chart.theme())  # style the new axis like the others
    return chart


class AllReducePanel(PanelBase):
    """Ring against tree all-reduce cost, bus bandwidth, and measured nccl-tests logs."""

    kind = "allreduce"
    title = "All-reduce"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        self._interconnects = {ic.key: ic for ic in presets.load_interconnects()}
        self._comparison: list[tuple[str, AllReduceScenario]] = []
        self._log_cache: tuple[str, comms_sweep.MeasuredLog | None, str] | None = None
        self._log_names: dict[str, str] = {}
        self._crossover_line = None
        self._op = None
        self._crossover_value: float | None = None
        self._result_count = 0
        self._shown = False
        super().__init__(scenario if scenario is not None else AllReduceScenario(), parent, undo_stack=undo_stack)
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
        for box in (collective, combo):  # long preset names must not widen the form
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(10)
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

        buttons = QWidget(self.form_widget)
        row = QHBoxLayout(buttons)
        row.setContentsMargins(0, 6, 0, 0)
        self.load_button = QPushButton("Load nccl-tests log…", buttons)
        self.load_button.setObjectName("loadLogButton")
        self.load_button.setToolTip("Read the output of an nccl-tests binary (all_reduce_perf, ...) and draw "
                                    "its measurements over the model")
        self.load_button.clicked.connect(self.choose_log)
        self.clear_log_button = QPushButton("Clear", buttons)
        self.clear_log_button.setObjectName("clearLogButton")
        self.clear_log_button.setToolTip("Forget the measured log (undoable)")
        self.clear_log_button.clicked.connect(self.clear_log)
        row.addWidget(self.load_button, 1)
        row.addWidget(self.clear_log_button)
        self.form.addRow(buttons)
        self.fit_button = QPushButton("Use fitted latency and bandwidth", self.form_widget)
        self.fit_button.setObjectName("useFitButton")
        self.fit_button.clicked.connect(self.use_fit)
        self.form.addRow(self.fit_button)
        self.log_label = QLabel(self.form_widget)
        self.log_label.setObjectName("logLabel")
        self.log_label.setWordWrap(True)
        self.log_label.setTextFormat(Qt.TextFormat.PlainText)
        self.form.addRow(self.log_label)

    def _build_charts(self) -> None:
        self.chart = _size_chart("Time per collective", "Time", "s", log_y=True)
        # busbw is ~0 for small messages: the left middle of that chart is always empty
        self.busbw_chart = _size_chart("Bus bandwidth", "busbw", "B/s", log_y=False,
                                       legend_at=((0, 0.5), (0, 0.45), (6, 0)))
        self.chart.enable_hover(formatter=lambda x, y: f"size {si_label(x, 'B', binary=True)}\n"
                                                       f"time {si_label(y, 's')}")
        self.busbw_chart.enable_hover(formatter=lambda x, y: f"size {si_label(x, 'B', binary=True)}\n"
                                                             f"busbw {si_label(y, 'B/s')}")
        self.charts = QSplitter(Qt.Orientation.Horizontal, self.chart_area)
        self.charts.setObjectName("chartsSplitter")
        self.charts.setChildrenCollapsible(False)
        self.charts.addWidget(self.chart)
        self.charts.addWidget(self.busbw_chart)
        self.charts.setStretchFactor(0, 3)
        self.charts.setStretchFactor(1, 2)
        self.charts.setSizes([600, 400])
        self.add_chart(self.charts)

    @staticmethod
    def _interconnect_tip(ic) -> str:
        lines = [f"<b>{escape(ic.name)}</b>",
                 f"Per direction: {units.format_quantity(ic.bw_per_direction, 'B/s')} nominal"]
        if ic.achievable_fraction:
            lines.append(f"The model uses the achievable rate: {units.format_quantity(ic.achievable_bw, 'B/s')} "
                         f"({ic.achievable_fraction:.0%} of nominal)")
        lines.append(f"Latency per step: {units.format_quantity(ic.latency_s, 's')}")
        lines.append(f"Bandwidth source: {escape(ic.source)}")
        if ic.latency_source:
            lines.append(f"Latency source: {escape(ic.latency_source)}")
        if ic.note:
            lines.append(escape(ic.note))
        return "<br>".join(lines)

    # -- editing ----------------------------------------------------------------------------
    def _field_edited(self, name, value) -> None:
        if self._syncing:
            return
        s = self.scenario()
        if name == "interconnect":
            self.choose_interconnect(value)
            return
        if name in ("link_bw", "alpha") and s.interconnect:
            # a hand-typed link is no longer the preset: the combo says "Custom"
            self.edit(**{name: value, "interconnect": ""})
            return
        super()._field_edited(name, value)

    def choose_interconnect(self, key: str) -> bool:
        """Use preset ``key`` ("" for custom): link bandwidth and latency in one undo step."""
        ic = self._interconnects.get(key)
        if ic is None:
            return self.edit(interconnect=key or "")
        return self.edit(_text=f"Use interconnect {ic.name}", interconnect=key, link_bw=ic.achievable_bw,
                         alpha=ic.latency_s)

    def _sync_field(self, name: str) -> None:
        if name == "interconnect" and self.scenario() is not None:
            combo = self.field("interconnect")
            key = self.scenario().interconnect
            if combo is not None and key and combo.findData(key) < 0:
                combo.addItem(f"{key} (not a built-in preset)", key)
        super()._sync_field(name)

    #: the plan's gradient sync sets these; typing one explores locally (Local override)
    PLAN_DERIVED_FIELDS = frozenset({"n_ranks", "size_bytes", "link_bw", "alpha", "interconnect"})

    # -- measured logs ----------------------------------------------------------------------
    def choose_log(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load nccl-tests log", "",
                                              "nccl-tests output (*.txt *.log *.out);;All files (*)")
        if path:
            self.load_log_from(path)

    def load_log_from(self, path) -> bool:
        """Read an nccl-tests log into the scenario (one undo step; rank count and collective
        follow the log). A file that is not a log gives a message and changes nothing."""
        path = Path(path)
        try:
            if path.stat().st_size > MAX_LOG_CHARS:
                raise ValueError(f"it is larger than {_size_text(MAX_LOG_CHARS)}")
            text = path.read_text(encoding="utf-8", errors="replace")
            log = comms_sweep.analyze_log(text, self.scenario().collective)
        except OSError as exc:
            self.show_status(f"Could not read {path.name}: {exc.strerror or exc}")
            return False
        except (InputError, ValueError) as exc:
            reason = str(exc).removeprefix("text: ")
            self.show_status(f"{path.name} is not an nccl-tests log ({reason}). Nothing was changed.")
            return False
        changes = {"measured_log": text}
        if log.n_ranks is not None and log.n_ranks >= 2:
            changes["n_ranks"] = log.n_ranks
        if log.collective in COLLECTIVES:
            changes["collective"] = log.collective
        if len(log.sizes):  # the model curves span the measured sizes too
            changes["size_min"] = min(self.scenario().size_min, float(log.sizes.min()))
            changes["size_max"] = max(self.scenario().size_max, float(log.sizes.max()))
        self._log_names[text] = path.name
        self._log_cache = (text, log, "")
        return self.edit(_text=f"Load nccl-tests log {path.name}", **changes)

    def clear_log(self) -> bool:
        if not self.scenario().measured_log:
            return False
        return self.edit(_text="Clear measured log", measured_log="")

    def measured(self) -> comms_sweep.MeasuredLog | None:
        """The scenario's log, parsed and fitted (None without one or when it cannot be read)."""
        text = self.scenario().measured_log
        if not text:
            return None
        if self._log_cache is None or self._log_cache[0] != text:
            try:
                self._log_cache = (text, comms_sweep.analyze_log(text, self.scenario().collective), "")
            except (InputError, ValueError) as exc:
                self._log_cache = (text, None, str(exc))
        return self._log_cache[1]

    def use_fit(self) -> bool:
        """Set link bandwidth and latency per step to the ring model matching the log's fit."""
        log = self.measured()
        params = log.fitted_ring_parameters(self.scenario().collective, log.n_ranks or self.scenario().n_ranks) \
            if log is not None else None
        if params is None:
            self.show_status("No fitted measurement to use: load an nccl-tests log with at least two sizes.")
            return False
        bw, alpha = params
        return self.edit(_text="Use fitted latency and bandwidth", link_bw=bw, alpha=alpha, interconnect="")

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
    def crossover_marker(self) -> float | None:
        """Where the crossover line is drawn (bytes), None when it is not drawn."""
        return self._crossover_value

    def refresh(self) -> None:
        if not hasattr(self, "busbw_chart"):
            return  # called by the base class before the charts exist
        s = self.scenario()
        op = s.collective
        sw = comms_sweep.sweep(op, s.n_ranks, s.link_bw, s.alpha, s.size_min, s.size_max)
        point = comms_sweep.operating_point(op, s.size_bytes, s.n_ranks, s.link_bw, s.alpha)
        log = self.measured()
        self._op = point
        self._sweep = sw
        self._draw_time_chart(s, sw, point, log)
        self._draw_busbw_chart(s, sw, point, log)
        self._fill_results(s, point, log)
        self._update_log_widgets(s, log)

    def _draw_time_chart(self, s, sw, point, log) -> None:
        c = self.chart
        c.clear_series()
        c.clear_reference_lines()
        c.set_title(f"{_label(s.collective).capitalize()} time, {s.n_ranks:,} ranks")
        if sw.tree is not None:
            c.add_series("ring", sw.sizes, sw.ring, color=RING_COLOR)
            c.add_series("tree", sw.sizes, sw.tree, color=TREE_COLOR)
        else:
            c.add_series("ring (model)", sw.sizes, sw.ring, color=RING_COLOR)
        for i, (name, other) in enumerate(self._comparison):
            try:
                osw = comms_sweep.sweep(other.collective, other.n_ranks, other.link_bw, other.alpha,
                                        s.size_min, s.size_max)
            except ValueError:
                continue
            c.add_series(name, osw.sizes, osw.best, color=COMPARISON_COLORS[i % len(COMPARISON_COLORS)],
                         style="dash" if i % 2 == 0 else "dot")
        if log is not None and len(log.sizes):
            c.add_series("measured (out-of-place)", log.sizes, log.times, color=MEASURED_COLOR, symbol="o",
                         width=1.0)
            xs, ys = log.fit_curve(sw.sizes)  # the sweep spans the log's sizes once loaded
            if log.fit is not None and len(xs):
                c.add_series(f"fit: {si_label(log.fit.alpha, 's')} + S / {si_label(log.fit.bandwidth, 'B/s')}",
                             xs, ys, color=MEASURED_COLOR, style="dash")
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
        c.set_operating_point(point.size_bytes, point.best_time,
                              f"{_size_text(point.size_bytes)}: {si_label(point.best_time, 's')}"
                              + (f" ({point.best_algorithm})" if sw.tree is not None else ""))
        c.getPlotItem().getViewBox().enableAutoRange()

    def _draw_busbw_chart(self, s, sw, point, log) -> None:
        c = self.busbw_chart
        c.clear_series()
        c.clear_reference_lines()
        if sw.tree_busbw is not None:
            c.add_series("ring", sw.sizes, sw.ring_busbw, color=RING_COLOR)
            c.add_series("tree", sw.sizes, sw.tree_busbw, color=TREE_COLOR)
        else:
            c.add_series("ring (model)", sw.sizes, sw.ring_busbw, color=RING_COLOR)
        if log is not None and len(log.sizes):
            c.add_series("measured", log.sizes, log.busbw, color=MEASURED_COLOR, symbol="o", width=1.0)
        line = c.add_reference_line(s.link_bw, vertical=False, label=f"link bandwidth {si_label(s.link_bw, 'B/s')}",
                                    color=th.current_theme().muted)
        if getattr(line, "label", None) is not None:  # above the line, left of the middle: clear of the curves
            line.label.setPosition(0.3)
            line.label.anchors = [(0, 1), (0, 1)]
            line.label.updatePosition()
        c.set_operating_point(point.size_bytes, point.busbw, si_label(point.busbw, "B/s"))
        vb = c.getPlotItem().getViewBox()
        vb.enableAutoRange()
        top = max([s.link_bw, float(sw.best_busbw.max(initial=0.0))]
                  + ([float(log.busbw.max(initial=0.0))] if log is not None else []))
        vb.setYRange(0.0, top * 1.12, padding=0)  # the link line and the labels stay in view

    def _fill_results(self, s, point, log) -> None:
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
        if log is not None:
            ranks = f"{log.n_ranks:,} ranks" if log.n_ranks else "ranks not listed"
            rows.append(ResultRow("Log: rows parsed, ranks", f"{log.row_count:,} rows, {ranks}", "",
                                  "Result rows read from the log (one per size, each with out-of-place and "
                                  "in-place times), and the ranks its '# Rank N ...' lines list"
                                  + (f"; {len(log.result.skipped)} unreadable line(s) skipped"
                                     if log.result.skipped else "")))
            rows.append(ResultRow("Avg busbw, printed",
                                  f"{log.printed_avg_busbw / GB:.3f}" if log.printed_avg_busbw is not None
                                  else "not printed", "GB/s" if log.printed_avg_busbw is not None else "",
                                  "The log's '# Avg bus bandwidth' line (GB = 1e9 B)"))
            rows.append(ResultRow("Avg busbw, recomputed", f"{log.computed_avg_busbw / GB:.3f}", "GB/s",
                                  "Mean busbw over every printed row, out-of-place and in-place, zero sizes "
                                  "included: how nccl-tests computes its average"))
            if log.fit is not None:
                rows.append(ResultRow("Fitted latency (whole op)", log.fit.alpha, "s",
                                      f"t = α + S/B fitted to the out-of-place times (relative errors), "
                                      f"R² = {log.fit.r2:.3f}. α is the latency of the whole collective"))
                rows.append(ResultRow("Fitted bandwidth (algbw)", log.fit.bandwidth, "B/s",
                                      "B of the fit t = α + S/B: an algorithm bandwidth; × bus factor for busbw"))
            else:
                rows.append(ResultRow("Fit", "not possible", "", log.fit_error))
        self.results.set_rows(rows)
        if len(rows) != self._result_count:
            self._result_count = len(rows)
            self._fit_results_height()

    def _fit_results_height(self) -> None:
        """Give the results table room for every row (up to 45% of the height)."""
        table = self.results
        total = self.center.height()
        if total <= 0:
            return
        want = (table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() + 4
                + table.rowCount() * table.verticalHeader().defaultSectionSize())
        want = min(want, int(total * 0.45))
        self.center.setSizes([total - want, want])

    def showEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            self._fit_results_height()

    def _update_log_widgets(self, s, log) -> None:
        text = s.measured_log
        self.clear_log_button.setEnabled(bool(text))
        params = None
        if log is not None:
            params = log.fitted_ring_parameters(s.collective, log.n_ranks or s.n_ranks)
        self.fit_button.setVisible(log is not None)
        self.fit_button.setEnabled(params is not None)
        if params is not None:
            bw, alpha = params
            self.fit_button.setToolTip(
                f"Set the model to the ring that reproduces the fitted line: link bandwidth "
                f"{units.format_quantity(bw, 'B/s')} (fitted algbw × bus factor), latency per step "
                f"{units.format_quantity(alpha, 's')} (fitted α / ring steps)")
        if not text:
            self.log_label.setText("No measured log. Load the output of all_reduce_perf (or another "
                                   "nccl-tests binary) to compare it with the model.")
        elif log is None:
            error = self._log_cache[2] if self._log_cache else ""
            self.log_label.setText(f"The stored log cannot be read: {error}")
        else:
            name = self._log_names.get(text, "measured log")
            ranks = f", {log.n_ranks} ranks" if log.n_ranks else ""
            what = _label(log.collective) if log.collective else "collective not named"
            more = log.result.other_runs
            runs = f" (the first of {more + 1} runs in the file; the others are not shown)" if more else ""
            self.log_label.setText(f"{name}: {log.row_count} sizes{ranks}, {what}{runs}")
        self.log_label.setStyleSheet(f"color: {th.current_theme().muted};")

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
            "broadcast and reduce. busbw is comparable with the link bandwidth whatever n is.</p>"
            "<p><b>Rules of thumb</b>: NVLink reaches about 80% of its nominal per-direction rate; "
            "expect about 24 GB/s busbw per 200 Gb/s NIC; α is a few µs per step on NVLink and "
            "5-20 µs across nodes.</p>"
            "<p>A loaded log's out-of-place times are fitted with t = α + S/B; "
            "“Use fitted latency and bandwidth” turns that line into the ring model's B and α.</p>"
        )

    def chart_for_export(self) -> QWidget | None:
        """Both charts (time and bus bandwidth, side by side) export together, as shown."""
        return self.charts

    def csv_columns(self) -> list[tuple[str, Sequence]] | None:
        """Model sweep (size, ring and tree time, busbw) plus the measured rows when a log is loaded."""
        s = self.scenario()
        sw = comms_sweep.sweep(s.collective, s.n_ranks, s.link_bw, s.alpha, s.size_min, s.size_max)
        n = len(sw.sizes)
        sizes = [float(x) for x in sw.sizes]
        ring = [float(x) for x in sw.ring]
        tree = [float(x) for x in sw.tree] if sw.tree is not None else [None] * n
        busbw = [float(x) for x in sw.best_busbw]
        log = self.measured()
        if log is None:
            return [("size (B)", sizes), ("ring time (s)", ring), ("tree time (s)", tree), ("busbw (B/s)", busbw)]
        m = len(log.sizes)
        return [
            ("source", ["model"] * n + ["measured (out-of-place)"] * m),
            ("size (B)", sizes + [float(x) for x in log.sizes]),
            ("ring time (s)", ring + [None] * m),
            ("tree time (s)", tree + [None] * m),
            ("busbw (B/s)", busbw + [float(x) for x in log.busbw]),
            ("measured time (s)", [None] * n + [float(x) for x in log.times]),
        ]
