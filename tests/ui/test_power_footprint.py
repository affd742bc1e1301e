"""The Power panel's whole footprint, driven as a person would: typing the run, picking a
region, an embodied figure and a network figure, holding GPUs idle, exporting the summary."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import Qt

from presets.loader import load_embodied_figures, load_network_figures
from ui.catalog import HardwareCatalog
from ui.panels.power import FOOTPRINT_TAB, WHERE_TAB, PowerPanel
from workbench import footprint, units
from workbench.scenarios import PowerScenario, scenario_from_dict, scenario_from_json

H = 3600.0


@pytest.fixture
def panel(qtbot, qapp):
    p = PowerPanel(HardwareCatalog(), PowerScenario())
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    return p


def type_into(qtbot, widget, text):
    edit = getattr(widget, "edit", widget)
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def pick(qtbot, combo, text):
    index = combo.findText(text)
    assert index >= 0, text
    combo.setFocus()
    combo.showPopup()
    view = combo.view()
    view.setCurrentIndex(combo.model().index(index, 0))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert combo.currentText() == text


def shown(value: float, unit: str) -> tuple[str, str]:
    number, prefixed = units.format_quantity(value, unit).split(" ", 1)
    return number, prefixed


def a_thousand_gpus_for_a_hundred_hours(qtbot, panel):
    """1,000 H100s at 700 W (uncapped) for 100 h, PUE 1.1, 400 gCO2e/kWh, typed in."""
    pick(qtbot, panel.throughput_combo, "Measured")
    type_into(qtbot, panel.field("tokens_per_s_per_gpu"), "3000")
    type_into(qtbot, panel.field("n_gpus"), "1000")
    type_into(qtbot, panel.field("train_tokens"), "1.08T")  # 1,000 x 3,000 tokens/s x 360,000 s
    type_into(qtbot, panel.field("pue"), "1.1")
    type_into(qtbot, panel.field("grid_g_per_kwh"), "400")
    type_into(qtbot, panel.field("gpu_hour_price"), "2")


def test_a_thousand_gpus_for_a_hundred_hours_is_77_mwh_and_30_8_t(qtbot, panel):
    a_thousand_gpus_for_a_hundred_hours(qtbot, panel)
    assert panel.plan().summary.duration_s == pytest.approx(100 * H)
    assert panel.result_text("Average GPU power") == ("700", "W")
    assert panel.result_text("IT energy") == ("70", "MWh")  # 1000 x 100 h x 0.7 kW
    assert panel.result_text("Facility energy") == ("77", "MWh")  # x 1.1
    assert panel.result_text("CO2e") == ("30.8", "t")  # x 0.4 kg/kWh
    assert panel.result_text("Embodied CO2e") == ("not set", "")
    assert panel.result_text("Total CO2e") == ("30.8", "t")
    assert panel.result_text("Compute cost") == ("200k", "USD")  # 100,000 GPU-h x 2
    # the Footprint tab says the same per run
    summary = {q: (value, unit) for q, value, unit in panel.footprint_view.table.rows()}
    assert summary["Facility energy"] == ("77", "MWh") and summary["CO2e, operational"] == ("30.8", "t")


def test_switching_region_changes_the_co2e_only(qtbot, panel):
    a_thousand_gpus_for_a_hundred_hours(qtbot, panel)
    before = {q: panel.result_text(q) for q in ("IT energy", "Facility energy", "CO2e", "Energy cost",
                                                 "Compute cost", "Total cost")}
    pick(qtbot, panel.region_combo, "France")
    after = {q: panel.result_text(q) for q in before}
    assert after["CO2e"] != before["CO2e"]
    assert after["CO2e"] == shown(77_000 * 51.28, "g")  # 77 MWh x 51.28 g/kWh
    assert {q: v for q, v in after.items() if q != "CO2e"} == {q: v for q, v in before.items() if q != "CO2e"}
    # every region of the presets on the chart, lowest first, with its year; France is this run's
    rows = panel.where.region_rows()
    assert len(rows) == len(panel._grids)
    assert [r.co2e_kg for r in rows] == sorted(r.co2e_kg for r in rows)
    (current,) = [r for r in rows if r.current]
    assert current.key == "fr" and current.co2e_kg == pytest.approx(77_000 * 51.28 / 1000)
    bars = {b.label: b for b in panel.where.region_chart.bars()}
    assert bars["France (2020)"].bold and "Green" in current.source
    table = panel.where.sources
    assert table.rowCount() == len(rows)
    assert [table.item(i, 2).text() for i in range(table.rowCount())].count("2020") > 10
    # the same energy on each grid gives each grid's CO2e
    poland = next(r for r in rows if r.key == "pl")
    assert poland.co2e_kg == pytest.approx(77_000 * poland.g_per_kwh / 1000)


def test_a_typed_intensity_is_marked_among_the_regions(qtbot, panel):
    a_thousand_gpus_for_a_hundred_hours(qtbot, panel)  # 400 g/kWh typed: a custom region
    rows = panel.where.region_rows()
    assert len(rows) == len(panel._grids) + 1
    (mine,) = [r for r in rows if r.current]
    assert mine.key == "custom" and mine.co2e_kg == pytest.approx(30_800.0)


def test_idle_allocations_cost_and_draw_idle_power_when_known(qtbot, panel):
    a_thousand_gpus_for_a_hundred_hours(qtbot, panel)
    type_into(qtbot, panel.field("idle_s"), "12 h")
    s = panel.scenario()
    assert s.idle_s == 12 * H and s.idle_power_w_per_gpu is None
    assert panel.field("idle_power_w_per_gpu").edit.text() == "not set"
    # paid for, but no energy claimed without an idle power
    assert panel.result_text("Compute cost") == ("224k", "USD")  # 112,000 GPU-h x 2
    assert panel.result_text("Facility energy") == ("77", "MWh")
    panel.chart_tabs.setCurrentIndex(FOOTPRINT_TAB)  # the note is on the Footprint tab
    note = panel.footprint_view.note.text()
    assert "Right-size" in note and "12k GPU-hours" in note and "not counted" in note
    type_into(qtbot, panel.field("idle_power_w_per_gpu"), "90 W")
    assert panel.scenario().idle_power_w_per_gpu == 90.0
    fp = panel.analysis().footprint
    assert fp.idle_it_j == pytest.approx(1000 * 90 * 12 * H)
    assert fp.facility_energy_kwh == pytest.approx(77_000 + 1000 * 0.09 * 12 * 1.1)
    assert panel.result_text("Facility energy")[0] == f"{fp.facility_energy_kwh / 1000:.3g}"
    # one undo step each, with the form's words
    stack = panel.undo_stack()
    assert stack.undoText() == "Change idle power per GPU to 90 W"
    stack.undo()
    assert panel.scenario().idle_power_w_per_gpu is None
    type_into(qtbot, panel.field("idle_power_w_per_gpu"), "90 W")
    type_into(qtbot, panel.field("idle_power_w_per_gpu"), "not set")
    assert panel.scenario().idle_power_w_per_gpu is None


def test_embodied_emissions_from_the_bloom_estimate_beside_the_operational(qtbot, panel):
    a_thousand_gpus_for_a_hundred_hours(qtbot, panel)
    bloom = next(f for f in load_embodied_figures() if f.key == "bloom-a100-apollo")
    combo = panel.embodied_combo
    pick(qtbot, combo, combo.itemText(combo.findData(bloom.key)))
    assert bloom.name in combo.itemData(combo.currentIndex(), Qt.ItemDataRole.ToolTipRole)
    s = panel.scenario()
    assert (s.embodied_gpu_g, s.embodied_server_g, s.embodied_gpus_per_server) == (150e3, 2500e3, 8)
    assert s.embodied_use_fraction == 0.85 and s.embodied_lifetime_s == 6 * footprint.SECONDS_PER_YEAR
    assert panel.lifetime_field.value() == pytest.approx(6.0)
    per_gpu_hour = (150 + 2500 / 8) / (6 * 8760 * 0.85)  # kg
    embodied = per_gpu_hour * 100_000
    assert panel.result_text("Embodied CO2e") == shown(embodied * 1000, "g")
    assert panel.result_text("Total CO2e") == shown((30_800 + embodied) * 1000, "g")
    assert panel.result_text("CO2e") == ("30.8", "t")  # operational, as before
    panel.chart_tabs.setCurrentIndex(FOOTPRINT_TAB)  # the note is on the Footprint tab
    assert "6 years at 85% use" in panel.footprint_view.note.text()
    assert panel.undo_stack().undoText() == f"Use embodied figure {bloom.name}"
    # an own figure: typed, amortised over the lifetime typed
    type_into(qtbot, panel.lifetime_field, "4")
    assert panel.scenario().embodied_lifetime_s == pytest.approx(4 * footprint.SECONDS_PER_YEAR)
    assert panel.embodied_combo.currentText() == "Your own figure"
    pick(qtbot, panel.embodied_combo, "Not set")
    assert panel.scenario().embodied_gpu_g is None and panel.result_text("Embodied CO2e") == ("not set", "")
    assert not panel.field("embodied_server_g").isEnabled()


def test_network_power_adds_to_the_it_energy(qtbot, panel):
    a_thousand_gpus_for_a_hundred_hours(qtbot, panel)
    figure = next(f for f in load_network_figures() if f.key == "osfp-800g-switch-end")
    combo = panel.network_combo
    pick(qtbot, combo, combo.itemText(combo.findData(figure.key)))
    assert combo.currentText() == "400G optics at the switch: 8.5 W a port"
    assert panel.scenario().network_w_per_gpu == 8.5
    assert panel.analysis().footprint.network_energy_j == pytest.approx(1000 * 8.5 * 100 * H)
    it_mwh = panel.analysis().footprint.it_energy_j / 3.6e9
    assert it_mwh == pytest.approx(70 + 0.85)  # 70 MWh + 1000 x 8.5 W x 100 h
    assert panel.result_text("IT energy") == (f"{it_mwh:.3g}", "MWh")
    assert "docs.nvidia.com" in panel.network_combo.itemData(panel.network_combo.currentIndex(),
                                                             Qt.ItemDataRole.ToolTipRole)
    type_into(qtbot, panel.field("network_w_per_gpu"), "25 W")
    assert panel.network_combo.currentText() == "Your own figure"
    assert panel.analysis().footprint.network_energy_j == pytest.approx(1000 * 25 * 100 * H)


def test_the_run_summary_exports_to_csv_with_the_plans_numbers(qtbot, panel, tmp_path):
    a_thousand_gpus_for_a_hundred_hours(qtbot, panel)
    path = tmp_path / "summary.csv"
    panel.export_summary_csv(path)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["quantity", "value (in the unit column)", "unit", "how"]
    values = {r[0]: (r[1], r[2]) for r in rows[1:]}
    assert values["GPUs"] == ("1000", "GPUs")
    assert values["Run duration"] == ("360000", "s")
    assert values["GPU-hours, training"] == ("100000", "GPU-h")
    assert values["Facility energy"] == ("77000", "kWh")
    assert values["CO2e, operational"] == ("30800", "kg CO2e")
    assert values["CO2e, embodied"] == ("not set", "kg CO2e")
    assert values["Compute cost"] == ("200000", "USD")
    # the same table through the panel's Export with the Footprint tab in front
    panel.chart_tabs.setCurrentIndex(FOOTPRINT_TAB)
    tab_csv = tmp_path / "tab.csv"
    panel.export_to("csv", tab_csv)
    with open(tab_csv, newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == rows
    # and the regions, with their year and source, from the Where and when tab
    panel.chart_tabs.setCurrentIndex(WHERE_TAB)
    regions_csv = tmp_path / "regions.csv"
    panel.export_to("csv", regions_csv)
    with open(regions_csv, newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    assert table[0] == ["region", "key", "grid intensity (gCO2e/kWh)", "data year (year)", "CO2e (kg)",
                        "this run (1)", "source"]
    france = next(r for r in table[1:] if r[1] == "fr")
    assert france[3] == "2020" and "GreenAlgorithms" in france[6]


def test_the_new_fields_round_trip_and_older_scenarios_open(qtbot, panel):
    a_thousand_gpus_for_a_hundred_hours(qtbot, panel)
    type_into(qtbot, panel.field("idle_s"), "3 days")
    type_into(qtbot, panel.field("embodied_gpu_g"), "200 kg")
    s = panel.scenario()
    assert s.idle_s == 3 * 24 * H and s.embodied_gpu_g == 200e3
    assert scenario_from_json(s.to_json()) == s
    old = scenario_from_dict({"kind": "power", "schema_version": 3, "n_gpus": 64, "tokens_per_s_per_gpu": 3000.0,
                              "throughput_mfu": None})
    panel.set_scenario(old)
    assert panel.result_text("Embodied CO2e") == ("not set", "")
    assert panel.field("capped_gpus").edit.text() == "all"
    assert panel.analysis().footprint.total_co2e_kg == pytest.approx(panel.plan().summary.co2e_kg)
