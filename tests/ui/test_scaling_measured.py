"""Scaling and MFU panel, issue 16, driven as a user would: the measured scaling table (typed,
pasted, imported, exported, read in strong and weak mode), Amdahl's ceiling on the chart, the
MFU rating and its traps (above 100%, a sparse-looking peak, a throughput measured on another
GPU)."""

from __future__ import annotations

import csv
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractItemView, QFileDialog, QLineEdit

from ui.catalog import HardwareCatalog
from ui.document import PresetCatalog
from ui.panels.scaling import ScalingPanel
from workbench import measured_scaling as ms
from workbench.hardware import ComputeRate, Hardware, MemoryLevel
from workbench.scaling import amdahl_speedup
from workbench.workspace import DEFAULT_PLAN

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "scaling"
# The issue's table (see tests/workbench/test_measured_scaling.py for the arithmetic): a base of
# 1 GPU at 10,000 tokens/s; against it the rows at 8, 64 and 512 GPUs have Karp-Flatt serial
# fractions 0.57%, 0.25% and 0.076%, while an Amdahl fit over all four says s = 0.0464%.
ISSUE_ROWS = (("1", "10,000"), ("8", "76,930"), ("64", "553,518"), ("512", "3,690,521"))


@pytest.fixture
def catalog(qapp):
    return HardwareCatalog()


@pytest.fixture
def panel(qtbot, catalog):
    p = ScalingPanel(catalog)
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    qtbot.waitExposed(p)
    return p


def _editor(table):
    editors = [e for e in table.findChildren(QLineEdit) if e.isVisible()]  # closed ones await deletion
    assert len(editors) == 1
    return editors[0]


def _wait_committed(qtbot, table):
    # Qt commits an editor's Enter or Tab through the event loop (a queued call)
    qtbot.waitUntil(lambda: table.state() != QAbstractItemView.State.EditingState, timeout=2000)


def _type_cell(qtbot, table, row, column, text):
    """Double-click a cell, type over its text, press Enter."""
    rect = table.visualItemRect(table.item(row, column))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    editor = _editor(table)
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    _wait_committed(qtbot, table)


def _type_row(qtbot, table, gpus, rate):
    """In the last (new) line: click its GPU cell, type, Tab to the throughput, type, Enter."""
    row = table.rowCount() - 1
    rect = table.visualItemRect(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.keyClicks(table, gpus[0])  # typing into a selected cell opens its editor
    qtbot.keyClicks(_editor(table), gpus[1:])
    qtbot.keyClick(_editor(table), Qt.Key.Key_Tab)
    # the GPU count is committed and the throughput cell's editor opens, in one queued call
    qtbot.waitUntil(lambda: table.currentColumn() == 1 and table.state() == QAbstractItemView.State.EditingState,
                    timeout=2000)
    assert table.currentRow() == row
    qtbot.keyClicks(_editor(table), rate)
    qtbot.keyClick(_editor(table), Qt.Key.Key_Return)
    _wait_committed(qtbot, table)


def _enter(qtbot, field, text):
    edit = field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def _pick(combo, key):
    index = combo.findData(key)
    assert index >= 0, key
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def _row(panel, starts):
    rows = [r for r in panel.results.rows() if r[0].startswith(starts)]
    assert rows, f"no row starting {starts!r} in {[r[0] for r in panel.results.rows()]}"
    return rows[0]


def _column(table, column):
    return [texts[column] for texts in table.texts()[:-1]]


def _chart_labels(chart):
    chart.settle()  # as shown: what the redraw cleared and did not draw again has left
    return [item.label.textItem.toPlainText() for item in chart.getPlotItem().items
            if isinstance(item, pg.InfiniteLine) and getattr(item, "label", None) is not None]


# -- the measured table ---------------------------------------------------------------------------


def test_typing_the_issue_table_gives_karp_flatt_per_row_against_the_first(qtbot, panel):
    table = panel.field("measured")
    stack = panel.undo_stack()
    for gpus, rate in ISSUE_ROWS:
        _type_row(qtbot, table, gpus, rate)
    assert panel.scenario().measured == ((1, 10_000.0), (8, 76_930.0), (64, 553_518.0), (512, 3_690_521.0))
    assert stack.count() == 4  # one step per row
    assert stack.undoText() == "Add measured row: 512 GPUs, 3,690,521 tokens/s"
    assert _column(table, 4) == ["base", "0.57%", "0.25%", "0.076%"]  # the issue's three values
    assert _column(table, 2) == ["1×", "7.69×", "55.4×", "369×"]
    assert _column(table, 3) == ["100%", "96.2%", "86.5%", "72.1%"]
    assert table.horizontalHeaderItem(4).text() == "Karp-Flatt"
    assert "(1/S - 1/p) / (1 - 1/p)" in table.horizontalHeaderItem(4).toolTip()
    assert _row(panel, "Karp-Flatt at") == ("Karp-Flatt at 512 GPUs (vs 1)", "0.076", "%")
    # the fit over the points, and its serial fraction, is the other number, drawn as a curve
    assert _row(panel, "Fitted serial fraction") == ("Fitted serial fraction (Amdahl)", "0.0464", "%")
    names = [s.name for s in panel.chart.series()]
    assert "Amdahl fit to measured, s = 0.0464%" in names and "Measured" in names
    measured = next(s for s in panel.chart.series() if s.name == "Measured")
    fit = panel.measured_analysis().fit
    assert measured.y[-1] == pytest.approx(3_690_521 / fit.throughput_1)
    # efficiency against a base of 8 GPUs once the 1-GPU row goes: (X/X0) / (n/n0)
    rect = table.visualItemRect(table.item(0, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.keyClick(table, Qt.Key.Key_Delete)
    assert stack.undoText() == "Delete measured row 1"
    assert _column(table, 4)[0] == "base" and table.item(1, 3).text() == ms.plain_percent((553_518 / 76_930) / 8)
    assert "rows against the first (8 GPUs)" in panel.measured_hint.text()
    row = next(i for i, r in enumerate(panel.results.rows()) if r[0].startswith("Karp-Flatt at"))
    e = panel.measured_analysis().largest.serial_fraction
    assert f"as a share of one GPU's time, e / (n0 - (n0 - 1) e) = {ms.plain_percent(e / (8 - 7 * e))}" in \
        panel.results.item(row, 0).toolTip()
    stack.undo()
    assert [g for g, _ in panel.scenario().measured] == [1, 8, 64, 512]


def test_a_cell_edit_is_one_step_and_a_bad_one_keeps_the_value(qtbot, panel):
    table = panel.field("measured")
    for gpus, rate in ISSUE_ROWS[:3]:
        _type_row(qtbot, table, gpus, rate)
    stack = panel.undo_stack()
    count = stack.count()
    _type_cell(qtbot, table, 2, 1, "600k")
    assert panel.scenario().measured[2] == (64, 600_000.0) and stack.count() == count + 1
    assert stack.undoText() == "Change measured row 3 to 64 GPUs, 600,000 tokens/s"
    assert table.item(2, 1).text() == "600,000"
    with qtbot.assertNotEmitted(panel.scenarioChanged):
        _type_cell(qtbot, table, 1, 0, "eight")
    assert "Row 2, GPU count" in panel.measured_message_text() and "'eight'" in panel.measured_message_text()
    assert table.item(1, 0).text() == "8" and stack.count() == count + 1
    _type_cell(qtbot, table, 1, 0, "16")
    assert panel.measured_message_text() == "" and panel.scenario().measured[1][0] == 16
    stack.undo()
    stack.undo()
    assert panel.scenario().measured[2] == (64, 553_518.0) and table.item(2, 1).text() == "553,518"


def test_rows_pasted_from_a_spreadsheet(qtbot, panel):
    table = panel.field("measured")
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("GPUs\tTokens/s\n1\t10,000\n8\t76,930\n64\tn/a\n512\t3,690,521\n")
    table.setFocus()
    table.setCurrentCell(0, 0)
    qtbot.keyClick(table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert panel.scenario().measured == ((1, 10_000.0), (8, 76_930.0), (512, 3_690_521.0))
    assert panel.undo_stack().count() == 1 and panel.undo_stack().undoText() == "Paste 3 measured rows"
    assert "line 4" in panel.measured_message_text() and "'n/a'" in panel.measured_message_text()
    # one value pasted into one cell, from the row down over what is there, the whole table
    clipboard.setText("553,518")
    table.setCurrentCell(2, 1)
    qtbot.keyClick(table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert panel.scenario().measured[2] == (512, 553_518.0)
    clipboard.setText("64,553518\n512,3690521\n")  # comma separated, from a text file
    table.setCurrentCell(2, 0)
    qtbot.keyClick(table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert [g for g, _ in panel.scenario().measured] == [1, 8, 64, 512]
    assert _column(table, 4) == ["base", "0.57%", "0.25%", "0.076%"]
    clipboard.setText("8\t80000\n16\t150000\n")
    table.selectAll()
    qtbot.keyClick(table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert panel.scenario().measured == ((8, 80_000.0), (16, 150_000.0))
    # what Ctrl+C copies pastes back
    table.selectAll()
    qtbot.keyClick(table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text().splitlines()[0].startswith("GPUs\tTokens/s")
    table.setCurrentCell(2, 0)
    table.clearSelection()
    qtbot.keyClick(table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert panel.scenario().measured == ((8, 80_000.0), (16, 150_000.0)) * 2
    assert panel.undo_stack().count() == 5  # one per paste


def test_import_a_csv_fixture_then_export_it(qtbot, panel, monkeypatch, tmp_path):
    path = FIXTURES / "issue16_strong_scaling.csv"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    qtbot.mouseClick(panel.import_button, Qt.MouseButton.LeftButton)
    assert [g for g, _ in panel.scenario().measured] == [1, 8, 64, 512]
    assert panel.undo_stack().undoText() == "Import 4 measured rows from issue16_strong_scaling.csv"
    assert _column(panel.measured_table, 4) == ["base", "0.57%", "0.25%", "0.076%"]
    assert panel.measured_message_text() == ""
    out = tmp_path / "out.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))
    qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["gpus", "throughput_tokens_per_s", "speedup_vs_base_x", "efficiency_fraction",
                       "karp_flatt_serial_fraction"]
    assert [int(r[0]) for r in rows[1:]] == [1, 8, 64, 512] and rows[1][4] == ""
    assert float(rows[2][4]) == pytest.approx(0.0057, rel=2e-3)
    assert float(rows[4][3]) == pytest.approx(3_690_521 / 10_000 / 512)
    # the export reads back as the same table
    panel.import_measured_csv(out)
    assert [g for g, _ in panel.scenario().measured] == [1, 8, 64, 512]


def test_a_per_gpu_csv_with_a_bad_row(qtbot, panel):
    result = panel.import_measured_csv(FIXTURES / "per_gpu_with_a_bad_row.csv")
    assert result.per_gpu
    assert panel.scenario().measured == ((8, 76_930.0), (16, 150_400.0), (64, pytest.approx(553_518.08)))
    message = panel.measured_message_text()
    assert "per GPU multiplied by the GPU count" in message and "line 4" in message
    bad = tmp = FIXTURES.parent / "scaling" / "missing.csv"
    assert not bad.exists()
    assert panel.import_measured_csv(tmp) is None
    assert "Could not import missing.csv" in panel.measured_message_text()
    assert len(panel.scenario().measured) == 3


def test_weak_mode_reads_the_rows_with_gustafson(qtbot, panel):
    panel.import_measured_csv(FIXTURES / "issue16_strong_scaling.csv")
    combo = panel.field("mode")
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert panel.scenario().mode == "weak"
    table = panel.measured_table
    assert [table.horizontalHeaderItem(c).text() for c in (2, 4)] == ["Scaled speedup", "Serial (Gustafson)"]
    # s = (p - S) / (p - 1) against the base row
    expected = [ms.plain_percent((p - x / 10_000) / (p - 1), 2) for p, x in ((8, 76_930), (64, 553_518),
                                                                            (512, 3_690_521))]
    assert _column(table, 4) == ["base", *expected]
    assert _row(panel, "Gustafson serial fraction at")[0] == "Gustafson serial fraction at 512 GPUs (vs 1)"
    assert _row(panel, "Fitted serial fraction")[0] == "Fitted serial fraction (Gustafson)"
    assert any(s.name.startswith("Gustafson fit to measured") for s in panel.chart.series())
    assert panel.ceiling_labels() == [] and _chart_labels(panel.chart) == []  # weak scaling has no ceiling
    assert _row(panel, "Amdahl ceiling")[1] == "none (weak scaling)"
    qtbot.keyClick(combo, Qt.Key.Key_Up)
    assert _column(table, 4) == ["base", "0.57%", "0.25%", "0.076%"]


# -- the ceiling and the numbers on the chart -----------------------------------------------------------


def test_the_amdahl_ceiling_is_drawn_and_labelled(qtbot, panel):
    _enter(qtbot, panel.field("serial_fraction"), "5%")
    assert panel.ceiling_labels() == ["5% serial caps you at 20×"]
    assert _chart_labels(panel.chart) == ["5% serial caps you at 20×"]
    assert _row(panel, "Amdahl ceiling") == ("Amdahl ceiling (1/s)", "20", "×")
    # on the chart, whole: inside the plot area, clear of the legend
    line = next(i for i in panel.chart.getPlotItem().items
                if isinstance(i, pg.InfiniteLine) and getattr(i, "label", None) is not None)
    assert line.value() == pytest.approx(1.30103)  # log10(20): the y axis is logarithmic
    area = panel.chart.getPlotItem().getViewBox().sceneBoundingRect()
    label = line.label.sceneBoundingRect()
    assert area.contains(label)
    legend = panel.chart.getPlotItem().legend.sceneBoundingRect()
    assert not legend.intersects(label)


def test_large_speedups_have_digit_groups_not_exponents(qtbot, panel):
    _enter(qtbot, panel.field("serial_fraction"), "0.05%")
    _enter(qtbot, panel.field("n_gpus"), "65536")
    speedup = float(amdahl_speedup(0.0005, 65536))
    assert 1000 < speedup < 2000
    text = f"{speedup:,.0f}×"
    _x, _y, label = panel.chart.operating_point()
    assert label == f"65,536 GPUs: {text}" and "e+" not in label
    assert _row(panel, "Amdahl speedup at 65,536 GPUs")[1] == f"{speedup:,.0f}"
    assert panel.ceiling_labels() == ["0.05% serial caps you at 2,000×"]
    assert "e+" not in panel.chart.hover_text(40000.0, speedup)


# -- MFU: rating, impossible, sparse-looking peak, stale throughput -------------------------------------


def test_the_mfu_rating(qtbot, panel):
    for name, text in {"n_params": "6,658,859,008", "seq_len": "2048", "tokens_per_s": "85,144"}.items():
        _enter(qtbot, panel.field(name), text)
    assert _row(panel, "MFU")[0] == "MFU (typical)"  # MPT-7B on 8 H100: 46%
    assert "35-55%" in panel.results.item(2, 0).toolTip()
    _enter(qtbot, panel.field("tokens_per_s"), "120k")
    assert _row(panel, "MFU")[0] == "MFU (excellent)" and panel.notices() == {}


def test_an_mfu_above_100_percent_is_called_impossible_with_what_to_check(qtbot, panel):
    _enter(qtbot, panel.field("tokens_per_s"), "10M")  # a large run's tokens/s against 8 GPUs
    a = panel.analysis()
    assert a.mfu > 1
    quantity, value, unit = _row(panel, "MFU")
    assert quantity == "MFU (impossible)" and value == ms.plain_number(a.mfu * 100) and "," in value
    text = panel.notices()["impossible"]
    fewest = -int(-a.flops_per_token * 10e6 // a.peak_flops)
    assert text.startswith(f"MFU {value}% is impossible")
    assert f"at least {fewest:,} GPUs" in text and "the scenario has 8" in text
    assert "whole job's tokens/s" in text and "precision" in text
    assert panel.impossible_notice.isVisible()
    _enter(qtbot, panel.field("n_gpus"), "1024")
    assert "impossible" not in panel.notices()


def test_a_peak_that_looks_like_a_sparse_figure_is_flagged(qtbot, panel, catalog):
    typed = Hardware(name="My H100", vendor="NVIDIA", key="my-h100",
                     compute=(ComputeRate("bf16", 1979e12, "typed from the datasheet's first column"),),
                     memory=(MemoryLevel("HBM", 3.35e12, "datasheet", capacity=80e9),))
    catalog.add_user_preset(typed)
    assert "sparse" not in panel.notices()
    _pick(panel.field("hardware"), "my-h100")
    text = panel.notices()["sparse"]
    assert "My H100, 1,979 TFLOP/s, is the 2:4 sparse peak of NVIDIA H100 SXM" in text
    assert "989 TFLOP/s" in text and "2x too low" in text
    _pick(panel.field("hardware"), "h100-sxm")
    assert "sparse" not in panel.notices()


def test_a_measured_throughput_kept_for_another_gpu_is_flagged(qtbot, panel, catalog):
    stack = panel.undo_stack()
    _enter(qtbot, panel.field("tokens_per_s"), "85,144")
    assert panel.scenario().measured_on == "h100-sxm" and panel.notices() == {}
    assert panel.source_note.text() == "Measured on NVIDIA H100 SXM."
    _pick(panel.field("hardware"), "b200")
    s = panel.scenario()
    assert s.hardware == "b200" and s.tokens_per_s == 85_144 and s.measured_on == "h100-sxm"
    text = panel.notices()["stale"]
    assert text.startswith("85,144 tokens/s was measured on NVIDIA H100 SXM, not on NVIDIA B200")
    assert f"MFU {ms.plain_percent(panel.analysis().mfu)}" in text
    assert panel.use_planned_button.isVisible() and panel.measured_here_button.text() == "Measured on NVIDIA B200"
    count = stack.count()
    qtbot.mouseClick(panel.use_planned_button, Qt.MouseButton.LeftButton)
    s = panel.scenario()
    planned = ms.planned_tokens_per_s(s, DEFAULT_PLAN, PresetCatalog(catalog))
    assert s.throughput_source == "planned" and s.tokens_per_s == pytest.approx(planned) and planned > 85_144
    assert stack.count() == count + 1 and stack.undoText() == "Use the planned throughput on NVIDIA B200"
    assert "stale" not in panel.notices() and panel.field("throughput_source").currentData() == "planned"
    assert panel.source_note.text() == "Planned for NVIDIA B200 by the run plan's model."
    # planned, the throughput follows the hardware (one step)
    _pick(panel.field("hardware"), "h100-sxm")
    s = panel.scenario()
    assert s.tokens_per_s == pytest.approx(ms.planned_tokens_per_s(s, DEFAULT_PLAN, PresetCatalog(catalog)))
    assert s.tokens_per_s < planned and panel.notices() == {} and stack.count() == count + 2
    stack.undo()
    stack.undo()
    assert panel.scenario().measured_elsewhere and "stale" in panel.notices()
    # the other way out: it was measured on this GPU after all
    qtbot.mouseClick(panel.measured_here_button, Qt.MouseButton.LeftButton)
    assert panel.scenario().measured_on == "b200" and panel.notices() == {}
    assert stack.undoText() == "Mark the throughput as measured on NVIDIA B200"
    # typing a planned panel's throughput makes it measured, on the GPU it is on
    combo = panel.field("throughput_source")
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Up)
    assert panel.scenario().throughput_source == "planned"
    _enter(qtbot, panel.field("tokens_per_s"), "190k")
    s = panel.scenario()
    assert (s.throughput_source, s.measured_on, s.tokens_per_s) == ("measured", "b200", 190e3)


def test_a_panel_following_a_plan_takes_its_throughput_as_planned(qtbot, panel):
    from workbench.context import RunContext

    panel.apply_context(RunContext(n_gpus=64))
    s = panel.scenario()
    assert s.throughput_source == "planned" and s.n_gpus == 64
    _pick(panel.field("hardware"), "b200")  # the panel's own device, planned again, no warning
    assert panel.notices() == {} and panel.scenario().throughput_source == "planned"
    assert panel.scenario().tokens_per_s > s.tokens_per_s


# -- in the window: a measured throughput makes the panel local; planned comes from the plan ------------


def test_in_the_window_a_typed_throughput_is_local_and_measured(qtbot, tmp_path, monkeypatch):
    from storage import Project
    from ui import dialogs
    from ui.main_window import MainWindow

    monkeypatch.setattr(dialogs, "show_message", lambda *a, **k: None)
    path = tmp_path / "plan.swbproj"
    Project.create(path).close()
    window = MainWindow(Project.open(path))
    qtbot.addWidget(window)
    window.resize(1920, 1080)
    window.show()
    qtbot.waitExposed(window)
    window.raise_panel("scaling")
    panel = window.panel("scaling")
    qtbot.waitUntil(panel.isVisible)
    s = panel.scenario()
    assert panel.follows_plan() and s.throughput_source == "planned"
    assert s.tokens_per_s == pytest.approx(window.document.prediction().tokens_per_s)
    assert panel.source_note.text() == "From the run plan's prediction."
    _enter(qtbot, panel.field("tokens_per_s"), "85,144")
    s = panel.scenario()
    assert panel.override_context() and (s.throughput_source, s.measured_on) == ("measured", "h100-sxm")
    _pick(panel.field("hardware"), "b200")  # local: the plan keeps its H100
    assert window.document.plan().hardware == "h100-sxm" and "stale" in panel.notices()
    qtbot.mouseClick(panel.use_planned_button, Qt.MouseButton.LeftButton)
    s = panel.scenario()
    plan = window.document.plan()
    expected = ms.planned_tokens_per_s(s, plan, PresetCatalog(panel.catalog))
    assert s.throughput_source == "planned" and s.tokens_per_s == pytest.approx(expected)
    assert panel.notices() == {}
    window.undo_stack.undo()
    assert "stale" in panel.notices()
    qtbot.mouseClick(panel.follow_button, Qt.MouseButton.LeftButton)  # back to the plan
    s = panel.scenario()
    assert not panel.override_context() and s.hardware == "h100-sxm" and s.throughput_source == "planned"
    assert panel.notices() == {}


# -- look at it -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("theme", "presenting"), [("light", False), ("dark", False), ("light", True),
                                                    ("dark", True)])
def test_the_panel_at_1920_by_1080_shows_everything_whole(qtbot, qapp, catalog, tmp_path, theme, presenting):
    from ui import theme as th
    from workbench.scenarios import ScalingScenario

    scenario = ScalingScenario(measured=((1, 10_000.0), (8, 76_930.0), (64, 553_518.0), (512, 3_690_521.0)),
                               hardware="b200", measured_on="h100-sxm", n_gpus=512, serial_fraction=0.0005)
    p = ScalingPanel(catalog, scenario)
    qtbot.addWidget(p)
    p.resize(1920, 1080)
    p.show()
    qtbot.waitExposed(p)
    try:
        th.apply_theme(qapp, theme)
        th.set_presentation(presenting)
        qapp.processEvents()
        image = p.grab().toImage()
        image.save(str(tmp_path / f"scaling-{theme}{'-presenting' if presenting else ''}.png"))
        assert (image.width(), image.height()) == (1920, 1080)
        table = p.measured_table
        assert not table.horizontalScrollBar().isVisible()  # every column whole
        shown = sum(table.columnWidth(c) for c in range(table.columnCount()))
        assert shown <= table.viewport().width()
        assert table.viewport().height() >= table.rowCount() * table.verticalHeader().defaultSectionSize()
        label = p.stale_notice.label
        assert label.height() >= label.heightForWidth(label.width())  # the warning is not clipped
        for button in p.stale_notice.buttons:
            assert button.width() >= button.sizeHint().width()
        results = p.results
        assert results.columnWidth(0) >= results.sizeHintForColumn(0)  # quantities whole
        area = p.chart.getPlotItem().getViewBox().sceneBoundingRect()
        legend = p.chart.getPlotItem().legend.sceneBoundingRect()
        for item in p.chart.getPlotItem().items:
            if isinstance(item, pg.InfiniteLine) and getattr(item, "label", None) is not None:
                assert area.contains(item.label.sceneBoundingRect()) and not legend.intersects(
                    item.label.sceneBoundingRect())
        assert p.form_scroll.horizontalScrollBar().maximum() == 0  # the inputs fit their column
        assert p.chart.height() > p.results.height()
    finally:
        th.set_presentation(False)
        th.apply_theme(qapp, "light")
