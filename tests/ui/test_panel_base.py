"""PanelBase, driven through a dummy panel the way a person would use a real one."""

from __future__ import annotations

import csv
import dataclasses
import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QUndoStack

from ui import export
from ui.charts import Chart
from ui.panel import PanelBase, ResultRow


class ToyError(ValueError):
    def __init__(self, parameter, message):
        super().__init__(f"{parameter}: {message}")
        self.parameter = parameter


@dataclasses.dataclass(frozen=True)
class ToyScenario:
    kind = "toy"
    gpu_count: int = 8
    mem_bw: float = 3.35e12
    peak: float = 989e12
    precision: str = "bf16"
    sparse: bool = False

    def __post_init__(self):
        if not 1 <= self.gpu_count <= 4096:
            raise ToyError("gpu_count", f"must be between 1 and 4096, got {self.gpu_count}")
        if self.mem_bw <= 0:
            raise ToyError("mem_bw", "must be > 0")

    def with_changes(self, **changes):
        return dataclasses.replace(self, **changes)

    def to_json(self):
        return json.dumps({"kind": self.kind, **dataclasses.asdict(self)}, sort_keys=True)


class ToyPanel(PanelBase):
    kind = "toy"
    title = "Toy roofline"

    def __init__(self, scenario=None, parent=None, **kwargs):
        super().__init__(scenario, parent, **kwargs)
        self.add_int_field("gpu_count", "GPU count")
        self.add_quantity_field("mem_bw", "Memory bandwidth", "B/s", minimum=0, min_inclusive=False)
        self.add_quantity_field("peak", "Peak compute", "FLOP/s", minimum=0, min_inclusive=False)
        self.add_choice("precision", [("BF16", "bf16"), ("FP8", "fp8")], "Precision")
        self.add_check("sparse", "2:4 sparsity")
        self.chart = self.add_chart(Chart(title="Roofline", x_label="Arithmetic intensity", x_unit="FLOP/B",
                                          y_label="Attainable", y_unit="FLOP/s", log_x=True, log_y=True))
        self.chart.enable_hover()
        self.contexts = []
        self.refreshes = 0
        self.refresh()

    def refresh(self):
        self.refreshes += 1
        s = self.scenario()
        ai = np.logspace(-1, 4, 120)
        self.chart.add_series("H100 roof", ai, np.minimum(s.peak, ai * s.mem_bw))
        self.chart.add_series("A100 roof", ai, np.minimum(312e12, ai * 2.039e12), style="dash")
        self.chart.set_operating_point(60.0, min(s.peak, 60.0 * s.mem_bw), "GEMM")
        self.chart.set_log_range(0.1, 1e4, 1e11, 3e15)
        self.results.set_rows([
            ResultRow("Ridge point", s.peak / s.mem_bw, "FLOP/B", "Intensity where the roofs meet"),
            ResultRow("Attainable at GEMM", min(s.peak, 60.0 * s.mem_bw), "FLOP/s", "Best possible rate"),
            ("GPUs", f"{s.gpu_count:,}", "", "How many GPUs"),
        ])

    def follow_plan(self, view):
        followed = super().follow_plan(view)
        if followed:
            self.contexts.append(view.plan.n_gpus)
        return followed


@pytest.fixture
def panel(qtbot):
    p = ToyPanel(ToyScenario())
    qtbot.addWidget(p)
    p.resize(1280, 720)
    p.show()
    qtbot.waitExposed(p)
    return p


def _enter(qtbot, field, text):
    field.edit.selectAll()
    qtbot.keyClicks(field.edit, text)
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)


def test_typing_in_a_field_is_one_undoable_step(qtbot, panel):
    stack = panel.undo_stack()
    with qtbot.waitSignal(panel.scenarioChanged, timeout=1000):
        _enter(qtbot, panel.field("gpu_count"), "512")
    assert panel.scenario().gpu_count == 512
    assert stack.count() == 1
    assert "gpu count" in stack.undoText().lower() and "512" in stack.undoText()
    stack.undo()
    assert panel.scenario() == ToyScenario()
    assert panel.field("gpu_count").value() == 8  # the field shows the restored value
    stack.redo()
    assert panel.field("gpu_count").edit.text() == "512"


def test_consecutive_edits_of_one_field_merge(qtbot, panel):
    _enter(qtbot, panel.field("mem_bw"), "2 TB/s")
    _enter(qtbot, panel.field("mem_bw"), "3 TB/s")
    assert panel.undo_stack().count() == 1
    assert panel.scenario().mem_bw == pytest.approx(3e12)
    panel.undo_stack().undo()
    assert panel.scenario().mem_bw == pytest.approx(3.35e12)


def test_model_validation_error_shows_at_the_field_and_pushes_nothing(qtbot, panel):
    field = panel.field("gpu_count")
    with qtbot.assertNotEmitted(panel.scenarioChanged):
        _enter(qtbot, field, "5000")
    assert panel.undo_stack().count() == 0
    assert panel.scenario().gpu_count == 8
    assert "4096" in field.message_text()
    assert field.value() == 8  # the field keeps the model's value
    qtbot.keyClick(field.edit, Qt.Key.Key_Escape)
    assert field.edit.text() == "8" and field.message_text() == ""


def test_error_without_a_field_goes_to_the_status_line(qtbot, panel):
    assert panel.edit(gpu_count=0, mem_bw=1.0) is False
    assert "gpu_count" in panel.status_text() or "4096" in panel.field("gpu_count").message_text()
    assert panel.undo_stack().count() == 0


def test_choice_and_check_box_edits(qtbot, panel):
    combo = panel.field("precision")
    combo.activated.emit(1)  # what choosing "FP8" in the popup does
    qtbot.mouseClick(panel.field("sparse"), Qt.MouseButton.LeftButton, pos=panel.field("sparse").rect().center())
    assert panel.scenario().precision == "fp8"
    assert panel.scenario().sparse is True
    assert panel.undo_stack().count() == 2
    panel.undo_stack().undo()
    assert panel.field("sparse").isChecked() is False
    panel.undo_stack().undo()
    assert combo.currentData() == "bf16"


def test_shared_undo_stack(qtbot, panel):
    shared = QUndoStack()
    panel.set_undo_stack(shared)
    panel.edit(gpu_count=64)
    assert shared.count() == 1


def test_results_table_is_read_only_right_aligned_with_tooltips(panel):
    table = panel.results
    rows = table.rows()
    assert rows[0][0] == "Ridge point" and rows[0][2] == "FLOP/B"
    assert float(rows[0][1]) == pytest.approx(989 / 3.35, rel=1e-2)
    assert rows[1][1:] == ("201", "TFLOP/s")  # 60 FLOP/B x 3.35 TB/s
    assert table.item(0, 1).textAlignment() & Qt.AlignmentFlag.AlignRight
    assert not table.item(0, 1).flags() & Qt.ItemFlag.ItemIsEditable
    assert table.item(1, 0).toolTip() == "Best possible rate"


def test_toolbar_actions_emit_signals(qtbot, panel):
    with qtbot.waitSignal(panel.saveRequested, timeout=1000):
        panel.action_save.trigger()
    with qtbot.waitSignal(panel.compareRequested, timeout=1000):
        panel.action_compare.trigger()
    with qtbot.waitSignal(panel.explainRequested, timeout=1000):
        panel.action_explain.trigger()
    for action, fmt in ((panel.action_export_png, "png"), (panel.action_export_svg, "svg"),
                        (panel.action_export_csv, "csv")):
        with qtbot.waitSignal(panel.exportRequested, timeout=1000) as blocker:
            action.trigger()
        assert blocker.args == [fmt]


def test_the_plan_applies_unless_overridden(qtbot, panel):
    from workbench.context import RunContext

    assert panel.apply_context(RunContext(n_gpus=64)) is True
    assert panel.context().n_gpus == 64 and panel.plan_view().plan.n_gpus == 64
    panel.action_override.trigger()  # the user ticks "Local override"
    assert panel.override_context() is True
    assert panel.apply_context(RunContext(n_gpus=128)) is False
    assert panel.contexts == [64]
    panel.set_override_context(False)  # back to the plan: catch up with it
    assert panel.contexts[-1] == 128


def test_layout_gives_the_chart_most_of_the_space(panel):
    assert panel.chart.width() > 2 * panel.form_scroll.width()
    assert panel.chart.height() > panel.results.height()
    assert panel.form_scroll.width() <= 380


def test_panel_exports_png_svg_csv(tmp_path, panel):
    png = panel.export_to("png", tmp_path / "toy.png", width_px=1600)
    assert QImage(str(png)).width() == 1600
    assert json.loads(export.read_png_scenario(png)) == json.loads(ToyScenario().to_json())
    svg = panel.export_to("svg", tmp_path / "toy.svg")
    assert svg.read_text(encoding="utf-8").lstrip().startswith("<?xml")
    path = panel.export_to("csv", tmp_path / "toy.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert header == ["Arithmetic intensity (FLOP/B)", "H100 roof (FLOP/s)", "A100 roof (FLOP/s)"]
    with pytest.raises(ValueError, match="png"):
        panel.export_to("gif", tmp_path / "toy.gif")


def test_screenshot_of_a_panel(panel):
    """Look at what was built: the picture lands in /tmp/ui_kit_panel.png."""
    panel.chart.hover_at_scene(panel.chart.getPlotItem().getViewBox().sceneBoundingRect().center())
    image = panel.grab().toImage()
    image.save("/tmp/ui_kit_panel.png")
    assert image.width() == 1280 and image.height() == 720
    colours = {image.pixel(x, y) for x in range(0, 1280, 16) for y in range(0, 720, 16)}
    assert len(colours) > 10


def test_results_table_updates_rows_in_place(qtbot):
    from ui.panel import ResultsTable

    table = ResultsTable()
    qtbot.addWidget(table)
    table.set_rows([ResultRow("Ridge point", 295.0, "FLOP/B", "where the roofs meet"), ("GPUs", "8", "", "")])
    first = table.item(0, 1)
    changed = []
    table.itemChanged.connect(lambda item: changed.append((item.row(), item.column())))
    table.set_rows([ResultRow("Ridge point", 590.0, "FLOP/B", "where the sparse roofs meet"), ("GPUs", "8", "", "")])
    assert table.rows() == [("Ridge point", "590", "FLOP/B"), ("GPUs", "8", "")]
    assert table.item(0, 1) is first  # the same cell, new text
    assert table.item(0, 0).toolTip() == "where the sparse roofs meet"
    assert (0, 1) in changed and (1, 1) not in changed  # unchanged cells are left alone
    table.set_rows([("GPUs", "16", "", "")])
    assert table.rows() == [("GPUs", "16", "")]
    table.set_rows([("A", "1", ""), ("B", "2", ""), ("C", "3", "")])
    assert table.rows() == [("A", "1", ""), ("B", "2", ""), ("C", "3", "")]
    assert table.item(2, 1).textAlignment() & Qt.AlignmentFlag.AlignRight


@pytest.fixture
def shown_table(qtbot):
    from ui.panel import ResultsTable

    table = ResultsTable()
    qtbot.addWidget(table)
    table.resize(600, 300)
    table.show()
    qtbot.waitExposed(table)
    return table


def test_results_columns_fit_their_text_and_only_grow_as_numbers_change(shown_table):
    table = shown_table
    table.set_rows([("Step time", 9.85, "s"), ("Tokens/s", 852e3, "tokens/s")])
    header = table.horizontalHeader()
    widths = [header.sectionSize(0), header.sectionSize(1)]
    assert widths[1] >= table.sizeHintForColumn(1)  # the value shows whole
    resized = []
    header.sectionResized.connect(lambda col, _old, new: resized.append((col, new)))
    table.set_rows([("Step time", 9.8, "s"), ("Tokens/s", 85e3, "tokens/s")])  # shorter numbers
    assert resized == [] and [header.sectionSize(0), header.sectionSize(1)] == widths
    table.set_rows([("Step time, with the pipeline bubble", 9.8, "s"), ("Tokens/s", 85e3, "tokens/s")])
    assert [c for c, _w in resized] == [0] and header.sectionSize(0) >= table.sizeHintForColumn(0)


def test_a_results_column_grows_to_a_new_text_and_one_narrowed_by_hand_fits_its_text_again(shown_table):
    # only the cells given new text are measured (speed), yet a column narrowed by hand fits again
    table = shown_table
    rows = [("Step time", 1.5, "s"), ("Tokens per second", 2.0e6, "tokens/s")]
    table.set_rows(rows)
    header = table.horizontalHeader()
    fitted = header.sectionSize(0)
    table.set_rows([("Step time, with a much longer name than before", 1.5, "s"), rows[1]])
    assert header.sectionSize(0) > fitted  # grown to the new text
    grown = header.sectionSize(0)
    table.set_rows(rows)
    assert header.sectionSize(0) == grown  # a shorter text leaves it as it is
    narrow = header.minimumSectionSize()
    header.resizeSection(0, narrow)  # the user narrows it
    table.set_rows([("Step time", 1.6, "s"), rows[1]])  # a value changes: the column is left alone
    assert header.sectionSize(0) == narrow
    table.set_rows([("Step", 1.6, "s"), rows[1]])  # its own text changes: fitted to its whole text
    assert header.sectionSize(0) == max(table.sizeHintForColumn(0), header.sectionSizeHint(0)) > narrow


def test_reserved_quantities_size_the_results_from_the_start(shown_table):
    # a panel names the labels its other states show (another precision, sparse): the first
    # toggle to the longest of them neither widens the column nor the width kept beside a splitter
    table = shown_table
    table.keep_content_width = True
    long_label = "Peak compute (FP16, 2:4 sparse)"
    table.reserve_quantities(["Peak compute (FP16, dense)", long_label])
    table.set_rows([("Peak compute (FP16, dense)", 989e12, "FLOP/s"), ("Ridge point", 295.0, "FLOP/B")])
    header = table.horizontalHeader()
    width, kept = header.sectionSize(0), table.minimumSizeHint().width()
    resized = []
    header.sectionResized.connect(lambda col, _old, new: resized.append((col, new)))
    table.set_rows([(long_label, 1979e12, "FLOP/s"), ("Ridge point", 590.0, "FLOP/B")])
    assert width >= table.sizeHintForColumn(0)  # the long label shows whole at once
    assert resized == [] and table.minimumSizeHint().width() == kept
    # in a larger font (presentation) the room reserved is the larger font's, not the one kept
    table.set_rows([("Peak compute (FP16, dense)", 989e12, "FLOP/s"), ("Ridge point", 295.0, "FLOP/B")])
    table.set_presentation(True)
    shown = header.sectionSize(0)  # fitted to the short label on show, and the long one reserved
    table.set_rows([(long_label, 1979e12, "FLOP/s"), ("Ridge point", 590.0, "FLOP/B")])
    assert shown >= table.sizeHintForColumn(0) > width
    table.set_presentation(False)
    # without the reservation the same toggle widens the column: the test can tell
    plain = type(table)()
    plain.set_rows([("Peak compute (FP16, dense)", 989e12, "FLOP/s")])
    before = plain.horizontalHeader().sectionSize(0)
    plain.set_rows([(long_label, 1979e12, "FLOP/s")])
    assert plain.horizontalHeader().sectionSize(0) > before
    plain.deleteLater()
