"""Scaling and MFU panel, driven the way a person uses it: typing, Enter, combo boxes, undo."""

from __future__ import annotations

import csv
import math

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QAbstractItemView, QLineEdit

from ui.catalog import HardwareCatalog
from ui.panel import RESULTS_SHARE
from ui.panels.scaling import ScalingPanel
from workbench.context import RunContext
from workbench.scaling import amdahl_speedup, gustafson_speedup
from workbench.scenarios import ScalingScenario

# MosaicML llm-foundry benchmark row (shared/references/README.md): MPT-7b on 8 H100, BF16.
MPT_7B = {"n_params": "6,658,859,008", "n_layers": "32", "d_model": "4096", "seq_len": "2048",
          "tokens_per_s": "85,144"}


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


def _enter(qtbot, field, text):
    edit = field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def _type_cell(qtbot, table, row, column, text):
    """Double-click a cell of the measured table, type over it and press Enter."""
    rect = table.visualItemRect(table.item(row, column))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    editors = [e for e in table.findChildren(QLineEdit) if e.isVisible()]  # closed ones await deletion
    assert len(editors) == 1
    editor = editors[0]
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    # Qt commits an editor's Return through the event loop (a queued call): wait for it
    qtbot.waitUntil(lambda: table.state() != QAbstractItemView.State.EditingState, timeout=2000)


def _row(panel, starts):
    rows = [r for r in panel.results.rows() if r[0].startswith(starts)]
    assert rows, f"no row starting {starts!r} in {[r[0] for r in panel.results.rows()]}"
    return rows[0]


def _type_mpt_7b(qtbot, panel):
    for name, text in MPT_7B.items():
        _enter(qtbot, panel.field(name), text)


def test_mpt_7b_numbers_typed_in_give_the_published_mfu(qtbot, panel, catalog):
    _type_mpt_7b(qtbot, panel)
    s = panel.scenario()
    assert (s.n_params, s.n_layers, s.d_model, s.seq_len, s.tokens_per_s) == (6_658_859_008, 32, 4096, 2048, 85_144)
    assert s.n_gpus == 8 and s.hardware == "h100-sxm" and s.precision == "bf16"
    peak = catalog.get("h100-sxm").peak_flops("bf16")
    mfu = panel.analysis().mfu * 100
    if peak == pytest.approx(989.5e12):
        assert mfu == pytest.approx(46.44, abs=0.01)
    else:  # the preset carries the rounded 989 TFLOP/s
        assert 46.4 <= mfu <= 46.5
    quantity, value, unit = _row(panel, "MFU")
    assert unit == "%" and value in ("46.4", "46.5")
    assert _row(panel, "HFU")[1] == value  # no recomputation: HFU = MFU
    assert _row(panel, "Model FLOPs per token")[1:] == ("43.2", "GFLOP")
    assert "6N + 12" in panel.results.item(0, 0).toolTip()
    assert "dense peak" in panel.results.item(2, 0).toolTip()
    # one step per value that changed (32 layers and 4096 wide are the defaults already)
    assert panel.undo_stack().count() == 3


def test_recompute_and_sparsity_choices(qtbot, panel):
    _type_mpt_7b(qtbot, panel)
    mfu = panel.analysis().mfu
    combo = panel.field("recompute")
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # the keyboard way of picking the next entry
    assert panel.scenario().recompute == "full"
    assert panel.analysis().hfu == pytest.approx(mfu * 4 / 3)
    check = panel.field("sparse")
    qtbot.mouseClick(check, Qt.MouseButton.LeftButton, pos=check.rect().center())
    assert panel.scenario().sparse is True
    assert panel.analysis().mfu == pytest.approx(mfu)  # sparsity never counts in the MFU peak
    assert _row(panel, "Peak per GPU (dense BF16)")[1:] == ("989", "TFLOP/s")


def test_context_moves_the_operating_point_and_the_amdahl_row(qtbot, panel):
    stack = panel.undo_stack()
    s0 = panel.scenario()
    assert panel.chart.operating_point()[0] == 8
    with qtbot.waitSignal(panel.scenarioChanged, timeout=1000):
        applied = panel.apply_context(RunContext(n_gpus=512, model_params=s0.n_params, train_tokens=2e12))
    assert applied
    assert stack.count() == 0  # the window's context command is the undo step
    x, y, label = panel.chart.operating_point()
    assert x == 512 and y == pytest.approx(amdahl_speedup(0.02, 512))
    assert "512 GPUs" in label
    quantity, value, unit = _row(panel, "Amdahl speedup")
    assert quantity == "Amdahl speedup at 512 GPUs" and value == "45.6" and unit == "×"
    assert _row(panel, "Amdahl efficiency at 512 GPUs")[1] == "8.91"
    (xmin, xmax), _ = panel.chart.visible_range()
    assert xmin <= 1.0 and xmax >= 2048  # the GPU axis reaches 4 x n_gpus
    # the plan's training tokens at the plan's predicted throughput: the plan's days
    from ui.document import PresetCatalog
    from workbench.plan import predict
    from workbench.workspace import plan_from_context

    expected = predict(plan_from_context(RunContext(n_gpus=512, model_params=s0.n_params, train_tokens=2e12))[0],
                       PresetCatalog(panel.catalog))
    assert panel.scenario().tokens_per_s == pytest.approx(expected.tokens_per_s)
    assert _row(panel, "Training time")[1:] == (f"{expected.train_days:.3g}", "days")
    assert "2e+12" in panel.results.item(panel.results.rowCount() - 1, 0).toolTip()
    # the same context again changes nothing
    with qtbot.assertNotEmitted(panel.scenarioChanged):
        panel.apply_context(RunContext(n_gpus=512, model_params=s0.n_params, train_tokens=2e12))


def test_context_with_unsupported_precision_says_so(qtbot, panel):
    panel.apply_context(RunContext(hardware="tpu-v4", precision="fp8"))
    assert panel.scenario().hardware == "tpu-v4"
    assert "fp8" in panel.status_text().lower()
    assert _row(panel, "MFU")[1] == "–"
    panel.apply_context(RunContext(hardware="tpu-v4", precision="bf16"))
    assert panel.status_text() == ""
    assert _row(panel, "MFU")[1] != "–"


def test_bad_input_shows_a_message_and_keeps_the_old_value(qtbot, panel):
    field = panel.field("n_gpus")
    with qtbot.assertNotEmitted(panel.scenarioChanged):
        _enter(qtbot, field, "8a")
    assert "'a'" in field.message_text() and panel.scenario().n_gpus == 8
    _enter(qtbot, field, "abc")
    assert "number" in field.message_text() and panel.scenario().n_gpus == 8
    _enter(qtbot, field, "-4")
    assert ">= 1" in field.message_text()
    assert panel.scenario().n_gpus == 8 and field.value() == 8
    qtbot.keyClick(field.edit, Qt.Key.Key_Escape)
    assert field.edit.text() == "8" and field.message_text() == ""
    serial = panel.field("serial_fraction")
    _enter(qtbot, serial, "150%")
    assert serial.message_text() and panel.scenario().serial_fraction == 0.02
    assert panel.undo_stack().count() == 0


def test_undo_restores_an_edit(qtbot, panel):
    stack = panel.undo_stack()
    _enter(qtbot, panel.field("n_gpus"), "64")
    assert panel.scenario().n_gpus == 64
    assert _row(panel, "Amdahl speedup at 64 GPUs")[1] == f"{amdahl_speedup(0.02, 64):.3g}"
    assert "64" in stack.undoText()
    stack.undo()
    assert panel.scenario() == ScalingScenario()
    assert panel.field("n_gpus").edit.text() == "8"
    assert panel.chart.operating_point()[0] == 8
    stack.redo()
    assert panel.chart.operating_point()[0] == 64


def test_weak_mode_draws_gustafson(qtbot, panel):
    combo = panel.field("mode")
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert panel.scenario().mode == "weak"
    assert _row(panel, "Gustafson speedup at 8 GPUs")[1] == f"{gustafson_speedup(0.02, 8):.3g}"
    names = [s.name for s in panel.chart.series()]
    assert names[0].startswith("Gustafson") and "Ideal (linear)" in names


def test_measured_points_fit_and_karp_flatt(qtbot, panel):
    table = panel.field("measured")
    assert _row(panel, "Karp-Flatt")[1] == "–"
    for gpus, rate in (("8", "85,144"), ("64", "600k"), ("256", "1.6M")):
        _type_cell(qtbot, table, table.rowCount() - 1, 0, gpus)
        _type_cell(qtbot, table, table.rowCount() - 1, 1, rate)
    assert [g for g, _ in panel.scenario().measured] == [8, 64, 256]
    series = {s.name: s for s in panel.chart.series()}
    assert "Measured" in series and any(n.startswith("Amdahl fit") for n in series)
    assert series["Measured"].style == Qt.PenStyle.NoPen  # markers only
    quantity, value, unit = _row(panel, "Karp-Flatt")
    assert quantity == "Karp-Flatt at 256 GPUs (vs 8)" and value != "–" and unit == "%"
    assert panel.chart.legend_visible()
    # a bad entry keeps the row and says what to fix
    _type_cell(qtbot, table, 1, 0, "sixteen")
    assert "row 2" in panel.measured_message_text().lower()
    assert len(panel.scenario().measured) == 3 and table.item(1, 0).text() == "64"
    panel.undo_stack().undo()
    assert [g for g, _ in panel.scenario().measured] == [8, 64]


def test_comparison_overlays_dashed_named_curves(qtbot, panel):
    other = ScalingScenario(serial_fraction=0.005)
    panel.set_comparison([("Llama baseline", other)])
    curve = next(s for s in panel.chart.series() if s.name.startswith("Llama baseline"))
    assert curve.style == Qt.PenStyle.DashLine
    assert curve.y[-1] == pytest.approx(amdahl_speedup(0.005, curve.x[-1]))
    assert panel.chart.legend_visible()
    panel.clear_comparison()
    assert not any(s.name.startswith("Llama") for s in panel.chart.series())


def test_explain_opens_a_non_blocking_box(qtbot, panel):
    text = panel.explanation()
    assert "6N" in text and "dense" in text and "4/3" in text
    panel.action_explain.trigger()  # returns at once: open(), not exec()
    box = panel._explain_box
    assert box is not None and box.isVisible() and "Amdahl" in box.text()
    box.close()


def test_csv_export_has_unit_headers(tmp_path, panel):
    panel.set_comparison([("Baseline", ScalingScenario(serial_fraction=0.1))])
    path = panel.export_to("csv", tmp_path / "scaling.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["GPUs (count)", "speedup (x)", "efficiency (fraction)", "Baseline speedup (x)"]
    by_n = {int(float(r[0])): r for r in rows[1:]}
    assert sorted(by_n)[0] == 1 and sorted(by_n)[-1] == 1024
    assert float(by_n[8][1]) == pytest.approx(amdahl_speedup(0.02, 8))
    assert float(by_n[8][2]) == pytest.approx(amdahl_speedup(0.02, 8) / 8)
    assert float(by_n[64][3]) == pytest.approx(amdahl_speedup(0.1, 64))


def test_shared_undo_stack_and_catalog_reload(qtbot, catalog):
    stack = QUndoStack()
    p = ScalingPanel(catalog, ScalingScenario(n_gpus=16), undo_stack=stack)
    qtbot.addWidget(p)
    p.edit(n_gpus=32)
    assert stack.count() == 1
    catalog.reload()  # the preset list changed: the combo keeps the scenario's hardware
    assert p.field("hardware").currentData() == "h100-sxm"
    mine = ScalingPanel(catalog, ScalingScenario(hardware="my-cluster-gpu"))
    qtbot.addWidget(mine)
    combo = mine.field("hardware")
    assert combo.currentData() == "my-cluster-gpu" and "not in catalog" in combo.currentText()
    assert "my-cluster-gpu" in mine.status_text()


def test_screenshot(qtbot, panel):
    """Look at what was built: /tmp/panel_scaling.png."""
    _type_mpt_7b(qtbot, panel)
    _enter(qtbot, panel.field("comm_time_s"), "20 ms")
    _enter(qtbot, panel.field("overlap"), "50%")
    table = panel.field("measured")
    for gpus, rate in (("8", "85,144"), ("64", "640k"), ("256", "2.2M")):
        _type_cell(qtbot, table, table.rowCount() - 1, 0, gpus)
        _type_cell(qtbot, table, table.rowCount() - 1, 1, rate)
    panel.set_comparison([("Llama baseline", ScalingScenario(serial_fraction=0.005))])
    image = panel.grab().toImage()
    image.save("/tmp/panel_scaling.png")
    assert (image.width(), image.height()) == (1600, 900)
    assert len({image.pixel(x, y) for x in range(0, 1600, 16) for y in range(0, 900, 16)}) > 10
    assert panel.chart.height() > panel.results.height()
    # every row, or the panels' share of the height with the rest a scroll away
    rows = panel.results.rowCount() * panel.results.verticalHeader().defaultSectionSize()
    assert panel.results.height() >= min(rows, RESULTS_SHARE * sum(panel.center.sizes()) - 30)
    assert not math.isnan(panel.analysis().predicted_mfu)
