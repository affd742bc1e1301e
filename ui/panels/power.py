"""Power and carbon panel: what a GPU power cap costs in speed and saves in energy, and the
energy, emissions and cost of the planned training run.

Every number comes from ``workbench.power`` (the capping model and the cap sweep) and
``workbench.carbon`` (the planned run: duration, GPU-hours, energy, CO2e, cost); this module
only lays out inputs, draws what it gets and formats it. Region and PUE presets (with their
sources) come from ``presets``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QVBoxLayout,
    QWidget,
)

import presets
from ui import plain
from ui import theme as th
from ui.charts import Chart
from ui.panel import PanelBase, ResultRow
from ui.widgets.cap_field import CapField
from workbench import carbon, power, units
from workbench import mfu as mfu_model
from workbench._validate import InputError
from workbench.hardware import PRECISION_LABELS, PRECISIONS
from workbench.scenarios import FIELD_LABELS, PowerScenario
from workbench.workspace import POWER_PLAN_FIELDS

#: What a user may type in the power-cap field to remove the cap.
#: Region key of a user-typed grid intensity.
CUSTOM = "custom"
CURRENCIES = ("USD", "EUR", "GBP", "CHF", "JPY", "CNY", "CAD", "AUD", "INR", "SEK")

#: Compared scenarios: not the series colours (blue, orange), not the best-cap green, not the
#: operating point's vermillion.
COMPARE_COLORS = (th.PURPLE, th.SKY, th.YELLOW)

CAP_HEADER = "power cap (W)"
TPJ_HEADER = "tokens per joule (tokens/J)"
RATE_HEADER = "throughput (tokens/s)"
POWER_HEADER = "average GPU power (W)"


# -- formatting at the edge (units only, no model) -----------------------------------------------
def _count(value: float) -> str:
    """3000 -> "3k", 1.5e12 -> "1.5T" (plain numbers with count suffixes)."""
    return units.format_quantity(value, "")


def _energy(joules: float) -> tuple[str, str]:
    """Energy the way grids bill it: (number, "kWh" / "MWh" / "GWh")."""
    kwh = joules / carbon.J_PER_KWH
    for factor, unit in ((1e6, "GWh"), (1e3, "MWh"), (1.0, "kWh")):
        if abs(kwh) >= factor:
            return f"{kwh / factor:.3g}", unit
    return f"{kwh:.3g}", "kWh"


def _money(value: float) -> str:
    if abs(value) < 1000:
        return f"{value:,.2f}"
    return _count(value)


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
        self._comparison: list[tuple[str, PowerScenario]] = []
        self._sweep: power.CappedPerformance | None = None
        self._plan: carbon.PlannedRun | None = None
        self._best: power.CappedPerformance | None = None
        self._slider_caps = np.array([])
        self._view_message = ""
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
        self.throughput_note = QLabel(self.form_widget)
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
                             "joule against a second at the TDP (Zeus's cost, η = 0.5): a deep cap saves "
                             "energy but the run takes longer. Energy only finds the most tokens per joule.")

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
        for combo in (self.hardware_combo, self.pue_combo, self.region_combo, self.field("currency")):
            # long preset names must not widen the inputs column (the full text is in the popup)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(8)

    def _fill_hardware(self) -> None:
        combo = self.hardware_combo
        combo.blockSignals(True)
        combo.clear()
        for hw in self.catalog.items():
            tdp = f"TDP {hw.tdp_w:g} W" if hw.tdp_w is not None else "no TDP given"
            combo.addItem(hw.name, hw.key)
            combo.setItemData(combo.count() - 1, plain.tooltip(f"{hw.name}: {tdp}"), Qt.ItemDataRole.ToolTipRole)
        key = getattr(self._scenario, "hardware", None)
        if key is not None and combo.findData(key) < 0:
            combo.addItem(f"{key} (not in the catalog)", key)
        combo.blockSignals(False)
        self._sync_field("hardware")

    def _on_catalog_changed(self) -> None:
        self._fill_hardware()
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

    def _field_edited(self, name: str, value: Any) -> None:
        if self._syncing:
            return
        if name == "grid_g_per_kwh":  # a typed intensity is a custom region
            self.edit(grid_g_per_kwh=value, region=CUSTOM)
            return
        super()._field_edited(name, value)

    def edit(self, *, _text: str | None = None, _merge: bool = True, **changes: Any) -> bool:
        """As :meth:`PanelBase.edit`, and a cap the model cannot honour on this GPU is refused
        with the model's message next to the cap field."""
        if changes.get("power_cap_w") is not None and self._scenario is not None:
            tdp = self._tdp()
            if tdp is not None:
                try:
                    candidate = self._scenario.with_changes(**changes)
                    carbon.plan_for_scenario(candidate, tdp, tokens_per_s_per_gpu=1.0)  # any rate: the cap
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
        self.chart.enable_hover(formatter=lambda x, y: f"cap {x:.0f} W\n{y:.3g} tokens/J")
        self.rate_chart.enable_hover(formatter=lambda x, y: f"cap {x:.0f} W\n{_count(y)} tokens/s")
        column.addWidget(self.chart, 1)
        column.addWidget(self.rate_chart, 1)
        self.add_chart(self.charts)

    def chart_for_export(self) -> QWidget | None:
        """Both charts (efficiency over throughput) export together."""
        return self.charts

    # -- state helpers -----------------------------------------------------------------------
    def _hardware(self):
        key = getattr(self._scenario, "hardware", None)
        try:
            return self.catalog.get(key)
        except KeyError:
            return None

    def _tdp(self) -> float | None:
        hw = self._hardware()
        return hw.tdp_w if hw is not None else None

    def _model_args(self, s: PowerScenario) -> dict[str, float]:
        return dict(compute_bound_share=s.compute_bound_share, static_fraction=s.static_fraction,
                    min_voltage_fraction=s.min_voltage_fraction)

    def plan(self) -> carbon.PlannedRun | None:
        """The planned run shown (None when it cannot be computed)."""
        self.ensure_drawn()  # a hidden panel draws what it put off before it is read
        return self._plan

    def best_cap(self) -> float | None:
        """The best cap for the scenario's objective (W), as marked on the chart."""
        return float(self._best.cap_w) if self._best is not None else None

    # -- comparison --------------------------------------------------------------------------
    def set_comparison(self, items: Sequence[tuple[str, PowerScenario]]) -> None:
        """Overlay other saved scenarios' curves (dashed, named in the legend)."""
        self._comparison = [(str(name), scenario) for name, scenario in items]
        self.refresh()

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
        self._sweep = self._plan = self._best = None
        for chart in (self.chart, self.rate_chart):
            chart.clear_series()
            chart.clear_reference_lines()
            chart.clear_operating_point()
        self.results.set_rows([ResultRow(q, None, "", tip) for q, tip in self._row_specs()])
        self._sync_slider(np.array([]), 0.0)
        self._view_message = message
        self.show_status(message)

    def refresh(self) -> None:
        if not hasattr(self, "charts"):
            return  # still building
        s: PowerScenario = self._scenario
        self._sync_pue_combo()
        self._sync_region_combo()
        self._sync_labels()
        self._sync_throughput()
        self.throughput_note.setText("")
        hw = self._hardware()
        self._fill_precisions(hw)
        if hw is None:
            self._clear_view(f"Hardware '{s.hardware}' is not in the catalog: pick a GPU.")
            return
        if hw.tdp_w is None:
            self._clear_view(f"{hw.name} has no TDP, so its power cannot be modelled: "
                             "pick another GPU or add its TDP in the preset manager.")
            return
        tdp = hw.tdp_w
        model = self._model_args(s)
        try:
            peak = carbon.plan_peak_flops(s, hw)
            rate = carbon.scenario_tokens_per_s(s, peak)
            sweep = power.power_cap_sweep(tdp, rate, **model)
            best = power.best_of_sweep(sweep, s.cap_objective, tdp)
            plan = carbon.plan_for_scenario(s, tdp, tokens_per_s_per_gpu=rate)
            llama_kwh = carbon.llama3_style_energy_kwh(plan.summary.gpu_hours, tdp)
        except InputError as exc:
            if exc.parameter == "power_cap_w":
                lowest = power.min_power_cap(tdp, s.static_fraction, s.min_voltage_fraction)
                message = (f"The power cap is below the lowest this model can honour on {hw.name} "
                           f"({lowest:.0f} W): raise it or clear it.")
            elif exc.parameter == "precision":
                message = (f"{hw.name} has no {PRECISION_LABELS[s.precision]} rate for the MFU to refer to: "
                           "pick another training precision, or plan from a measured throughput.")
            else:
                message = str(exc)
            self._clear_view(message)
            return
        self._sweep, self._best, self._plan = sweep, best, plan
        if self._view_message and self.status_text() == self._view_message:
            self.clear_error()
        self._view_message = ""
        self._sync_slider(np.asarray(sweep.cap_w), plan.cap_w)
        self.throughput_note.setText(self._plan_basis(rate) if self.follows_plan()
                                     else self._throughput_basis(s, peak, rate))
        self._draw(hw, sweep, best, plan)
        self._fill_results(hw, best, plan, llama_kwh)

    def _plan_basis(self, rate: float) -> str:
        view = self.plan_view()
        prediction = getattr(view, "prediction", None)
        if prediction is None:
            return f"{_count(rate)} tokens/s per GPU uncapped, from the run plan"
        return (f"= {_count(rate)} tokens/s per GPU uncapped, from the run plan "
                f"(MFU {prediction.mfu:.1%}; a cap slows {prediction.compute_bound_share:.0%} of its step)")

    @staticmethod
    def _throughput_basis(s: PowerScenario, peak: float | None, rate: float) -> str:
        """What the uncapped throughput per GPU rests on, in one line under the fields."""
        if peak is None:
            return f"{_count(rate)} tokens/s per GPU uncapped, as measured"
        per_token = mfu_model.flops_per_token(s.n_params)
        return (f"= {_count(rate)} tokens/s per GPU uncapped: {s.throughput_mfu:.0%} of "
                f"{units.format_quantity(peak, 'FLOP/s')} {PRECISION_LABELS[s.precision]} / "
                f"{units.format_quantity(per_token, 'FLOP')} per token (6N)")

    def _draw(self, hw, sweep, best, plan) -> None:
        perf = plan.performance
        for chart in (self.chart, self.rate_chart):
            chart.clear_series()
            chart.clear_reference_lines()
        main = "This scenario" if self._comparison else hw.name
        self.chart.add_series(main, sweep.cap_w, sweep.tokens_per_joule, color=th.BLUE)
        self.rate_chart.add_series(main, sweep.cap_w, sweep.tokens_per_s, color=th.ORANGE)
        for i, (name, other) in enumerate(self._comparison):
            color = COMPARE_COLORS[i % len(COMPARE_COLORS)]
            try:
                other_hw = self.catalog.get(other.hardware)
                if other_hw.tdp_w is None:
                    continue
                other_rate = carbon.scenario_tokens_per_s(other, carbon.plan_peak_flops(other, other_hw))
                other_sweep = power.power_cap_sweep(other_hw.tdp_w, other_rate, **self._model_args(other))
            except (KeyError, ValueError):
                continue
            self.chart.add_series(name, other_sweep.cap_w, other_sweep.tokens_per_joule, color=color, style="dash")
            self.rate_chart.add_series(name, other_sweep.cap_w, other_sweep.tokens_per_s, color=color,
                                       style="dash")
        marker = "best tokens/J" if self._scenario.cap_objective == "energy" else "best cap"
        self.chart.add_series(marker, [best.cap_w], [best.tokens_per_joule], color=th.GREEN,
                              symbol="d", width=0.01, in_legend=False)
        for chart in (self.chart, self.rate_chart):
            chart.add_reference_line(best.cap_w, label=f"best {best.cap_w:.0f} W", color=th.GREEN)
        cap_text = f"{plan.cap_w:.0f} W" + (" (uncapped)" if self._scenario.power_cap_w is None else "")
        self.chart.set_operating_point(plan.cap_w, float(perf.tokens_per_joule), cap_text)
        self.rate_chart.set_operating_point(plan.cap_w, float(perf.tokens_per_s), "")
        caps = np.concatenate([np.asarray(series.x) for series in self.chart.series()] + [[plan.cap_w]])
        lo, hi = float(np.min(caps)), float(np.max(caps))
        margin = 0.04 * (hi - lo) if hi > lo else 25.0
        for chart in (self.chart, self.rate_chart):
            ys = np.concatenate([np.asarray(series.y) for series in chart.series()])
            y_lo, y_hi = float(np.min(ys)), float(np.max(ys))
            span = (y_hi - y_lo) or abs(y_hi) or 1.0
            # headroom at the top for the legend and the cap labels
            top = 0.28 if chart.legend_visible() else 0.1
            chart.set_log_range(lo - margin, hi + margin, y_lo - 0.05 * span, y_hi + top * span)

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
            ("IT energy", "GPUs x (average GPU power + host power per GPU) x duration"),
            ("Facility energy", "IT energy x PUE: what the data centre draws from the grid"),
            ("CO2e", "Facility energy x grid carbon intensity"),
            ("Energy cost", "Facility energy x energy price per kWh"),
            ("Compute cost", "GPU-hours x price per GPU-hour"),
            ("Total cost", "Energy cost + compute cost"),
            ("Energy, Llama 3 convention", "GPU-hours x TDP, no host power and no PUE, as the Llama 3 model "
                                           "card counts it (for comparison with published figures)"),
        ]

    def _fill_results(self, hw, best, plan, llama_kwh: float) -> None:
        s: PowerScenario = self._scenario
        perf, summary = plan.performance, plan.summary
        tips = dict(self._row_specs())
        best_label = "Best cap for efficiency" if s.cap_objective == "energy" else "Best cap for energy and time"
        it_value, it_unit = _energy(summary.it_energy_j)
        fac_value, fac_unit = _energy(summary.facility_energy_j)
        llama_value, llama_unit = _energy(llama_kwh * carbon.J_PER_KWH)
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
            ResultRow("GPU-hours", _count(summary.gpu_hours), "GPU-h", tips["GPU-hours"]),
            ResultRow("IT energy", it_value, it_unit, tips["IT energy"]),
            ResultRow("Facility energy", fac_value, fac_unit, tips["Facility energy"] + f" (PUE {s.pue:g})"),
            ResultRow("CO2e", summary.co2e_kg * 1000.0, "g",
                      tips["CO2e"] + f" ({where}{s.grid_g_per_kwh:g} gCO2e/kWh)"),
            ResultRow("Energy cost", _money(summary.energy_cost), s.currency, tips["Energy cost"]),
            # a GPU-hour price of 0 is "not set": a silent 0 would read as free GPUs
            ResultRow("Compute cost", _money(summary.compute_cost) if s.gpu_hour_price > 0 else "not set",
                      s.currency if s.gpu_hour_price > 0 else "",
                      tips["Compute cost"] + ("" if s.gpu_hour_price > 0 else ": set a price per GPU-hour")),
            ResultRow("Total cost", _money(summary.total_cost), s.currency,
                      tips["Total cost"] + ("" if s.gpu_hour_price > 0 else " (energy only: no GPU-hour price set)")),
            ResultRow("Energy, Llama 3 convention", llama_value, llama_unit,
                      tips["Energy, Llama 3 convention"] + f" ({hw.tdp_w:g} W)"),
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
        """The cap sweep of the current scenario, headers naming units."""
        if self._sweep is None:
            return None
        sweep = self._sweep
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
            "<p><b>Conventions differ.</b> The Llama 3 model card counts energy as GPU-hours &times; "
            "per-GPU peak power (700 W for H100), with no PUE and no host power; the last row "
            "shows that figure for comparison. PUE defaults also differ by tool (CodeCarbon 1.0, "
            "carbontracker 1.58, Green Algorithms 1.56).</p>"
        )

