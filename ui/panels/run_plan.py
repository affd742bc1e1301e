"""Run plan panel: the plan itself (model, hardware, parallelism, batch, run) and its one answer.

The panel's scenario *is* the :class:`workbench.plan.RunPlan`. In the window every form edit
becomes a plan edit (``CONTEXT_FIELDS`` and ``context_sink``) and the prediction is the one the
window's document computed (``plan_view().prediction``); standalone, edits go through
:func:`workbench.workspace.edit_plan` (the same rules as the window: a new GPU falls back to a
precision it has, a GPU count keeps each replica's batch, a parameter count alone reshapes the
model) onto the panel's undo stack, and the plan is predicted with the panel's catalog, once
per plan. Either way the numbers are :func:`workbench.analyses.run_plan.analyse`'s, read
through :meth:`PanelBase.analysis` (computed once per change, the document's in a window).

Three charts, all drawn from that analysis and nothing else:

- one training step as a stacked bar, one segment per non-zero term of ``breakdown`` in
  ``TERMS`` order, with a key naming each term and its seconds and a line naming the largest drag;
- memory per GPU (weights, gradients, optimizer state, activations) against the GPU's capacity,
  saying whether it fits, by how much it does not, and what would make it fit;
- the what-if ladder (:func:`workbench.plan.what_if`): each drag removed, MFU before -> after.

No formula lives here: the panel formats what ``workbench`` answers.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

import presets
from ui import theme as th
from ui.charts import BarRect, BarsItem, Chart
from ui.commands import push_scenario_edit
from ui.flow_text import FlowText, key_entry, words
from ui.panel import PanelBase, ResultRow
from ui.plain_text_item import PlainTextItem
from ui.widgets.cap_field import CapField
from ui.widgets.combo_items import set_choices
from workbench import plan as plan_model
from workbench import units
from workbench.analyses.run_plan import RunPlanAnalysis
from workbench.hardware import PRECISION_LABELS, PRECISIONS
from workbench.plan import RECOMPUTE_MODES, ZERO_STAGES, Prediction, RunPlan, WhatIf
from workbench.workspace import DEFAULT_PLAN, edit_plan

#: Readable names of the ZeRO stages and recomputation modes.
ZERO_NAMES: dict[int, str] = {
    0: "ZeRO 0 / plain data parallel",
    1: "ZeRO 1 / shard optimizer state",
    2: "ZeRO 2 / shard gradients too",
    3: "ZeRO 3 / FSDP full shard",
}
RECOMPUTE_NAMES: dict[str, str] = {
    "none": "None (keep all activations)",
    "selective": "Selective (attention core)",
    "op": "Op-level selective (torchtitan)",
    "full": "Full (whole layers)",
}
#: The combo item of the intra-node link that means the GPU's own link (``intra_node`` None).
OWN_LINK = ""
#: The model-preset item of a shape that matches no preset.
CUSTOM = "custom"
#: The what-if ladder shows this many fixes (the largest gains); the CSV has them all.
MAX_WHAT_IF_ROWS = 6
GIB = float(2**30)

STEP_CHART, MEMORY_CHART, WHAT_IF_CHART, ALL_CHARTS = "step", "memory", "what_if", "all"


# -- formatting at the edge (units only, no model) -----------------------------------------------
def _count(value: float) -> str:
    """76128 -> "76.1k", 1.5e12 -> "1.5T"."""
    return units.format_quantity(value, "")


def _percent(fraction: float) -> str:
    """0.5876 -> "58.8%"."""
    return units.format_quantity(fraction, "%")


def _seconds(value: float) -> str:
    return units.format_quantity(value, "s")


def _gib(value: float) -> str:
    """Bytes as GiB with one decimal ("54.7 GiB"): memory is read against a GiB budget."""
    return f"{value / GIB:,.1f} GiB"


def _money(value: float) -> str:
    return f"{value:,.2f}" if abs(value) < 1000 else _count(value)


def _plain(value: float) -> str:
    """Three significant digits without an exponent: 152, 24.5, 2,930."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _nice_step(span: float, ticks: int = 5) -> float:
    """A 1, 2, 5 x 10^k step that cuts ``span`` into about ``ticks`` intervals."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if raw <= m * power:
            return m * power
    return 10.0 * power


def _ticks(top: float, scale: float, fmt) -> list[list[tuple[float, str]]]:
    """Major ticks from 0 to ``top`` (SI value), labelled in ``top / scale`` units by ``fmt``."""
    step = _nice_step(top / scale)
    n = int(math.floor(top / scale / step + 1e-9))
    return [[(k * step * scale, fmt(k * step)) for k in range(n + 1)], []]


#: spaces between a key's entries
KEY_GAP = 3


def _rgb(color: QColor) -> str:
    return QColor(color).name()


class BarChart(Chart):
    """A :class:`Chart` of horizontal bars in a fixed band of rows, with two text blocks under
    the plot (a caption and a key). The panel's items restyle with the chart (theme,
    presentation, export) through ``restyle_hook``."""

    #: px (before presentation scale) for the title, the axis and a band of bars
    MIN_PLOT_HEIGHT = 140

    def __init__(self, parent=None, **kwargs):
        self.restyle_hook = None
        super().__init__(parent, **kwargs)
        plot = self.getPlotItem()
        left = plot.getAxis("left")
        left.setTicks([[], []])
        left.setStyle(showValues=False, tickLength=0)
        left.setWidth(8)
        # whole ticks only: the minor ones drew a dense grid behind the bars
        self.axis("x").setStyle(maxTickLevel=0)
        plot.getViewBox().setMouseEnabled(x=False, y=False)
        self.caption = FlowText()
        self.key = FlowText()
        plot.layout.addItem(self.caption, 4, 0, 1, 3)
        plot.layout.addItem(self.key, 5, 0, 1, 3)
        #: the bars and texts of the drawing on show (the texts: the first of every item made)
        self.bars: list[BarRect] = []
        self.texts: list[pg.TextItem] = []
        #: every bar is drawn by this one item, made once: a redraw gives it new arrays
        self.bar_item = BarsItem.added_to(plot)
        # every text item made, in drawing order: a redraw gives them new values (the ones it
        # does not need are hidden), so a change moves texts instead of making new ones
        self._text_items: list[pg.TextItem] = []
        self._band: tuple | None = None
        #: data units (seconds, bytes, MFU) per view unit along x. The view always shows x from
        #: 0 to 1; a new x_max (every edit that moves the step time or the memory) scales the
        #: content instead of the view: a view's range change re-maps every item through
        #: pyqtgraph's signals (~10% of a toolbar edit), a scale is one transform and the axis
        self._x_scale = 1.0
        self._line_shown: tuple | None = None  # (value, label, colour, ...) of the line on show
        self._line_wanted: tuple | None = None

    def _restyle(self) -> None:
        super()._restyle()
        if self.restyle_hook is not None:  # set before Chart.__init__ restyles the first time
            self.restyle_hook()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        if event is not None:
            self.rewrap(event.size().width())  # before the layout takes the new size
        super().resizeEvent(event)

    def rewrap(self, width: int | None = None) -> None:
        width = (self.width() if width is None else width) - 24
        self.caption.set_wrap_width(width)
        self.key.set_wrap_width(width)
        # the text under the plot never squeezes the bars away: title, axis and a band of bars
        # stay, and the chart asks for the height that needs
        s = th.scale_factor(self.presentation())
        need = int(self.caption.text_height() + self.key.text_height() + self.MIN_PLOT_HEIGHT * s)
        if need != self.minimumHeight():
            self.setMinimumHeight(need)

    def font_pt(self, scale: float = 1.0) -> float:
        return th.BASE_TICK_FONT_PT * scale * th.scale_factor(self.presentation())

    def begin_bars(self) -> None:
        """A redraw starts: the next ``add_bar`` calls make its bars (values, shown together by
        :meth:`end_bars` through the chart's one bar item), the next ``add_text`` calls take
        back the text items of the last drawing, in order; :meth:`end_bars` hides those it did
        not take."""
        self.bars, self.texts = [], []
        self._line_wanted = None

    def end_bars(self) -> None:
        self.bar_item.show_rects(self.bars)
        for item in self._text_items[len(self.texts):]:
            if item.isVisible():
                item.setVisible(False)
        if self._line_wanted is None and self._line_shown is not None:
            self.clear_reference_lines()
            self._line_shown = None

    def reference_line(self, value: float, label: str, color: str) -> pg.InfiniteLine | None:
        """The drawing's one labelled line at ``value``: a new line (returned, for the caller
        to place its label), or None when the last drawing's is the same and stays."""
        key = (value, label, color, self.theme().background, self.presentation())
        self._line_wanted = key
        if key == self._line_shown:
            return None
        self.clear_reference_lines()
        self._line_shown = key
        return self.add_reference_line(value, label=label, color=color)

    def clear_bars(self) -> None:
        self.begin_bars()
        self.end_bars()

    def add_bar(self, x0: float, width: float, y0: float, height: float, color: QColor,
                pen: QColor | None = None, pen_width: float = 1.0) -> BarRect:
        """A bar of the drawing under way (shown by :meth:`end_bars`); its edge is the theme's
        background unless ``pen`` is given."""
        s = th.scale_factor(self.presentation())
        edge = QColor(pen if pen is not None else self.theme().background)
        bar = BarRect(x0, width, y0, height, QColor(color), edge, pen_width * s)
        self.bars.append(bar)
        return bar

    def add_text(self, text: str, x: float, y: float, anchor, *, bold: bool = False) -> pg.TextItem:
        """A text at (x, y) in data coordinates; its tooltip is cleared (the caller sets one)."""
        size = self.font_pt()
        i = len(self.texts)
        if i < len(self._text_items):
            item = self._text_items[i]
            if item.toPlainText() != text:
                item.setText(text)
            ink = QColor(self.theme().ink)
            if item.color != ink:
                item.setColor(ink)
            font = item.textItem.font()
            if font.pointSizeF() != size or font.bold() != bold:
                font.setPointSizeF(size)
                font.setBold(bold)
                item.setFont(font)
            if tuple(item.anchor) != tuple(anchor):
                item.setAnchor(anchor)
            if item.toolTip():
                item.setToolTip("")
            if not item.isVisible():
                item.setVisible(True)
        else:
            item = PlainTextItem(text, anchor=anchor, color=self.theme().ink)
            font = QFont()
            font.setPointSizeF(size)
            font.setBold(bold)
            item.setFont(font)
            item.setZValue(30)
            self.getPlotItem().addItem(item, ignoreBounds=True)
            self._text_items.append(item)
        item.data_at = (x, y)  # in data units: placed again when the scale changes
        self._place_text(item)
        self.texts.append(item)
        return item

    def _place_text(self, item) -> None:
        at = QPointF(*self.to_view(*item.data_at))
        if item.pos() != at:
            item.setPos(at)

    def to_view(self, x: float, y: float) -> tuple[float, float]:
        return x / self._x_scale, y

    def from_view(self, vx: float, vy: float) -> tuple[float, float]:
        return vx * self._x_scale, vy

    def set_band(self, x_max: float, rows: int = 1, top: float = 0.55, *, ticks=None) -> None:
        """x from 0 to ``x_max``; ``rows`` rows of bars, row i centred at y = -i; ``top`` room
        above the first row's centre; ``ticks`` the x axis' ticks in data units, as
        ``AxisItem.setTicks`` takes them (None: automatic ones)."""
        if x_max != self._x_scale and x_max > 0:
            self._set_x_scale(x_max)
        self.axis("x").setTicks(None if ticks is None else [[(self.to_view(v, 0.0)[0], text) for v, text in level]
                                                            for level in ticks])
        band = (rows, top)
        if band == self._band:
            return  # the same rows: setting them again costs a range-change round
        self._band = band
        vb = self.getPlotItem().getViewBox()
        vb.setRange(xRange=(0.0, 1.0), yRange=(-(rows - 1) - 0.55, top), padding=0.0)

    def _set_x_scale(self, scale: float) -> None:
        """Show x from 0 to ``scale`` data units in the view's fixed 0 to 1: the bars' item
        scaled, the texts and lines placed again, the axis' ticks and their prefix worked out
        for the real values."""
        self._x_scale = scale
        self.bar_item.set_x_scale(scale)
        for text in self.texts:
            self._place_text(text)
        for entry in self._lines:
            self._position_line(entry)
        axis = self.axis("x")
        axis.setScale(scale)
        if axis.autoSIPrefix:
            axis.updateAutoSIPrefix()


class RunPlanPanel(PanelBase):
    """Run plan: the whole training run as one value, and what the model predicts for it."""

    kind = "run_plan"
    title = "Run plan"
    _drawing_chart = False  # a chart's drawing is under way (_draw_chart)
    #: the window saves the plan itself (it is the workspace's plan, not a panel scenario)
    saves_scenario = False

    #: every RunPlan field the form edits; in the window each edit is a plan edit
    CONTEXT_FIELDS = {name: name for name in (
        "n_params", "n_layers", "d_model", "n_heads", "n_kv_heads", "d_ffn", "vocab_size", "seq_len",
        "hardware", "n_gpus", "gpus_per_node", "intra_node", "inter_node", "precision",
        "tp", "pp", "cp", "vp", "zero", "sequence_parallel",
        "global_batch", "micro_batch", "recompute",
        "train_tokens", "power_cap_w", "pue", "grid_g_per_kwh", "energy_price_per_kwh", "gpu_hour_price",
    )}

    def __init__(self, catalog, scenario: RunPlan | None = None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        self._models = presets.load_models()
        links = presets.load_interconnects()
        self._intra_links = [link for link in links if not link.key.startswith("nic")]
        self._inter_links = [link for link in links if link.key.startswith("nic")]
        self._shown: RunPlanAnalysis | None = None  # the analysis the charts and results show
        self._problem = ""
        self._drawn: tuple | None = None
        self._what_if_drawn: tuple[int, float] | None = None
        self._export_target = STEP_CHART
        self._form_ready = False
        self._synced: set[str] = set()  # fields set from the plan at least once
        super().__init__(scenario if scenario is not None else DEFAULT_PLAN, parent, undo_stack=undo_stack)
        self.action_override.setVisible(False)  # this panel IS the plan: nothing to override
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # messages name the user's presets
        self._build_form()
        self._build_measured_banner()
        self._form_ready = True
        self._build_charts()
        if hasattr(catalog, "changed"):
            catalog.changed.connect(self._on_catalog_changed)
        self._sync_fields()
        self.refresh()

    # -- a measured throughput in the plan ---------------------------------------------------
    def _build_measured_banner(self) -> None:
        """The line under the toolbar that says the plan's step is a measured throughput's, with
        the way back to the model's."""
        self.measured_banner = QFrame(self)
        self.measured_banner.setObjectName("measuredBanner")
        row = QHBoxLayout(self.measured_banner)
        row.setContentsMargins(8, 3, 8, 3)
        self.measured_label = QLabel(self.measured_banner)
        self.measured_label.setObjectName("measuredBannerText")
        self.measured_label.setTextFormat(Qt.TextFormat.PlainText)  # the source is a file's name: data
        self.measured_label.setWordWrap(True)
        self.use_model_button = QPushButton("Use the model again", self.measured_banner)
        self.use_model_button.setObjectName("useModelButton")
        self.use_model_button.setToolTip("Forget the measured throughput: the step, days, energy and cost are "
                                         "predicted from the model again (one undo step)")
        self.use_model_button.clicked.connect(self.use_model_again)
        row.addWidget(self.measured_label, 1)
        row.addWidget(self.use_model_button)
        self.measured_banner.setVisible(False)
        self.layout().insertWidget(1, self.measured_banner)  # under the toolbar's row

    def measured_text(self) -> str:
        """What the measured-throughput line says ("" when the plan is the model's)."""
        s: RunPlan = self._scenario
        if s.measured_tokens_per_s is None:
            return ""
        a = self.analysis()
        source = f" from {s.measured_source}" if s.measured_source else ""
        text = (f"Measured throughput{source}: {_count(s.measured_tokens_per_s)} tokens/s "
                f"({_count(a.measured_tokens_per_s_per_gpu)} per GPU) sets the step, not the model.")
        if a.model_tokens_per_s is not None:
            text += f" The model predicts {_count(a.model_tokens_per_s)} tokens/s."
        return text

    def _sync_measured(self) -> None:
        shown = self._scenario.measured_tokens_per_s is not None
        if shown:
            text = self.measured_text()
            if self.measured_label.text() != text:  # a word-wrapped label: a new text relays out
                self.measured_label.setText(text)
            sheet = f"#measuredBanner {{ background: {th.current_theme().notice_bg}; }}"
            if self.measured_banner.styleSheet() != sheet:  # a new sheet restyles the banner
                self.measured_banner.setStyleSheet(sheet)
        self.measured_banner.setVisible(shown)

    def use_model_again(self) -> bool:
        """Clear the plan's measured throughput (one undo step): the step is predicted again."""
        if self._scenario.measured_tokens_per_s is None:
            return False
        changes = {"measured_tokens_per_s": None, "measured_source": ""}
        text = "Use the model's throughput again"
        if self.context_sink is not None:
            try:
                return bool(self.context_sink({**changes, "_text": text}))
            except ValueError as exc:
                self.show_status(str(exc))
                return False
        return self.edit(_text=text, _merge=False, **changes)

    # -- form --------------------------------------------------------------------------------
    def _build_form(self) -> None:
        self.add_section("Model")
        self.preset_combo = QComboBox(self.form_widget)
        self.preset_combo.setObjectName("modelPreset")
        for shape in self._models:
            self.preset_combo.addItem(shape.name, shape.key)
            self.preset_combo.setItemData(self.preset_combo.count() - 1,
                                          f"<b>{html.escape(shape.name)}</b><br>Source: {html.escape(shape.source)}",
                                          Qt.ItemDataRole.ToolTipRole)
        self.preset_combo.addItem("Custom", CUSTOM)
        self.preset_combo.setItemData(self.preset_combo.count() - 1,
                                      "A shape of your own: edit the fields below", Qt.ItemDataRole.ToolTipRole)
        self.preset_combo.setToolTip("A published model shape: picking one sets every field below (one undo step)")
        self.preset_combo.activated.connect(self._on_preset_activated)
        self.form.addRow("Preset", self.preset_combo)
        self.add_quantity_field("n_params", "Parameters", unit="", minimum=0, min_inclusive=False,
                                description="Parameter count N, e.g. 70B. Typed alone it rescales the layers "
                                            "and width in the model's proportions")
        self.add_int_field("n_layers", "Layers", description="Transformer layers")
        self.add_int_field("d_model", "Width (d_model)", description="Hidden size: heads x head size")
        self.add_int_field("n_heads", "Attention heads", description="Query heads per layer")
        self.add_int_field("n_kv_heads", "KV heads", description="Key/value heads (fewer than the heads: GQA)")
        self.add_int_field("d_ffn", "MLP width (d_ffn)", description="Inner width of each layer's MLP")
        self.add_int_field("vocab_size", "Vocabulary", minimum=0,
                           description="Tokens in the vocabulary (embedding and output head)")
        self.add_int_field("seq_len", "Sequence length", description="Tokens per training sequence")

        self.add_section("Hardware")
        self.hardware_combo = QComboBox(self.form_widget)
        self.hardware_combo.setObjectName("field.hardware")
        self.hardware_combo.setToolTip("The GPU every rank runs on (the project's presets included)")
        self.hardware_combo.activated.connect(
            lambda i: self._field_edited("hardware", self.hardware_combo.itemData(i)))
        self.form.addRow("GPU", self.hardware_combo)
        self._bindings["hardware"] = (self.hardware_combo, "choice")
        self._fill_hardware()
        self.add_int_field("n_gpus", "GPUs", maximum=RunPlan.MAX_GPUS,
                           description="GPUs in the job; the global batch keeps each replica's share")
        self.add_int_field("gpus_per_node", "GPUs per node", description="GPUs that share the node link")
        self.intra_combo = QComboBox(self.form_widget)
        self.intra_combo.setObjectName("field.intra_node")
        self.intra_combo.setToolTip("The link between GPUs inside a node")
        self.intra_combo.addItem("GPU's own link", OWN_LINK)
        self.intra_combo.setItemData(0, "The GPU preset's own interconnect (NVLink on SXM boards)",
                                     Qt.ItemDataRole.ToolTipRole)
        for link in self._intra_links:
            self._add_link_item(self.intra_combo, link)
        self.intra_combo.activated.connect(self._on_intra_activated)
        self.form.addRow("Node link", self.intra_combo)
        self._bindings["intra_node"] = (self.intra_combo, "choice")
        self.inter_combo = QComboBox(self.form_widget)
        self.inter_combo.setObjectName("field.inter_node")
        self.inter_combo.setToolTip("Each GPU's network link to other nodes")
        for link in self._inter_links:
            self._add_link_item(self.inter_combo, link)
        self.inter_combo.activated.connect(lambda i: self._field_edited("inter_node", self.inter_combo.itemData(i)))
        self.form.addRow("Network", self.inter_combo)
        self._bindings["inter_node"] = (self.inter_combo, "choice")
        self.add_choice("precision", [(PRECISION_LABELS[p], p) for p in PRECISIONS], "Precision")
        self.field("precision").setToolTip("Training precision: the dense peak MFU refers to (those the GPU has)")

        self.add_section("Parallelism")
        self.add_int_field("tp", "Tensor parallel (tp)", description="GPUs splitting each weight matrix")
        self.add_int_field("pp", "Pipeline stages (pp)", description="Stages the layers are split into")
        self.add_int_field("cp", "Context parallel (cp)", description="GPUs splitting each sequence")
        self.add_int_field("vp", "Virtual stages (vp)", description="Interleaved chunks per pipeline stage")
        self.add_choice("zero", [(ZERO_NAMES[z], z) for z in ZERO_STAGES], "ZeRO stage")
        self.field("zero").setToolTip("How the training state is sharded across the data-parallel replicas")
        box = self.add_check("sequence_parallel", "Sequence parallelism")
        box.setToolTip("Split the norms and dropout of the tensor-parallel group along the sequence (needs tp > 1)")

        self.add_section("Batch")
        self.add_int_field("global_batch", "Global batch", description="Sequences per optimizer step, all replicas")
        self.add_int_field("micro_batch", "Micro-batch", description="Sequences per forward/backward pass")
        self.add_choice("recompute", [(RECOMPUTE_NAMES[m], m) for m in RECOMPUTE_MODES], "Recompute")
        self.field("recompute").setToolTip("Activations recomputed in the backward pass instead of kept")

        self.add_section("Run")
        self.add_quantity_field("train_tokens", "Training tokens", unit="", minimum=0, min_inclusive=False,
                                description="Tokens the whole run trains on, e.g. 15T")
        self.cap_field = CapField(
            self.form_widget, label="Power cap", minimum=0, min_inclusive=False,
            description="The GPU power limit (nvidia-smi -pl). Empty or 'uncapped' means the TDP")
        self.cap_field.setObjectName("field.power_cap_w")
        self.cap_field.valueEdited.connect(lambda value: self._field_edited("power_cap_w", value))
        self.cap_field.uncapped.connect(lambda: self._field_edited("power_cap_w", None))
        self.form.addRow("Power cap", self.cap_field)
        self._bindings["power_cap_w"] = (self.cap_field, "quantity")
        self.add_quantity_field("pue", "PUE", unit="", minimum=1, maximum=5,
                                description="Power usage effectiveness: facility energy / IT energy")
        self.add_quantity_field("grid_g_per_kwh", "Grid (gCO2e/kWh)", unit="", minimum=0,
                                description="Carbon intensity of the grid, grams CO2e per kWh")
        self.add_quantity_field("energy_price_per_kwh", "Energy price / kWh", unit="", minimum=0,
                                description="Price of one kWh of facility energy")
        self.add_quantity_field("gpu_hour_price", "GPU-hour price", unit="", minimum=0,
                                description="Rental or amortised price of one GPU for one hour (0: not set)")
        for combo in (self.preset_combo, self.hardware_combo, self.intra_combo, self.inter_combo,
                      self.field("zero"), self.field("recompute")):
            # long names must not widen the inputs column (the popup shows them whole)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)

    @staticmethod
    def _add_link_item(combo: QComboBox, link) -> None:
        combo.addItem(link.name, link.key)
        tip = (f"<b>{html.escape(link.name)}</b>: {html.escape(units.format_quantity(link.bw_per_direction, 'B/s'))} "
               f"per direction<br>Source: {html.escape(link.source)}")
        combo.setItemData(combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)

    def _fill_hardware(self) -> None:
        choices = [(hw.name, hw.key, html.escape(hw.name)) for hw in self.catalog.items()]
        key = getattr(self._scenario, "hardware", None)
        if key is not None and key not in self.catalog:
            choices.append((f"{key} (not in the catalog)", key, None))
        set_choices(self.hardware_combo, choices)

    def _hardware(self):
        key = self._scenario.hardware
        return self.catalog.get(key) if key in self.catalog else None

    def _fill_precisions(self) -> None:
        """The precisions the GPU has a rate for (and the plan's own, marked, if it has none)."""
        self.fill_precision_choices(self._hardware())

    def _ensure_link_item(self, combo: QComboBox, key: str) -> None:
        if combo.findData(key) < 0:
            combo.addItem(f"{key} (unknown link)", key)

    def _sync_field(self, name: str) -> None:
        self._synced.add(name)
        if name == "intra_node":
            key = self._scenario.intra_node or OWN_LINK
            self._ensure_link_item(self.intra_combo, key)
            self.intra_combo.setCurrentIndex(self.intra_combo.findData(key))
            return
        if name == "inter_node":
            self._ensure_link_item(self.inter_combo, self._scenario.inter_node)
        super()._sync_field(name)

    def _sync_fields(self) -> None:
        if not self._form_ready:
            return  # still building the form
        if self.hardware_combo.findData(self._scenario.hardware) < 0:
            self._fill_hardware()
        self._fill_precisions()
        for name in self._bindings:
            if not self._shows(name):
                self._sync_field(name)
        self._sync_preset()
        self._sync_labels()

    def _shows(self, name: str) -> bool:
        """Whether field ``name`` shows the plan's value already, untouched (no error, nothing
        typed into it): a plan edit changes a few of the thirty fields, and setting the others
        again only formatted and set the same text."""
        if name not in self._synced:
            return False  # never set: it shows its placeholder, not the plan's value
        widget, kind = self._bindings[name]
        value = getattr(self._scenario, name)
        if kind == "quantity":
            return widget.value() == value and not widget.error() and not widget.edit.isModified()
        if kind == "choice":
            return widget.currentData() == (value or OWN_LINK if name == "intra_node" else value)
        if kind == "check":
            return widget.isChecked() == bool(value)
        return False

    def _sync_preset(self) -> None:
        shape = plan_model.shape_of(self._scenario)
        key = next((m.key for m in self._models if m.fields() == shape), CUSTOM)
        self.preset_combo.setCurrentIndex(self.preset_combo.findData(key))

    def _sync_labels(self) -> None:
        currency = self._scenario.currency
        for name, text in (("energy_price_per_kwh", f"Energy ({currency}/kWh)"),
                           ("gpu_hour_price", f"GPU-hour ({currency})")):
            label = self.form.labelForField(self.field(name))
            if label is not None and label.text() != text:  # a new text relays the form out
                label.setTextFormat(Qt.TextFormat.PlainText)  # the currency is the user's text
                label.setText(text)
        tp_many = self._scenario.tp > 1
        box = self.field("sequence_parallel")
        enabled = tp_many or self._scenario.sequence_parallel
        if box.isEnabled() != enabled:
            box.setEnabled(enabled)

    def _on_catalog_changed(self) -> None:
        self._fill_hardware()
        self._sync_fields()
        if self.context_sink is None:
            # in a window the document predicts the plan again and this panel draws it then
            # (plan_followed), once; while a project opens, once its workspace is back
            self.refresh()

    def _on_intra_activated(self, index: int) -> None:
        key = self.intra_combo.itemData(index)
        self._field_edited("intra_node", None if key == OWN_LINK else key)

    def _on_preset_activated(self, index: int) -> None:
        key = self.preset_combo.itemData(index)
        shape = next((m for m in self._models if m.key == key), None)
        if shape is None:  # "Custom": the fields below are the user's to edit
            self.field("n_params").setFocus()
            return
        self.apply_model(shape.key)

    def apply_model(self, key: str) -> bool:
        """Set the whole model shape of preset ``key`` as one edit named after the preset."""
        shape = next(m for m in self._models if m.key == key)
        text = f"Use the {shape.name} model"
        fields = shape.fields()
        if self.context_sink is not None:
            try:
                changed = bool(self.context_sink({**fields, "_text": text}))
            except ValueError as exc:
                self.show_validation_error(exc, fields)
                self._sync_preset()
                return False
            self._sync_preset()
            return changed
        applied = self.edit(_text=text, _merge=False, **fields)
        self._sync_preset()
        return applied

    # -- editing -----------------------------------------------------------------------------
    def _lookup(self, key: str):
        return self.catalog.get(key) if key in self.catalog else None

    def edit(self, *, _text: str | None = None, _merge: bool = True, **changes: Any) -> bool:
        """As :meth:`PanelBase.edit`, by the plan's own editing rules
        (:func:`workbench.workspace.edit_plan`, as the window applies them)."""
        try:
            new = edit_plan(self._scenario, self._lookup, **changes)
        except ValueError as exc:
            self.show_validation_error(exc, changes)
            return False
        for name in changes:
            self._clear_field_error(name)
        push_scenario_edit(self._stack, self, new, _text, mergeable=_merge)
        return True

    def show_validation_error(self, exc: ValueError, changes: dict[str, Any] | None = None) -> None:
        """The model's message next to the field the user edited (a tp that does not divide
        the GPUs is the tp field's problem, though the plan names the GPU count)."""
        changes = {k: v for k, v in (changes or {}).items() if not k.startswith("_")}
        parameter = getattr(exc, "parameter", None)
        if len(changes) == 1:
            name = next(iter(changes))
        elif parameter in changes:
            name = parameter
        else:
            name = None
        message = self._readable(str(exc), name)
        if name in self._bindings and self._bindings[name][1] == "quantity":
            self._bindings[name][0].show_error(message, getattr(self._scenario, name, None))
            return
        if name in self._bindings:
            self._sync_field(name)  # a combo or check box goes back to the plan's value
        self.show_status(message)

    def _readable(self, message: str, edited: str | None) -> str:
        """"tp: must divide ..." -> "Must divide ..." at the tp field; another field's name
        becomes its label ("GPUs: tp x pp x cp = 3 ..." at the tp field)."""
        names = set(RunPlan.field_names())
        head, sep, rest = message.partition(": ")
        if sep and head == edited:  # the window's path may put the edited field's name in front
            message = rest
            head, sep, rest = message.partition(": ")
        if sep and head in names:
            if head == edited:
                message = rest
            else:
                widget = self.field(head)
                label = self.form.labelForField(widget) if widget is not None else None
                message = f"{label.text() if label is not None else head}: {rest}"
        return message[:1].upper() + message[1:]

    # -- the plan and its answer -------------------------------------------------------------
    def plan(self) -> RunPlan:
        return self._scenario

    def prediction(self) -> Prediction | None:
        """The prediction on show (None when the plan cannot be predicted: see :meth:`problem`)."""
        self.ensure_drawn()
        return self._shown.prediction if self._shown is not None else None

    def problem(self) -> str:
        return self._problem

    def blocking_problem(self) -> str:
        return self._problem or super().blocking_problem()

    def plan_followed(self) -> None:
        """Same plan, new answer (the catalog changed under the window's document)."""
        self.refresh()

    def what_if_rows(self) -> list[WhatIf]:
        """The what-if ladder of the prediction on show, largest MFU gain first."""
        return list(self._shown.what_if) if self._shown is not None else []

    # -- charts ------------------------------------------------------------------------------
    def _build_charts(self) -> None:
        self.charts_widget = QWidget(self.chart_area)
        self.charts_widget.setObjectName("runPlanCharts")
        column = QVBoxLayout(self.charts_widget)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        self.step_chart = BarChart(title="One training step", x_label="Time in the step", x_unit="s")
        self.memory_chart = BarChart(title="Memory per GPU", x_label="Memory per GPU", x_unit="GiB", x_binary=True)
        self.what_if_chart = BarChart(title="What-if ladder", x_label="MFU", x_unit="")
        self.memory_chart.axis("x").enableAutoSIPrefix(False)
        self.what_if_chart.axis("x").enableAutoSIPrefix(False)
        for name, chart in self.charts().items():
            chart.restyle_hook = lambda name=name: self._restyle_chart(name)
        self.step_chart.setObjectName("stepChart")
        self.memory_chart.setObjectName("memoryChart")
        self.what_if_chart.setObjectName("whatIfChart")
        self.step_chart.enable_hover(formatter=self._step_hover)
        self.memory_chart.enable_hover(formatter=self._memory_hover)
        self.what_if_chart.getPlotItem().getViewBox().sigResized.connect(self._on_what_if_resized)
        column.addWidget(self.step_chart, 5)
        row = QHBoxLayout()
        row.setSpacing(0)
        row.addWidget(self.memory_chart, 1)
        row.addWidget(self.what_if_chart, 1)
        column.addLayout(row, 6)
        # each chart keeps the height its bars and text need; where the panel is shorter than
        # that (a laptop, presentation mode) the charts scroll instead of being squeezed
        self.chart_scroll = QScrollArea(self.chart_area)
        self.chart_scroll.setObjectName("runPlanChartScroll")
        self.chart_scroll.setWidget(self.charts_widget)
        self.chart_scroll.setWidgetResizable(True)
        self.chart_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.chart_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.add_chart(self.chart_scroll)

    def charts(self) -> dict[str, BarChart]:
        return {STEP_CHART: self.step_chart, MEMORY_CHART: self.memory_chart, WHAT_IF_CHART: self.what_if_chart}

    def chart_for_export(self) -> QWidget | None:
        """The step chart (the one picture of where the time goes), or the chart an
        ``export_to(..., chart=...)`` asked for."""
        return {**self.charts(), ALL_CHARTS: self.charts_widget}[self._export_target]

    def _restyle_chart(self, name: str) -> None:
        """Theme, presentation or export changed this chart: its bars, labels and text follow."""
        if self._drawn is not None:
            self._draw_chart(name)

    def step_segments(self) -> list[tuple[str, str, float]]:
        """(term, label, seconds) of each segment of the step bar, in ``TERMS`` order."""
        a = self._shown
        return [(seg.term, seg.label, seg.seconds) for seg in a.segments] if a is not None else []

    def _term_colors(self, theme: th.Theme) -> dict[str, QColor]:
        return {term: theme.series_color(i) for i, (term, _l, _s) in enumerate(self.step_segments())}

    def largest_drag_text(self) -> str:
        a = self._shown
        if a is None or a.prediction is None:
            return ""
        drag = a.largest_drag
        if drag is None:
            return "No drag: the step is all compute"
        return f"Largest drag: {drag.label}, {_seconds(drag.seconds)} per step ({_percent(drag.share)} of it)"

    def memory_summary(self) -> str:
        """"Fits: 54.7 GiB of 74.5 GiB per GPU" or "Over by 98.0 GiB: ..." ("" without an answer)."""
        a = self._shown
        if a is None or a.prediction is None:
            return ""
        if a.memory_capacity is None:
            return f"{_gib(a.memory_total)} per GPU (the preset gives no memory size)"
        if a.memory_fits:
            return (f"Fits: {_gib(a.memory_total)} of {_gib(a.memory_capacity)} per GPU "
                    f"({_gib(a.memory_spare)} spare)")
        return f"Over by {_gib(a.memory_shortfall)}: {_gib(a.memory_total)} needed, {_gib(a.memory_capacity)} per GPU"

    def memory_fix_lines(self) -> list[str]:
        """What would make the plan fit, as ``predict`` found it (empty when it fits)."""
        a = self._shown
        if a is None or a.prediction is None or a.memory_fits:
            return []
        if not a.memory_fixes:
            return ["No single change, nor a chain of up to four, fits it: add GPUs or pick a GPU with more memory."]
        head = "This change fits it:" if len(a.memory_fixes) == 1 else "Each of these fits it:"
        return [head, *(f"• {fix}" for fix in a.memory_fixes)]

    def _step_hover(self, x: float, _y: float) -> str:
        start = 0.0
        for _term, label, seconds in self.step_segments():
            if start <= x <= start + seconds:
                return f"{label}\n{_seconds(seconds)}"
            start += seconds
        return f"{_seconds(max(x, 0.0))} into the step"

    def _memory_hover(self, x: float, _y: float) -> str:
        a = self._shown
        if a is None or a.prediction is None:
            return ""
        start = 0.0
        for part in a.memory_parts:
            if start <= x <= start + part.bytes:
                return f"{part.label}\n{_gib(part.bytes)}"
            start += part.bytes
        return _gib(max(x, 0.0))

    def _draw(self) -> None:
        self._drawn = (self._shown, th.current_theme().name, self.step_chart.presentation())
        for name in self.charts():
            self._draw_chart(name)

    def _draw_chart(self, name: str, *, again: bool = True) -> None:
        chart = self.charts()[name]
        self._drawing_chart = True
        chart.begin_bars()
        try:
            self._draw_chart_items(name, chart)
        finally:
            chart.end_bars()
            self._drawing_chart = False
        if again and name == WHAT_IF_CHART and self._what_if_room_changed():
            # its caption, laid out during the drawing, gave the ladder another height: once
            # more for the new room (not from inside the drawing, see _on_what_if_resized)
            self._draw_chart(WHAT_IF_CHART, again=False)

    def _draw_chart_items(self, name: str, chart: BarChart) -> None:
        a = self._shown
        if a is not None and a.prediction is not None:
            {STEP_CHART: self._draw_step, MEMORY_CHART: self._draw_memory, WHAT_IF_CHART: self._draw_what_if}[name](a)
            return
        if name == WHAT_IF_CHART:
            self._what_if_drawn = None
        chart.set_title({STEP_CHART: "One training step", MEMORY_CHART: "Memory per GPU",
                         WHAT_IF_CHART: "What-if ladder"}[name])
        theme = chart.theme()
        chart.caption.set_paragraphs([words("No prediction: " + self._problem, theme.error)], theme.ink,
                                     chart.font_pt())
        chart.key.set_paragraphs([], theme.ink, chart.font_pt())
        chart.set_band(1.0)
        chart.rewrap()

    def _draw_step(self, a: RunPlanAnalysis) -> None:
        chart = self.step_chart
        p = a.prediction
        theme = chart.theme()
        colors = self._term_colors(theme)
        chart.set_title(f"One training step: {_seconds(p.step_time_s)}")
        drag = a.largest_drag.term if a.largest_drag is not None else ""
        start = 0.0
        mid = None
        entries = []
        for seg in a.segments:
            is_drag = seg.term == drag
            chart.add_bar(start, seg.seconds, -0.32, 0.64, colors[seg.term],
                          pen=QColor(theme.ink) if is_drag else None, pen_width=2.0 if is_drag else 1.0)
            entries.append(key_entry(_rgb(colors[seg.term]), f"{seg.label} {_seconds(seg.seconds)} ({_percent(seg.share)})",
                                     bold=is_drag))
            if is_drag:
                mid = start + seg.seconds / 2.0
            start += seg.seconds
        if mid is not None:
            # the drag may be a sliver of the bar: a marker above it says where
            chart.add_text("▼", mid, 0.32, (0.5, 1.0), bold=True)
        chart.set_band(p.step_time_s * 1.005)
        chart.caption.set_paragraphs([words(self.largest_drag_text(), bold=True)], theme.ink, chart.font_pt())
        chart.key.set_paragraphs([entries], theme.ink, chart.font_pt(), gap=KEY_GAP)
        chart.rewrap()

    def _draw_memory(self, a: RunPlanAnalysis) -> None:
        chart = self.memory_chart
        theme = chart.theme()
        start = 0.0
        entries = []
        for i, part in enumerate(a.memory_parts):
            color = theme.series_color(i)
            if part.bytes > 0:
                chart.add_bar(start, part.bytes, -0.32, 0.64, color)
            entries.append(key_entry(_rgb(color), f"{part.label} {_gib(part.bytes)}"))
            start += part.bytes
        capacity = a.memory_capacity
        top = max(a.memory_total, capacity or 0.0) * 1.1 or 1.0
        if capacity is not None:
            color = theme.error if not a.memory_fits else theme.ink
            line = chart.reference_line(capacity, f"{_gib(capacity)}", color)
            if line is not None and getattr(line, "label", None) is not None:
                # the label left of the line: it sits near the right edge
                line.label.anchors = [(1.0, 0.0), (1.0, 0.0)]
                line.label.setPosition(0.98)
                fill = QColor(theme.background)
                fill.setAlpha(210)
                line.label.fill = pg.mkBrush(fill)  # readable where it crosses a bar
        ticks = _ticks(top, GIB, lambda v: f"{v:g}")
        chart.set_band(top, top=0.9, ticks=ticks)  # room above the bar for the capacity label
        fits_color = theme.error if not a.memory_fits else theme.ink
        lines = [words(self.memory_summary(), _rgb(fits_color), bold=True)]
        lines += [words(line) for line in self.memory_fix_lines()]
        chart.set_title("Memory per GPU")
        chart.caption.set_paragraphs(lines, theme.ink, chart.font_pt())
        chart.key.set_paragraphs([entries], theme.ink, chart.font_pt(), gap=KEY_GAP)
        chart.rewrap()

    def _what_if_room(self) -> tuple[int, float]:
        """(rows that fit, text width in px) of the what-if chart at its present size: each row
        is a line of text over a thin bar."""
        chart = self.what_if_chart
        vb = chart.getPlotItem().getViewBox()
        font = QFont()
        font.setPointSizeF(chart.font_pt())
        line = QFontMetricsF(font).height()
        height, width = vb.height(), vb.width()
        rows = MAX_WHAT_IF_ROWS if height <= 0 else max(1, min(MAX_WHAT_IF_ROWS, int(height // (line * 2.0))))
        return rows, max(60.0, width - 8.0)

    def _what_if_room_changed(self) -> bool:
        a = self._shown
        return (a is not None and a.prediction is not None and self._what_if_drawn is not None
                and self._what_if_room() != self._what_if_drawn)

    def _on_what_if_resized(self, *_args) -> None:
        if self._drawing_chart:
            return  # the drawing under way checks its room when it ends (_draw_chart)
        if self._what_if_room_changed():
            self._draw_chart(WHAT_IF_CHART)

    def _draw_what_if(self, a: RunPlanAnalysis) -> None:
        chart = self.what_if_chart
        theme = chart.theme()
        p = a.prediction
        rows = a.what_if
        fit, width = self._what_if_room()
        self._what_if_drawn = (fit, width)
        shown = rows[:fit]
        colors = self._term_colors(theme)
        base = QColor(theme.muted)
        base.setAlphaF(0.45)
        top = max([p.mfu, *(w.mfu for w in shown)]) * 1.08 or 1.0
        # the axis ends at its next whole tick: an edit that moves the MFU a little keeps the
        # axis, its ticks and its grid as they were (they are recorded and painted again only
        # when the axis changes)
        step = _nice_step(top * 100.0)  # in percent
        top = math.ceil(top * 100.0 / step - 1e-9) * step / 100.0
        chart.set_title("What-if ladder")
        font = QFont()
        font.setPointSizeF(chart.font_pt())
        metrics = QFontMetricsF(font)
        for i, w in enumerate(shown):
            y = -float(i)
            chart.add_bar(0.0, p.mfu, y - 0.45, 0.3, base)
            chart.add_bar(p.mfu, max(w.mfu - p.mfu, 0.0), y - 0.45, 0.3, colors.get(w.term, theme.series_color(i)))
            text = f"{i + 1}. {_percent(p.mfu)} → {_percent(w.mfu)}: {w.fix}"
            shown_text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
            item = chart.add_text(shown_text, 0.0, y - 0.1, (0.0, 1.0))
            item.setToolTip(text)
        chart.set_band(top, max(len(shown), 1), ticks=_ticks(top, 0.01, lambda v: f"{v:g}%"))
        # always one line, so the plot keeps its height whatever the row count
        if not rows:
            note = f"MFU now {_percent(p.mfu)}: nothing to remove, the step is all compute."
        elif len(rows) > len(shown):
            more = len(rows) - len(shown)
            note = f"MFU now {_percent(p.mfu)}; {more} smaller fix{'es' if more > 1 else ''} in the CSV export."
        else:
            note = f"MFU now {_percent(p.mfu)}; largest gain first."
        chart.caption.set_paragraphs([words(note)], theme.muted, chart.font_pt())
        chart.key.set_paragraphs([], theme.ink, chart.font_pt())
        chart.rewrap()

    # -- refresh and results -----------------------------------------------------------------
    def refresh(self) -> None:
        self._sync_labels()
        a = self.analysis()
        problem = self._readable(a.problem, None) if a.problem else ""
        if problem:
            self.show_status(problem)
        elif self._problem:
            self.clear_error()
        if (a is self._shown and self._drawn is not None
                and self._drawn == (a, th.current_theme().name, self.step_chart.presentation())):
            return  # the same answer on show
        self._shown, self._problem = a, problem
        self._sync_measured()
        self._draw()
        self.results.set_rows(self._rows(a))

    def _rows(self, a: RunPlanAnalysis) -> list[ResultRow]:
        p = a.prediction
        s: RunPlan = a.plan
        currency = s.currency
        if p is None:
            return [ResultRow(q, None, "", tip) for q, tip in self._row_specs()]
        tips = dict(self._row_specs())
        if s.gpu_hour_price == 0:
            cost_unit = f"{currency}, energy only (GPU-hour price not set)"
        else:
            cost_unit = (f"{currency} (energy {_money(p.energy_cost)} + GPU-hours {_money(p.compute_cost)})")
        if a.memory_capacity is None:
            fits, fits_note = "unknown", "the preset gives no memory size"
        elif a.memory_fits:
            fits, fits_note = "yes", f"{_gib(a.memory_spare)} spare of {_gib(a.memory_capacity)}"
        else:
            fits, fits_note = "no", f"over by {_gib(a.memory_shortfall)} ({_gib(a.memory_capacity)} per GPU)"
        rows = [
            ResultRow("Tokens/s", _count(p.tokens_per_s), "tokens/s", tips["Tokens/s"]),
            ResultRow("Tokens/s per GPU", _count(p.tokens_per_s_per_gpu), "tokens/s", tips["Tokens/s per GPU"]),
            ResultRow("Step time", p.step_time_s, "s", tips["Step time"]),
            *([ResultRow("Step time, modelled", p.model_step_time_s, "s",
                         "The model's step, which the measured throughput replaces: the step chart's "
                         "measured-vs-model term is the difference")] if p.model_step_time_s else []),
            ResultRow("MFU", _percent(p.mfu).rstrip("%"), f"%, {a.mfu_rating}", tips["MFU"]),
            ResultRow("HFU", _percent(p.hfu).rstrip("%"), "%", tips["HFU"]),
            ResultRow("Training time", _plain(a.train_days), "days", tips["Training time"]),
            ResultRow("GPU-hours", _count(p.gpu_hours), "GPU-h", tips["GPU-hours"]),
            ResultRow("Facility energy", _plain(a.facility_energy_mwh) if a.facility_energy_mwh is not None else "n/a",
                      "MWh" if p.energy_known else "no TDP in the preset", tips["Facility energy"] + f" (PUE {s.pue:g})"),
            ResultRow("Emissions", _plain(a.co2e_t) if a.co2e_t is not None else "n/a",
                      "tCO2e" if p.energy_known else "no TDP in the preset",
                      tips["Emissions"] + f" ({s.grid_g_per_kwh:g} gCO2e/kWh)"),
            ResultRow("Cost", _money(a.cost) if a.cost is not None else "n/a",
                      cost_unit if p.energy_known else f"{currency}, GPU-hours only (no TDP: energy unknown)",
                      tips["Cost"]),
            ResultRow("Memory per GPU", f"{a.memory_total / GIB:,.1f}", "GiB", tips["Memory per GPU"]),
            ResultRow("Fits in memory", fits, fits_note, tips["Fits in memory"]),
        ]
        for note in p.notes:
            # in the stretching column: a long note must not push the numbers off the table
            rows.append(ResultRow("Note", "", note, note))
        return rows

    @staticmethod
    def _row_specs() -> list[tuple[str, str]]:
        return [
            ("Tokens/s", "Tokens the whole job trains per second: global batch x sequence length / step time"),
            ("Tokens/s per GPU", "Tokens per second of the job / GPUs"),
            ("Step time", "Seconds per optimizer step: the sum of the step chart's terms"),
            ("MFU", "Model FLOPs utilisation: (6N + 12 L d T) FLOPs per token x tokens/s / (GPUs x dense peak). "
                    "35-55% is typical of well-tuned large runs, above 60% excellent, below 35% low, "
                    "above 100% impossible"),
            ("HFU", "Hardware FLOPs utilisation: MFU counting the recomputed work too"),
            ("Training time", "Training tokens / tokens per second, in days"),
            ("GPU-hours", "GPUs x training time in hours"),
            ("Facility energy", "GPUs x (GPU power + host power) x training time x PUE"),
            ("Emissions", "Facility energy x grid carbon intensity, tonnes CO2e"),
            ("Cost", "Facility energy x energy price + GPU-hours x GPU-hour price"),
            ("Memory per GPU", "Weights, gradients, optimizer state and activations on the fullest GPU (GiB)"),
            ("Fits in memory", "Whether memory per GPU is within the GPU's capacity"),
        ]

    def result_text(self, quantity: str) -> tuple[str, str]:
        """(value, unit) as displayed in the results row ``quantity``."""
        for q, value, unit in self.results.rows():
            if q == quantity:
                return value, unit
        raise KeyError(quantity)

    # -- export ------------------------------------------------------------------------------
    def export_to(self, fmt: str, path, *, width_px: int = 1920, background="white", chart: str = STEP_CHART):
        """As :meth:`PanelBase.export_to`; ``chart`` picks the picture: "step" (the default),
        "memory", "what_if" or "all" (the three together). The CSV holds all three charts.
        A plan that cannot be predicted exports nothing (ValueError with the reason)."""
        if self._problem:
            raise ValueError(f"{self.title}: {self._problem}")
        if chart == STEP_CHART or fmt == "csv":
            return super().export_to(fmt, path, width_px=width_px, background=background)
        names = (*self.charts(), ALL_CHARTS)
        if chart not in names:
            raise ValueError(f"chart must be one of {', '.join(repr(k) for k in names)}, got {chart!r}")
        self._export_target = chart
        try:
            return super().export_to(fmt, path, width_px=width_px, background=background)
        finally:
            self._export_target = STEP_CHART

    def csv_columns(self) -> list[tuple[str, Sequence]] | None:
        """Every chart's numbers, one row per bar: the step's terms (s), memory per GPU (B)
        and the what-if ladder (MFU as a fraction)."""
        a = self.analysis()
        p = a.prediction
        if p is None:
            return None
        chart, item, seconds, share, size, before, after = [], [], [], [], [], [], []

        def add(c, i, t=None, f=None, b=None, m0=None, m1=None):
            for column, value in ((chart, c), (item, i), (seconds, t), (share, f), (size, b), (before, m0),
                                  (after, m1)):
                column.append(value)

        for seg in a.segments:
            add("step", seg.label, seg.seconds, seg.share)
        add("step", "Step time", p.step_time_s, 1.0)
        for part in a.memory_parts:
            add("memory", part.label, b=part.bytes)
        add("memory", "Total per GPU", b=a.memory_total)
        if a.memory_capacity is not None:
            add("memory", "GPU capacity", b=a.memory_capacity)
        for w in a.what_if:
            add("what-if", w.fix, t=w.saved_s, m0=p.mfu, m1=w.mfu)
        return [
            ("chart", chart), ("item", item), ("time per step (s)", seconds), ("share of the step (fraction)", share),
            ("memory per GPU (B)", size), ("MFU before (fraction)", before), ("MFU after (fraction)", after),
        ]

    # -- explanation -------------------------------------------------------------------------
    def explanation(self) -> str:
        return (
            "<h3>Run plan</h3>"
            "<p>The whole training run as one value (model shape, hardware and links, parallel layout, "
            "batch, recomputation, precision, tokens, power, facility and prices) and what "
            "<code>workbench.plan.predict</code> answers for it: the step time split into its terms "
            "(compute, recomputation, tensor-, context- and data-parallel communication, pipeline "
            "bubble and sends, optimizer, data loading, checkpoints), tokens/s, MFU and HFU, memory "
            "per GPU and whether it fits, days, GPU-hours, energy, CO2e and cost. The what-if ladder "
            "removes each drag in turn (<code>workbench.plan.what_if</code>); the memory fixes are the "
            "single changes (or the shortest chain) that bring the plan within the GPU's memory.</p>"
            "<p>Every term's formula, and the source of each constant, is documented in "
            "<code>workbench.plan</code>; this panel only draws what it answers. Every other panel "
            "reads the same prediction.</p>"
        )


__all__ = ["RunPlanPanel", "BarChart", "ZERO_NAMES", "RECOMPUTE_NAMES"]
