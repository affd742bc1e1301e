"""Power and carbon panel: what a GPU power cap costs in speed and saves in energy, and the
energy, emissions and cost of the planned training run.

Every number comes from ``workbench.analyses.power``: :func:`~workbench.analyses.power.analyse`
(the cap sweep, the planned run, the whole footprint), read once per change through
:meth:`PanelBase.analysis`, and :func:`~workbench.analyses.power.where` (the run on every grid
region, the best start) when the Where and when tab needs it. This module only lays out inputs,
draws what it gets and formats it. Region and PUE presets (with their sources) come from
``presets``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QFontDatabase, QFontMetricsF, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSlider,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

import presets
from presets.loader import load_embodied_figures, load_network_figures
from ui import plain
from ui import theme as th
from ui.charts import Chart
from ui.panel import PanelBase, ResultRow
from ui.panels.power_bars import INK, Bar
from ui.panels.power_draw import Curve, LineSet, SeriesSet, move_operating_point
from ui.panels.power_fields import ALL_GPUS, NOT_SET, OptionalField
from ui.panels.power_footprint import FootprintView
from ui.panels.power_tradeoff import TradeoffView
from ui.panels.power_where import RegionRow, WhereView, best_start_summary
from ui.widgets.cap_field import CapField
from ui.widgets.combo_items import set_choices
from ui.widgets.quantity_edit import QuantityField
from workbench import units
from workbench._validate import InputError
from workbench.analyses import power as analysis_of
from workbench.analyses.power import CannotAnalyse, PowerAnalysis
from workbench.carbon import J_PER_KWH, S_PER_HOUR
from workbench.footprint import SECONDS_PER_YEAR, parse_hourly_text, parse_intensity_csv
from workbench.hardware import PRECISION_LABELS, PRECISIONS
from workbench.scenarios import FIELD_LABELS, PowerScenario
from workbench.workspace import POWER_PLAN_FIELDS

#: Region key of a user-typed grid intensity.
CUSTOM = analysis_of.CUSTOM
CURRENCIES = ("USD", "EUR", "GBP", "CHF", "JPY", "CNY", "CAD", "AUD", "INR", "SEK")

#: Compared scenarios: not the series colours (blue, orange), not the best-cap green, not the
#: operating point's vermillion.
COMPARE_COLORS = (th.PURPLE, th.SKY, th.YELLOW)

CAP_HEADER = "power cap (W)"
TPJ_HEADER = "tokens per joule (tokens/J)"
RATE_HEADER = "throughput (tokens/s)"
POWER_HEADER = "average GPU power (W)"

#: The chart tabs, in order.
TABS = ("Power cap", "Energy and time", "Where and when", "Footprint")
POWER_TAB, TRADEOFF_TAB, WHERE_TAB, FOOTPRINT_TAB = range(4)
#: Embodied figure choices besides the sourced presets.
EMBODIED_NONE = "none"
#: Labels and undo texts of the footprint fields (the form's own words).
FOOTPRINT_LABELS = {
    "capped_gpus": "Capped GPUs",
    "zeus_eta": "energy weight η",
    "idle_s": "Idle time",
    "idle_power_w_per_gpu": "Idle power per GPU",
    "network_w_per_gpu": "Network per GPU",
    "embodied_gpu_g": "Per GPU",
    "embodied_server_g": "Per server",
    "embodied_gpus_per_server": "GPUs per server",
    "embodied_use_fraction": "Share in use",
}


# -- formatting at the edge (units only, no model) -----------------------------------------------
def _count(value: float) -> str:
    """3000 -> "3k", 1.5e12 -> "1.5T" (plain numbers with count suffixes)."""
    return units.format_quantity(value, "")


def _energy(joules: float) -> tuple[str, str]:
    """Energy the way grids bill it: (number, "kWh" / "MWh" / "GWh")."""
    kwh = joules / J_PER_KWH
    for factor, unit in ((1e6, "GWh"), (1e3, "MWh"), (1.0, "kWh")):
        if abs(kwh) >= factor:
            return f"{kwh / factor:.3g}", unit
    return f"{kwh:.3g}", "kWh"


def _money(value: float) -> str:
    if abs(value) < 1000:
        return f"{value:,.2f}"
    return _count(value)


class _WrappedNote(QLabel):
    """A word-wrapped label that makes sure, once the event loop is back, that it got the height
    its text needs. A new text set while its dock is being raised (a hidden panel drawing as it
    comes to the front) was laid out a line short, its last line cut, until the next change."""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt naming
        if text != self.text():
            super().setText(text)
            QTimer.singleShot(0, self, self._fit_height)

    def _fit_height(self) -> None:
        if self.heightForWidth(self.width()) > self.height():
            self.updateGeometry()


class PowerPanel(PanelBase):
    """Power cap sweep (tokens per joule and throughput against the cap) and the run's
    energy, CO2e and cost."""

    kind = "power"
    title = "Power and carbon"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        self._grids = presets.load_grids()
        self._pue_classes = presets.load_pue_classes()
        self._pue_key: str | None = None
        #: the grids the Where and when tab compares: (key, gCO2e/kWh) of each preset
        self._region_inputs = tuple((g.key, g.g_per_kwh) for g in self._grids)
        self._comparison: list[tuple[str, PowerScenario]] = []
        #: the compared scenarios' analyses, kept while the list and the presets are the same
        self._compared: tuple[object, list[tuple[str, PowerAnalysis | None]]] = (None, [])
        self._slider_caps = np.array([])
        self._view_message = ""
        self._embodied = load_embodied_figures()
        self._network = load_network_figures()
        #: tabs whose drawing is behind the numbers computed last: drawn when shown or read
        self._stale_tabs: set[int] = set()
        #: the analysis the last refresh drew (None: the scenario could not be analysed)
        self._shown: PowerAnalysis | None = None
        self._tabs_filled = False  # every tab drawn once (the first numbers computed)
        super().__init__(scenario if scenario is not None else PowerScenario(), parent, undo_stack=undo_stack)
        self._build_form()
        self._build_charts()
        if hasattr(catalog, "changed"):
            catalog.changed.connect(self._on_catalog_changed)
        self.refresh()

    # -- form --------------------------------------------------------------------------------
    def _build_form(self) -> None:
        self.add_section("Run")
        self.hardware_combo = QComboBox(self.form_widget)
        self.hardware_combo.setObjectName("field.hardware")
        self.hardware_combo.setToolTip("GPU model (from the shared context unless Local override is on)")
        self.hardware_combo.activated.connect(self._on_hardware_activated)
        self.form.addRow(FIELD_LABELS["hardware"], self.hardware_combo)
        self._bindings["hardware"] = (self.hardware_combo, "choice")
        self._fill_hardware()
        self.tdp_label = QLabel(self.form_widget)
        self.tdp_label.setObjectName("tdpLabel")
        self.form.addRow("TDP", self.tdp_label)
        self.add_int_field("n_gpus", maximum=None,
                           description="GPUs in the job (from the shared context unless Local override is on)")
        self.add_quantity_field("train_tokens", unit="", minimum=0, min_inclusive=False,
                                description="Tokens processed in the whole run, e.g. 15T (from the shared context)")
        self.add_quantity_field("n_params", "Model parameters", unit="", minimum=0, min_inclusive=False,
                                description="Parameters of the model trained, e.g. 70B (from the shared context): "
                                            "a token costs 6 x parameters FLOPs to train")
        self.add_choice("precision", [(PRECISION_LABELS[p], p) for p in PRECISIONS], "Training precision")
        self.field("precision").setToolTip("The precision whose dense peak the MFU refers to "
                                           "(from the shared context)")
        self.throughput_combo = QComboBox(self.form_widget)
        self.throughput_combo.setObjectName("throughputSource")
        self.throughput_combo.addItem("From the run plan", "plan")
        self.throughput_combo.addItem("Planned from MFU", "mfu")
        self.throughput_combo.addItem("Measured", "measured")
        self.throughput_combo.setToolTip(
            "From the run plan: the throughput the run plan predicts (every panel and the status bar "
            "use the same). Planned from MFU: the model size, the GPU and the precision at the MFU you "
            "assume. Measured: the tokens/s one GPU of your run reaches, whatever the model. The last "
            "two make this panel a local override.")
        self.throughput_combo.activated.connect(self._on_throughput_source)
        self.form.addRow("Throughput", self.throughput_combo)
        self.add_quantity_field("throughput_mfu", "MFU (6N)", unit="%", minimum=0, min_inclusive=False, maximum=1,
                                description="Model FLOPs utilisation the plan assumes: the share of the GPU's "
                                            "dense peak spent on the model's 6N FLOPs per token, attention not "
                                            "counted (an assumption; large dense runs report roughly 35-55%). "
                                            "The Scaling panel's MFU counts attention too when the shape is given, "
                                            "so it reads lower for the same run")
        self.add_quantity_field("tokens_per_s_per_gpu", "Measured tokens/s", unit="", minimum=0,
                                min_inclusive=False,
                                description="Throughput one GPU of your run reaches at full power (no cap), "
                                            "tokens per second")
        self.throughput_note = _WrappedNote(self.form_widget)
        self.throughput_note.setObjectName("throughputNote")
        self.throughput_note.setWordWrap(True)
        self.form.addRow("", self.throughput_note)
        self._last_mfu = 0.4
        self.overrideContextChanged.connect(lambda _on: self.refresh())

        self.add_section("Power cap")
        self.cap_field = CapField(
            self.form_widget, label="Power cap", minimum=0, min_inclusive=False,
            description="The GPU power limit (nvidia-smi -pl). Empty or 'uncapped' means the TDP. "
                        "The slider below steps by 25 W from the lowest cap the model can honour.")
        self.cap_field.setObjectName("field.power_cap_w")
        self.cap_field.valueEdited.connect(lambda value: self._field_edited("power_cap_w", value))
        self.cap_field.uncapped.connect(lambda: self._field_edited("power_cap_w", None))
        self.form.addRow(FIELD_LABELS["power_cap_w"], self.cap_field)
        self._bindings["power_cap_w"] = (self.cap_field, "quantity")
        self._sync_field("power_cap_w")

        self.cap_slider = QSlider(Qt.Orientation.Horizontal, self.form_widget)
        self.cap_slider.setObjectName("capSlider")
        self.cap_slider.setSingleStep(1)
        self.cap_slider.setPageStep(4)
        self.cap_slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.cap_slider.setTickInterval(4)
        self.cap_slider.setToolTip("Drag to set the power cap in 25 W steps; the right end is uncapped (TDP). "
                                   "A whole drag is one undo step.")
        self.cap_slider.setAccessibleName("Power cap slider")
        self.cap_slider.valueChanged.connect(self._on_slider)
        self.slider_min_label = QLabel(self.form_widget)
        self.slider_max_label = QLabel(self.form_widget)
        slider_box = QWidget(self.form_widget)
        box = QVBoxLayout(slider_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addWidget(self.cap_slider)
        ends = QHBoxLayout()
        ends.addWidget(self.slider_min_label)
        ends.addStretch(1)
        ends.addWidget(self.slider_max_label)
        box.addLayout(ends)
        self.form.addRow("", slider_box)
        objective = self.add_choice("cap_objective", [
            ("Energy and time", "energy_time"),
            ("Energy only", "energy"),
        ], "Best cap by")
        objective.setToolTip("What the best cap (green on the charts) optimises. Energy and time weighs a "
                             "joule against a second at the TDP (Zeus's cost, with the energy weight η of the "
                             "Energy and time tab, 0.5 unless you move it): a deep cap saves energy but the run "
                             "takes longer. Energy only finds the most tokens per joule.")
        self.capped_field = self._optional_field(
            "capped_gpus", "", ALL_GPUS, integer=True, minimum=1,
            description="How many of the job's GPUs the cap applies to (empty or 'all': every GPU). Fewer than "
                        "all are stragglers: in synchronous data parallel every step waits for the slowest GPU.")

        self.add_section("GPU power model")
        self.add_quantity_field("static_fraction", "Static power share", unit="%", minimum=0, maximum=1,
                                max_inclusive=False,
                                description="Share of the TDP drawn whatever the clock (leakage, memory, fans)")
        self.add_quantity_field("min_voltage_fraction", "Min voltage fraction", unit="%", minimum=0,
                                min_inclusive=False, maximum=1,
                                description="Voltage the V(f) line reaches at zero clock, as a share of the top "
                                            "voltage (DVFS tables bottom out near 60-70%)")
        self.add_quantity_field("compute_bound_share", unit="%", minimum=0, maximum=1,
                                description="Share of the step time that slows with the clock "
                                            "(memory- and network-bound time does not)")
        self.add_quantity_field("host_overhead_w_per_gpu", "Host power per GPU", unit="W", minimum=0,
                                description="CPUs, memory, NICs and node fans spread over the GPUs "
                                            "(a DGX H100 leaves up to ~575 W per GPU)")

        self.add_section("Facility and grid")
        self.pue_combo = QComboBox(self.form_widget)
        self.pue_combo.setObjectName("pueClassCombo")
        for cls in self._pue_classes:
            self.pue_combo.addItem(cls.name, cls.key)
            tip = f"<b>{html.escape(cls.name)}</b>: PUE {cls.pue:g}<br>Source: {html.escape(cls.source)}"
            if cls.note:
                tip += f"<br>{html.escape(cls.note)}"
            self.pue_combo.setItemData(self.pue_combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.pue_combo.addItem("Custom value", CUSTOM)
        self.pue_combo.setItemData(self.pue_combo.count() - 1, "Type your own PUE in the field below",
                                   Qt.ItemDataRole.ToolTipRole)
        self.pue_combo.activated.connect(self._on_pue_activated)
        self.form.addRow("PUE class", self.pue_combo)
        self.add_quantity_field("pue", unit="", minimum=1, maximum=5,
                                description="Power usage effectiveness: facility energy / IT energy")

        self.region_combo = QComboBox(self.form_widget)
        self.region_combo.setObjectName("regionCombo")
        for grid in self._grids:
            self.region_combo.addItem(grid.name, grid.key)
            year = f"data year {grid.year}" if grid.year is not None else "no data year given"
            tip = (f"<b>{html.escape(grid.name)}</b>: {grid.g_per_kwh:g} gCO2e/kWh, {year}"
                   f"<br>Source: {html.escape(grid.source)}")
            if grid.note:
                tip += f"<br>{html.escape(grid.note)}"
            self.region_combo.setItemData(self.region_combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.region_combo.addItem("Custom intensity", CUSTOM)
        self.region_combo.setItemData(self.region_combo.count() - 1,
                                      "Type your own grid carbon intensity in the field below",
                                      Qt.ItemDataRole.ToolTipRole)
        self.region_combo.activated.connect(self._on_region_activated)
        self.form.addRow("Grid region", self.region_combo)
        self.add_quantity_field("grid_g_per_kwh", "Intensity (g/kWh)", unit="", minimum=0,
                                description="Grid carbon intensity in grams CO2e per kWh; typing a value "
                                            "makes the region custom")

        self.add_section("Prices")
        self.add_choice("currency", [(c, c) for c in CURRENCIES])
        self.add_quantity_field("energy_price_per_kwh", "Energy price per kWh", unit="", minimum=0,
                                description="Price of one kWh of facility energy (0 when the GPU-hour price "
                                            "already includes power)")
        self.add_quantity_field("gpu_hour_price", "Price per GPU-hour", unit="", minimum=0,
                                description="Rental or amortised price of one GPU for one hour")
        self._build_footprint_form()
        for combo in (self.hardware_combo, self.pue_combo, self.region_combo, self.field("currency"),
                      self.network_combo, self.embodied_combo):
            # long preset names must not widen the inputs column (the full text is in the popup)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(8)

    def _optional_field(self, name: str, unit: str, empty, **kwargs) -> OptionalField:
        """A field that may hold no value ("not set", "all"), bound to scenario field ``name``."""
        label = FOOTPRINT_LABELS[name]
        field = OptionalField(unit, self.form_widget, empty=empty, label=label, **kwargs)
        field.setObjectName(f"field.{name}")
        field.valueEdited.connect(lambda value, name=name, field=field: self._field_edited(name, field.value()))
        field.cleared.connect(lambda name=name: self._field_edited(name, None))
        self.form.addRow(label, field)
        self._bindings[name] = (field, "quantity")
        self._sync_field(name)
        return field

    def _build_footprint_form(self) -> None:
        self.add_section("Idle allocation")
        self.add_quantity_field("idle_s", FOOTPRINT_LABELS["idle_s"], unit="s", minimum=0,
                                description="Hours the reservation is held but not training (queue gaps, "
                                            "debugging, a job that ended early), for the whole job, e.g. 12 h. "
                                            "They are paid and draw idle power: right-size, don't leave idle "
                                            "allocations running")
        self._optional_field("idle_power_w_per_gpu", "W", NOT_SET, minimum=0,
                             description="What one held, idle GPU slot draws: the GPU at idle with its share of "
                                         "the host and network. No figure is assumed: measure it (nvidia-smi "
                                         "and the node's power meter while idle) or leave it not set")
        self.add_section("Network power")
        self.network_combo = QComboBox(self.form_widget)
        self.network_combo.setObjectName("networkCombo")
        self.network_combo.addItem("Your own figure", CUSTOM)
        self.network_combo.setItemData(0, "Type the network power per GPU below: NICs, optics and switch ports "
                                          "spread over the GPUs", Qt.ItemDataRole.ToolTipRole)
        for fig in self._network:
            self.network_combo.addItem(f"{fig.name.split(' (', 1)[0]}: {fig.per_port_w:g} W a port", fig.key)
            tip = (f"<b>{html.escape(fig.name)}</b>: {fig.watts:g} W for {fig.ports} port(s)"
                   f"<br>Source: {html.escape(fig.source)}<br>{html.escape(fig.note)}"
                   "<br>Sets one port per GPU (a node with one NIC per GPU, as a DGX has).")
            self.network_combo.setItemData(self.network_combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.network_combo.activated.connect(self._on_network_activated)
        self.form.addRow("Network figure", self.network_combo)
        self.add_quantity_field("network_w_per_gpu", FOOTPRINT_LABELS["network_w_per_gpu"], unit="W", minimum=0,
                                description="Network power counted in the IT energy per GPU: NICs, transceivers "
                                            "and switch ports the job uses, divided by its GPUs. Host power per "
                                            "GPU taken from a system's maximum already holds its own NICs")
        self.add_section("Embodied emissions")
        self.embodied_combo = QComboBox(self.form_widget)
        self.embodied_combo.setObjectName("embodiedCombo")
        self.embodied_combo.addItem("Not set", EMBODIED_NONE)
        self.embodied_combo.setItemData(0, "No manufacturing emissions counted", Qt.ItemDataRole.ToolTipRole)
        for fig in self._embodied:
            self.embodied_combo.addItem(fig.name.split(":", 1)[0], fig.key)  # the whole name in its tooltip
            tip = (f"<b>{html.escape(fig.name)}</b>: {fig.gpu_g / 1000:g} kg CO2e per GPU, "
                   f"{fig.server_g / 1000:g} kg per server of {fig.gpus_per_server} GPUs, over "
                   f"{fig.lifetime_s / SECONDS_PER_YEAR:g} years at {fig.use_fraction:.0%} use"
                   f"<br>Source: {html.escape(fig.source)}<br>{html.escape(fig.note)}")
            self.embodied_combo.setItemData(self.embodied_combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.embodied_combo.addItem("Your own figure", CUSTOM)
        self.embodied_combo.setItemData(self.embodied_combo.count() - 1,
                                        "Type a per-GPU (and per-server) figure from your vendor's product carbon "
                                        "footprint below", Qt.ItemDataRole.ToolTipRole)
        self.embodied_combo.activated.connect(self._on_embodied_activated)
        self.form.addRow("Embodied figure", self.embodied_combo)
        self._optional_field("embodied_gpu_g", "g", NOT_SET, minimum=0,
                             description="Manufacturing emissions of one GPU, e.g. 150 kg (CO2e). Not set: no "
                                         "embodied emissions are counted")
        self.add_quantity_field("embodied_server_g", FOOTPRINT_LABELS["embodied_server_g"], unit="g", minimum=0,
                                description="Manufacturing emissions of one server without its GPUs (CPUs, memory, "
                                            "board, chassis), shared by its GPUs")
        self.add_int_field("embodied_gpus_per_server", FOOTPRINT_LABELS["embodied_gpus_per_server"], minimum=1,
                           maximum=100_000, description="GPUs that share one server's embodied emissions")
        self.lifetime_field = QuantityField("", self.form_widget, label="Lifetime (years)", minimum=0,
                                            min_inclusive=False, maximum=100,
                                            description="Years the hardware serves before it is replaced: its "
                                                        "embodied emissions are spread over them (an assumption; "
                                                        "BLOOM's estimate uses 6)")
        self.lifetime_field.setObjectName("field.embodied_lifetime_years")
        self.lifetime_field.valueEdited.connect(self._on_lifetime_edited)
        self.form.addRow("Lifetime (years)", self.lifetime_field)
        self.add_quantity_field("embodied_use_fraction", FOOTPRINT_LABELS["embodied_use_fraction"], unit="%",
                                minimum=0, min_inclusive=False, maximum=1,
                                description="Share of the lifetime the hardware is allocated to jobs (an "
                                            "assumption; BLOOM's estimate uses 85%): the idle rest is "
                                            "spread over the jobs too")

    def _on_network_activated(self, index: int) -> None:
        key = self.network_combo.itemData(index)
        if key == CUSTOM:
            field = self.field("network_w_per_gpu")
            field.setFocus()
            field.edit.selectAll()
            return
        fig = next(f for f in self._network if f.key == key)
        self.edit(network_w_per_gpu=fig.per_port_w, _text=f"Use network figure {fig.name}", _merge=False)

    def _on_embodied_activated(self, index: int) -> None:
        key = self.embodied_combo.itemData(index)
        if key == EMBODIED_NONE:
            self.edit(embodied_gpu_g=None, _text="Count no embodied emissions", _merge=False)
        elif key == CUSTOM:
            field = self.field("embodied_gpu_g")
            field.setFocus()
            field.edit.selectAll()
        else:
            fig = next(f for f in self._embodied if f.key == key)
            self.edit(embodied_gpu_g=fig.gpu_g, embodied_server_g=fig.server_g,
                      embodied_gpus_per_server=fig.gpus_per_server, embodied_lifetime_s=fig.lifetime_s,
                      embodied_use_fraction=fig.use_fraction, _text=f"Use embodied figure {fig.name}",
                      _merge=False)
        self._sync_footprint_form()

    def _on_lifetime_edited(self, years: float) -> None:
        if not self._syncing:
            self.edit(embodied_lifetime_s=years * SECONDS_PER_YEAR,
                      _text=f"Change hardware lifetime to {years:g} years")

    def _sync_footprint_form(self) -> None:
        """The figure combos show which sourced figure the values are (or "your own")."""
        s: PowerScenario = self._scenario
        net = next((f.key for f in self._network if abs(f.per_port_w - s.network_w_per_gpu) < 1e-9), CUSTOM)
        self.network_combo.setCurrentIndex(self.network_combo.findData(net))
        if s.embodied_gpu_g is None:
            key = EMBODIED_NONE
        else:
            key = next((f.key for f in self._embodied
                        if (f.gpu_g, f.server_g, f.gpus_per_server, f.use_fraction) ==
                        (s.embodied_gpu_g, s.embodied_server_g, s.embodied_gpus_per_server, s.embodied_use_fraction)
                        and abs(f.lifetime_s - s.embodied_lifetime_s) < 1.0), CUSTOM)
        self.embodied_combo.setCurrentIndex(self.embodied_combo.findData(key))
        self._syncing = True
        try:
            self.lifetime_field.setValue(s.embodied_lifetime_s / SECONDS_PER_YEAR)
        finally:
            self._syncing = False
        amortised = s.embodied_gpu_g is not None
        for name in ("embodied_server_g", "embodied_gpus_per_server", "embodied_use_fraction"):
            self.field(name).setEnabled(amortised)
        self.lifetime_field.setEnabled(amortised)
        idle_power = self.field("idle_power_w_per_gpu")
        idle_power.setEnabled(s.idle_s > 0 or s.idle_power_w_per_gpu is not None)

    def _field_edited(self, name: str, value: Any) -> None:
        if self._syncing:
            return
        if name in FOOTPRINT_LABELS and name != "zeus_eta":
            label = FOOTPRINT_LABELS[name]
            label = label[0].lower() + label[1:] if not label.startswith(("GPU", "CO2")) else label
            if value is None:
                text = {"capped_gpus": "Cap every GPU"}.get(name, f"Clear {label}")
            else:
                shown = self.field(name).edit.format_value(value) if self.field(name) is not None else f"{value:g}"
                text = f"Change {label} to {shown}"
            self.edit(**{name: value}, _text=text)
            return
        if name == "zeus_eta":
            self.edit(zeus_eta=value, _text="Change the energy weight η")
            return
        self._power_field_edited(name, value)

    def _fill_hardware(self) -> None:
        choices = [(hw.name, hw.key,
                    plain.tooltip(f"{hw.name}: " + (f"TDP {hw.tdp_w:g} W" if hw.tdp_w is not None else "no TDP given")))
                   for hw in self.catalog.items()]
        key = getattr(self._scenario, "hardware", None)
        if key is not None and key not in self.catalog:
            choices.append((f"{key} (not in the catalog)", key, None))
        set_choices(self.hardware_combo, choices)
        self._sync_field("hardware")

    def _on_catalog_changed(self) -> None:
        self._fill_hardware()
        self.refresh()

    def plan_followed(self) -> None:
        """The plan changed but not this panel's scenario: the analysis reads the plan too (the
        node size of the cap command, the predicted MFU), so it is the new plan's."""
        self.refresh()

    def _on_hardware_activated(self, index: int) -> None:
        self._field_edited("hardware", self.hardware_combo.itemData(index))

    def _on_throughput_source(self, index: int) -> None:
        choice = self.throughput_combo.itemData(index)
        if choice == "plan":
            self.return_to_plan()
            self._sync_throughput()
            return
        if self.follows_plan():  # a throughput of one's own: this panel becomes local (one step)
            self.go_local("Local override: the throughput is this panel's own, not the run plan's.",
                          lambda: self._pick_throughput(choice))
            self._sync_throughput()
            return
        self._pick_throughput(choice)
        self._sync_throughput()  # the edit may have been refused, or changed nothing

    def _pick_throughput(self, choice: str) -> None:
        if choice == "measured":
            self.edit(throughput_mfu=None, _text="Plan from the measured throughput", _merge=False)
        elif self._scenario.throughput_mfu is None:
            mfu = self._last_mfu
            changes: dict[str, Any] = {"throughput_mfu": mfu}
            ctx = self.context()
            if ctx is not None and not self.override_context():
                # the plan's model and precision are the shared context's (a scenario saved
                # before they were part of it carries placeholders)
                changes.update(n_params=ctx.model_params, precision=ctx.precision)
            self.edit(_text=f"Plan the throughput from {mfu:.0%} MFU", _merge=False, **changes)

    def blocking_problem(self) -> str:
        return self._view_message or super().blocking_problem()

    def _sync_throughput(self) -> None:
        s = self._scenario
        planned = s.throughput_mfu is not None
        if planned:
            self._last_mfu = s.throughput_mfu
        self.throughput_combo.model().item(0).setEnabled(self.context_sink is not None)
        if self.follows_plan():
            # the plan's model and precision stay editable (they are the plan's fields)
            self.throughput_combo.setCurrentIndex(self.throughput_combo.findData("plan"))
            for name, on in (("throughput_mfu", False), ("n_params", True), ("precision", True),
                             ("tokens_per_s_per_gpu", False)):
                self.field(name).setEnabled(on)
            return
        self.throughput_combo.setCurrentIndex(self.throughput_combo.findData("mfu" if planned else "measured"))
        for name, on in (("throughput_mfu", planned), ("n_params", planned), ("precision", planned),
                         ("tokens_per_s_per_gpu", not planned)):
            self.field(name).setEnabled(on)

    def _fill_precisions(self, hw) -> None:
        self.fill_precision_choices(hw)

    def _on_pue_activated(self, index: int) -> None:
        key = self.pue_combo.itemData(index)
        if key == CUSTOM:
            self._pue_key = CUSTOM
            field = self.field("pue")
            field.setFocus()
            field.edit.selectAll()
            return
        cls = next(c for c in self._pue_classes if c.key == key)
        self._pue_key = key
        if not self.edit(pue=cls.pue, _text=f"Choose PUE class {cls.name}"):
            return
        self._sync_pue_combo()  # the value may not have changed; the class has

    def _on_region_activated(self, index: int) -> None:
        key = self.region_combo.itemData(index)
        if key == CUSTOM:
            self.edit(region=CUSTOM, _text="Use a custom grid intensity")
            field = self.field("grid_g_per_kwh")
            field.setFocus()
            field.edit.selectAll()
            return
        grid = next(g for g in self._grids if g.key == key)
        self.edit(region=grid.key, grid_g_per_kwh=grid.g_per_kwh, _text=f"Choose grid region {grid.name}")

    def _on_slider(self, position: int) -> None:
        if self._syncing or not self._slider_caps.size:
            return
        position = min(max(position, 0), self._slider_caps.size - 1)
        top = position == self._slider_caps.size - 1
        self._field_edited("power_cap_w", None if top else float(self._slider_caps[position]))

    def _power_field_edited(self, name: str, value: Any) -> None:
        if name == "grid_g_per_kwh":  # a typed intensity is a custom region
            self.edit(grid_g_per_kwh=value, region=CUSTOM)
            return
        super()._field_edited(name, value)

    def edit(self, *, _text: str | None = None, _merge: bool = True, **changes: Any) -> bool:
        """As :meth:`PanelBase.edit`, and a cap the model cannot honour on this GPU is refused
        with the model's message next to the cap field."""
        if changes.get("power_cap_w") is not None and self._scenario is not None:
            try:
                analysis_of.check_cap(self._scenario.with_changes(**changes), self.presets())
            except InputError as exc:
                if exc.parameter == "power_cap_w":
                    self.show_validation_error(exc, changes)
                    return False
            except ValueError:
                pass  # the base reports it
        return super().edit(_text=_text, _merge=_merge, **changes)

    # -- charts ------------------------------------------------------------------------------
    def _build_charts(self) -> None:
        self.charts = QWidget(self.chart_area)
        self.charts.setObjectName("powerCharts")
        column = QHBoxLayout(self.charts)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        # short titles: two charts share the width (Chart cuts a longer title with "…")
        self.chart = Chart(title="Energy efficiency", x_label="Power cap", x_unit="W",
                           y_label="Tokens per joule", y_unit="tokens/J")
        self.rate_chart = Chart(title="Throughput per GPU", x_label="Power cap", x_unit="W",
                                y_label="Throughput", y_unit="tokens/s")
        for chart in (self.chart, self.rate_chart):
            chart.axis("x").enableAutoSIPrefix(False)  # 300 ... 1200 W, never "kW" ticks
            chart.axis("y").enableAutoSIPrefix(False)
        self.rate_chart.setXLink(self.chart)
        self._cap_ranges = None
        self.chart.getPlotItem().getViewBox().sigResized.connect(self._fit_cap_ranges)
        self.chart.enable_hover(formatter=lambda x, y: f"cap {x:.0f} W\n{y:.3g} tokens/J")
        self.rate_chart.enable_hover(formatter=lambda x, y: f"cap {x:.0f} W\n{_count(y)} tokens/s")
        column.addWidget(self.chart, 1)
        column.addWidget(self.rate_chart, 1)

        # the Power cap tab: the two sweeps, the straggler warning, the cap as a command
        cap_tab = QWidget(self.chart_area)
        cap_tab.setObjectName("powerCapTab")
        tab = QVBoxLayout(cap_tab)
        tab.setContentsMargins(0, 0, 0, 0)
        tab.setSpacing(4)
        tab.addWidget(self.charts, 1)
        self.straggler_label = QLabel(cap_tab)
        self.straggler_label.setObjectName("stragglerWarning")
        self.straggler_label.setTextFormat(Qt.TextFormat.PlainText)
        self.straggler_label.setWordWrap(True)
        self.straggler_label.setContentsMargins(8, 4, 8, 4)
        self.straggler_label.setVisible(False)
        tab.addWidget(self.straggler_label)
        self.command_box = QPlainTextEdit(cap_tab)
        self.command_box.setObjectName("capCommand")
        self.command_box.setReadOnly(True)
        self.command_box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.command_box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.command_box.setAccessibleName("nvidia-smi command for this power cap")
        self.command_box.setToolTip("The command that sets this cap on a node; select and copy it, or use Copy")
        self.copy_button = QPushButton("Copy", cap_tab)
        self.copy_button.setObjectName("copyCommandButton")
        self.copy_button.setToolTip("Copy the command (and its note) to the clipboard")
        self.copy_button.clicked.connect(self.copy_command)
        command_row = QHBoxLayout()
        command_row.setContentsMargins(8, 0, 8, 6)
        self.command_label = QLabel("Set it with", cap_tab)
        command_row.addWidget(self.command_label, 0, Qt.AlignmentFlag.AlignTop)
        command_row.addWidget(self.command_box, 1)
        command_row.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        tab.addLayout(command_row)

        self.tradeoff = TradeoffView(self.chart_area)
        self.tradeoff.etaEdited.connect(lambda eta: self._field_edited("zeus_eta", eta))
        self.where = WhereView(self.chart_area)
        self.where.profileTyped.connect(self._on_profile_typed)
        self.where.importRequested.connect(self._import_profile_dialog)
        self.where.clearRequested.connect(
            lambda: self.edit(hourly_g_per_kwh=(), profile_name="", _text="Remove the intensity profile",
                              _merge=False))
        self.footprint_view = FootprintView(self.chart_area)
        self.footprint_view.exportRequested.connect(self._export_summary_dialog)

        self.chart_tabs = QTabWidget(self.chart_area)
        self.chart_tabs.setObjectName("powerTabs")
        self.chart_tabs.setDocumentMode(True)
        for widget, name in zip((cap_tab, self.tradeoff, self.where, self.footprint_view), TABS, strict=True):
            self.chart_tabs.addTab(widget, name)
        self.add_chart(self.chart_tabs)
        # a change redraws the tab in front; the others draw when shown, or when read
        self.chart_tabs.currentChanged.connect(self._draw_tab)
        self.tradeoff.before_read = lambda: self._read_tab(TRADEOFF_TAB)
        self.where.before_read = self.where.region_chart.before_read = lambda: self._read_tab(WHERE_TAB)
        for reader in (self.footprint_view.table, self.footprint_view.energy_chart, self.footprint_view.co2_chart):
            reader.before_read = lambda: self._read_tab(FOOTPRINT_TAB)
        # the sweeps' curves and best-cap lines, moved in place on a value change
        self._cap_series = [SeriesSet(chart) for chart in (self.chart, self.rate_chart)]
        self._cap_lines = [LineSet(chart) for chart in (self.chart, self.rate_chart)]

    def set_presentation(self, enabled: bool) -> None:
        """Larger fonts: the labels need more room and the command box more height."""
        super().set_presentation(enabled)
        for chart in (self.chart, self.rate_chart):  # restyled first: the room is for their new fonts
            if chart.presentation() != bool(enabled):
                chart.set_presentation(enabled)
        self._fit_cap_ranges()
        self._fit_command_box()

    def _fit_command_box(self) -> None:
        lines = max(self.command_box.document().blockCount(), 2)
        metrics = QFontMetricsF(self.command_box.font())
        bar = self.command_box.horizontalScrollBar().sizeHint().height()
        self.command_box.setFixedHeight(int(metrics.lineSpacing() * lines + 2 * self.command_box.frameWidth()
                                            + self.command_box.document().documentMargin() * 2 + bar + 2))

    def presentation_widgets(self) -> list[QWidget]:
        """The tabs' own inputs, labels and tables grow with the charts on a projector."""
        return [*super().presentation_widgets(), self.chart_tabs.tabBar(), self.straggler_label, self.command_box,
                self.command_label, self.copy_button, self.tradeoff, self.where, self.footprint_view]

    def chart_for_export(self) -> QWidget | None:
        """What the tab in front shows: both sweeps (efficiency beside throughput), the cost
        curve, the regions and the profile, or the footprint's charts."""
        tab = self.chart_tabs.currentIndex()
        self._read_tab(tab)  # what an export shows is the last change's
        if tab == TRADEOFF_TAB:
            return self.tradeoff.chart
        if tab == WHERE_TAB:
            return self.where.splitter
        if tab == FOOTPRINT_TAB:
            return self.footprint_view.splitter.widget(0)
        return self.charts

    # -- state helpers -----------------------------------------------------------------------
    def _hardware(self):
        key = getattr(self._scenario, "hardware", None)
        try:
            return self.catalog.get(key)
        except KeyError:
            return None

    def _result(self) -> PowerAnalysis | None:
        """The analysis shown (None when the scenario cannot be analysed), after a hidden panel
        has drawn what it put off: what a reader of the panel's numbers gets is this change's."""
        self.ensure_drawn()
        return self._shown

    def plan(self):
        """The planned run shown (a ``workbench.carbon.PlannedRun``; None when it cannot be computed)."""
        shown = self._result()
        return shown.plan if shown is not None else None

    def best_cap(self) -> float | None:
        """The best cap for the scenario's objective (W), as marked on the chart."""
        shown = self._result()
        return float(shown.best.cap_w) if shown is not None else None

    # -- comparison --------------------------------------------------------------------------
    def set_comparison(self, items: Sequence[tuple[str, PowerScenario]]) -> None:
        """Overlay other saved scenarios' curves (dashed, named in the legend)."""
        self._comparison = [(str(name), scenario) for name, scenario in items]
        self.refresh()

    def _compared_analyses(self) -> list[tuple[str, PowerAnalysis | None]]:
        """Each compared scenario's own analysis, on its own (no plan); None for one that cannot
        be analysed (left off the chart). Worked out again only when the list or the presets change."""
        key = (tuple(self._comparison), getattr(self.catalog, "revision", None))
        if self._compared[0] != key:
            analysed: list[tuple[str, PowerAnalysis | None]] = []
            for name, other in self._comparison:
                try:
                    analysed.append((name, analysis_of.analyse(other, None, self.presets())))
                except (ValueError, ArithmeticError):
                    analysed.append((name, None))
            self._compared = (key, analysed)
        return self._compared[1]

    def clear_comparison(self) -> None:
        self._comparison = []
        self.refresh()

    def comparison(self) -> list[tuple[str, PowerScenario]]:
        return list(self._comparison)

    # -- context -----------------------------------------------------------------------------
    #: scenario field <- shared context field
    CONTEXT_FIELDS = {name: name for name in POWER_PLAN_FIELDS}
    #: the plan predicts the throughput and the share a cap slows; typing them explores locally
    PLAN_DERIVED_FIELDS = frozenset({"tokens_per_s_per_gpu", "throughput_mfu", "compute_bound_share"})

    def set_scenario(self, scenario) -> None:
        if getattr(scenario, "hardware", None) is not None and self.hardware_combo.findData(scenario.hardware) < 0:
            self._scenario = scenario
            self._fill_hardware()
        super().set_scenario(scenario)

    # -- drawing -----------------------------------------------------------------------------
    def _sync_pue_combo(self) -> None:
        value = self._scenario.pue
        keys = [c.key for c in self._pue_classes if c.pue == value]
        key = self._pue_key if self._pue_key in keys else (keys[0] if keys else CUSTOM)
        self.pue_combo.setCurrentIndex(self.pue_combo.findData(key))

    def _sync_region_combo(self) -> None:
        index = self.region_combo.findData(self._scenario.region)
        self.region_combo.setCurrentIndex(index if index >= 0 else self.region_combo.findData(CUSTOM))

    def _sync_labels(self) -> None:
        s = self._scenario
        for name, text in (("energy_price_per_kwh", f"Energy ({s.currency}/kWh)"),
                           ("gpu_hour_price", f"GPU-hour ({s.currency})")):
            label = self.form.labelForField(self.field(name))
            if label is not None:
                label.setText(text)
        hw = self._hardware()
        if hw is None:
            self.tdp_label.setText("unknown hardware")
            self.tdp_label.setToolTip("")
        elif hw.tdp_w is None:
            self.tdp_label.setText("not given")
            self.tdp_label.setToolTip("This preset has no TDP: add it in the preset manager")
        else:
            self.tdp_label.setText(units.format_quantity(hw.tdp_w, "W"))
            self.tdp_label.setToolTip(plain.tooltip(f"Board power at full clock. Source: {hw.tdp_source}"))

    def _sync_slider(self, caps: np.ndarray, cap: float) -> None:
        self._slider_caps = caps
        self._syncing = True
        try:
            self.cap_slider.setRange(0, max(caps.size - 1, 0))
            if caps.size:
                self.cap_slider.setValue(int(np.argmin(np.abs(caps - cap))))
                self.slider_min_label.setText(f"{caps[0]:.0f} W")
                self.slider_max_label.setText(f"{caps[-1]:.0f} W")
        finally:
            self._syncing = False
        self.cap_slider.setEnabled(caps.size > 1)

    def _clear_view(self, message: str) -> None:
        self._shown = None
        self._stale_tabs.clear()
        for series, lines, chart in zip(self._cap_series, self._cap_lines, (self.chart, self.rate_chart), strict=True):
            series.clear()
            lines.clear()
            chart.clear_operating_point()
        self.straggler_label.setVisible(False)
        self.command_box.setPlainText("")
        self.tradeoff.clear(message)
        self.where.show_regions([])
        self.where.show_profile((), None, "")
        self.footprint_view.clear(message)
        self.results.set_rows([ResultRow(q, None, "", tip) for q, tip in self._row_specs()])
        self._sync_slider(np.array([]), 0.0)
        self._view_message = message
        self.throughput_note.setText("")
        self.show_status(message)

    def refresh(self) -> None:
        s: PowerScenario = self._scenario
        self._sync_pue_combo()
        self._sync_region_combo()
        self._sync_footprint_form()
        self._sync_labels()
        self._sync_throughput()
        self._fill_precisions(self._hardware())
        try:
            a: PowerAnalysis = self.analysis()
        except CannotAnalyse as exc:
            self._clear_view(exc.sentence)
            return
        except InputError as exc:
            self._clear_view(str(exc))
            return
        if self._view_message and self.status_text() == self._view_message:
            self.clear_error()
        self._view_message = ""
        self._sync_slider(np.asarray(a.sweep.cap_w), a.plan.cap_w)
        self.throughput_note.setText(self._plan_basis(a) if self.follows_plan() else self._throughput_basis(s, a))
        self._shown = a
        self._stale_tabs = set(range(len(TABS)))
        if not self._tabs_filled:
            # the first numbers fill every tab, before any is laid out: a splitter takes its
            # first sizes from what its tab holds when first shown (the footprint table's width)
            for index in range(len(TABS)):
                self._draw_tab(index)
            self._tabs_filled = True
        self._draw_tab(self.chart_tabs.currentIndex())
        self._fill_results(a)

    # -- the tabs: the one in front drawn on a change, the others when shown ---------------------
    def _draw_tab(self, index: int) -> None:
        """Draw tab ``index`` if its drawing is behind the last computed numbers."""
        a = self._shown
        if index not in self._stale_tabs or a is None:
            return
        self._stale_tabs.discard(index)
        if index == POWER_TAB:
            self._draw(a)
            self._draw_cap_notes(a)
        elif index == TRADEOFF_TAB:
            self._draw_tradeoff(a)
        elif index == WHERE_TAB:
            self._draw_where(a)
        elif index == FOOTPRINT_TAB:
            self._draw_footprint(a)

    def _read_tab(self, index: int) -> None:
        """Before a tab's drawn numbers are read: whatever the panel and the tab put off, now."""
        self.ensure_drawn()
        self._draw_tab(index)

    def stale_tabs(self) -> set[int]:
        """The tabs not drawn since the last change (drawn when shown or read)."""
        return set(self._stale_tabs)

    def _where(self, a: PowerAnalysis) -> analysis_of.WhereAnalysis:
        """The run on every grid region and its best start: the Where and when tab's alone, so
        worked out when that tab (or its CSV) needs it, once per change (the function keeps it)."""
        return analysis_of.where(self._scenario, a, self._region_inputs)

    def _draw_cap_notes(self, a: PowerAnalysis) -> None:
        """Under the sweeps: the straggler warning and the cap as a command."""
        theme = th.current_theme()
        partial = a.partial
        if partial is not None and partial.stragglers:
            self.straggler_label.setText(self.straggler_text())
            style = f"background: {theme.notice_bg}; color: {theme.ink}; border-radius: 3px;"
            if self.straggler_label.styleSheet() != style:  # a style sheet set again restyles the label
                self.straggler_label.setStyleSheet(style)
            self.straggler_label.setVisible(True)
        else:
            self.straggler_label.setVisible(False)
        text = a.command.text()
        if self.command_box.toPlainText() != text:
            self.command_box.setPlainText(text)
            self._fit_command_box()

    def _draw_tradeoff(self, a: PowerAnalysis) -> None:
        s: PowerScenario = self._scenario
        self.tradeoff.set_eta(s.zeus_eta)
        cap_text = f"{a.plan.cap_w:.0f} W" + (" (uncapped)" if s.power_cap_w is None else "")
        self.tradeoff.show_curve(a.zeus, a.plan.cap_w, cap_text, a.zeus_now_j)

    def _draw_where(self, a: PowerAnalysis) -> None:
        s: PowerScenario = self._scenario
        fp = a.footprint
        found = self._where(a)
        if found.problem:  # as a refresh reports it: the panel stays up
            self.show_status(f"Cannot compare the grid regions: {found.problem}")
        names = {g.key: g for g in self._grids}
        rows = []
        for r in found.regions:
            grid = names.get(r.key)
            if grid is None:
                rows.append(RegionRow(r.key, f"Your intensity, {r.g_per_kwh:g} g/kWh", r.g_per_kwh, None,
                                      "typed in the Intensity field", r.total_co2e_kg, True))
            else:
                rows.append(RegionRow(r.key, grid.name, r.g_per_kwh, grid.year, grid.source, r.total_co2e_kg,
                                      r.key == s.region))
        self.where.show_regions(rows)
        embodied = " + embodied" if fp.embodied_co2e_kg is not None else ""
        self.where.region_chart.set_axis_labels(x_label=f"CO2e (operational{embodied})")
        self.where.set_profile_text(", ".join(f"{x:g}" for x in s.hourly_g_per_kwh))
        if found.best_start is not None:
            summary = best_start_summary(found.best_start, s.profile_name)
        else:
            summary = ("No profile yet: type 24 hourly intensities (gCO2e/kWh, midnight first) or import a CSV "
                       "of timestamp and intensity to find the best start for this run "
                       f"({units.format_quantity(fp.training_s, 's')}).")
        self.where.show_profile(s.hourly_g_per_kwh, found.best_start, summary)

    def _draw_footprint(self, a: PowerAnalysis) -> None:
        fp = a.footprint
        energy_unit, energy_scale = (("MWh", 1e3) if fp.facility_energy_kwh >= 1e3 else ("kWh", 1.0))
        parts = [
            ("GPUs, training", fp.gpu_energy_j, th.BLUE),
            ("Host, training", fp.host_energy_j, th.SKY),
            ("Network, training", fp.network_energy_j, th.PURPLE),
            ("Idle allocation", fp.idle_it_j, th.ORANGE),
            (f"Facility overhead (PUE {fp.pue:g})", a.facility_overhead_j, th.YELLOW),
        ]
        energy_bars = [Bar(name, j / J_PER_KWH / energy_scale, color,
                           f"{j / J_PER_KWH / energy_scale:.3g} {energy_unit}") for name, j, color in parts]
        if fp.idle_gpu_hours and not fp.idle_power_known:
            energy_bars[3] = Bar("Idle allocation", 0.0, th.ORANGE, "not counted: no idle power set")
        energy_bars.append(Bar("Total facility energy", fp.facility_energy_kwh / energy_scale, INK,
                               f"{fp.facility_energy_kwh / energy_scale:.3g} {energy_unit}", bold=True))
        co2_unit, co2_scale = (("t", 1e3) if fp.total_co2e_kg >= 1e3 else ("kg", 1.0))
        embodied_kg = fp.embodied_co2e_kg
        co2_parts = [
            ("Operational, training", fp.training_co2e_kg, th.BLUE, ""),
            ("Operational, idle allocation", fp.idle_co2e_kg, th.ORANGE, ""),
            ("Embodied (manufacturing)", embodied_kg or 0.0, th.GREEN, "" if embodied_kg is not None else "not set"),
        ]
        co2_bars = [Bar(name, kg / co2_scale, color, text or f"{kg / co2_scale:.3g} {co2_unit}")
                    for name, kg, color, text in co2_parts]
        co2_bars.append(Bar("Total", fp.total_co2e_kg / co2_scale, INK,
                            f"{fp.total_co2e_kg / co2_scale:.3g} {co2_unit}", bold=True))
        self.footprint_view.show_footprint(energy_bars, energy_unit, co2_bars, co2_unit,
                                           self.summary_rows(), self._footprint_note(a))

    def straggler_text(self) -> str:
        """The warning a partly capped job gets (empty when there is none)."""
        a = self._result()
        p = a.partial if a is not None else None
        if p is None or not p.stragglers:
            return ""
        return (f"Stragglers: {p.n_capped:,} of {p.n_gpus:,} GPUs are capped at {p.cap_w:.0f} W. In synchronous "
                f"data parallel every step waits for the slowest GPU, so the whole job runs at the capped speed: "
                f"{_count(p.job_tokens_per_s)} tokens/s, {p.throughput_loss:.0%} below uncapped, as if all "
                f"{p.n_gpus:,} were capped. The {a.uncapped_gpus:,} uncapped GPUs finish early and wait at static "
                f"power ({p.waiting_power_w:.0f} W) for {p.wait_fraction:.0%} of each step, so the GPUs average "
                f"{p.mean_gpu_power_w:.0f} W against {float(p.capped.power_w):.0f} W with all capped: the slowdown "
                f"of a full cap with less of its saving. Cap every GPU or none.")

    def _footprint_note(self, a: PowerAnalysis) -> str:
        s: PowerScenario = self._scenario
        fp = a.footprint
        notes = []
        if fp.idle_gpu_hours > 0:
            notes.append(f"Right-size: {_count(fp.idle_gpu_hours)} GPU-hours ({fp.idle_share:.0%} of the "
                         f"reservation) are held idle and cost {_money(fp.idle_cost)} {s.currency}; don't leave "
                         "idle allocations running.")
            if not fp.idle_power_known:
                notes.append("Their energy is not counted: set the idle power per GPU.")
        if fp.embodied_co2e_kg is None:
            notes.append("Embodied emissions not set: pick a sourced figure or enter your vendor's.")
        else:
            per_hour = fp.embodied_kg_per_gpu_s * S_PER_HOUR
            notes.append(f"Embodied: {per_hour * 1000:.3g} g CO2e per GPU-hour, amortised over "
                         f"{s.embodied_lifetime_s / SECONDS_PER_YEAR:g} years at "
                         f"{s.embodied_use_fraction:.0%} use, for the {_count(fp.reserved_gpu_hours)} GPU-hours held.")
        if s.network_w_per_gpu == 0:
            notes.append("Network power not counted (0 W per GPU).")
        return " ".join(notes)

    def summary_records(self) -> list[tuple[str, float | str, str, str]]:
        """The run's plan, kWh, CO2e and cost: (quantity, value, unit, explanation) per row, values
        at full precision in the unit named (kWh, kg CO2e, s, W, GPU-h, the currency), or text
        ("not set"). The Footprint tab's table shows them; the summary CSV writes them."""
        a = self._result()
        if a is None:
            return []
        fp, plan = a.footprint, a.plan
        s: PowerScenario = self._scenario
        cur = s.currency
        kwh = J_PER_KWH
        pue = fp.pue
        embodied = fp.embodied_co2e_kg
        idle_energy: float | str = fp.idle_it_j / kwh if fp.idle_power_known else "not set"
        return [
            ("GPUs", s.n_gpus, "GPUs", "GPUs in the job"),
            ("Training tokens", s.train_tokens, "tokens", "Tokens processed in the whole run"),
            ("Power cap", plan.cap_w, "W", "The TDP when uncapped" if s.power_cap_w is None else
             (f"on {a.partial.n_capped:,} of {s.n_gpus:,} GPUs" if a.partial is not None else "")),
            ("Throughput, all GPUs", a.job_tokens_per_s, "tokens/s", "The slowest GPU sets every step"),
            ("Run duration", fp.training_s, "s", "Training tokens / job throughput"),
            ("GPU-hours, training", fp.training_gpu_hours, "GPU-h", "GPUs x run duration"),
            ("GPU-hours, idle allocation", fp.idle_gpu_hours, "GPU-h", "Held but not training"),
            ("Average GPU power, training", a.gpu_power_w, "W", "Over every GPU of the job"),
            ("IT energy, GPUs", fp.gpu_energy_j / kwh, "kWh", "GPUs x average GPU power x duration"),
            ("IT energy, host", fp.host_energy_j / kwh, "kWh", "GPUs x host power per GPU x duration"),
            ("IT energy, network", fp.network_energy_j / kwh, "kWh", "GPUs x network power per GPU x duration"),
            ("IT energy, idle allocation", idle_energy, "kWh", "GPUs x idle power per GPU x idle time"),
            ("IT energy", fp.it_energy_j / kwh, "kWh", "GPUs, host, network and idle allocation"),
            ("Facility overhead", a.facility_overhead_j / kwh, "kWh", f"IT energy x (PUE {pue:g} - 1)"),
            ("Facility energy", fp.facility_energy_kwh, "kWh", f"IT energy x PUE {pue:g}"),
            ("CO2e, operational", fp.operational_co2e_kg, "kg CO2e",
             f"Facility energy x {s.grid_g_per_kwh:g} gCO2e/kWh"),
            ("CO2e, embodied", embodied if embodied is not None else "not set", "kg CO2e",
             "GPU-hours held x embodied emissions per GPU-hour"),
            ("CO2e, total", fp.total_co2e_kg, "kg CO2e", "Operational + embodied"),
            ("Energy cost", fp.energy_cost, cur, f"Facility kWh x {s.energy_price_per_kwh:g} {cur}/kWh"),
            ("Compute cost", fp.compute_cost if s.gpu_hour_price > 0 else "not set", cur,
             f"GPU-hours held x {s.gpu_hour_price:g} {cur}"),
            ("Idle allocation cost", fp.idle_cost, cur, "Part of the total: idle GPU-hours and their energy"),
            ("Total cost", fp.total_cost, cur, "Energy cost + compute cost"),
        ]

    def summary_rows(self) -> list[ResultRow]:
        """:meth:`summary_records` as the table shows them (readable prefixes)."""
        s: PowerScenario = self._scenario
        rows = []
        for quantity, value, unit, tip in self.summary_records():
            if isinstance(value, str):
                rows.append(ResultRow(quantity, value, "", tip))
            elif unit == "kWh":
                rows.append(ResultRow(quantity, *_energy(value * J_PER_KWH), tip))
            elif unit == "kg CO2e":
                rows.append(ResultRow(quantity, value * 1000.0, "g", tip))
            elif unit in ("s", "W"):
                rows.append(ResultRow(quantity, value, unit, tip))
            elif unit == s.currency:
                rows.append(ResultRow(quantity, _money(value), unit, tip))
            elif unit == "GPUs":
                rows.append(ResultRow(quantity, f"{int(value):,}", "", tip))
            else:
                rows.append(ResultRow(quantity, _count(value), unit, tip))
        return rows

    def summary_columns(self) -> list[tuple[str, Sequence]]:
        """The run summary as CSV columns: quantity, value (full precision), unit, what it is."""
        records = self.summary_records()
        return [("quantity", [r[0] for r in records]), ("value (in the unit column)", [r[1] for r in records]),
                ("unit", [r[2] for r in records]), ("how", [r[3] for r in records])]

    def export_summary_csv(self, path):
        """Write the run summary (the Footprint tab's table) to ``path`` as CSV."""
        from ui import export

        if self._result() is None:
            raise ValueError(f"{self.title}: no run to summarise ({self._view_message or 'nothing computed'})")
        return export.export_csv(path, self.summary_columns())

    def _export_summary_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export run summary", "run-summary.csv", "CSV files (*.csv)")
        if not path:
            return
        try:
            self.export_summary_csv(path)
        except (OSError, ValueError) as exc:
            self.show_status(f"Could not write {path}: {exc}")

    def copy_command(self) -> None:
        """Put the cap's command (with its note) on the clipboard."""
        self._read_tab(POWER_TAB)
        QGuiApplication.clipboard().setText(self.command_box.toPlainText())

    def command_text(self) -> str:
        self._read_tab(POWER_TAB)
        return self.command_box.toPlainText()

    # -- the time-of-day profile ------------------------------------------------------------------
    def _on_profile_typed(self, text: str) -> None:
        if not text.strip():
            if self._scenario.hourly_g_per_kwh:
                self.edit(hourly_g_per_kwh=(), profile_name="", _text="Remove the intensity profile", _merge=False)
            self.where.show_profile_error("")
            return
        try:
            values = parse_hourly_text(text)
        except InputError as exc:
            self.where.show_profile_error(str(exc).split(": ", 1)[1])
            return
        self.where.show_profile_error("")
        if values != self._scenario.hourly_g_per_kwh:
            self.edit(hourly_g_per_kwh=values, profile_name="", _text="Type the hourly intensity profile")

    def import_profile(self, path) -> bool:
        """Read a CSV of timestamp and intensity into the profile (one undo step). A file that
        cannot be used leaves the profile as it was and says why under the field."""
        from pathlib import Path

        path = Path(path)
        try:
            data = parse_intensity_csv(path.read_bytes())
        except OSError as exc:
            self.where.show_profile_error(f"Could not read {path.name}: {exc.strerror or exc}")
            return False
        except InputError as exc:
            self.where.show_profile_error(f"{path.name}: {str(exc).split(': ', 1)[1]}")
            return False
        self.where.show_profile_error("")
        note = f"{path.name}, {data.rows:,} rows" + (f", {data.skipped} without a value" if data.skipped else "")
        return self.edit(hourly_g_per_kwh=data.values, profile_name=note[:200],
                         _text=f"Import intensity profile {path.name}", _merge=False)

    def _import_profile_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import grid intensity profile", "",
                                              "CSV files (*.csv);;All files (*)")
        if path:
            self.import_profile(path)

    @staticmethod
    def _plan_basis(a: PowerAnalysis) -> str:
        rate = a.tokens_per_s_per_gpu
        if a.plan_mfu is None:
            return f"{_count(rate)} tokens/s per GPU uncapped, from the run plan"
        return (f"= {_count(rate)} tokens/s per GPU uncapped, from the run plan "
                f"(MFU {a.plan_mfu:.1%}; a cap slows {a.plan_compute_bound_share:.0%} of its step)")

    @staticmethod
    def _throughput_basis(s: PowerScenario, a: PowerAnalysis) -> str:
        """What the uncapped throughput per GPU rests on, in one line under the fields."""
        rate = a.tokens_per_s_per_gpu
        if a.peak_flops is None:
            return f"{_count(rate)} tokens/s per GPU uncapped, as measured"
        return (f"= {_count(rate)} tokens/s per GPU uncapped: {s.throughput_mfu:.0%} of "
                f"{units.format_quantity(a.peak_flops, 'FLOP/s')} {PRECISION_LABELS[s.precision]} / "
                f"{units.format_quantity(a.flops_per_token, 'FLOP')} per token (6N)")

    def _draw(self, a: PowerAnalysis) -> None:
        """The Power cap tab: both sweeps (and compared scenarios'), the best cap, the
        operating point, the notes under them. A value change moves the same items."""
        sweep, best, plan = a.sweep, a.best, a.plan
        perf = plan.performance
        main = "This scenario" if self._comparison else a.hardware.name
        efficiency = [Curve(main, sweep.cap_w, sweep.tokens_per_joule, {"color": th.BLUE})]
        rate = [Curve(main, sweep.cap_w, sweep.tokens_per_s, {"color": th.ORANGE})]
        for i, (name, other) in enumerate(self._compared_analyses()):
            if other is None:
                continue
            color = COMPARE_COLORS[i % len(COMPARE_COLORS)]
            other_sweep = other.sweep
            efficiency.append(Curve(name, other_sweep.cap_w, other_sweep.tokens_per_joule,
                                    {"color": color, "style": "dash"}))
            rate.append(Curve(name, other_sweep.cap_w, other_sweep.tokens_per_s, {"color": color, "style": "dash"}))
        marker = "best tokens/J" if self._scenario.cap_objective == "energy" else "best cap"
        efficiency.append(Curve(marker, [best.cap_w], [best.tokens_per_joule],
                                {"color": th.GREEN, "symbol": "d", "width": 0.01, "in_legend": False}))
        for series, curves in zip(self._cap_series, (efficiency, rate), strict=True):
            series.draw(curves)
        for lines in self._cap_lines:
            lines.draw([(best.cap_w, f"best {best.cap_w:.0f} W", th.GREEN)])
        cap_text = f"{plan.cap_w:.0f} W" + (" (uncapped)" if self._scenario.power_cap_w is None else "")
        move_operating_point(self.chart, plan.cap_w, float(perf.tokens_per_joule), cap_text)
        move_operating_point(self.rate_chart, plan.cap_w, float(perf.tokens_per_s), "")
        caps = np.concatenate([np.asarray(c.x) for c in efficiency] + [[plan.cap_w]])
        ranges = []
        for curves in (efficiency, rate):
            ys = np.concatenate([np.asarray(c.y) for c in curves])
            y_lo, y_hi = float(np.min(ys)), float(np.max(ys))
            span = (y_hi - y_lo) or abs(y_hi) or 1.0
            # headroom at the top for the legend (shown for more than one named series: the
            # chart's rule, applied here so that the chart need not settle mid-draw) and the
            # cap labels
            legend = sum(1 for c in curves if c.style.get("in_legend", True)) > 1
            top = 0.28 if legend else 0.1
            ranges.append((y_lo - 0.05 * span, y_hi + top * span))
        self._cap_ranges = (float(np.min(caps)), float(np.max(caps)), float(best.cap_w), ranges)
        self._fit_cap_ranges(hold=True)

    def _fit_cap_ranges(self, *_args, hold: bool = False) -> None:
        """x from the lowest to the highest cap, with room on the right for the best cap's label:
        it is drawn to the right of its line (ui.charts), so near the right end the range grows by
        the label's width in pixels (again whenever the chart is resized or restyled). ``hold``:
        new numbers, the axes held while they stay well inside them; a resize or a restyle fits
        them exactly (held, each new size's room would only ever widen them)."""
        fitted = getattr(self, "_cap_ranges", None)
        if fitted is None or self._shown is None:
            return
        lo, hi, best, ranges = fitted
        margin = 0.04 * (hi - lo) if hi > lo else 25.0
        right = margin
        room = self._label_room(self.chart, f"best {best:.0f} W")
        if hi > lo and best + room * (hi - lo + margin) > hi:
            right = max(margin, best + room * (hi - lo + margin) - hi)
        # both views get the same x directly, their link held: through the link each x change
        # moved the other view again (three view updates per redraw instead of two)
        views = [chart.getPlotItem().getViewBox() for chart in (self.chart, self.rate_chart)]
        for view in views:
            view.blockLink(True)
        try:
            for chart, (y_lo, y_hi) in zip((self.chart, self.rate_chart), ranges, strict=True):
                chart.set_log_range(lo - margin, hi + right, y_lo, y_hi, hold=hold)
        finally:
            for view in views:
                view.blockLink(False)

    @staticmethod
    def _label_room(chart: Chart, text: str) -> float:
        """The share of the plot's width a reference-line label of ``text`` takes (with a gap)."""
        font = QFont()
        font.setPointSizeF(th.BASE_TICK_FONT_PT * 0.9 * th.scale_factor(chart.presentation()))
        width = QFontMetricsF(font).horizontalAdvance(text) + 14.0
        plot_px = chart.getPlotItem().getViewBox().width()
        if plot_px < 100:  # not laid out yet: a chart of two in a 1920 px window
            plot_px = 480.0
        share = min(width / plot_px, 0.4)
        return share / (1.0 - share)

    @staticmethod
    def _row_specs() -> list[tuple[str, str]]:
        return [
            ("Clock fraction", "Clock the GPU runs at under the cap, as a share of its full clock"),
            ("Throughput per GPU", "Tokens per second of one GPU under the cap (only the compute-bound "
                                   "share of the step slows down)"),
            ("Throughput, all GPUs", "Tokens per second of the whole job: GPUs x throughput per GPU"),
            ("Average GPU power", "Average board power of one busy GPU under the cap (never above the cap)"),
            ("Tokens per joule", "GPU energy efficiency: tokens per joule of GPU energy (no host, no PUE)"),
            ("Energy per token", "GPU energy per token: the inverse of tokens per joule"),
            ("Best cap for efficiency", "The cap on the 25 W grid with the most tokens per joule (marked in "
                                        "green on the chart)"),
            ("Best cap for energy and time", "The cap on the 25 W grid with the least Zeus cost per token: "
                                             "0.5 x energy + 0.5 x TDP x time (marked in green on the chart)"),
            ("Run duration", "Wall-clock time to train on all tokens at the capped job throughput"),
            ("GPU-hours", "GPUs x run duration in hours"),
            ("IT energy", "GPUs x (average GPU power + host and network power per GPU) x duration, plus the idle "
                          "allocation at its idle power"),
            ("Facility energy", "IT energy x PUE: what the data centre draws from the grid"),
            ("CO2e", "Operational: facility energy x grid carbon intensity"),
            ("Embodied CO2e", "Manufacturing emissions of the GPUs and their servers, amortised over their "
                              "lifetime, for the GPU-hours this run holds them"),
            ("Total CO2e", "Operational + embodied CO2e"),
            ("Energy cost", "Facility energy x energy price per kWh"),
            ("Compute cost", "GPU-hours held (training and idle) x price per GPU-hour"),
            ("Total cost", "Energy cost + compute cost"),
            ("Energy, Llama 3 convention", "GPU-hours x TDP, no host power and no PUE, as the Llama 3 model "
                                           "card counts it (for comparison with published figures)"),
        ]

    def _fill_results(self, a: PowerAnalysis) -> None:
        s: PowerScenario = self._scenario
        best, plan = a.best, a.plan
        perf, summary = plan.performance, plan.summary
        tips = dict(self._row_specs())
        best_label = "Best cap for efficiency" if s.cap_objective == "energy" else "Best cap for energy and time"
        fp = a.footprint
        it_value, it_unit = _energy(fp.it_energy_j)
        fac_value, fac_unit = _energy(fp.facility_energy_j)
        extras = []
        if fp.network_energy_j:
            extras.append(f"network {s.network_w_per_gpu:g} W per GPU")
        if fp.idle_gpu_hours:
            extras.append(f"{_count(fp.idle_gpu_hours)} idle GPU-hours"
                          + ("" if fp.idle_power_known else " (energy not counted: no idle power set)"))
        if a.partial is not None and a.partial.stragglers:
            extras.append(f"GPUs average {a.partial.mean_gpu_power_w:.0f} W with stragglers")
        extra = f" ({'; '.join(extras)})" if extras else ""
        embodied = fp.embodied_co2e_kg
        llama_value, llama_unit = _energy(a.llama3_energy_kwh * J_PER_KWH)
        region = next((g for g in self._grids if g.key == s.region), None)
        where = f"{region.name}, " if region is not None else ""
        rows = [
            ResultRow("Clock fraction", float(perf.clock_fraction), "%", tips["Clock fraction"]),
            ResultRow("Throughput per GPU", _count(float(perf.tokens_per_s)), "tokens/s", tips["Throughput per GPU"]),
            ResultRow("Throughput, all GPUs", _count(plan.job_tokens_per_s), "tokens/s",
                      tips["Throughput, all GPUs"] + f" ({s.n_gpus:,} GPUs)"),
            ResultRow("Average GPU power", float(perf.power_w), "W", tips["Average GPU power"]),
            ResultRow("Tokens per joule", f"{float(perf.tokens_per_joule):.3g}", "tokens/J", tips["Tokens per joule"]),
            ResultRow("Energy per token", float(perf.joules_per_token), "J", tips["Energy per token"]),
            ResultRow(best_label, float(best.cap_w), "W",
                      tips[best_label] + f": {float(best.tokens_per_joule):.3g} tokens/J at "
                      f"{_count(float(best.tokens_per_s))} tokens/s per GPU"),
            ResultRow("Run duration", summary.duration_s, "s", tips["Run duration"]),
            ResultRow("GPU-hours", _count(summary.gpu_hours), "GPU-h",
                      tips["GPU-hours"] + (f"; {_count(fp.idle_gpu_hours)} more held idle" if fp.idle_gpu_hours
                                           else "")),
            ResultRow("IT energy", it_value, it_unit, tips["IT energy"] + extra),
            ResultRow("Facility energy", fac_value, fac_unit, tips["Facility energy"] + f" (PUE {s.pue:g})"),
            ResultRow("CO2e", fp.operational_co2e_kg * 1000.0, "g",
                      tips["CO2e"] + f" ({where}{s.grid_g_per_kwh:g} gCO2e/kWh)"),
            ResultRow("Embodied CO2e", embodied * 1000.0 if embodied is not None else "not set",
                      "g" if embodied is not None else "",
                      tips["Embodied CO2e"] + ("" if embodied is not None else ": pick or enter an embodied figure")),
            ResultRow("Total CO2e", fp.total_co2e_kg * 1000.0, "g",
                      tips["Total CO2e"] + ("" if embodied is not None else " (operational only: embodied not set)")),
            ResultRow("Energy cost", _money(fp.energy_cost), s.currency, tips["Energy cost"]),
            # a GPU-hour price of 0 is "not set": a silent 0 would read as free GPUs
            ResultRow("Compute cost", _money(fp.compute_cost) if s.gpu_hour_price > 0 else "not set",
                      s.currency if s.gpu_hour_price > 0 else "",
                      tips["Compute cost"] + ("" if s.gpu_hour_price > 0 else ": set a price per GPU-hour")),
            ResultRow("Total cost", _money(fp.total_cost), s.currency,
                      tips["Total cost"] + ("" if s.gpu_hour_price > 0 else " (energy only: no GPU-hour price set)")),
            ResultRow("Energy, Llama 3 convention", llama_value, llama_unit,
                      tips["Energy, Llama 3 convention"] + f" ({a.tdp_w:g} W)"),
        ]
        self.results.set_rows(rows)
        self._show_all_rows()

    def _show_all_rows(self) -> None:
        """Every headline number visible without scrolling (the table scrolls beyond ~18 rows)."""
        table = self.results
        height = (table.horizontalHeader().height() + table.rowCount() * table.verticalHeader().defaultSectionSize()
                  + 2 * table.frameWidth() + 4)
        table.setMinimumHeight(min(height, 380))

    # -- results as data ----------------------------------------------------------------------
    def result_text(self, quantity: str) -> tuple[str, str]:
        """(value, unit) as displayed in the results row ``quantity``."""
        for q, value, unit in self.results.rows():
            if q == quantity:
                return value, unit
        raise KeyError(quantity)

    def csv_columns(self) -> list[tuple[str, Sequence]] | None:
        """The numbers of the tab in front, headers naming units: the cap sweep, Zeus's cost
        against the cap, the run on every grid, or the run summary."""
        tab = self.chart_tabs.currentIndex()
        self._read_tab(tab)
        a = self._shown
        if a is None:
            return None
        if tab == TRADEOFF_TAB:
            z = a.zeus
            return [(CAP_HEADER, z.cap_w), ("Zeus cost (J)", z.cost_j), ("eta x energy (J)", z.energy_term_j),
                    ("(1 - eta) x max power x time (J)", z.time_term_j), ("run GPU energy (J)", z.energy_j),
                    ("run duration (s)", z.time_s), ("eta (1)", [z.eta] * len(z.cap_w))]
        rows = self.where.region_rows() if tab == WHERE_TAB else []
        if rows:
            return [("region", [r.name for r in rows]), ("key", [r.key for r in rows]),
                    ("grid intensity (gCO2e/kWh)", [r.g_per_kwh for r in rows]),
                    ("data year (year)", [r.year for r in rows]),
                    ("CO2e (kg)", [r.co2e_kg for r in rows]),
                    ("this run (1)", [1 if r.current else 0 for r in rows]),
                    ("source", [r.source for r in rows])]
        if tab == FOOTPRINT_TAB:
            return self.summary_columns()
        sweep = a.sweep
        return [
            (CAP_HEADER, np.asarray(sweep.cap_w)),
            (TPJ_HEADER, np.asarray(sweep.tokens_per_joule)),
            (RATE_HEADER, np.asarray(sweep.tokens_per_s)),
            (POWER_HEADER, np.asarray(sweep.power_w)),
        ]

    # -- explanation ---------------------------------------------------------------------------
    def explanation(self) -> str:
        """What this panel computes, as short rich text."""
        return (
            "<h3>Power and carbon</h3>"
            "<p><b>Power under a cap.</b> A capped GPU lowers its clock to a fraction <i>f</i> of the "
            "full clock until its power fits: P = TDP &times; (s + (1 &minus; s) &middot; f &middot; "
            "V(f)<sup>2</sup>), where <i>s</i> is the static power share and the voltage V(f) falls "
            "linearly with the clock, from 1 at full clock to the minimum voltage fraction at zero.</p>"
            "<p><b>Speed.</b> Only the compute-bound share of each step slows with the clock; memory- "
            "and network-bound time does not. So a moderate cap often loses little speed but saves "
            "power: tokens per joule peaks below the TDP (the green mark).</p>"
            "<p><b>Throughput.</b> Planned from an MFU, one GPU's uncapped rate is MFU &times; its "
            "dense peak at the training precision / 6N FLOPs per token (N parameters), so a larger "
            "model trains proportionally slower; or it is the rate you measured.</p>"
            "<p><b>Energy and carbon.</b> Run duration = training tokens / (GPUs &times; capped "
            "throughput). IT energy = GPUs &times; (GPU power + host power) &times; duration. "
            "Facility energy = IT energy &times; PUE. CO2e = facility energy &times; grid carbon "
            "intensity. Cost = facility kWh &times; energy price + GPU-hours &times; GPU-hour price.</p>"
            "<p><b>Energy against time.</b> Zeus's cost of the run is &eta; &times; energy + (1 &minus; &eta;) "
            "&times; max power &times; time, max power being GPUs &times; TDP: &eta; = 1 counts only energy, 0 "
            "only time. The least cost is marked; the best cap by energy and time uses the same &eta;.</p>"
            "<p><b>Capping part of a job.</b> In synchronous data parallel every step waits for the slowest "
            "GPU: a few capped GPUs are stragglers that set everyone's pace, while the uncapped ones compute "
            "at full power and wait at static power. The job is as slow as with every GPU capped and saves "
            "less. A cap is set with <tt>sudo nvidia-smi -pl W</tt> (<tt>-i N</tt> for one GPU) and lasts "
            "until a reset or reboot unless provisioning or DCGM applies it again.</p>"
            "<p><b>Where and when.</b> The same energy on each grid region of the presets gives each region's "
            "CO2e (energy and cost do not change). On a 24-hour intensity profile, a run of the plan's length "
            "meets the least average intensity from the start marked; a run longer than a day wraps around "
            "the profile.</p>"
            "<p><b>The whole footprint.</b> Hours a reservation is held idle are paid and, at an idle power "
            "you give (none is assumed), draw energy. Network power per GPU (NICs, optics, switch ports) adds "
            "to the IT energy. Embodied emissions = (per-GPU + per-server / GPUs per server) / (lifetime "
            "&times; share in use) per GPU-hour held, from a sourced figure (BLOOM's estimate) or yours; "
            "not set by default.</p>"
            "<p><b>Conventions differ.</b> The Llama 3 model card counts energy as GPU-hours &times; "
            "per-GPU peak power (700 W for H100), with no PUE and no host power; the last row "
            "shows that figure for comparison. PUE defaults also differ by tool (CodeCarbon 1.0, "
            "carbontracker 1.58, Green Algorithms 1.56).</p>"
        )

