"""What keeps a value change in the Scaling and MFU panel within a frame (issue 15), checked by
counting and by identity, never by timing: the chart keeps its items (curves, legend and its
entries, the ceiling line and its label, the operating point and its label) and places its
overlays once per change; a curve whose values did not change is not handed to pyqtgraph
again; the measured table is filled again only when what it shows changed; and every number
shown is still what ``workbench`` says."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from chart_items import deliver_events, item_ids

from ui.catalog import HardwareCatalog
from ui.panels.scaling import MeasuredTable, ScalingPanel
from workbench import measured_scaling as ms
from workbench import scaling_analysis as sa
from workbench.scenarios import ScalingScenario

ROWS = ((8, 1000.0), (16, 1900.0), (64, 6500.0), (256, 19000.0))
FRACTIONS = (0.05, 0.02, 0.1, 0.05)


@pytest.fixture
def panel(qtbot):
    p = ScalingPanel(HardwareCatalog(), ScalingScenario(measured=ROWS))
    qtbot.addWidget(p)
    p.resize(1800, 1000)
    p.show()
    qtbot.waitExposed(p)
    deliver_events()
    return p


def _row(panel, starts):
    return next(r for r in panel.results.rows() if r[0].startswith(starts))


def test_a_serial_fraction_change_keeps_every_item_and_places_the_overlays_once(panel):
    chart = panel.chart
    panel.edit(serial_fraction=FRACTIONS[0])
    deliver_events()
    before = item_ids(chart)
    assert len(chart.series()) == 4 and chart.legend_visible()  # the law, ideal, fit and measured points
    for s in FRACTIONS[1:]:
        placed = chart.overlay_placements
        assert panel.edit(serial_fraction=s)
        deliver_events()
        assert item_ids(chart) == before, s  # nothing made again, nothing left over
        assert chart.overlay_placements - placed == 1, s
        names = [label.text for _sample, label in chart.getPlotItem().legend.items]
        assert names[0] == f"Amdahl, s = {ms.plain_percent(s)}"  # the entry renamed in place
        assert ms.ceiling_label(s) in panel.ceiling_labels()


def test_only_the_curves_whose_values_changed_are_handed_to_pyqtgraph(panel, monkeypatch):
    handed = []
    real = pg.PlotDataItem.setData

    def set_data(item, *args, **kwargs):
        if args:
            handed.append(kwargs.get("name", item.opts.get("name")))  # (a chart names its item itself)
        return real(item, *args, **kwargs)

    monkeypatch.setattr(pg.PlotDataItem, "setData", set_data)
    panel.edit(serial_fraction=0.03)
    deliver_events()
    # the law's curve moved; the ideal line, the fit and the measured points did not (the
    # operating point is set by its own item, unnamed)
    assert [name for name in handed if name] == ["Amdahl, s = 3%"]


def test_the_measured_table_is_filled_again_only_when_what_it_shows_changed(panel, monkeypatch):
    fills = []
    real = MeasuredTable.fill

    def fill(table, rows, pending):
        fills.append(len(rows))
        return real(table, rows, pending)

    monkeypatch.setattr(MeasuredTable, "fill", fill)
    items = [id(panel.measured_table.item(r, c)) for r in range(len(ROWS)) for c in range(5)]
    for s in FRACTIONS:
        panel.edit(serial_fraction=s)
    assert fills == []
    panel.edit(measured=ROWS[:3], _merge=False)
    assert fills == [3]
    panel.edit(mode="weak", _merge=False)  # the same rows read another way: new texts
    assert fills == [3, 3]
    assert panel.measured_table.horizontalHeaderItem(MeasuredTable.SPEEDUP).text() == "Scaled speedup"
    panel.edit(mode="strong", measured=ROWS, _merge=False)
    assert [id(panel.measured_table.item(r, c)) for r in range(len(ROWS)) for c in range(5)] == items
    assert panel.measured_table.texts()[1][MeasuredTable.SPEEDUP] == "1.9×"


def test_after_each_change_the_numbers_shown_are_the_workbench_numbers(panel):
    for s in FRACTIONS:
        panel.edit(serial_fraction=s)
        deliver_events()
        scenario = panel.scenario()
        n, speedup, _eff = sa.speedup_sweep(s, max(1024, 4 * scenario.n_gpus), "strong")
        law = panel.chart.series()[0]
        assert law.x.tolist() == np.asarray(n, dtype=float).tolist()
        assert law.y.tolist() == np.asarray(speedup, dtype=float).tolist()
        assert law.item.getOriginalDataset()[1].tolist() == law.y.tolist()  # what pyqtgraph draws
        at = float(sa.speedup_at(s, scenario.n_gpus, "strong"))
        assert panel.chart.operating_point()[:2] == (scenario.n_gpus, at)
        assert _row(panel, "Amdahl speedup at")[1] == ms.plain_number(at)
        assert _row(panel, "Amdahl ceiling")[1] == ms.plain_number(ms.amdahl_ceiling(s))
        (line, value, *_rest), = [entry for entry in panel.chart._lines if entry[2] == ms.ceiling_label(s)]
        assert value == pytest.approx(1.0 / s)
        assert line.label.textItem.toPlainText() == ms.ceiling_label(s)
    assert panel.measured_table.texts()[3][MeasuredTable.SPEEDUP] == "19×"


def test_the_measured_rows_are_read_again_only_when_they_or_the_mode_change(panel, monkeypatch):
    from workbench.analyses import scaling as scaling_analysis

    reads = []
    real = ms.analyse_measured
    monkeypatch.setattr(ms, "analyse_measured", lambda rows, mode: reads.append(mode) or real(rows, mode))
    scaling_analysis._measured.cache_clear()  # the fits kept from earlier tests: this one counts its own
    panel.edit(serial_fraction=0.01)
    assert reads == ["strong"]  # the first analysis since reads the rows, once
    reads.clear()
    for s in FRACTIONS:
        panel.edit(serial_fraction=s)
    assert reads == []
    table = real(ROWS, "strong")
    assert _row(panel, "Fitted serial fraction")[1] == ms.plain_number(table.fit.serial_fraction * 100.0, 3)
    panel.edit(mode="weak", _merge=False)
    panel.edit(measured=ROWS[:3], _merge=False)
    assert reads == ["weak", "weak"]
    weak = real(ROWS[:3], "weak")
    assert panel.measured_analysis().fit.serial_fraction == weak.fit.serial_fraction
