"""The roofline panel, driven the way a person uses it: pick presets, toggle switches, add and
import kernels, measure this machine, undo; assertions on what the panel shows and saves."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from chart_items import assert_draws_as
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QWidget

from ui.catalog import HardwareCatalog
from ui.panels.roofline import MAX_POINT_LABELS, RooflinePanel
from workbench import roofline as rl
from workbench.context import RunContext
from workbench.kernels import Kernel, gemm, seed_examples
from workbench.scenarios import RooflineScenario, scenario_from_json


@pytest.fixture
def catalog(qapp):
    return HardwareCatalog()


@pytest.fixture
def panel(qtbot, catalog):
    p = RooflinePanel(catalog, undo_stack=QUndoStack())
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    yield p
    p.shutdown()


def pick(combo, data):
    """Choose an item the way a person does (activated, not just setCurrentIndex)."""
    index = combo.findData(data)
    assert index >= 0, f"{data!r} not in {[combo.itemData(i) for i in range(combo.count())]}"
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def series(panel, name_part):
    return [s for s in panel.chart.series() if name_part in s.name]


def compute_roof_y(panel):
    return float(series(panel, ": ridge")[0].y[-1])


def memory_roof(panel):
    """The device-memory slope: the primary's roof line up to the ridge (one line with the
    flat compute roof after it)."""
    s = series(panel, ": ridge")[0]
    assert len(s.x) == 3  # the slope's two points, then the flat roof's end
    ridge = int(np.argmax(s.y)) + 1  # the first point at the peak ends the slope
    return s.x[:ridge].copy(), s.y[:ridge].copy()


# -- presets, precision, ridge -----------------------------------------------------------------
def test_switch_preset_and_precision_reads_ridge_label(panel):
    assert panel.ridge_label_text() == "ridge 295 FLOP/B"  # H100 SXM, BF16 dense
    assert "dense" in panel.chart.getPlotItem().titleLabel.text
    pick(panel.precision_combo, "fp8")
    assert panel.ridge_label_text() == "ridge 591 FLOP/B"
    pick(panel.hardware_combo, "a100-sxm-80gb")
    # the A100 has no FP8: the precision falls back to BF16, in the same undo step
    assert panel.scenario().precision == "bf16"
    assert [panel.precision_combo.itemData(i) for i in range(panel.precision_combo.count())] == [
        "fp32", "tf32", "bf16", "fp16"]
    assert panel.ridge_label_text() == "ridge 153 FLOP/B"
    assert panel.undo_stack().undoText() == "Change hardware to NVIDIA A100 SXM 80GB (BF16)"
    panel.undo_stack().undo()
    assert panel.scenario().primary == "h100-sxm" and panel.scenario().precision == "fp8"
    assert panel.hardware_combo.currentData() == "h100-sxm"
    rows = dict((q, (v, u)) for q, v, u in panel.results.rows())
    assert rows["Ridge point"] == ("591", "FLOP/B")
    assert rows["Peak compute (FP8, dense)"] == ("1.98", "PFLOP/s")


def test_sparsity_doubles_compute_roof_moves_ridge_keeps_memory_roof(panel):
    dense_peak = compute_roof_y(panel)
    mem_x, mem_y = memory_roof(panel)
    slope = mem_y / mem_x
    assert dense_peak == pytest.approx(989e12)
    axes = panel.chart.visible_range()
    panel.sparse_check.click()
    # the scale stays put, so the roof is seen to rise (the extent already held the sparse roof)
    assert panel.chart.visible_range() == axes
    assert axes[1][1] > 2 * dense_peak
    assert panel.scenario().sparse is True
    assert compute_roof_y(panel) == pytest.approx(2 * dense_peak)
    assert panel.ridge_label_text() == "ridge 590 FLOP/B"
    new_x, new_y = memory_roof(panel)
    np.testing.assert_allclose(new_y / new_x, slope)  # same bandwidth: 3.35 TB/s
    assert new_x[-1] == pytest.approx(2 * mem_x[-1])  # the slope runs on to the new ridge
    assert "2:4 sparse" in panel.chart.getPlotItem().titleLabel.text
    assert panel.results.rows()[0][:2] == ("Peak compute (BF16, 2:4 sparse)", "1.98")
    assert panel.undo_stack().undoText() == "Turn sparsity on"


def test_compare_presets_overlay_with_legend(panel):
    pick(panel.compare_combos[0], "b200")
    pick(panel.compare_combos[1], "a100-sxm-80gb")
    pick(panel.compare_combos[2], "rtx-4090")
    assert panel.scenario().hardware == ("h100-sxm", "b200", "a100-sxm-80gb", "rtx-4090")
    assert panel.chart.legend_visible()
    legend = [s for s in panel.chart.series() if s.in_legend]
    assert len(legend) == 4 and len({s.color for s in legend}) == 4
    quantities = [r[0] for r in panel.results.rows()]
    assert "Ridge point, B200" in quantities and "Ridge point, RTX 4090" in quantities
    pick(panel.compare_combos[1], "")
    assert panel.scenario().hardware == ("h100-sxm", "b200", "rtx-4090")
    assert panel.undo_stack().undoText() == "Stop comparing with NVIDIA A100 SXM 80GB"


def test_precision_ceilings_drawn_on_request(panel):
    assert not series(panel, "FP8 peak")
    panel.ceilings_check.click()
    names = [s.name for s in panel.chart.series()]
    assert any("FP8 peak" in n for n in names) and any("FP32 peak" in n for n in names)
    assert any("TF32 peak" in n for n in names)
    assert not panel.l2_check.isEnabled()  # no preset lists an L2 bandwidth


# -- kernels ----------------------------------------------------------------------------------
def test_gemm_from_shapes_is_compute_bound_on_h100(panel, qtbot):
    builder = panel.open_builder()
    builder.set_kind("gemm")
    builder.set_values(m=8192, n=8192, k=8192, dtype="bf16")
    assert "2731 FLOP/B" in builder.preview.text()
    qtbot.mouseClick(builder.add_button, Qt.MouseButton.LeftButton)
    (kernel,) = panel.kernels()
    assert kernel.intensity == pytest.approx(2 * 8192**3 / (3 * 8192**2 * 2))
    p = panel.placements()
    assert bool(p.compute_bound[0])
    model = panel.kernel_model
    assert model.index(0, model.INTENSITY).data() == "2731 FLOP/B"
    assert model.index(0, model.BOUND).data() == "compute"
    assert model.index(0, model.FRACTION).data() == "100%"
    assert "compute-bound" in model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    panel.select_kernel(0)
    rows = dict((q, (v, u)) for q, v, u in panel.results.rows())
    assert rows["  bound"][0] == "compute-bound"
    assert rows["  intensity"] == ("2731", "FLOP/B")
    assert panel.chart.operating_point()[:2] == pytest.approx((kernel.intensity, 989e12))
    # a skinny GEMM is memory-bound
    builder.set_values(m=16, n=8192, k=8192)
    builder.add()
    assert not bool(panel.placements().compute_bound[1])


def test_kernel_edits_are_one_undo_step_each(panel):
    stack = panel.undo_stack()
    panel.seed_examples()
    assert len(panel.kernels()) == 5 and stack.undoText() == "Add example kernels"
    panel.add_kernel(gemm(4096, 4096, 4096))
    panel.add_kernel(gemm(1024, 1024, 1024))
    assert stack.count() == 3  # no merging of kernel edits
    model = panel.kernel_model
    assert model.setData(model.index(6, model.TIME), "1.5 ms")
    assert panel.kernels()[6].time_s == pytest.approx(1.5e-3)
    assert stack.undoText() == "Edit kernel 'GEMM 1024x1024x1024 BF16'"
    achieved = panel.placements().achieved[6]
    assert achieved == pytest.approx(2 * 1024**3 / 1.5e-3)
    assert not model.setData(model.index(6, model.FLOPS), "lots")  # rejected, nothing pushed
    assert "flops" in panel.status_text().lower()
    panel.select_kernel(0)
    panel.remove_selected_kernels()
    assert len(panel.kernels()) == 6 and stack.undoText().startswith("Remove kernel 'elementwise")
    stack.undo()
    stack.undo()
    assert len(panel.kernels()) == 7 and panel.kernels()[6].time_s is None
    assert stack.count() == 5


def test_points_are_one_scatter_item_coloured_by_bound(panel):
    panel.seed_examples()
    data = panel.points.data
    assert len(data) == 5
    p = panel.placements()
    np.testing.assert_allclose(10 ** data["x"], p.intensity)
    np.testing.assert_allclose(10 ** data["y"], p.achieved)
    colors = {b.color().name() for b in data["brush"]}
    assert colors == {"#0072b2", "#e69f00"}  # memory- and compute-bound


def test_import_csv_lists_bad_row_and_plots_the_rest(panel, tmp_path):
    path = tmp_path / "kernels.csv"
    path.write_text("name,flops,bytes,time_s\n"
                    "gemm,1.1e12,4.0e8,0.0015\n"
                    "softmax,not-a-number,1e9,\n"
                    "add,6.7e7,4.0e8,\n", encoding="utf-8")
    result = panel.import_kernels(path)
    assert [k.name for k in panel.kernels()] == ["gemm", "add"]
    assert len(panel.last_import_errors) == 1
    assert panel.last_import_errors[0].startswith("line 3: softmax")
    assert panel.import_error_texts() == panel.last_import_errors
    assert panel.import_errors_box.isVisible()
    assert len(result.errors) == 1
    assert len(panel.points.data) == 2
    assert panel.undo_stack().undoText() == "Import 2 kernels from kernels.csv"
    # gemm has a measured time: it sits below its roof
    p = panel.placements()
    assert p.achieved[0] == pytest.approx(1.1e12 / 0.0015)
    assert p.fraction_of_roof[0] < 1


def test_import_ncu_export(panel, tmp_path):
    path = tmp_path / "ncu.csv"
    path.write_text(
        '==PROF== Connected to process 1\n'
        '"ID","Kernel Name","dram__bytes.sum","gpu__time_duration.sum",'
        '"sm__sass_thread_inst_executed_op_ffma_pred_on.sum"\n'
        '"","","byte","nsecond","inst"\n'
        '"0","sgemm","1,000,000","2,000","50,000,000"\n'
        '"1","bad","0","1,000","10"\n', encoding="utf-8")
    panel.import_kernels_from(path)
    assert [k.name for k in panel.kernels()] == ["sgemm"]
    assert panel.kernels()[0].flops == pytest.approx(1e8)
    assert len(panel.last_import_errors) == 1 and "bad" in panel.last_import_errors[0]


def test_import_unreadable_file_says_why(panel, tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("foo,bar\n1,2\n", encoding="utf-8")
    assert panel.import_kernels_from(path) is None
    assert "missing" in panel.last_import_errors[0]
    assert panel.kernels() == ()


# -- measure this machine ---------------------------------------------------------------------
def test_measure_this_machine_adds_and_selects_preset(panel, qtbot, catalog):
    panel.measure_size = "tiny"
    with qtbot.waitSignal(panel.measurement.finished, timeout=20_000):
        qtbot.mouseClick(panel.measure_button, Qt.MouseButton.LeftButton)
        assert not panel.measure_button.isEnabled()
        assert panel.measure_progress.isVisible() and panel.measure_cancel.isVisible()
    assert "this-machine" in catalog
    hw = catalog.get("this-machine")
    assert hw.name == "This machine (measured)"
    assert "STREAM triad" in hw.memory[0].source and "matmul" in hw.compute[0].source
    assert panel.scenario().primary == "this-machine"
    assert panel.scenario().precision == "fp32"  # the measured preset has FP32 and FP64
    assert panel.hardware_combo.currentData() == "this-machine"
    assert panel.hardware_combo.findData("this-machine") >= 0
    assert "Measured" in panel.measure_status.text()
    assert panel.measure_button.isEnabled() and not panel.measure_progress.isVisible()
    assert not panel.measurement.is_running()


def test_measurement_can_be_cancelled(panel, qtbot, catalog):
    panel.measure_size = "normal"
    with qtbot.waitSignal(panel.measurement.finished, timeout=60_000):
        panel.start_measurement()
        qtbot.mouseClick(panel.measure_cancel, Qt.MouseButton.LeftButton)
    assert "this-machine" not in catalog
    assert "cancelled" in panel.measure_status.text()


# -- context, hover, explanation, comparison, persistence, export ------------------------------
def test_context_maps_hardware_precision_sparsity_without_undo(panel):
    stack = panel.undo_stack()
    panel.apply_context(RunContext(hardware="b200", precision="fp8", sparse=True))
    s = panel.scenario()
    assert (s.primary, s.precision, s.sparse) == ("b200", "fp8", True)
    assert stack.count() == 0
    panel.apply_context(RunContext(hardware="tpu-v4", precision="fp8"))  # TPU v4 has only BF16
    assert (panel.scenario().primary, panel.scenario().precision) == ("tpu-v4", "bf16")
    panel.apply_context(RunContext(hardware="no-such-gpu", precision="bf16"))
    assert panel.scenario().primary == "tpu-v4"


def test_hover_reads_intensity_and_attainable(panel):
    vb = panel.chart.getPlotItem().getViewBox()
    scene_pos = vb.mapViewToScene(QPointF(1.0, 13.0))  # 10 FLOP/B, 10 TFLOP/s
    x, y = panel.chart.hover_at_scene(scene_pos)
    assert x == pytest.approx(10.0)
    text = panel.hover_text(x, y)
    assert "intensity 10 FLOP/B" in text
    assert "H100 SXM attainable 33.5 TFLOP/s (memory-bound)" in text


def test_explanation_is_one_click_away(panel, qtbot):
    text = panel.explanation()
    assert "ridge" in text and "fuse" in text.lower() and "attention" in text.lower()
    assert "295 FLOP/B" in text
    panel.action_explain.trigger()
    box = panel._explain_box
    assert box is not None and box.isVisible() and not box.isModal()
    assert "295 FLOP/B" in box.text()
    box.close()
    panel.action_explain.trigger()  # again: the same dialog comes back, not a second one
    assert panel._explain_box is box and box.isVisible()


def test_compare_saved_scenarios(panel):
    saved = RooflineScenario(hardware=("a100-sxm-80gb",), kernels=tuple(seed_examples()))
    panel.set_comparison([("A100 baseline", saved)])
    legend = [s.name for s in panel.chart.series() if s.in_legend]
    assert any(n.startswith("A100 baseline (saved") for n in legend)
    assert len(panel.compared_points.data) == 5
    panel.clear_comparison()
    assert len(panel.compared_points.data) == 0
    assert not any("saved" in s.name for s in panel.chart.series())


def test_a_compared_scenarios_roofs_are_one_dashed_line_through_its_ridge(panel):
    # its memory slope and flat roof are one line, as the panel's own roofs are: two lines
    # each started their dashes afresh at the ridge
    saved = RooflineScenario(hardware=("a100-sxm-80gb",), kernels=tuple(seed_examples()))
    panel.set_comparison([("A100 baseline", saved)])
    compared = [s for s in panel.chart.series() if "A100 baseline" in s.name]
    assert [s.name for s in compared] == [next(s.name for s in compared if s.in_legend)]
    roof = compared[0]
    a100 = panel._compared_analyses([])[0][2].primary
    ridge = a100.compute.ridge
    assert roof.x[0] < ridge < roof.x[-1]  # from the slope, through the ridge, to the flat roof
    assert np.isclose(np.interp(np.log10(ridge), np.log10(roof.x), np.log10(roof.y)), np.log10(a100.compute.peak_flops))
    assert roof.y[-1] == pytest.approx(a100.compute.peak_flops)


def _ridge_label_rows(panel) -> tuple[float, float]:
    """(top, bottom) of the ridge's label on the scene, in pixels."""
    panel.chart.settle()
    rect = panel._ridge_label.mapRectToScene(panel._ridge_label.boundingRect())
    return rect.top(), rect.bottom()


def _scene_row(panel, flops: float) -> float:
    view = panel.chart.getPlotItem().getViewBox()
    return view.mapViewToScene(QPointF(0.0, np.log10(flops))).y()


def test_the_ridge_label_hangs_under_a_flat_roof_that_would_cross_it(panel, qtbot):
    # alone, it hangs from the corner along its drop line; a compared A100's flat roof runs
    # under the H100's corner, through where the label stood: the label hangs under it
    qtbot.waitExposed(panel)
    h100 = panel._devices[0].compute
    top, _bottom = _ridge_label_rows(panel)
    assert top > _scene_row(panel, h100.peak_flops)  # under the corner
    saved = RooflineScenario(hardware=("a100-sxm-80gb",), kernels=tuple(seed_examples()))
    panel.set_comparison([("A100 baseline", saved)])
    a100 = panel._compared_analyses([])[0][2].primary.compute
    assert a100.ridge < h100.ridge and a100.peak_flops < h100.peak_flops  # its flat roof runs under the corner
    roof_row = _scene_row(panel, a100.peak_flops)
    top, bottom = _ridge_label_rows(panel)
    assert roof_row < top < bottom  # the label wholly under the A100's roof
    # four times as tall, the text fits between the corner and that roof: it hangs from the
    # corner again; back at this size, under the roof again (its reach is in pixels)
    def hangs_from_the_corner() -> bool:
        return _ridge_label_rows(panel)[1] < _scene_row(panel, a100.peak_flops)

    panel.resize(1600, 3600)
    qtbot.waitUntil(hangs_from_the_corner)
    panel.resize(1600, 900)
    qtbot.waitUntil(lambda: _scene_row(panel, a100.peak_flops) < _ridge_label_rows(panel)[0])
    panel.clear_comparison()
    assert _ridge_label_rows(panel)[0] < roof_row  # back at the corner


def test_the_ridge_label_hangs_under_a_roof_slope_that_would_cross_it(panel, qtbot):
    # an L40S has a lower peak and a later ridge than the H100: at the H100's ridge its roof is
    # still on its memory slope, under the corner, and the label hangs under that crossing
    qtbot.waitExposed(panel)
    h100 = panel._devices[0].compute
    panel.set_comparison([("L40S", RooflineScenario(hardware=("l40s",), kernels=tuple(seed_examples())))])
    l40s = panel._compared_analyses([])[0][2].primary.compute
    assert l40s.ridge > h100.ridge and l40s.peak_flops < h100.peak_flops
    crossing = l40s.peak_flops * h100.ridge / l40s.ridge  # its slope's height at the H100's ridge
    top, bottom = _ridge_label_rows(panel)
    assert _scene_row(panel, crossing) < top < bottom


def test_scenario_round_trips_through_json(panel, qtbot, catalog):
    pick(panel.hardware_combo, "b200")
    pick(panel.compare_combos[0], "h100-sxm")
    pick(panel.precision_combo, "fp8")
    panel.sparse_check.click()
    panel.seed_examples()
    text = panel.scenario().to_json()
    reopened = RooflinePanel(catalog, scenario_from_json(text))
    qtbot.addWidget(reopened)
    assert reopened.scenario() == panel.scenario()
    assert reopened.hardware_combo.currentData() == "b200"
    assert reopened.compare_combos[0].currentData() == "h100-sxm"
    assert reopened.precision_combo.currentData() == "fp8"
    assert reopened.sparse_check.isChecked()
    assert reopened.ridge_label_text() == panel.ridge_label_text()
    assert json.loads(text)["kind"] == "roofline"


def test_csv_export_has_roofs_and_kernels_with_units(panel, tmp_path):
    panel.seed_examples()
    path = panel.export_to("csv", tmp_path / "roofline.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0])
    assert "intensity (FLOP/B)" in header and "achieved (FLOP/s)" in header
    kernels = [r for r in rows if r["row"] == "kernel"]
    roofs = [r for r in rows if r["row"] == "roof"]
    assert len(kernels) == 5 and len(roofs) == 4  # two end points each of two roofs
    gemm_row = next(r for r in kernels if r["name"].startswith("GEMM"))
    assert float(gemm_row["intensity (FLOP/B)"]) == pytest.approx(8192 / 3)
    assert gemm_row["bound"] == "compute"
    png = panel.export_to("png", tmp_path / "roofline.png", width_px=800)
    assert png.stat().st_size > 1000


def test_ridge_values_come_from_the_model(panel):
    hw = panel.catalog.get("h100-sxm")
    assert panel.primary_roofs()[0].ridge == pytest.approx(rl.ridge_point(hw.peak_flops("bf16"), hw.mem_bw))


def test_fast_scatter_matches_pyqtgraph_set_data(qtbot):
    """KernelScatter.set_points fills pyqtgraph's own record array like setData would."""

    from ui.panels.roofline import KernelScatter

    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1, 4, 50), rng.uniform(10, 15, 50)
    classes = (x > 2).astype(int)
    brushes = [pg.mkBrush("#0072B2"), pg.mkBrush("#E69F00")]
    pen = pg.mkPen("w")
    fast = KernelScatter(pxMode=True)
    fast.set_points(x, y, classes, brushes, pen, size=9)
    slow = KernelScatter(pxMode=True, size=9, symbol="o")
    brush_arr = np.empty(2, dtype=object)
    brush_arr[:] = brushes
    slow.setData(x=x, y=y, brush=brush_arr[classes], pen=pen, size=9, symbol="o", data=np.arange(50))
    for field in ("x", "y", "data", "visible"):
        np.testing.assert_array_equal(fast.data[field], slow.data[field])
    assert [b.color().name() for b in fast.data["brush"]] == [b.color().name() for b in slow.data["brush"]]
    assert all(r["w"] > 0 for r in fast.data["sourceRect"])
    np.testing.assert_array_equal(fast.data["size"], np.full(50, 9.0))
    assert fast.fragmentAtlas.maxWidth == pytest.approx(slow.fragmentAtlas.maxWidth)


# -- redrawing many kernels: cheaper, and the same ---------------------------------------------
def _many_kernels(n: int, seed: int = 3) -> tuple[Kernel, ...]:
    rng = np.random.default_rng(seed)
    flops = 10 ** rng.uniform(6, 13, n)
    ai = 10 ** rng.uniform(-1.5, 3.8, n)
    return tuple(Kernel(name=f"k{i}", flops=float(flops[i]), bytes=float(flops[i] / ai[i]),
                        time_s=None if i % 3 else float(flops[i] / 1e14 * (1 + i % 7))) for i in range(n))


class _PaintCounter(QObject):
    def __init__(self):
        super().__init__()
        self.count = 0

    def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def test_placements_under_a_new_roof_equal_place_many(panel):
    """The panel re-evaluates only the roof-dependent part for the same kernels: it must
    give exactly what rl.place_many gives."""
    kernels = _many_kernels(500)
    panel.add_kernels(kernels)
    for precision, sparse in (("fp8", False), ("fp8", True), ("bf16", True), ("fp16", False)):
        panel.edit(precision=precision, sparse=sparse)
        roof = panel.primary_roofs()[0]
        expected = rl.place_many(kernels, roof.peak_flops, roof.mem_bw)
        got = panel.placements()
        assert got.names == expected.names
        for field in ("intensity", "ceiling", "achieved", "fraction_of_roof", "compute_bound", "measured"):
            a, b = getattr(got, field), getattr(expected, field)
            assert a.dtype == b.dtype and np.array_equal(a, b), field
    pick(panel.hardware_combo, "b200")
    roof = panel.primary_roofs()[0]
    np.testing.assert_array_equal(panel.placements().achieved,
                                  rl.place_many(kernels, roof.peak_flops, roof.mem_bw).achieved)


def test_a_parameter_change_redraws_in_place_and_paints_the_chart_once(panel, qtbot):
    pick(panel.compare_combos[0], "b200")
    panel.add_kernels(_many_kernels(300))
    qtbot.waitExposed(panel)
    QCoreApplication.processEvents()
    QCoreApplication.processEvents()
    items = [s.item for s in panel.chart.series()]
    legend = panel.chart.getPlotItem().legend
    counter = _PaintCounter()
    panel.chart.viewport().installEventFilter(counter)
    for change in ({"sparse": True}, {"precision": "fp8"}, {"sparse": False}, {"precision": "bf16"}):
        before = counter.count
        panel.edit(**change)
        for _ in range(3):
            QCoreApplication.processEvents()
        assert counter.count - before == 1, change  # pyqtgraph painted every range change twice
    # the same line items and legend, renamed: nothing deleted and made again
    assert [s.item for s in panel.chart.series()] == items
    assert panel.chart.getPlotItem().legend is legend
    names = [html.unescape(label.text) for _sample, label in legend.items]
    assert names == [s.name for s in panel.chart.series() if s.in_legend]
    assert any(n.startswith("H100 SXM: ridge 295") for n in names)
    # brushes and pens are kept, so the scatter's symbol atlas does not grow with every redraw
    assert len(panel.points.fragmentAtlas) <= 2
    # the ridge markers (moved in place) sit on each device's ridge
    ridges = [(d.compute.ridge, d.compute.peak_flops) for d in panel.devices()]
    marker = panel.ridge_marker.data
    np.testing.assert_allclose(10 ** marker["x"], [r for r, _ in ridges])
    np.testing.assert_allclose(10 ** marker["y"], [p for _, p in ridges])


def test_sorted_kernel_table_follows_a_new_roof(panel):
    panel.add_kernels(_many_kernels(300))
    proxy, table = panel.kernel_proxy, panel.kernel_table
    table.sortByColumn(panel.kernel_model.ACHIEVED, Qt.SortOrder.DescendingOrder)

    def achieved() -> list[float]:
        return [proxy.index(r, panel.kernel_model.ACHIEVED).data(Qt.ItemDataRole.UserRole)
                for r in range(proxy.rowCount())]

    panel.edit(sparse=True)
    values = achieved()
    assert values == sorted(values, reverse=True)
    assert values[0] == pytest.approx(float(panel.placements().achieved.max()))
    table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # unsorted: the scenario's order again
    assert [proxy.mapToSource(proxy.index(r, 0)).row() for r in range(5)] == [0, 1, 2, 3, 4]


def test_replacing_series_matches_clear_and_add(qtbot):
    """Chart.replacing_series(): the series, their order, styles and legend are those that
    clear_series() and the same add_series() calls give; the items are reused."""
    from ui.charts import Chart

    def draw(chart, names):
        for i, name in enumerate(names):
            chart.add_series(name, [1, 10, 100], [i + 1, i + 2, i + 3], width=1 + i,
                             style="dash" if i % 2 else "solid", in_legend=i < 3)

    fresh, reused = Chart(log_x=True), Chart(log_x=True)
    qtbot.addWidget(fresh)
    qtbot.addWidget(reused)
    draw(fresh, ["a", "b", "c", "d"])
    draw(reused, ["a", "b", "c", "d"])
    first_items = [s.item for s in reused.series()]
    for names in (["c", "x", "a"], ["p", "q", "r", "s", "t"], ["only"], []):
        fresh.clear_series()
        draw(fresh, names)
        with reused.replacing_series():
            draw(reused, names)
        if names == ["c", "x", "a"]:
            # a name drawn again keeps its item; a new one takes one cleared: none made
            items = [s.item for s in reused.series()]
            assert items[0] is first_items[2]
            assert all(any(item is first for first in first_items) for item in items)
        assert_draws_as(reused, fresh, names)


def test_fast_scatter_paint_is_pixel_identical_to_pyqtgraph(panel, qtbot, monkeypatch):
    from ui.panels.roofline import KernelScatter

    panel.add_kernels(_many_kernels(2000))
    qtbot.waitExposed(panel)

    def grab() -> bytes:
        panel.chart.viewport().repaint()
        image = panel.chart.grab().toImage()
        return bytes(image.constBits())  # while ``image`` lives: the bits are its memory

    # every point drawn (the repeats left out are tested apart, in test_roofline_speed)
    monkeypatch.setattr(KernelScatter, "DISTINCT_FROM", 10**9)
    fast_paint = KernelScatter._paint_fast
    taken = []
    monkeypatch.setattr(KernelScatter, "_paint_fast",
                        lambda self, p, widget: taken.append(fast_paint(self, p, widget)) or taken[-1])
    fast = grab()
    assert True in taken  # the kernels are inside the view: the fast path drew them
    monkeypatch.setattr(KernelScatter, "_paint_fast", lambda self, p, widget: False)
    assert grab() == fast


def test_what_a_change_repaints_matches_a_full_repaint(panel, qtbot):
    """Only the changed parts are repainted (the chart once, the kernel table's changed cells):
    what the chart and the kernel table show afterwards must equal a full repaint."""
    from PySide6.QtWidgets import QApplication

    pick(panel.compare_combos[0], "b200")
    panel.add_kernels(_many_kernels(400))
    qtbot.waitExposed(panel)
    areas = [panel.chart.viewport(), panel.kernel_table.viewport()]

    def on_screen() -> list[np.ndarray]:
        QCoreApplication.processEvents()
        QCoreApplication.processEvents()
        image = QApplication.primaryScreen().grabWindow(panel.winId()).toImage()
        pixels = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
        pixels = pixels.reshape(image.height(), image.bytesPerLine() // 4, 4).copy()  # while ``image`` lives
        out = []
        for widget in areas:
            corner = widget.mapTo(panel.window(), widget.rect().topLeft())
            out.append(pixels[corner.y():corner.y() + widget.height(), corner.x():corner.x() + widget.width()])
        return out

    on_screen()
    for change in ({"sparse": True}, {"precision": "fp8"}, {"hardware": ("a100-sxm-80gb", "b200")},
                   {"precision": "bf16"}, {"sparse": False}, {"hardware": ("h100-sxm", "b200")}):
        panel.edit(**change)
        shown = on_screen()
        for widget in areas:
            widget.repaint()  # all of it
        for widget, before, after in zip(areas, shown, on_screen(), strict=True):
            assert np.array_equal(before, after), (change, widget.parent().objectName())


def test_axes_paint_the_pixels_lines_paint(panel, qtbot, monkeypatch):
    """The grid lines filled as 1 px rectangles (LogUnitAxis) and the frame axes drawn
    directly (FrameAxis) give the pixels of the lines Qt draws for them otherwise: the
    axis's own line drawing, and pyqtgraph's paint of a frame axis."""
    from ui.charts import LogUnitAxis

    pick(panel.compare_combos[0], "b200")
    panel.add_kernels(_many_kernels(200))
    qtbot.waitExposed(panel)
    plot = panel.chart.getPlotItem()

    def grab() -> bytes:
        for side in ("left", "bottom", "top", "right"):
            plot.getAxis(side).picture = None
        panel.chart.viewport().repaint()
        image = panel.chart.grab().toImage()
        return bytes(image.constBits())  # while ``image`` lives: the bits are its memory

    for change in ({}, {"sparse": True}, {"precision": "fp8", "show_precision_ceilings": True}):
        if change:
            panel.edit(**change)
        ours = grab()
        assert plot.getAxis("left")._fills is not None  # the rectangles were used
        with monkeypatch.context() as m:
            m.setattr(LogUnitAxis, "_fill_lines", lambda self, p: False)  # Qt draws the lines
            for side in ("top", "right"):  # pyqtgraph's own paint (empty tick levels)
                plot.getAxis(side).setTicks([[], []])
            lines = grab()
        for side in ("top", "right"):
            plot.getAxis(side).setTicks([])
        assert ours == lines, change


def test_kernel_table_sorts_by_name_and_number_with_ties_in_scenario_order(panel):
    panel.add_kernels((Kernel("beta", 2e9, 1e6), Kernel("Alpha", 1e9, 1e6), Kernel("gamma", 1e9, 1e6),
                       Kernel("alpha", 5e9, 1e6)))
    proxy, table, model = panel.kernel_proxy, panel.kernel_table, panel.kernel_model

    def names() -> list[str]:
        return [proxy.index(r, model.NAME).data() for r in range(proxy.rowCount())]

    table.sortByColumn(model.NAME, Qt.SortOrder.AscendingOrder)
    assert names() == ["Alpha", "alpha", "beta", "gamma"]  # case-insensitive, ties as given
    table.sortByColumn(model.NAME, Qt.SortOrder.DescendingOrder)
    assert names() == ["gamma", "beta", "Alpha", "alpha"]
    table.sortByColumn(model.FLOPS, Qt.SortOrder.DescendingOrder)
    assert names() == ["alpha", "beta", "Alpha", "gamma"]  # 1 GFLOP twice: Alpha stays first
    table.sortByColumn(model.FLOPS, Qt.SortOrder.AscendingOrder)
    assert names() == ["Alpha", "gamma", "beta", "alpha"]
    assert proxy.mapFromSource(model.index(3, 0)).row() == 3
    assert proxy.mapToSource(proxy.index(0, 0)).row() == 1


def test_selection_follows_its_kernels_when_a_new_roof_resorts_the_table(panel):
    panel.add_kernels(_many_kernels(2000))
    table, model = panel.kernel_table, panel.kernel_model
    table.sortByColumn(model.FRACTION, Qt.SortOrder.AscendingOrder)
    placed = panel.placements()
    # a measured compute-bound kernel: its fraction of the roof halves under the sparse roof
    row = int(np.flatnonzero(placed.measured & placed.compute_bound & (placed.fraction_of_roof > 0.05))[0])
    panel.select_kernel(row)
    assert panel.selected_rows() == [row]
    before = panel.kernel_proxy.mapFromSource(model.index(row, 0)).row()
    panel.edit(sparse=True)
    # the kernel's row in the view moved (its fraction of the roof halved, others did not)
    fractions = [panel.kernel_proxy.index(r, model.FRACTION).data(Qt.ItemDataRole.UserRole)
                 for r in range(panel.kernel_proxy.rowCount())]
    assert fractions == sorted(fractions)
    assert panel.kernel_proxy.mapFromSource(model.index(row, 0)).row() != before
    assert panel.selected_rows() == [row]  # and is still the one selected


def _check_point_labels(panel) -> list[str]:
    """The shown kernel names: inside the plot, clear of each other and of every line."""
    from ui.label_placement import boxes_overlap, segment_hits_box

    vb = panel.chart.getPlotItem().getViewBox()
    area = vb.sceneBoundingRect()
    segments = []
    for s in panel.chart.series():
        pts = [vb.mapViewToScene(QPointF(float(np.log10(x)), float(np.log10(y)))) for x, y in zip(s.x, s.y, strict=True)]
        segments += [((a.x(), a.y()), (b.x(), b.y())) for a, b in zip(pts, pts[1:], strict=False)]
    shown = [(text, box) for text, box in panel.point_label_boxes() if box is not None]
    own = {text for text, _box in panel.point_label_boxes()}
    others = []  # the roofs' own labels (peak, bandwidth, ridge) as the text's outline
    for item, *_rest in panel._overlays:
        if item.isVisible() and item.toPlainText() not in own:
            item.updateTransform(force=True)
            corners = item.textItem.mapToScene(item.textItem.boundingRect())
            pts = [(corners.at(i).x(), corners.at(i).y()) for i in range(4)]
            r = corners.boundingRect()
            level = r.width() * r.height() <= 1.01 * abs(
                (pts[1][0] - pts[0][0]) * (pts[3][1] - pts[0][1]) - (pts[1][1] - pts[0][1]) * (pts[3][0] - pts[0][0]))
            others.append((item.toPlainText(), (r.left(), r.top(), r.width(), r.height()) if level else None,
                           [(pts[i], pts[(i + 1) % 4]) for i in range(4)] + [(pts[0], pts[2]), (pts[1], pts[3])]))
    for i, (text, box) in enumerate(shown):
        for other_text, other_box, outline in others:
            if other_box is not None:  # level text: its whole box
                assert not boxes_overlap(box, other_box), f"{text!r} overlaps {other_text!r}"
            else:  # text along a sloped roof: its outline
                assert not any(segment_hits_box(edge, box) for edge in outline), f"{text!r} overlaps {other_text!r}"
        left, top, w, h = box
        assert area.left() <= left and left + w <= area.right() + 0.5 and area.top() <= top and top + h <= area.bottom() + 0.5, text
        assert not any(segment_hits_box(seg, box) for seg in segments), f"{text!r} lies on a line"
        for other_text, other in shown[i + 1:]:
            assert not boxes_overlap(box, other), f"{text!r} overlaps {other_text!r}"
    return [text for text, _box in shown]


def test_kernel_names_are_level_clear_of_lines_and_each_other_at_any_size(qtbot, panel):
    pick(panel.compare_combos[0], "b200")
    panel.seed_examples()
    names = _check_point_labels(panel)
    assert len(panel.point_label_boxes()) == 5
    assert len(names) >= 4  # at 1600x900 the five seed kernels nearly all find room
    assert "GEMM 8192^3 BF16" in names
    assert "layer norm\n(32768 x 8192 BF16)" in names  # long names break before their details
    panel.resize(1000, 650)
    qtbot.waitUntil(lambda: panel.chart.width() < 800)
    QCoreApplication.processEvents()
    _check_point_labels(panel)  # placed again for the smaller chart
    panel.resize(1400, 1000)  # taller: the roofs' labels move relative to the points
    qtbot.waitUntil(lambda: panel.chart.height() > 600)
    QCoreApplication.processEvents()
    _check_point_labels(panel)
    panel.edit(sparse=True)
    _check_point_labels(panel)


def test_label_lines_breaks_long_names():
    from ui.panels.roofline import _label_lines

    assert _label_lines("GEMM 8192^3 BF16") == "GEMM 8192^3 BF16"
    assert _label_lines("attention fused (b8 h32 s4096 d128 BF16)") == "attention fused\n(b8 h32 s4096 d128 BF16)"
    cut = _label_lines("a_very_long_kernel_name_without_any_spaces_at_all_x")
    assert cut == "a_very_long_kernel_name_without_a…" and len(cut) == 34
    long = _label_lines("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256 (cutlass) extra words")
    assert all(len(line) <= 34 for line in long.split("\n"))


def test_l2_roof_drawn_for_a_preset_that_gives_its_l2_bandwidth(panel, catalog):
    from workbench.hardware import MemoryLevel

    h100 = catalog.get("h100-sxm")
    l2 = MemoryLevel("L2", 12e12, source="a user's own microbenchmark (figure made up for the test)")
    key = catalog.add_user_preset(h100.with_changes(name="H100 own figures", key="h100-own",
                                                    memory=(*h100.memory, l2)))
    pick(panel.hardware_combo, key)
    assert panel.l2_check.isEnabled()
    assert not any("L2" in s.name for s in panel.chart.series())
    panel.l2_check.click()
    assert panel.scenario().show_l2 is True
    (l2_line,) = [s for s in panel.chart.series() if "L2" in s.name]
    np.testing.assert_allclose(l2_line.y[:2] / l2_line.x[:2], 12e12)  # the slope is the L2 bandwidth
    axes = panel.chart.visible_range()
    panel.sparse_check.click()
    assert panel.chart.visible_range() == axes  # the extent held the sparse L2 ridge too
    panel.sparse_check.click()
    # it meets the same compute roof further left: its ridge is 989 T / 12 T = 82 FLOP/B, and
    # it runs on flat (dashed) to the HBM ridge, where the drawn compute roof begins
    assert l2_line.x[1] == pytest.approx(989e12 / 12e12)
    assert l2_line.y[1] == pytest.approx(compute_roof_y(panel))
    assert l2_line.x[-1] == pytest.approx(989e12 / 3.35e12) and l2_line.y[-1] == pytest.approx(989e12)
    assert any("L2" in text for text in (item.toPlainText() for item, *_ in panel._overlays))


def test_results_beside_the_kernels_do_not_jump_when_a_toggle_changes_their_text(panel, qtbot):
    panel.seed_examples()
    qtbot.waitExposed(panel)
    for _ in range(3):  # the layout the kernels asked for, then its paint
        QCoreApplication.processEvents()
    sizes = panel.bottom.sizes()
    box = panel.findChild(QWidget, "kernelsBox")
    counter = _PaintCounter()
    box.installEventFilter(counter)
    # the first toggle too: "Peak compute (BF16, 2:4 sparse)", the widest label, was reserved
    for _ in range(4):
        panel.sparse_check.click()
        QCoreApplication.processEvents()
        assert panel.bottom.sizes() == sizes
    box.removeEventFilter(counter)
    # the kernels' box was not laid out and repainted whole (only the changed cells were)
    assert counter.count == 0
    # whole text, no sideways scrolling in the results
    assert panel.results.horizontalHeader().length() <= panel.results.viewport().width()


def test_leader_lines_go_when_the_names_go(qtbot, panel):
    pick(panel.compare_combos[0], "b200")
    panel.seed_examples()
    assert len(panel.label_leaders.xData) > 0  # at 1600x900 two names need a leader line
    panel.add_kernels(_many_kernels(MAX_POINT_LABELS))  # too many to name
    assert all(box is None for _t, box in panel.point_label_boxes()) or not panel.point_label_boxes()
    assert panel.label_leaders.xData is None or len(panel.label_leaders.xData) == 0
    panel.undo_stack().undo()
    assert len(panel.label_leaders.xData) > 0
    panel.kernel_table.selectAll()
    panel.remove_selected_kernels()
    assert panel.kernels() == ()
    assert panel.label_leaders.xData is None or len(panel.label_leaders.xData) == 0


def test_a_kernel_whose_intensity_underflows_is_refused_before_it_reaches_the_chart():
    from workbench._validate import InputError

    with pytest.raises(InputError) as info:
        Kernel("tiny", 1e-300, 1e300)
    assert info.value.parameter == "bytes" and "intensity" in str(info.value)


def test_selected_rows_follow_the_sorted_view(panel):
    panel.add_kernels(_many_kernels(2000))
    table, model = panel.kernel_table, panel.kernel_model
    table.sortByColumn(model.FLOPS, Qt.SortOrder.DescendingOrder)
    table.selectRow(0)
    biggest = int(np.argmax([k.flops for k in panel.kernels()]))
    assert panel.selected_rows() == [biggest]
    table.selectAll()
    assert panel.selected_rows() == list(range(2000))


def test_a_name_column_the_user_widened_stays_wide(qtbot, panel):
    panel.seed_examples()
    header = panel.kernel_table.horizontalHeader()
    header.resizeSection(0, 420)
    panel.resize(1500, 850)
    qtbot.waitUntil(lambda: panel.width() == 1500)
    QCoreApplication.processEvents()
    assert header.sectionSize(0) == 420


def test_an_export_without_flop_counters_says_so_once_and_gives_the_ncu_command(panel):
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "ncu" / "details-page-sections.csv"
    panel.import_kernels_from(fixture)
    report = panel.import_report
    assert panel.import_errors_box.isVisible()
    assert report.command.isVisible() and report.command.text().startswith("ncu ")
    assert "--metrics" in report.command.text()
    assert report.problems.count() == 1  # one line for the whole file, not one per launch
    panel.clear_import_errors()
    assert not panel.import_errors_box.isVisible()
