"""The Power panel's cap against energy and time, driven as a person would: the energy weight on
its slider, a cap on only some GPUs, the cap as a command to copy."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from ui.catalog import HardwareCatalog
from ui.panels.power import POWER_TAB, TRADEOFF_TAB, PowerPanel
from ui.panels.power_tradeoff import BEST, COST
from workbench import footprint, power, units
from workbench.scenarios import PowerScenario


@pytest.fixture
def panel(qtbot, qapp):
    p = PowerPanel(HardwareCatalog(), PowerScenario(n_gpus=8, train_tokens=1e12, throughput_mfu=None,
                                                    compute_bound_share=0.5))
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


def open_tab(qtbot, panel, index):
    bar = panel.chart_tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert panel.chart_tabs.currentIndex() == index


def sweep_of(panel):
    s = panel.scenario()
    return power.power_cap_sweep(700.0, s.tokens_per_s_per_gpu, compute_bound_share=s.compute_bound_share,
                                 static_fraction=s.static_fraction, min_voltage_fraction=s.min_voltage_fraction)


def test_the_energy_time_cost_against_the_cap_with_its_optimum_marked(qtbot, panel):
    open_tab(qtbot, panel, TRADEOFF_TAB)
    view = panel.tradeoff
    assert view.eta_slider.value() == 50 and view.eta_label.text() == "η = 0.50"
    curve = view.curve()
    sweep = sweep_of(panel)
    s = panel.scenario()
    # cost = eta x energy + (1 - eta) x max power x time, at every cap of the sweep
    k = 4
    energy = s.train_tokens * sweep.joules_per_token[k]
    time = s.train_tokens / (8 * sweep.tokens_per_s[k])
    assert curve.cost_j[k] == pytest.approx(0.5 * energy + 0.5 * 8 * 700.0 * time)
    series = {x.name: x for x in view.chart.series()}
    assert series[COST].y.tolist() == pytest.approx(curve.cost_j.tolist())
    best = power.best_of_sweep(sweep, "energy_time", 700.0, 0.5)
    (marker,) = [x for name, x in series.items() if name.startswith(BEST)]
    assert marker.x.tolist() == [best.cap_w] and marker.name == f"{BEST} {best.cap_w:.0f} W"
    assert [value for _line, value, *_ in view.chart._lines] == [best.cap_w]
    # the current cap (uncapped: the TDP) is the operating point
    assert view.chart.operating_point()[:2] == pytest.approx((700.0, curve.cost_j[-1]))


def test_moving_eta_moves_the_optimum_in_one_undo_step(qtbot, panel):
    open_tab(qtbot, panel, TRADEOFF_TAB)
    slider = panel.tradeoff.eta_slider
    stack = panel.undo_stack()
    slider.setFocus()
    for _ in range(40):
        qtbot.keyClick(slider, Qt.Key.Key_Right)
    assert panel.scenario().zeus_eta == pytest.approx(0.9)
    assert stack.count() == 1  # a whole drag is one step
    sweep = sweep_of(panel)
    deeper = power.best_of_sweep(sweep, "energy_time", 700.0, 0.9)
    assert panel.tradeoff.curve().best_cap_w == deeper.cap_w
    assert panel.best_cap() == deeper.cap_w  # the best cap by energy and time follows eta
    assert panel.result_text("Best cap for energy and time") == (f"{deeper.cap_w:g}", "W")
    qtbot.keyClick(slider, Qt.Key.Key_End)  # energy only: the most tokens per joule
    assert panel.tradeoff.curve().best_cap_w == power.best_of_sweep(sweep, "energy", 700.0).cap_w
    qtbot.keyClick(slider, Qt.Key.Key_Home)  # time only: no cap
    assert panel.tradeoff.curve().best_cap_w == 700.0
    stack.undo()
    assert panel.scenario().zeus_eta == 0.5 and slider.value() == 50


def test_one_capped_gpu_of_eight_is_a_straggler_everyone_waits_for(qtbot, panel):
    open_tab(qtbot, panel, POWER_TAB)
    type_into(qtbot, panel.field("power_cap_w"), "450 W")
    assert not panel.straggler_label.isVisible()  # every GPU capped: no stragglers
    all_capped = panel.plan()
    type_into(qtbot, panel.field("capped_gpus"), "1")
    assert panel.scenario().capped_gpus == 1
    assert panel.undo_stack().undoText() == "Change capped GPUs to 1"
    label = panel.straggler_label
    assert label.isVisible()
    text = label.text()
    assert "Stragglers: 1 of 8 GPUs" in text and "waits for the slowest GPU" in text
    s = panel.scenario()
    job = footprint.partial_cap(8, 1, 450.0, 700.0, s.tokens_per_s_per_gpu, compute_bound_share=0.5,
                                static_fraction=s.static_fraction, min_voltage_fraction=s.min_voltage_fraction)
    assert job.stragglers
    # the job runs at the capped GPU's pace: the throughput of capping all eight
    assert job.job_tokens_per_s == pytest.approx(all_capped.job_tokens_per_s)
    assert panel.result_text("Throughput, all GPUs")[0] == units.format_quantity(job.job_tokens_per_s, "")
    assert f"{job.throughput_loss:.0%} below uncapped" in text
    # and the seven uncapped GPUs wait at static power: more energy than capping all
    assert f"{job.mean_gpu_power_w:.0f} W" in text
    fp = panel.analysis().footprint
    assert fp.gpu_energy_j == pytest.approx(8 * job.mean_gpu_power_w * all_capped.summary.duration_s)
    assert fp.gpu_energy_j > all_capped.summary.it_energy_j
    # every GPU again: no warning
    type_into(qtbot, panel.field("capped_gpus"), "all")
    assert panel.scenario().capped_gpus is None and not label.isVisible()
    # typing the count and taking it back merge into no change: the cap is the last step
    assert panel.undo_stack().undoText() == "Change power cap to 450 W"


def test_the_cap_as_a_command_to_copy(qtbot, panel):
    type_into(qtbot, panel.field("power_cap_w"), "450 W")
    text = panel.command_text()
    assert text.splitlines()[0].startswith("sudo nvidia-smi -pl 450")
    assert "reboot" in text and "DCGM" in text
    type_into(qtbot, panel.field("capped_gpus"), "1")
    assert panel.command_text().splitlines()[0].startswith("sudo nvidia-smi -i 0 -pl 450")
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == panel.command_text()
    assert panel.command_box.isReadOnly()
    type_into(qtbot, panel.field("power_cap_w"), "uncapped")
    assert "back to the default limit" in panel.command_text().splitlines()[0]


def test_the_best_label_stays_inside_the_chart(qtbot, panel):
    # the energy-time best is the TDP here, at the right end: its label needs room there
    panel.edit(compute_bound_share=0.9)
    assert panel.best_cap() == 700.0
    for chart in (panel.chart, panel.rate_chart):
        area = chart.getPlotItem().getViewBox().sceneBoundingRect()
        for line, *_ in chart._lines:
            label = line.label.sceneBoundingRect()
            assert area.left() <= label.left() and label.right() <= area.right() + 0.5, (label, area)
