"""Run plan panel, driven the way a person would: typing, picking presets, undoing, exporting."""

from __future__ import annotations

import csv
import types
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QUndoStack

import presets
from ui import theme as th
from ui.catalog import HardwareCatalog
from ui.document import Document, PresetCatalog
from ui.panels.run_plan import RunPlanPanel
from workbench import units
from workbench.plan import TERM_LABELS, TERMS, predict, shape_of
from workbench.workspace import DEFAULT_PLAN, PlanView, follow_plan


@pytest.fixture
def catalog(qapp):
    return HardwareCatalog()


@pytest.fixture
def panel(qtbot, catalog):
    p = RunPlanPanel(catalog)
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    qtbot.waitExposed(p)
    return p


@pytest.fixture
def light_theme(qapp):
    th.apply_theme(qapp, "light")
    yield
    th.apply_theme(qapp, "light")


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


def predicted(catalog, plan=DEFAULT_PLAN):
    return predict(plan, PresetCatalog(catalog))


def model(name):
    return next(m for m in presets.load_models() if m.name == name)


def test_default_plan_numbers_are_predicts(panel, catalog):
    p = predicted(catalog)
    assert panel.scenario() == DEFAULT_PLAN
    assert panel.prediction().mfu == pytest.approx(p.mfu)
    value, unit = panel.result_text("MFU")
    assert value == units.format_quantity(p.mfu, "%").rstrip("%")
    assert unit.startswith("%, ")  # with its rating
    assert panel.result_text("Training time") == (f"{p.train_days:,.0f}", "days")
    assert panel.result_text("Step time") == tuple(units.format_quantity(p.step_time_s, "s").split(" "))
    assert panel.result_text("Tokens/s") == (units.format_quantity(p.tokens_per_s, ""), "tokens/s")
    assert panel.result_text("Memory per GPU") == (f"{p.memory.total / 2**30:,.1f}", "GiB")
    assert panel.result_text("Fits in memory")[0] == "yes"
    assert not panel.status_text() and panel.blocking_problem() == ""


def test_mfu_rating_bands():
    from workbench.plan import mfu_rating

    assert mfu_rating(0.45) == "typical of well-tuned large runs"
    assert mfu_rating(0.35) == "typical of well-tuned large runs"
    assert mfu_rating(0.65) == "excellent"
    assert mfu_rating(0.2) == "low"
    assert mfu_rating(1.2) == "impossible: check the peak and the inputs"


def test_the_panel_is_the_plan(panel):
    assert panel.kind == "run_plan" and RunPlanPanel.saves_scenario is False
    assert not panel.action_override.isVisible()
    other = DEFAULT_PLAN.with_changes(train_tokens=2e12)
    assert follow_plan("run_plan", DEFAULT_PLAN, PlanView(plan=other)) is other
    assert set(panel.CONTEXT_FIELDS) >= {"n_params", "hardware", "tp", "zero", "recompute", "gpu_hour_price"}
    assert all(panel.field(name) is not None for name in panel.CONTEXT_FIELDS)
    text = panel.explanation()
    assert "workbench.plan" in text and "predict" in text


def test_model_preset_is_one_undo_step(qtbot, panel):
    combo = panel.preset_combo
    assert combo.currentText() == "Llama 3 8B"
    index = combo.findText("Llama 3 70B")
    assert "Dubey et al. 2024" in combo.itemData(index, Qt.ItemDataRole.ToolTipRole)
    pick(qtbot, combo, "Llama 3 70B")
    shape = model("Llama 3 70B")
    assert shape_of(panel.scenario()) == shape.fields()
    assert panel.field("n_layers").value() == 80 and panel.field("d_model").value() == 8192
    stack = panel.undo_stack()
    assert stack.count() == 1
    assert "Llama 3 70B" in stack.undoText()
    stack.undo()
    assert panel.scenario() == DEFAULT_PLAN
    assert panel.field("n_layers").value() == 32
    assert combo.currentText() == "Llama 3 8B"
    stack.redo()
    assert shape_of(panel.scenario()) == shape.fields()


def test_typing_70b_parameters_reshapes_the_model(qtbot, panel):
    type_into(qtbot, panel, "n_params", "70B")
    s = panel.scenario()
    assert s.n_params == 70e9
    assert s.n_layers > DEFAULT_PLAN.n_layers and s.d_model > DEFAULT_PLAN.d_model  # in proportion
    assert panel.field("n_params").edit.text() == "70B"
    assert panel.field("n_layers").value() == s.n_layers
    assert panel.preset_combo.currentText() == "Custom"
    assert panel.undo_stack().count() == 1
    assert not panel.field("n_params").message_text()


def test_bad_values_show_the_models_message_and_change_nothing(qtbot, panel):
    stack = panel.undo_stack()
    type_into(qtbot, panel, "tp", "3")
    message = panel.field("tp").message_text()
    assert "must divide" in message and "3" in message
    assert panel.scenario() == DEFAULT_PLAN and stack.count() == 0
    assert panel.result_text("MFU")[0] == units.format_quantity(panel.prediction().mfu, "%").rstrip("%")
    type_into(qtbot, panel, "n_gpus", "eight")
    assert panel.field("n_gpus").message_text()
    assert panel.scenario() == DEFAULT_PLAN and stack.count() == 0
    # fixing the value clears the message and takes it
    type_into(qtbot, panel, "tp", "8")
    assert panel.scenario().tp == 8 and not panel.field("tp").message_text()


def test_step_bar_has_one_segment_per_term_and_names_the_largest_drag(qtbot, panel, catalog, light_theme):
    p = predicted(catalog)
    nonzero = [t for t in TERMS if p.breakdown[t] > 0]
    chart = panel.step_chart
    assert [t for t, _label, _s in panel.step_segments()] == nonzero
    assert len(chart.bars) == len(nonzero)
    start = 0.0
    for i, (bar, term) in enumerate(zip(chart.bars, nonzero, strict=True)):
        assert bar.x0 == pytest.approx(start)
        assert bar.width == pytest.approx(p.breakdown[term])
        assert bar.fill == th.LIGHT.series_color(i)
        start += p.breakdown[term]
    key = chart.key.plain_text()
    for term in nonzero:
        assert TERM_LABELS[term] in key.replace("\u2011", "-").replace("\xa0", " ")
    assert units.format_quantity(p.breakdown["compute"], "s") in key.replace("\xa0", " ")
    assert f"Largest drag: {TERM_LABELS[p.largest_drag]}" in chart.caption.plain_text()
    # more tensor parallelism: its communication becomes the largest drag
    type_into(qtbot, panel, "tp", "8")
    assert "Largest drag: Tensor-parallel communication" in chart.caption.plain_text()
    assert "tensor_parallel" in [t for t, _l, _s in panel.step_segments()]
    assert len(chart.bars) == len(panel.step_segments())


def test_plan_over_memory_says_by_how_much_and_lists_fixes(qtbot, panel, catalog):
    pick(qtbot, panel.field("zero"), "ZeRO 0 / plain data parallel")
    assert panel.scenario().zero == 0
    p = predicted(catalog, DEFAULT_PLAN.with_changes(zero=0))
    assert not p.fits_memory and p.memory_fixes
    over = f"{p.memory.shortfall / 2**30:,.1f} GiB"
    text = panel.memory_chart.caption.plain_text()
    assert f"Over by {over}" in text
    for fix in p.memory_fixes:
        assert fix in text
    value, note = panel.result_text("Fits in memory")
    assert value == "no" and f"over by {over}" in note
    # the capacity line is drawn at the GPU's memory
    assert [value for _line, value, *_ in panel.memory_chart._lines] == [p.memory.capacity]
    panel.undo_stack().undo()
    assert "Fits:" in panel.memory_chart.caption.plain_text()


def test_cost_row_says_when_the_gpu_hour_price_is_not_set(qtbot, panel, catalog):
    p = predicted(catalog)
    value, unit = panel.result_text("Cost")
    assert "energy only" in unit and "not set" in unit
    assert value == units.format_quantity(p.energy_cost, "")
    type_into(qtbot, panel, "gpu_hour_price", "2")
    priced = predicted(catalog, DEFAULT_PLAN.with_changes(gpu_hour_price=2.0))
    value, unit = panel.result_text("Cost")
    assert "not set" not in unit and unit.startswith("USD")
    assert value == units.format_quantity(priced.total_cost, "")


def test_what_if_ladder_lists_each_fix(panel, catalog):
    from workbench.plan import what_if

    ladder = what_if(predicted(catalog))
    assert [w.term for w in panel.what_if_rows()] == [w.term for w in ladder]
    texts = [item.toolTip() for item in panel.what_if_chart.texts]
    for w, text in zip(ladder, texts, strict=False):
        assert w.fix in text and units.format_quantity(w.mfu, "%") in text


def test_a_cap_below_what_the_gpu_can_hold_is_refused(qtbot, panel):
    type_into(qtbot, panel, "power_cap_w", "100 W")
    assert panel.scenario().power_cap_w is None  # refused, the plan unchanged
    assert "at least" in panel.cap_field.error()


def test_a_plan_that_cannot_be_predicted_blanks_the_charts(qtbot, panel, tmp_path):
    pick(qtbot, panel.hardware_combo, "Google TPU v4")  # 8 chips, no chip-to-chip bandwidth preset
    assert panel.scenario().hardware == "tpu-v4"
    problem = panel.blocking_problem()
    assert "intra-node" in problem and panel.status_text() == problem
    assert panel.prediction() is None
    assert not panel.step_chart.bars and not panel.memory_chart.bars and not panel.what_if_chart.bars
    assert panel.result_text("MFU")[0] == "–"
    with pytest.raises(ValueError, match="intra-node"):
        panel.export_to("csv", tmp_path / "nothing.csv")
    assert not (tmp_path / "nothing.csv").exists()
    type_into(qtbot, panel, "n_gpus", "1")
    assert panel.prediction() is not None and panel.status_text() == ""
    assert panel.step_chart.bars


def test_hardware_change_limits_the_precisions(qtbot, panel):
    pick(qtbot, panel.hardware_combo, "NVIDIA V100 SXM2")
    assert panel.scenario().hardware == "v100-sxm2"
    combo = panel.field("precision")
    assert [combo.itemData(i) for i in range(combo.count())] == ["fp32", "fp16"]
    assert panel.scenario().precision == "fp16"  # BF16 fell back to what the GPU has
    assert combo.currentData() == "fp16"


def test_own_link_is_no_intra_node_preset(qtbot, panel):
    pick(qtbot, panel.intra_combo, "GPU's own link")
    assert panel.scenario().intra_node is None
    assert [panel.inter_combo.itemData(i)[:3] for i in range(panel.inter_combo.count())] == ["nic"] * 4
    panel.undo_stack().undo()
    assert panel.intra_combo.currentData() == "nvlink-4"


def test_in_a_window_edits_are_plan_edits_and_the_prediction_is_the_documents(qtbot, catalog, monkeypatch):
    stack = QUndoStack()
    document = Document(catalog, stack)
    panel = RunPlanPanel(catalog, undo_stack=stack)
    qtbot.addWidget(panel)
    panel.context_sink = lambda changes: document.edit_plan(**changes)
    document.attach(panel)
    document.follow_all()
    assert panel.prediction() is document.prediction()

    # the document keeps the real predict; a call from anywhere else is counted
    import ui.document
    from workbench import plan as plan_model

    monkeypatch.setattr(ui.document, "plan_model", types.SimpleNamespace(predict=predict))
    calls = []
    monkeypatch.setattr(plan_model, "predict", lambda *a, **k: calls.append(a) or predict(*a, **k))
    type_into(qtbot, panel, "n_gpus", "16")
    assert document.plan().n_gpus == 16 and panel.scenario() is document.plan()
    assert panel.prediction() is document.prediction()
    assert calls == []  # the document computed it; the panel only draws it
    pick(qtbot, panel.preset_combo, "Llama 3 70B")
    assert shape_of(document.plan()) == model("Llama 3 70B").fields()
    assert "Llama 3 70B" in stack.undoText()
    type_into(qtbot, panel, "tp", "3")
    assert "divide" in panel.field("tp").message_text() and document.plan().tp == 1
    stack.undo()
    stack.undo()
    assert document.plan() == DEFAULT_PLAN and panel.scenario() == DEFAULT_PLAN
    assert panel.field("n_gpus").value() == 8


def test_theme_change_restyles_the_bars(qapp, panel, light_theme):
    th.apply_theme(qapp, "dark")
    assert [bar.fill for bar in panel.step_chart.bars] == [
        th.DARK.series_color(i) for i in range(len(panel.step_segments()))]
    assert panel.step_chart.caption.ink == QColor(th.DARK.ink)
    th.apply_theme(qapp, "light")
    assert panel.step_chart.bars[0].fill == th.LIGHT.series_color(0)


def test_exports_write_files(tmp_path, panel):
    png = panel.export_to("png", tmp_path / "plan.png", width_px=1200)
    image = QImage(str(png))
    assert image.width() == 1200 and image.height() > 100
    assert len({image.pixelColor(x, y).name() for x in range(0, 1200, 7) for y in range(0, image.height(), 7)}) > 4
    svg = panel.export_to("svg", tmp_path / "plan.svg")
    assert svg.stat().st_size > 1000
    ET.parse(svg)  # well-formed
    path = panel.export_to("csv", tmp_path / "plan.csv")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0][:3] == ["chart", "item", "time per step (s)"]
    assert {r[0] for r in rows[1:]} == {"step", "memory", "what-if"}
    step = {r[1]: float(r[2]) for r in rows[1:] if r[0] == "step"}
    assert step["Step time"] == pytest.approx(panel.prediction().step_time_s)
    for name in ("memory", "what_if", "all"):
        out = panel.export_to("png", tmp_path / f"{name}.png", width_px=800)
        assert QImage(str(out)).width() == 800
    assert panel.chart_for_export() is panel.step_chart
    with pytest.raises(ValueError):
        panel.export_to("png", tmp_path / "x.png", chart="pie")


def test_presentation_mode_enlarges_the_chart_text(panel):
    chart = panel.step_chart
    size = chart.font_pt()
    th.set_presentation(True)
    try:
        assert chart.font_pt() == pytest.approx(size * th.PRESENTATION_SCALE)
        assert chart.key.size_pt == pytest.approx(size * th.PRESENTATION_SCALE)
        assert len(chart.bars) == len(panel.step_segments())  # redrawn, not lost
    finally:
        th.set_presentation(False)
    assert chart.key.size_pt == pytest.approx(size)


def test_a_preset_added_to_the_catalog_is_offered(panel, catalog):
    hw = catalog.get("h100-sxm").with_changes(key="my-h100", name="My H100 <b>lab</b>")
    catalog.add_user_preset(hw)
    combo = panel.hardware_combo
    index = combo.findData("my-h100")
    assert index >= 0 and combo.currentData() == "h100-sxm"
    assert combo.itemText(index) == "My H100 <b>lab</b>"  # shown as typed, not as markup
    assert "&lt;b&gt;" in combo.itemData(index, Qt.ItemDataRole.ToolTipRole)


def test_a_long_note_stays_in_the_unit_column_and_the_numbers_stay_in_view(qtbot, panel):
    rows = panel.results.rows()
    notes = [row for row in rows if row[0] == "Note"]
    assert notes and all(row[1] == "" and "host power" in row[2] for row in notes)
    # the quantity and value columns keep the width of their own text
    assert panel.results.columnWidth(0) + panel.results.columnWidth(1) < panel.results.viewport().width() / 2


def test_a_measured_throughput_is_shown_and_the_model_comes_back_in_one_undo_step(qtbot, catalog):
    stack = QUndoStack()
    document = Document(catalog, stack)
    panel = RunPlanPanel(catalog, undo_stack=stack)
    qtbot.addWidget(panel)
    panel.resize(1600, 900)
    panel.show()
    qtbot.waitExposed(panel)
    panel.context_sink = lambda changes: document.edit_plan(**changes)
    document.attach(panel)
    document.follow_all()
    model_p = predicted(catalog)
    assert not panel.measured_banner.isVisible() and panel.measured_text() == ""
    days_before = panel.result_text("Training time")

    rate = 0.7 * model_p.tokens_per_s  # slower than the model
    assert document.edit_plan("Adopt measured throughput from run.log", measured_tokens_per_s=rate,
                              measured_source="run.log")
    p = panel.prediction()
    assert p is document.prediction() and p.step_time_s == pytest.approx(DEFAULT_PLAN.tokens_per_step / rate)
    assert panel.measured_banner.isVisible() and panel.use_model_button.isVisible()
    # the line is under the toolbar, above the form and the charts
    assert panel.measured_banner.y() >= panel.toolbar.y() + panel.toolbar.height()
    assert panel.measured_banner.y() + panel.measured_banner.height() <= panel.splitter.y()
    assert "Measured throughput from run.log" in panel.measured_text()
    assert panel.measured_label.text() == panel.measured_text()
    assert panel.result_text("Training time") == (f"{DEFAULT_PLAN.train_tokens / rate / 86400:,.0f}", "days")
    assert any("measured throughput from run.log" in unit for q, _v, unit in panel.results.rows() if q == "Note")
    # the step bar: the model's terms, then what they leave unexplained
    terms = [t for t, _l, _s in panel.step_segments()]
    assert terms[-1] == "measured_gap" and terms[:-1] == [t for t in TERMS if model_p.breakdown[t] > 0]
    assert TERM_LABELS["measured_gap"] in panel.step_chart.key.plain_text().replace("\xa0", " ")
    assert "measured_gap" not in [w.term for w in panel.what_if_rows()]

    qtbot.mouseClick(panel.use_model_button, Qt.MouseButton.LeftButton)
    assert document.plan() == DEFAULT_PLAN and document.plan().measured_source == ""
    assert not panel.measured_banner.isVisible()
    assert panel.result_text("Training time") == days_before
    assert stack.undoText() == "Use the model's throughput again"
    stack.undo()  # the one step back: measured again
    assert document.plan().measured_tokens_per_s == pytest.approx(rate) and panel.measured_banner.isVisible()
    stack.undo()
    assert document.plan() == DEFAULT_PLAN and not panel.measured_banner.isVisible()


def test_standalone_use_the_model_again_is_an_undo_step_on_the_panel(qtbot, catalog):
    plan = DEFAULT_PLAN.with_changes(measured_tokens_per_s=4e4, measured_source="bench.log")
    panel = RunPlanPanel(catalog, plan)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.measured_banner.isVisible()
    assert panel.prediction().tokens_per_s == pytest.approx(4e4)
    qtbot.mouseClick(panel.use_model_button, Qt.MouseButton.LeftButton)
    assert panel.scenario() == DEFAULT_PLAN and not panel.measured_banner.isVisible()
    assert panel.prediction().tokens_per_s == pytest.approx(predicted(catalog).tokens_per_s)
    panel.undo_stack().undo()
    assert panel.scenario() == plan


def test_the_what_if_axis_ends_at_a_whole_tick_and_a_small_move_keeps_it(qtbot, panel):
    # the ladder's MFU axis runs to its next whole tick: an edit that moves the MFU a little
    # keeps the axis, so its ticks and grid are not recorded again
    from chart_items import deliver_events

    chart = panel.what_if_chart
    axis = chart.axis("x")
    deliver_events()
    ticks = axis._tickLevels[0]
    assert ticks[-1][0] == pytest.approx(1.0)  # the last tick at the right end of the view
    scale, mfu = chart._x_scale, panel.prediction().mfu
    recorded = []
    real_record = axis._record
    axis._record = lambda: (recorded.append(1), real_record())[1]
    type_into(qtbot, panel, "global_batch", "2048")
    deliver_events()
    assert panel.prediction().mfu != mfu  # the ladder moved
    assert chart._x_scale == scale and axis._tickLevels[0] == ticks and recorded == []
    type_into(qtbot, panel, "tp", "8")  # tensor parallelism across all 8 GPUs: far lower MFU
    qtbot.waitUntil(lambda: chart._x_scale < scale and recorded != [])
    assert axis._tickLevels[0][-1][0] == pytest.approx(1.0)
