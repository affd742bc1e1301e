"""Power and carbon panel, driven the way a person would: typing, dragging, picking presets."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

import presets
from ui.catalog import HardwareCatalog
from ui.panels.power import CAP_HEADER, RATE_HEADER, TPJ_HEADER, PowerPanel
from workbench import carbon, power, units
from workbench.context import RunContext
from workbench.scenarios import PowerScenario


@pytest.fixture
def catalog(qapp):
    return HardwareCatalog()


@pytest.fixture
def panel(qtbot, catalog):
    # planned from a measured throughput (3,000 tokens/s per GPU); the MFU plan has its own tests
    p = PowerPanel(catalog, PowerScenario(n_gpus=8, train_tokens=1e12, gpu_hour_price=2.0, throughput_mfu=None,
                                          cap_objective="energy"))
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    return p


def type_into(qtbot, panel, name, text):
    edit = panel.field(name).edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def pick(qtbot, combo, text):
    """Choose an item as a user does: open the popup, highlight the item, press Enter."""
    index = combo.findText(text)
    assert index >= 0, text
    combo.setFocus()
    combo.showPopup()
    view = combo.view()
    view.setCurrentIndex(combo.model().index(index, 0))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert combo.currentText() == text


def shown(quantity_value: float, unit: str) -> tuple[str, str]:
    text = units.format_quantity(quantity_value, unit)
    number, prefixed = text.split(" ", 1)
    return number, prefixed


def test_co2e_row_equals_carbon_arithmetic_for_a_region_and_pue(qtbot, panel):
    pick(qtbot, panel.region_combo, "United States, California")
    pick(qtbot, panel.pue_combo, "Typical enterprise / unknown provider")
    s = panel.scenario()
    grid = next(g for g in presets.load_grids() if g.key == "us-ca")
    assert (s.region, s.grid_g_per_kwh, s.pue) == ("us-ca", grid.g_per_kwh, 1.56)
    assert panel.field("grid_g_per_kwh").value() == grid.g_per_kwh
    assert panel.field("pue").value() == 1.56

    # the same run, from workbench's own pieces
    perf = power.capped_performance(700.0, 700.0, s.tokens_per_s_per_gpu, s.compute_bound_share,
                                    s.static_fraction, s.min_voltage_fraction)
    duration = carbon.duration_from_tokens(s.train_tokens, 8 * perf.tokens_per_s)
    it_kwh = carbon.it_energy_j(8, perf.power_w, duration) / carbon.J_PER_KWH
    facility = carbon.facility_energy_kwh(it_kwh, 1.56)
    co2_kg = carbon.emissions_kg(facility, grid.g_per_kwh)
    assert panel.plan().summary.co2e_kg == pytest.approx(co2_kg)
    assert panel.result_text("CO2e") == shown(co2_kg * 1000.0, "g")
    assert "gCO2e/kWh" in panel.results.item(11, 0).toolTip()
    # region tooltip names the year and the source
    tip = panel.region_combo.itemData(panel.region_combo.currentIndex(), Qt.ItemDataRole.ToolTipRole)
    assert "2020" in tip and "Source" in tip


def test_typing_a_custom_intensity_makes_the_region_custom(qtbot, panel):
    type_into(qtbot, panel, "grid_g_per_kwh", "100")
    s = panel.scenario()
    assert (s.region, s.grid_g_per_kwh) == ("custom", 100.0)
    assert panel.region_combo.currentData() == "custom"
    panel.undo_stack().undo()
    assert panel.scenario().region == "world"
    assert panel.region_combo.currentData() == "world"


def test_setting_the_cap_lowers_average_power_and_throughput(qtbot, panel):
    uncapped = panel.plan()
    assert panel.field("power_cap_w").edit.text() == "uncapped"
    assert panel.result_text("Average GPU power") == ("700", "W")
    type_into(qtbot, panel, "power_cap_w", "450 W")
    assert panel.scenario().power_cap_w == 450.0
    capped = panel.plan()
    assert capped.performance.power_w <= 450.0 < uncapped.performance.power_w
    assert capped.performance.tokens_per_s < uncapped.performance.tokens_per_s
    assert panel.result_text("Average GPU power") == ("450", "W")
    assert panel.result_text("Clock fraction")[0] != "100"
    assert panel.chart.operating_point()[:2] == pytest.approx((450.0, capped.performance.tokens_per_joule))
    # "uncapped" takes the cap off again
    type_into(qtbot, panel, "power_cap_w", "uncapped")
    assert panel.scenario().power_cap_w is None
    assert panel.result_text("Average GPU power") == ("700", "W")


def test_best_cap_is_marked(panel):
    s = panel.scenario()
    best = power.best_cap_for_efficiency(700.0, s.tokens_per_s_per_gpu, compute_bound_share=s.compute_bound_share,
                                         static_fraction=s.static_fraction,
                                         min_voltage_fraction=s.min_voltage_fraction)
    assert panel.best_cap() == best.cap_w < 700.0
    marker = {series.name: series for series in panel.chart.series()}["best tokens/J"]
    assert marker.x.tolist() == [best.cap_w]
    assert marker.y.tolist() == pytest.approx([best.tokens_per_joule])
    assert not marker.in_legend
    assert [value for _line, value, *_ in panel.chart._lines] == [best.cap_w]
    assert panel.result_text("Best cap for efficiency") == (f"{best.cap_w:g}", "W")
    # the sweep peaks at that cap
    tpj = {series.name: series for series in panel.chart.series()}["NVIDIA H100 SXM"].y
    assert tpj.max() == pytest.approx(best.tokens_per_joule)


def test_slider_drag_is_one_undo_step(qtbot, panel):
    slider = panel.cap_slider
    assert slider.value() == slider.maximum()  # uncapped: the right end
    assert panel.slider_min_label.text().endswith("W") and panel.slider_max_label.text() == "700 W"
    slider.setFocus()
    for _ in range(4):
        qtbot.keyClick(slider, Qt.Key.Key_Left)
    assert panel.scenario().power_cap_w == 600.0
    assert panel.field("power_cap_w").edit.text() == "600 W"
    stack = panel.undo_stack()
    assert stack.count() == 1
    assert "ower cap" in stack.undoText()
    stack.undo()
    assert panel.scenario().power_cap_w is None
    assert slider.value() == slider.maximum()
    # a typed cap moves the slider to the nearest 25 W step, without a new undo step
    type_into(qtbot, panel, "power_cap_w", "512 W")
    assert float(panel._slider_caps[slider.value()]) == 500.0
    assert panel.scenario().power_cap_w == 512.0


def test_the_plan_sets_the_run_and_its_accounting(qtbot, panel):
    from ui.document import PresetCatalog
    from workbench.plan import predict
    from workbench.workspace import plan_from_context

    stack = panel.undo_stack()
    ctx = RunContext(hardware="h100-sxm", n_gpus=512, train_tokens=2e12)
    assert panel.apply_context(ctx)
    s = panel.scenario()
    assert (s.n_gpus, s.train_tokens) == (512, 2e12)
    assert stack.count() == 0  # the plan is not an edit of this panel
    assert panel.field("n_gpus").value() == 512
    # the panel's accounting is the plan's prediction
    expected = predict(plan_from_context(ctx)[0], PresetCatalog(panel.catalog))
    after = panel.plan().summary
    assert after.duration_s == pytest.approx(expected.train_time_s, rel=1e-9)
    assert after.facility_energy_kwh == pytest.approx(expected.facility_energy_kwh, rel=1e-9)
    assert after.co2e_kg == pytest.approx(expected.co2e_kg, rel=1e-9)
    assert after.total_cost == pytest.approx(expected.total_cost, rel=1e-9)
    assert panel.result_text("CO2e") == shown(after.co2e_kg * 1000.0, "g")
    assert panel.result_text("Throughput, all GPUs")[0] == units.format_quantity(panel.plan().job_tokens_per_s, "")
    # the same plan again changes nothing
    panel.apply_context(ctx)
    assert panel.scenario() is s
    # a local override ignores the plan
    panel.set_override_context(True)
    assert not panel.apply_context(RunContext(n_gpus=16))
    assert panel.scenario().n_gpus == 512


def test_context_hardware_changes_tdp_and_slider(panel):
    panel.apply_context(RunContext(hardware="a100-sxm-80gb", n_gpus=8))
    assert panel.scenario().hardware == "a100-sxm-80gb"
    assert panel.hardware_combo.currentData() == "a100-sxm-80gb"
    assert panel.tdp_label.text() == "400 W"
    assert panel.slider_max_label.text() == "400 W"
    assert panel.result_text("Average GPU power") == ("400", "W")


def test_bad_input_keeps_the_old_value_with_a_message(qtbot, panel):
    stack = panel.undo_stack()
    old = panel.scenario()
    type_into(qtbot, panel, "tokens_per_s_per_gpu", "fast")
    field = panel.field("tokens_per_s_per_gpu")
    assert field.message_text()
    assert panel.scenario() == old and stack.count() == 0
    # a cap below the lowest the model can honour: the model's message, next to the field
    type_into(qtbot, panel, "power_cap_w", "100 W")
    cap = panel.field("power_cap_w")
    assert "W" in cap.message_text() and ">=" in cap.message_text()
    assert panel.scenario().power_cap_w is None and stack.count() == 0
    assert panel.result_text("Average GPU power") == ("700", "W")
    # Escape brings the kept value back
    qtbot.keyClick(cap.edit, Qt.Key.Key_Escape)
    assert cap.edit.text() == "uncapped" and not cap.message_text()
    # a PUE below 1 is refused by the field's bounds
    type_into(qtbot, panel, "pue", "0.9")
    assert panel.field("pue").message_text() and panel.scenario().pue == old.pue


def test_comparison_overlays_dashed_named_curves(panel):
    panel.set_comparison([("A100 saved", PowerScenario(hardware="a100-sxm-80gb"))])
    series = {s.name: s for s in panel.chart.series()}
    assert "A100 saved" in series and "This scenario" in series
    assert series["A100 saved"].style == Qt.PenStyle.DashLine
    assert series["A100 saved"].x.max() == 400.0
    assert panel.chart.legend_visible()
    assert "A100 saved" in {s.name for s in panel.rate_chart.series()}
    (xmin, _xmax), _ = panel.chart.visible_range()
    assert xmin < series["A100 saved"].x.min()  # the compared curve is in view
    panel.clear_comparison()
    assert "A100 saved" not in {s.name for s in panel.chart.series()}
    assert not panel.chart.legend_visible()


def test_csv_export_is_the_sweep_with_units(tmp_path, panel):
    path = tmp_path / "power.csv"
    panel.export_to("csv", path)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    assert header[:3] == [CAP_HEADER, TPJ_HEADER, RATE_HEADER]
    assert header[:3] == ["power cap (W)", "tokens per joule (tokens/J)", "throughput (tokens/s)"]
    caps = [float(r[0]) for r in rows[1:]]
    assert caps == sorted(caps) and caps[-1] == 700.0 and caps[-1] - caps[-2] == 25.0


def test_png_export_shows_both_charts(tmp_path, panel):
    path = tmp_path / "power.png"
    panel.export_to("png", path, width_px=1200)
    image = QImage(str(path))
    assert image.width() == 1200 and image.height() > 200
    # blue efficiency curve on the left half, orange throughput curve on the right half
    colours = {image.pixelColor(x, y).name() for x in range(0, 1200, 3) for y in range(0, image.height(), 3)}
    assert len(colours) > 10


def test_explain_opens_a_non_blocking_box(qtbot, panel):
    text = panel.explanation()
    for phrase in ("TDP", "PUE", "grid", "Llama 3", "compute-bound"):
        assert phrase in text
    panel.action_explain.trigger()
    box = panel._explain_box
    assert box is not None and box.isVisible()
    assert not box.isModal()  # shown, not exec()'d: the app keeps running
    assert "Llama 3" in box.text()
    box.close()


def test_currency_renames_price_labels_and_cost_units(qtbot, panel):
    pick(qtbot, panel.field("currency"), "EUR")
    assert panel.scenario().currency == "EUR"
    assert panel.result_text("Total cost")[1] == "EUR"
    label = panel.form.labelForField(panel.field("energy_price_per_kwh"))
    assert "EUR/kWh" in label.text()


def test_hardware_without_tdp_says_so(qtbot, catalog):
    p = PowerPanel(catalog, PowerScenario(hardware="no-such-gpu"))
    qtbot.addWidget(p)
    assert "not in the catalog" in p.status_text()
    assert p.plan() is None
    assert p.result_text("CO2e")[0] == "–"
    p.apply_context(RunContext(hardware="h100-sxm"))
    assert p.plan() is not None and not p.status_text()


@pytest.fixture
def planned(qtbot, catalog):
    p = PowerPanel(catalog, PowerScenario(n_gpus=8, train_tokens=1e12))  # the default: 40% MFU
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    return p


def test_planned_throughput_follows_the_model_size(qtbot, planned):
    assert planned.throughput_combo.currentText() == "Planned from MFU"
    assert not planned.field("tokens_per_s_per_gpu").isEnabled() and planned.field("throughput_mfu").isEnabled()
    # 40% of an H100's dense BF16 peak over 6 x 8e9 FLOPs per token
    peak = HardwareCatalog().get("h100-sxm").peak_flops("bf16")
    assert planned.plan().performance.tokens_per_s == pytest.approx(0.4 * peak / 48e9)
    assert "40% of" in planned.throughput_note.text() and "48 GFLOP per token" in planned.throughput_note.text()
    days_8b = planned.plan().summary.duration_s
    planned.edit(n_params=70e9)
    assert planned.field("n_params").value() == 70e9
    assert planned.plan().summary.duration_s == pytest.approx(days_8b * 70 / 8)  # 8.75x the FLOPs per token
    # FP8 doubles an H100's dense peak, so at the same MFU the run takes half as long
    planned.edit(precision="fp8")
    assert planned.plan().summary.duration_s == pytest.approx(days_8b * 70 / 8 / 2, rel=1e-3)


def test_typing_an_mfu_and_switching_to_measured_are_undoable(qtbot, planned):
    type_into(qtbot, planned, "throughput_mfu", "50%")
    assert planned.scenario().throughput_mfu == pytest.approx(0.5)
    pick(qtbot, planned.throughput_combo, "Measured")
    s = planned.scenario()
    assert s.throughput_mfu is None
    assert planned.field("tokens_per_s_per_gpu").isEnabled() and not planned.field("throughput_mfu").isEnabled()
    assert planned.plan().performance.tokens_per_s == pytest.approx(s.tokens_per_s_per_gpu)
    assert planned.undo_stack().undoText() == "Plan from the measured throughput"
    planned.undo_stack().undo()
    assert planned.scenario().throughput_mfu == pytest.approx(0.5)
    assert planned.throughput_combo.currentText() == "Planned from MFU"
    pick(qtbot, planned.throughput_combo, "Measured")
    pick(qtbot, planned.throughput_combo, "Planned from MFU")
    assert planned.scenario().throughput_mfu == pytest.approx(0.5)  # the MFU last used comes back


def test_an_mfu_above_100_percent_is_refused_with_a_message(qtbot, planned):
    type_into(qtbot, planned, "throughput_mfu", "140%")
    assert planned.scenario().throughput_mfu == pytest.approx(0.4)
    assert planned.field("throughput_mfu").message_text()


def test_a_precision_the_gpu_lacks_says_what_to_do(qtbot, planned):
    planned.apply_context(RunContext(hardware="a100-sxm-80gb", precision="fp8"))
    assert planned.plan() is None
    assert "has no FP8 rate" in planned.status_text() and "measured throughput" in planned.status_text()
    pick(qtbot, planned.throughput_combo, "Measured")
    assert planned.plan() is not None  # the measured throughput needs no peak


def test_switching_a_measured_scenario_to_mfu_takes_model_and_precision_from_the_context(qtbot, catalog):
    from workbench.scenarios import scenario_from_dict

    # saved before the plan had a model size: upgraded with placeholders (8B, BF16)
    old = scenario_from_dict({"kind": "power", "schema_version": 1, "tokens_per_s_per_gpu": 6500.0})
    panel = PowerPanel(catalog, old)
    qtbot.addWidget(panel)
    panel.show()
    panel.apply_context(RunContext(hardware="h100-sxm", model_params=70e9, precision="fp8"))
    panel.set_scenario(old)  # as when a saved workspace puts its scenario back
    pick(qtbot, panel.throughput_combo, "Planned from MFU")
    s = panel.scenario()
    assert (s.throughput_mfu, s.n_params, s.precision) == (0.4, 70e9, "fp8")


def test_the_precision_list_is_the_gpus_own(qtbot, planned):
    combo = planned.field("precision")
    h100 = [combo.itemData(i) for i in range(combo.count())]
    assert "bf16" in h100 and "fp8" in h100
    assert h100 == list(HardwareCatalog().get("h100-sxm").precisions)
    planned.apply_context(RunContext(hardware="v100-sxm2", precision="bf16"))
    labels = [combo.itemText(i) for i in range(combo.count())]
    assert "BF16 (not on this GPU)" in labels and combo.currentData() == "bf16"
    assert "FP8" not in labels


def test_the_best_cap_weighs_energy_and_time_by_default(qtbot, catalog):
    from workbench import power

    p = PowerPanel(catalog, PowerScenario(n_gpus=8, train_tokens=1e12, throughput_mfu=None, compute_bound_share=0.3))
    qtbot.addWidget(p)
    s = p.scenario()
    assert s.cap_objective == "energy_time" and p.field("cap_objective").currentData() == "energy_time"
    both = power.best_cap("energy_time", 700.0, s.tokens_per_s_per_gpu, compute_bound_share=0.3,
                          static_fraction=s.static_fraction, min_voltage_fraction=s.min_voltage_fraction)
    energy = power.best_cap("energy", 700.0, s.tokens_per_s_per_gpu, compute_bound_share=0.3,
                            static_fraction=s.static_fraction, min_voltage_fraction=s.min_voltage_fraction)
    assert energy.cap_w <= both.cap_w  # time counts too: a shallower cap
    assert p.best_cap() == both.cap_w
    assert p.result_text("Best cap for energy and time") == (f"{both.cap_w:g}", "W")
    pick(qtbot, p.field("cap_objective"), "Energy only")
    assert p.scenario().cap_objective == "energy" and p.best_cap() == energy.cap_w
    assert p.undo_stack().count() == 1


def test_an_unset_gpu_hour_price_reads_not_set_rather_than_free(qtbot, panel):
    panel.edit(gpu_hour_price=0.0)
    assert panel.result_text("Compute cost") == ("not set", "")
    panel.edit(gpu_hour_price=2.0)
    value, unit = panel.result_text("Compute cost")
    assert value != "not set" and unit == panel.scenario().currency
