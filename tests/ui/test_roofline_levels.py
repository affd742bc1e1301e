"""Issue 16: the roofline's memory levels and the MFU trap.

- a preset with two memory levels, read from a TOML file written here, draws its L2 roof with
  the bandwidth on its label once "L2 roof" is ticked; the built-in figures show the same way;
- a kernel whose measured rate is above its roof is flagged in the kernel table, its hover tip,
  the results and its name on the chart; a time kept while the counts change is flagged stale;
- the model side of both (workbench.roofline), which the panel only shows.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QAbstractItemView, QLineEdit

import presets
from ui.catalog import HardwareCatalog
from ui.panels.roofline import WARNING_MARK, RooflinePanel
from workbench import roofline as rl
from workbench.hardware import Hardware, MemoryLevel
from workbench.kernels import Kernel, seed_examples
from workbench.scenarios import RooflineScenario

ADVICE = "above the roof: check the time (it may belong to another kernel) or the FLOP/byte counts"

TWO_LEVELS = """
[lab-gpu]
name = "Lab GPU with an L2"
vendor = "Lab"

[lab-gpu.compute]
source = "the lab's datasheet"
bf16 = { dense_tflops = 1000, sparsity_factor = 2 }

[[lab-gpu.memory]]
name = "HBM"
memory_gb = 80
technology = "HBM3"
mem_bw_tbs = 3.0
source = "the lab's datasheet"

[[lab-gpu.memory]]
name = "L2"
mem_bw_tbs = 12.5
capacity_mib = 50
source = "the lab's own L2 microbenchmark"
"""


@pytest.fixture
def catalog(qapp):
    return HardwareCatalog()


@pytest.fixture
def panel(qtbot, catalog):
    p = RooflinePanel(catalog, undo_stack=QUndoStack())
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    qtbot.waitExposed(p)
    yield p
    p.shutdown()


def pick(combo, data):
    index = combo.findData(data)
    assert index >= 0, f"{data!r} not in the list"
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def results(panel) -> dict[str, tuple[str, str]]:
    return {q: (v, u) for q, v, u in panel.results.rows()}


def result_tip(panel, quantity: str) -> str:
    table = panel.results
    for r in range(table.rowCount()):
        if table.item(r, 0).text() == quantity:
            return table.item(r, 0).toolTip()
    raise AssertionError(f"no result row {quantity!r}")


def type_cell(qtbot, panel, row: int, col: int, text: str) -> None:
    """Open the cell's editor as a double-click does, type over it, press Enter (Qt's delegate
    then commits by a queued call: the events are processed once)."""
    table, model = panel.kernel_table, panel.kernel_model
    index = panel.kernel_proxy.mapFromSource(model.index(row, col))
    table.setCurrentIndex(index)
    table.edit(index)
    (editor,) = [e for e in table.viewport().findChildren(QLineEdit) if e.isVisible()]
    editor.selectAll()
    if text:
        qtbot.keyClicks(editor, text)
    else:
        qtbot.keyClick(editor, Qt.Key.Key_Delete)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    QCoreApplication.processEvents()  # the delegate commits by a queued call
    assert table.state() != QAbstractItemView.State.EditingState


def cell(panel, row: int, col: int, role=Qt.ItemDataRole.DisplayRole):
    model = panel.kernel_model
    return panel.kernel_proxy.mapFromSource(model.index(row, col)).data(role)


def is_flagged(panel, row: int, col: int) -> bool:
    return cell(panel, row, col, Qt.ItemDataRole.DecorationRole) is not None


# -- the L2 roof ----------------------------------------------------------------------------------
def test_a_preset_with_two_memory_levels_from_toml_draws_its_l2_roof(tmp_path, panel, catalog):
    path = tmp_path / "hardware.toml"
    path.write_text(TWO_LEVELS, encoding="utf-8")
    (hw,) = presets.load_hardware(path)
    key = catalog.add_user_preset(hw)
    pick(panel.hardware_combo, key)
    assert panel.l2_check.text() == "L2 roof" and panel.l2_check.isEnabled()
    assert "L2 12.5 TB/s" in panel.l2_check.toolTip()
    assert not any("L2 bandwidth" in s.name for s in panel.chart.series())  # off until ticked
    panel.l2_check.click()
    assert panel.scenario().show_l2 is True
    assert panel.undo_stack().undoText() == "Turn L2 roofline on"
    (line,) = [s for s in panel.chart.series() if "L2 bandwidth" in s.name]
    slope = line.y[:2] / line.x[:2]
    np.testing.assert_allclose(slope, 12.5e12)  # the slope is the L2 bandwidth
    # the L2 roof meets the peak at 1000 T / 12.5 T = 80 FLOP/B and runs flat to the HBM ridge
    assert 80.0 in line.x and line.x[-1] == pytest.approx(1000e12 / 3e12)
    assert line.y[-1] == pytest.approx(1000e12)
    assert "L2 bandwidth 12.5 TB/s" in panel.roof_label_texts()
    assert results(panel)["L2 bandwidth"] == ("12.5", "TB/s")
    assert "the lab's own L2 microbenchmark" in result_tip(panel, "L2 bandwidth")
    # the device-memory roof is the one kernels are placed under, as before
    assert results(panel)["Memory bandwidth (HBM3)"] == ("3", "TB/s")
    panel.undo_stack().undo()
    assert not any("L2 bandwidth" in s.name for s in panel.chart.series())
    assert "L2 bandwidth" not in results(panel)


def test_built_in_cache_figures_show_with_their_labels(panel):
    assert not panel.l2_check.isEnabled()  # H100 SXM: no published L2 bandwidth stored
    assert "no L2" in panel.l2_check.toolTip()
    pick(panel.hardware_combo, "h100-pcie")
    assert panel.l2_check.isEnabled() and panel.l2_check.text() == "L2 roof"
    panel.l2_check.click()
    assert "L2 bandwidth 6.9 TB/s" in panel.roof_label_texts()
    assert "gpu-benches" in result_tip(panel, "L2 bandwidth")
    pick(panel.hardware_combo, "mi300x")
    assert panel.l2_check.text() == "Infinity Cache roof"
    assert "Infinity Cache bandwidth 17 TB/s" in panel.roof_label_texts()
    assert results(panel)["Infinity Cache bandwidth"] == ("17", "TB/s")


def test_an_l2_level_added_in_the_preset_editor_shows_on_the_roofline(qtbot, tmp_path):
    from storage import Project
    from ui.preset_manager import PresetManagerDialog

    project = Project.create(tmp_path / "plan.swbproj")
    try:
        catalog = HardwareCatalog(project)
        stack = QUndoStack()
        dialog = PresetManagerDialog(project, catalog, stack)
        qtbot.addWidget(dialog)
        panel = RooflinePanel(catalog, undo_stack=QUndoStack())
        qtbot.addWidget(panel)
        panel.show()
        dialog.select("h100-sxm")
        key = dialog.duplicate_current()
        pick(panel.hardware_combo, key)
        assert not panel.l2_check.isEnabled()
        f = dialog.fields
        f["new_level_bw"].edit.setText("12 TB/s")
        f["new_level_source"].edit.setText("our own L2 microbenchmark")
        qtbot.mouseClick(f["add_level"], Qt.MouseButton.LeftButton)
        assert panel.l2_check.isEnabled()  # the panel follows the catalog
        panel.l2_check.click()
        assert "L2 bandwidth 12 TB/s" in panel.roof_label_texts()
        assert "our own L2 microbenchmark" in result_tip(panel, "L2 bandwidth")
        stack.undo()  # the level goes, and so does its roof
        assert "L2 bandwidth 12 TB/s" not in panel.roof_label_texts()
        assert "L2 bandwidth" not in results(panel)
        assert panel.l2_check.isChecked() and panel.l2_check.isEnabled()  # still ticked: can be unticked
        stack.clear()
        dialog.close()
    finally:
        project.close()


def test_the_hover_readout_says_what_the_cache_roof_allows(panel):
    pick(panel.hardware_combo, "h100-pcie")
    panel.l2_check.click()
    text = panel.hover_text(10.0, 1e12)
    assert "H100 PCIe attainable 20 TFLOP/s (memory-bound)" in text
    assert "from L2: 69 TFLOP/s" in text


# -- the MFU trap ----------------------------------------------------------------------------------
def _unfused_row(panel) -> int:
    return next(i for i, k in enumerate(panel.kernels()) if k.name.startswith("attention unfused"))


def test_a_time_left_over_from_another_kernel_is_flagged_above_the_roof(qtbot, panel):
    panel.seed_examples()
    model = panel.kernel_model
    row = _unfused_row(panel)
    assert not model.flagged_rows() and not any(r[0].startswith(WARNING_MARK) for r in panel.results.rows())
    type_cell(qtbot, panel, row, model.TIME, "1.6 ms")  # the fused kernel's time, typed on the unfused row
    assert panel.kernels()[row].time_s == pytest.approx(1.6e-3)
    placed = panel.placements()
    assert placed.fraction_of_roof[row] == pytest.approx(6.61, rel=1e-3)  # 661 % of its roof
    # the table: an icon and the warning colour on its fraction of the roof, and the tip says why
    assert is_flagged(panel, row, model.FRACTION)
    assert cell(panel, row, model.FRACTION) == "661%"
    assert cell(panel, row, model.FRACTION, Qt.ItemDataRole.ForegroundRole) is not None
    assert cell(panel, row, model.NAME, Qt.ItemDataRole.ForegroundRole) is not None  # seen when scrolled
    assert cell(panel, 0, model.NAME, Qt.ItemDataRole.ForegroundRole) is None
    tip = cell(panel, row, model.FRACTION, Qt.ItemDataRole.ToolTipRole)
    assert ADVICE in tip and "661% of its roof" in tip
    assert "faster than the peak compute rate itself" in tip  # 1.39 PFLOP/s on a 989 TFLOP/s device
    assert [r for r in range(len(panel.kernels())) if is_flagged(panel, r, model.FRACTION)] == [row]
    # the point's hover tip says it too, and its name on the chart is marked
    assert ADVICE in panel._point_tip(0, 0, row)
    assert any(t.startswith(WARNING_MARK) and "attention unfused" in t for t in panel.roof_label_texts())
    # the results: for the kernel just edited (it is selected) the whole warning; with none
    # selected, how many
    assert panel.selected_rows() == [row]
    assert results(panel)[f"{WARNING_MARK}  above the roof"] == ("661%", "")
    assert "Above the roof: check the time" in result_tip(panel, f"{WARNING_MARK}  above the roof")
    panel.kernel_table.clearSelection()
    assert results(panel)[f"{WARNING_MARK} Above the roof"] == ("1", "")
    assert ADVICE in result_tip(panel, f"{WARNING_MARK} Above the roof")
    assert "attention unfused" in result_tip(panel, f"{WARNING_MARK} Above the roof")
    # the CSV's check column carries it
    rows = dict(zip(*(panel.csv_columns()[i][1] for i in (1, 12)), strict=True))
    assert ADVICE in rows[panel.kernels()[row].name]
    # clearing the time puts the kernel back on its roof: no flag
    type_cell(qtbot, panel, row, model.TIME, "")
    assert not model.flagged_rows() and not is_flagged(panel, row, model.FRACTION)
    assert f"{WARNING_MARK} Above the roof" not in results(panel)


def test_a_point_within_five_percent_of_its_roof_is_not_flagged(panel):
    gemm = next(k for k in seed_examples() if k.name.startswith("GEMM"))
    roof = 989e12  # compute-bound on the H100 SXM
    panel.add_kernels([Kernel("4% above", gemm.flops, gemm.bytes, gemm.flops / (1.04 * roof)),
                       Kernel("6% above", gemm.flops, gemm.bytes, gemm.flops / (1.06 * roof))])
    assert list(panel.kernel_warnings()) == ["6% above"]


def test_above_the_l2_roof_or_under_it_the_warning_says_which(panel, catalog):
    pick(panel.hardware_combo, "h100-pcie")  # HBM 2 TB/s, L2 6.9 TB/s (measured)
    layer_norm = next(k for k in seed_examples() if k.name.startswith("layer norm"))  # 2 FLOP/B
    # 8 TFLOP/s: twice the HBM roof (4 TFLOP/s) but under the L2 roof (13.8 TFLOP/s)
    panel.add_kernel(Kernel("layer norm from L2", layer_norm.flops, layer_norm.bytes, layer_norm.flops / 8e12))
    (text,) = panel.kernel_warnings()["layer norm from L2"]
    assert text.startswith(ADVICE) and "under the L2 roof" in text and "from L2 rather than device memory" in text


def test_editing_the_counts_under_a_measured_time_flags_the_time_stale(qtbot, panel):
    gemm = next(k for k in seed_examples() if k.name.startswith("GEMM"))
    panel.add_kernel(Kernel("my GEMM", gemm.flops, gemm.bytes, 2e-3))  # 550 TFLOP/s: plausible
    model = panel.kernel_model
    assert not model.flagged_rows()
    type_cell(qtbot, panel, 0, model.FLOPS, "2.2 TFLOP")  # the shape grew; the time did not
    assert panel.kernels()[0].flops == pytest.approx(2.2e12) and panel.kernels()[0].time_s == 2e-3
    assert is_flagged(panel, 0, model.TIME)
    assert rl.STALE_TIME_ADVICE in cell(panel, 0, model.TIME, Qt.ItemDataRole.ToolTipRole)
    assert results(panel)[f"{WARNING_MARK}  time"] == ("possibly stale", "")
    panel.kernel_table.clearSelection()
    assert results(panel)[f"{WARNING_MARK} Time possibly stale"] == ("1", "")
    # a rename keeps the flag (the time is still the old one)
    type_cell(qtbot, panel, 0, model.NAME, "my bigger GEMM")
    assert is_flagged(panel, 0, model.TIME)
    # undo, twice: the old counts and their own time, no flag; redo brings the flag back
    panel.undo_stack().undo()
    panel.undo_stack().undo()
    assert panel.kernels()[0].flops == gemm.flops and not is_flagged(panel, 0, model.TIME)
    panel.undo_stack().redo()
    assert is_flagged(panel, 0, model.TIME)
    # a time measured for the new counts clears it
    type_cell(qtbot, panel, 0, model.TIME, "4 ms")
    assert not is_flagged(panel, 0, model.TIME) and not model.flagged_rows()


def test_retyping_a_stale_time_as_it_stands_confirms_it(qtbot, panel):
    panel.add_kernel(Kernel("k", 1e12, 1e9, 2e-3))
    model = panel.kernel_model
    type_cell(qtbot, panel, 0, model.BYTES, "2 GB")
    assert is_flagged(panel, 0, model.TIME)
    assert "retype it as it is, to keep it" in cell(panel, 0, model.TIME, Qt.ItemDataRole.ToolTipRole)
    steps = panel.undo_stack().count()
    type_cell(qtbot, panel, 0, model.TIME, cell(panel, 0, model.TIME, Qt.ItemDataRole.EditRole))
    assert not is_flagged(panel, 0, model.TIME)
    assert panel.undo_stack().count() == steps  # nothing in the scenario changed
    assert panel.status_text() == ""


def test_the_flags_follow_the_theme(qtbot, panel, qapp):
    from ui import theme

    panel.set_scenario(RooflineScenario(kernels=(Kernel("too fast", 1e12, 1e9, 1e-4),)))
    light = cell(panel, 0, panel.kernel_model.FRACTION, Qt.ItemDataRole.ForegroundRole).color()
    theme.apply_theme(qapp, "dark")
    try:
        qapp.processEvents()
        dark = cell(panel, 0, panel.kernel_model.FRACTION, Qt.ItemDataRole.ForegroundRole).color()
        assert dark.name() == theme.current_theme().error.lower() and dark != light
    finally:
        theme.apply_theme(qapp, "light")


# -- the model ----------------------------------------------------------------------------------
def test_model_flags_only_measured_points_above_the_tolerance():
    kernels = [Kernel("on", 1e12, 1e9), Kernel("ok", 1e12, 1e9, 1.0e12 / 500e12),
               Kernel("fast", 1e12, 1e9, 1e12 / 900e12)]
    placed = rl.place_many(kernels, 989e12, 1e12)  # 1000 FLOP/B at 1 TB/s: the roof is the 989 T peak
    assert placed.above_roof().tolist() == [False, False, False]
    placed = rl.place_many(kernels, 989e12, 0.5e12)  # roof 500 T: "fast" is 180 % of it
    assert placed.above_roof().tolist() == [False, False, True]
    assert placed.above_roof(tolerance=1.0).tolist() == [False, False, False]
    warnings = placed.roof_warnings(989e12, [("L2", 2e12)])
    assert warnings[:2] == ("", "") and warnings[2].startswith(ADVICE)
    assert "under the L2 roof" in warnings[2]
    assert rl.place(kernels[2], 989e12, 0.5e12).above_roof is True


@pytest.mark.parametrize(("call", "parameter"), [
    (lambda p: p.above_roof(tolerance=-1), "tolerance"),
    (lambda p: p.above_roof(tolerance=float("nan")), "tolerance"),
    (lambda p: p.roof_warnings(0.0), "peak_flops"),
    (lambda p: p.roof_warnings(1e15, caches="L2"), "caches"),
    (lambda p: p.roof_warnings(1e15, caches=[("L2", -1.0)]), "caches"),
    (lambda p: p.roof_warnings(1e15, caches=[("L2",)]), "caches"),
])
def test_model_checks_refuse_bad_input_naming_it(call, parameter):
    from workbench import InputError

    placed = rl.place_many([Kernel("k", 1e12, 1e9, 1e-3)], 1e15, 1e12)
    with pytest.raises(InputError) as info:
        call(placed)
    assert info.value.parameter == parameter


def test_model_time_may_be_stale():
    old = Kernel("k", 1e12, 1e9, 2e-3)
    assert rl.time_may_be_stale(old, Kernel("k", 2e12, 1e9, 2e-3))
    assert rl.time_may_be_stale(old, Kernel("renamed", 1e12, 2e9, 2e-3))
    assert not rl.time_may_be_stale(old, Kernel("k", 2e12, 1e9, 3e-3))  # a new time came with it
    assert not rl.time_may_be_stale(old, Kernel("renamed", 1e12, 1e9, 2e-3))  # counts unchanged
    assert not rl.time_may_be_stale(Kernel("k", 1e12, 1e9), Kernel("k", 2e12, 1e9))  # no time at all
    from workbench import InputError

    with pytest.raises(InputError) as info:
        rl.time_may_be_stale(old, "k")
    assert info.value.parameter == "new"


def test_model_cache_roofs_are_every_level_but_device_memory_fastest_first():
    hw = presets.hardware_by_key("h100-sxm")
    levels = (*hw.memory, MemoryLevel("L1", 30e12, source="test"), MemoryLevel("L2", 12e12, source="test"))
    lab = Hardware(name="lab", vendor="lab", compute=hw.compute, memory=levels)
    assert [m.name for m in lab.cache_levels] == ["L1", "L2"]
    roofs = rl.ceilings(lab, "bf16", include_l2=True)
    assert [(r.label, r.kind) for r in roofs if r.kind == "l2"] == [("L1 bandwidth", "l2"), ("L2 bandwidth", "l2")]
    assert lab.mem_bw == hw.mem_bw  # kernels still sit under device memory


def test_csv_has_a_check_column(panel, tmp_path):
    panel.set_scenario(RooflineScenario(kernels=(Kernel("too fast", 1e12, 1e9, 1e-4), Kernel("fine", 1e12, 1e9))))
    path = panel.export_kernels_csv(tmp_path / "kernels.csv")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["check"].startswith(ADVICE) for r in rows] == [True, False]


def test_flat_roof_labels_at_the_right_edge_keep_clear_of_each_other(qtbot, panel):
    # H100 PCIe 2:4 sparse with its precision ceilings, the H100 SXM beside it: five flat roofs
    # end at the right edge within a few label heights (the labels covered each other)
    panel.set_scenario(RooflineScenario(hardware=("h100-pcie", "h100-sxm"), sparse=True,
                                        show_precision_ceilings=True, show_l2=True))
    qtbot.waitExposed(panel)
    panel._place_point_labels()
    vb = panel.chart.getPlotItem().getViewBox()
    boxes = {}
    for item, *_rest in panel._overlays:
        if item.isVisible() and getattr(item, "_flat", None) is not None:
            item.updateTransform(force=True)
            rect = item.textItem.sceneBoundingRect()
            _x_end, x_start, _anchor = item._flat
            # each stays over its own roof: not left of where the roof starts
            assert vb.mapSceneToView(rect.topLeft()).x() >= x_start - 1e-9, item.toPlainText()
            boxes[item.toPlainText()] = rect
    bold = next(r for text, r in boxes.items() if text.startswith("BF16/FP16 peak"))
    others = {text: r for text, r in boxes.items() if not text.startswith("BF16/FP16 peak")}
    assert len(others) >= 3
    assert not [text for text, r in others.items() if r.intersects(bold)]  # the bold peak reads whole
    tf32 = next(r for text, r in others.items() if text.startswith("TF32"))
    assert not any(r.intersects(tf32) for text, r in others.items() if not text.startswith("TF32"))
