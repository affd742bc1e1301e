"""The Power panel's "Where and when" tab, driven as a person would: typing a 24-hour profile,
importing one from a CSV, reading the best start; and every tab looked at in both themes and
in presentation mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from ui import theme as th
from ui.catalog import HardwareCatalog
from ui.panels.power import TABS, WHERE_TAB, PowerPanel
from ui.panels.power_where import BEST, INTENSITY, WINDOW
from workbench.scenarios import PowerScenario

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "carbon" / "hourly_intensity_two_days.csv"
#: a day with a midday dip: a 4-hour run is cleanest from 10:00 (180, 170, 160, 170)
PROFILE = (420, 410, 400, 390, 380, 370, 360, 300, 250, 200, 180, 170,
           160, 170, 190, 230, 300, 380, 450, 480, 470, 460, 440, 430)
H = 3600.0


@pytest.fixture
def panel(qtbot, qapp):
    # 8 GPUs x 3,000 tokens/s for 4 hours: 345.6M tokens, uncapped at 700 W, PUE 1.2
    p = PowerPanel(HardwareCatalog(), PowerScenario(n_gpus=8, train_tokens=8 * 3000 * 4 * H, throughput_mfu=None,
                                                    tokens_per_s_per_gpu=3000.0))
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    return p


def open_tab(qtbot, panel, index):
    bar = panel.chart_tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert panel.chart_tabs.currentIndex() == index


def type_profile(qtbot, panel, text):
    edit = panel.where.profile_edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_the_best_start_on_a_typed_profile(qtbot, panel):
    open_tab(qtbot, panel, WHERE_TAB)
    assert panel.plan().summary.duration_s == pytest.approx(4 * H)
    assert "No profile yet" in panel.where.best_label.text()
    type_profile(qtbot, panel, ", ".join(str(x) for x in PROFILE))
    s = panel.scenario()
    assert s.hourly_g_per_kwh == tuple(map(float, PROFILE)) and s.profile_name == ""
    assert panel.undo_stack().undoText() == "Type the hourly intensity profile"
    best = panel.where.best()
    assert best.start_s == 10 * H and best.best_g_per_kwh == pytest.approx(170.0)
    # what it saves: the run's facility energy at 170 g/kWh against the day's mean and its worst start
    kwh = panel.analysis().footprint.training_facility_kwh
    assert kwh == pytest.approx(8 * 0.7 * 4 * 1.2)
    assert best.best_co2e_kg == pytest.approx(kwh * 0.170)
    assert best.saving_vs_mean_kg == pytest.approx(kwh * (np.mean(PROFILE) - 170.0) / 1000)
    text = panel.where.best_label.text()
    assert "started at 10:00 meets 170 gCO2e/kWh" in text and "18:00, the worst time" in text
    # drawn: the profile as hourly steps, the run's average from each start, the best start named
    series = {x.name: x for x in panel.where.profile_chart.series()}
    assert series[INTENSITY].y.max() == 480 and len(series[WINDOW].x) == 25
    assert series[f"{BEST} 10:00"].x.tolist() == [10.0]
    assert [value for _line, value, *_ in panel.where.profile_chart._lines] == [10.0]


def test_a_bad_profile_says_why_and_keeps_the_old_one(qtbot, panel):
    open_tab(qtbot, panel, WHERE_TAB)
    type_profile(qtbot, panel, ", ".join(str(x) for x in PROFILE))
    type_profile(qtbot, panel, "1, 2, 3")
    assert panel.scenario().hourly_g_per_kwh == tuple(map(float, PROFILE))
    message = panel.where.profile_message
    assert message.isVisible() and "24 hourly values" in message.text()
    qtbot.mouseClick(panel.where.clear_button, Qt.MouseButton.LeftButton)
    assert panel.scenario().hourly_g_per_kwh == () and "No profile yet" in panel.where.best_label.text()


def test_a_run_longer_than_a_day_wraps_around_the_profile(qtbot, panel):
    panel.edit(train_tokens=8 * 3000 * 30 * H)  # 30 hours
    type_profile(qtbot, panel, " ".join(str(x) for x in PROFILE))
    best = panel.where.best()
    six_hours = np.array([np.mean([PROFILE[(s + i) % 24] for i in range(6)]) for s in range(24)])
    assert best.start_s == float(np.argmin(six_hours)) * H  # the day wraps; the extra 6 h decide
    assert best.best_g_per_kwh == pytest.approx((sum(PROFILE) + 6 * six_hours.min()) / 30)
    assert "wraps around the profile" in panel.where.best_label.text()


def test_importing_a_csv_of_timestamp_and_intensity(qtbot, panel, monkeypatch):
    open_tab(qtbot, panel, WHERE_TAB)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(FIXTURE), "CSV files (*.csv)"))
    qtbot.mouseClick(panel.where.import_button, Qt.MouseButton.LeftButton)
    s = panel.scenario()
    expected = list(map(float, PROFILE))
    expected[5] = 360.0  # day 2 has no value at 05:00: day 1's 360 alone
    assert s.hourly_g_per_kwh == pytest.approx(expected)
    assert s.profile_name.startswith(FIXTURE.name) and "1 without a value" in s.profile_name
    assert panel.undo_stack().undoText() == f"Import intensity profile {FIXTURE.name}"
    assert panel.where.best().start_s == 10 * H
    assert FIXTURE.name in panel.where.best_label.text()
    assert panel.where.profile_edit.text().startswith("420, 410, 400")


def test_an_unusable_csv_changes_nothing_and_says_which_line(qtbot, panel, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("time,intensity\n2024-01-01T00:00,abc\n", encoding="utf-8")
    assert not panel.import_profile(bad)
    assert panel.scenario().hourly_g_per_kwh == ()
    assert "bad.csv: line 2" in panel.where.profile_message.text()
    assert not panel.import_profile(tmp_path / "missing.csv")
    assert "Could not read missing.csv" in panel.where.profile_message.text()


@pytest.fixture
def restore_look(qapp):
    yield
    th.set_presentation(False)
    th.apply_theme(qapp, "light")


@pytest.mark.parametrize(("mode", "presentation"), [("light", False), ("dark", False), ("light", True)])
def test_every_tab_at_1920_by_1080_in_each_look(qtbot, qapp, restore_look, tmp_path, mode, presentation):
    p = PowerPanel(HardwareCatalog(), PowerScenario(n_gpus=1000, train_tokens=1.08e12, throughput_mfu=None,
                                                    power_cap_w=500.0, capped_gpus=1, idle_s=12 * H,
                                                    hourly_g_per_kwh=PROFILE))
    qtbot.addWidget(p)
    p.resize(1920, 1080)
    p.show()
    th.apply_theme(qapp, mode)
    th.set_presentation(presentation)
    background = th.current_theme().background.lower()
    for index, name in enumerate(TABS):
        p.chart_tabs.setCurrentIndex(index)
        image = p.grab().toImage()
        assert (image.width(), image.height()) == (1920, 1080), name
        path = tmp_path / f"{mode}-{presentation}-{index}.png"
        assert image.save(str(path)) and path.stat().st_size > 10_000
        tab = p.chart_tabs.currentWidget()
        colours = {image.pixelColor(x, y).name() for x in range(tab.x() + 420, 1900, 37) for y in range(80, 600, 23)}
        assert len(colours - {background}) > 3, name  # something drawn on the tab, not a blank page
    # the best cap's label inside its chart, whatever the fonts
    for chart in (p.chart, p.rate_chart):
        area = chart.getPlotItem().getViewBox().sceneBoundingRect()
        for line, *_ in chart._lines:
            assert line.label.sceneBoundingRect().right() <= area.right() + 0.5
